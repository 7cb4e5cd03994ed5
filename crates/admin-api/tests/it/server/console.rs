//! The console's pages, driven in-process: what each page shows each role, the security headers,
//! escaping, the same-origin check on every form post, and the invite signup's answers. The
//! flows in a real browser are in `tests/browser.rs`.

use actix_web::cookie::Cookie;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::{body::MessageBody, test};
use serde_json::json;

use crate::common::{ADMIN, TestApp, call, create_invite, get, post, send};

const ORIGIN: &str = "http://localhost:8080";
const PASSWORD: &str = "Corr3ct-Horse!";

fn page(path: &str, session: Option<&Cookie<'static>>) -> test::TestRequest {
    let request = test::TestRequest::get()
        .uri(path)
        .insert_header(("Host", "localhost:8080"));
    match session {
        Some(cookie) => request.cookie(cookie.clone()),
        None => request,
    }
}

fn form(path: &str, session: Option<&Cookie<'static>>, fields: &[(&str, &str)]) -> test::TestRequest {
    let request = test::TestRequest::post()
        .uri(path)
        .insert_header(("Host", "localhost:8080"))
        .insert_header(("Origin", ORIGIN))
        .set_form(fields.to_vec());
    match session {
        Some(cookie) => request.cookie(cookie.clone()),
        None => request,
    }
}

async fn user<S, B>(service: &S, email: &str, role: i32) -> Cookie<'static>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    crate::common::signed_in(service, email, role).await
}

#[actix_web::test]
async fn pages_need_a_session_and_come_back_after_login() {
    let app = TestApp::new();
    let service = app.service().await;
    let answer = call(&service, page("/flags?project=default", None)).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(
        answer.location.as_deref(),
        Some("/login?next=/flags%3Fproject%3Ddefault")
    );
    let answer = call(&service, page("/", None)).await;
    assert_eq!(answer.location.as_deref(), Some("/flags"));

    let login_page = call(&service, page("/login?next=/flags", None)).await;
    assert_eq!(login_page.status, StatusCode::OK);
    let csp = login_page.csp.unwrap_or_default();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert!(
        login_page.body.contains("<label for=\"password\">"),
        "every input is labelled"
    );
    // No inline script: the only script element loads the console's file.
    assert_eq!(login_page.body.matches("<script").count(), 1);
    assert!(login_page.body.contains("<script src=\"/console/console-"));

    send(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"username": "ops", "rootRole": 1, "password": PASSWORD}),
        ),
    )
    .await;
    let wrong = call(
        &service,
        form(
            "/login",
            None,
            &[("username", "ops"), ("password", "wrong"), ("next", "/flags")],
        ),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(
        wrong.body.contains("Wrong password, try again."),
        "{}",
        wrong.body
    );
    assert!(wrong.body.contains("value=\"ops\""), "the username is kept");
    // A next page elsewhere is not followed.
    let signed = call(
        &service,
        form(
            "/login",
            None,
            &[
                ("username", "ops"),
                ("password", PASSWORD),
                ("next", "//evil.example/"),
            ],
        ),
    )
    .await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER);
    assert_eq!(signed.location.as_deref(), Some("/flags"));
    let cookie = signed.cookie.unwrap_or_else(|| panic!("no session cookie"));
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.same_site(), Some(actix_web::cookie::SameSite::Lax));
    let flags = call(&service, page("/flags", Some(&cookie))).await;
    assert_eq!(flags.status, StatusCode::OK, "{}", flags.body);
    assert!(flags.body.contains("Signed in as ops"));
}

