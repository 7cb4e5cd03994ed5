//! A feature's strategies in an environment: add, replace, remove.

pub mod types;

use flag_store::queries;

use crate::catalogue::features::types::{StrategyListItem, StrategyOrder, StrategyOut};
use crate::catalogue::strategies::types::StrategyRequest;
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Where a strategy lives: its project, feature and environment.
pub type Place = (String, String, String);

/// Who may add a strategy to a flag in an environment.
pub const ADD: Access = Access::WriteIn(Permission::CreateFeatureStrategy);

/// Adds a strategy to `feature` in `environment`.
pub async fn add(
    ctx: &Runtime,
    caller: &Caller,
    place: Place,
    request: StrategyRequest,
) -> Result<flag_eval::Strategy, AdminError> {
    save(ctx, caller, place, None, request).await
}

/// Who may replace a flag's strategy in an environment.
pub const UPDATE: Access = Access::WriteIn(Permission::UpdateFeatureStrategy);

/// Replaces the strategy `id`.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    place: Place,
    id: String,
    request: StrategyRequest,
) -> Result<flag_eval::Strategy, AdminError> {
    save(ctx, caller, place, Some(id), request).await
}

/// Adds a strategy, or replaces the one with `id`.
async fn save(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): Place,
    id: Option<String>,
    request: StrategyRequest,
) -> Result<flag_eval::Strategy, AdminError> {
    caller.require_in(&environment)?;
    let input = request.into_input(&feature)?;
    caller
        .write(ctx, move |conn, actor, now| match &id {
            None => queries::strategies::add(conn, &project, &feature, &environment, &input, actor, now),
            Some(id) => {
                queries::strategies::update(conn, &project, &feature, &environment, id, &input, actor, now)
            }
        })
        .await
}

/// Who may delete a flag's strategy in an environment.
pub const DELETE: Access = Access::WriteIn(Permission::DeleteFeatureStrategy);

/// Removes the strategy `id`.
pub async fn delete(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): Place,
    id: String,
) -> Result<(), AdminError> {
    caller.require_in(&environment)?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::strategies::delete(conn, &project, &feature, &environment, &id, actor, now)
        })
        .await
}

/// Who may list a flag's strategies in an environment.
pub const LIST: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// A flag's strategies in one environment, in evaluation order.
pub async fn list(
    ctx: &Runtime,
    caller: &Caller,
    (_project, feature, environment): Place,
) -> Result<Vec<StrategyListItem>, AdminError> {
    caller.require_in(&environment)?;
    let strategies = db::run(&ctx.store, move |conn| {
        queries::features::environment(conn, &feature, &environment).map_err(|_| {
            flag_store::StoreError::NotFound {
                entity: "environment of feature",
                key: format!("{environment} of {feature}"),
            }
        })?;
        queries::strategies::list(conn, &feature, &environment)
    })
    .await?;
    Ok(strategies
        .into_iter()
        .map(|strategy| StrategyListItem {
            id: strategy.id.unwrap_or_default(),
            name: strategy.name,
            constraints: strategy.constraints,
            parameters: strategy.parameters,
            variants: strategy.variants,
            title: strategy.title,
            disabled: strategy.disabled.unwrap_or(false),
            sort_order: strategy.sort_order.unwrap_or(0),
            milestone_id: None,
            segments: strategy.segments,
        })
        .collect())
}

/// Who may read a flag's strategy in an environment.
pub const GET: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// One strategy of a flag of `project`.
pub async fn get(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): Place,
    id: String,
) -> Result<StrategyOut, AdminError> {
    caller.require_in(&environment)?;
    let strategy = db::run(&ctx.store, move |conn| {
        queries::features::get(conn, &project, &feature)?;
        queries::strategies::get(conn, &feature, &environment, &id)
    })
    .await?;
    Ok(StrategyOut::of(strategy))
}

/// Who may reorder a flag's strategies in an environment.
pub const SET_SORT_ORDER: Access = Access::WriteIn(Permission::UpdateFeatureStrategy);

/// Sets the evaluation order of some of a flag's strategies in one environment.
pub async fn set_sort_order(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): Place,
    orders: Vec<StrategyOrder>,
) -> Result<(), AdminError> {
    caller.require_in(&environment)?;
    let orders: Vec<(String, i32)> = orders
        .into_iter()
        .map(|order| (order.id, order.sort_order))
        .collect();
    caller
        .write(ctx, move |conn, actor, now| {
            queries::strategies::set_sort_order(conn, &project, &feature, &environment, &orders, actor, now)
        })
        .await
}

/// Who may change a flag's strategy in an environment with a JSON Patch.
pub const PATCH: Access = Access::WriteIn(Permission::UpdateFeatureStrategy);

/// Changes a strategy with a JSON Patch over `{id, name, constraints, parameters, variants,
/// segments, title, disabled, sortOrder}`; the result replaces the strategy as an update does.
pub async fn patch(
    ctx: &Runtime,
    caller: &Caller,
    place: Place,
    id: String,
    operations: json_patch::Patch,
) -> Result<StrategyOut, AdminError> {
    let current = get(ctx, caller, place.clone(), id.clone()).await?;
    let mut document = serde_json::to_value(&current)
        .map_err(|error| AdminError::Internal(format!("cannot write a strategy as JSON: {error}")))?;
    crate::runtime::input::apply_patch(&mut document, &operations).map_err(AdminError::bad_request)?;
    let request: StrategyRequest = crate::runtime::input::parse_value(document)?;
    Ok(StrategyOut::of(update(ctx, caller, place, id, request).await?))
}
