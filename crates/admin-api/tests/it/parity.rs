//! Where the server answers as Unleash 8.2 does, one test per difference a recording of the real
//! server found: strategy types, stored shapes, switching on, token types, seeded tokens, the
//! signup answer, legal values, environments, invite-link nulls and dependencies.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, SDK, TestApp, assert_error, create_invite, get, played_feature, post, put, seed_feature, send,
};

const FEATURES: &str = "/api/admin/projects/default/features";

fn strategies(feature: &str, environment: &str) -> String {
    format!("{FEATURES}/{feature}/environments/{environment}/strategies")
}

/// The entry of the array `list` whose `name` is `name` (`Null` when there is none).
fn named(list: &Value, name: &str) -> Value {
    list.as_array()
        .and_then(|entries| entries.iter().find(|entry| entry["name"] == name))
        .cloned()
        .unwrap_or_default()
}

fn object_keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .map(|fields| fields.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[actix_web::test]
async fn a_fresh_install_builds_in_unleash_8s_four_strategy_types() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/strategies", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let mut names: Vec<&str> = body["strategies"]
        .as_array()
        .map(|types| types.iter().filter_map(|kind| kind["name"].as_str()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "applicationHostname",
            "default",
            "flexibleRollout",
            "remoteAddress"
        ]
    );

    seed_feature(&service, "f").await;
    let staff = json!({"name": "userWithId", "parameters": {"userIds": "7"}});
    let (status, body) = send(
        &service,
        post(&strategies("f", "development"), ADMIN, staff.clone()),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("userWithId")),
        "{body}"
    );

    let definition = json!({"name": "userWithId", "parameters": [{"name": "userIds", "type": "list"}]});
    let (status, body) = send(&service, post("/api/admin/strategies", ADMIN, definition)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(&service, post(&strategies("f", "development"), ADMIN, staff)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The engine evaluates it as the SDKs do.
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "userId": "7"}),
        "f",
    )
    .await;
    assert_eq!(played["isEnabled"], true);
}