#[actix_web::test]
async fn a_form_from_another_site_is_refused() {
    let app = TestApp::new();
    let service = app.service().await;
    let admin = user(&service, "admin@example.com", 1).await;
    for origin in [Some("https://evil.example"), None] {
        let mut request = test::TestRequest::post()
            .uri("/flags")
            .insert_header(("Host", "localhost:8080"))
            .cookie(admin.clone())
            .set_form([("project", "default"), ("name", "forged")]);
        if let Some(origin) = origin {
            request = request.insert_header(("Origin", origin));
        }
        let answer = call(&service, request).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{origin:?}");
        assert!(answer.body.contains("not sent from this site"), "{}", answer.body);
    }
    let (status, _) = send(
        &service,
        get("/api/admin/projects/default/features/forged", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "the forged flag was created");
    // The same post from the site's own page works.
    let answer = call(
        &service,
        form(
            "/flags",
            Some(&admin),
            &[("project", "default"), ("name", "made"), ("type", "kill-switch")],
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let (status, body) = send(&service, get("/api/admin/projects/default/features/made", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["type"], "kill-switch");
}

#[actix_web::test]
async fn names_and_values_with_html_are_escaped() {
    let app = TestApp::new();
    let service = app.service().await;
    let admin = user(&service, "admin@example.com", 1).await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "plain", "description": "<script>alert('x')</script> & <b>bold</b>"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let flags = call(&service, page("/flags?q=%3Cb%3E%22", Some(&admin))).await;
    assert!(!flags.body.contains("<b>\""), "the search words are escaped");
    let flags = call(&service, page("/flags", Some(&admin))).await;
    assert!(
        flags
            .body
            .contains("&lt;script&gt;alert('x')&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"),
        "{}",
        flags.body
    );
    assert!(!flags.body.contains("<script>alert"));
    // A refused name is shown escaped, with what was typed kept.
    let refused = call(
        &service,
        form(
            "/flags",
            Some(&admin),
            &[("project", "default"), ("name", "<img src=x>")],
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused.body.contains("value=\"&lt;img src=x&gt;\""),
        "{}",
        refused.body
    );
    assert!(!refused.body.contains("<img src=x>"));
}

#[actix_web::test]
async fn each_role_sees_what_it_may_do_and_the_server_refuses_the_rest() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "checkout"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let editor = user(&service, "editor@example.com", 2).await;
    let viewer = user(&service, "viewer@example.com", 3).await;

    let as_editor = call(&service, page("/flags", Some(&editor))).await;
    assert!(
        as_editor.body.contains("class=\"toggle switch\""),
        "{}",
        as_editor.body
    );
    assert!(as_editor.body.contains("Create a flag"));
    let as_viewer = call(&service, page("/flags", Some(&viewer))).await;
    assert_eq!(as_viewer.status, StatusCode::OK);
    assert!(as_viewer.body.contains("checkout"));
    assert!(
        !as_viewer.body.contains("class=\"toggle"),
        "a viewer sees no switch"
    );
    assert!(!as_viewer.body.contains("Create a flag"), "nor the create form");

    // The viewer forges the switch's post from their own session: refused by the policy.
    let forged = call(
        &service,
        form(
            "/flags/default/checkout/environments/development",
            Some(&viewer),
            &[("enabled", "true")],
        ),
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    // The editor's switch works, as a script (JSON) and as a form.
    let switched = call(
        &service,
        form(
            "/flags/default/checkout/environments/development",
            Some(&editor),
            &[("enabled", "true")],
        )
        .insert_header(("Accept", "application/json")),
    )
    .await;
    assert_eq!(switched.status, StatusCode::OK, "{}", switched.body);
    assert_eq!(switched.body, r#"{"enabled":true}"#);
    let back = call(
        &service,
        form(
            "/flags/default/checkout/environments/development",
            Some(&editor),
            &[("enabled", "false"), ("back", "/flags?project=default")],
        ),
    )
    .await;
    assert_eq!(back.status, StatusCode::SEE_OTHER);
    assert_eq!(back.location.as_deref(), Some("/flags?project=default"));
    let (_, feature) = send(
        &service,
        get("/api/admin/projects/default/features/checkout", ADMIN),
    )
    .await;
    let development = feature["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|environment| environment["name"] == "development")
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(development["enabled"], false, "{feature}");
}

#[actix_web::test]
async fn an_invite_link_signs_a_person_up_and_in() {
    let app = TestApp::new();
    let service = app.service().await;
    let invite = create_invite(&service).await;
    let secret = invite["secret"].as_str().unwrap_or_default().to_owned();

    for bad in ["/new-user", "/new-user?invite=nope"] {
        let answer = call(&service, page(bad, None)).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND);
        assert!(answer.body.contains("invalid or has expired"), "{}", answer.body);
    }
    let signup = call(&service, page(&format!("/new-user?invite={secret}"), None)).await;
    assert_eq!(signup.status, StatusCode::OK);
    for rule in ["length", "repeat", "lower", "upper", "digit", "symbol"] {
        assert!(signup.body.contains(&format!("data-rule=\"{rule}\"")), "{rule}");
    }

    // A weak password: refused on the form, name and email kept, password not.
    let weak = call(
        &service,
        form(
            "/new-user",
            None,
            &[
                ("invite", &secret),
                ("name", "Ada <Lovelace>"),
                ("email", "ada@example.com"),
                ("password", "weakweak"),
            ],
        ),
    )
    .await;
    assert_eq!(weak.status, StatusCode::BAD_REQUEST);
    assert!(weak.body.contains("at least 10 characters"), "{}", weak.body);
    assert!(weak.body.contains("value=\"Ada &lt;Lovelace&gt;\""));
    assert!(weak.body.contains("value=\"ada@example.com\""));
    assert!(!weak.body.contains("weakweak"));

    let signed = call(
        &service,
        form(
            "/new-user",
            None,
            &[
                ("invite", &secret),
                ("name", "Ada"),
                ("email", "ada@example.com"),
                ("password", PASSWORD),
            ],
        ),
    )
    .await;
    assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.body);
    assert_eq!(signed.location.as_deref(), Some("/flags"));
    let cookie = signed.cookie.unwrap_or_else(|| panic!("not signed in"));
    let flags = call(&service, page("/flags", Some(&cookie))).await;
    assert!(
        flags.body.contains("Signed in as ada@example.com"),
        "{}",
        flags.body
    );

    // The same email again: a readable 409 on the form.
    let again = call(
        &service,
        form(
            "/new-user",
            None,
            &[
                ("invite", &secret),
                ("name", "Ada"),
                ("email", "ada@example.com"),
                ("password", PASSWORD),
            ],
        ),
    )
    .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert!(again.body.contains("already exists"), "{}", again.body);
}

#[actix_web::test]
async fn assets_are_served_by_digest_and_cached() {
    let app = TestApp::new();
    let service = app.service().await;
    let login_page = call(&service, page("/login", None)).await;
    let href = login_page
        .body
        .split("href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_default()
        .to_owned();
    assert!(
        href.starts_with("/console/console-") && href.ends_with(".css"),
        "{href}"
    );
    let response = test::call_service(&service, page(&href, None).to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response
            .headers()
            .get("cache-control")
            .and_then(|value| value.to_str().ok()),
        Some("public, max-age=31536000, immutable")
    );
    let etag = response
        .headers()
        .get("etag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let again = test::call_service(
        &service,
        page(&href, None)
            .insert_header(("If-None-Match", etag))
            .to_request(),
    )
    .await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    let missing = call(&service, page("/console/console-000000000000.css", None)).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn a_flag_page_edits_strategies_and_writes_variants_to_several_environments() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "checkout"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let editor = user(&service, "editor@example.com", 2).await;
    let viewer = user(&service, "viewer@example.com", 3).await;
    let base = "/flags/default/checkout/environments/development/strategies";

    // A gradual rollout with a negated constraint, added through the form.
    let added = call(
        &service,
        form(
            base,
            Some(&editor),
            &[
                ("name", "flexibleRollout"),
                ("p_rollout", "25"),
                ("p_stickiness", "userId"),
                ("c0_context", "region"),
                ("c0_operator", "IN"),
                ("c0_values", "eu, us"),
                ("c0_inverted", "true"),
                ("c1_context", ""),
            ],
        ),
    )
    .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let (_, strategies) = send(
        &service,
        get(
            "/api/admin/projects/default/features/checkout/environments/development/strategies",
            ADMIN,
        ),
    )
    .await;
    let strategy = &strategies[0];
    assert_eq!(strategy["name"], "flexibleRollout", "{strategies}");
    assert_eq!(strategy["parameters"]["rollout"], "25");
    assert_eq!(strategy["parameters"]["groupId"], "checkout");
    assert_eq!(strategy["constraints"][0]["values"], json!(["eu", "us"]));
    assert_eq!(strategy["constraints"][0]["inverted"], true);
    let id = strategy["id"].as_str().unwrap_or_default().to_owned();

    let shown = call(&service, page("/flags/default/checkout", Some(&editor))).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    assert!(shown.body.contains("25% of userId stickiness"), "{}", shown.body);
    assert!(shown.body.contains("When not (region is one of eu, us)"));
    assert!(shown.body.contains("Edit variants"));
    // The strategy's own page shows every parameter its type declares and its constraint.
    let edit = call(&service, page(&format!("{base}/{id}"), Some(&editor))).await;
    assert_eq!(edit.status, StatusCode::OK, "{}", edit.body);
    for part in [
        "name=\"p_rollout\"",
        "name=\"p_groupId\"",
        "name=\"p_stickiness\"",
        "value=\"eu,us\"",
        "name=\"c2_context\"",
    ] {
        assert!(edit.body.contains(part), "{part} missing: {}", edit.body);
    }

    // A bad constraint is refused with the reason, on the page.
    let refused = call(
        &service,
        form(
            base,
            Some(&editor),
            &[
                ("name", "default"),
                ("c0_context", "version"),
                ("c0_operator", "SEMVER_EQ"),
                ("c0_values", "not-a-version"),
            ],
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("role=\"alert\""));

    // Edited, then deleted.
    let edited = call(
        &service,
        form(
            &format!("{base}/{id}"),
            Some(&editor),
            &[("name", "flexibleRollout"), ("p_rollout", "60")],
        ),
    )
    .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER, "{}", edited.body);
    let (_, strategies) = send(
        &service,
        get(
            "/api/admin/projects/default/features/checkout/environments/development/strategies",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(strategies[0]["parameters"]["rollout"], "60");
    assert_eq!(strategies[0]["constraints"], json!([]));

    // A viewer sees the strategies in words but no form, and cannot post one.
    let as_viewer = call(&service, page("/flags/default/checkout", Some(&viewer))).await;
    assert!(as_viewer.body.contains("60% of default stickiness"));
    assert!(
        !as_viewer
            .body
            .contains("<form method=\"post\" action=\"/flags/default/checkout"),
        "{}",
        as_viewer.body
    );
    let forged = call(&service, form(&format!("{base}/{id}/delete"), Some(&viewer), &[])).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    let deleted = call(&service, form(&format!("{base}/{id}/delete"), Some(&editor), &[])).await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER, "{}", deleted.body);
    let (_, strategies) = send(
        &service,
        get(
            "/api/admin/projects/default/features/checkout/environments/development/strategies",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(strategies, json!([]));

    // Variants: one save writes both environments.
    let saved = call(
        &service,
        form(
            "/flags/default/checkout/variants",
            Some(&editor),
            &[
                ("environments", "development"),
                ("environments", "production"),
                ("v0_name", "blue"),
                ("v0_weightType", "fix"),
                ("v0_percent", "30"),
                ("v0_payloadType", "json"),
                ("v0_payload", "{\"color\":\"#00f\"}"),
                ("v0_overrides", "userId=1, 2; region=eu"),
                ("v1_name", "red"),
                ("v1_weightType", "variable"),
                ("v2_name", ""),
            ],
        ),
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    for environment in ["development", "production"] {
        let (_, variants) = send(
            &service,
            get(
                &format!("/api/admin/projects/default/features/checkout/environments/{environment}/variants"),
                ADMIN,
            ),
        )
        .await;
        let variants = &variants["variants"];
        assert_eq!(variants[0]["name"], "blue", "{environment}: {variants}");
        assert_eq!(variants[0]["weight"], 300);
        assert_eq!(variants[0]["payload"]["value"], "{\"color\":\"#00f\"}");
        assert_eq!(variants[0]["overrides"][0]["values"], json!(["1", "2"]));
        assert_eq!(
            variants[0]["overrides"][1],
            json!({"contextName": "region", "values": ["eu"]})
        );
        assert_eq!(variants[1]["name"], "red");
        assert_eq!(variants[1]["weight"], 700);
    }
    let shown = call(&service, page("/flags/default/checkout", Some(&editor))).await;
    assert!(
        shown
            .body
            .contains("<progress class=\"bar\" max=\"1000\" value=\"300\""),
        "{}",
        shown.body
    );
    // Fixed weights over 100% are refused, and nothing changes.
    let refused = call(
        &service,
        form(
            "/flags/default/checkout/variants",
            Some(&editor),
            &[
                ("environments", "development"),
                ("v0_name", "blue"),
                ("v0_weightType", "fix"),
                ("v0_percent", "120"),
            ],
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
}

#[actix_web::test]
async fn the_playground_shows_each_context_and_why() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "beta"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/beta/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features/beta/environments/development/on",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let viewer = user(&service, "viewer@example.com", 3).await;

    let form_page = call(&service, page("/playground", Some(&viewer))).await;
    assert_eq!(form_page.status, StatusCode::OK);
    assert!(
        form_page
            .body
            .contains("<label for=\"field-userId\">userId</label>"),
        "{}",
        form_page.body
    );

    let answer = call(
        &service,
        page(
            "/playground?run=1&env=development&appName=web&ctx_userId=1%2C2",
            Some(&viewer),
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert!(answer.body.contains("development · userId=1"), "{}", answer.body);
    assert!(answer.body.contains("development · userId=2"));
    // Each result carries a symbol and a word besides its colour, down to the constraint.
    assert!(answer.body.matches("✓ true").count() >= 3, "{}", answer.body);
    assert!(answer.body.contains("✗ false"));
    assert!(answer.body.contains("<span class=\"mono\">userId</span> IN 1"));

    // A context past the combination limit is refused with the reason.
    let values = (0..200)
        .map(|value| value.to_string())
        .collect::<Vec<_>>()
        .join("%2C");
    let refused = call(
        &service,
        page(
            &format!("/playground?run=1&env=development&ctx_userId={values}&ctx_sessionId={values}"),
            Some(&viewer),
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("role=\"alert\""));
}

#[actix_web::test]
async fn the_console_asks_the_past_and_shows_what_changed() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "beta"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    // A date-time field's value: no zone, read as UTC.
    let before = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3f").to_string();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features/beta/environments/development/on",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let viewer = user(&service, "viewer@example.com", 3).await;

    let form_page = call(&service, page("/playground", Some(&viewer))).await;
    assert!(
        form_page.body.contains("name=\"at\" type=\"datetime-local\""),
        "{}",
        form_page.body
    );
    let then = call(
        &service,
        page(
            &format!("/playground?run=1&env=development&at={before}"),
            Some(&viewer),
        ),
    )
    .await;
    assert_eq!(then.status, StatusCode::OK, "{}", then.body);
    assert!(
        then.body.contains("the configuration after audit event"),
        "{}",
        then.body
    );
    assert!(then.body.contains("✗ false"), "off then: {}", then.body);
    let refused = call(
        &service,
        page(
            "/playground?run=1&env=development&at=2001-01-01T00%3A00",
            Some(&viewer),
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    assert!(refused.body.contains("outside the history"), "{}", refused.body);

    // The flag's changes link to the playground as of each.
    let flag = call(&service, page("/flags/default/beta", Some(&viewer))).await;
    assert!(flag.body.contains("Evaluate as of this change"), "{}", flag.body);
    assert!(flag.body.contains("/playground?run=1&amp;at="), "{}", flag.body);
    // The newest, the switch, reads the flag as the switch left it: on.
    let link = flag
        .body
        .split("href=\"")
        .find(|link| link.starts_with("/playground?run=1&amp;at="))
        .and_then(|link| link.split('"').next())
        .map(|link| link.replace("&amp;", "&"))
        .unwrap_or_default();
    let switched = call(&service, page(&link, Some(&viewer))).await;
    assert_eq!(switched.status, StatusCode::OK, "{link}: {}", switched.body);
    assert!(
        switched.body.contains("✓ true"),
        "on as of the switch ({link}): {}",
        switched.body
    );

    // What changed since: the flag, switched on, with the event.
    let changed = call(
        &service,
        page(
            &format!("/history?environment=development&from={before}"),
            Some(&viewer),
        ),
    )
    .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    assert!(
        changed.body.contains("1 flag changed in development"),
        "{}",
        changed.body
    );
    assert!(changed.body.contains("Switched off → on"), "{}", changed.body);
    assert!(
        changed.body.contains("feature-environment-enabled"),
        "{}",
        changed.body
    );
    let bad = call(
        &service,
        page("/history?environment=development&from=soon", Some(&viewer)),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
}

#[actix_web::test]
async fn admins_manage_invite_links_tokens_and_roles_and_editors_cannot() {
    let app = TestApp::new();
    let service = app.service().await;
    let admin = user(&service, "admin@example.com", 1).await;
    let editor = user(&service, "editor@example.com", 2).await;
    for path in ["/admin/invites", "/admin/tokens", "/admin/users"] {
        let refused = call(&service, page(path, Some(&editor))).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{path}");
    }
    let flags = call(&service, page("/flags", Some(&editor))).await;
    assert!(
        !flags.body.contains("href=\"/admin/invites\""),
        "an editor is offered the admin pages"
    );
    let soon = (chrono::Utc::now() + chrono::Duration::days(10))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let forged = call(
        &service,
        form(
            "/admin/invites",
            Some(&editor),
            &[("name", "x"), ("expiresAt", &soon)],
        ),
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);

    // Invite links: create, disable, enable, new expiry; bad expiry refused.
    let created = call(
        &service,
        form(
            "/admin/invites",
            Some(&admin),
            &[("name", "team"), ("expiresAt", &soon)],
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    let (_, links) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    let secret = links["tokens"][0]["secret"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        links["tokens"][0]["expiresAt"],
        format!("{soon}:00.000Z"),
        "{links}"
    );
    let listed = call(&service, page("/admin/invites", Some(&admin))).await;
    assert!(
        listed.body.contains(&format!("/new-user?invite={secret}")),
        "{}",
        listed.body
    );
    assert!(listed.body.contains("data-copy="));
    let later = (chrono::Utc::now() + chrono::Duration::days(400))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let disabled = call(
        &service,
        form(
            &format!("/admin/invites/{secret}"),
            Some(&admin),
            &[("action", "toggle"), ("enabled", "false")],
        ),
    )
    .await;
    assert_eq!(disabled.status, StatusCode::SEE_OTHER, "{}", disabled.body);
    let (_, links) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(links["tokens"][0]["enabled"], false);
    let moved = call(
        &service,
        form(
            &format!("/admin/invites/{secret}"),
            Some(&admin),
            &[("action", "expiry"), ("expiresAt", &later)],
        ),
    )
    .await;
    assert_eq!(moved.status, StatusCode::SEE_OTHER, "{}", moved.body);
    let (_, links) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(links["tokens"][0]["expiresAt"], format!("{later}:00.000Z"));
    let bad = call(
        &service,
        form(
            &format!("/admin/invites/{secret}"),
            Some(&admin),
            &[("action", "expiry"), ("expiresAt", "soon")],
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);

    // A token: its secret shown once, and it works; then deleted.
    let made = call(
        &service,
        form(
            "/admin/tokens",
            Some(&admin),
            &[
                ("tokenName", "shop"),
                ("type", "backend"),
                ("environment", "development"),
            ],
        ),
    )
    .await;
    assert_eq!(made.status, StatusCode::OK, "{}", made.body);
    let secret = made
        .body
        .split("id=\"secret\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .unwrap_or_default()
        .to_owned();
    assert!(secret.starts_with("*:development."), "{secret}");
    let (status, _) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::OK);
    let tokens_page = call(&service, page("/admin/tokens", Some(&admin))).await;
    assert!(!tokens_page.body.contains(&secret), "the secret is shown again");
    // The page's delete form names the token by its id, which the API's list leaves out as
    // Unleash's does.
    let id = tokens_page
        .body
        .split("<tr>")
        .find(|row| row.contains("Delete shop"))
        .and_then(|row| row.split("/admin/tokens/").nth(1))
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_default()
        .to_owned();
    assert!(
        id.parse::<i32>().is_ok(),
        "no delete form for the token: {}",
        tokens_page.body
    );
    let deleted = call(
        &service,
        form(&format!("/admin/tokens/{id}/delete"), Some(&admin), &[]),
    )
    .await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER, "{}", deleted.body);
    let (status, _) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let missing = call(&service, form("/admin/tokens/99999/delete", Some(&admin), &[])).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);

    // Roles: the editor becomes a viewer.
    let (_, people) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    let editor_id = people["users"]
        .as_array()
        .and_then(|users| users.iter().find(|user| user["email"] == "editor@example.com"))
        .and_then(|user| user["id"].as_i64())
        .unwrap_or_default();
    let users_page = call(&service, page("/admin/users", Some(&admin))).await;
    assert!(users_page.body.contains("editor@example.com"));
    let changed = call(
        &service,
        form(
            &format!("/admin/users/{editor_id}"),
            Some(&admin),
            &[("rootRole", "3")],
        ),
    )
    .await;
    assert_eq!(changed.status, StatusCode::SEE_OTHER, "{}", changed.body);
    let (_, people) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    let role = people["users"]
        .as_array()
        .and_then(|users| users.iter().find(|user| user["email"] == "editor@example.com"))
        .map(|user| user["rootRole"].clone())
        .unwrap_or_default();
    assert_eq!(role, 3);
}

#[actix_web::test]
async fn flags_are_archived_and_revived_from_the_console() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "old"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let editor = user(&service, "editor@example.com", 2).await;
    let viewer = user(&service, "viewer@example.com", 3).await;
    let forged = call(&service, form("/flags/default/old/archive", Some(&viewer), &[])).await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let archived = call(&service, form("/flags/default/old/archive", Some(&editor), &[])).await;
    assert_eq!(archived.status, StatusCode::SEE_OTHER, "{}", archived.body);
    let live = call(&service, page("/flags?project=default", Some(&editor))).await;
    assert!(!live.body.contains(">old<"), "{}", live.body);
    let listed = call(&service, page("/flags?project=default&archived=1", Some(&editor))).await;
    assert!(
        listed.body.contains("<span class=\"mono\">old</span>"),
        "{}",
        listed.body
    );
    assert!(listed.body.contains("Revive old"));
    let revived = call(&service, form("/flags/default/old/revive", Some(&editor), &[])).await;
    assert_eq!(revived.status, StatusCode::SEE_OTHER, "{}", revived.body);
    let (status, _) = send(&service, get("/api/admin/projects/default/features/old", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let unknown = call(&service, form("/flags/default/old/explode", Some(&editor), &[])).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn too_many_signups_are_told_plainly_on_the_form() {
    let app = TestApp::with_settings(flag_admin::Settings {
        signups_per_minute: 1,
        logins_per_minute: 100,
        ..flag_admin::Settings::default()
    });
    let service = app.service().await;
    let invite = create_invite(&service).await;
    let secret = invite["secret"].as_str().unwrap_or_default().to_owned();
    let attempt = |email: &'static str| {
        form(
            "/new-user",
            None,
            &[
                ("invite", &secret),
                ("name", "Grace"),
                ("email", email),
                ("password", "weak"),
            ],
        )
        .peer_addr(std::net::SocketAddr::from(([10, 0, 0, 9], 5000)))
    };
    let first = call(&service, attempt("grace@example.com")).await;
    assert_eq!(first.status, StatusCode::BAD_REQUEST, "{}", first.body);
    let second = call(&service, attempt("grace@example.com")).await;
    assert_eq!(second.status, StatusCode::TOO_MANY_REQUESTS, "{}", second.body);
    assert!(
        second.body.contains("Too many attempts from here"),
        "{}",
        second.body
    );
    assert!(second.body.contains("value=\"grace@example.com\""));
}

#[actix_web::test]
async fn an_edit_keeps_what_the_type_does_not_declare_and_bad_forms_get_a_page() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "kept"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let constraint = |value: &str| json!({"contextName": "region", "operator": "IN", "values": [value], "caseInsensitive": true});
    let (status, strategy) = send(
        &service,
        post(
            "/api/admin/projects/default/features/kept/environments/development/strategies",
            ADMIN,
            json!({
                "name": "flexibleRollout",
                "title": "Europe first",
                "parameters": {"rollout": "10", "stickiness": "default", "groupId": "shared-group", "undeclared": "kept"},
                "constraints": [constraint("a"), constraint("b"), constraint("c"), constraint("d")],
                "variants": [{"name": "v", "weight": 1000, "weightType": "variable", "stickiness": "default"}]
            }),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{strategy}");
    let id = strategy["id"].as_str().unwrap_or_default().to_owned();
    let editor = user(&service, "editor@example.com", 2).await;
    let edited = call(
        &service,
        form(
            &format!("/flags/default/kept/environments/development/strategies/{id}"),
            Some(&editor),
            &[
                ("name", "flexibleRollout"),
                ("title", "Europe first"),
                ("p_rollout", "50"),
                ("p_stickiness", "userId"),
                ("p_groupId", "shared-group"),
                ("c0_context", "region"),
                ("c0_operator", "IN"),
                ("c0_values", "a, z"),
                ("c0_caseInsensitive", "true"),
                ("c1_context", "region"),
                ("c1_operator", "IN"),
                ("c1_values", "b"),
                ("c2_context", "region"),
                ("c2_operator", "IN"),
                ("c2_values", "c"),
                ("c3_context", "region"),
                ("c3_operator", "IN"),
                ("c3_values", "d"),
                ("c4_context", ""),
                ("sv0_name", "v"),
                ("sv0_weightType", "variable"),
            ],
        ),
    )
    .await;
    assert_eq!(edited.status, StatusCode::SEE_OTHER, "{}", edited.body);
    let (_, stored) = send(
        &service,
        get(
            &format!("/api/admin/projects/default/features/kept/environments/development/strategies/{id}"),
            ADMIN,
        ),
    )
    .await;
    assert_eq!(stored["title"], "Europe first", "{stored}");
    assert_eq!(stored["parameters"]["rollout"], "50");
    assert_eq!(stored["parameters"]["groupId"], "shared-group");
    assert_eq!(
        stored["parameters"]["undeclared"], "kept",
        "a parameter its type does not declare was lost"
    );
    assert_eq!(stored["constraints"][0]["values"], json!(["a", "z"]));
    assert_eq!(stored["constraints"][0]["caseInsensitive"], true);
    assert_eq!(
        stored["constraints"][3]["values"],
        json!(["d"]),
        "the fourth constraint was lost"
    );
    assert_eq!(stored["variants"][0]["name"], "v");

    // A form that does not read gets a page, not a bare error.
    let bad = call(
        &service,
        form(
            "/flags",
            Some(&editor),
            &[("project", "default"), ("name", "x"), ("type", "nonsense")],
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.body.contains("role=\"alert\""), "{}", bad.body);
    // A way back with a tab or a line break in it is not followed.
    for next in ["/%09/evil.example", "/%0Aevil"] {
        send(
            &service,
            post(
                "/api/admin/user-admin",
                ADMIN,
                json!({"username": format!("u{}", next.len()), "rootRole": 3, "password": PASSWORD}),
            ),
        )
        .await;
        let signed = call(
            &service,
            test::TestRequest::post()
                .uri("/login")
                .insert_header(("Host", "localhost:8080"))
                .insert_header(("Origin", ORIGIN))
                .insert_header(("Content-Type", "application/x-www-form-urlencoded"))
                .set_payload(format!(
                    "username=u{}&password={}&next={next}",
                    next.len(),
                    "Corr3ct-Horse%21"
                )),
        )
        .await;
        assert_eq!(signed.status, StatusCode::SEE_OTHER, "{}", signed.body);
        assert_eq!(signed.location.as_deref(), Some("/flags"), "{next}");
    }
}

#[actix_web::test]
async fn every_page_escapes_what_people_typed() {
    let app = TestApp::new();
    let service = app.service().await;
    let admin = user(&service, "admin@example.com", 1).await;
    let evil = "<img src=x onerror=alert(1)>";
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "escaped", "description": evil}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/escaped/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "title": evil, "constraints": [{"contextName": "region", "operator": "IN", "values": [evil]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let expires = (chrono::Utc::now() + chrono::Duration::days(3)).to_rfc3339();
    let (status, body) = send(
        &service,
        post(
            "/api/admin/invite-link/tokens",
            ADMIN,
            json!({"name": evil, "expiresAt": expires}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": "named@example.com", "name": "<b>Bold</b>", "rootRole": 3}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for path in [
        "/flags/default/escaped".to_owned(),
        "/admin/invites".to_owned(),
        "/admin/users".to_owned(),
        format!(
            "/playground?run=1&env=development&custom=region%3D{}",
            "%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E"
        ),
    ] {
        let shown = call(&service, page(&path, Some(&admin))).await;
        assert_eq!(shown.status, StatusCode::OK, "{path}: {}", shown.body);
        assert!(
            !shown.body.contains("<img"),
            "{path} inserted markup: {}",
            shown.body
        );
        assert!(!shown.body.contains("<b>Bold"), "{path} inserted markup");
        assert!(
            shown.body.contains("&lt;img src=x onerror=alert(1)&gt;") || path == "/admin/users",
            "{path}"
        );
    }
    let users = call(&service, page("/admin/users", Some(&admin))).await;
    assert!(users.body.contains("&lt;b&gt;Bold&lt;/b&gt;"), "{}", users.body);
}

#[actix_web::test]
async fn segments_and_context_fields_are_made_used_and_kept_while_in_use() {
    let app = TestApp::new();
    let service = app.service().await;
    let editor = user(&service, "editor@example.com", 2).await;
    let admin = user(&service, "admin@example.com", 1).await;
    let viewer = user(&service, "viewer@example.com", 3).await;

    // A context field with legal values, made by an admin; an editor may not.
    let fields = [
        ("name", "plan"),
        ("description", "billing plan"),
        ("stickiness", "true"),
        ("legalValues", "free\npro: paying"),
    ];
    let refused = call(&service, form("/context", Some(&editor), &fields)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    let made = call(&service, form("/context", Some(&admin), &fields)).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let (_, field) = send(&service, get("/api/admin/context/plan", ADMIN)).await;
    assert_eq!(
        field["legalValues"],
        json!([{"value": "free"}, {"value": "pro", "description": "paying"}]),
        "{field}"
    );
    assert_eq!(field["stickiness"], true);
    let bad = call(&service, form("/context", Some(&admin), &[("name", "no spaces")])).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert!(bad.body.contains("role=\"alert\""));

    // A segment on it, with a constraint the editor offers the legal values of.
    let segment = [
        ("name", "paying"),
        ("description", "customers who pay"),
        ("project", ""),
        ("c0_context", "plan"),
        ("c0_operator", "IN"),
        ("c0_values", "pro"),
        ("c1_context", ""),
    ];
    let denied = call(&service, form("/segments", Some(&viewer), &segment)).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
    let made = call(&service, form("/segments", Some(&editor), &segment)).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let at = made.location.clone().unwrap_or_default();
    let id: i64 = at.trim_start_matches("/segments/").parse().unwrap_or_default();
    let (_, stored) = send(&service, get(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(stored["constraints"][0]["values"], json!(["pro"]), "{stored}");
    let shown = call(&service, page(&at, Some(&editor))).await;
    assert!(shown.body.contains("No strategy uses it"), "{}", shown.body);
    assert!(
        shown.body.contains("<datalist id=\"segment-legal-plan\">"),
        "{}",
        shown.body
    );
    let bad = call(
        &service,
        form(
            &at,
            Some(&editor),
            &[
                ("name", "paying"),
                ("c0_context", "version"),
                ("c0_operator", "SEMVER_EQ"),
                ("c0_values", "one"),
            ],
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert!(bad.body.contains("value=\"one\""), "the form lost what was typed");

    // A strategy uses both; deleting either is refused, naming where.
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "billing"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/billing/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "segments": [id],
                "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let kept = call(&service, form(&format!("{at}/delete"), Some(&admin), &[])).await;
    assert_eq!(kept.status, StatusCode::CONFLICT, "{}", kept.body);
    assert!(
        kept.body.contains("href=\"/flags/default/billing\""),
        "{}",
        kept.body
    );
    let kept = call(&service, form("/context/plan/delete", Some(&admin), &[])).await;
    assert_eq!(kept.status, StatusCode::CONFLICT, "{}", kept.body);
    assert!(
        kept.body.contains("href=\"/flags/default/billing\""),
        "{}",
        kept.body
    );

    // Once no strategy uses it, the segment goes.
    let (status, _) = send(
        &service,
        test::TestRequest::delete()
            .uri("/api/admin/projects/default/features/billing")
            .insert_header(("Authorization", ADMIN)),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = send(
        &service,
        test::TestRequest::delete()
            .uri("/api/admin/archive/billing")
            .insert_header(("Authorization", ADMIN)),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let gone = call(&service, form(&format!("{at}/delete"), Some(&admin), &[])).await;
    assert_eq!(gone.status, StatusCode::SEE_OTHER, "{}", gone.body);
    let (status, _) = send(&service, get(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn a_strategy_page_tries_reorders_and_the_audit_log_shows_each_change() {
    let app = TestApp::new();
    let service = app.service().await;
    let editor = user(&service, "editor@example.com", 2).await;
    let viewer = user(&service, "viewer@example.com", 3).await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "ordered"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let base = "/flags/default/ordered/environments/development/strategies";
    // A new strategy of a type with a list parameter.
    let new = call(
        &service,
        page(&format!("{base}/new?type=remoteAddress"), Some(&editor)),
    )
    .await;
    assert_eq!(new.status, StatusCode::OK, "{}", new.body);
    assert!(new.body.contains("name=\"p_IPs\""), "{}", new.body);
    for fields in [
        vec![
            ("name", "remoteAddress"),
            ("p_IPs", "10.0.0.0/8"),
            ("title", "office"),
        ],
        vec![
            ("name", "flexibleRollout"),
            ("p_rollout", "100"),
            ("c0_context", "version"),
            ("c0_operator", "SEMVER_GT"),
            ("c0_values", "1.2.0"),
        ],
    ] {
        let added = call(&service, form(base, Some(&editor), &fields)).await;
        assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    }
    let list = |service| async move {
        let (_, strategies) = send(
            service,
            get(
                "/api/admin/projects/default/features/ordered/environments/development/strategies",
                ADMIN,
            ),
        )
        .await;
        strategies
            .as_array()
            .into_iter()
            .flatten()
            .map(|strategy| strategy["name"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    let names = list(&service).await;
    assert_eq!(names, ["remoteAddress", "flexibleRollout"]);
    let (_, strategies) = send(
        &service,
        get(
            "/api/admin/projects/default/features/ordered/environments/development/strategies",
            ADMIN,
        ),
    )
    .await;
    let rollout = strategies[1]["id"].as_str().unwrap_or_default().to_owned();

    // "Try it" answers for a context and saves nothing.
    let tried = |version: &'static str| {
        form(
            &format!("{base}/{rollout}"),
            Some(&editor),
            &[
                ("name", "flexibleRollout"),
                ("p_rollout", "100"),
                ("c0_context", "version"),
                ("c0_operator", "SEMVER_GT"),
                ("c0_values", "2.0.0"),
                ("try_properties", version),
                ("preview", "1"),
            ],
        )
    };
    let on = call(&service, tried("version=2.1.0")).await;
    assert_eq!(on.status, StatusCode::OK, "{}", on.body);
    assert!(on.body.contains("✓ On"), "{}", on.body);
    let off = call(&service, tried("version=1.0.0")).await;
    assert!(off.body.contains("✗ Off"), "{}", off.body);
    assert!(
        off.body.contains("✗ version is a version above 2.0.0"),
        "{}",
        off.body
    );
    let (_, stored) = send(
        &service,
        get(
            &format!(
                "/api/admin/projects/default/features/ordered/environments/development/strategies/{rollout}"
            ),
            ADMIN,
        ),
    )
    .await;
    assert_eq!(
        stored["constraints"][0]["value"], "1.2.0",
        "a try saved the strategy"
    );

    // Moved up, it is evaluated first; a viewer may not move it.
    let denied = call(
        &service,
        form(&format!("{base}/{rollout}/move"), Some(&viewer), &[("to", "up")]),
    )
    .await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);
    let moved = call(
        &service,
        form(&format!("{base}/{rollout}/move"), Some(&editor), &[("to", "up")]),
    )
    .await;
    assert_eq!(moved.status, StatusCode::SEE_OTHER, "{}", moved.body);
    assert_eq!(list(&service).await, ["flexibleRollout", "remoteAddress"]);

    // The audit log lists the changes with what each changed, and filters keep to the address.
    let log = call(&service, page("/events?feature=ordered", Some(&viewer))).await;
    assert_eq!(log.status, StatusCode::OK, "{}", log.body);
    assert!(log.body.contains("feature-strategy-add"), "{}", log.body);
    assert!(log.body.contains("IPs"), "{}", log.body);
    let none = call(
        &service,
        page("/events?feature=ordered&type=feature-archived", Some(&viewer)),
    )
    .await;
    assert!(none.body.contains("No event matches"), "{}", none.body);
    let bad = call(&service, page("/events?from=yesterday", Some(&viewer))).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    assert!(bad.body.contains("role=\"alert\""));
    let flag = call(&service, page("/flags/default/ordered", Some(&viewer))).await;
    assert!(flag.body.contains("class=\"diff\""), "{}", flag.body);
}

#[actix_web::test]
async fn a_flags_whole_life_and_a_projects_environments_from_the_console() {
    let app = TestApp::new();
    let service = app.service().await;
    let editor = user(&service, "editor@example.com", 2).await;
    let admin = user(&service, "admin@example.com", 1).await;
    for name in ["parent", "child"] {
        let (status, _) = send(
            &service,
            post(
                "/api/admin/projects/default/features",
                ADMIN,
                json!({"name": name}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (status, _) = send(
        &service,
        post("/api/admin/tag-types", ADMIN, json!({"name": "team"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let base = "/flags/default/child";
    for (path, fields) in [
        ("stale", vec![("stale", "true")]),
        ("tags", vec![("type", "team"), ("value", "payments")]),
        (
            "dependencies",
            vec![("feature", "parent"), ("enabled", "true"), ("variants", "")],
        ),
    ] {
        let done = call(&service, form(&format!("{base}/{path}"), Some(&editor), &fields)).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{path}: {}", done.body);
    }
    let (_, detail) = send(&service, get("/api/admin/projects/default/features/child", ADMIN)).await;
    assert_eq!(detail["stale"], true, "{detail}");
    assert_eq!(detail["dependencies"][0]["feature"], "parent");
    let (_, tags) = send(&service, get("/api/admin/features/child/tags", ADMIN)).await;
    assert_eq!(tags["tags"][0]["value"], "payments", "{tags}");
    // The list filters by the tag; a bad tag is said plainly.
    let tagged = call(
        &service,
        page("/flags?project=default&tag=team%3Apayments", Some(&editor)),
    )
    .await;
    assert!(
        tagged.body.contains(">child<") && !tagged.body.contains(">parent<"),
        "{}",
        tagged.body
    );
    let bad = call(
        &service,
        form(
            &format!("{base}/tags"),
            Some(&editor),
            &[("type", "team"), ("value", "")],
        ),
    )
    .await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
    // Copied, removed from its parent, untagged; archived and deleted for good.
    let copied = call(
        &service,
        form(&format!("{base}/clone"), Some(&editor), &[("name", "child-copy")]),
    )
    .await;
    assert_eq!(
        copied.location.as_deref(),
        Some("/flags/default/child-copy"),
        "{}",
        copied.body
    );
    for (path, fields) in [
        ("dependencies/delete", vec![]),
        ("tags/delete", vec![("type", "team"), ("value", "payments")]),
        ("archive", vec![]),
    ] {
        let done = call(&service, form(&format!("{base}/{path}"), Some(&admin), &fields)).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{path}: {}", done.body);
    }
    let viewer = user(&service, "viewer@example.com", 3).await;
    let denied = call(&service, form(&format!("{base}/delete"), Some(&viewer), &[])).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
    let deleted = call(&service, form(&format!("{base}/delete"), Some(&admin), &[])).await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER, "{}", deleted.body);
    let (status, _) = send(&service, get("/api/admin/projects/default/features/child", ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A project made from the console, with production switched off in it and on again.
    let refused = call(
        &service,
        form("/projects", Some(&editor), &[("name", "Payments")]),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let made = call(
        &service,
        form(
            "/projects",
            Some(&admin),
            &[("name", "Payments"), ("id", "payments")],
        ),
    )
    .await;
    assert_eq!(
        made.location.as_deref(),
        Some("/projects/payments"),
        "{}",
        made.body
    );
    let off = call(
        &service,
        form(
            "/projects/payments/environments",
            Some(&admin),
            &[("environment", "production"), ("enabled", "false")],
        ),
    )
    .await;
    assert_eq!(off.status, StatusCode::SEE_OTHER, "{}", off.body);
    let (_, project) = send(&service, get("/api/admin/projects/payments", ADMIN)).await;
    assert_eq!(
        project["environments"],
        json!([{"environment": "development"}]),
        "{project}"
    );
    let unknown = call(
        &service,
        form(
            "/projects/payments/environments",
            Some(&admin),
            &[("environment", "nowhere"), ("enabled", "true")],
        ),
    )
    .await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.body);
    assert!(unknown.body.contains("role=\"alert\""));
    let shown = call(&service, page("/projects/payments", Some(&editor))).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    assert!(
        !shown.body.contains("Switch on"),
        "an editor sees the admin's switch"
    );
    // Across projects, each switch stands under its own environment's column.
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/payments/features",
            ADMIN,
            json!({"name": "refunds"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let every = call(&service, page("/flags?project=*", Some(&editor))).await;
    assert_eq!(every.status, StatusCode::OK, "{}", every.body);
    assert!(every.body.contains("not in its project"), "{}", every.body);
    assert!(
        every.body.contains("aria-label=\"parent in production\""),
        "{}",
        every.body
    );
}

#[actix_web::test]
async fn usage_is_drawn_per_environment_and_applications_list_their_sdks() {
    let app = TestApp::new();
    let service = app.service().await;
    let viewer = user(&service, "viewer@example.com", 3).await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "charted"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let empty = call(&service, page("/flags/default/charted", Some(&viewer))).await;
    assert!(
        empty.body.contains("No SDK has reported this flag"),
        "{}",
        empty.body
    );
    let (status, body) = send(
        &service,
        post(
            "/api/client/register",
            crate::common::SDK,
            json!({"appName": "checkout-web", "instanceId": "pod-1", "sdkVersion": "unleash-client-node:4.1.0",
                   "strategies": ["default"], "started": crate::common::time_from_now(chrono::TimeDelta::hours(-1)), "interval": 15000}),
        ),
    )
    .await;
    assert!(status.is_success(), "{body}");
    let (status, body) = send(
        &service,
        post(
            "/api/client/metrics",
            crate::common::SDK,
            json!({"appName": "checkout-web", "instanceId": "pod-1",
                   "bucket": {"start": crate::common::time_from_now(chrono::TimeDelta::minutes(-1)),
                              "stop": crate::common::time_from_now(chrono::TimeDelta::zero()),
                              "toggles": {"charted": {"yes": 7, "no": 3}, "missing-flag": {"yes": 0, "no": 2}}}}),
        ),
    )
    .await;
    assert!(status.is_success(), "{body}");
    app.state.app.flush_usage().await.ok();
    let shown = call(&service, page("/flags/default/charted", Some(&viewer))).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    assert!(shown.body.contains("<svg role=\"img\""), "{}", shown.body);
    assert!(
        shown
            .body
            .contains("development: 7 yes and 3 no in the last 48 hours"),
        "{}",
        shown.body
    );
    assert!(
        shown.body.contains("<td>7</td><td>3</td>"),
        "the numbers are not given as text"
    );
    let apps = call(&service, page("/applications", Some(&viewer))).await;
    assert_eq!(apps.status, StatusCode::OK, "{}", apps.body);
    assert!(
        apps.body.contains("checkout-web") && apps.body.contains("pod-1"),
        "{}",
        apps.body
    );
    assert!(
        apps.body.contains("outdated"),
        "an old SDK is not flagged: {}",
        apps.body
    );
    assert!(
        apps.body.contains("missing-flag"),
        "an unknown flag is not listed: {}",
        apps.body
    );
}

#[actix_web::test]
async fn admins_keep_webhooks_sign_in_and_imports_from_the_console() -> Result<(), Box<dyn std::error::Error>>
{
    use crate::catalogue::webhooks::{Answer, receiver};
    let app = TestApp::with_settings(flag_admin::Settings {
        webhook_urls: flag_admin::runtime::url_policy::UrlPolicy {
            allow_private: true,
            allow_list: Vec::new(),
        },
        ..flag_admin::Settings::default()
    });
    let service = app.service().await;
    let admin = user(&service, "admin@example.com", 1).await;
    let editor = user(&service, "editor@example.com", 2).await;

    // A webhook, sent a sample; a failing one shows its failure.
    let hook = receiver(Answer::Status(200))?;
    let fields = [
        ("url", hook.url("/flags").leak() as &str),
        ("description", "ops"),
        ("all_events", "true"),
    ];
    let refused = call(&service, form("/admin/webhooks", Some(&editor), &fields)).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let made = call(&service, form("/admin/webhooks", Some(&admin), &fields)).await;
    assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.body);
    let (_, addons) = send(&service, get("/api/admin/addons", ADMIN)).await;
    let id = addons["addons"][0]["id"].as_i64().unwrap_or_default();
    let sent = call(
        &service,
        form(&format!("/admin/webhooks/{id}/sample"), Some(&admin), &[]),
    )
    .await;
    assert_eq!(sent.status, StatusCode::SEE_OTHER, "{}", sent.body);
    let received = hook.next()?;
    assert!(received.body.contains("sample-flag"), "{}", received.body);
    let failing = receiver(Answer::Status(500))?;
    let fields = [
        ("url", failing.url("/down").leak() as &str),
        ("description", "down"),
        ("all_events", "true"),
    ];
    call(&service, form("/admin/webhooks", Some(&admin), &fields)).await;
    let (_, addons) = send(&service, get("/api/admin/addons", ADMIN)).await;
    let down = addons["addons"][1]["id"].as_i64().unwrap_or_default();
    call(
        &service,
        form(&format!("/admin/webhooks/{down}/sample"), Some(&admin), &[]),
    )
    .await;
    let shown = call(&service, page("/admin/webhooks", Some(&admin))).await;
    assert!(shown.body.contains("success"), "{}", shown.body);
    assert!(
        shown.body.contains("failed with status code: 500"),
        "{}",
        shown.body
    );
    let gone = call(
        &service,
        form(&format!("/admin/webhooks/{down}/delete"), Some(&admin), &[]),
    )
    .await;
    assert_eq!(gone.status, StatusCode::SEE_OTHER);
    let (_, addons) = send(&service, get("/api/admin/addons", ADMIN)).await;
    assert_eq!(addons["addons"].as_array().map(Vec::len), Some(1));

    // Password login cannot be switched off while single sign-on is off: said on a page.
    let kept = call(
        &service,
        form("/admin/sign-in/password", Some(&admin), &[("disabled", "true")]),
    )
    .await;
    assert_eq!(kept.status, StatusCode::FORBIDDEN, "{}", kept.body);
    assert!(kept.body.contains("Single sign-on is off"), "{}", kept.body);
    let sign_in = call(&service, page("/admin/sign-in", Some(&admin))).await;
    assert_eq!(sign_in.status, StatusCode::OK, "{}", sign_in.body);
    let denied = call(&service, page("/admin/sign-in", Some(&editor))).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN);

    // Exported as a download, checked, and imported under another name.
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "exported"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let download = test::call_service(
        &service,
        page(
            "/admin/export?environment=development&project=default",
            Some(&admin),
        )
        .to_request(),
    )
    .await;
    assert_eq!(download.status(), StatusCode::OK);
    let disposition = download
        .headers()
        .get("content-disposition")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    let document = test::read_body(download).await;
    let text = String::from_utf8_lossy(&document).replace("\"exported\"", "\"imported\"");
    let broken = call(
        &service,
        form(
            "/admin/import",
            Some(&admin),
            &[
                ("project", "default"),
                ("environment", "development"),
                ("data", "{"),
                ("step", "check"),
            ],
        ),
    )
    .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST, "{}", broken.body);
    let checked = call(
        &service,
        form(
            "/admin/import",
            Some(&admin),
            &[
                ("project", "default"),
                ("environment", "development"),
                ("data", &text),
                ("step", "check"),
            ],
        ),
    )
    .await;
    assert!(
        checked.body.contains("Ready to import 1 flag"),
        "{}",
        checked.body
    );
    let (status, _) = send(
        &service,
        get("/api/admin/projects/default/features/imported", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a check wrote");
    let imported = call(
        &service,
        form(
            "/admin/import",
            Some(&admin),
            &[
                ("project", "default"),
                ("environment", "development"),
                ("data", &text),
                ("step", "import"),
            ],
        ),
    )
    .await;
    assert!(imported.body.contains("Imported 1 flag"), "{}", imported.body);
    let (status, _) = send(
        &service,
        get("/api/admin/projects/default/features/imported", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    Ok(())
}

#[actix_web::test]
async fn admins_keep_roles_groups_service_accounts_and_project_access_and_owners_their_project() {
    let app = TestApp::new();
    let service = app.service().await;
    let admin = user(&service, "admin@example.com", 1).await;
    let editor = user(&service, "editor@example.com", 2).await;
    let viewer = user(&service, "viewer@example.com", 3).await;
    for path in ["/admin/groups", "/admin/service-accounts"] {
        let refused = call(&service, page(path, Some(&editor))).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{path}");
    }
    // Roles: anyone signed in reads them; only an admin is offered the form.
    let roles = call(&service, page("/admin/roles", Some(&editor))).await;
    assert_eq!(roles.status, StatusCode::OK);
    assert!(
        !roles.body.contains("action=\"/admin/roles\""),
        "an editor is offered the form"
    );
    let created = call(
        &service,
        form(
            "/admin/roles",
            Some(&admin),
            &[
                ("name", "Releaser"),
                ("type", "custom"),
                ("permission", "UPDATE_FEATURE_ENVIRONMENT@production"),
                ("permission", "CREATE_FEATURE"),
            ],
        ),
    )
    .await;
    assert_eq!(created.status, StatusCode::SEE_OTHER, "{}", created.body);
    let (_, listed) = send(&service, get("/api/admin/roles", ADMIN)).await;
    let role = listed["roles"]
        .as_array()
        .and_then(|roles| roles.iter().find(|role| role["name"] == "Releaser"))
        .and_then(|role| role["id"].as_i64())
        .unwrap_or_default();
    let edit = call(&service, page(&format!("/admin/roles/{role}"), Some(&admin))).await;
    assert!(
        edit.body
            .contains("value=\"UPDATE_FEATURE_ENVIRONMENT@production\" checked"),
        "{}",
        edit.body
    );
    let wrong = call(
        &service,
        form(
            "/admin/roles",
            Some(&admin),
            &[
                ("name", "Bad"),
                ("type", "custom"),
                ("permission", "CREATE_PROJECT"),
            ],
        ),
    )
    .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST);
    assert!(wrong.body.contains("CREATE_PROJECT"), "{}", wrong.body);

    // A group holding the viewer, then a service account with a token shown once.
    let (_, users) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    let viewer_id = users["users"]
        .as_array()
        .and_then(|users| users.iter().find(|user| user["email"] == "viewer@example.com"))
        .and_then(|user| user["id"].as_i64())
        .unwrap_or_default()
        .to_string();
    let grouped = call(
        &service,
        form(
            "/admin/groups",
            Some(&admin),
            &[
                ("name", "Release team"),
                ("rootRole", ""),
                ("user", &viewer_id),
                ("mappingsSSO", "release, ops"),
            ],
        ),
    )
    .await;
    assert_eq!(grouped.status, StatusCode::SEE_OTHER, "{}", grouped.body);
    let (_, groups) = send(&service, get("/api/admin/groups", ADMIN)).await;
    assert_eq!(groups["groups"][0]["mappingsSSO"], json!(["release", "ops"]));
    let group_id = groups["groups"][0]["id"].as_i64().unwrap_or_default().to_string();
    let account = call(
        &service,
        form(
            "/admin/service-accounts",
            Some(&admin),
            &[("username", "deployer"), ("name", "CI"), ("rootRole", "3")],
        ),
    )
    .await;
    assert_eq!(account.status, StatusCode::SEE_OTHER, "{}", account.body);
    let (_, accounts) = send(&service, get("/api/admin/service-account", ADMIN)).await;
    let account_id = accounts["serviceAccounts"][0]["id"].as_i64().unwrap_or_default();
    let later = (chrono::Utc::now() + chrono::Duration::days(30))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let token = call(
        &service,
        form(
            &format!("/admin/service-accounts/{account_id}/tokens"),
            Some(&admin),
            &[("description", "pipeline"), ("expiresAt", &later)],
        ),
    )
    .await;
    assert_eq!(token.status, StatusCode::OK, "{}", token.body);
    assert!(token.body.contains("user:"), "{}", token.body);

    // Project access: the group gets the custom role, the viewer becomes the project's owner.
    for who in [format!("group:{group_id}"), format!("user:{viewer_id}")] {
        let role_id = if who.starts_with("group") {
            role.to_string()
        } else {
            "4".to_owned()
        };
        let given = call(
            &service,
            form(
                "/projects/default/access",
                Some(&admin),
                &[("action", "add"), ("role", &role_id), ("who", &who)],
            ),
        )
        .await;
        assert_eq!(given.status, StatusCode::SEE_OTHER, "{}", given.body);
    }
    let project = call(&service, page("/projects/default", Some(&admin))).await;
    assert!(
        project.body.contains("Group Release team") && project.body.contains("Releaser"),
        "{}",
        project.body
    );
    // The viewer now owns `default`: offered the access forms and its environments' switches.
    let owned = call(&service, page("/projects/default", Some(&viewer))).await;
    assert!(owned.body.contains("Give the role"), "{}", owned.body);
    assert!(owned.body.contains("Switch off"), "{}", owned.body);
    let refused = call(
        &service,
        form(
            "/projects/default/access",
            Some(&editor),
            &[("action", "remove"), ("user", &viewer_id)],
        ),
    )
    .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let removed = call(
        &service,
        form(
            "/projects/default/access",
            Some(&viewer),
            &[("action", "remove"), ("group", &group_id)],
        ),
    )
    .await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER, "{}", removed.body);
    let (_, access) = send(&service, get("/api/admin/projects/default/access", ADMIN)).await;
    assert_eq!(access["groups"].as_array().map(Vec::len), Some(0), "{access}");

    // Owning `default` reaches its flags, not another project's under its name.
    send(
        &service,
        post("/api/admin/projects", ADMIN, json!({"id": "web", "name": "Web"})),
    )
    .await;
    send(
        &service,
        post(
            "/api/admin/projects/web/features",
            ADMIN,
            json!({"name": "elsewhere"}),
        ),
    )
    .await;
    send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "owned"}),
        ),
    )
    .await;
    let mine = call(
        &service,
        form(
            "/flags/default/owned/tags",
            Some(&viewer),
            &[("type", "simple"), ("value", "mine")],
        ),
    )
    .await;
    assert_eq!(mine.status, StatusCode::SEE_OTHER, "{}", mine.body);
    let theirs = call(
        &service,
        form(
            "/flags/default/elsewhere/tags",
            Some(&viewer),
            &[("type", "simple"), ("value", "theirs")],
        ),
    )
    .await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.body);
    let direct = call(
        &service,
        form(
            "/flags/web/elsewhere/tags",
            Some(&viewer),
            &[("type", "simple"), ("value", "theirs")],
        ),
    )
    .await;
    assert_eq!(direct.status, StatusCode::FORBIDDEN, "{}", direct.body);
    let (_, tags) = send(&service, get("/api/admin/features/elsewhere/tags", ADMIN)).await;
    assert_eq!(tags["tags"].as_array().map(Vec::len), Some(0), "{tags}");
    // Nor another project's archived flag, revived or deleted for good under its name.
    send(
        &service,
        actix_web::test::TestRequest::delete()
            .uri("/api/admin/projects/web/features/elsewhere")
            .insert_header(("Authorization", ADMIN)),
    )
    .await;
    for action in ["revive", "delete"] {
        let refused = call(
            &service,
            form(&format!("/flags/default/elsewhere/{action}"), Some(&viewer), &[]),
        )
        .await;
        assert!(
            !refused.status.is_success() && !refused.status.is_redirection(),
            "{action}: {}",
            refused.status
        );
    }
    let (_, archived) = send(
        &service,
        get(
            "/api/admin/search/features?project=IS:web&archived=IS:true",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(
        archived["features"][0]["name"], "elsewhere",
        "still archived, still there: {archived}"
    );
}
