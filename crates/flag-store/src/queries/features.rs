//! Features and their per-environment switch.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EventType, FeatureEnvironmentRow, FeatureRow, NewEvent};
use crate::queries::{events, projects, strategies, to_json};
use crate::schema::{feature_environments, features};

/// Creates a feature with a disabled row in each environment of its project. Names are unique
/// across projects and archived features.
pub fn create(conn: &mut DbConnection, row: &FeatureRow, actor: &Actor) -> Result<FeatureRow, StoreError> {
    crate::queries::write(conn, |conn| {
        projects::get(conn, &row.project_id)?;
        diesel::insert_into(features::table).values(row).execute(conn)?;
        let rows: Vec<FeatureEnvironmentRow> = projects::environments_of(conn, &row.project_id)?
            .into_iter()
            .map(|environment_name| FeatureEnvironmentRow {
                feature_name: row.name.clone(),
                environment_name,
                enabled: false,
                variants: "[]".into(),
                last_seen_at: None,
            })
            .collect();
        crate::connection::insert_rows!(conn, feature_environments::table, &rows)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(row.project_id.clone()),
                feature_name: Some(row.name.clone()),
                data: Some(to_json(
                    "data",
                    &serde_json::json!({"name": row.name, "type": row.feature_type, "description": row.description}),
                )?),
                ..NewEvent::new(EventType::FeatureCreated, actor, row.created_at)
            },
        )?;
        Ok(row.clone())
    })
}

/// The non-archived features of a project, by name.
pub fn list(conn: &mut DbConnection, project: &str) -> Result<Vec<FeatureRow>, StoreError> {
    Ok(features::table
        .filter(features::project_id.eq(project))
        .filter(features::archived_at.is_null())
        .order(features::name.asc())
        .select(FeatureRow::as_select())
        .load(conn)?)
}

/// A feature, which must belong to `project`.
pub fn get(conn: &mut DbConnection, project: &str, name: &str) -> Result<FeatureRow, StoreError> {
    features::table
        .find(name)
        .filter(features::project_id.eq(project))
        .select(FeatureRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("feature", format!("{project}/{name}")))
}

/// A feature's rows for every environment of its project.
pub fn environments_of(
    conn: &mut DbConnection,
    name: &str,
) -> Result<Vec<FeatureEnvironmentRow>, StoreError> {
    Ok(feature_environments::table
        .filter(feature_environments::feature_name.eq(name))
        .order(feature_environments::environment_name.asc())
        .select(FeatureEnvironmentRow::as_select())
        .load(conn)?)
}

/// The rows of every feature of `project`, by feature and environment.
pub fn environments_of_project(
    conn: &mut DbConnection,
    project: &str,
) -> Result<Vec<FeatureEnvironmentRow>, StoreError> {
    Ok(feature_environments::table
        .inner_join(features::table)
        .filter(features::project_id.eq(project))
        .order((
            feature_environments::feature_name.asc(),
            feature_environments::environment_name.asc(),
        ))
        .select(FeatureEnvironmentRow::as_select())
        .load(conn)?)
}

/// A feature's row in one environment.
pub fn environment(
    conn: &mut DbConnection,
    name: &str,
    environment: &str,
) -> Result<FeatureEnvironmentRow, StoreError> {
    feature_environments::table
        .find((name, environment))
        .select(FeatureEnvironmentRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found(
            "feature environment",
            format!("{name} in {environment}"),
        ))
}

/// Turns a feature on or off in one environment, as Unleash does: switching on a feature with no
/// active strategy there first adds the default one ([`strategies::default_for`]).
pub fn set_enabled(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    environment_name: &str,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        get(conn, project, name)?;
        let before = environment(conn, name, environment_name)?;
        // So SDKs, the playground and feature reads all see the same rule.
        if enabled && !strategies::has_active(conn, name, environment_name)? {
            strategies::add(
                conn,
                project,
                name,
                environment_name,
                &strategies::default_for(name),
                actor,
                now,
            )?;
        }
        store_switch(conn, project, &before, enabled, actor, now)
    })
}

/// Sets a feature's switch in one environment and nothing else: an import reproduces its
/// document as it is, without the default strategy [`set_enabled`] adds.
pub(crate) fn write_enabled(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    environment_name: &str,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        get(conn, project, name)?;
        let before = environment(conn, name, environment_name)?;
        store_switch(conn, project, &before, enabled, actor, now)
    })
}

/// Writes the switch of the checked row `before` and its audit event.
fn store_switch(
    conn: &mut DbConnection,
    project: &str,
    before: &FeatureEnvironmentRow,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let (name, environment_name) = (before.feature_name.as_str(), before.environment_name.as_str());
    diesel::update(feature_environments::table.find((name, environment_name)))
        .set(feature_environments::enabled.eq(enabled))
        .execute(conn)?;
    events::record(
        conn,
        &NewEvent {
            project: Some(project.into()),
            environment: Some(environment_name.into()),
            feature_name: Some(name.into()),
            data: Some(to_json("data", &serde_json::json!({"enabled": enabled}))?),
            pre_data: Some(to_json(
                "pre_data",
                &serde_json::json!({"enabled": before.enabled}),
            )?),
            ..NewEvent::new(
                if enabled {
                    EventType::FeatureEnvironmentEnabled
                } else {
                    EventType::FeatureEnvironmentDisabled
                },
                actor,
                now,
            )
        },
    )
}

/// Archives a feature: SDKs and the playground no longer see it; its name stays taken.
pub fn archive(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        get(conn, project, name)?;
        diesel::update(features::table.find(name))
            .set(features::archived_at.eq(Some(now)))
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                feature_name: Some(name.into()),
                ..NewEvent::new(EventType::FeatureArchived, actor, now)
            },
        )
    })
}
