//! The test application: the real app from `build_app` on its own scratch database of the
//! backend under test (`HALYARD_TEST_DATABASE`, see `flag_store::scratch`), with an admin token.

#![allow(dead_code, reason = "the hostile suite uses only the process helpers")]

pub mod process;
pub mod sse;

use actix_web::body::MessageBody;
use actix_web::cookie::Cookie;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::{test, web};
use admin_api::{AppState, build_app};
use flag_admin::app::seeding::seed_admin_tokens;
use flag_admin::{Ctx, Settings};
use flag_store::Store;
use flag_store::scratch::Scratch;
use serde_json::{Value, json};

pub const ADMIN: &str = "*:*.test-admin-secret-0123456789";
pub const PRODUCTION_ADMIN: &str = "*:production.production-only-secret";
/// A backend token for `development` and every project: what SDKs send to the client API, which
/// refuses admin tokens.
pub const SDK: &str = "*:development.sdk-secret";

/// The names of a client document's flags, in its order.
pub fn flag_names(document: &Value) -> Vec<&str> {
    document["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|feature| feature["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// The time `delta` from now, as the API writes times (`2026-01-01T00:00:00.000Z`): tests give
/// times relative to the clock, never a date of the calendar.
pub fn time_from_now(delta: chrono::TimeDelta) -> String {
    (chrono::Utc::now() + delta).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A time a year from now, for expiries that must lie in the future.
pub fn next_year() -> String {
    time_from_now(chrono::TimeDelta::days(365))
}

pub struct TestApp {
    pub state: web::Data<AppState>,
    /// The store under the app, for tests that set up or inspect rows directly.
    pub store: Store,
    pub scratch: Scratch,
}

impl TestApp {
    /// The app with limits on signups and logins high enough for the tests' own requests.
    pub fn new() -> Self {
        Self::with_settings(Settings {
            signups_per_minute: 100,
            logins_per_minute: 100,
            ..Settings::default()
        })
    }

    pub fn with_settings(settings: Settings) -> Self {
        let scratch = Scratch::new().unwrap_or_else(|error| panic!("{error}"));
        let store = scratch.open().unwrap_or_else(|error| panic!("{error}"));
        seed_admin_tokens(&store, &[ADMIN.into(), PRODUCTION_ADMIN.into()])
            .unwrap_or_else(|error| panic!("{error}"));
        let ctx = Ctx::new(store.clone(), settings).unwrap_or_else(|error| panic!("{error}"));
        let app = Self {
            state: web::Data::new(AppState::new(ctx)),
            store,
            scratch,
        };
        app.store_token(SDK, "backend", "development", &["*"])
            .unwrap_or_else(|error| panic!("{error}"));
        app
    }

    /// Stores an API token with `secret` directly, as `INIT_BACKEND_API_TOKENS` would.
    pub fn store_token(
        &self,
        secret: &str,
        token_type: &str,
        environment: &str,
        projects: &[&str],
    ) -> Result<(), flag_store::StoreError> {
        let projects: Vec<String> = projects.iter().map(|&project| project.to_owned()).collect();
        let token = flag_store::models::NewApiToken::new(
            format!("{token_type}-{environment}"),
            flag_admin::runtime::secrets::verifier(secret),
            flag_store::models::TokenType::parse(token_type)
                .unwrap_or_else(|| panic!("unknown token type {token_type}")),
            environment.into(),
            flag_store::models::TokenProjects::from(projects),
            None,
            chrono::Utc::now().naive_utc(),
        );
        flag_store::queries::api_tokens::create(
            &mut *self.store.connection()?,
            &token,
            &flag_store::models::Actor::system(),
        )
        .map(drop)
    }

    /// Imports an SDK document into `environment` of the `default` project, as `halyard import`
    /// does.
    pub fn import(
        &self,
        environment: &str,
        document: &flag_eval::ClientFeatures,
    ) -> Result<flag_store::queries::import::ImportReport, flag_store::StoreError> {
        flag_store::queries::import::client_features(
            &mut *self.store.connection()?,
            "default",
            environment,
            document,
            &flag_store::models::Actor::system(),
            chrono::Utc::now().naive_utc(),
        )
    }

    pub async fn service(
        &self,
    ) -> impl Service<actix_http::Request, Response = ServiceResponse<impl MessageBody>, Error = actix_web::Error>
    {
        test::init_service(build_app(self.state.clone())).await
    }
}

/// Sends a request and returns the status and the body as JSON (`Null` when empty).
pub async fn send<S, B>(service: &S, request: test::TestRequest) -> (StatusCode, Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let response = test::call_service(service, request.to_request()).await;
    let status = response.status();
    let bytes = test::read_body(response).await;
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    (status, body)
}

pub fn post(path: &str, token: &str, body: Value) -> test::TestRequest {
    test::TestRequest::post()
        .uri(path)
        .insert_header(("Authorization", token))
        .set_json(body)
}

pub fn put(path: &str, token: &str, body: Value) -> test::TestRequest {
    test::TestRequest::put()
        .uri(path)
        .insert_header(("Authorization", token))
        .set_json(body)
}

pub fn patch(path: &str, token: &str, body: Value) -> test::TestRequest {
    test::TestRequest::patch()
        .uri(path)
        .insert_header(("Authorization", token))
        .set_json(body)
}

pub fn delete(path: &str, token: &str) -> test::TestRequest {
    test::TestRequest::delete()
        .uri(path)
        .insert_header(("Authorization", token))
}

pub fn get(path: &str, token: &str) -> test::TestRequest {
    test::TestRequest::get()
        .uri(path)
        .insert_header(("Authorization", token))
}

/// Asserts Unleash's error envelope with a UUID id and returns the body.
pub fn assert_error(status: StatusCode, body: &Value, expected_status: u16, name: &str) {
    assert_eq!(status.as_u16(), expected_status, "{body}");
    assert_eq!(body["name"], json!(name), "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
    let id = body["id"].as_str().unwrap_or_default();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "id {id:?} is not a UUID");
}

/// Sends `request`, checks that it answered `expected`, and returns its body.
pub async fn expect<S, B>(service: &S, request: test::TestRequest, expected: StatusCode) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, body) = send(service, request).await;
    assert_eq!(status, expected, "{body}");
    body
}

/// Creates flag `name` in the `default` project, without strategies and off everywhere.
pub async fn create_feature<S, B>(service: &S, name: &str)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    expect(
        service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": name}),
        ),
        StatusCode::CREATED,
    )
    .await;
}

