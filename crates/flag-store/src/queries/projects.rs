//! Projects and the environments enabled in each.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EventType, FeatureEnvironmentRow, NewEvent, ProjectRow, ProjectSettingsRow};
use crate::queries::{events, to_json};
use crate::schema::{
    api_tokens, environments, feature_environments, feature_strategies, features, project_environments,
    projects, segments,
};

/// All projects, by id.
pub fn list(conn: &mut DbConnection) -> Result<Vec<ProjectRow>, StoreError> {
    Ok(projects::table
        .order(projects::id.asc())
        .select(ProjectRow::as_select())
        .load(conn)?)
}

/// One project.
pub fn get(conn: &mut DbConnection, id: &str) -> Result<ProjectRow, StoreError> {
    projects::table
        .find(id)
        .select(ProjectRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("project", id))
}

/// The environments enabled in a project, by environment sort order.
pub fn environments_of(conn: &mut DbConnection, project: &str) -> Result<Vec<String>, StoreError> {
    Ok(project_environments::table
        .inner_join(environments::table)
        .filter(project_environments::project_id.eq(project))
        .order((environments::sort_order.asc(), environments::name.asc()))
        .select(project_environments::environment_name)
        .load(conn)?)
}

/// A live flag of a project in one environment of the project, as the project's flag list shows
/// it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagInEnvironment {
    /// The flag's row there.
    pub state: FeatureEnvironmentRow,
    /// The environment's type.
    pub environment_type: String,
    /// The environment's display order.
    pub sort_order: i32,
    /// Whether the flag has strategies there, disabled ones included.
    pub has_strategies: bool,
    /// Whether any of them is enabled.
    pub has_enabled_strategies: bool,
}

/// Every live flag of `project` in each of its environments, by flag name, then environment
/// sort order and name: two queries, whatever the number of flags and strategies.
pub fn flags_in_environments(
    conn: &mut DbConnection,
    project: &str,
) -> Result<Vec<FlagInEnvironment>, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let states: Vec<(FeatureEnvironmentRow, String, i32)> = feature_environments::table
            .inner_join(features::table)
            .inner_join(environments::table)
            .filter(features::project_id.eq(project))
            .filter(features::archived_at.is_null())
            .order((
                feature_environments::feature_name.asc(),
                environments::sort_order.asc(),
                environments::name.asc(),
            ))
            .select((
                FeatureEnvironmentRow::as_select(),
                environments::environment_type,
                environments::sort_order,
            ))
            .load(conn)?;
        let strategies = crate::queries::search::strategy_counts(conn, Some(project))?;
        Ok(states
            .into_iter()
            .map(|(state, environment_type, sort_order)| {
                let counts = strategies
                    .get(&(state.feature_name.clone(), state.environment_name.clone()))
                    .copied()
                    .unwrap_or_default();
                FlagInEnvironment {
                    has_strategies: counts.any(),
                    has_enabled_strategies: counts.any_enabled(),
                    state,
                    environment_type,
                    sort_order,
                }
            })
            .collect())
    })
}

/// Creates a project with the given environments, or every enabled environment when `None`.
pub fn create(
    conn: &mut DbConnection,
    row: &ProjectRow,
    environment_names: Option<&[String]>,
    actor: &Actor,
) -> Result<ProjectRow, StoreError> {
    crate::queries::write(conn, |conn| {
        diesel::insert_into(projects::table).values(row).execute(conn)?;
        let names: Vec<String> = match environment_names {
            Some(names) => names.to_vec(),
            None => environments::table
                .filter(environments::enabled.eq(true))
                .order(environments::name.asc())
                .select(environments::name)
                .load(conn)?,
        };
        for name in &names {
            link_environment(conn, &row.id, name)?;
        }
        events::record(
            conn,
            &NewEvent {
                project: Some(row.id.clone()),
                data: Some(to_json(
                    "data",
                    &serde_json::json!({"id": row.id, "name": row.name, "environments": names}),
                )?),
                ..NewEvent::new(EventType::ProjectCreated, actor, row.created_at)
            },
        )?;
        Ok(row.clone())
    })
}

fn link_environment(conn: &mut DbConnection, project: &str, environment: &str) -> Result<(), StoreError> {
    let exists: i64 = environments::table
        .filter(environments::name.eq(environment))
        .count()
        .get_result(conn)?;
    if exists == 0 {
        return Err(StoreError::not_found("environment", environment));
    }
    diesel::insert_into(project_environments::table)
        .values((
            project_environments::project_id.eq(project),
            project_environments::environment_name.eq(environment),
        ))
        .execute(conn)?;
    // Existing features of the project get a disabled row in the new environment.
    let names: Vec<String> = features::table
        .filter(features::project_id.eq(project))
        .select(features::name)
        .load(conn)?;
    let rows: Vec<FeatureEnvironmentRow> = names
        .into_iter()
        .map(|feature_name| FeatureEnvironmentRow {
            feature_name,
            environment_name: environment.into(),
            enabled: false,
            variants: "[]".into(),
            last_seen_at: None,
        })
        .collect();
    crate::connection::insert_rows!(conn, feature_environments::table, &rows)?;
    Ok(())
}

/// Enables an environment in a project; enabling it twice is a conflict.
pub fn enable_environment(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        get(conn, project)?;
        link_environment(conn, project, environment)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                environment: Some(environment.into()),
                ..NewEvent::new(EventType::ProjectEnvironmentAdded, actor, now)
            },
        )
    })
}

