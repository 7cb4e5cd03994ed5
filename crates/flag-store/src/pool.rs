//! The connection pool: the one place connections are opened and configured.

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::r2d2::{ManageConnection, Pool, PooledConnection, R2D2Connection};
use diesel::sqlite::SqliteConnection;

use crate::connection::{Backend, DbConnection};
use crate::error::StoreError;

/// A pooled connection.
pub type Connection = PooledConnection<Manager>;

/// Which database to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Database {
    /// An SQLite file; created with its directory when missing.
    Sqlite(PathBuf),
    /// A PostgreSQL database.
    Postgres(Postgres),
}

/// A PostgreSQL database and the settings of its connections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Postgres {
    /// Where it is: a `postgres://` URL or a libpq `key=value` string.
    pub connection: ConnectionString,
    /// The schema to keep the tables in, created when missing; `public` when `None`.
    pub schema: Option<String>,
    /// The name the server shows for these connections (`pg_stat_activity`).
    pub application_name: String,
}

/// A libpq connection string. It may hold a password, so `Debug` and `Display` show it with the
/// password replaced by `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct ConnectionString(String);

impl ConnectionString {
    /// Wraps a connection string.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The string as libpq takes it, password included: for opening connections, never for logs.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The string with any password, in the URL's user part or as a `password` parameter,
    /// replaced by `***`.
    pub fn redacted(&self) -> String {
        redact(&self.0)
    }
}

impl fmt::Debug for ConnectionString {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "ConnectionString({})", self.redacted())
    }
}

impl fmt::Display for ConnectionString {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.redacted())
    }
}

/// Where the passwords are written in a connection string, as byte ranges: the password of a
/// URL's user part (libpq ends the user part at the last `@` before the first `/`) and the value
/// of every `password` parameter (URL query or `key = value` form; inside the quotes when
/// quoted).
fn password_spans(text: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut at = 0;
    if let Some(scheme_end) = text.find("://") {
        let start = scheme_end + "://".len();
        let rest = &text[start..];
        let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
        if let Some((user_info, _)) = authority.rsplit_once('@') {
            if let Some(colon) = user_info.find(':') {
                spans.push(start + colon + 1..start + user_info.len());
            }
            at = start + user_info.len() + 1;
        }
    }
    let bytes = text.as_bytes();
    while let Some(found) = text[at..].find("password") {
        let index = at + found;
        at = index + "password".len();
        let boundary =
            index == 0 || matches!(bytes[index - 1], b'?' | b'&') || bytes[index - 1].is_ascii_whitespace();
        let Some(value) = text[at..].trim_start().strip_prefix('=').filter(|_| boundary) else {
            continue;
        };
        let value = value.trim_start();
        let value_start = text.len() - value.len();
        let span = match value.strip_prefix('\'') {
            Some(quoted) => value_start + 1..value_start + 1 + closing_quote(quoted).unwrap_or(quoted.len()),
            None => {
                let length = value
                    .find(|character: char| character == '&' || character.is_ascii_whitespace())
                    .unwrap_or(value.len());
                value_start..value_start + length
            }
        };
        at = span.end;
        spans.push(span);
    }
    spans.retain(|span| !span.is_empty());
    spans
}

/// `text` with every password replaced by `***`.
fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for span in password_spans(text) {
        out.push_str(&text[copied..span.start]);
        out.push_str("***");
        copied = span.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Where the single quote that closes a libpq value is (`\'` and `\\` are escapes).
fn closing_quote(quoted: &str) -> Option<usize> {
    let mut escaped = false;
    quoted.char_indices().find_map(|(at, character)| {
        let found = !escaped && character == '\'';
        escaped = !escaped && character == '\\';
        found.then_some(at)
    })
}

/// An error from opening a connection, with the connection string's passwords replaced by
/// `***` should libpq have quoted them: its messages quote parts of the string it could not read.
fn scrub(connection: &ConnectionString, error: diesel::ConnectionError) -> diesel::ConnectionError {
    let text = connection.expose();
    let mut message = error.to_string();
    let mut changed = false;
    for span in password_spans(text) {
        let password = &text[span];
        if message.contains(password) {
            message = message.replace(password, "***");
            changed = true;
        }
    }
    if changed {
        diesel::ConnectionError::BadConnection(message)
    } else {
        error
    }
}

/// Why a database location was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported database URL scheme `{scheme}`: use postgres://... or postgresql://... for PostgreSQL \
     (or the DATABASE_HOST, DATABASE_USERNAME... variables), or a file path or sqlite://<path> for SQLite"
)]
pub struct UnsupportedDatabase {
    /// The scheme that was given.
    pub scheme: String,
}

