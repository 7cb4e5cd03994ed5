//! A feature's dependency on a parent feature.

use actix_web::web;
use flag_admin::catalogue::dependencies;
use flag_admin::catalogue::dependencies::types::AddDependency;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::Done;
use crate::state::AppState;

/// Makes a feature depend on a parent (one parent per feature).
///
/// A dependency Unleash refuses is refused the same way (403, `InvalidOperationError`): on
/// itself, on a missing or archived parent, on another project's feature, or forming a chain.
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
        (status = 404, description = "No such feature", body = ErrorBody),
    ),
)]
pub async fn add(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    ObjectBody(request): ObjectBody<AddDependency>,
) -> Result<Done, ApiError> {
    let (project, child) = path.into_inner();
    dependencies::add(&state.app, &caller, project, child, request).await?;
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
        (status = 404, description = "No such feature", body = ErrorBody),
    ),
)]
pub async fn remove(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    let (project, child) = path.into_inner();
    dependencies::remove(&state.app, &caller, project, child).await?;
    Ok(Done)
}
