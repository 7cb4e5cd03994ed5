//! Times as the store keeps them.

use chrono::{NaiveDateTime, SubsecRound as _};

/// `at` to the microsecond, the precision PostgreSQL keeps, so a time reads back exactly as it
/// was written on either backend, whatever precision the caller's clock has.
pub fn stored(at: NaiveDateTime) -> NaiveDateTime {
    at.trunc_subsecs(6)
}

/// `at` as Unleash writes times in JSON: RFC 3339 in UTC, to the millisecond.
pub fn iso(at: NaiveDateTime) -> String {
    at.and_utc().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
