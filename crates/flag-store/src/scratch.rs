//! Scratch databases for tests: a fresh database on the backend the suite runs against, removed
//! when dropped. The same tests run on both backends by running the suite twice:
//!
//! - `HALYARD_TEST_DATABASE=sqlite` (or unset): a file in a new temporary directory.
//! - `HALYARD_TEST_DATABASE=postgres`: a new schema in the database at `HALYARD_TEST_POSTGRES_URL`
//!   (`./scripts/test` starts a throwaway PostgreSQL cluster and sets both). Without the URL
//!   every scratch fails with a message that says so: the suite never falls back to SQLite.

use std::path::Path;

use diesel::Connection as _;
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;

use crate::pool::quote_identifier;
use crate::{Backend, ConnectionString, Database, Postgres, Store, StoreConfig, StoreError};

/// The variable that chooses the backend under test.
pub const BACKEND_VARIABLE: &str = "HALYARD_TEST_DATABASE";
/// The variable holding the PostgreSQL server's URL when PostgreSQL is under test.
pub const POSTGRES_URL_VARIABLE: &str = "HALYARD_TEST_POSTGRES_URL";

/// The backend the suite runs against, from `HALYARD_TEST_DATABASE`.
pub fn backend_under_test() -> Result<Backend, StoreError> {
    match std::env::var(BACKEND_VARIABLE).as_deref() {
        Err(_) | Ok("" | "sqlite") => Ok(Backend::Sqlite),
        Ok("postgres") => Ok(Backend::Postgres),
        Ok(other) => Err(setup_error(format!(
            "{BACKEND_VARIABLE}={other} is not a backend: use sqlite or postgres"
        ))),
    }
}

/// A fresh, empty database (not yet migrated) and a temporary directory for any other files.
#[derive(Debug)]
pub struct Scratch {
    /// How to open it; change the pool settings before [`Scratch::open`] as needed.
    pub config: StoreConfig,
    directory: tempfile::TempDir,
    schema: Option<(ConnectionString, String)>,
}

impl Scratch {
    /// A scratch database on the backend under test.
    pub fn new() -> Result<Self, StoreError> {
        Self::on(backend_under_test()?)
    }

    /// A scratch database on `backend`.
    pub fn on(backend: Backend) -> Result<Self, StoreError> {
        let directory = tempfile::tempdir()
            .map_err(|error| setup_error(format!("cannot create a temporary directory: {error}")))?;
        match backend {
            Backend::Sqlite => Ok(Self {
                config: StoreConfig::new(directory.path().join("flags.db")),
                directory,
                schema: None,
            }),
            Backend::Postgres => {
                let url = std::env::var(POSTGRES_URL_VARIABLE).map_err(|_| {
                    setup_error(format!(
                        "a PostgreSQL test database needs {POSTGRES_URL_VARIABLE}, the URL of a PostgreSQL \
                         database to create scratch schemas in: run ./scripts/test, which starts a \
                         throwaway cluster"
                    ))
                })?;
                let connection = ConnectionString::new(url);
                let schema = format!("scratch_{}", uuid::Uuid::new_v4().simple());
                Ok(Self {
                    config: StoreConfig::new(Postgres {
                        connection: connection.clone(),
                        schema: Some(schema.clone()),
                        application_name: "halyard-test".into(),
                    }),
                    directory,
                    schema: Some((connection, schema)),
                })
            }
        }
    }

    /// Opens the store: creates and migrates the database.
    pub fn open(&self) -> Result<Store, StoreError> {
        Store::open(&self.config)
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        self.config.database.backend()
    }

    /// A temporary directory that lives as long as the scratch database.
    pub fn directory(&self) -> &Path {
        self.directory.path()
    }

    /// The environment a server process needs to use this database: `DATABASE_URL`, and
    /// `DATABASE_SCHEMA` on PostgreSQL.
    pub fn server_environment(&self) -> Vec<(&'static str, String)> {
        match &self.config.database {
            Database::Sqlite(path) => vec![("DATABASE_URL", path.display().to_string())],
            Database::Postgres(postgres) => {
                let mut variables = vec![("DATABASE_URL", postgres.connection.expose().to_owned())];
                if let Some(schema) = &postgres.schema {
                    variables.push(("DATABASE_SCHEMA", schema.clone()));
                }
                variables
            }
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some((connection, schema)) = &self.schema
            && let Ok(mut conn) = PgConnection::establish(connection.expose())
        {
            // Best effort: the throwaway cluster goes at the end of the run anyway.
            let _ = conn.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {} CASCADE",
                quote_identifier(schema)
            ));
        }
    }
}

fn setup_error(message: String) -> StoreError {
    StoreError::Connection(diesel::ConnectionError::BadConnection(message))
}
