//! Environments: list, create, switch on and off.

use flag_store::models::EnvironmentRow;
use flag_store::queries;

use crate::auth::Caller;
use crate::dto::environments::{CreateEnvironment, EnvironmentOut, EnvironmentsOut};
use crate::{AdminError, Ctx, db};

/// Every environment, by display order.
pub async fn list(ctx: &Ctx) -> Result<EnvironmentsOut, AdminError> {
    let rows = db::run(&ctx.store, queries::environments::list).await?;
    Ok(EnvironmentsOut {
        version: 1,
        environments: rows.into_iter().map(EnvironmentOut::from).collect(),
    })
}

/// Creates an environment; it sorts last (1000) and is enabled unless the request says so.
pub async fn create(
    ctx: &Ctx,
    caller: &Caller,
    request: CreateEnvironment,
) -> Result<EnvironmentOut, AdminError> {
    let row = EnvironmentRow {
        name: request.name.into_string(),
        environment_type: request.environment_type,
        sort_order: request.sort_order.unwrap_or(1000),
        enabled: request.enabled.unwrap_or(true),
        created_at: crate::now(),
    };
    let row = db::write_as(&ctx.store, caller, row, queries::environments::create).await?;
    Ok(EnvironmentOut::from(row))
}

/// Switches the environment `name` on or off.
pub async fn switch(ctx: &Ctx, caller: &Caller, name: String, enabled: bool) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::environments::set_enabled(conn, &name, enabled, &actor, now)
    })
    .await
}
