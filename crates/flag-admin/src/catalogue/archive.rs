//! Archiving flags, reviving them, deleting archived ones for good, and marking several stale.

use flag_store::queries;

use crate::catalogue::features::types::{ArchiveImpactOut, BatchFeatures, BatchStale};
use crate::identity::auth::Caller;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Archives one flag of `project`. A flag other flags depend on cannot be archived.
pub async fn archive_one(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    name: String,
) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::features::get(conn, &project, &name)?;
        queries::archive::archive(conn, &project, &[name], &actor, now)
    })
    .await
}

/// Archives the live flags among those listed, which must belong to `project`.
pub async fn archive_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchFeatures,
) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::archive::archive(conn, &project, &request.features, &actor, now)
    })
    .await
}

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

/// Revives one flag: it comes back switched off everywhere.
pub async fn revive_one(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::archive::revive_named(conn, &name, &actor, now)
    })
    .await
}

/// Revives the archived flags among those listed, which must belong to `project`.
pub async fn revive_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchFeatures,
) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::archive::revive(conn, &project, &request.features, &actor, now)
    })
    .await
}

/// Deletes one archived flag for good; a live or unknown flag is left alone.
pub async fn delete_one(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::archive::delete(conn, None, &[name], &actor, now)
    })
    .await
}

/// Deletes the archived flags among those listed for good, which must belong to `project`.
pub async fn delete_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchFeatures,
) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::archive::delete(conn, Some(&project), &request.features, &actor, now)
    })
    .await
}

/// Marks the listed flags of `project` stale or not.
pub async fn stale_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BatchStale,
) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::archive::set_stale(conn, &project, &request.features, request.stale, &actor, now)
    })
    .await
}
