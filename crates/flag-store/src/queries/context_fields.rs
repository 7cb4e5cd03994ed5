//! Context field definitions.

use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;

use crate::error::StoreError;
use crate::models::{ContextFieldRow, EventType, NewEvent};
use crate::queries::{events, refuse_unreadable, to_json};
use crate::schema::context_fields;

/// All fields, by sort order then name.
pub fn list(conn: &mut SqliteConnection) -> Result<Vec<ContextFieldRow>, StoreError> {
    Ok(context_fields::table
        .order((context_fields::sort_order.asc(), context_fields::name.asc()))
        .select(ContextFieldRow::as_select())
        .load(conn)?)
}

/// Creates a field; a taken name is a conflict, and legal values that
/// [`ContextFieldRow::legal_values`] cannot read are [`StoreError::Rejected`].
pub fn create(
    conn: &mut SqliteConnection,
    row: &ContextFieldRow,
    actor: &str,
) -> Result<ContextFieldRow, StoreError> {
    row.legal_values().map_err(refuse_unreadable)?;
    crate::queries::write(conn, |conn| {
        diesel::insert_into(context_fields::table)
            .values(row)
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                data: Some(to_json("data", &serde_json::json!({"name": row.name}))?),
                ..NewEvent::new(EventType::ContextFieldCreated, actor.into(), row.created_at)
            },
        )?;
        Ok(row.clone())
    })
}
