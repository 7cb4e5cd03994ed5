//! Segments.

use diesel::prelude::*;

use crate::connection::{DbConnection, MultiBackend};

use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, NewSegment, SegmentRow};
use crate::queries::{context_fields, events, refuse_unreadable, to_json};
use crate::schema::segments;

/// Creates a segment; a taken name is a conflict, and a project that does not exist is
/// [`StoreError::Rejected`], like a missing parent in [`crate::queries::dependencies::set`]: the
/// caller named it in what it asked to write.
pub fn create(
    conn: &mut DbConnection,
    segment: &NewSegment,
    actor: &Actor,
) -> Result<SegmentRow, StoreError> {
    let constraints: Vec<flag_eval::Constraint> =
        crate::queries::from_json("segment", &segment.name, "constraints", &segment.constraints)
            .map_err(refuse_unreadable)?;
    crate::queries::write(conn, |conn| {
        context_fields::check_legal_values(conn, &constraints)?;
        // The project is the segments table's only foreign key, so a foreign-key violation can
        // only mean that it does not exist.
        let row: SegmentRow = diesel::insert_into(segments::table)
            .values(segment)
            .returning(<SegmentRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)
            .map_err(StoreError::on_missing_reference(|| StoreError::Rejected {
                message: format!(
                    "no project {} exists",
                    segment.project_id.as_deref().unwrap_or_default()
                ),
            }))?;
        events::record(
            conn,
            &NewEvent {
                project: row.project_id.clone(),
                data: Some(to_json(
                    "data",
                    &serde_json::json!({"id": row.id, "name": row.name}),
                )?),
                ..NewEvent::new(EventType::SegmentCreated, actor, row.created_at)
            },
        )?;
        Ok(row)
    })
}

/// All segments, by id.
pub fn list(conn: &mut DbConnection) -> Result<Vec<SegmentRow>, StoreError> {
    Ok(segments::table
        .order(segments::id.asc())
        .select(SegmentRow::as_select())
        .load(conn)?)
}

/// One segment.
pub fn get(conn: &mut DbConnection, id: i32) -> Result<SegmentRow, StoreError> {
    segments::table
        .find(id)
        .select(SegmentRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("segment", id.to_string()))
}

/// A stored segment as flag-eval reads it.
pub fn to_model(row: &SegmentRow) -> Result<flag_eval::Segment, StoreError> {
    Ok(flag_eval::Segment {
        id: i64::from(row.id),
        name: row.name.clone(),
        constraints: row.constraints()?,
    })
}
