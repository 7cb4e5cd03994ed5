//! Invite links and signup: the flow end to end, its refusals and limits, the answers Unleash 8.2
//! gives where a recording of it found a difference, and each operation's answers, pinned.

use crate::common::{ADMIN, TestApp, assert_error, create_invite, get, post, put, seed_feature, send};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

const PASSWORD: &str = "Corr3ct-Horse!";

fn in_days(days: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::days(days)).to_rfc3339()
}

fn signup(secret: &str, email: &str) -> test::TestRequest {
    test::TestRequest::post()
        .uri(&format!("/invite/{secret}/signup"))
        .set_json(json!({"email": email, "name": "New Person", "password": PASSWORD}))
}

#[actix_web::test]
async fn the_invite_flow_works_end_to_end() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;

    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    assert_eq!(secret.len(), 32);
    assert_eq!(
        token["url"],
        json!(format!("http://localhost:4242/new-user?invite={secret}"))
    );
    assert_eq!(token["role"], json!({"id": 3, "name": "Viewer", "type": "root"}));
    assert_eq!(token["enabled"], true);
    assert_eq!(token["users"], json!([]));

    let (status, _) = send(
        &service,
        test::TestRequest::get().uri(&format!("/invite/{secret}/validate")),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let (status, user) = send(&service, signup(&secret, "New.Person@Example.com")).await;
    assert_eq!(status, StatusCode::OK, "{user}");
    assert_eq!(user["email"], "new.person@example.com");
    assert_eq!(user["rootRole"], 3);
    assert_eq!(user["accountType"], "User");
    assert!(user.get("password").is_none() && user.get("passwordHash").is_none());

    // The user can log in and use the playground, but not write variants.
    let cookie = crate::common::login(&service, "NEW.PERSON@example.com", PASSWORD).await;
    let playground = test::TestRequest::post()
        .uri("/api/admin/playground")
        .cookie(cookie.clone())
        .set_json(json!({"environment": "development", "context": {"appName": "a"}}));
    let (status, body) = send(&service, playground).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let batch = test::TestRequest::put()
        .uri("/api/admin/projects/default/features/f/variants-batch")
        .cookie(cookie.clone())
        .set_json(json!({"variants": [], "environments": ["development"]}));
    let (status, body) = send(&service, batch).await;
    assert_error(status, &body, 403, "NoAccessError");
    let tokens = test::TestRequest::get()
        .uri("/api/admin/invite-link/tokens")
        .cookie(cookie.clone());
    let (status, body) = send(&service, tokens).await;
    assert_error(status, &body, 403, "NoAccessError");

    // Logging out ends the session.
    let logout = test::TestRequest::post().uri("/logout").cookie(cookie.clone());
    assert_eq!(send(&service, logout).await.0, StatusCode::FOUND);
    let after = test::TestRequest::post()
        .uri("/api/admin/playground")
        .cookie(cookie)
        .set_json(json!({"environment": "development", "context": {"appName": "a"}}));
    let (status, body) = send(&service, after).await;
    assert_error(status, &body, 401, "AuthenticationRequired");

    // The same email again, in another case: 409.
    let (status, body) = send(&service, signup(&secret, "new.PERSON@example.com")).await;
    assert_error(status, &body, 409, "NameExistsError");

    // The token lists its user.
    let (_, listed) = send(
        &service,
        get(&format!("/api/admin/invite-link/tokens/{secret}"), ADMIN),
    )
    .await;
    assert_eq!(listed["users"][0]["name"], "New Person");

    // Expired a second ago: the same 400 as unknown and disabled, and no user.
    let expired = (chrono::Utc::now() - chrono::Duration::seconds(1)).to_rfc3339();
    let (status, updated) = send(
        &service,
        put(
            &format!("/api/admin/invite-link/tokens/{secret}"),
            ADMIN,
            json!({"expiresAt": expired}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(
        updated["enabled"], false,
        "an expired token is never shown as enabled"
    );
    assert_eq!(
        updated["role"]["name"], "Viewer",
        "PUT answers with the whole token"
    );
    assert_eq!(updated["users"].as_array().map(Vec::len), Some(1));
    let (status, expired_body) = send(&service, signup(&secret, "late@example.com")).await;
    assert_error(status, &expired_body, 400, "ValidationError");
    let (status, unknown_body) = send(
        &service,
        signup("0123456789abcdef0123456789abcdef", "who@example.com"),
    )
    .await;
    assert_error(status, &unknown_body, 400, "ValidationError");
    assert_eq!(expired_body["message"], unknown_body["message"]);
    let (status, _) = send(
        &service,
        test::TestRequest::get().uri(&format!("/invite/{secret}/validate")),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn disabled_tokens_and_bad_updates_are_refused() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    let path = format!("/api/admin/invite-link/tokens/{secret}");

    let (status, body) = send(&service, put(&path, ADMIN, json!({}))).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        put(&path, ADMIN, json!({"enabled": false, "name": "x"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, put(&path, ADMIN, json!({"expiresAt": ""}))).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/invite-link/tokens/nope",
            ADMIN,
            json!({"enabled": false}),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");

    let (status, body) = send(&service, put(&path, ADMIN, json!({"enabled": false}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["enabled"], false);
    let (status, body) = send(&service, signup(&secret, "someone@example.com")).await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, listed) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["tokens"].as_array().map(Vec::len), Some(1));
    assert_eq!(listed["tokens"][0]["secret"], json!(secret));

    // Expiry is capped at a month on creation.
    let (_, far) = send(
        &service,
        post(
            "/api/admin/invite-link/tokens",
            ADMIN,
            json!({"name": "far", "expiresAt": in_days(400)}),
        ),
    )
    .await;
    let expires = chrono::DateTime::parse_from_rfc3339(far["expiresAt"].as_str().unwrap_or_default());
    assert!(
        expires.is_ok_and(|at| at < chrono::Utc::now() + chrono::Duration::days(32)),
        "{far}"
    );
}

#[actix_web::test]
async fn signup_bodies_are_validated_before_the_token() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    let uri = format!("/invite/{secret}/signup");
    for body in [
        json!({"name": "x", "password": PASSWORD}),
        json!({"email": "a@example.com", "password": PASSWORD}),
        json!({"email": "a@example.com", "name": "x", "password": PASSWORD, "rootRole": 1}),
        json!({"email": "not-an-email", "name": "x", "password": PASSWORD}),
    ] {
        let (status, response) = send(&service, test::TestRequest::post().uri(&uri).set_json(&body)).await;
        assert_error(status, &response, 400, "ValidationError");
    }
    let weak = json!({"email": "a@example.com", "name": "x", "password": "short"});
    let (status, response) = send(&service, test::TestRequest::post().uri(&uri).set_json(weak)).await;
    assert_error(status, &response, 400, "ValidationError");
    // Every broken rule is listed: length, upper-case, digit, symbol.
    assert_eq!(
        response["details"].as_array().map(Vec::len),
        Some(4),
        "{response}"
    );
    let (_, listed) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(listed["tokens"][0]["users"], json!([]), "no user was created");
}

#[actix_web::test]
async fn duplicate_usernames_conflict() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    let uri = format!("/invite/{secret}/signup");
    let first = json!({"username": "sam", "email": "sam@example.com", "name": "Sam", "password": PASSWORD});
    let second =
        json!({"username": "sam", "email": "other@example.com", "name": "Sam", "password": PASSWORD});
    assert_eq!(
        send(&service, test::TestRequest::post().uri(&uri).set_json(first))
            .await
            .0,
        StatusCode::OK
    );
    let (status, body) = send(&service, test::TestRequest::post().uri(&uri).set_json(second)).await;
    assert_error(status, &body, 409, "NameExistsError");
}

#[actix_web::test]
async fn concurrent_signups_with_one_email_give_one_user() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    let requests = (0..8).map(|index| {
        let email = if index % 2 == 0 {
            "race@example.com"
        } else {
            "RACE@example.com"
        };
        send(&service, signup(&secret, email))
    });
    let results = futures_util::future::join_all(requests).await;
    let created = results
        .iter()
        .filter(|(status, _)| *status == StatusCode::OK)
        .count();
    let conflicts = results
        .iter()
        .filter(|(status, _)| *status == StatusCode::CONFLICT)
        .count();
    assert_eq!((created, conflicts), (1, 7), "{results:?}");
}

#[actix_web::test]
async fn signups_are_rate_limited_per_address() {
    let app = TestApp::with_settings(flag_admin::Settings {
        signups_per_minute: 2,
        ..flag_admin::Settings::default()
    });
    let service = app.service().await;
    let address: std::net::SocketAddr = ([192, 0, 2, 1], 5000).into();
    let attempt = || {
        test::TestRequest::post()
            .uri("/invite/0123456789abcdef0123456789abcdef/signup")
            .peer_addr(address)
            .set_json(json!({"email": "a@example.com", "name": "x", "password": PASSWORD}))
    };
    assert_eq!(send(&service, attempt()).await.0, StatusCode::BAD_REQUEST);
    assert_eq!(send(&service, attempt()).await.0, StatusCode::BAD_REQUEST);
    let response = test::call_service(&service, attempt().to_request()).await;
    crate::common::assert_retry_after(&response);
    let body: Value = test::read_body_json(response).await;
    assert_error(StatusCode::TOO_MANY_REQUESTS, &body, 429, "TooManyRequestsError");
    // Another address is not affected.
    let other = test::TestRequest::post()
        .uri("/invite/0123456789abcdef0123456789abcdef/signup")
        .peer_addr(([192, 0, 2, 2], 5000).into())
        .set_json(json!({"email": "a@example.com", "name": "x", "password": PASSWORD}));
    assert_eq!(send(&service, other).await.0, StatusCode::BAD_REQUEST);
}

#[actix_web::test]
async fn wrong_passwords_do_not_log_in() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = crate::common::create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        send(&service, signup(&secret, "p@example.com")).await.0,
        StatusCode::OK
    );
    for (username, password) in [
        ("p@example.com", "Wrong-Passw0rd"),
        ("nobody@example.com", PASSWORD),
    ] {
        let login = test::TestRequest::post()
            .uri("/auth/simple/login")
            .set_json(json!({"username": username, "password": password}));
        let (status, body) = send(&service, login).await;
        assert_error(status, &body, 401, "PasswordMismatch");
    }
}

fn object_keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .map(|fields| fields.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[actix_web::test]
async fn the_signup_answer_carries_unleashs_null_user_fields() {
    let app = TestApp::new();
    let service = app.service().await;
    let invite = create_invite(&service).await;
    let secret = invite["secret"].as_str().unwrap_or_default();
    let request = actix_web::test::TestRequest::post()
        .uri(&format!("/invite/{secret}/signup"))
        .set_json(json!({"email": "new@example.com", "name": "New", "password": "Correct-Horse-9"}));
    let (status, user) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{user}");
    for field in ["seatType", "companyRole", "productUpdatesEmailConsent", "scimId"] {
        assert_eq!(user.get(field), Some(&Value::Null), "{field}: {user}");
    }
    let keys = object_keys(&user);
    let at = |key: &str| keys.iter().position(|name| *name == key);
    assert!(
        at("accountType") < at("seatType") && at("productUpdatesEmailConsent") < at("rootRole"),
        "{keys:?}"
    );
}

#[actix_web::test]
async fn null_in_an_invite_link_update_is_refused_naming_the_field() {
    let app = TestApp::new();
    let service = app.service().await;
    let invite = create_invite(&service).await;
    let secret = invite["secret"].as_str().unwrap_or_default();
    let path = format!("/api/admin/invite-link/tokens/{secret}");
    for (body, field) in [
        (json!({"expiresAt": null}), "expiresAt"),
        (json!({"enabled": null}), "enabled"),
        (json!({"expiresAt": null, "enabled": true}), "expiresAt"),
        (
            json!({"enabled": null, "expiresAt": crate::common::next_year()}),
            "enabled",
        ),
    ] {
        let (status, answer) = send(&service, put(&path, ADMIN, body.clone())).await;
        assert_error(status, &answer, 400, "ValidationError");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|message| message.contains(field)),
            "{body}: {answer}"
        );
    }
    let (_, listed) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(
        listed["tokens"][0]["enabled"], true,
        "nothing was written: {listed}"
    );
    assert_eq!(
        listed["tokens"][0]["expiresAt"], invite["expiresAt"],
        "nothing was written: {listed}"
    );
}

