//! The audit log.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{EventRow, NewEvent};
use crate::schema::events;

/// Appends an event. Call it inside the transaction of the write it records. As in Unleash, an
/// event whose value before and after are the same records nothing: nothing changed.
pub fn record(conn: &mut DbConnection, event: &NewEvent) -> Result<(), StoreError> {
    if let (Some(data), Some(pre_data)) = (&event.data, &event.pre_data)
        && unchanged(data, pre_data)
    {
        return Ok(());
    }
    if event.tags.is_none()
        && let Some(feature) = &event.feature_name
    {
        let tags = crate::queries::tags::of_feature(conn, feature)?;
        let event = event.clone().with_tags(&tags)?;
        diesel::insert_into(events::table).values(&event).execute(conn)?;
        return Ok(());
    }
    diesel::insert_into(events::table).values(event).execute(conn)?;
    Ok(())
}

/// Whether two JSON values are equal, whatever their key order (maps compare as maps).
fn unchanged(data: &str, pre_data: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(data),
        serde_json::from_str::<serde_json::Value>(pre_data),
    ) {
        (Ok(data), Ok(pre_data)) => data == pre_data,
        _ => false,
    }
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

/// Which events a search returns: each list given keeps the events whose field is one of its
/// values, and the others narrow further; newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Text found in the event's data, its data before, or its tags, in any letter case.
    pub query: Option<String>,
    /// Flags.
    pub features: Option<Vec<String>>,
    /// Projects.
    pub projects: Option<Vec<String>>,
    /// Event types.
    pub types: Option<Vec<String>>,
    /// Users, by id.
    pub created_by: Option<Vec<i32>>,
    /// Environments.
    pub environments: Option<Vec<String>>,
    /// Event ids.
    pub ids: Option<Vec<i32>>,
    /// From this time on.
    pub from: Option<NaiveDateTime>,
    /// Before this time.
    pub to: Option<NaiveDateTime>,
    /// Only events about a project: what users who are not administrators see.
    pub with_project: bool,
}

/// The events `filter` keeps, newest first, `limit` of them after skipping `offset`, with how
/// many it keeps in all.
pub fn search(
    conn: &mut DbConnection,
    filter: &EventFilter,
    offset: i64,
    limit: i64,
) -> Result<(Vec<EventRow>, i64), StoreError> {
    let query = || {
        let mut query = events::table.into_boxed();
        if let Some(features) = &filter.features {
            query = query.filter(events::feature_name.eq_any(features.clone()));
        }
        if let Some(projects) = &filter.projects {
            query = query.filter(events::project.eq_any(projects.clone()));
        }
        if let Some(types) = &filter.types {
            query = query.filter(events::event_type.eq_any(types.clone()));
        }
        if let Some(users) = &filter.created_by {
            query = query.filter(events::created_by_user_id.eq_any(users.clone()));
        }
        if let Some(environments) = &filter.environments {
            query = query.filter(events::environment.eq_any(environments.clone()));
        }
        if let Some(ids) = &filter.ids {
            query = query.filter(events::id.eq_any(ids.clone()));
        }
        if let Some(from) = filter.from {
            query = query.filter(events::created_at.ge(from));
        }
        if let Some(to) = filter.to {
            query = query.filter(events::created_at.lt(to));
        }
        if filter.with_project {
            query = query.filter(events::project.is_not_null());
        }
        if let Some(text) = &filter.query {
            use diesel::dsl::sql;
            use diesel::sql_types::{Bool, Text};
            let pattern = format!("%{}%", flag_eval::fold_case(text));
            query = query.filter(
                sql::<Bool>("(lower(coalesce(data, '')) LIKE ")
                    .bind::<Text, _>(pattern.clone())
                    .sql(" OR lower(coalesce(pre_data, '')) LIKE ")
                    .bind::<Text, _>(pattern.clone())
                    .sql(" OR lower(coalesce(tags, '')) LIKE ")
                    .bind::<Text, _>(pattern)
                    .sql(")"),
            );
        }
        query
    };
    let total: i64 = query().count().get_result(conn)?;
    let rows = query()
        .order((events::created_at.desc(), events::id.desc()))
        .offset(offset)
        .limit(limit)
        .select(EventRow::as_select())
        .load(conn)?;
    Ok((rows, total))
}

/// The users who wrote events, as `(user id, name written)`, one per id, by id.
pub fn creators(conn: &mut DbConnection) -> Result<Vec<(Option<i32>, String)>, StoreError> {
    let mut rows: Vec<(Option<i32>, String)> = events::table
        .select((events::created_by_user_id, events::created_by))
        .distinct()
        .order((events::created_by_user_id.asc(), events::created_by.asc()))
        .load(conn)?;
    rows.dedup_by(|next, previous| next.0 == previous.0);
    Ok(rows)
}

/// Who wrote events about `feature`, as `(user id, name written)`, most recent first.
pub fn writers_of_feature(
    conn: &mut DbConnection,
    feature: &str,
) -> Result<Vec<(Option<i32>, String)>, StoreError> {
    let rows: Vec<(Option<i32>, String)> = events::table
        .filter(events::feature_name.eq(feature))
        .order(events::id.desc())
        .select((events::created_by_user_id, events::created_by))
        .load(conn)?;
    let mut writers: Vec<(Option<i32>, String)> = Vec::new();
    for row in rows {
        if !writers.iter().any(|known| known.0 == row.0) {
            writers.push(row);
        }
    }
    Ok(writers)
}

/// When `project`'s flags were last written, and whether a flag of it was ever switched on.
pub fn project_activity(
    conn: &mut DbConnection,
    project: &str,
) -> Result<(Option<NaiveDateTime>, bool), StoreError> {
    use diesel::dsl::max;
    let last: Option<NaiveDateTime> = events::table
        .filter(events::project.eq(project))
        .filter(events::feature_name.is_not_null())
        .select(max(events::created_at))
        .first(conn)?;
    let switched_on: i64 = events::table
        .filter(events::project.eq(project))
        .filter(events::event_type.eq(crate::models::EventType::FeatureEnvironmentEnabled.as_str()))
        .count()
        .get_result(conn)?;
    Ok((last, switched_on > 0))
}

/// The times of `project`'s events since `since`, oldest first.
pub fn times_of_project(
    conn: &mut DbConnection,
    project: &str,
    since: NaiveDateTime,
) -> Result<Vec<NaiveDateTime>, StoreError> {
    Ok(events::table
        .filter(events::project.eq(project))
        .filter(events::created_at.ge(since))
        .order(events::created_at.asc())
        .select(events::created_at)
        .load(conn)?)
}

/// The newest `limit` events of `project`.
pub fn latest_of_project(
    conn: &mut DbConnection,
    project: &str,
    limit: i64,
) -> Result<Vec<EventRow>, StoreError> {
    Ok(events::table
        .filter(events::project.eq(project))
        .order((events::created_at.desc(), events::id.desc()))
        .limit(limit)
        .select(EventRow::as_select())
        .load(conn)?)
}
