//! Flags' lifecycles: the stages each entered, marking one completed, and counts by stage.

pub mod types;

use flag_store::queries;

use crate::catalogue::features::types::LifecycleOut;
use crate::catalogue::lifecycle::types::{CompleteFeature, LifecycleCountOut};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may read a flag's lifecycle.
pub const STAGES: Access = Access::Read;

/// The stages a flag entered, in the order a flag passes through them, as Unleash lists them;
/// none for an unknown flag.
pub async fn stages(ctx: &Runtime, feature: String) -> Result<Vec<LifecycleOut>, AdminError> {
    let rows = db::run(&ctx.store, move |conn| queries::lifecycle::of(conn, &[feature])).await?;
    Ok(rows
        .into_iter()
        .map(|row| LifecycleOut {
            stage: row.stage,
            status: row.status,
            entered_stage_at: crate::runtime::input::iso(row.created_at),
        })
        .collect())
}

/// Who may mark a flag's lifecycle completed.
pub const COMPLETE: Access = Access::Write(Permission::UpdateFeature);

/// Marks a flag completed: kept or discarded.
pub async fn complete(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature): (String, String),
    request: CompleteFeature,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::lifecycle::mark_completed(
                conn,
                &project,
                &feature,
                request.status.as_str(),
                request.status_value.as_deref(),
                actor,
                now,
            )
        })
        .await
}

/// Who may take a flag's lifecycle back from completed.
pub const UNCOMPLETE: Access = Access::Write(Permission::UpdateFeature);

/// Takes back a flag's completion.
pub async fn uncomplete(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature): (String, String),
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::lifecycle::mark_uncompleted(conn, &project, &feature, actor, now)
        })
        .await
}

/// Who may count the flags in each lifecycle stage.
pub const COUNT: Access = Access::Read;

/// How many flags are in each stage, by the stage each entered last.
pub async fn count(ctx: &Runtime) -> Result<LifecycleCountOut, AdminError> {
    let rows = db::run(&ctx.store, queries::lifecycle::all).await?;
    let mut latest: std::collections::HashMap<&str, &flag_store::models::LifecycleRow> =
        std::collections::HashMap::new();
    for row in &rows {
        let entry = latest.entry(row.feature_name.as_str()).or_insert(row);
        if row.created_at >= entry.created_at {
            *entry = row;
        }
    }
    let mut counts = LifecycleCountOut::default();
    for row in latest.values() {
        match row.stage.as_str() {
            "initial" => counts.initial += 1,
            "pre-live" => counts.pre_live += 1,
            "live" => counts.live += 1,
            "completed" => counts.completed += 1,
            _ => counts.archived += 1,
        }
    }
    Ok(counts)
}