// Invite links and signing up: the answers, pinned.

/// Creates an invite link and returns its secret.
async fn invite_secret<S, B>(service: &S) -> String
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let token = crate::common::create_invite(service).await;
    token["secret"].as_str().unwrap_or_default().to_owned()
}

#[actix_web::test]
async fn create_signup_token_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let expires_at = (chrono::Utc::now() + chrono::Duration::days(7)).to_rfc3339();
    let response = test::call_service(
        &service,
        post(
            "/api/admin/invite-link/tokens",
            ADMIN,
            json!({"name": "team", "expiresAt": expires_at}),
        )
        .to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = response
        .headers()
        .get("Location")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_default();
    let body: Value = test::read_body_json(response).await;
    assert_eq!(
        location,
        format!("tokens/{}", body["secret"].as_str().unwrap_or_default())
    );
    insta::assert_json_snapshot!(body, {
        ".secret" => "[secret]",
        ".url" => "[url with secret]",
        ".expiresAt" => "[time]",
        ".createdAt" => "[time]",
    });
}

#[actix_web::test]
async fn create_signup_token_error_with_a_bad_date() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/invite-link/tokens",
            ADMIN,
            json!({"name": "team", "expiresAt": "2030-01-01"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn list_signup_tokens_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = invite_secret(&service).await;
    let (status, user) = send(
        &service,
        test::TestRequest::post()
            .uri(&format!("/invite/{secret}/signup"))
            .set_json(
                json!({"username": "sam", "email": "sam@example.com", "name": "Sam", "password": PASSWORD}),
            ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{user}");
    let (status, body) = send(&service, get("/api/admin/invite-link/tokens", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {
        ".tokens[].secret" => "[secret]",
        ".tokens[].url" => "[url with secret]",
        ".tokens[].expiresAt" => "[time]",
        ".tokens[].createdAt" => "[time]",
        ".tokens[].users[].id" => "[id]",
    });
}

#[actix_web::test]
async fn get_signup_token_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = invite_secret(&service).await;
    let (status, body) = send(
        &service,
        get(&format!("/api/admin/invite-link/tokens/{secret}"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {
        ".secret" => "[secret]",
        ".url" => "[url with secret]",
        ".expiresAt" => "[time]",
        ".createdAt" => "[time]",
    });
}

#[actix_web::test]
async fn get_signup_token_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/invite-link/tokens/nope", ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn update_signup_token_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = invite_secret(&service).await;
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/invite-link/tokens/{secret}"),
            ADMIN,
            json!({"enabled": false}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {
        ".secret" => "[secret]",
        ".url" => "[url with secret]",
        ".expiresAt" => "[time]",
        ".createdAt" => "[time]",
    });
}

#[actix_web::test]
async fn validate_signup_token_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = invite_secret(&service).await;
    let (status, body) = send(
        &service,
        test::TestRequest::get().uri(&format!("/invite/{secret}/validate")),
    )
    .await;
    insta::assert_json_snapshot!(json!({"status": status.as_u16(), "body": body}));
}

#[actix_web::test]
async fn validate_signup_token_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        test::TestRequest::get().uri("/invite/0123456789abcdef0123456789abcdef/validate"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn sign_up_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = invite_secret(&service).await;
    let (status, body) = send(
        &service,
        test::TestRequest::post()
            .uri(&format!("/invite/{secret}/signup"))
            .set_json(json!({"email": "New.Person@Example.com", "name": "New Person", "password": PASSWORD})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {".id" => "[id]", ".createdAt" => "[time]"});
}

#[actix_web::test]
async fn sign_up_error_with_a_weak_password() {
    let app = TestApp::new();
    let service = app.service().await;
    let secret = invite_secret(&service).await;
    let (status, body) = send(
        &service,
        test::TestRequest::post()
            .uri(&format!("/invite/{secret}/signup"))
            .set_json(json!({"email": "a@example.com", "name": "x", "password": "short"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}
