//! Times as the store keeps them.

use chrono::{NaiveDateTime, SubsecRound as _};

/// `at` to the microsecond, the precision PostgreSQL keeps, so a time reads back exactly as it
/// was written on either backend, whatever precision the caller's clock has.
pub fn stored(at: NaiveDateTime) -> NaiveDateTime {
    at.trunc_subsecs(6)
}
