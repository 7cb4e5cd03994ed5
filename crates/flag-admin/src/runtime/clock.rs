//! The one clock every operation reads: the system's in a server, or one a test sets and moves.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, NaiveDateTime, SubsecRound as _, TimeDelta, Utc};

/// The system's time in UTC, as the store keeps times. Only what runs outside an operation reads
/// it (start-up, seeding, the edge's upstream and the migration); operations read their
/// runtime's [`Clock`].
pub fn now() -> NaiveDateTime {
    Utc::now().naive_utc().trunc_subsecs(6)
}

/// The clock an operation reads the time from (the settings carry it): the system's, or a
/// [`ManualClock`]'s. Times are read to the microsecond, the precision PostgreSQL keeps, so a
/// time reads back from the store exactly as it was taken.
#[derive(Clone, Debug, Default)]
pub struct Clock(Option<Arc<AtomicI64>>);

impl Clock {
    /// The system's clock.
    pub fn system() -> Self {
        Self(None)
    }

    /// The time now.
    pub fn now(&self) -> NaiveDateTime {
        match &self.0 {
            None => now(),
            Some(micros) => from_micros(micros.load(Ordering::Acquire)),
        }
    }

    /// The time now, as a UTC time.
    pub fn now_utc(&self) -> DateTime<Utc> {
        self.now().and_utc()
    }
}

/// A clock that stands still until it is set or moved, for tests that decide when each write
/// happens. Every [`Clock`] made from it reads its time.
#[derive(Debug)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `at`, to the microsecond.
    pub fn new(at: NaiveDateTime) -> Self {
        Self(Arc::new(AtomicI64::new(micros_of(at))))
    }

    /// A clock reading the system's time now, then standing still.
    pub fn from_system() -> Self {
        Self::new(now())
    }

    /// The clock operations read, for the settings.
    pub fn clock(&self) -> Clock {
        Clock(Some(Arc::clone(&self.0)))
    }

    /// The time it reads.
    pub fn now(&self) -> NaiveDateTime {
        from_micros(self.0.load(Ordering::Acquire))
    }

    /// Sets the time, to the microsecond; it may go back, as a system clock can.
    pub fn set(&self, at: NaiveDateTime) {
        self.0.store(micros_of(at), Ordering::Release);
    }

    /// Moves the time on by `by` (back, when negative), to the microsecond, stopping at the
    /// first or last time there is.
    pub fn advance(&self, by: TimeDelta) {
        let micros = by.num_microseconds().unwrap_or(if by < TimeDelta::zero() {
            i64::MIN
        } else {
            i64::MAX
        });
        let _ = self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |at| {
            let moved = at.saturating_add(micros);
            Some(micros_of(from_micros(moved)))
        });
    }
}

fn micros_of(at: NaiveDateTime) -> i64 {
    at.and_utc().timestamp_micros()
}

/// The time `micros` after the epoch; past the times there are, the first or last.
fn from_micros(micros: i64) -> NaiveDateTime {
    DateTime::from_timestamp_micros(micros).map_or(
        if micros < 0 {
            NaiveDateTime::MIN
        } else {
            NaiveDateTime::MAX
        },
        |at| at.naive_utc(),
    )
}