/// Creates a feature with a `default` strategy, enabled in both environments.
pub async fn seed_feature<S, B>(service: &S, name: &str)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, body) = send(
        service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": name}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for environment in ["development", "production"] {
        let base = format!("/api/admin/projects/default/features/{name}/environments/{environment}");
        let (status, body) = send(
            service,
            post(&format!("{base}/strategies"), ADMIN, json!({"name": "default"})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, _) = send(service, post(&format!("{base}/on"), ADMIN, json!({}))).await;
        assert_eq!(status, StatusCode::OK);
    }
}

/// A password that passes the password rules, for users the tests create.
pub const USER_PASSWORD: &str = "Corr3ct-Horse!";

/// Creates a user with `email` and the root role `role` (1 Admin, 2 Editor, 3 Viewer), logs
/// them in and returns the session cookie.
pub async fn signed_in<S, B>(service: &S, email: &str, role: i32) -> actix_web::cookie::Cookie<'static>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, body) = send(
        service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": email, "rootRole": role, "password": USER_PASSWORD}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    login(service, email, USER_PASSWORD).await
}

/// A JSON `POST` as the user whose session `cookie` holds.
pub fn post_as(path: &str, cookie: &Cookie<'static>, body: Value) -> test::TestRequest {
    test::TestRequest::post()
        .uri(path)
        .cookie(cookie.clone())
        .set_json(body)
}

/// Logs in and returns the session cookie; panics when the login does not succeed.
pub async fn login<S, B>(service: &S, username: &str, password: &str) -> actix_web::cookie::Cookie<'static>
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let request = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": username, "password": password}));
    let response = test::call_service(service, request.to_request()).await;
    assert_eq!(response.status(), StatusCode::OK, "login as {username}");
    response
        .response()
        .cookies()
        .find(|cookie| cookie.name() == admin_api::auth::SESSION_COOKIE)
        .map_or_else(
            || panic!("no session cookie for {username}"),
            actix_web::cookie::Cookie::into_owned,
        )
}

/// Asks the deprecated playground about `context` in `environment` and returns the entry of
/// feature `name` (`Null` when it is not listed).
pub async fn played_feature<S, B>(service: &S, environment: &str, context: Value, name: &str) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let request = json!({"environment": environment, "context": context});
    let (status, body) = send(service, post("/api/admin/playground", ADMIN, request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["features"]
        .as_array()
        .and_then(|features| features.iter().find(|feature| feature["name"] == name))
        .cloned()
        .unwrap_or_default()
}

/// Creates an invite link valid for a week and returns it as the API answers.
pub async fn create_invite<S, B>(service: &S) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let expires_at = (chrono::Utc::now() + chrono::Duration::days(7)).to_rfc3339();
    let (status, token) = send(
        service,
        post(
            "/api/admin/invite-link/tokens",
            ADMIN,
            json!({"name": "team", "expiresAt": expires_at}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{token}");
    token
}

/// Asserts a 429 whose `Retry-After` is a whole number of seconds within the minute.
pub fn assert_retry_after<B>(response: &ServiceResponse<B>) {
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry = response
        .headers()
        .get("Retry-After")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    assert!(
        retry.is_some_and(|seconds| (1..=60).contains(&seconds)),
        "{retry:?}"
    );
}

/// Log output written to memory, to check what the server logs.
#[derive(Clone, Default)]
pub struct Captured(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A page's status, headers we check, and body.
pub struct Page {
    pub status: StatusCode,
    pub location: Option<String>,
    pub csp: Option<String>,
    /// The session cookie it set, if any.
    pub cookie: Option<Cookie<'static>>,
    pub body: String,
}

/// Sends `request` to a console page and reads its answer.
pub async fn call<S, B>(service: &S, request: test::TestRequest) -> Page
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let response = test::call_service(service, request.to_request()).await;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let status = response.status();
    let location = header("location");
    let csp = header("content-security-policy");
    let cookie = response
        .response()
        .cookies()
        .find(|cookie| cookie.name() == admin_api::auth::SESSION_COOKIE)
        .map(Cookie::into_owned);
    let body = String::from_utf8_lossy(&test::read_body(response).await).into_owned();
    Page {
        status,
        location,
        csp,
        cookie,
        body,
    }
}
