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
pub async fn login(
    state: web::Data<AppState>,
    Body(request): Body<LoginRequest>,
) -> Result<HttpResponse, ApiError> {
    let login = request.username.trim().to_owned();
    let user = crate::db::run(&state.store, move |conn| {
        queries::users::find_by_login(conn, &login)
    })
    .await?;
    let Some(user) = user else {
        return Err(ApiError::AuthenticationRequired);
    };
    let stored = user.password_hash.clone().unwrap_or_default();
    let candidate = request.password;
    let valid = web::block(move || password::verify(&candidate, &stored)).await?;
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
    removal.make_removal();
    Ok(HttpResponse::Ok().cookie(removal).finish())
}
