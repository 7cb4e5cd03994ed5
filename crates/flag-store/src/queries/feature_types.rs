//! Feature types and their lifetimes.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{Actor, EventType, FeatureTypeRow, NewEvent};
use crate::queries::{events, to_json};
use crate::schema::feature_types;

/// Every feature type, in Unleash's order.
pub fn list(conn: &mut DbConnection) -> Result<Vec<FeatureTypeRow>, StoreError> {
    Ok(feature_types::table
        .order(feature_types::sort_order.asc())
        .select(FeatureTypeRow::as_select())
        .load(conn)?)
}

/// Sets the days after which a flag of type `id` is potentially stale; `None` for never.
pub fn set_lifetime(
    conn: &mut DbConnection,
    id: &str,
    lifetime_days: Option<i32>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<FeatureTypeRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before: FeatureTypeRow = feature_types::table
            .find(id)
            .select(FeatureTypeRow::as_select())
            .first(conn)
            .map_err(StoreError::or_not_found("feature type", id))?;
        diesel::update(feature_types::table.find(id))
            .set(feature_types::lifetime_days.eq(lifetime_days))
            .execute(conn)?;
        let after = FeatureTypeRow {
            lifetime_days,
            ..before.clone()
        };
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(to_json("pre_data", &json(&before))?),
                ..NewEvent::new(EventType::FeatureTypeUpdated, actor, now).with_data(&json(&after))?
            },
        )?;
        Ok(after)
    })
}

/// A feature type as Unleash writes it: `{id, name, description, lifetimeDays}`.
pub fn json(row: &FeatureTypeRow) -> serde_json::Value {
    serde_json::json!({
        "id": row.id,
        "name": row.name,
        "description": row.description,
        "lifetimeDays": row.lifetime_days,
    })
}
