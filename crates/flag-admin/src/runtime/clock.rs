//! The one clock every operation reads.

/// The current time in UTC. The store keeps times to the microsecond, the precision PostgreSQL
/// keeps, and truncates what it is given itself.
pub fn now() -> chrono::NaiveDateTime {
    use chrono::SubsecRound as _;
    chrono::Utc::now().naive_utc().trunc_subsecs(6)
}