/// Disables an environment in a project, dropping its features' state there.
pub fn disable_environment(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let removed =
            diesel::delete(project_environments::table.find((project, environment))).execute(conn)?;
        if removed == 0 {
            return Err(StoreError::not_found(
                "project environment",
                format!("{project}/{environment}"),
            ));
        }
        let names = || {
            features::table
                .filter(features::project_id.eq(project))
                .select(features::name)
        };
        diesel::delete(
            feature_strategies::table
                .filter(feature_strategies::environment_name.eq(environment))
                .filter(feature_strategies::feature_name.eq_any(names())),
        )
        .execute(conn)?;
        diesel::delete(
            feature_environments::table
                .filter(feature_environments::environment_name.eq(environment))
                .filter(feature_environments::feature_name.eq_any(names())),
        )
        .execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                environment: Some(environment.into()),
                ..NewEvent::new(EventType::ProjectEnvironmentRemoved, actor, now)
            },
        )
    })
}

/// A project's settings.
pub fn settings(conn: &mut DbConnection, id: &str) -> Result<ProjectSettingsRow, StoreError> {
    projects::table
        .find(id)
        .select(ProjectSettingsRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("project", id))
}

/// Every project's settings.
pub fn all_settings(conn: &mut DbConnection) -> Result<Vec<ProjectSettingsRow>, StoreError> {
    Ok(projects::table
        .order(projects::id)
        .select(ProjectSettingsRow::as_select())
        .load(conn)?)
}

fn settings_json(row: &ProjectSettingsRow) -> serde_json::Value {
    serde_json::json!({
        "id": row.id,
        "mode": row.mode,
        "featureNaming": row.feature_naming.as_deref().and_then(|text| serde_json::from_str::<serde_json::Value>(text).ok()),
        "linkTemplates": serde_json::from_str::<serde_json::Value>(&row.link_templates).ok(),
    })
}

/// Sets a project's mode, naming pattern (JSON, or `None`) and link templates (JSON).
pub fn put_settings(
    conn: &mut DbConnection,
    id: &str,
    mode: &str,
    feature_naming: Option<&str>,
    link_templates: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<ProjectSettingsRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = settings(conn, id)?;
        diesel::update(projects::table.find(id))
            .set((
                projects::mode.eq(mode),
                projects::feature_naming.eq(feature_naming),
                projects::link_templates.eq(link_templates),
            ))
            .execute(conn)?;
        let after = settings(conn, id)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(id.to_owned()),
                data: Some(to_json("data", &settings_json(&after))?),
                pre_data: Some(to_json("pre_data", &settings_json(&before))?),
                ..NewEvent::new(EventType::ProjectUpdated, actor, now)
            },
        )?;
        Ok(after)
    })
}

/// Changes a project's name and description.
pub fn update(
    conn: &mut DbConnection,
    id: &str,
    name: &str,
    description: Option<&str>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<ProjectRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        diesel::update(projects::table.find(id))
            .set((projects::name.eq(name), projects::description.eq(description)))
            .execute(conn)?;
        let after = get(conn, id)?;
        let shown = |row: &ProjectRow| serde_json::json!({"id": row.id, "name": row.name, "description": row.description});
        events::record(
            conn,
            &NewEvent {
                project: Some(id.to_owned()),
                data: Some(to_json("data", &shown(&after))?),
                pre_data: Some(to_json("pre_data", &shown(&before))?),
                ..NewEvent::new(EventType::ProjectUpdated, actor, now)
            },
        )?;
        Ok(after)
    })
}

/// Deletes a project with no live flags and no segments of its own: its archived flags and the
/// API tokens limited to it alone go with it. The default project stays.
pub fn delete(
    conn: &mut DbConnection,
    id: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        if id == "default" {
            return Err(StoreError::InvalidOperation {
                message: "You can not delete the default project!".into(),
            });
        }
        let live: i64 = features::table
            .filter(features::project_id.eq(id))
            .filter(features::archived_at.is_null())
            .count()
            .get_result(conn)?;
        if live > 0 {
            return Err(StoreError::InvalidOperation {
                message: "You can not delete a project with active feature flags".into(),
            });
        }
        let own_segments: i64 = segments::table
            .filter(segments::project_id.eq(id))
            .count()
            .get_result(conn)?;
        if own_segments > 0 {
            return Err(StoreError::InUse {
                message: format!(
                    "the project {id} has {own_segments} segments of its own; delete them first"
                ),
            });
        }
        let archived: Vec<String> = features::table
            .filter(features::project_id.eq(id))
            .select(features::name)
            .load(conn)?;
        crate::queries::archive::delete(conn, Some(id), &archived, actor, now)?;
        let tokens: Vec<crate::models::ApiTokenRow> = api_tokens::table
            .select(crate::models::ApiTokenRow::as_select())
            .load(conn)?;
        for token in tokens
            .iter()
            .filter(|token| token.projects.as_slice() == [id.to_owned()])
        {
            crate::queries::api_tokens::delete(conn, token.id, actor, now)?;
        }
        diesel::delete(projects::table.find(id)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(id.to_owned()),
                pre_data: Some(to_json(
                    "pre_data",
                    &serde_json::json!({"id": before.id, "name": before.name, "description": before.description}),
                )?),
                ..NewEvent::new(EventType::ProjectDeleted, actor, now)
            },
        )
    })
}