impl Database {
    /// Reads `DATABASE_URL`'s forms: `postgres://` or `postgresql://` selects PostgreSQL; a file
    /// path, `sqlite://<path>` or `sqlite:<path>` selects SQLite. Any other `scheme://` is refused.
    pub fn from_url(url: &str) -> Result<Self, UnsupportedDatabase> {
        let url = url.trim();
        if let Some((scheme, _)) = url.split_once("://") {
            if scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql") {
                return Ok(Self::Postgres(Postgres {
                    connection: ConnectionString::new(url),
                    schema: None,
                    application_name: "halyard".into(),
                }));
            }
            if scheme.eq_ignore_ascii_case("sqlite") || scheme.eq_ignore_ascii_case("file") {
                return Ok(Self::Sqlite(PathBuf::from(&url[scheme.len() + 3..])));
            }
            return Err(UnsupportedDatabase {
                scheme: scheme.to_owned(),
            });
        }
        // libpq's `host=db user=halyard ...` form is not a file name.
        let first = url.split_whitespace().next().unwrap_or_default();
        if first.split_once('=').is_some_and(|(key, _)| {
            !key.is_empty() && key.bytes().all(|byte| byte.is_ascii_lowercase() || byte == b'_')
        }) {
            return Err(UnsupportedDatabase {
                scheme: "key=value".into(),
            });
        }
        let path = url.strip_prefix("sqlite:").unwrap_or(url);
        Ok(Self::Sqlite(PathBuf::from(path)))
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        match self {
            Self::Sqlite(_) => Backend::Sqlite,
            Self::Postgres(_) => Backend::Postgres,
        }
    }

    /// Where the database is, for logs: the file, or the connection string without its password.
    pub fn describe(&self) -> String {
        match self {
            Self::Sqlite(path) => path.display().to_string(),
            Self::Postgres(postgres) => match &postgres.schema {
                Some(schema) => format!("{} (schema {schema})", postgres.connection),
                None => postgres.connection.redacted(),
            },
        }
    }

    /// Where local files such as the generated admin token go: the SQLite file's directory, or
    /// `./data` for PostgreSQL.
    pub fn local_directory(&self) -> PathBuf {
        match self {
            Self::Sqlite(path) => path
                .parent()
                .filter(|parent| !parent.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            Self::Postgres(_) => PathBuf::from("./data"),
        }
    }
}

impl From<PathBuf> for Database {
    fn from(path: PathBuf) -> Self {
        Self::Sqlite(path)
    }
}

impl From<&Path> for Database {
    fn from(path: &Path) -> Self {
        Self::Sqlite(path.to_path_buf())
    }
}

impl From<Postgres> for Database {
    fn from(postgres: Postgres) -> Self {
        Self::Postgres(postgres)
    }
}

/// Where the database is and how connections behave. The store reads no environment; the
/// server builds this from its own configuration.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// The database.
    pub database: Database,
    /// Most connections kept in the pool.
    pub pool_size: u32,
    /// Fewest idle connections kept open; `None` keeps as many as the pool size.
    pub min_idle: Option<u32>,
    /// How long a write waits for another writer before failing as busy: SQLite's busy timeout,
    /// PostgreSQL's lock timeout.
    pub busy_timeout: Duration,
    /// How long a caller waits for a free connection. Longer than `busy_timeout`, so a busy
    /// database surfaces as a busy error and a saturated pool as [`StoreError::Pool`].
    pub checkout_timeout: Duration,
}

impl StoreConfig {
    /// Defaults for `database` (a path is an SQLite file).
    pub fn new(database: impl Into<Database>) -> Self {
        Self {
            database: database.into(),
            pool_size: 8,
            min_idle: Some(1),
            busy_timeout: Duration::from_secs(5),
            checkout_timeout: Duration::from_secs(10),
        }
    }
}

/// Opens connections for the pool, each configured for its backend:
///
/// - SQLite: `busy_timeout` first (so the following statements already wait instead of
///   failing), then WAL (retried up to the busy timeout), then `synchronous = NORMAL` (durable
///   across process crashes in WAL mode), then foreign keys, then a page cache of 512 KiB.
/// - PostgreSQL: the schema as `search_path`, the busy timeout as `lock_timeout`, and the
///   application name.
#[derive(Debug, Clone)]
pub struct Manager {
    database: Database,
    busy_timeout: Duration,
}

