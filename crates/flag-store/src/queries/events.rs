//! The audit log.
//!
//! Events recorded by one write transaction share a group, as the events of one of Unleash's
//! transactions do: the store's write runs each outermost write transaction inside `in_group`,
//! and [`record`] gives the events of that transaction one ULID the first time one of them needs
//! it.

use std::cell::RefCell;

use crate::connection::{Backend, DbConnection};
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{EventRow, EventType, NewEvent};
use crate::schema::events;

/// The `group_type` of events written in one transaction.
pub const TRANSACTION_GROUP: &str = "transaction";

/// Appends an event. Call it inside the transaction of the write it records. As in Unleash, an
/// event whose value before and after are the same records nothing: nothing changed.
pub fn record(conn: &mut DbConnection, event: &NewEvent) -> Result<(), StoreError> {
    match hold(conn, event.clone())? {
        Some(held) => record_held(conn, vec![held]),
        None => Ok(()),
    }
}

/// An event checked and made ready by [`hold`], in the group of the write it was made in, to be
/// written with others by [`record_held`].
#[derive(Debug)]
pub(crate) struct Held {
    event: NewEvent,
    group_id: Option<String>,
}

/// `event` made ready as [`record`] writes it (the rule checked, its group and its flag's tags
/// taken now), or `None` when it records nothing.
pub(crate) fn hold(conn: &mut DbConnection, event: NewEvent) -> Result<Option<Held>, StoreError> {
    // Before anything is skipped as unchanged: a write the rule refuses is refused even when it
    // would change nothing.
    crate::queries::change_requests::guard(conn, &event)?;
    if let (Some(data), Some(pre_data)) = (&event.data, &event.pre_data)
        && unchanged(data, pre_data)
    {
        return Ok(None);
    }
    crate::queries::history::touch(&event);
    let group_id = if written_in_transaction(event.event_type) {
        group_id(event.created_at)
    } else {
        None
    };
    let event = match &event.feature_name {
        Some(feature) if event.tags.is_none() => {
            let tags = crate::queries::tags::of_feature(conn, feature)?;
            event.with_tags(&tags)?
        }
        _ => event,
    };
    Ok(Some(Held { event, group_id }))
}

/// The time of the newest event, the last one written.
fn newest_time(conn: &mut DbConnection) -> Result<Option<NaiveDateTime>, StoreError> {
    Ok(events::table
        .order(events::id.desc())
        .select(events::created_at)
        .first(conn)
        .optional()?)
}

/// Writes `held`, in order: in one statement on PostgreSQL.
///
/// No event is dated before the one written before it: an event given an earlier time (a write
/// whose clock ran behind another replica's, or a system clock set back) takes the newest
/// event's. The audit log's times then grow with its ids, the order writes committed in, and a
/// question about a moment ([`history::revision_at`](crate::queries::history::revision_at))
/// reads every write committed up to it and none after.
pub(crate) fn record_held(conn: &mut DbConnection, held: Vec<Held>) -> Result<(), StoreError> {
    if held.is_empty() {
        return Ok(());
    }
    let mut newest = newest_time(conn)?;
    let rows: Vec<_> = held
        .into_iter()
        .map(|Held { mut event, group_id }| {
            if let Some(newest) = newest
                && event.created_at < newest
            {
                event.created_at = newest;
            }
            newest = Some(event.created_at);
            (
                event,
                (
                    events::group_type.eq(group_id.as_ref().map(|_| TRANSACTION_GROUP)),
                    events::group_id.eq(group_id),
                ),
            )
        })
        .collect();
    match conn {
        DbConnection::Postgres(postgres) if !rows.is_empty() => {
            diesel::insert_into(events::table)
                .values(&rows)
                .execute(postgres)?;
        }
        _ => {
            for row in rows {
                diesel::insert_into(events::table).values(row).execute(conn)?;
            }
        }
    }
    Ok(())
}

thread_local! {
    /// The write transaction running on this thread: `Some(None)` until an event of it takes a
    /// group id, then `Some(Some(id))`; `None` outside any write.
    static GROUP: RefCell<Option<Option<String>>> = const { RefCell::new(None) };
}

/// Runs `work`, one whole write transaction, so that the events it records share one group id.
/// Writes run synchronously on the calling thread, so the group lives in a thread-local and is
/// put back as it was when `work` returns or unwinds.
pub(crate) fn in_group<T>(work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Option<String>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            GROUP.with(|group| *group.borrow_mut() = previous);
        }
    }
    let _restore = Restore(GROUP.with(|group| group.replace(Some(None))));
    work()
}

