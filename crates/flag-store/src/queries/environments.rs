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
