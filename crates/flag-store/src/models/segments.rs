//! Segments: named lists of constraints that strategies share.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use flag_eval::Constraint;

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::segments;

/// A segment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = segments, check_for_backend(crate::connection::MultiBackend))]
pub struct SegmentRow {
    /// Segment id.
    pub id: i32,
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Project it is limited to, if any.
    pub project_id: Option<String>,
    /// Constraints, JSON.
    pub constraints: String,
    /// Creator.
    pub created_by: Option<String>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl SegmentRow {
    /// The constraints, decoded from `constraints`.
    pub fn constraints(&self) -> Result<Vec<Constraint>, StoreError> {
        from_json("segment", self.id, "constraints", &self.constraints)
    }
}

/// A new segment.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = segments)]
pub struct NewSegment {
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Project it is limited to, if any.
    pub project_id: Option<String>,
    /// Constraints, JSON.
    pub constraints: String,
    /// Creator.
    pub created_by: Option<String>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl NewSegment {
    /// A segment of `constraints`, created by `created_by` `at`; the store writes the
    /// constraints as JSON and keeps the time to the microsecond.
    pub fn new(
        name: String,
        description: Option<String>,
        project_id: Option<String>,
        constraints: &[flag_eval::Constraint],
        created_by: Option<String>,
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            description,
            project_id,
            constraints: crate::queries::to_json("segments.constraints", constraints)?,
            created_by,
            created_at: crate::time::stored(at),
        })
    }
}
