//! The real app on a temporary database: statuses and bodies of every route, error paths first.

use crate::common::{ADMIN, PRODUCTION_ADMIN, TestApp, assert_error, get, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test;
use flag_store::models::NewApiToken;
use flag_store::queries;
use serde_json::{Value, json};

#[actix_web::test]
async fn health_and_ready_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, test::TestRequest::get().uri("/health")).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"health": "GOOD"})));
    let (status, _) = send(&service, test::TestRequest::get().uri("/ready")).await;
    assert_eq!(status, StatusCode::OK);
    // Once shutdown begins, readiness fails first so traffic drains away.
    app.state
        .shutting_down
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (status, body) = send(&service, test::TestRequest::get().uri("/ready")).await;
    assert_error(status, &body, 503, "ServiceUnavailableError");
}

#[actix_web::test]
async fn internal_failures_hide_their_cause() -> Result<(), Box<dyn std::error::Error>> {
    use diesel::connection::SimpleConnection;
    let app = TestApp::new();
    let service = app.service().await;
    app.store.connection()?.batch_execute("DROP TABLE events")?;
    let request = json!({"environment": "development", "context": {"appName": "a"}});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, request)).await;
    assert_error(status, &body, 500, "InternalError");
    assert_eq!(body["message"], "internal error");
    assert!(!body.to_string().contains("events"), "the cause leaked: {body}");
    Ok(())
}

#[actix_web::test]
async fn metrics_are_labelled_by_route_pattern() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = "0123456789abcdef0123456789abcdef";
    send(
        &service,
        test::TestRequest::get().uri(&format!("/invite/{secret}/validate")),
    )
    .await;
    send(
        &service,
        test::TestRequest::get().uri(&format!("/no/such/{secret}")),
    )
    .await;
    let response = test::call_service(
        &service,
        test::TestRequest::get()
            .uri("/internal-backstage/prometheus")
            .to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let text = String::from_utf8_lossy(&test::read_body(response).await).into_owned();
    assert!(
        text.contains("route=\"/invite/{token}/validate\",status=\"400\""),
        "{text}"
    );
    assert!(text.contains("route=\"(unmatched)\""), "{text}");
    assert!(!text.contains(secret), "a path secret reached a metric label");
}

#[actix_web::test]
async fn unknown_routes_and_methods_get_the_envelope() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/nothing-here", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(&service, test::TestRequest::delete().uri("/api/admin/playground")).await;
    assert_error(status, &body, 405, "MethodNotAllowedError");
}

#[actix_web::test]
async fn missing_or_unknown_credentials_are_401() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = json!({"environment": "development", "context": {"appName": "a"}});
    let unauthenticated = test::TestRequest::post()
        .uri("/api/admin/playground")
        .set_json(&body);
    let (status, response) = send(&service, unauthenticated).await;
    assert_error(status, &response, 401, "AuthenticationRequired");
    let (status, response) = send(&service, post("/api/admin/playground", "*:*.wrong", body.clone())).await;
    assert_error(status, &response, 401, "AuthenticationRequired");
    let batch = json!({"variants": [], "environments": ["development"]});
    let unauthenticated = test::TestRequest::put()
        .uri("/api/admin/projects/default/features/f/variants-batch")
        .set_json(&batch);
    let (status, response) = send(&service, unauthenticated).await;
    assert_error(status, &response, 401, "AuthenticationRequired");
    // A Bearer prefix is accepted.
    let bearer = post("/api/admin/playground", &format!("Bearer {ADMIN}"), body);
    assert_eq!(send(&service, bearer).await.0, StatusCode::OK);
}

#[actix_web::test]
async fn client_tokens_are_refused_on_the_admin_api() -> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let client = "default:development.client-secret";
    queries::api_tokens::create(
        &mut *app.store.connection()?,
        &NewApiToken {
            token_name: "sdk".into(),
            secret_hash: flag_admin::runtime::secrets::verifier(client),
            token_type: "client".into(),
            environment: "development".into(),
            projects: "[\"default\"]".into(),
            expires_at: None,
            created_at: chrono::Utc::now().naive_utc(),
        },
        &flag_store::models::Actor::system(),
    )?;
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/playground",
            client,
            json!({"environment": "development", "context": {"appName": "a"}}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
    Ok(())
}

