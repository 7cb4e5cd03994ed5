//! Flags' lifecycles.

use actix_web::web;
use flag_admin::catalogue::features::types::LifecycleOut;
use flag_admin::catalogue::lifecycle;
use flag_admin::catalogue::lifecycle::types::{CompleteFeature, LifecycleCountOut};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::Done;
use crate::state::AppState;

/// The stages a flag entered, oldest first.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle",
    tag = "Lifecycle",
    operation_id = "getFeatureLifecycle",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    responses((status = 200, description = "The stages; none for an unknown flag", body = Vec<LifecycleOut>)),
)]
pub async fn stages(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<Vec<LifecycleOut>>, ApiError> {
    let (_project, feature) = path.into_inner();
    Ok(web::Json(lifecycle::stages(&state.app, feature).await?))
}

/// Marks a flag completed: kept in the code, or discarded.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete",
    tag = "Lifecycle",
    operation_id = "complete",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    request_body = CompleteFeature,
    responses(
        (status = 200, description = "Marked; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such flag in the project", body = ErrorBody),
    ),
)]
pub async fn complete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    ObjectBody(request): ObjectBody<CompleteFeature>,
) -> Result<Done, ApiError> {
    lifecycle::complete(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Takes back a flag's completion.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete",
    tag = "Lifecycle",
    operation_id = "uncomplete",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    responses(
        (status = 200, description = "Taken back; no body"),
        (status = 404, description = "No such flag in the project", body = ErrorBody),
    ),
)]
pub async fn uncomplete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    lifecycle::uncomplete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// How many flags are in each stage.
#[utoipa::path(
    get,
    path = "/api/admin/lifecycle/count",
    tag = "Lifecycle",
    operation_id = "getFeatureLifecycleStageCount",
    responses((status = 200, description = "The counts", body = LifecycleCountOut)),
)]
pub async fn count(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<LifecycleCountOut>, ApiError> {
    Ok(web::Json(lifecycle::count(&state.app).await?))
}
