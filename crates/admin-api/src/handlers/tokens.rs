//! API tokens: list, create, delete. Only their SHA-256 verifiers are stored.

use actix_web::web;
use flag_store::models::NewApiToken;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::TokenType;
use crate::dto::tokens::{CreateToken, CreatedTokenOut, TokenOut, TokensOut};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, Done};
use crate::secrets;

/// The API tokens' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create, delete))]
pub struct Api;

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
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    principal: Principal,
) -> Result<web::Json<TokensOut>, ApiError> {
    principal.require_admin_read()?;
    let rows = crate::db::run(&state.store, queries::api_tokens::list).await?;
    let tokens = rows
        .into_iter()
        .map(TokenOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(web::Json(TokensOut { tokens }))
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
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateToken>,
) -> Result<Created<CreatedTokenOut>, ApiError> {
    principal.require_admin()?;
    if request.token_type == TokenType::Admin {
        return Err(ApiError::invalid(
            "/type",
            "/type must be client, backend or frontend",
        ));
    }
    let token_name = request
        .token_name
        .or(request.username)
        .map(|name| name.trim().to_owned())
        .unwrap_or_default();
    if token_name.is_empty() {
        return Err(ApiError::invalid("/tokenName", "/tokenName must not be empty"));
    }
    let environment = request.environment.unwrap_or_else(|| "development".into());
    let projects = request
        .projects
        .or_else(|| request.project.map(|project| vec![project]))
        .unwrap_or_else(|| vec!["*".into()]);
    let project_part = crate::dto::tokens::project_part(&projects);
    let secret = format!(
        "{project_part}:{environment}.{}",
        secrets::random_hex(28).map_err(|error| ApiError::Internal(error.to_string()))?
    );
    let token = NewApiToken {
        token_name,
        secret_hash: secrets::verifier(&secret),
        token_type: request.token_type.as_str().to_owned(),
        environment: environment.clone(),
        projects: serde_json::to_string(&projects).map_err(|error| ApiError::Internal(error.to_string()))?,
        expires_at: request.expires_at.map(|at| at.0.naive_utc()),
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::environments::get(conn, &environment)?;
        queries::api_tokens::create(conn, &token, &actor)
    })
    .await
    .map_err(|error| match error {
        ApiError::NotFound(message) => ApiError::bad_request(message),
        other => other,
    })?;
    Ok(Created::at(
        "api-tokens",
        CreatedTokenOut {
            secret,
            token_name: row.token_name,
            token_type: row.token_type,
            environment: row.environment,
            project: project_part,
            projects,
            expires_at: row.expires_at.map(crate::dto::iso),
            created_at: crate::dto::iso(row.created_at),
            seen_at: None,
            alias: None,
        },
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
    security(("apiKey" = []), ("session" = []))
)]
pub async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    principal.require_admin()?;
    let hash = secrets::verifier(&path.into_inner());
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        let token = queries::api_tokens::find_by_hash(conn, &hash)?
            .ok_or_else(|| flag_store::StoreError::not_found("api token", "(secret)"))?;
        queries::api_tokens::delete(conn, token.id, &actor, now)
    })
    .await?;
    Ok(Done)
}