#[actix_web::test]
async fn constraints_and_client_documents_read_back_as_stored() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    let (status, _) = send(&service, post(FEATURES, ADMIN, json!({"name": "child"}))).await;
    assert_eq!(status, StatusCode::CREATED);
    let bare = json!({"contextName": "userId", "operator": "IN", "values": ["1"]});
    let explicit = json!({"contextName": "userId", "operator": "STR_CONTAINS", "values": ["x"],
        "caseInsensitive": false, "inverted": false});
    let strategy = json!({"name": "default", "constraints": [bare, explicit]});
    let (status, added) = send(
        &service,
        post(&strategies("child", "development"), ADMIN, strategy),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    let dependency = json!({"feature": "parent"});
    let (status, body) = send(
        &service,
        post(&format!("{FEATURES}/child/dependencies"), ADMIN, dependency),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(
        &service,
        post(
            &format!("{FEATURES}/child/environments/development/on"),
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let stored_keys = [
        vec!["contextName", "operator", "values"],
        vec!["contextName", "operator", "values", "caseInsensitive", "inverted"],
    ];
    let check = |constraints: &Value, place: &str| {
        for (index, keys) in stored_keys.iter().enumerate() {
            let mut actual = object_keys(&constraints[index]);
            let mut expected = keys.clone();
            actual.sort_unstable();
            expected.sort_unstable();
            assert_eq!(actual, expected, "{place}: {}", constraints[index]);
        }
    };
    check(&added["constraints"], "the add answer");
    let (_, feature) = send(&service, get(&format!("{FEATURES}/child"), ADMIN)).await;
    let development = named(&feature["environments"], "development");
    check(&development["strategies"][0]["constraints"], "the feature read");

    let (status, document) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    let child = named(&document["features"], "child");
    check(&child["strategies"][0]["constraints"], "the client API");
    assert_eq!(
        child["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": []}]),
        "Unleash writes `variants: []` for an enabled parent when none were named"
    );
    // On a disabled parent, Unleash leaves `variants` out.
    let (status, answer) = send(
        &service,
        post(
            &format!("{FEATURES}/child/dependencies"),
            ADMIN,
            json!({"feature": "parent", "enabled": false}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (_, disabled) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(
        named(&disabled["features"], "child")["dependencies"],
        json!([{"feature": "parent", "enabled": false}])
    );
    let mut query = object_keys(&document["query"]);
    query.sort_unstable();
    assert_eq!(
        query,
        ["environment", "inlineSegmentConstraints"],
        "{}",
        document["query"]
    );

    // The playground puts Unleash's default `inverted` first, and `caseInsensitive` only when
    // it was stored.
    let played = played_feature(&service, "development", json!({"appName": "a"}), "child").await;
    let constraints = &played["strategies"]["data"][0]["constraints"];
    assert_eq!(object_keys(&constraints[0])[0], "inverted", "{constraints}");
    assert!(constraints[0].get("caseInsensitive").is_none(), "{constraints}");
    assert_eq!(constraints[1]["caseInsensitive"], false, "{constraints}");
}

#[actix_web::test]
async fn switching_on_without_a_strategy_adds_the_default_rollout() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(&service, post(FEATURES, ADMIN, json!({"name": "bare"}))).await;
    assert_eq!(status, StatusCode::CREATED);
    // The first switch adds the rollout; the second finds it and adds nothing more.
    for _ in 0..2 {
        let (status, _) = send(
            &service,
            post(
                &format!("{FEATURES}/bare/environments/production/on"),
                ADMIN,
                json!({}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let (_, feature) = send(&service, get(&format!("{FEATURES}/bare"), ADMIN)).await;
        let environments = feature["environments"].as_array().cloned().unwrap_or_default();
        assert!(!environments.is_empty(), "{feature}");
        for environment in environments {
            let strategies = environment["strategies"].as_array().cloned().unwrap_or_default();
            if environment["name"] == "production" {
                assert_eq!(environment["enabled"], true);
                assert_eq!(strategies.len(), 1, "{environment}");
                assert_eq!(strategies[0]["name"], "flexibleRollout");
                assert_eq!(
                    strategies[0]["parameters"],
                    json!({"groupId": "bare", "rollout": "100", "stickiness": "default"})
                );
            } else {
                assert!(
                    strategies.is_empty(),
                    "only the environment switched on: {environment}"
                );
            }
        }
    }
}

#[actix_web::test]
async fn the_client_api_takes_client_and_backend_tokens_only() -> Result<(), flag_store::StoreError> {
    let app = TestApp::new();
    app.store_token("*:development.client-one", "client", "development", &["*"])?;
    app.store_token("*:development.frontend-one", "frontend", "development", &["*"])?;
    let service = app.service().await;
    for (token, status) in [
        (SDK, 200),
        ("*:development.client-one", 200),
        (ADMIN, 403),
        ("*:development.frontend-one", 403),
    ] {
        for path in ["/api/client/features", "/api/client/features/missing"] {
            let (actual, body) = send(&service, get(path, token)).await;
            if status == 403 {
                assert_error(actual, &body, 403, "NoAccessError");
                assert!(
                    body["message"]
                        .as_str()
                        .is_some_and(|message| message.contains("expected a different token type")),
                    "{body}"
                );
            } else {
                assert_ne!(actual, StatusCode::FORBIDDEN, "{token} on {path}: {body}");
                assert_ne!(actual, StatusCode::UNAUTHORIZED, "{token} on {path}: {body}");
            }
        }
    }
    Ok(())
}

#[actix_web::test]
async fn stored_variants_read_back_with_default_stickiness() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let batch = json!({"variants": [{"name": "a", "weight": 500, "weightType": "variable"},
        {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "userId"}],
        "environments": ["development"]});
    let (status, body) = send(
        &service,
        put(&format!("{FEATURES}/f/variants-batch"), ADMIN, batch),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, read) = send(
        &service,
        get(&format!("{FEATURES}/f/environments/development/variants"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["variants"][0]["stickiness"], "default", "{read}");
    assert_eq!(read["variants"][1]["stickiness"], "userId", "{read}");
}

#[actix_web::test]
async fn seeded_admin_tokens_are_named_admin_and_lists_show_only_public_parts() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, segment) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "s", "constraints": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    assert_eq!(segment["createdBy"], "admin");

    let (status, created) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "web", "type": "client", "environment": "production", "projects": ["default"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    assert!(
        secret.starts_with("default:production.") && secret.len() > 30,
        "{secret}"
    );

    let (_, listed) = send(&service, get("/api/admin/api-tokens", ADMIN)).await;
    let tokens = listed["tokens"].as_array().cloned().unwrap_or_default();
    let admin = tokens
        .iter()
        .find(|token| token["secret"] == "*:*.***")
        .cloned()
        .unwrap_or_default();
    assert_eq!(admin["tokenName"], "admin", "{listed}");
    // Unleash 8 lists no `username` (nor `id`): its schema allows no key but its own.
    assert_eq!(admin.get("username"), None, "{listed}");
    let web = tokens
        .iter()
        .find(|token| token["tokenName"] == "web")
        .cloned()
        .unwrap_or_default();
    assert_eq!(web["secret"], "default:production.***", "{listed}");
    assert!(
        !listed.to_string().contains(&secret),
        "the list never shows a whole secret"
    );
}

#[actix_web::test]
async fn the_signup_answer_carries_unleashs_null_user_fields() {
    let app = TestApp::new();
    let service = app.service().await;
    let invite = create_invite(&service).await;
    let secret = invite["secret"].as_str().unwrap_or_default();
    let request = actix_web::test::TestRequest::post()
        .uri(&format!("/invite/{secret}/signup"))
        .set_json(json!({"email": "new@example.com", "name": "New", "password": "Correct-Horse-9"}));
    let (status, user) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{user}");
    for field in ["seatType", "companyRole", "productUpdatesEmailConsent", "scimId"] {
        assert_eq!(user.get(field), Some(&Value::Null), "{field}: {user}");
    }
    let keys = object_keys(&user);
    let at = |key: &str| keys.iter().position(|name| *name == key);
    assert!(
        at("accountType") < at("seatType") && at("productUpdatesEmailConsent") < at("rootRole"),
        "{keys:?}"
    );
}

#[actix_web::test]
async fn legal_values_hold_for_segment_and_strategy_constraints() {
    let app = TestApp::new();
    let service = app.service().await;
    let field = json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]});
    let (status, body) = send(&service, post("/api/admin/context", ADMIN, field)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    seed_feature(&service, "f").await;
    let outside = json!([{"contextName": "region", "operator": "IN", "values": ["eu", "mars"]}]);
    let inside = json!([{"contextName": "region", "operator": "IN", "values": ["eu", "us"]}]);

    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "bad", "constraints": outside}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("mars")),
        "{body}"
    );
    let (status, body) = send(
        &service,
        post(
            &strategies("f", "development"),
            ADMIN,
            json!({"name": "default", "constraints": outside}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "good", "constraints": inside}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, segments) = send(&service, get("/api/admin/segments", ADMIN)).await;
    assert_eq!(
        segments["segments"].as_array().map(Vec::len),
        Some(1),
        "no bad segment was kept"
    );
}

#[actix_web::test]
async fn a_strategy_can_go_in_an_environment_the_project_has_not_enabled() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "staging", "type": "test"}),
        ),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    seed_feature(&service, "f").await;
    let (status, body) = send(
        &service,
        post(&strategies("f", "staging"), ADMIN, json!({"name": "default"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let played = played_feature(&service, "staging", json!({"appName": "a"}), "f").await;
    assert_eq!(played["strategies"]["data"][0]["name"], "default", "{played}");
    assert_eq!(played["isEnabledInCurrentEnvironment"], false, "{played}");
    // An environment that does not exist is still a 404.
    let (status, body) = send(
        &service,
        post(&strategies("f", "nowhere"), ADMIN, json!({"name": "default"})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn null_in_an_invite_link_update_is_refused_naming_the_field() {
    let app = TestApp::new();
    let service = app.service().await;
    let invite = create_invite(&service).await;
    let secret = invite["secret"].as_str().unwrap_or_default();
    let path = format!("/api/admin/invite-link/tokens/{secret}");
    for (body, field) in [
        (json!({"expiresAt": null}), "expiresAt"),
        (json!({"enabled": null}), "enabled"),
        (json!({"expiresAt": null, "enabled": true}), "expiresAt"),
        (
            json!({"enabled": null, "expiresAt": crate::common::next_year()}),
            "enabled",
        ),
    ] {
        let (status, answer) = send(&service, put(&path, ADMIN, body.clone())).await;
        assert_error(status, &answer, 400, "ValidationError");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|message| message.contains(field)),
            "{body}: {answer}"
        );
    }
    let (_, listed) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(
        listed["tokens"][0]["enabled"], true,
        "nothing was written: {listed}"
    );
    assert_eq!(
        listed["tokens"][0]["expiresAt"], invite["expiresAt"],
        "nothing was written: {listed}"
    );
}

#[actix_web::test]
async fn a_disabled_dependency_on_a_parent_false_for_the_context_is_satisfied() {
    // DECISIONS.md: the playground answers what the SDKs answer, not Unleash's playground.
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    let only_seven = json!({"name": "default", "constraints": [
        {"contextName": "userId", "operator": "IN", "values": ["7"]}]});
    let parent_strategies = strategies("parent", "development");
    let (_, feature) = send(&service, get(&format!("{FEATURES}/parent"), ADMIN)).await;
    let existing = named(&feature["environments"], "development")["strategies"][0]["id"].clone();
    let (status, body) = send(
        &service,
        put(
            &format!("{parent_strategies}/{}", existing.as_str().unwrap_or_default()),
            ADMIN,
            only_seven,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/child/dependencies"),
            ADMIN,
            json!({"feature": "parent", "enabled": false}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "userId": "8"}),
        "child",
    )
    .await;
    assert_eq!(played["hasUnsatisfiedDependency"], false, "{played}");
    assert_eq!(played["isEnabled"], true, "{played}");
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "userId": "7"}),
        "child",
    )
    .await;
    assert_eq!(played["hasUnsatisfiedDependency"], true, "{played}");
    assert_eq!(played["isEnabled"], false, "{played}");
}

#[actix_web::test]
async fn removing_or_disabling_the_last_active_strategy_switches_the_feature_off() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    // Disabling the only strategy in development switches development off.
    let (_, feature) = send(&service, get(&format!("{FEATURES}/f"), ADMIN)).await;
    let development = named(&feature["environments"], "development");
    let id = development["strategies"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, body) = send(
        &service,
        put(
            &format!("{}/{id}", strategies("f", "development")),
            ADMIN,
            json!({"name": "default", "disabled": true}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Removing the only strategy in production switches production off.
    let production = named(&feature["environments"], "production");
    let id = production["strategies"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let request = actix_web::test::TestRequest::delete()
        .uri(&format!("{}/{id}", strategies("f", "production")))
        .insert_header(("Authorization", ADMIN));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (_, feature) = send(&service, get(&format!("{FEATURES}/f"), ADMIN)).await;
    assert_eq!(
        named(&feature["environments"], "development")["enabled"],
        false,
        "{feature}"
    );
    assert_eq!(
        named(&feature["environments"], "production")["enabled"],
        false,
        "{feature}"
    );
}

#[test]
fn unleash_init_token_variables_seed_every_token_type() -> Result<(), Box<dyn std::error::Error>> {
    use crate::common::process::{Running, exchange, start_server_with};
    let scratch = flag_store::scratch::Scratch::new()?;
    let (child, port) = start_server_with(
        &scratch,
        &[],
        &[
            ("INIT_ADMIN_API_TOKENS", "*:*.init-admin"),
            ("INIT_BACKEND_API_TOKENS", "default:development.init-backend"),
            // Read only when INIT_BACKEND_API_TOKENS is unset, as Unleash reads it.
            ("INIT_CLIENT_API_TOKENS", "*:development.init-client"),
            ("INIT_FRONTEND_API_TOKENS", "*:development.init-frontend"),
        ],
    )?;
    let _server = Running(child);
    let call = |path: &str, token: &str| {
        exchange(
            port,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    };
    assert_eq!(
        call("/api/client/features", "default:development.init-backend")?.status,
        200
    );
    assert_eq!(
        call("/api/client/features", "*:development.init-client")?.status,
        401
    );
    assert_eq!(
        call("/api/client/features", "*:development.init-frontend")?.status,
        403
    );
    assert_eq!(call("/api/client/features", "*:*.init-admin")?.status, 403);

    let listed: Value = serde_json::from_str(&call("/api/admin/api-tokens", "*:*.init-admin")?.body)?;
    let mut seen: Vec<(String, String, String)> = listed["tokens"]
        .as_array()
        .map(|tokens| {
            tokens
                .iter()
                .map(|token| {
                    let text = |key: &str| token[key].as_str().unwrap_or_default().to_owned();
                    (text("type"), text("secret"), text("tokenName"))
                })
                .collect()
        })
        .unwrap_or_default();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("admin".to_owned(), "*:*.***".to_owned(), "admin".to_owned()),
            // A backend token is listed as a client token, as Unleash lists it.
            (
                "client".to_owned(),
                "default:development.***".to_owned(),
                "admin".to_owned()
            ),
            (
                "frontend".to_owned(),
                "*:development.***".to_owned(),
                "admin".to_owned()
            ),
        ]
    );
    Ok(())
}
