//! `POST /auth/simple/login` and `POST /logout`.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{Duration, Utc};
use flag_store::models::SessionRow;
use flag_store::queries;
use serde::Deserialize;

use crate::AppState;
use crate::auth::SESSION_COOKIE;
use crate::dto::UserOut;
use crate::error::ApiError;
use crate::extract::Body;
use crate::{password, secrets};

/// How long a login lasts.
const SESSION_DAYS: i64 = 2;

/// Body of `POST /auth/simple/login`.
#[derive(Debug, Deserialize)]
pub struct LoginRequest {
    username: String,
    password: String,
}

/// Logs in with an email or username and a password; sets the session cookie.
///
/// Attempts are limited per client address (429 with `Retry-After` past the limit), and an
/// unknown user costs one password verification like a known one, so neither guessing nor timing
/// tells who has an account.
pub async fn login(
    state: web::Data<AppState>,
    http: HttpRequest,
    Body(request): Body<LoginRequest>,
) -> Result<HttpResponse, ApiError> {
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
    let now = Utc::now().naive_utc();
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
    Ok(HttpResponse::Ok().cookie(cookie).json(UserOut::from(user)))
}

/// Ends the session, if any, and clears the cookie.
pub async fn logout(state: web::Data<AppState>, request: HttpRequest) -> Result<HttpResponse, ApiError> {
    if let Some(cookie) = request.cookie(SESSION_COOKIE) {
        let hash = secrets::verifier(cookie.value());
        crate::db::run(&state.store, move |conn| queries::sessions::delete(conn, &hash)).await?;
    }
    let mut removal = Cookie::new(SESSION_COOKIE, "");
    removal.set_path("/");
    removal.set_secure(state.settings.secure_cookies);
    removal.make_removal();
    Ok(HttpResponse::Ok().cookie(removal).finish())
}
