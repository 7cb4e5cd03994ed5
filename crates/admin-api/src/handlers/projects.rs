//! Projects: list, create, read, and which environments each uses.

use actix_web::web;
use flag_admin::catalogue::overview::types::{
    CreatorOut, DashboardOut, DashboardProjectDetailOut, ProjectListOut, ProjectOverviewOut, ProjectStatusOut,
};
use flag_admin::catalogue::projects::types::{
    CreateProject, CreatedProjectOut, ProjectDetailOut, ProjectEnvironment, ProjectSettingsIn,
    UpdateProjectIn,
};
use flag_admin::{catalogue::overview, catalogue::projects};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// Every project, by name, with its health, flags and onboarding.
#[utoipa::path(
    get,
    path = "/api/admin/projects",
    tag = "Projects",
    operation_id = "getProjects",
    responses(
        (status = 200, description = "The projects", body = ProjectListOut),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<ProjectListOut>, ApiError> {
    Ok(web::Json(overview::list(&state.app).await?))
}

/// Creates a project with the given environments, or every enabled one.
#[utoipa::path(
    post,
    path = "/api/admin/projects",
    tag = "Projects",
    operation_id = "createProject",
    request_body = CreateProject,
    responses(
        (status = 201, description = "The project", body = CreatedProjectOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "An environment it names does not exist", body = ErrorBody),
        (status = 409, description = "The id is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateProject>,
) -> Result<Created<CreatedProjectOut>, ApiError> {
    Ok(Created::new(
        projects::create(&state.app, &caller, request).await?,
    ))
}

/// One project with its environments and features.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}",
    tag = "Projects",
    operation_id = "getProject",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "The project", body = ProjectDetailOut),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ProjectDetailOut>, ApiError> {
    Ok(web::Json(projects::get(&state.app, path.into_inner()).await?))
}

/// Enables an environment in a project.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/environments",
    tag = "Projects",
    operation_id = "addEnvironmentToProject",
    params(("projectId" = String, Path, description = "The project")),
    request_body = ProjectEnvironment,
    responses(
        (status = 200, description = "Enabled; no body"),
        (status = 400, description = "Unknown environment, or change requests asked for", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
        (status = 409, description = "Already enabled", body = ErrorBody),
    ),
)]
pub async fn enable_environment(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<ProjectEnvironment>,
) -> Result<Done, ApiError> {
    projects::enable_environment(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Disables an environment in a project.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/environments/{environment}",
    tag = "Projects",
    operation_id = "removeEnvironmentFromProject",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "Disabled; no body"),
        (status = 404, description = "No such project or environment", body = ErrorBody),
    ),
)]
pub async fn disable_environment(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    let (project, environment) = path.into_inner();
    projects::disable_environment(&state.app, &caller, project, environment).await?;
    Ok(Done)
}

/// A project at a glance, as Unleash's web UI opens it.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/overview",
    tag = "Projects",
    operation_id = "getProjectOverview",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "The overview", body = ProjectOverviewOut),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn overview(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ProjectOverviewOut>, ApiError> {
    Ok(web::Json(
        overview::overview(&state.app, path.into_inner()).await?,
    ))
}

/// A project's status: resources, activity over the last year, health and lifecycle.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/status",
    tag = "Projects",
    operation_id = "getProjectStatus",
    params(("projectId" = String, Path, description = "The project")),
    responses((status = 200, description = "The status; all zeros for an unknown project", body = ProjectStatusOut)),
)]
pub async fn status(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ProjectStatusOut>, ApiError> {
    Ok(web::Json(overview::status(&state.app, path.into_inner()).await?))
}

/// The users who created a project's flags.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/flag-creators",
    tag = "Projects",
    operation_id = "getProjectFlagCreators",
    params(("projectId" = String, Path, description = "The project")),
    responses((status = 200, description = "The creators, by id", body = Vec<CreatorOut>)),
)]
pub async fn flag_creators(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<Vec<CreatorOut>>, ApiError> {
    Ok(web::Json(
        overview::flag_creators(&state.app, path.into_inner()).await?,
    ))
}

/// The caller's dashboard: the projects, the flags they created, the administrators.
#[utoipa::path(
    get,
    path = "/api/admin/personal-dashboard",
    tag = "Projects",
    operation_id = "getPersonalDashboard",
    responses((status = 200, description = "The dashboard", body = DashboardOut)),
)]
pub async fn dashboard(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
) -> Result<web::Json<DashboardOut>, ApiError> {
    Ok(web::Json(overview::dashboard(&state.app, &caller).await?))
}

/// A project on the caller's dashboard: newest events, onboarding and health.
#[utoipa::path(
    get,
    path = "/api/admin/personal-dashboard/{projectId}",
    tag = "Projects",
    operation_id = "getPersonalDashboardProjectDetails",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "The project", body = DashboardProjectDetailOut),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn dashboard_project(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<DashboardProjectDetailOut>, ApiError> {
    Ok(web::Json(
        overview::dashboard_project(&state.app, path.into_inner()).await?,
    ))
}

/// Changes a project's name and description.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}",
    tag = "Projects",
    operation_id = "updateProject",
    params(("projectId" = String, Path, description = "The project")),
    request_body = UpdateProjectIn,
    responses(
        (status = 200, description = "Changed"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateProjectIn>,
) -> Result<Done, ApiError> {
    projects::update(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Sets a project's mode, the pattern its flag names must match and the links its flags show.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/settings",
    tag = "Projects",
    operation_id = "updateProjectEnterpriseSettings",
    params(("projectId" = String, Path, description = "The project")),
    request_body = ProjectSettingsIn,
    responses(
        (status = 200, description = "Changed"),
        (status = 400, description = "The body breaks the schema, or the pattern does not compile or match its example", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn update_settings(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<ProjectSettingsIn>,
) -> Result<Done, ApiError> {
    projects::update_settings(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Deletes a project with no live flags and no segments of its own; the default project and a
/// project with live flags are refused with 403 `InvalidOperationError`.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}",
    tag = "Projects",
    operation_id = "deleteProject",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "Deleted"),
        (status = 404, description = "No such project", body = ErrorBody),
        (status = 409, description = "It has segments of its own", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    projects::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}
