//! Bounded work per request, login protection and input limits: one test per defect the attack
//! review found, each named after it.

use crate::common::{ADMIN, TestApp, assert_error, get, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use flag_admin::Settings;
use flag_store::models::NewUser;
use serde_json::{Map, Value, json};

fn path_of(body: &Value) -> &str {
    body["details"][0]["path"].as_str().unwrap_or_default()
}

#[actix_web::test]
async fn issue_7_playground_contexts_have_a_field_limit() {
    let app = TestApp::new();
    let service = app.service().await;
    let properties: Map<String, Value> = (0..30_000)
        .map(|index| (format!("p{index}"), json!("v")))
        .collect();
    let user_ids = (0..2_000).map(|id| id.to_string()).collect::<Vec<_>>().join(",");
    let attack = json!({
        "environments": ["development"],
        "context": {"appName": "a", "userId": user_ids, "properties": properties}
    });
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, attack)).await;
    assert_error(status, &body, 400, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 256")),
        "{body}"
    );

    // The deprecated operation's 40,000 top-level keys.
    let mut context: Map<String, Value> = (0..40_000)
        .map(|index| (format!("k{index}"), json!(index)))
        .collect();
    context.insert("appName".into(), json!("a"));
    let request = json!({"environment": "development", "context": context});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, request)).await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(path_of(&body), "/context");

    // 256 fields are accepted.
    let properties: Map<String, Value> = (0..254).map(|index| (format!("p{index}"), json!("v"))).collect();
    let request =
        json!({"environment": "development", "context": {"appName": "a", "properties": properties}});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[actix_web::test]
async fn issue_7_playground_values_have_a_length_limit() {
    let app = TestApp::new();
    let service = app.service().await;
    let long = "x".repeat(64 * 1024 + 1);
    for (context, path) in [
        (json!({"appName": "a", "userId": long}), "/context/userId"),
        (
            json!({"appName": "a", "properties": {"plan": long}}),
            "/context/properties/plan",
        ),
    ] {
        let request = json!({"environments": ["development"], "context": context});
        let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
        assert_error(status, &body, 400, "ValidationError");
        assert_eq!(path_of(&body), path);
    }
}

#[actix_web::test]
async fn issue_7_advanced_playground_limits_the_context_it_repeats() {
    let app = TestApp::with_settings(Settings {
        context_bytes_limit: 100_000,
        ..Settings::default()
    });
    let service = app.service().await;
    seed_feature(&service, "a").await;
    seed_feature(&service, "b").await;
    // 100 combinations of about 1 KiB each, in 2 environments for 2 features: about 400 KB.
    let user_ids = (0..100).map(|id| id.to_string()).collect::<Vec<_>>().join(",");
    let request = json!({
        "environments": ["development", "production"],
        "context": {"appName": "a", "userId": user_ids, "note": "n".repeat(1000)}
    });
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_error(status, &body, 400, "ValidationError");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(message.contains("100000 byte limit"), "{message}");
}

#[actix_web::test]
async fn issue_7_a_long_advanced_answer_keeps_unleash_order() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "a").await;
    seed_feature(&service, "b").await;
    // 2 features × 3 environments × 2,400 combinations: 14,400, within the 15,000 limit.
    let user_ids = (0..1_200).map(|id| id.to_string()).collect::<Vec<_>>().join(",");
    let request = json!({
        "environments": ["development", "production", "development"],
        "context": {"appName": "a", "userId": user_ids, "plan": "pro,"},
        "projects": "*"
    });
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let features = body["features"].as_array().cloned().unwrap_or_default();
    assert_eq!(features.len(), 2);
    for feature in &features {
        let environments = feature["environments"].as_object().cloned().unwrap_or_default();
        assert_eq!(
            environments.keys().collect::<Vec<_>>(),
            ["development", "production"]
        );
        // A repeated environment adds a second run of combinations to its first key.
        let development = environments["development"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(development.len(), 2 * 2_400);
        assert_eq!(environments["production"].as_array().map(Vec::len), Some(2_400));
        for (index, entry) in development.iter().enumerate() {
            let index = index % 2_400;
            let plan = if index % 2 == 0 { "pro" } else { "" };
            let expected = json!({"userId": (index / 2).to_string(), "plan": plan, "appName": "a"});
            assert_eq!(entry["context"], expected, "entry {index}");
            assert_eq!(entry["isEnabled"], json!(true));
        }
    }
}

