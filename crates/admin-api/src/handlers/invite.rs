//! Public signup tokens (`/api/admin/invite-link/tokens`) and signing up with one
//! (`/invite/{token}/...`).

use actix_web::{HttpRequest, web};
use flag_admin::identity::invite;
use flag_admin::identity::invite::types::{
    CreateInvitedUserRequest, CreateSignupTokenRequest, SignupTokenResponse, SignupTokensResponse,
    UpdateSignupTokenRequest,
};
use flag_admin::identity::users::types::UserOut;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ObjectBody, client_address};
use crate::respond::{Created, Done};
use crate::state::AppState;

/// List public signup tokens.
#[utoipa::path(
    get,
    path = "/api/admin/invite-link/tokens",
    tag = "Public signup",
    operation_id = "getAllPublicSignupTokens",
    responses(
        (status = 200, description = "Every public signup token", body = SignupTokensResponse),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<SignupTokensResponse>, ApiError> {
    Ok(web::Json(invite::list(&state.app).await?))
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
        (status = 404, description = "No token has this secret", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<SignupTokenResponse>, ApiError> {
    Ok(web::Json(invite::get(&state.app, path.into_inner()).await?))
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
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateSignupTokenRequest>,
) -> Result<Created<SignupTokenResponse>, ApiError> {
    let token = invite::create(&state.app, &caller, request).await?;
    Ok(Created::at(format!("tokens/{}", token.secret()), token))
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
        (status = 404, description = "No token has this secret", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateSignupTokenRequest>,
) -> Result<web::Json<SignupTokenResponse>, ApiError> {
    Ok(web::Json(
        invite::update(&state.app, &caller, path.into_inner(), request).await?,
    ))
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
    invite::validate(&state.app, path.into_inner()).await?;
    Ok(Done)
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
    ObjectBody(request): ObjectBody<CreateInvitedUserRequest>,
) -> Result<web::Json<UserOut>, ApiError> {
    let user = invite::sign_up(
        &state.app,
        state.app.identity(),
        client_address(&http),
        path.into_inner(),
        request,
    )
    .await?;
    Ok(web::Json(user))
}