#[actix_web::test]
async fn bad_bodies_get_4xx_with_the_envelope() {
    let app = TestApp::new();
    let service = app.service().await;
    let malformed = test::TestRequest::post()
        .uri("/api/admin/playground")
        .insert_header(("Authorization", ADMIN))
        .insert_header(("Content-Type", "application/json"))
        .set_payload("{\"environment\": ");
    let (status, body) = send(&service, malformed).await;
    assert_error(status, &body, 400, "ValidationError");

    let wrong_type = test::TestRequest::post()
        .uri("/api/admin/playground")
        .insert_header(("Authorization", ADMIN))
        .insert_header(("Content-Type", "text/plain"))
        .set_payload("hello");
    let (status, body) = send(&service, wrong_type).await;
    assert_error(status, &body, 415, "ContentTypeError");

    let huge = format!("{{\"environment\": \"{}\"}}", "x".repeat(2 << 20));
    let too_large = test::TestRequest::post()
        .uri("/api/admin/playground")
        .insert_header(("Authorization", ADMIN))
        .insert_header(("Content-Type", "application/json"))
        .set_payload(huge);
    let (status, body) = send(&service, too_large).await;
    assert_error(status, &body, 413, "PayloadTooLarge");

    for (body, path) in [
        (json!({"context": {"appName": "a"}}), "/environment"),
        (json!({"environment": "development"}), "/context"),
        (
            json!({"environment": "development", "context": {}}),
            "/context/appName",
        ),
        (
            json!({"environment": "development", "context": {"appName": ""}}),
            "/context/appName",
        ),
        (
            json!({"environment": "development", "context": {"appName": "a", "currentTime": "yesterday"}}),
            "/context/currentTime",
        ),
        (
            json!({"environment": "development", "projects": "all", "context": {"appName": "a"}}),
            "/projects",
        ),
    ] {
        let (status, response) = send(&service, post("/api/admin/playground", ADMIN, body)).await;
        assert_error(status, &response, 400, "ValidationError");
        assert_eq!(response["details"][0]["path"], json!(path), "{response}");
    }
}

#[actix_web::test]
async fn playground_explains_each_feature() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    let (status, strategy) = send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout/environments/development/strategies",
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": {"rollout": "100"},
                   "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{strategy}");

    let request = json!({"environment": "development", "context": {"appName": "web", "userId": 7, "properties": {"plan": "free"}}});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The input is echoed after coercion.
    assert_eq!(body["input"]["context"]["userId"], json!("7"));
    let feature = &body["features"][0];
    let keys: Vec<&String> = feature
        .as_object()
        .map(|map| map.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "isEnabled",
            "isEnabledInCurrentEnvironment",
            "hasUnsatisfiedDependency",
            "variant",
            "variants",
            "name",
            "projectId",
            "strategies"
        ]
    );
    assert_eq!(feature["name"], "checkout");
    assert_eq!(feature["isEnabled"], true);
    assert_eq!(feature["strategies"]["result"], true);
    let data = &feature["strategies"]["data"];
    assert_eq!(
        data[0]["result"],
        json!({"enabled": true, "evaluationStatus": "complete"})
    );
    assert_eq!(
        data[1]["result"],
        json!({"enabled": false, "evaluationStatus": "complete"})
    );
    assert_eq!(data[1]["constraints"][0]["result"], false);
    assert_eq!(data[1]["parameters"]["groupId"], "checkout");
    let edit = data[0]["links"]["edit"].as_str().unwrap_or_default();
    assert!(
        edit.starts_with(
            "/projects/default/features/checkout/strategies/edit?environmentId=development&strategyId="
        ),
        "{edit}"
    );
    assert_eq!(
        feature["variant"],
        json!({"feature_enabled": true, "featureEnabled": true, "name": "disabled", "enabled": false})
    );

    // Non-string custom context values are dropped, without a warnings field.
    let odd =
        json!({"environment": "development", "context": {"appName": "a", "tenant": {"x": 1}, "plan": 3}});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, odd)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.get("warnings").is_none());

    // Unknown projects match nothing; `"*"` matches everything.
    let none = json!({"environment": "development", "projects": ["nope"], "context": {"appName": "a"}});
    assert_eq!(
        send(&service, post("/api/admin/playground", ADMIN, none)).await.1["features"],
        json!([])
    );
}

