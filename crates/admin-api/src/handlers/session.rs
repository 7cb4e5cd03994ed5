//! `POST /auth/simple/login` and `POST /logout`.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{HttpRequest, web};
use chrono::Duration;
use flag_store::models::SessionRow;
use flag_store::queries;

use crate::AppState;
use crate::auth::SESSION_COOKIE;
use crate::dto::UserOut;
use crate::dto::session::LoginRequest;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Done, WithCookie};
use crate::{password, secrets};

/// How long a login lasts.
const SESSION_DAYS: i64 = 2;

/// Logging in and out.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(login, logout))]
pub struct Api;

/// Log in with an email or username and a password; sets the session cookie.
///
/// An email is matched first.
///
/// Attempts are limited per client address (429 with `Retry-After` past the limit), and an
/// unknown user costs one password verification like a known one, so neither guessing nor timing
/// tells who has an account.
#[utoipa::path(
    post,
    path = "/auth/simple/login",
    tag = "Auth",
    operation_id = "login",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Logged in: the user, and the session cookie", body = UserOut,
            headers(("Set-Cookie" = String, description = "The session cookie, `unleash-session`, HttpOnly, for two days"))),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 401, description = "Unknown user or wrong password", body = ErrorBody),
        (status = 429, description = "More than the allowed logins a minute from this address", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the next attempt may succeed"))),
    )
)]
pub async fn login(
    state: web::Data<AppState>,
    http: HttpRequest,
    Body(request): Body<LoginRequest>,
) -> Result<WithCookie<web::Json<UserOut>>, ApiError> {
    state.login_limiter.admit(&http)?;
    let login = request.username.trim().to_owned();
    let user = crate::db::run(&state.store, move |conn| {
        queries::users::find_by_login(conn, &login)
    })
    .await?;
    let stored = user.as_ref().and_then(|user| user.password_hash.clone());
    let candidate = request.password;
    let valid = state
        .cpu
        .run(move || password::verify(&candidate, stored.as_deref()))
        .await?;
    state.metrics.password_verified();
    let Some(user) = user else {
        return Err(ApiError::AuthenticationRequired);
    };
    let now = crate::now();
    let id = user.id;
    crate::db::run(&state.store, move |conn| {
        queries::users::record_login(conn, id, valid, now)
    })
    .await?;
    if !valid {
        return Err(ApiError::AuthenticationRequired);
    }
    let secret = secrets::random_hex(32).map_err(|error| ApiError::Internal(error.to_string()))?;
    let session = SessionRow {
        token_hash: secrets::verifier(&secret),
        user_id: user.id,
        created_at: now,
        expires_at: now + Duration::days(SESSION_DAYS),
    };
    crate::db::run(&state.store, move |conn| {
        queries::sessions::create(conn, &session)
    })
    .await?;
    let cookie = Cookie::build(SESSION_COOKIE, secret)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(state.settings.secure_cookies)
        .max_age(actix_web::cookie::time::Duration::days(SESSION_DAYS))
        .finish();
    let mut user = user;
    user.seen_at = Some(now);
    user.login_attempts = 0;
    Ok(WithCookie::new(web::Json(UserOut::from(user)), cookie))
}

/// End the session, if any, and clear the cookie.
#[utoipa::path(
    post,
    path = "/logout",
    tag = "Auth",
    operation_id = "logout",
    responses(
        (status = 200, description = "The session, if any, is over; the cookie is cleared",
            headers(("Set-Cookie" = String, description = "Removes the session cookie"))),
    )
)]
pub async fn logout(state: web::Data<AppState>, request: HttpRequest) -> Result<WithCookie<Done>, ApiError> {
    if let Some(cookie) = request.cookie(SESSION_COOKIE) {
        let hash = secrets::verifier(cookie.value());
        crate::db::run(&state.store, move |conn| queries::sessions::delete(conn, &hash)).await?;
    }
    let mut removal = Cookie::new(SESSION_COOKIE, "");
    removal.set_path("/");
    removal.set_secure(state.settings.secure_cookies);
    removal.make_removal();
    Ok(WithCookie::new(Done, removal))
}