#[actix_web::test]
async fn issue_7_unknown_environments_are_counted_before_any_compiling() {
    let app = TestApp::new();
    let service = app.service().await;
    for name in ["a", "b", "c", "d", "e", "f"] {
        seed_feature(&service, name).await;
    }
    let environments: Vec<String> = (0..3_000).map(|index| format!("env-{index}")).collect();
    let request = json!({"environments": environments, "context": {"appName": "a"}});
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_error(status, &body, 400, "ValidationError");
    // Only the first environment was compiled, to count its features.
    assert_eq!(app.state.app.delivery().compiled_environments(), 1);
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("18000 combinations exceeding 15000 limit")),
        "{body}"
    );

    // Within the limit, unknown environments are answered as Unleash answers them: every flag
    // off there, with no strategies.
    let request =
        json!({"environments": ["production", "nowhere", "elsewhere"], "context": {"appName": "a"}});
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Every unknown environment shares one compiled entry: the one above, and production.
    assert_eq!(app.state.app.delivery().compiled_environments(), 2);
    let entry = &body["features"][0]["environments"]["nowhere"][0];
    assert_eq!(entry["isEnabledInCurrentEnvironment"], json!(false), "{entry}");
    assert_eq!(entry["strategies"]["data"], json!([]));
    assert_eq!(
        body["features"][0]["environments"]["production"][0]["isEnabled"],
        json!(true)
    );
}

async fn create_user<S, B>(service: &S, body: Value) -> (StatusCode, Value)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    send(service, post("/api/admin/user-admin", ADMIN, body)).await
}

#[actix_web::test]
async fn issue_7_a_username_can_never_be_an_email() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = create_user(
        &service,
        json!({"username": "future-admin@example.com", "rootRole": 3}),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(path_of(&body), "/username");
}

#[actix_web::test]
async fn issue_7_login_resolves_an_email_before_a_username() {
    let app = TestApp::new();
    // A username that is someone's email, as an older release could store it.
    let squatter = NewUser {
        name: None,
        username: Some("owner@example.com".into()),
        email: None,
        password_hash: None,
        root_role: flag_store::models::RootRole::Viewer,
        created_at: chrono::Utc::now().naive_utc(),
    };
    let mut conn = app.store.connection().unwrap_or_else(|error| panic!("{error}"));
    flag_store::queries::users::create(&mut conn, &squatter, &flag_store::models::Actor::system())
        .unwrap_or_else(|error| panic!("{error}"));
    drop(conn);
    let service = app.service().await;
    let password = "Own3r-Passw0rd!";
    let (status, body) = create_user(
        &service,
        json!({"email": "Owner@Example.com", "rootRole": 1, "password": password}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    crate::common::login(&service, "owner@example.com", password).await;
}

fn login_from(address: [u8; 4], username: &str) -> TestRequest {
    TestRequest::post()
        .uri("/auth/simple/login")
        .peer_addr((address, 5000).into())
        .set_json(json!({"username": username, "password": "Wr0ng-Passw0rd!"}))
}

#[actix_web::test]
async fn issue_7_an_unknown_user_costs_a_password_verification() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, login_from([192, 0, 2, 1], "nobody@example.com")).await;
    assert_error(status, &body, 401, "PasswordMismatch");
    let metrics = app.state.metrics.render(&app.state.app);
    assert!(metrics.contains("password_verifications_total 1"), "{metrics}");
}

