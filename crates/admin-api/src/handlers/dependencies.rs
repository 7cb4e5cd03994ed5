//! A feature's dependency on a parent feature.

use actix_web::web;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::Permission;
use crate::dto::dependencies::AddDependency;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Done;

/// The dependencies' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(add, remove))]
pub struct Api;

/// Makes a feature depend on a parent (one parent per feature).
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "Dependencies",
    operation_id = "addFeatureDependency",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The child feature"),
    ),
    request_body = AddDependency,
    responses(
        (status = 200, description = "Set; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 403, description = "Not allowed (`NoAccessError`), or, as `InvalidOperationError`, a dependency Unleash refuses: on itself, on a missing or archived parent, on another project's feature, or forming a chain", body = ErrorBody),
        (status = 404, description = "No such feature", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn add(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
    Body(request): Body<AddDependency>,
) -> Result<Done, ApiError> {
    principal.require_write(Permission::UpdateFeatureDependency, None)?;
    let (project, child) = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
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
    .await?;
    Ok(Done)
}

/// Removes a feature's dependency.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
    tag = "Dependencies",
    operation_id = "deleteFeatureDependencies",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The child feature"),
    ),
    responses(
        (status = 200, description = "Removed; no body"),
        (status = 403, description = "Not allowed, or a token limited to some environments", body = ErrorBody),
        (status = 404, description = "No such feature", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn remove(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    principal.require_write(Permission::UpdateFeatureDependency, None)?;
    let (project, child) = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::dependencies::remove(conn, &project, &child, &actor, now)
    })
    .await?;
    Ok(Done)
}
