//! Runs the whole invite and playground flow with logging at trace level and checks that no
//! secret reaches the logs: API tokens, passwords, session cookies, invite secrets.

use crate::common::{ADMIN, TestApp, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::json;

#[actix_web::test]
async fn no_secret_is_ever_logged() {
    let captured = crate::common::Captured::default();
    let writer = captured.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    let password = "Sup3r-Secret-Passphrase!";
    let wrong_token = "*:*.wrong-token-that-must-not-appear";
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;

    let (_, token) = send(
        &service,
        post(
            "/api/admin/invite-link/tokens",
            ADMIN,
            json!({"name": "t", "expiresAt": (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339()}),
        ),
    )
    .await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    let signup = test::TestRequest::post()
        .uri(&format!("/invite/{secret}/signup?ref={secret}"))
        .set_json(json!({"email": "log@example.com", "name": "Log", "password": password}));
    assert_eq!(send(&service, signup).await.0, StatusCode::OK);
    let cookie = crate::common::login(&service, "log@example.com", password)
        .await
        .value()
        .to_owned();
    assert!(!cookie.is_empty());
    let playground = json!({"environment": "development", "context": {"appName": "a"}});
    assert_eq!(
        send(
            &service,
            post(
                "/api/admin/playground",
                &format!("Bearer {ADMIN}"),
                playground.clone()
            )
        )
        .await
        .0,
        StatusCode::OK
    );
    assert_eq!(
        send(&service, post("/api/admin/playground", wrong_token, playground))
            .await
            .0,
        StatusCode::UNAUTHORIZED
    );
    let batch = json!({"variants": [{"name": "v", "weight": 1}], "environments": ["development"]});
    assert_eq!(
        send(
            &service,
            put(
                "/api/admin/projects/default/features/f/variants-batch",
                ADMIN,
                batch
            )
        )
        .await
        .0,
        StatusCode::OK
    );
    let wrong_password = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": "log@example.com", "password": format!("{password}x")}));
    assert_eq!(send(&service, wrong_password).await.0, StatusCode::UNAUTHORIZED);
    let unknown_invite = test::TestRequest::get().uri(&format!("/invite/{secret}/nothing"));
    assert_eq!(send(&service, unknown_invite).await.0, StatusCode::NOT_FOUND);

    let logs = String::from_utf8_lossy(
        &captured
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .into_owned();
    assert!(
        logs.contains("/invite/{token}/signup"),
        "requests are logged by route pattern:\n{logs}"
    );
    let admin_secret = ADMIN.split_once('.').map_or(ADMIN, |(_, secret)| secret);
    for (what, value) in [
        ("the admin token", admin_secret),
        ("a wrong token", "wrong-token-that-must-not-appear"),
        ("the password", password),
        ("the invite secret", secret.as_str()),
        ("the session cookie", cookie.as_str()),
    ] {
        assert!(!logs.contains(value), "{what} appears in the logs");
    }
}
