//! A feature's dependency on a parent feature.

use flag_store::queries;

use crate::auth::Caller;
use crate::dto::dependencies::AddDependency;
use crate::{AdminError, Ctx, db};

/// Makes `child` of `project` depend on a parent (one parent per feature).
pub async fn add(
    ctx: &Ctx,
    caller: &Caller,
    project: String,
    child: String,
    request: AddDependency,
) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::dependencies::set(
            conn,
            &project,
            &child,
            &request.feature,
            request.enabled.unwrap_or(true),
            &request.variants,
            &actor,
            now,
        )
    })
    .await
}

/// Removes the dependency of `child` of `project`.
pub async fn remove(ctx: &Ctx, caller: &Caller, project: String, child: String) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::dependencies::remove(conn, &project, &child, &actor, now)
    })
    .await
}
