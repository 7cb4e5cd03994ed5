//! A feature's strategies in an environment: add, change, remove.

use actix_web::web;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::Permission;
use crate::dto::model::StrategySchema;
use crate::dto::strategies::StrategyRequest;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Done;

/// The strategies' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(add, update, delete))]
pub struct Api;

/// Adds a strategy to a feature in an environment.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
    tag = "Features",
    operation_id = "addFeatureStrategy",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
    ),
    request_body = StrategyRequest,
    responses(
        (status = 200, description = "The strategy, with its id", body = StrategySchema),
        (status = 400, description = "The strategy is not valid: its type is not defined, or a constraint value is not a legal value of its context field", body = ErrorBody),
        (status = 403, description = "Not allowed in this environment", body = ErrorBody),
        (status = 404, description = "No such feature, environment or segment; the environment need not be enabled in the project", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn add(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
    Body(request): Body<StrategyRequest>,
) -> Result<web::Json<flag_eval::Strategy>, ApiError> {
    let (project, feature, environment) = path.into_inner();
    principal.require_write(Permission::CreateFeatureStrategy, Some(&environment))?;
    let input = request.into_input(&feature)?;
    let actor = principal.actor().to_owned();
    let now = crate::now();
    let strategy = crate::db::run(&state.store, move |conn| {
        queries::strategies::add(conn, &project, &feature, &environment, &input, &actor, now)
    })
    .await?;
    Ok(web::Json(strategy))
}

/// Replaces a strategy.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Features",
    operation_id = "updateFeatureStrategy",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
        ("strategyId" = String, Path, description = "The strategy"),
    ),
    request_body = StrategyRequest,
    responses(
        (status = 200, description = "The strategy", body = StrategySchema),
        (status = 400, description = "The strategy is not valid: its type is not defined, or a constraint value is not a legal value of its context field", body = ErrorBody),
        (status = 403, description = "Not allowed in this environment", body = ErrorBody),
        (status = 404, description = "No such feature, environment, strategy or segment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String, String)>,
    Body(request): Body<StrategyRequest>,
) -> Result<web::Json<flag_eval::Strategy>, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    principal.require_write(Permission::UpdateFeatureStrategy, Some(&environment))?;
    let input = request.into_input(&feature)?;
    let actor = principal.actor().to_owned();
    let now = crate::now();
    let strategy = crate::db::run(&state.store, move |conn| {
        queries::strategies::update(conn, &project, &feature, &environment, &id, &input, &actor, now)
    })
    .await?;
    Ok(web::Json(strategy))
}

/// Removes a strategy.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Features",
    operation_id = "deleteFeatureStrategy",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
        ("strategyId" = String, Path, description = "The strategy"),
    ),
    responses(
        (status = 200, description = "Removed; no body"),
        (status = 403, description = "Not allowed in this environment", body = ErrorBody),
        (status = 404, description = "No such feature, environment or strategy", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String, String)>,
) -> Result<Done, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    principal.require_write(Permission::DeleteFeatureStrategy, Some(&environment))?;
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::strategies::delete(conn, &project, &feature, &environment, &id, &actor, now)
    })
    .await?;
    Ok(Done)
}
