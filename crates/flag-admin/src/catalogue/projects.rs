//! Projects: list, create, read, and which environments each uses.

pub mod types;

use flag_store::models::ProjectRow;
use flag_store::{StoreError, queries};

use crate::catalogue::projects::types::{
    CreateProject, CreatedProjectOut, FeatureNaming, ProjectDetailOut, ProjectEnvironment,
    ProjectEnvironmentOut, ProjectFeatureOut, ProjectSettingsIn, UpdateProjectIn,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::{Permission, ResourceName};
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
pub const CREATE: Access = Access::Root(Permission::CreateProject);

/// Creates a project with the given environments, or every enabled one. A user or service
/// account who creates one becomes its Owner, as in Unleash, so that a custom root role holding
/// `CREATE_PROJECT` can go on to set the project up.
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
    let id = id.into_string();
    let description = request.description;
    let environments: Option<Vec<String>> = request
        .environments
        .map(|names| names.into_iter().map(ResourceName::into_string).collect());
    let creator = match caller.principal() {
        crate::identity::auth::Principal::User { id, .. } => Some(*id),
        crate::identity::auth::Principal::AdminToken { .. } => None,
    };
    let (row, environments) = caller
        .write(ctx, move |conn, actor, now| {
            let row = ProjectRow {
                id,
                name,
                description,
                created_at: now,
            };
            let row = queries::projects::create(conn, &row, environments.as_deref(), actor)?;
            if let Some(creator) = creator {
                let owner = (
                    flag_store::models::RootRole::Owner.id(),
                    flag_store::models::Holder::User(creator),
                );
                queries::access::change_project_access(conn, &row.id, &[], &[owner], actor, now)?;
            }
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
pub const ENABLE_ENVIRONMENT: Access = Access::Write(Permission::UpdateProject);

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
pub const DISABLE_ENVIRONMENT: Access = Access::Write(Permission::UpdateProject);

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

/// Who may rename a project or change its description: its owners, and administrators.
pub const UPDATE: Access = Access::Write(Permission::UpdateProject);

/// Changes a project's name and description.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    id: String,
    request: UpdateProjectIn,
) -> Result<(), AdminError> {
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(AdminError::invalid("/name", "/name must not be empty"));
    }
    caller
        .write(ctx, move |conn, actor, now| {
            queries::projects::update(conn, &id, &name, request.description.as_deref(), actor, now)
        })
        .await?;
    Ok(())
}

/// The largest compiled size of a naming pattern.
const PATTERN_SIZE_LIMIT: usize = 1 << 16;

/// The naming pattern, compiled to match a whole name.
fn naming_pattern(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(PATTERN_SIZE_LIMIT)
        .build()
}

/// Who may change a project's settings: its owners, and administrators.
pub const UPDATE_SETTINGS: Access = Access::Write(Permission::ProjectSettingsWrite);

/// Sets a project's mode, the pattern its flag names must match (checked: it compiles, and its
/// example matches it) and the links its flags show.
pub async fn update_settings(
    ctx: &Runtime,
    caller: &Caller,
    id: String,
    request: ProjectSettingsIn,
) -> Result<(), AdminError> {
    let naming = request.feature_naming.filter(|naming| {
        naming
            .pattern
            .as_deref()
            .is_some_and(|pattern| !pattern.is_empty())
    });
    if let Some(FeatureNaming {
        pattern: Some(pattern),
        example,
        ..
    }) = &naming
    {
        let compiled = naming_pattern(pattern).map_err(|error| {
            AdminError::invalid(
                "/featureNaming/pattern",
                format!("the pattern does not compile: {error}"),
            )
        })?;
        if let Some(example) = example.as_deref().filter(|example| !example.is_empty())
            && !compiled.is_match(example)
        {
            return Err(AdminError::invalid(
                "/featureNaming/example",
                format!("the example {example:?} does not match the pattern {pattern:?}"),
            ));
        }
    }
    let mode = request.mode.unwrap_or_default();
    let naming = naming
        .map(|naming| serde_json::to_string(&naming))
        .transpose()
        .map_err(|error| AdminError::Internal(error.to_string()))?;
    let links = serde_json::to_string(&request.link_templates.unwrap_or_default())
        .map_err(|error| AdminError::Internal(error.to_string()))?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::projects::put_settings(conn, &id, mode.as_str(), naming.as_deref(), &links, actor, now)
        })
        .await?;
    Ok(())
}

/// The project's naming pattern refuses `name`: the 400 Unleash answers, with the example and
/// description the pattern was given.
pub(crate) async fn check_flag_name(ctx: &Runtime, project: &str, name: &str) -> Result<(), AdminError> {
    let id = project.to_owned();
    let Ok(settings) = db::run(&ctx.store, move |conn| queries::projects::settings(conn, &id)).await else {
        // An unknown project is the write's to refuse, with its own answer.
        return Ok(());
    };
    let Some(text) = settings.feature_naming else {
        return Ok(());
    };
    let naming: FeatureNaming = serde_json::from_str(&text).map_err(|error| {
        AdminError::Internal(format!("stored naming pattern of project {project}: {error}"))
    })?;
    let Some(pattern) = naming.pattern else {
        return Ok(());
    };
    let compiled = naming_pattern(&pattern).map_err(|error| {
        AdminError::Internal(format!("stored naming pattern of project {project}: {error}"))
    })?;
    if compiled.is_match(name) {
        return Ok(());
    }
    let mut message =
        format!("The feature flag name did not match the project's naming pattern: \"{pattern}\".");
    if let Some(example) = naming.example.filter(|example| !example.is_empty()) {
        message.push_str(&format!(
            " Here's an example of a name that does match the pattern: \"{example}\"."
        ));
    }
    if let Some(description) = naming.description.filter(|description| !description.is_empty()) {
        message.push_str(&format!(" The pattern's description is: \"{description}\""));
    }
    Err(AdminError::invalid("/name", message))
}

/// Who may delete a project: its owners, and administrators.
pub const DELETE: Access = Access::Write(Permission::DeleteProject);

/// Deletes a project with no live flags and no segments of its own; its archived flags and
/// the API tokens limited to it alone go too. The default project stays.
pub async fn delete(ctx: &Runtime, caller: &Caller, id: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::projects::delete(conn, &id, actor, now)
        })
        .await
}
