//! One connection type over both backends, and the two things that differ between them at run
//! time: how a write transaction starts and how a read sees one snapshot.
//!
//! Queries are written once against [`DbConnection`], Diesel's `MultiConnection` over PostgreSQL
//! and SQLite; each statement is built for whichever backend the connection is.

use diesel::connection::{AnsiTransactionManager, SimpleConnection, TransactionManager};
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;

use crate::error::StoreError;

#[allow(
    missing_docs,
    reason = "the backend, row and bind types that diesel's MultiConnection derive generates carry no docs"
)]
mod multi {
    use super::{PgConnection, SqliteConnection};

    /// A database connection of either backend.
    #[derive(diesel::MultiConnection)]
    pub enum DbConnection {
        /// PostgreSQL, for several replicas on one database.
        Postgres(PgConnection),
        /// SQLite, one file, the default.
        Sqlite(SqliteConnection),
    }
}

pub use multi::{DbConnection, MultiBackend};

impl std::fmt::Debug for DbConnection {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Self::Postgres(_) => "DbConnection::Postgres",
            Self::Sqlite(_) => "DbConnection::Sqlite",
        })
    }
}

/// The backend of a connection or a configured database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// PostgreSQL.
    Postgres,
    /// SQLite.
    Sqlite,
}

impl Backend {
    /// The name the docs and logs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Postgres => "postgres",
            Self::Sqlite => "sqlite",
        }
    }
}

/// The PostgreSQL advisory lock every write transaction takes first; see [`write`].
pub(crate) const WRITE_LOCK: i64 = 0x666c_6167_6477;
/// The PostgreSQL advisory lock a replica holds while it migrates, so replicas starting together
/// migrate once, one after the other.
pub(crate) const MIGRATION_LOCK: i64 = 0x666c_6167_6d69;

/// Write transactions this process has committed, on any store.
static LOCAL_COMMITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many write transactions this process has committed so far. A cache that polls the
/// database for other processes' writes reads this to see its own at once: when it has not
/// moved since the last poll, nothing this process wrote is missing from what was read then.
pub fn local_commits() -> u64 {
    LOCAL_COMMITS.load(std::sync::atomic::Ordering::Acquire)
}

impl DbConnection {
    /// Which backend this connection speaks to.
    pub fn backend(&self) -> Backend {
        match self {
            Self::Postgres(_) => Backend::Postgres,
            Self::Sqlite(_) => Backend::Sqlite,
        }
    }
}

/// Runs a write in a transaction that holds the database's one write lock from its first
/// statement, so every read it makes is still true when it commits, on any replica. A call made
/// inside another write runs in a savepoint, so writes compose (but for a write that fails whole
/// on any error, such as a batch of scheduled change requests applied at once).
///
/// - SQLite: `BEGIN IMMEDIATE` takes the file's write lock; other writers wait up to the busy
///   timeout.
/// - PostgreSQL: a READ COMMITTED transaction whose first statement takes a transaction-scoped
///   advisory lock ([`WRITE_LOCK`]); other writers, on this replica or another, wait up to the
///   lock timeout (the same busy timeout). Every statement after the lock sees every write
///   committed before it, so read-modify-write calls (variants-batch, token updates, signups)
///   behave exactly as on SQLite. Writes commit one at a time, which also keeps the audit log's
///   ids in commit order: the newest event id is a revision that only grows.
pub(crate) fn write<T>(
    conn: &mut DbConnection,
    work: impl FnOnce(&mut DbConnection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    use diesel::Connection;
    if in_transaction(conn)? {
        // Inside a write that fails whole on any error, a savepoint would undo nothing that the
        // whole's rollback does not.
        if crate::queries::change_requests::fails_whole() {
            return work(conn);
        }
        return conn.transaction(work);
    }
    match conn {
        DbConnection::Sqlite(sqlite) => {
            AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN IMMEDIATE")?;
        }
        DbConnection::Postgres(postgres) => {
            // Named, not inherited: under a stricter `default_transaction_isolation` the snapshot
            // would be taken before the lock is granted.
            AnsiTransactionManager::begin_transaction_sql(postgres, "BEGIN ISOLATION LEVEL READ COMMITTED")?;
            if let Err(error) = conn.batch_execute(&format!("SELECT pg_advisory_xact_lock({WRITE_LOCK})")) {
                rollback(conn);
                return Err(error.into());
            }
        }
    }
    // What the write changed joins the playground's history before it commits.
    let written = crate::queries::events::in_group(|| {
        crate::queries::history::recording(|| {
            finish(conn, |conn| {
                let written = work(conn)?;
                crate::queries::history::capture(conn)?;
                Ok(written)
            })
        })
    })?;
    LOCAL_COMMITS.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    Ok(written)
}

/// Runs reads that must agree with each other (a document assembled from several tables, and
/// the revision it reflects) in one snapshot: a deferred transaction on SQLite, a REPEATABLE READ
/// READ ONLY one on PostgreSQL. Inside a write it simply runs, in the write's transaction.
pub(crate) fn read<T>(
    conn: &mut DbConnection,
    work: impl FnOnce(&mut DbConnection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    if in_transaction(conn)? {
        return work(conn);
    }
    match conn {
        DbConnection::Sqlite(sqlite) => AnsiTransactionManager::begin_transaction_sql(sqlite, "BEGIN")?,
        DbConnection::Postgres(postgres) => AnsiTransactionManager::begin_transaction_sql(
            postgres,
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        )?,
    }
    finish(conn, work)
}

/// Whether a transaction is open on `conn`.
fn in_transaction(conn: &mut DbConnection) -> Result<bool, StoreError> {
    Ok(DbConnection::transaction_manager_status_mut(conn)
        .transaction_depth()?
        .is_some())
}

/// Commits after `work` succeeds, rolls back after it fails; as Diesel's `transaction`.
fn finish<T>(
    conn: &mut DbConnection,
    work: impl FnOnce(&mut DbConnection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    match work(conn) {
        Ok(value) => {
            <DbConnection as diesel::Connection>::TransactionManager::commit_transaction(conn)?;
            Ok(value)
        }
        Err(error) => {
            rollback(conn);
            Err(error)
        }
    }
}

/// Rolls back after a failure whose error is the one to report. A rollback that fails too marks
/// the connection's transaction manager broken, and the pool discards a broken connection when
/// it is returned, so nothing is lost by not reporting it.
fn rollback(conn: &mut DbConnection) {
    let _ = <DbConnection as diesel::Connection>::TransactionManager::rollback_transaction(conn);
}

/// Inserts several rows in one statement. Diesel builds multi-row inserts for one backend at a
/// time, so the statement is built for the connection's own.
macro_rules! insert_rows {
    ($conn:expr, $table:expr, $rows:expr) => {
        match $conn {
            $crate::connection::DbConnection::Postgres(conn) => {
                diesel::insert_into($table).values($rows).execute(conn)
            }
            $crate::connection::DbConnection::Sqlite(conn) => {
                diesel::insert_into($table).values($rows).execute(conn)
            }
        }
    };
}
pub(crate) use insert_rows;
