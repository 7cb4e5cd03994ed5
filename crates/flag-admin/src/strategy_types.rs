//! Strategy types: list and register custom ones.

use flag_store::models::StrategyTypeRow;
use flag_store::queries;

use crate::auth::Caller;
use crate::dto::strategy_types::{CreateStrategyType, StrategyTypeOut, StrategyTypesOut};
use crate::{AdminError, Ctx, db};

/// Every strategy type, built-in and custom.
pub async fn list(ctx: &Ctx) -> Result<StrategyTypesOut, AdminError> {
    let rows = db::run(&ctx.store, queries::strategies::list_types).await?;
    let strategies = rows
        .into_iter()
        .map(StrategyTypeOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(StrategyTypesOut {
        version: 1,
        strategies,
    })
}

/// Registers a custom strategy type.
pub async fn create(
    ctx: &Ctx,
    caller: &Caller,
    request: CreateStrategyType,
) -> Result<StrategyTypeOut, AdminError> {
    let row = StrategyTypeRow::custom(
        request.name.into_string(),
        request.title,
        request.description,
        &request.parameters,
        crate::now(),
    )?;
    let row = db::write_as(&ctx.store, caller, row, queries::strategies::register_type).await?;
    Ok(StrategyTypeOut::try_from(row)?)
}
