//! Global environments.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EnvironmentRow, EventType, NewEvent};
use crate::queries::events;
use crate::schema::environments;

/// All environments, by sort order then name.
pub fn list(conn: &mut DbConnection) -> Result<Vec<EnvironmentRow>, StoreError> {
    Ok(environments::table
        .order((environments::sort_order.asc(), environments::name.asc()))
        .select(EnvironmentRow::as_select())
        .load(conn)?)
}

/// One environment.
pub fn get(conn: &mut DbConnection, name: &str) -> Result<EnvironmentRow, StoreError> {
    environments::table
        .find(name)
        .select(EnvironmentRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("environment", name))
}

/// Creates an environment; a taken name is a conflict.
pub fn create(
    conn: &mut DbConnection,
    row: &EnvironmentRow,
    actor: &Actor,
) -> Result<EnvironmentRow, StoreError> {
    events::insert_with_event!(
        conn,
        environments::table,
        row,
        NewEvent {
            environment: Some(row.name.clone()),
            ..NewEvent::new(EventType::EnvironmentCreated, actor, row.created_at)
                .with_data(&serde_json::json!({"name": row.name, "type": row.environment_type}))?
        }
    )
}

/// Turns an environment on or off globally.
pub fn set_enabled(
    conn: &mut DbConnection,
    name: &str,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let updated = diesel::update(environments::table.find(name))
            .set(environments::enabled.eq(enabled))
            .execute(conn)?;
        if updated == 0 {
            return Err(StoreError::not_found("environment", name));
        }
        let event_type = if enabled {
            EventType::EnvironmentEnabled
        } else {
            EventType::EnvironmentDisabled
        };
        events::record(
            conn,
            &NewEvent {
                environment: Some(name.into()),
                ..NewEvent::new(event_type, actor, now)
            },
        )
    })
}

/// Sets the sort order of the named environments; unknown names are skipped, as in Unleash.
pub fn set_sort_orders(conn: &mut DbConnection, orders: &[(String, i32)]) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        for (name, order) in orders {
            diesel::update(environments::table.find(name))
                .set(environments::sort_order.eq(order))
                .execute(conn)?;
        }
        Ok(())
    })
}

/// For each environment, how many live flags of `project` are on there.
pub fn enabled_flags_of_project(
    conn: &mut DbConnection,
    project: &str,
) -> Result<std::collections::HashMap<String, i64>, StoreError> {
    use crate::schema::{feature_environments, features};
    let rows: Vec<String> = feature_environments::table
        .inner_join(features::table)
        .filter(features::project_id.eq(project))
        .filter(features::archived_at.is_null())
        .filter(feature_environments::enabled.eq(true))
        .select(feature_environments::environment_name)
        .load(conn)?;
    let mut counts = std::collections::HashMap::new();
    for environment in rows {
        *counts.entry(environment).or_insert(0) += 1;
    }
    Ok(counts)
}
