//! Public signup tokens (`/api/admin/invite-link/tokens`) and signing up with one
//! (`/invite/{token}/...`).

use actix_web::{HttpRequest, web};
use chrono::Months;
use flag_store::models::{NewUser, SignupTokenRow};
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::RootRole;
use crate::dto::invite::{
    CreateInvitedUserRequest, CreateSignupTokenRequest, SignupTokenResponse, SignupTokensResponse,
    UpdateSignupTokenRequest,
};
use crate::dto::{self, UserOut};
use crate::error::{ApiError, Detail, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, Done};
use crate::{password, secrets};

/// Public signup's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(validate, sign_up, list, create, get, update))]
pub struct Api;

/// List public signup tokens.
#[utoipa::path(
    get,
    path = "/api/admin/invite-link/tokens",
    tag = "Public signup",
    operation_id = "getAllPublicSignupTokens",
    responses(
        (status = 200, description = "Every public signup token", body = SignupTokensResponse),
        (status = 403, description = "Not an administrator", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    principal: Principal,
) -> Result<web::Json<SignupTokensResponse>, ApiError> {
    principal.require_admin_read()?;
    let tokens = crate::db::run(&state.store, queries::signup_tokens::list).await?;
    Ok(web::Json(SignupTokensResponse::new(tokens, crate::now())))
}

/// One public signup token.
#[utoipa::path(
    get,
    path = "/api/admin/invite-link/tokens/{token}",
    tag = "Public signup",
    operation_id = "getPublicSignupToken",
    params(("token" = String, Path, description = "The token's secret")),
    responses(
        (status = 200, description = "The token", body = SignupTokenResponse),
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "No token has this secret", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<web::Json<SignupTokenResponse>, ApiError> {
    principal.require_admin_read()?;
    let secret = path.into_inner();
    let token = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::get(conn, &secret)
    })
    .await?;
    Ok(web::Json(SignupTokenResponse::new(token, crate::now())))
}

/// Create a public signup token.
///
/// Expiry is capped at one month; users who sign up with it are Viewers.
#[utoipa::path(
    post,
    path = "/api/admin/invite-link/tokens",
    tag = "Public signup",
    operation_id = "createPublicSignupToken",
    request_body = CreateSignupTokenRequest,
    responses(
        (status = 201, description = "The token, created; users who sign up with it are Viewers", body = SignupTokenResponse,
            headers(("Location" = String, description = "`tokens/{secret}`, relative to this path"))),
        (status = 400, description = "The body breaks the schema, or the name is empty", body = ErrorBody),
        (status = 403, description = "Not an administrator, or a token limited to some environments", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateSignupTokenRequest>,
) -> Result<Created<SignupTokenResponse>, ApiError> {
    principal.require_admin()?;
    if request.name.trim().is_empty() {
        return Err(ApiError::invalid("/name", "/name must not be empty"));
    }
    let now = crate::now().and_utc();
    let cap = now.checked_add_months(Months::new(1)).unwrap_or(now);
    let secret = secrets::random_hex(16).map_err(|error| ApiError::Internal(error.to_string()))?;
    let row = SignupTokenRow {
        url: Some(format!(
            "{}/new-user?invite={secret}",
            state.settings.unleash_url.trim_end_matches('/')
        )),
        secret,
        name: request.name,
        role_id: RootRole::Viewer.id(),
        enabled: true,
        expires_at: request.expires_at.0.min(cap).naive_utc(),
        created_at: now.naive_utc(),
        created_by: Some(principal.actor().to_owned()),
    };
    let actor = principal.actor().to_owned();
    let token = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::create(conn, &row, &actor)
    })
    .await?;
    let location = format!("tokens/{}", token.token.secret);
    Ok(Created::at(
        location,
        SignupTokenResponse::new(token, now.naive_utc()),
    ))
}

