//! Strategy types: list and register.

use actix_web::web;
use flag_store::models::StrategyTypeRow;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::dto::strategy_types::{CreateStrategyType, StrategyTypeOut, StrategyTypesOut};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Created;

/// The strategy types' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create))]
pub struct Api;

/// Every strategy type, built-in and custom.
#[utoipa::path(
    get,
    path = "/api/admin/strategies",
    tag = "Strategies",
    operation_id = "getAllStrategies",
    responses(
        (status = 200, description = "The strategy types", body = StrategyTypesOut),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<web::Json<StrategyTypesOut>, ApiError> {
    let rows = crate::db::run(&state.store, queries::strategies::list_types).await?;
    let strategies = rows
        .into_iter()
        .map(StrategyTypeOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(web::Json(StrategyTypesOut {
        version: 1,
        strategies,
    }))
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
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateStrategyType>,
) -> Result<Created<StrategyTypeOut>, ApiError> {
    principal.require_admin()?;
    let row = StrategyTypeRow {
        name: request.name.into_string(),
        title: request.title,
        description: request.description,
        parameters: serde_json::to_string(&request.parameters)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        built_in: false,
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::strategies::register_type(conn, &row, &actor)
    })
    .await?;
    Ok(Created::new(StrategyTypeOut::try_from(row)?))
}
