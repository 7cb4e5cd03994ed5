//! Archiving flags, reviving them, deleting archived ones, and marking several stale.

use actix_web::web;
use flag_admin::catalogue::archive;
use flag_admin::catalogue::features::types::{ArchiveImpactOut, BatchFeatures, BatchStale};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Accepted, Done};
use crate::state::AppState;

/// Archives a flag: SDKs, the frontend API and the playground no longer see it, and its name
/// stays taken. A flag other flags depend on cannot be archived (403, `InvalidOperationError`).
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "Archive",
    operation_id = "archiveFeature",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    responses(
        (status = 202, description = "Archived; no body"),
        (status = 404, description = "No such flag in the project", body = ErrorBody),
    ),
)]
pub async fn archive_one(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Accepted, ApiError> {
    let (project, name) = path.into_inner();
    archive::archive_one(&state.app, &caller, project, name).await?;
    Ok(Accepted)
}

/// Archives several flags of a project; unknown and archived ones are skipped. A flag of another
/// project, or one that flags outside the list depend on, is refused (403, `InvalidOperationError`).
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/archive",
    tag = "Archive",
    operation_id = "archiveFeatures",
    params(("projectId" = String, Path, description = "The project")),
    request_body = BatchFeatures,
    responses(
        (status = 202, description = "Archived; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn archive_many(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<BatchFeatures>,
) -> Result<Accepted, ApiError> {
    archive::archive_many(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Accepted)
}

/// What archiving some flags would do: the listed flags that others depend on, and whether
/// dependencies would go.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/archive/validate",
    tag = "Archive",
    operation_id = "validateArchiveFeatures",
    params(("projectId" = String, Path, description = "The project")),
    request_body = BatchFeatures,
    responses(
        (status = 200, description = "The impact", body = ArchiveImpactOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn validate(
    state: web::Data<AppState>,
    _caller: Admitted,
    ObjectBody(request): ObjectBody<BatchFeatures>,
) -> Result<web::Json<ArchiveImpactOut>, ApiError> {
    Ok(web::Json(archive::validate(&state.app, request).await?))
}

/// Revives an archived flag: it comes back switched off in every environment, with its
/// strategies, variants and tags.
#[utoipa::path(
    post,
    path = "/api/admin/archive/revive/{featureName}",
    tag = "Archive",
    operation_id = "reviveFeature",
    params(("featureName" = String, Path, description = "The flag")),
    responses(
        (status = 200, description = "Revived; no body"),
        (status = 404, description = "No such flag", body = ErrorBody),
    ),
)]
pub async fn revive_one(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    archive::revive_one(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Revives several archived flags of a project; a flag of another project is refused (403,
/// `InvalidOperationError`).
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/revive",
    tag = "Archive",
    operation_id = "reviveFeatures",
    params(("projectId" = String, Path, description = "The project")),
    request_body = BatchFeatures,
    responses(
        (status = 200, description = "Revived; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn revive_many(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<BatchFeatures>,
) -> Result<Done, ApiError> {
    archive::revive_many(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Deletes an archived flag for good; its name is free again. A live or unknown flag is left
/// alone; a flag other flags depend on is refused (403, `InvalidOperationError`).
#[utoipa::path(
    delete,
    path = "/api/admin/archive/{featureName}",
    tag = "Archive",
    operation_id = "deleteFeature",
    params(("featureName" = String, Path, description = "The flag")),
    responses(
        (status = 200, description = "Deleted, or nothing to delete; no body"),
    ),
)]
pub async fn delete_one(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    archive::delete_one(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Deletes several archived flags of a project for good; live and unknown ones are skipped. A flag
/// of another project, or one that flags outside the list depend on, is refused (403,
/// `InvalidOperationError`).
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/delete",
    tag = "Archive",
    operation_id = "deleteFeatures",
    params(("projectId" = String, Path, description = "The project")),
    request_body = BatchFeatures,
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn delete_many(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<BatchFeatures>,
) -> Result<Done, ApiError> {
    archive::delete_many(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Marks several flags of a project stale, or not; unknown ones are skipped, and a flag of another
/// project is refused (403, `InvalidOperationError`).
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/stale",
    tag = "Features",
    operation_id = "staleFeatures",
    params(("projectId" = String, Path, description = "The project")),
    request_body = BatchStale,
    responses(
        (status = 202, description = "Marked; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn stale(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<BatchStale>,
) -> Result<Accepted, ApiError> {
    archive::stale_many(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Accepted)
}