#[actix_web::test]
async fn issue_7_logins_are_limited_per_address() {
    let app = TestApp::with_settings(Settings {
        logins_per_minute: 10,
        ..Settings::default()
    });
    let service = app.service().await;
    for _ in 0..10 {
        let (status, body) = send(&service, login_from([192, 0, 2, 1], "nobody@example.com")).await;
        assert_error(status, &body, 401, "PasswordMismatch");
    }
    let response = actix_web::test::call_service(
        &service,
        login_from([192, 0, 2, 1], "nobody@example.com").to_request(),
    )
    .await;
    crate::common::assert_retry_after(&response);
    let body: Value = actix_web::test::read_body_json(response).await;
    assert_error(StatusCode::TOO_MANY_REQUESTS, &body, 429, "TooManyRequestsError");
    // Another address is counted on its own.
    let (status, _) = send(&service, login_from([192, 0, 2, 2], "nobody@example.com")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn issue_7_segment_constraints_are_validated_like_strategy_constraints() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let strategies = "/api/admin/projects/default/features/f/environments/development/strategies";
    for constraint in [
        json!({"contextName": "userId", "operator": "EVAL", "values": ["1"]}),
        json!({"contextName": "userId", "operator": "REGEX", "value": "(unclosed"}),
        json!({"contextName": "currentTime", "operator": "DATE_AFTER", "value": "garbage"}),
        json!({"contextName": "n", "operator": "NUM_GT", "value": "NaN"}),
        json!({"contextName": "currentTime", "operator": "DATE_AFTER", "value": "+10000-01-01T00:00:00Z"}),
        json!({"contextName": "currentTime", "operator": "DATE_BEFORE", "value": "2016-12-31T23:59:60Z"}),
    ] {
        let ok = json!({"contextName": "userId", "operator": "IN", "values": ["1"]});
        let segment = json!({"name": "s", "constraints": [ok, constraint]});
        let (status, segment_error) = send(&service, post("/api/admin/segments", ADMIN, segment)).await;
        assert_error(status, &segment_error, 400, "ValidationError");
        assert_eq!(path_of(&segment_error), "/constraints/1", "{constraint}");
        let strategy = json!({"name": "default", "constraints": [ok, constraint]});
        let (status, strategy_error) = send(&service, post(strategies, ADMIN, strategy)).await;
        assert_error(status, &strategy_error, 400, "ValidationError");
        assert_eq!(
            segment_error["message"], strategy_error["message"],
            "{constraint}"
        );
    }
    let (status, segments) = send(&service, get("/api/admin/segments", ADMIN)).await;
    assert_eq!(
        (status, segments["segments"].clone()),
        (StatusCode::OK, json!([]))
    );
}

#[actix_web::test]
async fn issue_7_dates_javascript_cannot_read_are_refused_everywhere() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default();
    for date in ["+10000-01-01T00:00:00Z", "2016-12-31T23:59:60Z"] {
        let attempts = [
            post(
                "/api/admin/invite-link/tokens",
                ADMIN,
                json!({"name": "team", "expiresAt": date}),
            ),
            put(
                &format!("/api/admin/invite-link/tokens/{secret}"),
                ADMIN,
                json!({"expiresAt": date}),
            ),
            post(
                "/api/admin/api-tokens",
                ADMIN,
                json!({"tokenName": "t", "type": "client", "expiresAt": date}),
            ),
            post(
                "/api/admin/playground",
                ADMIN,
                json!({"environment": "development", "context": {"appName": "a", "currentTime": date}}),
            ),
            post(
                "/api/admin/playground/advanced",
                ADMIN,
                json!({"environments": ["development"], "context": {"appName": "a", "currentTime": date}}),
            ),
            // The advanced playground lifts properties beside the top-level fields.
            post(
                "/api/admin/playground/advanced",
                ADMIN,
                json!({"environments": ["development"],
                       "context": {"appName": "a", "properties": {"currentTime": format!("2024-01-01T00:00:00Z,{date}")}}}),
            ),
        ];
        for request in attempts {
            let (status, body) = send(&service, request).await;
            assert_error(status, &body, 400, "ValidationError");
            assert!(
                body["message"].as_str().is_some_and(|m| m.contains("date")),
                "{date}: {body}"
            );
        }
    }
}

