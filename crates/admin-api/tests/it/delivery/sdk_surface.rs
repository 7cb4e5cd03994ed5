//! The surface SDKs, Edge and OpenFeature providers call, against the defects a probe of it
//! found: every report is held to one set of limits whatever route it takes, a bad report is a
//! 400 naming the field, and no report can keep another client's usage from being saved.
//! Each test runs on the backend under test (`HALYARD_TEST_DATABASE`).

use std::io::Write as _;

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, send};

const FRONTEND: &str = "*:development.surface-frontend-secret";

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

fn iso(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn metrics(app: &str, toggles: Value) -> Value {
    json!({"appName": app, "instanceId": "i-1", "bucket": {"start": iso(now()), "stop": iso(now()), "toggles": toggles}})
}

/// The raw usage view's rows for `flag`.
async fn raw_rows<S, B>(service: &S, flag: &str) -> Vec<Value>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let (status, body) = send(
        service,
        get(&format!("/api/admin/client-metrics/features/{flag}/raw"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"].as_array().cloned().unwrap_or_default()
}

/// The usage the admin view shows for `flag`: yes and no summed over its hours.
async fn counted<S, B>(service: &S, flag: &str) -> (i64, i64)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    raw_rows(service, flag)
        .await
        .iter()
        .fold((0, 0), |(yes, no), bucket| {
            (
                yes + bucket["yes"].as_i64().unwrap_or_default(),
                no + bucket["no"].as_i64().unwrap_or_default(),
            )
        })
}

#[actix_web::test]
async fn issue_26_an_edge_report_that_no_database_could_key_is_refused_and_costs_no_one_usage() {
    let app = TestApp::new();
    let service = app.service().await;
    crate::common::seed_feature(&service, "checkout").await;
    for (identifier, app_name, field) in [
        ("a\u{0}b".to_owned(), "edge".to_owned(), "/identifier"),
        ("i".repeat(20_000), "edge".to_owned(), "/identifier"),
        ("edge-1".to_owned(), "a".repeat(400_000), "/appName"),
        ("edge-1".to_owned(), "edge\u{7}".to_owned(), "/appName"),
    ] {
        let body = json!({"identifier": identifier, "appName": app_name, "edgeVersion": "20.1.0"});
        let (status, answer) = send(&service, post("/api/client/metrics/edge", SDK, body)).await;
        assert_error(status, &answer, 400, "ValidationError");
        assert_eq!(answer["details"][0]["path"], json!(field), "{answer}");
    }
    // Another client's report in the same interval is saved whole.
    let (status, _) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            metrics("web", json!({"checkout": {"yes": 3, "no": 1}})),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(counted(&service, "checkout").await, (3, 1));
    let (_, list) = send(&service, get("/api/admin/metrics/applications", ADMIN)).await;
    assert_eq!(list["total"], json!(1), "{list}");
}

#[actix_web::test]
async fn issue_26_the_unleash_sdk_header_is_held_to_the_rules_of_names() {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    let request = post(
        "/api/frontend/client/metrics",
        FRONTEND,
        metrics("browser", json!({})),
    )
    .insert_header((
        "Unleash-Sdk",
        "unleash-client-js:".to_owned() + &"9".repeat(100_000),
    ));
    let (status, body) = send(&service, request).await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(body["details"][0]["path"], json!("Unleash-Sdk"), "{body}");
    let request = post(
        "/api/frontend/client/metrics",
        FRONTEND,
        metrics("browser", json!({})),
    )
    .insert_header(("Unleash-Sdk", "unleash-client-js:3.8.0"));
    let (status, _) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK);
}

#[actix_web::test]
async fn issue_26_reports_are_bounded_in_strategies_flags_variants_and_applications() {
    let app = TestApp::new();
    let service = app.service().await;
    let strategies: Vec<String> = (0..110_000).map(|n| format!("s{n}")).collect();
    let registration = json!({"appName": "web", "instanceId": "i", "strategies": strategies,
        "started": iso(now()), "interval": 15000});
    let (status, body) = send(&service, post("/api/client/register", SDK, registration)).await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(body["details"][0]["path"], json!("/strategies"), "{body}");

    let toggles: serde_json::Map<String, Value> = (0..10_001)
        .map(|n| (format!("f{n}"), json!({"yes": 1})))
        .collect();
    let (status, body) = send(
        &service,
        post("/api/client/metrics", SDK, metrics("web", Value::Object(toggles))),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(body["details"][0]["path"], json!("/bucket/toggles"), "{body}");

    let variants: serde_json::Map<String, Value> = (0..101).map(|n| (format!("v{n}"), json!(1))).collect();
    let (status, body) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            metrics("web", json!({"f": {"yes": 1, "variants": variants}})),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(
        body["details"][0]["path"],
        json!("/bucket/toggles/f/variants"),
        "{body}"
    );

    let applications: Vec<Value> = (0..1_001)
        .map(|n| json!({"appName": format!("a{n}"), "instanceId": "i", "environment": "development"}))
        .collect();
    let (status, body) = send(
        &service,
        post(
            "/api/client/metrics/bulk",
            SDK,
            json!({"applications": applications, "metrics": []}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(body["details"][0]["path"], json!("/applications"), "{body}");
    // Nothing of a refused report is taken.
    let (_, list) = send(&service, get("/api/admin/metrics/applications", ADMIN)).await;
    assert_eq!(list["total"], json!(0), "{list}");
}

/// The hours under which the raw usage view shows counts of `flag`.
async fn hours_counted<S, B>(service: &S, flag: &str) -> Vec<String>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    raw_rows(service, flag)
        .await
        .iter()
        .filter(|bucket| bucket["yes"].as_i64().unwrap_or_default() > 0)
        .filter_map(|bucket| bucket["timestamp"].as_str().map(str::to_owned))
        .collect()
}

#[actix_web::test]
async fn reports_from_a_skewed_clock_are_counted_at_the_receive_time() {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    crate::common::seed_feature(&service, "f").await;
    let hour_of = |time| {
        chrono::DurationRound::duration_trunc(time, chrono::TimeDelta::hours(1))
            .map(iso)
            .unwrap_or_default()
    };
    let first_hour = hour_of(now());
    let bucket = |start: chrono::DateTime<chrono::Utc>, stop: String| {
        json!({"appName": "web", "instanceId": "i-1", "bucket": {"start": iso(start), "stop": stop,
               "toggles": {"f": {"yes": 1, "no": 0}}}})
    };
    let ahead = now() + chrono::TimeDelta::hours(3);
    let behind = now() - chrono::TimeDelta::days(3);
    for (path, token, body, expected) in [
        // A server three hours ahead, one three days behind, and a bucket ending in year 9999.
        (
            "/api/client/metrics",
            SDK,
            bucket(ahead, iso(ahead)),
            StatusCode::ACCEPTED,
        ),
        (
            "/api/client/metrics",
            SDK,
            bucket(behind, iso(behind)),
            StatusCode::ACCEPTED,
        ),
        (
            "/api/client/metrics",
            SDK,
            bucket(now(), "9999-12-31T23:59:59Z".into()),
            StatusCode::ACCEPTED,
        ),
        // A browser whose clock is two hours ahead.
        (
            "/api/frontend/client/metrics",
            FRONTEND,
            bucket(
                now() + chrono::TimeDelta::hours(2),
                iso(now() + chrono::TimeDelta::hours(2)),
            ),
            StatusCode::OK,
        ),
    ] {
        let (status, answer) = send(&service, post(path, token, body)).await;
        assert_eq!(status, expected, "{path}: {answer}");
    }
    // Edge's counts dated far ahead, and an SDK that says it started tomorrow.
    let bulk = json!({"applications": [{"appName": "a", "instanceId": "e", "environment": "development",
        "started": iso(now() + chrono::TimeDelta::days(1))}],
        "metrics": [{"featureName": "f", "appName": "a", "environment": "development",
        "timestamp": "9999-06-01T00:00:00Z", "yes": 1, "no": 0}]});
    let (status, answer) = send(&service, post("/api/client/metrics/bulk", SDK, bulk)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    let registration = json!({"appName": "web", "instanceId": "i-1", "strategies": ["default"],
        "started": iso(now() + chrono::TimeDelta::days(1)), "interval": 15000});
    let (status, answer) = send(&service, post("/api/client/register", SDK, registration)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    app.state.app.flush_usage().await.ok();
    // Every count was kept, each in the hour it arrived in.
    assert_eq!(counted(&service, "f").await, (5, 0));
    let hours = hours_counted(&service, "f").await;
    let last_hour = hour_of(now());
    assert!(
        !hours.is_empty() && hours.iter().all(|hour| *hour == first_hour || *hour == last_hour),
        "{hours:?} against {first_hour}"
    );
    let (_, instances) = send(
        &service,
        get("/api/admin/metrics/instances/web/environment/development", ADMIN),
    )
    .await;
    assert_eq!(
        instances["instances"].as_array().map(Vec::len),
        Some(1),
        "{instances}"
    );
}

#[actix_web::test]
async fn reversed_and_malformed_report_times_are_refused_naming_the_field() {
    let app = TestApp::new();
    let service = app.service().await;
    let reversed = json!({"appName": "web", "bucket": {"start": iso(now()),
        "stop": iso(now() - chrono::TimeDelta::minutes(5)), "toggles": {"f": {"yes": 1}}}});
    let (status, answer) = send(&service, post("/api/client/metrics", SDK, reversed)).await;
    assert_error(status, &answer, 400, "ValidationError");
    assert_eq!(answer["details"][0]["path"], json!("/bucket/stop"), "{answer}");
    for stop in [
        json!("yesterday"),
        json!("10000-01-01T00:00:00Z"),
        json!(300_000_000_000_000_i64),
    ] {
        let body = json!({"appName": "web", "bucket": {"start": iso(now()), "stop": stop, "toggles": {}}});
        let (status, answer) = send(&service, post("/api/client/metrics", SDK, body)).await;
        assert_error(status, &answer, 400, "ValidationError");
    }
    let bulk = json!({"applications": [], "metrics": [{"featureName": "f", "appName": "a",
        "environment": "development", "timestamp": "not a time", "yes": 1, "no": 0}]});
    let (status, answer) = send(&service, post("/api/client/metrics/bulk", SDK, bulk)).await;
    assert_error(status, &answer, 400, "ValidationError");
    // Nothing of a refused report was taken.
    app.state.app.flush_usage().await.ok();
    assert_eq!(counted(&service, "f").await, (0, 0));
}

#[actix_web::test]
async fn issue_26_error_paths_keep_a_flag_name_one_segment() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            metrics("web", json!({"checkout.new": {"yes": -1}})),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(
        body["details"][0]["path"],
        json!("/bucket/toggles/checkout.new/yes"),
        "{body}"
    );
    let (status, body) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            metrics("web", json!({"team/flag~1": {"yes": 1, "variants": {"": 1}}})),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(
        body["details"][0]["path"],
        json!("/bucket/toggles/team~1flag~01/variants/"),
        "{body}"
    );
}

#[actix_web::test]
async fn issue_26_frontend_and_ofrep_contexts_have_the_playgrounds_limits() {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    let many: serde_json::Map<String, Value> = (0..300).map(|n| (format!("p{n}"), json!("v"))).collect();
    let (status, body) = send(
        &service,
        post(
            "/api/frontend",
            FRONTEND,
            json!({"context": {"properties": many.clone()}}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let query: Vec<String> = (0..300).map(|n| format!("p{n}=v")).collect();
    let (status, body) = send(
        &service,
        get(&format!("/api/frontend?{}", query.join("&")), FRONTEND),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let long = "v".repeat(70 * 1024);
    let (status, body) = send(
        &service,
        post("/api/frontend", FRONTEND, json!({"context": {"userId": long}})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(body["details"][0]["path"], json!("/context/userId"), "{body}");
    let (status, body) = send(
        &service,
        post("/ofrep/v1/evaluate/flags", FRONTEND, json!({"context": many})),
    )
    .await;
    assert_eq!(
        (status, body["errorCode"].clone()),
        (StatusCode::BAD_REQUEST, json!("INVALID_CONTEXT")),
        "{body}"
    );
}

#[actix_web::test]
async fn issue_26_bodies_in_unknown_or_corrupt_encodings_are_refused_plainly() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = serde_json::to_vec(&metrics("web", json!({}))).unwrap_or_default();
    let zstd = TestRequest::post()
        .uri("/api/client/metrics")
        .insert_header(("Authorization", SDK))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Content-Encoding", "zstd"))
        .set_payload(body.clone());
    let (status, answer) = send(&service, zstd).await;
    assert_error(status, &answer, 415, "ContentTypeError");
    let corrupt = TestRequest::post()
        .uri("/api/client/metrics")
        .insert_header(("Authorization", SDK))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Content-Encoding", "gzip"))
        .set_payload(b"\x1f\x8b\x08\x00not gzip at all".to_vec());
    let (status, answer) = send(&service, corrupt).await;
    assert_error(status, &answer, 400, "ValidationError");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(!message.contains('{') && !message.contains("Custom"), "{message}");
    // A body that is really gzipped is read.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&body).unwrap_or_else(|error| panic!("{error}"));
    let gzipped = TestRequest::post()
        .uri("/api/client/metrics")
        .insert_header(("Authorization", SDK))
        .insert_header(("Content-Type", "application/json"))
        .insert_header(("Content-Encoding", "gzip"))
        .set_payload(encoder.finish().unwrap_or_default());
    let (status, answer) = send(&service, gzipped).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
}

#[actix_web::test]
async fn issue_26_the_applications_view_pages_and_filters_in_the_database() {
    let app = TestApp::new();
    let service = app.service().await;
    for n in 0..30 {
        let registration = json!({"appName": format!("App-{n:02}"), "instanceId": "i", "strategies": ["default"],
            "started": iso(now()), "interval": 15000, "sdkVersion": format!("sdk:{n}")});
        let (status, body) = send(&service, post("/api/client/register", SDK, registration)).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    }
    let names = |list: &Value| -> Vec<String> {
        list["applications"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|app| app["appName"].as_str().map(str::to_owned))
            .collect()
    };
    let (_, list) = send(
        &service,
        get("/api/admin/metrics/applications?limit=5&offset=10", ADMIN),
    )
    .await;
    assert_eq!(list["total"], json!(30), "{list}");
    assert_eq!(names(&list), ["App-10", "App-11", "App-12", "App-13", "App-14"]);
    assert_eq!(list["applications"][0]["sdkVersion"], json!("sdk:10"), "{list}");
    assert_eq!(
        list["applications"][0]["usage"],
        json!([{"project": "*", "environments": ["development"]}])
    );
    let (_, list) = send(
        &service,
        get(
            "/api/admin/metrics/applications?query=app-2,APP-05&sortOrder=desc",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(list["total"], json!(11), "{list}");
    assert_eq!(names(&list).first().map(String::as_str), Some("App-29"));
    // Wildcards in a search term are taken literally.
    let (_, list) = send(&service, get("/api/admin/metrics/applications?query=%25", ADMIN)).await;
    assert_eq!(list["total"], json!(0), "{list}");
}

/// A stored value that does not read is an error where it is used, never a default: a CORS
/// setting that is not a list of origins allows no origin (and costs no token check), a token
/// whose stored projects do not read is refused while the others work, and a user whose stored
/// root role is a project role is not shown as a Viewer.
#[actix_web::test]
async fn issue_21_stored_values_that_do_not_read_are_errors_never_defaults()
-> Result<(), Box<dyn std::error::Error>> {
    use diesel::RunQueryDsl;
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])?;
    diesel::sql_query("INSERT INTO settings (name, content) VALUES ('frontendApiOrigins', 'not a list')")
        .execute(&mut *app.store.connection()?)?;
    diesel::sql_query(
        "UPDATE api_tokens SET projects = 'not a list' WHERE token_name = 'backend-development'",
    )
    .execute(&mut *app.store.connection()?)?;
    let service = app.service().await;

    let request = get("/api/frontend", FRONTEND).insert_header(("Origin", "https://evil.example.com"));
    let response = actix_web::test::call_service(&service, request.to_request()).await;
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert!(response.headers().get("Access-Control-Allow-Origin").is_none());
    // Paths browsers do not call cross-origin, and other tokens, are not affected.
    let (status, body) = send(&service, get("/api/admin/projects", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (status, body) = send(&service, get("/api/client/features", SDK)).await;
    assert_error(status, &body, 500, "InternalError");

    let (status, user) = send(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": "role@example.com", "rootRole": 2}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    diesel::sql_query(format!(
        "UPDATE users SET root_role = 4 WHERE id = {}",
        user["id"]
    ))
    .execute(&mut *app.store.connection()?)?;
    let (status, body) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    assert_error(status, &body, 500, "InternalError");
    Ok(())
}
