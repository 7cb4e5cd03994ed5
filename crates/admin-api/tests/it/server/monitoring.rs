//! Health, readiness and the Prometheus metrics: their answers, pinned; readiness failing first
//! at shutdown; and metrics labelled by route pattern, never by a path's secret.

use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::json;

use crate::common::{TestApp, assert_error, send};

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

// The answers, pinned.

#[actix_web::test]
async fn health_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, test::TestRequest::get().uri("/health")).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn ready_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, test::TestRequest::get().uri("/ready")).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn ready_error_while_shutting_down() {
    let app = TestApp::new();
    let service = app.service().await;
    app.state
        .shutting_down
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (status, body) = send(&service, test::TestRequest::get().uri("/ready")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn prometheus_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    send(&service, test::TestRequest::get().uri("/health")).await;
    let response = test::call_service(
        &service,
        test::TestRequest::get()
            .uri("/internal-backstage/prometheus")
            .to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response
        .headers()
        .get("Content-Type")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    assert_eq!(content_type.as_deref(), Some("text/plain; version=0.0.4"));
    let text = String::from_utf8_lossy(&test::read_body(response).await).into_owned();
    // The values are durations; the metric names and types are the shape.
    let shape: Vec<&str> = text.lines().filter(|line| line.starts_with("# ")).collect();
    insta::assert_snapshot!(shape.join("\n"));
}
