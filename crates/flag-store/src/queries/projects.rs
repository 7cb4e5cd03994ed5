//! Projects and the environments enabled in each.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EventType, FeatureEnvironmentRow, NewEvent, ProjectRow};
use crate::queries::{events, to_json};
use crate::schema::{
    environments, feature_environments, feature_strategies, features, project_environments, projects,
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
