//! Strategy types: list and register.

use actix_web::web;
use flag_admin::dto::strategy_types::{CreateStrategyType, StrategyTypeOut, StrategyTypesOut};
use flag_admin::strategy_types;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Created;
use crate::state::AppState;

/// Every strategy type, built-in and custom.
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
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(request): Body<CreateStrategyType>,
) -> Result<Created<StrategyTypeOut>, ApiError> {
    Ok(Created::new(
        strategy_types::create(&state.app, &caller, request).await?,
    ))
}
