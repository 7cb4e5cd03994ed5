//! Projects: list, create, read, and which environments each uses.

pub mod types;

use flag_store::models::ProjectRow;
use flag_store::{StoreError, queries};

use crate::catalogue::projects::types::{
    CreateProject, CreatedProjectOut, ProjectDetailOut, ProjectEnvironment, ProjectEnvironmentOut,
    ProjectFeatureOut,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::ResourceName;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// The id Unleash makes from a project's name: lower-case, anything not URL-friendly a dash.
fn id_from(name: &str) -> Result<ResourceName, AdminError> {
    let generated: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    ResourceName::try_from(generated.as_str()).map_err(|problem| AdminError::invalid("/id", problem))
}

/// Who may create a project.
pub const CREATE: Access = Access::Admin;

/// Creates a project with the given environments, or every enabled one.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateProject,
) -> Result<CreatedProjectOut, AdminError> {
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(AdminError::invalid("/name", "/name must not be empty"));
    }
    let id = match request.id {
        Some(id) => id,
        None => id_from(&name)?,
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
    let (row, environments) = caller
        .write(ctx, move |conn, actor, _| {
            let row = queries::projects::create(conn, &row, environments.as_deref(), actor)?;
            let environments = queries::projects::environments_of(conn, &row.id)?;
            Ok((row, environments))
        })
        .await?;
    Ok(CreatedProjectOut::new(row, environments))
}

/// Who may list the projects' ids and names.
pub const NAMES: Access = Access::Read;

/// Every project's id and name, by id: what a project selector needs, without the counts the
/// project list computes.
pub async fn names(ctx: &Runtime) -> Result<Vec<(String, String)>, AdminError> {
    let rows = db::run(&ctx.store, queries::projects::list).await?;
    Ok(rows.into_iter().map(|row| (row.id, row.name)).collect())
}

/// Who may read a project.
pub const GET: Access = Access::Read;

/// One project with its environments and features.
pub async fn get(ctx: &Runtime, id: String) -> Result<ProjectDetailOut, AdminError> {
    let (row, environments, features) = db::run(&ctx.store, move |conn| {
        let row = queries::projects::get(conn, &id)?;
        let environments = queries::projects::environments_of(conn, &id)?;
        let features = queries::features::list(conn, &id)?;
        Ok((row, environments, features))
    })
    .await?;
    Ok(ProjectDetailOut {
        id: row.id,
        name: row.name,
        description: row.description,
        environments: environments
            .into_iter()
            .map(|environment| ProjectEnvironmentOut { environment })
            .collect(),
        features: features.into_iter().map(ProjectFeatureOut::from).collect(),
        created_at: crate::runtime::input::iso(row.created_at),
    })
}

/// Who may add an environment to a project.
pub const ENABLE_ENVIRONMENT: Access = Access::Admin;

/// Enables an environment in a project. Change requests are not supported. An unknown project
/// is not found; an unknown environment is bad data, as in Unleash.
pub async fn enable_environment(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: ProjectEnvironment,
) -> Result<(), AdminError> {
    if request.change_requests_enabled == Some(true) {
        return Err(AdminError::invalid(
            "/changeRequestsEnabled",
            "change requests are not supported",
        ));
    }
    let environment = request.environment.into_string();
    caller
        .write(ctx, move |conn, actor, now| {
            // Unleash looks for the project first (404), then answers an unknown environment with
            // 400 `BadDataError` and one the project has already with 409 `NameExistsError`.
            match queries::projects::enable_environment(conn, &project, &environment, actor, now) {
                Err(StoreError::NotFound {
                    entity: "environment",
                    ..
                }) => Ok(Err(AdminError::BadData(format!(
                    "Environment {environment} does not exist"
                )))),
                Err(StoreError::Conflict { .. }) => Ok(Err(AdminError::NameExists(format!(
                    "{project} already has the environment {environment} enabled"
                )))),
                other => other.map(Ok),
            }
        })
        .await?
}

/// Who may remove an environment from a project.
pub const DISABLE_ENVIRONMENT: Access = Access::Admin;

/// Disables an environment in a project.
pub async fn disable_environment(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    environment: String,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::projects::disable_environment(conn, &project, &environment, actor, now)
        })
        .await
}

/// Who may count a project's SDK tokens per environment.
pub const TOKEN_COUNTS: Access = Access::Read;

/// How many SDK tokens (client, backend and frontend, expired ones included) reach `project`,
/// per environment: those naming it and those for every project. A token for every environment
/// (`*`) counts under `*`.
pub async fn token_counts(
    ctx: &Runtime,
    project: String,
) -> Result<std::collections::BTreeMap<String, i64>, AdminError> {
    let rows = db::run(&ctx.store, queries::api_tokens::list).await?;
    let mut counts = std::collections::BTreeMap::new();
    for row in rows {
        if row.token_type != flag_store::models::TokenType::Admin && row.projects.reach(&project) {
            *counts.entry(row.environment).or_insert(0) += 1;
        }
    }
    Ok(counts)
}
