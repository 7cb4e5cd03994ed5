//! A feature's strategies in an environment: add, change, remove.

use actix_web::web;
use flag_admin::catalogue::features::types::{
    PatchOperationSchema, StrategyListItem, StrategyOrder, StrategyOut,
};
use flag_admin::catalogue::model::StrategySchema;
use flag_admin::catalogue::strategies;
use flag_admin::catalogue::strategies::types::StrategyRequest;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
use crate::respond::{Done, DoneAsJson};
use crate::state::AppState;

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
        (status = 404, description = "No such feature, environment or segment; the environment need not be enabled in the project", body = ErrorBody),
    ),
)]
pub async fn add(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
    ObjectBody(request): ObjectBody<StrategyRequest>,
) -> Result<web::Json<flag_eval::Strategy>, ApiError> {
    Ok(web::Json(
        strategies::add(&state.app, &caller, path.into_inner(), request).await?,
    ))
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
        (status = 200, description = "The strategy as stored, with every field", body = StrategyOut),
        (status = 400, description = "The strategy is not valid: its type is not defined, or a constraint value is not a legal value of its context field", body = ErrorBody),
        (status = 404, description = "No such feature, environment, strategy or segment", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String, String)>,
    ObjectBody(request): ObjectBody<StrategyRequest>,
) -> Result<web::Json<StrategyOut>, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    let place = (project, feature, environment);
    Ok(web::Json(StrategyOut::of(
        strategies::update(&state.app, &caller, place, id, request).await?,
    )))
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
        (status = 200, description = "Removed; an empty body typed `application/json`, as Unleash answers"),
        (status = 404, description = "No such feature, environment or strategy", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String, String)>,
) -> Result<DoneAsJson, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    strategies::delete(&state.app, &caller, (project, feature, environment), id).await?;
    Ok(DoneAsJson)
}

/// A flag's strategies in an environment, in evaluation order.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
    tag = "Features",
    operation_id = "getFeatureStrategies",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "The strategies", body = Vec<StrategyListItem>),
        (status = 404, description = "The flag does not have this environment", body = ErrorBody),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
) -> Result<web::Json<Vec<StrategyListItem>>, ApiError> {
    Ok(web::Json(
        strategies::list(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// One strategy of a flag.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Features",
    operation_id = "getFeatureStrategy",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
        ("environment" = String, Path, description = "The environment"),
        ("strategyId" = String, Path, description = "The strategy"),
    ),
    responses(
        (status = 200, description = "The strategy", body = StrategyOut),
        (status = 404, description = "No such flag or strategy", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String, String)>,
) -> Result<web::Json<StrategyOut>, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    Ok(web::Json(
        strategies::get(&state.app, &caller, (project, feature, environment), id).await?,
    ))
}

/// Sets the evaluation order of some of a flag's strategies in an environment.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order",
    tag = "Features",
    operation_id = "setStrategySortOrder",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
        ("environment" = String, Path, description = "The environment"),
    ),
    request_body = Vec<StrategyOrder>,
    responses(
        (status = 200, description = "Ordered; no body"),
        (status = 400, description = "The body breaks the schema, or names a strategy of another flag or environment", body = ErrorBody),
        (status = 404, description = "The flag does not have this environment", body = ErrorBody),
    ),
)]
pub async fn set_sort_order(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
    Body(orders): Body<Vec<StrategyOrder>>,
) -> Result<Done, ApiError> {
    strategies::set_sort_order(&state.app, &caller, path.into_inner(), orders).await?;
    Ok(Done)
}

/// Changes a strategy with a JSON Patch over `{id, name, constraints, parameters, variants,
/// segments, title, disabled, sortOrder}`; the result replaces the strategy as an update does.
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
    tag = "Features",
    operation_id = "patchFeatureStrategy",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
        ("environment" = String, Path, description = "The environment"),
        ("strategyId" = String, Path, description = "The strategy"),
    ),
    request_body = Vec<PatchOperationSchema>,
    responses(
        (status = 200, description = "The strategy", body = StrategyOut),
        (status = 400, description = "The patch does not apply, or its result is not a valid strategy", body = ErrorBody),
        (status = 404, description = "No such flag or strategy", body = ErrorBody),
    ),
)]
pub async fn patch(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String, String)>,
    Body(operations): Body<json_patch::Patch>,
) -> Result<web::Json<StrategyOut>, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    Ok(web::Json(
        strategies::patch(
            &state.app,
            &caller,
            (project, feature, environment),
            id,
            operations,
        )
        .await?,
    ))
}