/// The group id of the write transaction running on this thread, made from `now` the first time
/// it is asked for; `None` outside a write.
fn group_id(now: NaiveDateTime) -> Option<String> {
    GROUP.with(|group| {
        group
            .borrow_mut()
            .as_mut()
            .map(|id| id.get_or_insert_with(|| ulid(now)).clone())
    })
}

/// Whether Unleash records events of this type inside a transaction, so that they carry its
/// group. Its services for webhooks, API tokens, segments, strategy types, tags, flag tags,
/// invite links, settings, flag types, variants and global environments, and its user updates
/// and deletions, store their events outside any transaction, and those events have no group.
fn written_in_transaction(event_type: EventType) -> bool {
    !matches!(
        event_type,
        EventType::AddonConfigCreated
            | EventType::AddonConfigDeleted
            | EventType::AddonConfigUpdated
            | EventType::ApiTokenCreated
            | EventType::ApiTokenDeleted
            | EventType::ApiTokenUpdated
            | EventType::EnvironmentCreated
            | EventType::EnvironmentDisabled
            | EventType::EnvironmentEnabled
            | EventType::FeatureEnvironmentVariantsUpdated
            | EventType::FeatureTagged
            | EventType::FeatureTypeUpdated
            | EventType::FeatureUntagged
            | EventType::PublicSignupTokenCreated
            | EventType::PublicSignupTokenUpdated
            | EventType::PublicSignupTokenUserAdded
            | EventType::SegmentCreated
            | EventType::SegmentDeleted
            | EventType::SegmentUpdated
            | EventType::SettingUpdated
            | EventType::StrategyCreated
            | EventType::StrategyDeleted
            | EventType::StrategyDeprecated
            | EventType::StrategyReactivated
            | EventType::StrategyUpdated
            | EventType::TagCreated
            | EventType::TagDeleted
            | EventType::UserDeleted
            | EventType::UserUpdated
    )
}

/// A ULID, as Unleash's transaction ids are: 48 bits of milliseconds since the epoch, then 80
/// random bits, in Crockford's base 32.
fn ulid(now: NaiveDateTime) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let millis = u128::try_from(now.and_utc().timestamp_millis()).unwrap_or(0) & ((1 << 48) - 1);
    // A v4 UUID's bytes 0..6 and 9..13 are random: its version and variant bits lie elsewhere.
    let random = uuid::Uuid::new_v4().into_bytes();
    let mut value = millis;
    for byte in random[0..6].iter().chain(&random[9..13]) {
        value = (value << 8) | u128::from(*byte);
    }
    (0..26)
        .map(|index| char::from(ALPHABET[((value >> (125 - 5 * index)) & 31) as usize]))
        .collect()
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
    /// Text found in the event's data, its data before, or its tags, as Unleash's `ILIKE
    /// '%text%'` finds it: `%` and `_` are wildcards, and letter case is ignored (on SQLite, the
    /// case of ASCII letters only).
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
    /// Transaction groups.
    pub group_ids: Option<Vec<String>>,
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
    // Unleash matches `data::text ILIKE ? OR tags::text ILIKE ? OR pre_data::text ILIKE ?`, its
    // JSON cast to text in the database's default collation. PostgreSQL does the same here with
    // the columns' "C" collation set aside; SQLite's LIKE ignores the case of ASCII letters.
    let text_match = match conn.backend() {
        Backend::Postgres => "ILIKE",
        Backend::Sqlite => "LIKE",
    };
    let collate = match conn.backend() {
        Backend::Postgres => " COLLATE \"default\"",
        Backend::Sqlite => "",
    };
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
        if let Some(groups) = &filter.group_ids {
            query = query.filter(events::group_id.eq_any(groups.clone()));
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
            let pattern = format!("%{text}%");
            query = query.filter(
                sql::<Bool>(&format!("(data{collate} {text_match} "))
                    .bind::<Text, _>(pattern.clone())
                    .sql(&format!(" OR tags{collate} {text_match} "))
                    .bind::<Text, _>(pattern.clone())
                    .sql(&format!(" OR pre_data{collate} {text_match} "))
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

/// When `project`'s flags were last written.
pub fn project_activity(conn: &mut DbConnection, project: &str) -> Result<Option<NaiveDateTime>, StoreError> {
    use diesel::dsl::max;
    Ok(events::table
        .filter(events::project.eq(project))
        .filter(events::feature_name.is_not_null())
        .select(max(events::created_at))
        .first(conn)?)
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
