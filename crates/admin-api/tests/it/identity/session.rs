//! Signing in and out with a password: the answers of login and logout, pinned, with the session
//! cookie each sets or removes.

use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

use super::users::{PASSWORD, create_user};
use crate::common::{TestApp, send};

#[actix_web::test]
async fn login_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_user(&service, "ed@example.com").await;
    let request = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": "ed@example.com", "password": PASSWORD}));
    let response = test::call_service(&service, request.to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let cookie = response
        .response()
        .cookies()
        .find(|cookie| cookie.name() == admin_api::auth::SESSION_COOKIE)
        .map(|cookie| (cookie.http_only(), cookie.path().map(str::to_owned)));
    assert_eq!(cookie, Some((Some(true), Some("/".to_owned()))));
    let body: Value = test::read_body_json(response).await;
    insta::assert_json_snapshot!(body, {".id" => "[id]", ".createdAt" => "[time]", ".seenAt" => "[time]"});
}

#[actix_web::test]
async fn login_error_with_a_wrong_password() {
    let app = TestApp::new();
    let service = app.service().await;
    create_user(&service, "ed@example.com").await;
    let request = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": "ed@example.com", "password": "Wrong-Passw0rd"}));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn logout_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_user(&service, "ed@example.com").await;
    let cookie = crate::common::login(&service, "ed@example.com", PASSWORD).await;
    let request = test::TestRequest::post().uri("/logout").cookie(cookie);
    let response = test::call_service(&service, request.to_request()).await;
    let status = response.status().as_u16();
    let removal = response
        .response()
        .cookies()
        .find(|cookie| cookie.name() == admin_api::auth::SESSION_COOKIE)
        .map(|cookie| json!({"value": cookie.value(), "path": cookie.path(), "maxAge": cookie.max_age().map(actix_web::cookie::time::SignedDuration::whole_seconds)}));
    let body = test::read_body(response).await;
    insta::assert_json_snapshot!(json!({"status": status, "cookie": removal, "bodyBytes": body.len()}));
}
