//! A feature's dependency on a parent feature.

pub mod types;

use flag_store::queries;

use crate::catalogue::dependencies::types::AddDependency;
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime};

/// Who may make a flag depend on a parent.
pub const ADD: Access = Access::Write(Permission::UpdateFeatureDependency);

/// Makes `child` of `project` depend on a parent (one parent per feature).
pub async fn add(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    child: String,
    request: AddDependency,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::dependencies::set(
                conn,
                &project,
                &child,
                &request.feature,
                request.enabled.unwrap_or(true),
                &request.variants,
                actor,
                now,
            )
        })
        .await
}

/// Who may remove a flag's dependencies.
pub const REMOVE: Access = Access::Write(Permission::UpdateFeatureDependency);

/// Removes the dependency of `child` of `project`.
pub async fn remove(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    child: String,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::dependencies::remove(conn, &project, &child, actor, now)
        })
        .await
}
