//! The connection pool: the one place connections are opened and configured.

use std::path::PathBuf;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, PooledConnection};
use diesel::sqlite::SqliteConnection;

use crate::error::StoreError;

/// A pooled SQLite connection.
pub type Connection = PooledConnection<ConnectionManager<SqliteConnection>>;

/// Where the database is and how connections behave. The store reads no environment; the
/// server builds this from its own configuration.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The SQLite database file; created with its directory when missing.
    pub path: PathBuf,
    /// Connections kept in the pool.
    pub pool_size: u32,
    /// How long a statement waits for another writer before failing with "database is locked".
    pub busy_timeout: Duration,
    /// How long a caller waits for a free connection. Longer than `busy_timeout`, so a busy
    /// database surfaces as a busy error and a saturated pool as [`StoreError::Pool`].
    pub checkout_timeout: Duration,
}

impl StoreConfig {
    /// Defaults for a database at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            pool_size: 8,
            busy_timeout: Duration::from_secs(5),
            checkout_timeout: Duration::from_secs(10),
        }
    }
}

/// Applies the connection settings every connection needs, in the order that matters:
/// `busy_timeout` first (so the following statements already wait instead of failing), then WAL,
/// then `synchronous = NORMAL` (durable across process crashes in WAL mode), then foreign keys.
#[derive(Debug, Clone, Copy)]
struct Pragmas {
    busy_timeout_ms: u128,
}

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, connection: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        connection
            .batch_execute(&format!(
                "PRAGMA busy_timeout = {};
                 PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = NORMAL;
                 PRAGMA foreign_keys = ON;",
                self.busy_timeout_ms
            ))
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// Builds the pool. Connections are opened lazily but one is opened now, so a bad path fails here.
pub(crate) fn build(config: &StoreConfig) -> Result<Pool<ConnectionManager<SqliteConnection>>, StoreError> {
    if let Some(parent) = config
        .path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent).map_err(|error| {
            StoreError::Connection(diesel::ConnectionError::BadConnection(format!(
                "cannot create {}: {error}",
                parent.display()
            )))
        })?;
    }
    let url = config.path.to_string_lossy().into_owned();
    // WAL is a property of the database file. Switch it once, on one connection, before the pool
    // opens several: connections racing to switch it would fail with "database is locked".
    {
        use diesel::Connection;
        let mut first = SqliteConnection::establish(&url)?;
        Pragmas {
            busy_timeout_ms: config.busy_timeout.as_millis(),
        }
        .on_acquire(&mut first)
        .map_err(|error| StoreError::Connection(diesel::ConnectionError::BadConnection(error.to_string())))?;
    }
    let pool = Pool::builder()
        .max_size(config.pool_size.max(1))
        .min_idle(Some(1))
        .connection_timeout(config.checkout_timeout)
        .connection_customizer(Box::new(Pragmas {
            busy_timeout_ms: config.busy_timeout.as_millis(),
        }))
        .build(ConnectionManager::<SqliteConnection>::new(url))?;
    Ok(pool)
}