impl Manager {
    fn open(&self) -> Result<DbConnection, diesel::r2d2::Error> {
        use diesel::Connection as _;
        let busy_ms = self.busy_timeout.as_millis();
        match &self.database {
            Database::Sqlite(path) => {
                let mut connection = SqliteConnection::establish(&path.to_string_lossy())
                    .map_err(diesel::r2d2::Error::ConnectionError)?;
                connection
                    .batch_execute(&format!("PRAGMA busy_timeout = {busy_ms}"))
                    .map_err(diesel::r2d2::Error::QueryError)?;
                // Switching a new file to WAL needs its exclusive lock, and SQLite answers "busy"
                // at once, without its busy handler, while another process holds any lock on it
                // (two replicas starting on a new file), so the switch waits here instead.
                let started = std::time::Instant::now();
                while let Err(error) = connection.batch_execute("PRAGMA journal_mode = WAL") {
                    if started.elapsed() >= self.busy_timeout || !crate::error::is_busy(&error) {
                        return Err(diesel::r2d2::Error::QueryError(error));
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                // Each connection's page cache is capped at 512 KiB (SQLite's default is 2 MB): the
                // operating system caches the file anyway, and eight connections that each read a
                // 10,000-flag environment would otherwise keep 16 MB of copies.
                connection
                    .batch_execute(
                        "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA cache_size = -512;",
                    )
                    .map_err(diesel::r2d2::Error::QueryError)?;
                Ok(DbConnection::Sqlite(connection))
            }
            Database::Postgres(postgres) => {
                let mut connection =
                    PgConnection::establish(postgres.connection.expose()).map_err(|error| {
                        diesel::r2d2::Error::ConnectionError(scrub(&postgres.connection, error))
                    })?;
                let search_path = postgres.schema.as_deref().map_or_else(
                    || "public".to_owned(),
                    |schema| format!("{}, public", quote_identifier(schema)),
                );
                connection
                    .batch_execute(&format!(
                        "SET search_path TO {search_path};
                         SET lock_timeout = {busy_ms};
                         SET application_name = {};",
                        quote_literal(&postgres.application_name)
                    ))
                    .map_err(diesel::r2d2::Error::QueryError)?;
                Ok(DbConnection::Postgres(connection))
            }
        }
    }
}

impl ManageConnection for Manager {
    type Connection = DbConnection;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<DbConnection, Self::Error> {
        self.open()
    }

    fn is_valid(&self, connection: &mut DbConnection) -> Result<(), Self::Error> {
        connection.ping().map_err(diesel::r2d2::Error::QueryError)
    }

    fn has_broken(&self, connection: &mut DbConnection) -> bool {
        std::thread::panicking() || connection.is_broken()
    }
}

/// `"name"`, with inner quotes doubled: an identifier PostgreSQL reads as written.
pub(crate) fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `'text'`, with inner quotes doubled.
fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Creates the SQLite database file readable and writable by its owner only, when it does not
/// exist yet: it holds password hashes, session and token verifiers and invite secrets. SQLite
/// gives its `-wal` and `-shm` files the database file's permissions. An existing file keeps
/// the permissions its owner chose.
fn create_private(path: &std::path::Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

/// Builds the pool. One connection is opened now, so a bad path or an unreachable server fails
/// here with the backend's own message.
pub(crate) fn build(config: &StoreConfig) -> Result<Pool<Manager>, StoreError> {
    let manager = Manager {
        database: config.database.clone(),
        busy_timeout: config.busy_timeout,
    };
    match &config.database {
        Database::Sqlite(path) => {
            if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|error| {
                    StoreError::Connection(diesel::ConnectionError::BadConnection(format!(
                        "cannot create {}: {error}",
                        parent.display()
                    )))
                })?;
            }
            create_private(path).map_err(|error| {
                StoreError::Connection(diesel::ConnectionError::BadConnection(format!(
                    "cannot create {}: {error}",
                    path.display()
                )))
            })?;
        }
        Database::Postgres(postgres) => {
            // The schema must exist before any connection makes it its search path.
            if let Some(schema) = &postgres.schema {
                use diesel::Connection as _;
                let mut first = PgConnection::establish(postgres.connection.expose())
                    .map_err(|error| scrub(&postgres.connection, error))?;
                // Under the migration lock: replicas creating the same schema at the same moment
                // would otherwise race on the catalogue's unique index, `IF NOT EXISTS` or not.
                // The lock is the transaction's, so it is released only once the new schema is
                // committed and visible to the next replica (a session lock released inside the
                // same implicit transaction let the next one in before the commit).
                first
                    .batch_execute(&format!(
                        "BEGIN; SELECT pg_advisory_xact_lock({lock}); \
                         CREATE SCHEMA IF NOT EXISTS {schema}; COMMIT",
                        lock = crate::connection::MIGRATION_LOCK,
                        schema = quote_identifier(schema)
                    ))
                    .map_err(StoreError::from)?;
            }
        }
    }
    // SQLite's WAL is a property of the file. Switch it once, on one connection, before the pool
    // opens several: connections racing to switch it would fail with "database is locked". The
    // same first connection surfaces a PostgreSQL server's refusal with its own message.
    manager.open().map_err(|error| match error {
        diesel::r2d2::Error::ConnectionError(error) => StoreError::Connection(error),
        diesel::r2d2::Error::QueryError(error) => StoreError::from(error),
    })?;
    let pool_size = config.pool_size.max(1);
    let pool = Pool::builder()
        .max_size(pool_size)
        .min_idle(Some(config.min_idle.unwrap_or(pool_size).min(pool_size)))
        .connection_timeout(config.checkout_timeout)
        .build(manager)?;
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_choose_the_backend_and_other_schemes_are_refused() {
        assert!(matches!(
            Database::from_url("postgres://halyard@db/unleash"),
            Ok(Database::Postgres(_))
        ));
        assert!(matches!(
            Database::from_url("postgresql://halyard@db/unleash?sslmode=require"),
            Ok(Database::Postgres(_))
        ));
        assert_eq!(
            Database::from_url("sqlite:///var/lib/flags.db"),
            Ok(Database::Sqlite("/var/lib/flags.db".into()))
        );
        assert_eq!(
            Database::from_url("sqlite:data/flags.db"),
            Ok(Database::Sqlite("data/flags.db".into()))
        );
        assert_eq!(
            Database::from_url("./data/flags.db"),
            Ok(Database::Sqlite("./data/flags.db".into()))
        );
        assert!(Database::from_url("host=db user=halyard password=s3cret").is_err());
        let refused = Database::from_url("mysql://root@db/unleash");
        assert_eq!(
            refused,
            Err(UnsupportedDatabase {
                scheme: "mysql".into()
            })
        );
        let message = refused.err().map(|error| error.to_string()).unwrap_or_default();
        assert!(
            message.contains("postgres://") && message.contains("sqlite://"),
            "{message}"
        );
    }

    #[test]
    fn passwords_never_show() {
        for (text, shown) in [
            (
                "postgres://halyard:s3cret@db:5432/unleash?sslmode=require",
                "postgres://halyard:***@db:5432/unleash?sslmode=require",
            ),
            ("postgres://halyard@db/unleash", "postgres://halyard@db/unleash"),
            (
                "postgresql://db/unleash?user=halyard&password=s3cret&sslmode=require",
                "postgresql://db/unleash?user=halyard&password=***&sslmode=require",
            ),
            (
                "host=db user=halyard password='s3cret words' dbname=unleash",
                "host=db user=halyard password='***' dbname=unleash",
            ),
            (
                r"host=db password='a\'b s3cret' dbname=unleash",
                "host=db password='***' dbname=unleash",
            ),
            ("host=db password=s3cret", "host=db password=***"),
            (
                "host=db password = s3cret user=x",
                "host=db password = *** user=x",
            ),
            (
                "host=db\npassword=s3cret\nuser=x",
                "host=db\npassword=***\nuser=x",
            ),
            ("postgres://u:pa?s3cret@db/x", "postgres://u:***@db/x"),
            (
                "postgres://u:s3cret@db?sslmode=require",
                "postgres://u:***@db?sslmode=require",
            ),
            ("host=db oldpassword=x", "host=db oldpassword=x"),
        ] {
            let connection = ConnectionString::new(text);
            assert_eq!(connection.redacted(), shown, "{text}");
            // libpq's messages quote the parts of the string it cannot read.
            let error = scrub(
                &connection,
                diesel::ConnectionError::BadConnection(format!("invalid token: \"{text}\"")),
            );
            assert!(!error.to_string().contains("s3cret"), "{text}: {error}");
            assert!(!format!("{connection:?}").contains("s3cret"));
            assert!(!connection.to_string().contains("s3cret"));
        }
    }
}
