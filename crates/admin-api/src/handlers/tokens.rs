//! API tokens: list, create, delete. Only their SHA-256 verifiers are stored.

use actix_web::web;
use flag_admin::dto::tokens::{CreateToken, CreatedTokenOut, TokensOut};
use flag_admin::tokens;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// Every token, without its secret.
#[utoipa::path(
    get,
    path = "/api/admin/api-tokens",
    tag = "API tokens",
    operation_id = "getAllApiTokens",
    responses(
        (status = 200, description = "The tokens", body = TokensOut),
        (status = 403, description = "Not an administrator", body = ErrorBody),
    ),
)]
pub async fn list(state: web::Data<AppState>, _caller: Admitted) -> Result<web::Json<TokensOut>, ApiError> {
    Ok(web::Json(tokens::list(&state.app).await?))
}

/// Creates a client, backend or frontend token; the answer is the only one with its secret.
#[utoipa::path(
    post,
    path = "/api/admin/api-tokens",
    tag = "API tokens",
    operation_id = "createApiToken",
    request_body = CreateToken,
    responses(
        (status = 201, description = "The token with its secret", body = CreatedTokenOut, headers(("Location" = String, description = "api-tokens"))),
        (status = 400, description = "The body breaks the schema, an admin type, or an unknown environment", body = ErrorBody),
        (status = 403, description = "Not an administrator", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(request): Body<CreateToken>,
) -> Result<Created<CreatedTokenOut>, ApiError> {
    Ok(Created::at(
        "api-tokens",
        tokens::create(&state.app, &caller, request).await?,
    ))
}

/// Deletes the token given by its secret.
#[utoipa::path(
    delete,
    path = "/api/admin/api-tokens/{token}",
    tag = "API tokens",
    operation_id = "deleteApiToken",
    params(("token" = String, Path, description = "The token's secret")),
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "No such token", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    tokens::delete(&state.app, &caller, &path.into_inner()).await?;
    Ok(Done)
}
