//! Storage bounded under report floods: one client token reporting within every per-report
//! limit cannot make the database keep more than its caps of unknown flag names per
//! environment and of applications; the least recently seen go first, and the Prometheus
//! counter says how many. These run at the production caps, a cap and one past it, through the
//! HTTP routes a flood would use.

use actix_web::http::StatusCode;
use actix_web::test;
use flag_store::queries::client_metrics::{STORED_APPLICATIONS, STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT};
use serde_json::{Value, json};

use crate::common::{ADMIN, SDK, TestApp, get, post, send, time_from_now};

/// Most applications one Edge report may carry.
const PER_EDGE_REPORT: usize = 1_000;

/// The Prometheus text, after a view has written what is pending.
async fn prometheus<S, B>(service: &S) -> String
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let response = test::call_service(
        service,
        test::TestRequest::get()
            .uri("/internal-backstage/prometheus")
            .to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    String::from_utf8_lossy(&test::read_body(response).await).into_owned()
}

/// A server-side SDK's metrics report of `names`, each used once, in a bucket that ended
/// `ago`.
fn metrics(names: &[String], ago: chrono::TimeDelta) -> Value {
    let toggles: serde_json::Map<String, Value> = names
        .iter()
        .map(|name| (name.clone(), json!({"yes": 1, "no": 0})))
        .collect();
    let stop = time_from_now(-ago);
    json!({"appName": "flood", "instanceId": "i-1", "bucket": {"start": stop, "stop": stop, "toggles": toggles}})
}

#[actix_web::test]
async fn storage_bounded_under_report_floods_unknown_flags_per_environment() {
    let app = TestApp::new();
    let service = app.service().await;
    // The oldest name, then a full cap of newer ones in one report: one name too many.
    let oldest = vec!["a-oldest".to_owned()];
    let (status, _) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            metrics(&oldest, chrono::TimeDelta::minutes(2)),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let newer: Vec<String> = (0..STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT)
        .map(|n| format!("flag-{n:05}"))
        .collect();
    let (status, _) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            metrics(&newer, chrono::TimeDelta::minutes(1)),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (status, unknown) = send(&service, get("/api/admin/metrics/unknown-flags", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = unknown["unknownFlags"]
        .as_array()
        .map(|flags| flags.iter().filter_map(|flag| flag["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        names.first().copied(),
        Some("flag-00000"),
        "the least recently seen name went; the view lists by name"
    );
    let text = prometheus(&service).await;
    assert!(
        text.contains("sdk_usage_evicted_total{kind=\"unknown_flags\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("sdk_usage_evicted_total{kind=\"applications\"} 0\n"),
        "{text}"
    );
}

#[actix_web::test]
async fn storage_bounded_under_report_floods_applications_in_all() {
    let app = TestApp::new();
    let service = app.service().await;
    let registration = json!({
        "appName": "a-oldest", "instanceId": "i-1", "strategies": ["default"],
        "started": time_from_now(chrono::TimeDelta::hours(-1)), "interval": 15000
    });
    let (status, _) = send(&service, post("/api/client/register", SDK, registration)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // A full cap of newer applications, through Edge's bulk route, written after every few
    // reports as the server writes a filling aggregate.
    for report in 0..STORED_APPLICATIONS / PER_EDGE_REPORT {
        let applications: Vec<Value> = (0..PER_EDGE_REPORT)
            .map(|n| {
                json!({"appName": format!("app-{report:02}-{n:04}"), "instanceId": "e-1",
                       "environment": "development", "strategies": []})
            })
            .collect();
        let bulk = json!({"applications": applications, "metrics": []});
        let (status, _) = send(&service, post("/api/client/metrics/bulk", SDK, bulk)).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        if report % 4 == 3 {
            send(&service, get("/api/admin/metrics/unknown-flags", ADMIN)).await;
        }
    }
    let (status, listed) = send(&service, get("/api/admin/metrics/applications?limit=1", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    assert_eq!(listed["total"], STORED_APPLICATIONS, "{}", listed["total"]);
    let (status, _) = send(&service, get("/api/admin/metrics/applications/a-oldest", ADMIN)).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the least recently seen application went"
    );
    let text = prometheus(&service).await;
    assert!(
        text.contains("sdk_usage_evicted_total{kind=\"applications\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("sdk_usage_evicted_total{kind=\"instances\"} 0\n"),
        "{text}"
    );
}
