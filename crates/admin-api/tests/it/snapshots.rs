//! The typed answers, pinned: one representative success per converted operation and at least
//! one error per handler module, with every id, secret, token and time redacted so the
//! snapshots are stable.

use crate::common::{ADMIN, SDK, TestApp, get, post, put, seed_feature, send};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

const PASSWORD: &str = "Corr3ct-Horse!";

/// Creates a user with a password through the admin API and returns the answer.
async fn create_user<S, B>(service: &S, email: &str) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let body = json!({"email": email, "name": "Ed", "rootRole": "Editor", "password": PASSWORD});
    let (status, user) = send(service, post("/api/admin/user-admin", ADMIN, body)).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    user
}

/// Creates an invite link and returns its secret.
async fn invite_secret<S, B>(service: &S) -> String
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let token = crate::common::create_invite(service).await;
    token["secret"].as_str().unwrap_or_default().to_owned()
}

/// Attaches a segment to `f`'s development strategy, so the client API has one to show.
async fn add_segment<S, B>(service: &S)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let segment = json!({"name": "beta", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]});
    let (status, segment) = send(service, post("/api/admin/segments", ADMIN, segment)).await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    let strategy = json!({
        "name": "flexibleRollout",
        "parameters": {"rollout": "50", "stickiness": "default", "groupId": "f"},
        "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"]}],
        "segments": [segment["id"]]
    });
    let (status, body) = send(
        service,
        post(
            "/api/admin/projects/default/features/f/environments/development/strategies",
            ADMIN,
            strategy,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

// Operational: /health, /ready, /internal-backstage/prometheus.

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

// Session: login and logout.

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

// Public signup: invite-link tokens and signing up.

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

// Users.

#[actix_web::test]
async fn list_users_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_user(&service, "ed@example.com").await;
    let (status, body) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {".users[].id" => "[id]", ".users[].createdAt" => "[time]"});
}

#[actix_web::test]
async fn create_user_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = json!({"email": "Ed@Example.com", "username": "ed", "name": "Ed", "rootRole": 2, "password": PASSWORD, "sendEmail": false});
    let (status, body) = send(&service, post("/api/admin/user-admin", ADMIN, body)).await;
    assert_eq!(status, StatusCode::CREATED);
    insta::assert_json_snapshot!(body, {".id" => "[id]", ".createdAt" => "[time]"});
}

#[actix_web::test]
async fn create_user_error_with_a_project_role() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = json!({"email": "x@example.com", "rootRole": 4});
    let (status, body) = send(&service, post("/api/admin/user-admin", ADMIN, body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn update_user_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let user = create_user(&service, "ed@example.com").await;
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/user-admin/{}", user["id"]),
            ADMIN,
            json!({"name": "Edward", "rootRole": "viewer"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {".id" => "[id]", ".createdAt" => "[time]"});
}

#[actix_web::test]
async fn update_user_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        put("/api/admin/user-admin/999", ADMIN, json!({"rootRole": 2})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn delete_user_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let user = create_user(&service, "ed@example.com").await;
    let request = test::TestRequest::delete()
        .uri(&format!("/api/admin/user-admin/{}", user["id"]))
        .insert_header(("Authorization", ADMIN));
    let (status, body) = send(&service, request).await;
    insta::assert_json_snapshot!(json!({"status": status.as_u16(), "body": body}));
}

// Variants.

#[actix_web::test]
async fn variants_batch_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let request = json!({
        "variants": [
            {"name": "red", "weight": 1},
            {"weight": "500", "name": "blue", "stickiness": "userId", "payload": {"type": "json", "value": "{\"a\":1}"}},
            {"name": "green", "weight": 100, "weightType": "fix", "overrides": [{"contextName": "userId", "values": ["7"]}]}
        ],
        "environments": ["development", "production"]
    });
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn variants_batch_error_with_a_bad_weight() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let request = json!({"variants": [{"name": "a", "weight": 1500}], "environments": ["development"]});
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn environment_variants_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let request = json!({
        "variants": [
            {"name": "red", "weight": 1, "stickiness": "userId"},
            {"name": "blue", "weight": 100, "weightType": "fix", "payload": {"type": "string", "value": "b"}}
        ],
        "environments": ["development"]
    });
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        get(
            "/api/admin/projects/default/features/f/environments/development/variants",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

// Client API.

#[actix_web::test]
async fn client_features_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    add_segment(&service).await;
    let response = test::call_service(
        &service,
        get("/api/client/features?namePrefix=f", SDK).to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_default();
    let body: Value = test::read_body_json(response).await;
    assert_eq!(body["meta"]["etag"], json!(etag));
    insta::assert_json_snapshot!("client_features_inlined", body, {
        ".meta.revisionId" => "[revision]",
        ".meta.etag" => "[etag]",
    });

    let separate = get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "5.2.0"));
    let (status, body) = send(&service, separate).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!("client_features_separate_segments", body, {
        ".meta.revisionId" => "[revision]",
        ".meta.etag" => "[etag]",
        ".segments[].id" => "[id]",
        ".features[].strategies[].segments[]" => "[id]",
    });

    let cached =
        get("/api/client/features?namePrefix=f", SDK).insert_header(("If-None-Match", etag.as_str()));
    let response = test::call_service(&service, cached.to_request()).await;
    let status = response.status().as_u16();
    let same_etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        == Some(etag.as_str());
    let body = test::read_body(response).await;
    insta::assert_json_snapshot!(
        "client_features_not_modified",
        json!({"status": status, "sameETag": same_etag, "bodyBytes": body.len()})
    );
}

#[actix_web::test]
async fn client_features_error_with_a_bad_spec_header() {
    let app = TestApp::new();
    let service = app.service().await;
    let request = get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "soon"));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn client_feature_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    add_segment(&service).await;
    let (status, body) = send(&service, get("/api/client/features/f", SDK)).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn client_feature_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/client/features/missing", SDK)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}
