//! Single sign-on's settings and failures, in-process: the settings are checked before they are
//! stored and the secret never read back; password login goes off only while single sign-on is
//! on; settings from the environment cannot be changed; and every failed login is a page with
//! the status the API would give, never a 500. Logins through a real provider, in a real
//! browser, are in `tests/browser.rs`.

use actix_web::http::StatusCode;
use actix_web::test;
use flag_admin::Settings;
use flag_admin::dto::sso::OidcSettings;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, call, get, post, send};

const OIDC: &str = "/api/admin/auth/oidc/settings";
const PASSWORD: &str = "/api/admin/auth/simple/settings";

/// Settings that pass the checks, with a provider nothing listens at.
fn enabled() -> Value {
    json!({
        "enabled": true,
        "discoverUrl": "http://127.0.0.1:9/.well-known/openid-configuration",
        "clientId": "halyard",
        "secret": "very-secret",
        "autoCreate": true,
        "defaultRootRole": "Editor",
        // Unleash's web UI sends this too.
        "unleashHostname": "localhost"
    })
}

/// A console page: its status and text.
async fn page<S, B>(service: &S, path: &str, cookie: Option<(&str, &str)>) -> (StatusCode, String)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut request = test::TestRequest::get().uri(path);
    if let Some((name, value)) = cookie {
        request = request.cookie(actix_web::cookie::Cookie::new(name.to_owned(), value.to_owned()));
    }
    let page = call(service, request).await;
    (page.status, page.body)
}

