//! Environments: list, create, switch on and off.

pub mod types;

use flag_store::models::EnvironmentRow;
use flag_store::queries;

use crate::catalogue::environments::types::{
    CreateEnvironment, EnvironmentDetailOut, EnvironmentOut, EnvironmentsOut, ProjectEnvironmentView,
    ProjectEnvironmentsOut, UpdateEnvironment,
};
use crate::identity::auth::{Access, Caller};
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may list the environments.
pub const LIST: Access = Access::Read;

/// Every environment, by display order, with the projects that use it, its API tokens and the
/// flags on in it.
pub async fn list(ctx: &Runtime) -> Result<EnvironmentsOut, AdminError> {
    let rows = db::run(&ctx.store, queries::environments::list_with_counts).await?;
    Ok(EnvironmentsOut {
        version: 1,
        environments: rows.into_iter().map(EnvironmentOut::from).collect(),
    })
}

/// Who may create an environment.
pub const CREATE: Access = Access::Admin;

/// Creates an environment, enabled unless the request says otherwise. Without a sort order it
/// takes one past the largest and so sorts last, as Unleash's environment store provides for.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateEnvironment,
) -> Result<EnvironmentDetailOut, AdminError> {
    let row = caller
        .write(ctx, move |conn, actor, now| {
            let row = EnvironmentRow {
                name: request.name.into_string(),
                environment_type: request.environment_type,
                sort_order: request.sort_order.unwrap_or_default(),
                enabled: request.enabled.unwrap_or(true),
                created_at: now,
            };
            match request.sort_order {
                Some(_) => queries::environments::create(conn, &row, actor),
                None => queries::environments::create_last(conn, row, actor),
            }
        })
        .await?;
    Ok(EnvironmentDetailOut::from(row))
}

/// Who may switch an environment on or off.
pub const SWITCH: Access = Access::Admin;

/// Switches the environment `name` on or off.
pub async fn switch(ctx: &Runtime, caller: &Caller, name: String, enabled: bool) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::environments::set_enabled(conn, &name, enabled, actor, now)
        })
        .await
}

/// Who may read an environment.
pub const GET: Access = Access::Read;

/// One environment.
pub async fn get(ctx: &Runtime, name: String) -> Result<EnvironmentDetailOut, AdminError> {
    let row = db::run(&ctx.store, move |conn| queries::environments::get(conn, &name)).await?;
    Ok(EnvironmentDetailOut::from(row))
}

/// Who may reorder the environments.
pub const SET_SORT_ORDER: Access = Access::Admin;

/// Sets the display order of the named environments; unknown names are skipped.
pub async fn set_sort_order(
    ctx: &Runtime,
    orders: std::collections::BTreeMap<String, i32>,
) -> Result<(), AdminError> {
    let orders: Vec<(String, i32)> = orders.into_iter().collect();
    db::run(&ctx.store, move |conn| {
        queries::environments::set_sort_orders(conn, &orders)
    })
    .await
}

/// Who may list a project's environments.
pub const OF_PROJECT: Access = Access::Read;

/// Every environment as a project sees it: whether it has it, its tokens there and its flags on
/// there (archived ones included, as Unleash counts them). An unknown project has none of them.
pub async fn of_project(ctx: &Runtime, project: String) -> Result<ProjectEnvironmentsOut, AdminError> {
    let (rows, visible, enabled, tokens) = db::run(&ctx.store, move |conn| {
        Ok((
            queries::environments::list(conn)?,
            queries::projects::environments_of(conn, &project)?,
            queries::environments::enabled_flags_of_project(conn, &project)?,
            queries::api_tokens::list(conn)?
                .into_iter()
                .filter(|token| token.projects.reach(&project))
                .map(|token| token.environment)
                .collect::<Vec<_>>(),
        ))
    })
    .await?;
    Ok(ProjectEnvironmentsOut {
        version: 1,
        environments: rows
            .into_iter()
            .map(|row| ProjectEnvironmentView {
                project_api_token_count: tokens
                    .iter()
                    .filter(|environment| **environment == row.name)
                    .count(),
                project_enabled_toggle_count: enabled.get(&row.name).copied().unwrap_or(0),
                visible: visible.contains(&row.name),
                name: row.name,
                environment_type: row.environment_type,
                sort_order: row.sort_order,
                enabled: row.enabled,
                protected: false,
                required_approvals: None,
            })
            .collect(),
    })
}

/// Who may change an environment's type.
pub const UPDATE: Access = Access::Admin;

/// Changes an environment's type, and its place when the request gives one:
/// `PUT /api/admin/environments/update/{name}`.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    request: UpdateEnvironment,
) -> Result<EnvironmentDetailOut, AdminError> {
    let environment_type = request.environment_type.trim().to_owned();
    if environment_type.is_empty() {
        return Err(AdminError::invalid("/type", "/type must not be empty"));
    }
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::environments::update(conn, &name, &environment_type, request.sort_order, actor, now)
        })
        .await?;
    Ok(EnvironmentDetailOut::from(row))
}

/// Who may delete an environment.
pub const DELETE: Access = Access::Admin;

/// Deletes an environment: every flag's state and strategies in it, and the API tokens bound to
/// it, go too. The last environment stays.
pub async fn delete(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::environments::delete(conn, &name, actor, now)
        })
        .await
}