/// Update a public signup token's expiry or switch.
///
/// Answers with the whole token, as GET does.
#[utoipa::path(
    put,
    path = "/api/admin/invite-link/tokens/{token}",
    tag = "Public signup",
    operation_id = "updatePublicSignupToken",
    params(("token" = String, Path, description = "The token's secret")),
    request_body = UpdateSignupTokenRequest,
    responses(
        (status = 200, description = "The whole token, changed", body = SignupTokenResponse),
        (status = 400, description = "The body breaks the schema (a field is `null`) or names neither field", body = ErrorBody),
        (status = 403, description = "Not an administrator, or a token limited to some environments", body = ErrorBody),
        (status = 404, description = "No token has this secret", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
    Body(request): Body<UpdateSignupTokenRequest>,
) -> Result<web::Json<SignupTokenResponse>, ApiError> {
    principal.require_admin()?;
    if request.expires_at.is_none() && request.enabled.is_none() {
        return Err(ApiError::invalid("/", "give expiresAt, enabled or both"));
    }
    let secret = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    let token = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::update(
            conn,
            &secret,
            request.expires_at.map(|time| time.0.naive_utc()),
            request.enabled,
            &actor,
            now,
        )
    })
    .await?;
    Ok(web::Json(SignupTokenResponse::new(token, now)))
}

/// Whether an invite link can be used.
///
/// 200 when it can; the same 400 for an unknown, switched-off or expired token.
#[utoipa::path(
    get,
    path = "/invite/{token}/validate",
    tag = "Public signup",
    operation_id = "validatePublicSignupToken",
    params(("token" = String, Path, description = "The token's secret, from the invite link")),
    responses(
        (status = 200, description = "The token can be used"),
        (status = 400, description = "The token is unknown, switched off or expired: one answer for all three", body = ErrorBody),
    )
)]
pub async fn validate(state: web::Data<AppState>, path: web::Path<String>) -> Result<Done, ApiError> {
    let secret = path.into_inner();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::validate(conn, &secret, now)
    })
    .await?;
    Ok(Done)
}

fn check_signup(request: &CreateInvitedUserRequest) -> Result<(), ApiError> {
    let mut details = dto::person_problems(
        Some(&request.email),
        request.username.as_deref(),
        Some(&request.name),
    );
    details.extend(
        password::broken_rules(&request.password)
            .into_iter()
            .map(|rule| Detail::at("/password", rule)),
    );
    ApiError::check(details)
}

/// Add a user (Viewer) with a signup token.
///
/// Limited per client address; the body is checked before the token, and the token before the
/// password is hashed.
#[utoipa::path(
    post,
    path = "/invite/{token}/signup",
    tag = "Public signup",
    operation_id = "addPublicSignupTokenUser",
    params(("token" = String, Path, description = "The token's secret, from the invite link")),
    request_body = CreateInvitedUserRequest,
    responses(
        (status = 200, description = "The user, created as a Viewer", body = UserOut),
        (status = 400, description = "The body breaks the schema, a text rule or a password rule (every broken rule is listed), or the token is unknown, switched off or expired", body = ErrorBody),
        (status = 409, description = "The email or username is taken", body = ErrorBody),
        (status = 429, description = "Too many signups from this address", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the next attempt may succeed"))),
    )
)]
pub async fn sign_up(
    state: web::Data<AppState>,
    http: HttpRequest,
    path: web::Path<String>,
    Body(request): Body<CreateInvitedUserRequest>,
) -> Result<web::Json<UserOut>, ApiError> {
    state.signup_limiter.admit(&http)?;
    check_signup(&request)?;
    let secret = path.into_inner();
    let now = crate::now();
    // Check the token first so an unusable one never pays for a hash; the signup transaction
    // checks it again.
    let token = secret.clone();
    crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::validate(conn, &token, now)
    })
    .await?;
    let password = request.password;
    let hash = state
        .cpu
        .run(move || password::hash(&password))
        .await?
        .map_err(|error| ApiError::Internal(format!("password hashing failed: {error}")))?;
    let user = NewUser {
        name: Some(request.name.trim().to_owned()),
        username: request.username.map(|username| username.trim().to_owned()),
        email: Some(request.email.trim().to_owned()),
        password_hash: Some(hash),
        root_role: RootRole::Viewer.id(),
        created_at: now,
    };
    let user = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::sign_up(conn, &secret, &user, now)
    })
    .await
    .map_err(|error| match error {
        ApiError::NameExists(_) => {
            ApiError::NameExists("a user with that email or username already exists".into())
        }
        other => other,
    })?;
    Ok(web::Json(UserOut::from(user)))
}
