//! Queries, one module per entity. Each is a free function over `&mut DbConnection`
//! returning `Result<_, StoreError>`; multi-step writes run in one write transaction
//! ([`crate::connection`]).
//!
//! Writes take `actor` (who writes, for the audit log) and `now` (UTC), so callers decide the
//! clock and tests are deterministic.

pub mod access;
pub mod addons;
pub mod api_tokens;
pub mod archive;
pub mod change_requests;
pub mod client_metrics;
pub mod context_fields;
pub mod dependencies;
pub mod environments;
pub mod evaluation;
pub mod events;
pub mod export;
pub mod feature_types;
pub mod features;
pub mod history;
pub mod import;
pub mod lifecycle;
pub mod migrate;
pub mod mirror;
pub mod projects;
pub mod search;
pub mod segments;
pub mod sessions;
pub mod settings;
pub mod signup_tokens;
pub mod strategies;
pub mod tags;
pub mod users;
pub mod variants;

use std::cmp::Ordering;
use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::StoreError;

pub(crate) use crate::connection::write;

/// Runs reads that must agree with each other (a revision and the document it describes, several
/// environments' documents) in one snapshot of the database; see [`crate::connection`].
pub fn snapshot<T>(
    conn: &mut crate::connection::DbConnection,
    work: impl FnOnce(&mut crate::connection::DbConnection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    crate::connection::read(conn, work)
}

/// Runs `work` as one write transaction (see [`crate::connection`]), giving it the time it is
/// made at, read from `clock` once the write lock is held: writes made at once are then dated in
/// the order they commit in, as the history of what was in force at each moment needs. A write
/// inside another runs in a savepoint and reads the clock again.
pub fn write_at<T>(
    conn: &mut crate::connection::DbConnection,
    clock: impl FnOnce() -> chrono::NaiveDateTime,
    work: impl FnOnce(&mut crate::connection::DbConnection, chrono::NaiveDateTime) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    write(conn, |conn| {
        let now = crate::time::stored(clock());
        work(conn, now)
    })
}

/// Serialises a value for a JSON column.
pub(crate) fn to_json<T: Serialize + ?Sized>(column: &'static str, value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|source| StoreError::Encode { column, source })
}

/// Reads a JSON column of one row back; `entity` and `key` name the row in the error, so a
/// corrupt row can be found. The key is formatted only when decoding fails.
pub(crate) fn from_json<T: DeserializeOwned>(
    entity: &'static str,
    key: impl Display,
    column: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|source| StoreError::Corrupt {
        entity,
        key: key.to_string(),
        column,
        source: source.into(),
    })
}

/// Refuses a write whose JSON column would not read back (a `Corrupt` error from the row's own
/// accessor), so that one bad write cannot make every later read of its list fail.
pub(crate) fn refuse_unreadable(error: StoreError) -> StoreError {
    match error {
        StoreError::Corrupt {
            entity,
            key,
            column,
            source,
        } => StoreError::Rejected {
            message: format!("{entity} {key} has invalid {column}: {source}"),
        },
        other => other,
    }
}

/// The order Unleash stores variants in (JavaScript's `localeCompare`): letters compare without
/// regard to case first, and only then by case, so `a` < `B` < `b`.
pub fn name_order(left: &str, right: &str) -> Ordering {
    flag_eval::fold_case(left)
        .cmp(&flag_eval::fold_case(right))
        .then_with(|| right.cmp(left))
}
