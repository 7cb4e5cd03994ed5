//! What is kept in memory as of one store revision: the revision watch, and the one cache every
//! revision-keyed value goes through (API tokens, compiled environments, client-API answers).
//!
//! The store's revision is its newest audit event id. Every write records an event, so a value
//! built at a revision stays right until the revision moves, on this replica or any other
//! replica of the same database.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use flag_store::{DbConnection, Store, StoreError, queries};
use tokio::sync::OnceCell;

use crate::runtime::error::AdminError;

/// The store's revision as this replica last read it.
///
/// Caches ask [`RevisionWatch::fresh`] first: it gives the revision without asking the database
/// while the last reading is younger than [`RevisionWatch::POLL`] and this process has committed
/// no write since (`flag_store::connection::local_commits`). So a replica sees its own writes on
/// the next request and other replicas' writes within `POLL`, and while nothing changes, a
/// cached value needs no database work at all.
#[derive(Debug, Default)]
pub struct RevisionWatch {
    reading: Mutex<Option<Reading>>,
}

#[derive(Debug, Clone, Copy)]
struct Reading {
    revision: i32,
    commits: u64,
    at: Instant,
}

impl RevisionWatch {
    /// How long a reading stands for other replicas' writes.
    pub const POLL: Duration = Duration::from_millis(250);

    fn lock(&self) -> MutexGuard<'_, Option<Reading>> {
        self.reading.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The revision, when the last reading still stands.
    pub fn fresh(&self) -> Option<i32> {
        let reading = (*self.lock())?;
        (reading.at.elapsed() < Self::POLL && reading.commits == flag_store::connection::local_commits())
            .then_some(reading.revision)
    }

    /// Records a reading of `revision`, taken when `local_commits()` was `commits`, unless a
    /// reading taken after more commits is already recorded.
    pub fn observe(&self, revision: i32, commits: u64) {
        let mut reading = self.lock();
        if reading.is_none_or(|last| last.commits <= commits) {
            *reading = Some(Reading {
                revision,
                commits,
                at: Instant::now(),
            });
        }
    }

    /// The revision: the standing reading, else one read on the blocking pool.
    pub async fn current(self: &Arc<Self>, store: &Store) -> Result<i32, AdminError> {
        if let Some(revision) = self.fresh() {
            return Ok(revision);
        }
        let watch = Arc::clone(self);
        crate::runtime::db::run(store, move |conn| watch.read(conn)).await
    }

    /// Reads the revision from the database and records it.
    pub fn read(&self, conn: &mut DbConnection) -> Result<i32, StoreError> {
        let commits = flag_store::connection::local_commits();
        let revision = queries::events::latest_id(conn)?;
        self.observe(revision, commits);
        Ok(revision)
    }
}

/// Values by key, each as of the revision it was built at, at most `capacity` of them.
///
/// A value serves every request that observed its revision or an older one. The first request
/// for a key at a newer revision builds the value; requests that arrive meanwhile wait for that
/// one build instead of starting their own, and the builder is handed the value it replaces.
/// Past the capacity, a new key first drops entries of older revisions, then the one used least
/// recently.
#[derive(Debug)]
pub struct RevisionCache<K, V> {
    slots: Mutex<HashMap<K, Arc<Slot<V>>>>,
    capacity: usize,
    /// Counts look-ups, to know which entry was used least recently.
    clock: AtomicU64,
}

#[derive(Debug)]
struct Slot<V> {
    revision: i32,
    value: OnceCell<Arc<V>>,
    /// The value this slot replaces, which a builder may reuse.
    previous: Option<Arc<V>>,
    used: AtomicU64,
}

