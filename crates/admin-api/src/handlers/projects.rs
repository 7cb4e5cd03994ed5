//! Projects: list, create, read, and which environments each uses.

use actix_web::web;
use flag_store::models::ProjectRow;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::ResourceName;
use crate::dto::projects::{
    CreateProject, CreatedProjectOut, ProjectDetailOut, ProjectEnvironment, ProjectEnvironmentOut,
    ProjectFeatureOut, ProjectOut, ProjectsOut,
};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, Done};

/// The projects' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create, get, enable_environment, disable_environment))]
pub struct Api;

/// Every project.
#[utoipa::path(
    get,
    path = "/api/admin/projects",
    tag = "Projects",
    operation_id = "getProjects",
    responses(
        (status = 200, description = "The projects", body = ProjectsOut),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<web::Json<ProjectsOut>, ApiError> {
    let rows = crate::db::run(&state.store, queries::projects::list).await?;
    Ok(web::Json(ProjectsOut {
        version: 1,
        projects: rows.into_iter().map(ProjectOut::from).collect(),
    }))
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
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "An environment it names does not exist", body = ErrorBody),
        (status = 409, description = "The id is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateProject>,
) -> Result<Created<CreatedProjectOut>, ApiError> {
    principal.require_admin()?;
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(ApiError::invalid("/name", "/name must not be empty"));
    }
    let id = match request.id {
        Some(id) => id,
        None => {
            // Unleash makes the id from the name: lower-case, anything not URL-friendly a dash.
            let generated: String = name
                .to_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            ResourceName::try_from(generated.as_str()).map_err(|problem| ApiError::invalid("/id", problem))?
        }
    };
    let row = ProjectRow {
        id: id.into_string(),
        name,
        description: request.description,
        created_at: crate::now(),
    };
    let environments: Option<Vec<String>> = request
        .environments
        .map(|names| names.into_iter().map(ResourceName::into_string).collect());
    let actor = principal.actor().to_owned();
    let (row, environments) = crate::db::run(&state.store, move |conn| {
        let row = queries::projects::create(conn, &row, environments.as_deref(), &actor)?;
        let environments = queries::projects::environments_of(conn, &row.id)?;
        Ok((row, environments))
    })
    .await?;
    Ok(Created::new(CreatedProjectOut::new(row, environments)))
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
    security(("apiKey" = []), ("session" = []))
)]
pub async fn get(
    state: web::Data<AppState>,
    _principal: Principal,
    path: web::Path<String>,
) -> Result<web::Json<ProjectDetailOut>, ApiError> {
    let id = path.into_inner();
    let (row, environments, features) = crate::db::run(&state.store, move |conn| {
        let row = queries::projects::get(conn, &id)?;
        let environments = queries::projects::environments_of(conn, &id)?;
        let features = queries::features::list(conn, &id)?;
        Ok((row, environments, features))
    })
    .await?;
    Ok(web::Json(ProjectDetailOut {
        id: row.id,
        name: row.name,
        description: row.description,
        environments: environments
            .into_iter()
            .map(|environment| ProjectEnvironmentOut { environment })
            .collect(),
        features: features.into_iter().map(ProjectFeatureOut::from).collect(),
        created_at: crate::dto::iso(row.created_at),
    }))
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
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
        (status = 409, description = "Already enabled", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn enable_environment(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
    Body(request): Body<ProjectEnvironment>,
) -> Result<Done, ApiError> {
    principal.require_admin()?;
    if request.change_requests_enabled == Some(true) {
        return Err(ApiError::invalid(
            "/changeRequestsEnabled",
            "change requests are not supported",
        ));
    }
    let project = path.into_inner();
    let environment = request.environment.into_string();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::projects::enable_environment(conn, &project, &environment, &actor, now)
    })
    .await?;
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
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 404, description = "No such project or environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn disable_environment(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    principal.require_admin()?;
    let (project, environment) = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::projects::disable_environment(conn, &project, &environment, &actor, now)
    })
    .await?;
    Ok(Done)
}
