//! API tokens: list, create, delete. Only their SHA-256 verifiers are stored.

use actix_web::web;
use flag_admin::identity::tokens;
use flag_admin::identity::tokens::types::{CreateToken, CreatedTokenOut, TokensOut, UpdateToken};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
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
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
) -> Result<web::Json<TokensOut>, ApiError> {
    Ok(web::Json(tokens::list(&state.app, &caller).await?))
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
        (status = 400, description = "The body breaks the schema, an admin type, or an unknown environment or project", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateToken>,
) -> Result<Created<CreatedTokenOut>, ApiError> {
    Ok(Created::at(
        "api-tokens",
        tokens::create(&state.app, &caller, request).await?,
    ))
}

/// Deletes the token given by its secret. An unknown secret changes nothing and is answered as a
/// delete, as Unleash answers it.
#[utoipa::path(
    delete,
    path = "/api/admin/api-tokens/{token}",
    tag = "API tokens",
    operation_id = "deleteApiToken",
    params(("token" = String, Path, description = "The token's secret")),
    responses(
        (status = 200, description = "Deleted, or there was no such token; no body"),
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

/// The tokens with this name, without their secrets.
#[utoipa::path(
    get,
    path = "/api/admin/api-tokens/{name}",
    tag = "API tokens",
    operation_id = "getApiTokensByName",
    params(
        ("name" = String, Path, description = "The token name"),
    ),
    responses(
        (status = 200, description = "The tokens; none when no token has the name", body = TokensOut),
    ),
)]
pub async fn by_name(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<TokensOut>, ApiError> {
    Ok(web::Json(
        tokens::by_name(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// Sets when a token stops working; a time in the past revokes it. An unknown secret changes nothing.
#[utoipa::path(
    put,
    path = "/api/admin/api-tokens/{token}",
    tag = "API tokens",
    operation_id = "updateApiToken",
    params(
        ("token" = String, Path, description = "The token's secret"),
    ),
    request_body = UpdateToken,
    responses(
        (status = 200, description = "Changed; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn set_expiry(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateToken>,
) -> Result<Done, ApiError> {
    tokens::set_expiry(&state.app, &caller, &path.into_inner(), request).await?;
    Ok(Done)
}

/// The client and frontend tokens that reach a project, those for every project included,
/// without their secrets.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/api-tokens",
    tag = "API tokens",
    operation_id = "getProjectApiTokens",
    params(
        ("projectId" = String, Path, description = "The project"),
    ),
    responses(
        (status = 200, description = "The tokens", body = TokensOut),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn of_project(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<TokensOut>, ApiError> {
    Ok(web::Json(
        tokens::of_project(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// Creates a client, backend or frontend token for one project.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/api-tokens",
    tag = "API tokens",
    operation_id = "createProjectApiToken",
    params(
        ("projectId" = String, Path, description = "The project"),
    ),
    request_body = CreateToken,
    responses(
        (status = 201, description = "The token, with its secret", body = CreatedTokenOut),
        (status = 400, description = "The body breaks the schema, or no such environment", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn create_for_project(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<CreateToken>,
) -> Result<Created<CreatedTokenOut>, ApiError> {
    let created = tokens::create_for_project(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Created::at("api-tokens", created))
}

/// Deletes a token limited to this project alone.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/api-tokens/{token}",
    tag = "API tokens",
    operation_id = "deleteProjectApiToken",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("token" = String, Path, description = "The token's secret"),
    ),
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 400, description = "The token is not limited to this project alone", body = ErrorBody),
        (status = 404, description = "No such token", body = ErrorBody),
    ),
)]
pub async fn delete_for_project(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    let (project, secret) = path.into_inner();
    tokens::delete_for_project(&state.app, &caller, project, &secret).await?;
    Ok(Done)
}
