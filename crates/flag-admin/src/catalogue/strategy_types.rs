//! Strategy types: list and register custom ones.

pub mod types;

use flag_store::models::StrategyTypeRow;
use flag_store::queries;

use crate::catalogue::strategy_types::types::{
    CreateStrategyType, StrategyTypeOut, StrategyTypesOut, UpdateStrategyType,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may list the strategy types.
pub const LIST: Access = Access::Read;

/// Every strategy type, in Unleash's order: the built-in types by their sort order, then the
/// custom ones by name.
pub async fn list(ctx: &Runtime) -> Result<StrategyTypesOut, AdminError> {
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

/// Who may create a strategy type.
pub const CREATE: Access = Access::Root(Permission::CreateStrategy);

/// Registers a custom strategy type.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateStrategyType,
) -> Result<StrategyTypeOut, AdminError> {
    let row = StrategyTypeRow::custom(
        request.name.into_string(),
        request.title,
        request.description,
        &request.parameters,
        ctx.now(),
    )?;
    let row = caller
        .write(ctx, move |conn, actor, _| {
            queries::strategies::register_type(conn, &row, actor)
        })
        .await?;
    Ok(StrategyTypeOut::try_from(row)?)
}

/// Who may read a strategy type.
pub const GET: Access = Access::Read;

/// One strategy type.
pub async fn get(ctx: &Runtime, name: String) -> Result<StrategyTypeOut, AdminError> {
    let row = db::run(&ctx.store, move |conn| queries::strategies::get_type(conn, &name)).await?;
    Ok(StrategyTypeOut::try_from(row)?)
}

/// Who may change a strategy type.
pub const UPDATE: Access = Access::Root(Permission::UpdateStrategy);

/// Replaces a custom strategy type's title, description and parameters; built-in ones cannot
/// change.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    request: UpdateStrategyType,
) -> Result<(), AdminError> {
    let row = StrategyTypeRow::custom(
        name,
        request.title,
        request.description,
        &request.parameters,
        ctx.now(),
    )?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::strategies::update_type(conn, &row, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may delete a strategy type.
pub const DELETE: Access = Access::Root(Permission::DeleteStrategy);

/// Deletes a custom strategy type that no strategy uses; built-in ones cannot go.
pub async fn delete(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::strategies::delete_type(conn, &name, actor, now)
        })
        .await
}

/// Who may deprecate or reactivate a strategy type.
pub const SET_DEPRECATED: Access = Access::Root(Permission::UpdateStrategy);

/// Deprecates a strategy type, or reactivates it; deprecated types are still evaluated.
pub async fn set_deprecated(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    deprecated: bool,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::strategies::set_deprecated(conn, &name, deprecated, actor, now)
        })
        .await
}