#[actix_web::test]
async fn advanced_playground_expands_contexts_and_warns() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "a").await;
    seed_feature(&service, "b").await;
    let request = json!({
        "environments": ["development", "production"],
        "projects": "*",
        "context": {"appName": "web", "userId": "1,2", "tenant": {"x": 1}, "properties": {"plan": "pro,free"}}
    });
    let (status, body) = send(
        &service,
        post("/api/admin/playground/advanced", ADMIN, request.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["input"], request);
    assert_eq!(body["warnings"], json!({"invalidContextProperties": ["tenant"]}));
    let features = body["features"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        features.iter().map(|f| f["name"].clone()).collect::<Vec<_>>(),
        [json!("a"), json!("b")]
    );
    let development = features[0]["environments"]["development"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(development.len(), 4);
    assert_eq!(
        development[0]["context"],
        json!({"userId": "1", "plan": "pro", "appName": "web"})
    );
    assert_eq!(
        development[1]["context"],
        json!({"userId": "1", "plan": "free", "appName": "web"})
    );
    assert_eq!(development[0]["environment"], "development");
    let keys: Vec<String> = development[0]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "isEnabled",
            "isEnabledInCurrentEnvironment",
            "hasUnsatisfiedDependency",
            "variant",
            "context",
            "variants",
            "name",
            "environment",
            "projectId",
            "strategies"
        ]
    );
    assert_eq!(
        features[0]["environments"]["production"].as_array().map(Vec::len),
        Some(4)
    );

    // No warnings key when nothing was dropped.
    let clean = json!({"environments": ["development"], "context": {"appName": "web"}});
    let (_, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, clean)).await;
    assert!(body.get("warnings").is_none(), "{body}");

    for (request, path) in [
        (json!({"context": {"appName": "a"}}), "/environments"),
        (
            json!({"environments": [], "context": {"appName": "a"}}),
            "/environments",
        ),
        (
            json!({"environments": ["bad env"], "context": {"appName": "a"}}),
            "/environments/0",
        ),
        (
            json!({"environments": ["development"], "context": {"appName": "a", "currentTime": "2024-01-01T00:00:00Z,2024-01-02T00:00:00Z"}}),
            "/context/currentTime",
        ),
    ] {
        let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
        assert_error(status, &body, 400, "ValidationError");
        assert_eq!(body["details"][0]["path"], json!(path));
    }
}

#[actix_web::test]
async fn advanced_playground_rejects_too_many_combinations() {
    let app = TestApp::with_settings(flag_admin::Settings {
        combination_limit: 10,
        ..flag_admin::Settings::default()
    });
    let service = app.service().await;
    seed_feature(&service, "a").await;
    let request = json!({"environments": ["development", "production"], "context": {"appName": "web", "userId": "1,2,3,4,5,6"}});
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_error(status, &body, 400, "ValidationError");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("12 combinations exceeding 10 limit"),
        "{message}"
    );
}

fn variant(name: &str, weight: Value) -> Value {
    json!({"name": name, "weight": weight})
}

