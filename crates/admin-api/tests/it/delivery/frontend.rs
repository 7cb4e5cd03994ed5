//! The frontend API: evaluation for browser SDKs, its `ETag`, its paths and its CORS headers.
//! Which tokens it takes is in `identity::token_scope`.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, played_feature, post, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

const FRONTEND: &str = "*:development.frontend-secret";

/// The test app with a frontend token for development and three flags there: `everyone`,
/// `pro-only` (for plan `pro`, with a variant) and `switched-off`.
pub(crate) async fn app_with_flags() -> TestApp {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    {
        let service = app.service().await;
        seed_feature(&service, "everyone").await;
        seed_feature(&service, "pro-only").await;
        seed_feature(&service, "switched-off").await;
        let base = "/api/admin/projects/default/features";
        let (status, strategies) = send(&service, get(&format!("{base}/pro-only"), ADMIN)).await;
        assert_eq!(status, StatusCode::OK);
        let id = strategies["environments"]
            .as_array()
            .and_then(|environments| {
                environments
                    .iter()
                    .find(|environment| environment["name"] == "development")
            })
            .and_then(|environment| environment["strategies"][0]["id"].as_str())
            .unwrap_or_default()
            .to_owned();
        let strategy = json!({"name": "default", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
                              "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default",
                                            "payload": {"type": "json", "value": "{\"tier\":1}"}}]});
        let (status, body) = send(
            &service,
            crate::common::put(
                &format!("{base}/pro-only/environments/development/strategies/{id}"),
                ADMIN,
                strategy,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _) = send(
            &service,
            post(
                &format!("{base}/switched-off/environments/development/off"),
                ADMIN,
                json!({}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    app
}

fn names(body: &Value) -> Vec<&str> {
    body["toggles"]
        .as_array()
        .map(|toggles| {
            toggles
                .iter()
                .filter_map(|toggle| toggle["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn browsers_get_the_enabled_flags_for_their_context() {
    let app = app_with_flags().await;
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/frontend?userId=7", FRONTEND)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&body), vec!["everyone"]);
    assert_eq!(
        body["toggles"][0],
        json!({"name": "everyone", "enabled": true, "impressionData": false,
               "variant": {"name": "disabled", "enabled": false, "feature_enabled": true, "featureEnabled": true}})
    );
    // `properties[plan]` in the query and `properties.plan` in the body are the same field.
    let (_, body) = send(
        &service,
        get("/api/frontend?userId=7&properties[plan]=pro", FRONTEND),
    )
    .await;
    assert_eq!(names(&body), vec!["everyone", "pro-only"]);
    assert_eq!(
        body["toggles"][1]["variant"],
        json!({"name": "gold", "enabled": true, "payload": {"type": "json", "value": "{\"tier\":1}"},
               "feature_enabled": true, "featureEnabled": true})
    );
    let (status, posted) = send(
        &service,
        post(
            "/api/frontend",
            FRONTEND,
            json!({"context": {"userId": "7", "properties": {"plan": "pro"}}}),
        ),
    )
    .await;
    assert_eq!((status, posted.clone()), (StatusCode::OK, body));
    // Other top-level names are custom fields, as in Unleash.
    let (_, body) = send(&service, get("/api/frontend?plan=pro", FRONTEND)).await;
    assert_eq!(names(&body), vec!["everyone", "pro-only"]);
    // What the playground says, the frontend API says.
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "properties": {"plan": "pro"}}),
        "pro-only",
    )
    .await;
    assert_eq!(played["isEnabled"], true);
    let (status, body) = send(
        &service,
        test::TestRequest::post()
            .uri("/api/frontend")
            .insert_header(("Authorization", FRONTEND))
            .insert_header(("Content-Type", "application/json")),
    )
    .await;
    assert_eq!((status, names(&body)), (StatusCode::OK, vec!["everyone"]));
    let (status, body) = send(
        &service,
        post(
            "/api/frontend",
            FRONTEND,
            json!({"context": {"userId": {"a": 1}}}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn the_etag_answers_304_on_get_only() {
    let app = app_with_flags().await;
    let service = app.service().await;
    let response = test::call_service(&service, get("/api/frontend?userId=7", FRONTEND).to_request()).await;
    let etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    let (status, body) = send(
        &service,
        get("/api/frontend?userId=7", FRONTEND).insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!((status, body), (StatusCode::NOT_MODIFIED, Value::Null));
    // The 304 stands for the 200, so it carries the same caching rule.
    let response = test::call_service(
        &service,
        get("/api/frontend?userId=7", FRONTEND)
            .insert_header(("If-None-Match", etag.as_str()))
            .to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(&response, "Cache-Control").as_deref(), Some("no-cache"));
    let (status, _) = send(
        &service,
        post("/api/frontend", FRONTEND, json!({"context": {"userId": "7"}}))
            .insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // Another context's answer has another tag.
    let (status, _) = send(
        &service,
        get("/api/frontend?properties[plan]=pro", FRONTEND).insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

#[actix_web::test]
async fn paths_under_the_frontend_api_answer_as_unleash_does() {
    let app = app_with_flags().await;
    let service = app.service().await;
    // A trailing slash is the same path, as in Unleash's router.
    let (status, with_slash) = send(&service, get("/api/frontend/?userId=7", FRONTEND)).await;
    let (_, without) = send(&service, get("/api/frontend?userId=7", FRONTEND)).await;
    assert_eq!((status, &with_slash), (StatusCode::OK, &without));
    let (status, _) = send(&service, post("/api/frontend/", FRONTEND, json!({"context": {}}))).await;
    assert_eq!(status, StatusCode::OK);
    // A known path with another method is 404, as an unknown path under it is: Unleash's router
    // knows no 405 there.
    for method in [actix_web::http::Method::PUT, actix_web::http::Method::DELETE] {
        for path in ["/api/frontend", "/api/frontend/", "/api/frontend/client/metrics"] {
            let request = test::TestRequest::default()
                .method(method.clone())
                .uri(path)
                .insert_header(("Authorization", FRONTEND));
            let (status, body) = send(&service, request).await;
            assert_error(status, &body, 404, "NotFoundError");
        }
    }
    // The paths Unleash reserves and does not serve answer 405 `NotImplementedError`.
    for path in [
        "/api/frontend/client/features",
        "/api/frontend/health",
        "/api/frontend/internal-backstage/prometheus",
    ] {
        let (status, body) = send(&service, get(path, FRONTEND)).await;
        assert_error(status, &body, 405, "NotImplementedError");
        assert_eq!(
            body["message"],
            "The frontend API does not support this endpoint."
        );
        let (status, body) = send(&service, get(path, "nope")).await;
        assert_error(status, &body, 401, "AuthenticationRequired");
    }
    for path in [
        "/api/frontend/unknown",
        "/api/frontend/client/unknown",
        "/api/frontend/features/a",
    ] {
        let (status, body) = send(&service, get(path, FRONTEND)).await;
        assert_error(status, &body, 404, "NotFoundError");
    }
}

fn header<B>(response: &actix_web::dev::ServiceResponse<B>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

#[actix_web::test]
async fn cors_follows_the_configured_origins() {
    let app = app_with_flags().await;
    let service = app.service().await;
    // Every origin by default: the origin is named back with credentials allowed, never `*`
    // with credentials, which the CORS specification forbids and browsers refuse.
    let request = get("/api/frontend", FRONTEND).insert_header(("Origin", "https://app.example.com"));
    let response = test::call_service(&service, request.to_request()).await;
    assert_eq!(
        header(&response, "Access-Control-Allow-Origin").as_deref(),
        Some("https://app.example.com")
    );
    assert_eq!(
        header(&response, "Access-Control-Allow-Credentials").as_deref(),
        Some("true")
    );
    let response = test::call_service(&service, get("/api/frontend", FRONTEND).to_request()).await;
    assert_eq!(
        (
            header(&response, "Access-Control-Allow-Origin"),
            header(&response, "Access-Control-Allow-Credentials")
        ),
        (Some("*".to_owned()), None),
        "without an Origin, `*` and no credentials"
    );
    assert_eq!(
        header(&response, "Access-Control-Expose-Headers").as_deref(),
        Some("ETag")
    );
    // The admin and client APIs send none.
    let response = test::call_service(
        &service,
        get("/api/client/features", SDK)
            .insert_header(("Origin", "https://app.example.com"))
            .to_request(),
    )
    .await;
    assert_eq!(header(&response, "Access-Control-Allow-Origin"), None);

    let (status, body) = send(
        &service,
        post(
            "/api/admin/ui-config/cors",
            ADMIN,
            json!({"frontendApiOrigins": ["https://app.example.com"]}),
        ),
    )
    .await;
    assert_eq!((status, body), (StatusCode::NO_CONTENT, Value::Null));
    let (_, config) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(config["frontendApiOrigins"], json!(["https://app.example.com"]));

    for (origin, allowed) in [
        ("https://app.example.com", true),
        ("https://evil.example.com", false),
    ] {
        let request = get("/api/frontend", FRONTEND).insert_header(("Origin", origin));
        let response = test::call_service(&service, request.to_request()).await;
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            header(&response, "Access-Control-Allow-Origin").as_deref(),
            allowed.then_some(origin)
        );
    }
    // Refusals carry the CORS headers too, so a browser can read why it was refused.
    let request = actix_web::test::TestRequest::get()
        .uri("/api/frontend")
        .insert_header(("Origin", "https://app.example.com"));
    let response = test::call_service(&service, request.to_request()).await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        header(&response, "Access-Control-Allow-Origin").as_deref(),
        Some("https://app.example.com")
    );
    // A preflight needs no token.
    let preflight = test::TestRequest::default()
        .method(actix_web::http::Method::OPTIONS)
        .uri("/api/frontend")
        .insert_header(("Origin", "https://app.example.com"))
        .insert_header(("Access-Control-Request-Method", "GET"))
        .insert_header(("Access-Control-Request-Headers", "authorization,if-none-match"));
    let response = test::call_service(&service, preflight.to_request()).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        header(&response, "Access-Control-Allow-Origin").as_deref(),
        Some("https://app.example.com")
    );
    assert_eq!(
        header(&response, "Access-Control-Allow-Headers").as_deref(),
        Some("authorization,if-none-match")
    );
    assert_eq!(
        header(&response, "Access-Control-Max-Age").as_deref(),
        Some("86400")
    );

    for bad in [
        json!({"frontendApiOrigins": ["https://app.example.com/"]}),
        json!({}),
        json!({"origins": []}),
    ] {
        let (status, body) = send(&service, post("/api/admin/ui-config/cors", ADMIN, bad)).await;
        assert_error(status, &body, 400, "ValidationError");
    }
    let (status, body) = send(
        &service,
        post(
            "/api/admin/ui-config/cors",
            FRONTEND,
            json!({"frontendApiOrigins": []}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
}
