//! What Unleash Edge asks of its upstream: token validation and its instance report.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, send};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::json;

const SHOP_FRONTEND: &str = "shop:production.shop-frontend-secret";

#[actix_web::test]
async fn edge_learns_which_tokens_are_valid_and_what_they_grant() {
    let app = TestApp::new();
    app.store_token(SHOP_FRONTEND, "frontend", "production", &["shop"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    // No credential is needed, as in Unleash: Edge asks before it trusts any token.
    let request = test::TestRequest::post()
        .uri("/edge/validate")
        .set_json(json!({"tokens": [SDK, "*:development.not-a-token", SHOP_FRONTEND, "garbage"]}));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"tokens": [
            {"token": SDK, "type": "backend", "environment": "development", "projects": ["*"]},
            {"token": SHOP_FRONTEND, "type": "frontend", "environment": "production", "projects": ["shop"]}
        ]})
    );
    let request = test::TestRequest::post()
        .uri("/edge/validate")
        .set_json(json!({"tokens": "x"}));
    let (status, body) = send(&service, request).await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn edge_reports_itself_as_an_instance() {
    let app = TestApp::new();
    let service = app.service().await;
    let report = json!({"identifier": "01JEDGE", "appName": "unleash-edge", "edgeVersion": "20.1.0",
                        "processMetrics": {}, "traffic": {}, "connectedEdges": []});
    let (status, body) = send(&service, post("/api/client/metrics/edge", SDK, report.clone())).await;
    assert_eq!((status, body), (StatusCode::ACCEPTED, serde_json::Value::Null));
    let (status, body) = send(&service, post("/api/client/metrics/edge", ADMIN, report)).await;
    assert_error(status, &body, 403, "NoAccessError");
    let (status, body) = send(
        &service,
        post("/api/client/metrics/edge", SDK, json!({"appName": "x"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (_, detail) = send(
        &service,
        get("/api/admin/metrics/applications/unleash-edge", ADMIN),
    )
    .await;
    assert_eq!(detail["instances"][0]["instanceId"], "01JEDGE", "{detail}");
    assert_eq!(detail["instances"][0]["sdkVersion"], "unleash-edge:20.1.0");
}