#[actix_web::test]
async fn issue_7_signup_fields_are_limited() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let signup = format!("/invite/{}/signup", token["secret"].as_str().unwrap_or_default());
    let password = "Str0ng!Passw0rd";
    let long = "n".repeat(256);
    let long_email = format!("{}@example.com", "e".repeat(250));
    for (body, path) in [
        (
            json!({"name": long, "email": "a@example.com", "password": password}),
            "/name",
        ),
        (
            json!({"name": "Nul\u{0}", "email": "a@example.com", "password": password}),
            "/name",
        ),
        (
            json!({"name": "A", "email": long_email, "password": password}),
            "/email",
        ),
        (
            json!({"name": "A", "email": "a@example.com", "username": "tab\tname", "password": password}),
            "/username",
        ),
        (
            json!({"name": "A", "email": "a@example.com", "username": "future-admin@example.com", "password": password}),
            "/username",
        ),
    ] {
        let request = TestRequest::post().uri(&signup).set_json(body.clone());
        let (status, answer) = send(&service, request).await;
        assert_error(status, &answer, 400, "ValidationError");
        assert_eq!(path_of(&answer), path, "{body}");
    }
    // 255 characters are accepted.
    let request = TestRequest::post()
        .uri(&signup)
        .set_json(json!({"name": "n".repeat(255), "email": "a@example.com", "password": password}));
    let (status, answer) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