#[actix_web::test]
async fn variants_batch_writes_every_environment_and_echoes_the_request()
-> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "colors").await;
    let request = json!({
        "variants": [
            variant("red", json!(1)),
            {"name": "blue", "weight": "500", "stickiness": "userId", "payload": {"type": "json", "value": "{\"a\":1}"}},
            {"name": "Green", "weight": 100, "weightType": "fix"}
        ],
        "environments": ["development", "production", "production"]
    });
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/colors/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["version"], 1);
    let variants = body["variants"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        variants.iter().map(|v| v["weight"].clone()).collect::<Vec<_>>(),
        [json!(450), json!(450), json!(100)]
    );
    assert_eq!(
        variants[0],
        json!({"weightType": "variable", "stickiness": "default", "name": "red", "weight": 450})
    );
    assert_eq!(variants[1]["stickiness"], "userId");
    let keys: Vec<String> = variants[1]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["weightType", "stickiness", "name", "weight", "payload"]);

    for environment in ["development", "production"] {
        let (status, stored) = send(
            &service,
            get(
                &format!("/api/admin/projects/default/features/colors/environments/{environment}/variants"),
                ADMIN,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let names: Vec<Value> = stored["variants"]
            .as_array()
            .map(|v| v.iter().map(|v| v["name"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(
            names,
            [json!("blue"), json!("Green"), json!("red")],
            "stored sorted by name"
        );
    }
    let events = queries::events::for_feature(&mut *app.store.connection()?, "colors", "production")?;
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event_type == "feature-environment-variants-updated")
            .count(),
        1
    );

    // The playground now resolves a variant.
    let (_, played) = send(
        &service,
        post(
            "/api/admin/playground",
            ADMIN,
            json!({"environment": "production", "context": {"appName": "a", "userId": "1"}}),
        ),
    )
    .await;
    assert_eq!(played["features"][0]["variant"]["enabled"], true, "{played}");
    assert_eq!(played["features"][0]["variant"]["featureEnabled"], true);
    Ok(())
}

#[actix_web::test]
async fn variants_batch_rejects_bad_input() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let path = "/api/admin/projects/default/features/f/variants-batch";
    let cases = [
        (
            json!({"variants": [variant("a", json!(1500))], "environments": ["development"]}),
            "/variants/0/weight",
        ),
        (
            json!({"variants": [{"weight": 1}], "environments": ["development"]}),
            "/variants/0/name",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "color": "red"}], "environments": ["development"]}),
            "/variants/0/color",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "weightType": "most"}], "environments": ["development"]}),
            "/variants/0/weightType",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "xml", "value": "<a/>"}}], "environments": ["development"]}),
            "/variants/0/payload/type",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "number", "value": "ten"}}], "environments": ["development"]}),
            "/variants/0/payload/value",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "json", "value": "123"}}], "environments": ["development"]}),
            "/variants/0/payload/value",
        ),
        (
            json!({"variants": [variant("a", json!(1)), variant("a", json!(1))], "environments": ["development"]}),
            "/variants/1/name",
        ),
        (
            json!({"variants": [variant("a b", json!(1))], "environments": ["development"]}),
            "/variants/0/name",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1001, "weightType": "fix"}], "environments": ["development"]}),
            "/variants/0/weight",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 100, "weightType": "fix"}], "environments": ["development"]}),
            "/variants",
        ),
        (json!({"variants": [variant("a", json!(1))]}), "/environments"),
        (
            json!({"variants": [variant("a", json!(1))], "environments": []}),
            "/environments",
        ),
    ];
    for (request, expected) in cases {
        let (status, body) = send(&service, put(path, ADMIN, request.clone())).await;
        assert_error(status, &body, 400, "ValidationError");
        assert_eq!(body["details"][0]["path"], json!(expected), "{request} → {body}");
    }

    let ok = json!({"variants": [variant("a", json!(1))], "environments": ["development"]});
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/other/features/f/variants-batch",
            ADMIN,
            ok.clone(),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/missing/variants-batch",
            ADMIN,
            ok,
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let unknown_env = json!({"variants": [], "environments": ["staging"]});
    let (status, body) = send(&service, put(path, ADMIN, unknown_env)).await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn an_environment_scoped_token_cannot_write_other_environments() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let path = "/api/admin/projects/default/features/f/variants-batch";
    let request =
        json!({"variants": [variant("a", json!(1))], "environments": ["production", "development"]});
    let (status, body) = send(&service, put(path, PRODUCTION_ADMIN, request)).await;
    assert_error(status, &body, 403, "NoAccessError");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS") && message.contains("\"development\""),
        "{message}"
    );
    let production_only = json!({"variants": [variant("a", json!(1))], "environments": ["production"]});
    assert_eq!(
        send(&service, put(path, PRODUCTION_ADMIN, production_only))
            .await
            .0,
        StatusCode::OK
    );
}