impl<K: Clone + Eq + Hash, V> RevisionCache<K, V> {
    /// An empty cache of at most `capacity` entries.
    pub fn new(capacity: usize) -> Self {
        Self {
            slots: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
            clock: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, Arc<Slot<V>>>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value for `key`, when one is built at `revision` or later.
    pub fn get(&self, key: &K, revision: i32) -> Option<Arc<V>> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let slots = self.lock();
        let slot = slots.get(key).filter(|slot| slot.revision >= revision)?;
        let value = slot.value.get().map(Arc::clone)?;
        slot.used.store(now, Ordering::Relaxed);
        Some(value)
    }

    /// Keeps `value` for `key` as of `revision`, unless a value of a later revision is kept.
    pub fn insert(&self, key: K, revision: i32, value: Arc<V>) {
        let slot = self.slot(&key, revision);
        // A slot of this revision already built keeps its value: both reflect the same revision.
        let _ = slot.value.set(value);
    }

    /// The value for `key` as of `revision`: the one kept, or the one `build` makes, given the
    /// value it replaces. Concurrent callers share one build.
    pub async fn get_or_build<F, Fut>(&self, key: &K, revision: i32, build: F) -> Result<Arc<V>, AdminError>
    where
        F: FnOnce(Option<Arc<V>>) -> Fut,
        Fut: Future<Output = Result<Arc<V>, AdminError>>,
    {
        let slot = self.slot(key, revision);
        slot.value
            .get_or_try_init(|| build(slot.previous.clone()))
            .await
            .map(Arc::clone)
    }

    /// The slot for `key` at `revision` or later, made when there is none.
    fn slot(&self, key: &K, revision: i32) -> Arc<Slot<V>> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut slots = self.lock();
        if let Some(slot) = slots.get(key).filter(|slot| slot.revision >= revision) {
            slot.used.store(now, Ordering::Relaxed);
            return Arc::clone(slot);
        }
        if slots.len() >= self.capacity && !slots.contains_key(key) {
            slots.retain(|_, slot| slot.revision >= revision);
            if slots.len() >= self.capacity {
                let oldest = slots
                    .iter()
                    .min_by_key(|(_, slot)| slot.used.load(Ordering::Relaxed))
                    .map(|(key, _)| key.clone());
                if let Some(oldest) = oldest {
                    slots.remove(&oldest);
                }
            }
        }
        let previous = slots.get(key).and_then(|slot| slot.value.get()).map(Arc::clone);
        let slot = Arc::new(Slot {
            revision,
            value: OnceCell::new(),
            previous,
            used: AtomicU64::new(now),
        });
        slots.insert(key.clone(), Arc::clone(&slot));
        slot
    }

    /// How many entries are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_value_serves_its_revision_and_older_ones_and_is_rebuilt_after() -> Result<(), AdminError> {
        let cache: RevisionCache<&str, i32> = RevisionCache::new(4);
        let built = cache
            .get_or_build(&"a", 3, |_| async { Ok(Arc::new(30)) })
            .await?;
        assert_eq!(*built, 30);
        assert_eq!(cache.get(&"a", 2).as_deref(), Some(&30));
        assert_eq!(cache.get(&"a", 4), None);
        let rebuilt = cache
            .get_or_build(&"a", 4, |previous| async move {
                Ok(Arc::new(previous.map_or(0, |value| *value) + 10))
            })
            .await?;
        assert_eq!(*rebuilt, 40, "the builder is handed the value it replaces");
        Ok(())
    }

    #[test]
    fn past_its_capacity_the_least_recently_used_entry_goes() {
        let cache: RevisionCache<u8, u8> = RevisionCache::new(2);
        cache.insert(1, 1, Arc::new(1));
        cache.insert(2, 1, Arc::new(2));
        assert_eq!(cache.get(&1, 1).as_deref(), Some(&1));
        cache.insert(3, 1, Arc::new(3));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&2, 1), None, "2 was used least recently");
        assert_eq!(cache.get(&1, 1).as_deref(), Some(&1));
        // Entries of older revisions go first.
        cache.insert(4, 2, Arc::new(4));
        assert_eq!(cache.get(&4, 2).as_deref(), Some(&4));
        assert_eq!(cache.len(), 1);
    }
}
