//! The error envelope on every failure the application answers: unknown routes and methods, bad
//! bodies, and internal failures, which hide their cause and log it under the error's id.

use actix_web::test;
use serde_json::json;

use crate::common::{ADMIN, TestApp, assert_error, get, post, send};

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
async fn a_corrupt_context_field_answers_500_and_logs_which_row() -> Result<(), Box<dyn std::error::Error>> {
    use diesel::RunQueryDsl;
    let captured = crate::common::Captured::default();
    let writer = captured.clone();
    // Only this thread's events are captured: actix's test runtime renders the error response on
    // the thread that runs the test.
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );
    let app = TestApp::new();
    let service = app.service().await;
    diesel::sql_query("UPDATE context_fields SET legal_values = '{not json' WHERE name = 'userId'")
        .execute(&mut *app.store.connection()?)?;
    // Another test's thread may have met the error's log line first, with no subscriber of its
    // own, and cached that nobody listens to it while this thread's subscriber was being set:
    // asked again now, the line is known to be listened to here.
    tracing::callsite::rebuild_interest_cache();

    let (status, body) = send(&service, get("/api/admin/context", ADMIN)).await;
    assert_error(status, &body, 500, "InternalError");
    assert_eq!(body["message"], "internal error");
    assert!(body.get("details").is_none(), "{body}");
    for cause in ["legal_values", "userId", "context field", "not json"] {
        assert!(!body.to_string().contains(cause), "the cause leaked: {body}");
    }
    let logs = String::from_utf8_lossy(
        &captured
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .into_owned();
    let id = body["id"].as_str().unwrap_or("no id");
    assert!(
        logs.lines().any(|line| line.contains(id)
            && line.contains("stored legal_values of context field userId is not valid")),
        "no log line names the row and the error id {id}:\n{logs}"
    );
    Ok(())
}
