//! The audit log.

use crate::connection::DbConnection;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{EventRow, NewEvent};
use crate::schema::events;

/// Appends an event. Call it inside the transaction of the write it records.
pub fn record(conn: &mut DbConnection, event: &NewEvent) -> Result<(), StoreError> {
    diesel::insert_into(events::table).values(event).execute(conn)?;
    Ok(())
}

/// Inserts `$row` into `$table` and records `$event` (built after the insert, so it may read
/// the row) in one write transaction; answers the row: the shape of every plain create.
macro_rules! insert_with_event {
    ($conn:expr, $table:expr, $row:expr, $event:expr) => {
        $crate::queries::write($conn, |conn| {
            diesel::insert_into($table).values($row).execute(conn)?;
            $crate::queries::events::record(conn, &$event)?;
            Ok($row.clone())
        })
    };
}
pub(crate) use insert_with_event;

/// Events about one feature in one environment, oldest first.
pub fn for_feature(
    conn: &mut DbConnection,
    feature: &str,
    environment: &str,
) -> Result<Vec<EventRow>, StoreError> {
    Ok(events::table
        .filter(events::feature_name.eq(feature))
        .filter(events::environment.eq(environment))
        .order(events::id.asc())
        .select(EventRow::as_select())
        .load(conn)?)
}

/// Every event of one type, oldest first.
pub fn of_type(conn: &mut DbConnection, event_type: &str) -> Result<Vec<EventRow>, StoreError> {
    Ok(events::table
        .filter(events::event_type.eq(event_type))
        .order(events::id.asc())
        .select(EventRow::as_select())
        .load(conn)?)
}

/// The newest event's id, 0 when there is none: a revision that changes with every write.
pub fn latest_id(conn: &mut DbConnection) -> Result<i32, StoreError> {
    use diesel::dsl::max;
    Ok(events::table
        .select(max(events::id))
        .first::<Option<i32>>(conn)?
        .unwrap_or(0))
}
