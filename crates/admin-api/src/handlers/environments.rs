//! Environments: list, create, switch on and off.

use actix_web::web;
use flag_store::models::EnvironmentRow;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::dto::environments::{CreateEnvironment, EnvironmentOut, EnvironmentsOut};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, NoContent};

/// The environments' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create, on, off))]
pub struct Api;

/// Every environment, by display order.
#[utoipa::path(
    get,
    path = "/api/admin/environments",
    tag = "Environments",
    operation_id = "getAllEnvironments",
    responses(
        (status = 200, description = "The environments", body = EnvironmentsOut),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<web::Json<EnvironmentsOut>, ApiError> {
    let rows = crate::db::run(&state.store, queries::environments::list).await?;
    Ok(web::Json(EnvironmentsOut {
        version: 1,
        environments: rows.into_iter().map(EnvironmentOut::from).collect(),
    }))
}

/// Creates an environment.
#[utoipa::path(
    post,
    path = "/api/admin/environments",
    tag = "Environments",
    operation_id = "createEnvironment",
    request_body = CreateEnvironment,
    responses(
        (status = 201, description = "The environment", body = EnvironmentOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateEnvironment>,
) -> Result<Created<EnvironmentOut>, ApiError> {
    principal.require_admin()?;
    let row = EnvironmentRow {
        name: request.name.into_string(),
        environment_type: request.environment_type,
        sort_order: request.sort_order.unwrap_or(1000),
        enabled: request.enabled.unwrap_or(true),
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::environments::create(conn, &row, &actor)
    })
    .await?;
    Ok(Created::new(EnvironmentOut::from(row)))
}

/// Turns an environment on.
#[utoipa::path(
    post,
    path = "/api/admin/environments/{name}/on",
    tag = "Environments",
    operation_id = "toggleEnvironmentOn",
    params(("name" = String, Path, description = "The environment")),
    responses(
        (status = 204, description = "Turned on"),
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn on(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<NoContent, ApiError> {
    switch(&state, &principal, path.into_inner(), true).await
}

/// Turns an environment off.
#[utoipa::path(
    post,
    path = "/api/admin/environments/{name}/off",
    tag = "Environments",
    operation_id = "toggleEnvironmentOff",
    params(("name" = String, Path, description = "The environment")),
    responses(
        (status = 204, description = "Turned off"),
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn off(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<NoContent, ApiError> {
    switch(&state, &principal, path.into_inner(), false).await
}

async fn switch(
    state: &AppState,
    principal: &Principal,
    name: String,
    enabled: bool,
) -> Result<NoContent, ApiError> {
    principal.require_admin()?;
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::environments::set_enabled(conn, &name, enabled, &actor, now)
    })
    .await?;
    Ok(NoContent)
}
