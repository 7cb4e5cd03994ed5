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
