//! Environments: list, create, switch on and off.

use actix_web::web;
use flag_admin::catalogue::environments;
use flag_admin::catalogue::environments::types::{
    CreateEnvironment, EnvironmentDetailOut, EnvironmentsOut, ProjectEnvironmentsOut, UpdateEnvironment,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
use crate::respond::{Created, Done, NoContent};
use crate::state::AppState;

/// Every environment, by display order, with the projects that use it, its API tokens and the
/// flags on in it.
#[utoipa::path(
    get,
    path = "/api/admin/environments",
    tag = "Environments",
    operation_id = "getAllEnvironments",
    responses(
        (status = 200, description = "The environments", body = EnvironmentsOut),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<EnvironmentsOut>, ApiError> {
    Ok(web::Json(environments::list(&state.app).await?))
}

/// Creates an environment.
#[utoipa::path(
    post,
    path = "/api/admin/environments",
    tag = "Environments",
    operation_id = "createEnvironment",
    request_body = CreateEnvironment,
    responses(
        (status = 201, description = "The environment", body = EnvironmentDetailOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateEnvironment>,
) -> Result<Created<EnvironmentDetailOut>, ApiError> {
    Ok(Created::new(
        environments::create(&state.app, &caller, request).await?,
    ))
}

/// Turns an environment on.
#[utoipa::path(
    post,
    path = "/api/admin/environments/{name}/on",
    tag = "Environments",
    operation_id = "toggleEnvironmentOn",
    params(("name" = String, Path, description = "The environment")),
    responses(
        (status = 204, description = "Turned on"),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
)]
pub async fn on(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<NoContent, ApiError> {
    environments::switch(&state.app, &caller, path.into_inner(), true).await?;
    Ok(NoContent)
}

/// Turns an environment off.
#[utoipa::path(
    post,
    path = "/api/admin/environments/{name}/off",
    tag = "Environments",
    operation_id = "toggleEnvironmentOff",
    params(("name" = String, Path, description = "The environment")),
    responses(
        (status = 204, description = "Turned off"),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
)]
pub async fn off(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<NoContent, ApiError> {
    environments::switch(&state.app, &caller, path.into_inner(), false).await?;
    Ok(NoContent)
}

/// One environment.
#[utoipa::path(
    get,
    path = "/api/admin/environments/{name}",
    tag = "Environments",
    operation_id = "getEnvironment",
    params(
        ("name" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "The environment", body = EnvironmentDetailOut),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<EnvironmentDetailOut>, ApiError> {
    Ok(web::Json(environments::get(&state.app, path.into_inner()).await?))
}

/// Sets the display order of the named environments; unknown names are skipped.
#[utoipa::path(
    put,
    path = "/api/admin/environments/sort-order",
    tag = "Environments",
    operation_id = "updateSortOrder",
    request_body = std::collections::BTreeMap<String, i32>,
    responses(
        (status = 200, description = "Ordered; no body"),
        (status = 400, description = "The body is not an object of whole numbers", body = ErrorBody),
    ),
)]
pub async fn sort_order(
    state: web::Data<AppState>,
    _caller: Admitted,
    Body(orders): Body<std::collections::BTreeMap<String, i32>>,
) -> Result<Done, ApiError> {
    environments::set_sort_order(&state.app, orders).await?;
    Ok(Done)
}

/// Every environment as a project sees it.
#[utoipa::path(
    get,
    path = "/api/admin/environments/project/{projectId}",
    tag = "Environments",
    operation_id = "getProjectEnvironments",
    params(
        ("projectId" = String, Path, description = "The project"),
    ),
    responses(
        (status = 200, description = "The environments, by display order", body = ProjectEnvironmentsOut),
    ),
)]
pub async fn of_project(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ProjectEnvironmentsOut>, ApiError> {
    Ok(web::Json(
        environments::of_project(&state.app, path.into_inner()).await?,
    ))
}

/// Changes an environment's type, and its place when the body gives one.
#[utoipa::path(
    put,
    path = "/api/admin/environments/update/{name}",
    tag = "Environments",
    operation_id = "updateEnvironment",
    params(("name" = String, Path, description = "The environment")),
    request_body = UpdateEnvironment,
    responses(
        (status = 200, description = "The environment", body = EnvironmentDetailOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateEnvironment>,
) -> Result<web::Json<EnvironmentDetailOut>, ApiError> {
    Ok(web::Json(
        environments::update(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Deletes an environment, with every flag's state and strategies in it and the API tokens
/// bound to it; the last environment is refused with 403 `InvalidOperationError`.
#[utoipa::path(
    delete,
    path = "/api/admin/environments/{name}",
    tag = "Environments",
    operation_id = "removeEnvironment",
    params(("name" = String, Path, description = "The environment")),
    responses(
        (status = 200, description = "Deleted"),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    environments::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}