#[actix_web::test]
async fn issue_7_updating_a_user_changes_every_field_it_names_and_no_other() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, user) = create_user(&service, json!({"email": "old@example.com", "rootRole": 3})).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    let path = format!("/api/admin/user-admin/{}", user["id"]);
    let (status, updated) = send(
        &service,
        put(
            &path,
            ADMIN,
            json!({"email": "New@Example.com", "name": "New Name", "rootRole": "Editor"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(
        (
            updated["email"].clone(),
            updated["name"].clone(),
            updated["rootRole"].clone()
        ),
        (json!("new@example.com"), json!("New Name"), json!(2))
    );
    // Unleash's `updateUserSchema` has no `username`: the field is ignored, as Unleash ignores
    // it, and changes nothing.
    let (status, body) = send(&service, put(&path, ADMIN, json!({"username": "renamed"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, users) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    let stored = users["users"]
        .as_array()
        .and_then(|users| users.iter().find(|listed| listed["id"] == user["id"]).cloned())
        .unwrap_or_default();
    assert_eq!(stored["email"], json!("new@example.com"));
    assert_eq!(stored.get("username"), None, "{stored}");
}

#[actix_web::test]
async fn issue_7_the_session_cookie_is_secure_when_configured() {
    for secure in [true, false] {
        let app = TestApp::with_settings(Settings {
            secure_cookies: secure,
            ..Settings::default()
        });
        let service = app.service().await;
        let password = "Adm1n-Passw0rd!";
        let (status, body) = create_user(
            &service,
            json!({"email": "admin@example.com", "rootRole": 1, "password": password}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let cookie = crate::common::login(&service, "admin@example.com", password).await;
        assert_eq!(
            cookie.secure(),
            Some(secure).filter(|secure| *secure),
            "secure {secure}"
        );
        assert_eq!(cookie.http_only(), Some(true));
    }
}

#[actix_web::test]
async fn issue_7_head_is_answered_like_get() {
    let app = TestApp::new();
    let service = app.service().await;
    for (path, token) in [
        ("/health", None),
        ("/api/admin/projects", Some(ADMIN)),
        ("/api/admin/projects", None),
    ] {
        let mut request = TestRequest::default()
            .method(actix_web::http::Method::HEAD)
            .uri(path);
        let mut get_request = TestRequest::get().uri(path);
        if let Some(token) = token {
            request = request.insert_header(("Authorization", token));
            get_request = get_request.insert_header(("Authorization", token));
        }
        let head = actix_web::test::call_service(&service, request.to_request()).await;
        let get = actix_web::test::call_service(&service, get_request.to_request()).await;
        assert_eq!(head.status(), get.status(), "{path}");
        assert_ne!(head.status(), StatusCode::METHOD_NOT_ALLOWED, "{path}");
    }
    // A route without GET still refuses HEAD.
    let request = TestRequest::default()
        .method(actix_web::http::Method::HEAD)
        .uri("/api/admin/playground");
    let (status, body) = send(&service, request).await;
    assert_error(status, &body, 405, "MethodNotAllowedError");
}

/// The deprecated playground's answer is streamed once it is longer than one part (about
/// 256 KiB): it comes whole, in order, and each flag as the advanced playground explains it. An
/// answer that fits in one part is sent with its length.
#[actix_web::test]
async fn a_long_deprecated_playground_answer_is_streamed_whole() -> Result<(), Box<dyn std::error::Error>> {
    use actix_web::body::{BodySize, MessageBody as _};

    // Few flags, each explained at length (its constraint's values are repeated in the answer),
    // so that the import stays short: on PostgreSQL it holds the write lock other tests wait on.
    const FLAGS: usize = 120;
    let app = TestApp::new();
    let values: Vec<String> = (0..60)
        .map(|index| format!("plan-{index:02}-{}", "x".repeat(32)))
        .collect();
    let features: Vec<Value> = (0..FLAGS)
        .map(|index| {
            json!({"name": format!("flag-{index:04}"), "enabled": true, "strategies": [
                {"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "g"},
                 "constraints": [{"contextName": "plan", "operator": "IN", "values": values}]}]})
        })
        .collect();
    let document: flag_eval::ClientFeatures =
        serde_json::from_value(json!({"version": 2, "features": features}))?;
    app.import("development", &document)?;
    let service = app.service().await;
    let context = json!({"appName": "a", "userId": "7", "properties": {"plan": values[3]}});

    let deprecated = || {
        post(
            "/api/admin/playground",
            ADMIN,
            json!({"environment": "development", "context": context}),
        )
        .to_request()
    };
    let response = actix_web::test::call_service(&service, deprecated()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.response().body().size(),
        BodySize::Stream,
        "a long answer is streamed"
    );
    let bytes = actix_web::test::read_body(response).await;
    assert!(
        bytes.len() > 256 * 1024,
        "the answer spans several parts: {} bytes",
        bytes.len()
    );
    let answer: Value = serde_json::from_slice(&bytes)?;
    assert_eq!(answer["input"]["context"], context);
    let played = answer["features"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = played
        .iter()
        .filter_map(|feature| feature["name"].as_str())
        .collect();
    let expected: Vec<String> = (0..FLAGS).map(|index| format!("flag-{index:04}")).collect();
    assert_eq!(names, expected);

    let (status, advanced) = send(
        &service,
        post(
            "/api/admin/playground/advanced",
            ADMIN,
            json!({"environments": ["development"], "context": context}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    for (one, all) in played
        .iter()
        .zip(advanced["features"].as_array().into_iter().flatten())
    {
        let entry = &all["environments"]["development"][0];
        assert_eq!(one["isEnabled"], entry["isEnabled"], "{}", one["name"]);
        assert_eq!(one["variant"], entry["variant"], "{}", one["name"]);
    }

    // One flag's answer fits in one part.
    let small = TestApp::new();
    let service = small.service().await;
    seed_feature(&service, "lonely").await;
    let response = actix_web::test::call_service(&service, deprecated()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let size = response.response().body().size();
    let bytes = actix_web::test::read_body(response).await;
    assert_eq!(
        size,
        BodySize::Sized(bytes.len() as u64),
        "a short answer is sent with its length"
    );
    let answer: Value = serde_json::from_slice(&bytes)?;
    assert_eq!(answer["features"][0]["name"], "lonely");
    Ok(())
}
