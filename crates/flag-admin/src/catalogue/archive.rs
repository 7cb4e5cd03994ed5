//! Archiving flags, reviving them, deleting archived ones for good, and marking several stale.

use flag_store::queries;

use crate::catalogue::features::types::{ArchiveImpactOut, BatchFeatures, BatchStale};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may archive a flag.
pub const ARCHIVE_ONE: Access = Access::Write(Permission::DeleteFeature);

/// Archives one flag of `project`. A flag other flags depend on cannot be archived.
pub async fn archive_one(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    name: String,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::features::get(conn, &project, &name)?;
            queries::archive::archive(conn, &project, &[name], actor, now)
        })
        .await
}

/// Who may archive several flags.
pub const ARCHIVE_MANY: Access = Access::Write(Permission::DeleteFeature);

/// Archives the live flags among those listed, which must belong to `project`.
pub async fn archive_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchFeatures,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::archive::archive(conn, &project, &request.features, actor, now)
        })
        .await
}

/// Who may ask what archiving flags would leave behind.
pub const VALIDATE: Access = Access::Read;

/// What archiving the listed flags would do.
pub async fn validate(ctx: &Runtime, request: BatchFeatures) -> Result<ArchiveImpactOut, AdminError> {
    let impact = db::run(&ctx.store, move |conn| {
        queries::archive::impact(conn, &request.features)
    })
    .await?;
    Ok(ArchiveImpactOut {
        parents_with_child_features: impact.parents_with_children,
        has_deleted_dependencies: impact.has_dependencies,
    })
}

/// Who may revive an archived flag.
pub const REVIVE_ONE: Access = Access::Write(Permission::UpdateFeature);

/// Revives one flag: it comes back switched off everywhere.
pub async fn revive_one(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::archive::revive_named(conn, &name, actor, now)
        })
        .await
}

/// Who may revive several archived flags.
pub const REVIVE_MANY: Access = Access::Write(Permission::UpdateFeature);

/// Revives the archived flags among those listed, which must belong to `project`.
pub async fn revive_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchFeatures,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::archive::revive(conn, &project, &request.features, actor, now)
        })
        .await
}

/// Who may delete an archived flag for good.
pub const DELETE_ONE: Access = Access::Write(Permission::DeleteFeature);

/// Deletes one archived flag for good; a live or unknown flag is left alone.
pub async fn delete_one(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::archive::delete(conn, None, &[name], actor, now)
        })
        .await
}

/// Who may delete several archived flags for good.
pub const DELETE_MANY: Access = Access::Write(Permission::DeleteFeature);

/// Deletes the archived flags among those listed for good, which must belong to `project`.
pub async fn delete_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchFeatures,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::archive::delete(conn, Some(&project), &request.features, actor, now)
        })
        .await
}

/// Who may mark flags stale, or not.
pub const STALE_MANY: Access = Access::Write(Permission::UpdateFeature);

/// Marks the listed flags of `project` stale or not.
pub async fn stale_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchStale,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::archive::set_stale(conn, &project, &request.features, request.stale, actor, now)
        })
        .await
}
