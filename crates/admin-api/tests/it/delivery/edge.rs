//! What Unleash Edge reports to its upstream: its instance report. Edge's token validation is
//! with the other token checks, in `identity::token_scope`.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, send};
use actix_web::http::StatusCode;
use serde_json::json;

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