#[actix_web::test]
async fn oidc_settings_are_checked_stored_and_never_read_back() -> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get(OIDC, ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["enabled"], json!(false), "{body}");

    let with = |change: Value| {
        let mut settings = enabled();
        if let (Some(settings), Value::Object(change)) = (settings.as_object_mut(), change) {
            settings.extend(change);
        }
        settings
    };
    for (bad, field) in [
        (with(json!({"discoverUrl": null})), "discoverUrl"),
        (
            with(json!({"discoverUrl": "ftp://login.example.com"})),
            "discoverUrl",
        ),
        (
            with(json!({"discoverUrl": "http://login.example.com"})),
            "discoverUrl",
        ),
        (with(json!({"discoverUrl": "not a url"})), "discoverUrl"),
        (with(json!({"clientId": " "})), "clientId"),
        (with(json!({"secret": null})), "secret"),
        (with(json!({"defaultRootRole": "Owner"})), "defaultRootRole"),
        (with(json!({"defaultRootRoleId": 4})), "defaultRootRoleId"),
        (
            with(json!({"idTokenSigningAlgorithm": "HS256"})),
            "idTokenSigningAlgorithm",
        ),
        (
            with(json!({"groupRootRoles": {"staff": "Boss"}})),
            "groupRootRoles",
        ),
        (with(json!({"enabled": "yes"})), "enabled"),
    ] {
        let (status, body) = send(&service, post(OIDC, ADMIN, bad.clone())).await;
        assert_error(status, &body, 400, "ValidationError");
        assert!(body.to_string().contains(field), "{field}: {body}");
    }
    let (status, body) = send(&service, post(OIDC, ADMIN, json!([]))).await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(&service, post(OIDC, ADMIN, enabled())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["secret"], json!("*****"), "{body}");
    assert_eq!(body["defaultRootRole"], json!("Editor"), "{body}");
    assert!(body.get("unleashHostname").is_none(), "{body}");
    let (_, read) = send(&service, get(OIDC, ADMIN)).await;
    assert_eq!(read, body);
    // The masked secret sent back keeps the stored one.
    let (status, body) = send(
        &service,
        post(OIDC, ADMIN, with(json!({"secret": "*****", "clientId": "other"}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let stored: Option<OidcSettings> =
        flag_store::queries::settings::get(&mut *app.store.connection()?, flag_admin::oidc::SETTING)?;
    let stored = stored.ok_or("the settings were stored")?;
    assert_eq!(
        (stored.secret.as_deref(), stored.client_id.as_deref()),
        (Some("very-secret"), Some("other"))
    );
    // The audit log records the change without the secret.
    let (_, events) = send(&service, get("/api/admin/events", ADMIN)).await;
    assert!(!events.to_string().contains("very-secret"), "{events}");
    Ok(())
}

#[actix_web::test]
async fn password_login_goes_off_only_while_single_sign_on_is_on() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!({"disabled": true}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!([true]))).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!({"disabled": "no"}))).await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(&service, post(OIDC, ADMIN, enabled())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (page_status, login) = page(&service, "/login", None).await;
    assert_eq!(page_status, StatusCode::OK);
    assert!(
        login.contains("Sign in with single sign-on") && login.contains("id=\"password\""),
        "{login}"
    );

    // Unleash's web UI learns from `/api/admin/user` how to log in.
    let anonymous = || test::TestRequest::get().uri("/api/admin/user");
    let (status, body) = send(&service, anonymous()).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    assert_eq!(
        (
            body["type"].clone(),
            body["defaultHidden"].clone(),
            body["options"].clone()
        ),
        (
            json!("password"),
            json!(false),
            json!([{"type": "oidc", "message": "Sign in with single sign-on", "path": "/auth/oidc/login"}])
        ),
        "{body}"
    );
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!({"disabled": true}))).await;
    assert_eq!(
        (status, body.clone()),
        (StatusCode::OK, json!({"disabled": true})),
        "{body}"
    );
    let (status, body) = send(&service, get(PASSWORD, ADMIN)).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"disabled": true})));
    let (_, login) = page(&service, "/login", None).await;
    assert!(
        login.contains("Sign in with single sign-on") && !login.contains("id=\"password\""),
        "{login}"
    );
    let (_, config) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(config["disablePasswordAuth"], json!(true), "{config}");
    assert_eq!(config["oidcConfiguredThroughEnv"], json!(false), "{config}");
    let (_, body) = send(&service, anonymous()).await;
    assert_eq!(body["defaultHidden"], json!(true), "{body}");
    let request = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": "admin", "password": "whatever-it-is"}));
    let (status, body) = send(&service, request).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    assert_eq!(
        body["message"],
        json!("Logging in with username/password has been disabled.")
    );
    // Nobody could sign in with single sign-on off too.
    let (status, body) = send(&service, post(OIDC, ADMIN, json!({"enabled": false}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
}

#[actix_web::test]
async fn settings_from_the_environment_cannot_be_changed() {
    let settings: OidcSettings = serde_json::from_value(enabled()).unwrap_or_default();
    let app = TestApp::with_settings(Settings {
        oidc: Some(settings),
        ..Settings::default()
    });
    let service = app.service().await;
    let (status, body) = send(&service, get(OIDC, ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["enabled"].clone(), body["secret"].clone()),
        (json!(true), json!("*****"))
    );
    let (status, body) = send(&service, post(OIDC, ADMIN, json!({"enabled": false}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("OIDC_ENABLED")),
        "{body}"
    );
    let (_, config) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(config["oidcConfiguredThroughEnv"], json!(true), "{config}");
    assert_eq!(config["disablePasswordAuth"], json!(false), "{config}");
}

#[actix_web::test]
async fn failed_logins_are_pages_with_their_status() {
    let app = TestApp::new();
    let service = app.service().await;
    // Single sign-on off.
    let (status, text) = page(&service, "/auth/oidc/login", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{text}");
    assert!(
        text.contains("Sign-in failed") && text.contains("not enabled"),
        "{text}"
    );

    let (status, body) = send(&service, post(OIDC, ADMIN, enabled())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The provider cannot be reached.
    let (status, text) = page(&service, "/auth/oidc/login?redirect=/flags", None).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert!(text.contains("discovery document could not be read"), "{text}");
    assert!(!text.contains("very-secret"), "{text}");
    // A callback this browser did not start, or one already used.
    let (status, text) = page(&service, "/auth/oidc/callback?code=c&state=s", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("did not start a login"), "{text}");
    let (status, text) = page(
        &service,
        "/auth/oidc/callback?code=c&state=s",
        Some(("halyard-oidc-login", "0123456789abcdef")),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("already used"), "{text}");
    let (status, text) = page(&service, "/auth/oidc/callback?error=access_denied", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    // A callback whose query does not read is a page too, with the console's headers.
    let page = call(
        &service,
        test::TestRequest::get().uri("/auth/oidc/callback?code=a&code=b"),
    )
    .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    let csp = page.csp.unwrap_or_default();
    assert!(csp.contains("form-action 'self'"), "{csp}");
    assert!(
        page.body.contains("<html") && page.body.contains("does not read"),
        "{}",
        page.body
    );
}
