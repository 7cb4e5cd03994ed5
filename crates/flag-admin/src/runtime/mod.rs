//! The floor every wing stands on: the store and its revision, the settings, the CPU pool, the
//! clock, the errors, the domain types, and the rules every input goes through.
//!
//! [`Runtime`] is the state it owns. Catalogue operations take it alone; the identity and
//! delivery wings take it beside their own state.

pub mod cache;
pub mod clock;
pub mod cpu_pool;
pub mod db;
pub mod domain;
pub mod error;
pub mod health;
pub mod input;
pub mod memory;
pub mod secrets;
pub mod settings;
pub mod system;
pub mod url_policy;

use std::sync::Arc;

use flag_store::Store;

use self::cache::RevisionWatch;
use self::cpu_pool::CpuPool;
use self::error::AdminError;
use self::settings::Settings;

/// The store, the settings, the store's revision as last read, and the CPU pool.
#[derive(Debug)]
pub struct Runtime {
    pub(crate) store: Store,
    pub(crate) settings: Settings,
    /// The store's revision as last read, which every revision-keyed cache is checked against.
    pub(crate) revision: Arc<RevisionWatch>,
    /// Where CPU-heavy work runs: evaluation and password hashing.
    pub(crate) cpu: CpuPool,
    /// The catalogue flag searches filter, by the time window it was read in and this process's
    /// count of commits then (see `catalogue::search`), as of a revision.
    pub(crate) catalogue: self::cache::RevisionCache<(u64, u64), flag_store::queries::search::Catalogue>,
}

impl Runtime {
    /// The runtime over `store`; fails only when no CPU-pool thread can start.
    pub fn new(store: Store, settings: Settings) -> Result<Self, rayon::ThreadPoolBuildError> {
        Ok(Self {
            store,
            cpu: CpuPool::new(settings.cpu_threads)?,
            settings,
            revision: Arc::default(),
            catalogue: self::cache::RevisionCache::new(1),
        })
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The time now, by the settings' clock: what every operation reads.
    pub fn now(&self) -> chrono::NaiveDateTime {
        self.settings.clock.now()
    }

    /// The time now by the settings' clock, as a UTC time.
    pub fn now_utc(&self) -> chrono::DateTime<chrono::Utc> {
        self.settings.clock.now_utc()
    }

    /// The CPU pool, for interfaces that render large answers off the request threads.
    pub fn cpu(&self) -> &CpuPool {
        &self.cpu
    }

    /// The store's current revision: every cache keyed by revision asks it first.
    pub async fn revision(&self) -> Result<i32, AdminError> {
        self.revision.current(&self.store).await
    }

    /// The store's revision read from the database now, for an answer that must not be behind
    /// what another replica already answered.
    pub async fn revision_now(&self) -> Result<i32, AdminError> {
        let watch = Arc::clone(&self.revision);
        db::run(&self.store, move |conn| watch.read(conn)).await
    }
}
