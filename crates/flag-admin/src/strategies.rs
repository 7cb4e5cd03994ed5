//! A feature's strategies in an environment: add, replace, remove.

use flag_store::queries;

use crate::auth::Caller;
use crate::dto::strategies::StrategyRequest;
use crate::{AdminError, Ctx, db};

/// Where a strategy lives: its project, feature and environment.
pub type Place = (String, String, String);

/// Adds a strategy to `feature` in `environment`.
pub async fn add(
    ctx: &Ctx,
    caller: &Caller,
    place: Place,
    request: StrategyRequest,
) -> Result<flag_eval::Strategy, AdminError> {
    save(ctx, caller, place, None, request).await
}

/// Replaces the strategy `id`.
pub async fn update(
    ctx: &Ctx,
    caller: &Caller,
    place: Place,
    id: String,
    request: StrategyRequest,
) -> Result<flag_eval::Strategy, AdminError> {
    save(ctx, caller, place, Some(id), request).await
}

/// Adds a strategy, or replaces the one with `id`.
async fn save(
    ctx: &Ctx,
    caller: &Caller,
    (project, feature, environment): Place,
    id: Option<String>,
    request: StrategyRequest,
) -> Result<flag_eval::Strategy, AdminError> {
    caller.require_in(&environment)?;
    let input = request.into_input(&feature)?;
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| match &id {
        None => queries::strategies::add(conn, &project, &feature, &environment, &input, &actor, now),
        Some(id) => {
            queries::strategies::update(conn, &project, &feature, &environment, id, &input, &actor, now)
        }
    })
    .await
}

/// Removes the strategy `id`.
pub async fn delete(
    ctx: &Ctx,
    caller: &Caller,
    (project, feature, environment): Place,
    id: String,
) -> Result<(), AdminError> {
    caller.require_in(&environment)?;
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::strategies::delete(conn, &project, &feature, &environment, &id, &actor, now)
    })
    .await
}
