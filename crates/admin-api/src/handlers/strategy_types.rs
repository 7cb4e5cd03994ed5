//! Strategy types: list and register.

use actix_web::web;
use flag_admin::catalogue::strategy_types;
use flag_admin::catalogue::strategy_types::types::{
    CreateStrategyType, StrategyTypeOut, StrategyTypesOut, UpdateStrategyType,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// Every strategy type, in Unleash's order: the built-in types (`flexibleRollout`, `default`,
/// `remoteAddress`, `applicationHostname`), then the custom ones by name.
#[utoipa::path(
    get,
    path = "/api/admin/strategies",
    tag = "Strategies",
    operation_id = "getAllStrategies",
    responses(
        (status = 200, description = "The strategy types", body = StrategyTypesOut),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<StrategyTypesOut>, ApiError> {
    Ok(web::Json(strategy_types::list(&state.app).await?))
}

/// Registers a custom strategy type.
#[utoipa::path(
    post,
    path = "/api/admin/strategies",
    tag = "Strategies",
    operation_id = "createStrategy",
    request_body = CreateStrategyType,
    responses(
        (status = 201, description = "The strategy type", body = StrategyTypeOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateStrategyType>,
) -> Result<Created<StrategyTypeOut>, ApiError> {
    Ok(Created::new(
        strategy_types::create(&state.app, &caller, request).await?,
    ))
}

/// One strategy type.
#[utoipa::path(
    get,
    path = "/api/admin/strategies/{name}",
    tag = "Strategies",
    operation_id = "getStrategy",
    params(
        ("name" = String, Path, description = "The strategy type"),
    ),
    responses(
        (status = 200, description = "The strategy type", body = StrategyTypeOut),
        (status = 404, description = "No such strategy type", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<StrategyTypeOut>, ApiError> {
    Ok(web::Json(
        strategy_types::get(&state.app, path.into_inner()).await?,
    ))
}

/// Replaces a custom strategy type's title, description and parameters; built-in types cannot change.
#[utoipa::path(
    put,
    path = "/api/admin/strategies/{name}",
    tag = "Strategies",
    operation_id = "updateStrategy",
    params(
        ("name" = String, Path, description = "The strategy type"),
    ),
    request_body = UpdateStrategyType,
    responses(
        (status = 200, description = "Replaced; no body"),
        (status = 400, description = "The body breaks the schema, or the type is built in", body = ErrorBody),
        (status = 404, description = "No such strategy type", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateStrategyType>,
) -> Result<Done, ApiError> {
    strategy_types::update(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Deletes a custom strategy type that no strategy uses; built-in types cannot go.
#[utoipa::path(
    delete,
    path = "/api/admin/strategies/{name}",
    tag = "Strategies",
    operation_id = "removeStrategy",
    params(
        ("name" = String, Path, description = "The strategy type"),
    ),
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 400, description = "The type is built in", body = ErrorBody),
        (status = 404, description = "No such strategy type", body = ErrorBody),
        (status = 409, description = "Strategies use it", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    strategy_types::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Deprecates a strategy type: it is still evaluated, no longer offered for new strategies.
#[utoipa::path(
    post,
    path = "/api/admin/strategies/{strategyName}/deprecate",
    tag = "Strategies",
    operation_id = "deprecateStrategy",
    params(
        ("strategyName" = String, Path, description = "The strategy type"),
    ),
    responses(
        (status = 200, description = "Deprecated; no body"),
        (status = 404, description = "No such strategy type", body = ErrorBody),
    ),
)]
pub async fn deprecate(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    strategy_types::set_deprecated(&state.app, &caller, path.into_inner(), true).await?;
    Ok(Done)
}

/// Reactivates a deprecated strategy type.
#[utoipa::path(
    post,
    path = "/api/admin/strategies/{strategyName}/reactivate",
    tag = "Strategies",
    operation_id = "reactivateStrategy",
    params(
        ("strategyName" = String, Path, description = "The strategy type"),
    ),
    responses(
        (status = 200, description = "Reactivated; no body"),
        (status = 404, description = "No such strategy type", body = ErrorBody),
    ),
)]
pub async fn reactivate(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    strategy_types::set_deprecated(&state.app, &caller, path.into_inner(), false).await?;
    Ok(Done)
}
