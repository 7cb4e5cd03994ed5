//! The store's one error type, and the one place that turns Diesel's errors into it.

use diesel::result::{DatabaseErrorInformation, DatabaseErrorKind, Error as DieselError};

/// Everything a store call can fail with.
///
/// Diesel's errors are classified here, by kind, so callers match on the domain, not on SQL:
/// "not found" becomes [`StoreError::NotFound`], a unique violation [`StoreError::Conflict`]
/// naming the column, a busy database (SQLite's busy and locked states, PostgreSQL's lock
/// timeout, serialization failures and closed connections) [`StoreError::Busy`], and a foreign-key
/// violation, in a statement that knows its one target, `NotFound` or (where the caller named
/// the target) [`StoreError::Rejected`].
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The entity does not exist.
    #[error("{entity} {key} not found")]
    NotFound {
        /// What was looked for (`feature`, `environment`, ...).
        entity: &'static str,
        /// Which one.
        key: String,
    },
    /// The write would duplicate an existing entity.
    #[error("{entity} {key} already exists")]
    Conflict {
        /// What would be duplicated.
        entity: &'static str,
        /// The column whose value is taken (`email`, `name`...); empty when the database did not
        /// say.
        key: String,
    },
    /// The write breaks a rule of the model (an expired signup token, a self-dependency...).
    #[error("{message}")]
    Rejected {
        /// What is wrong, for the user.
        message: String,
    },
    /// The operation is not allowed on these features: a dependency on itself, on a missing or
    /// archived parent, across projects, or forming a chain. Unleash answers these with 403
    /// `InvalidOperationError`.
    #[error("{message}")]
    InvalidOperation {
        /// What is not allowed, for the user.
        message: String,
    },
    /// The feature is archived, and the operation needs a live one (Unleash's
    /// `ArchivedFeatureError`).
    #[error("Cannot perform this operation on archived features")]
    Archived,
    /// The object is in use and cannot be removed: a segment or context field that strategies
    /// still use.
    #[error("{message}")]
    InUse {
        /// What uses it, for the user.
        message: String,
    },
    /// The write would change an environment of a project that takes changes only through
    /// change requests.
    #[error(
        "project \"{project}\" takes changes to the \"{environment}\" environment only through change requests: propose this change in a change request"
    )]
    ChangeRequestRequired {
        /// The project whose rule refuses the write.
        project: String,
        /// The environment it protects.
        environment: String,
    },
    /// A stored column of one row could not be read back into its type: JSON that does not
    /// decode, or a token type or role that is none.
    #[error("stored {column} of {entity} {key} is not valid: {source}")]
    Corrupt {
        /// What the row is (`context field`, `segment`, ...).
        entity: &'static str,
        /// Which row: its name or id.
        key: String,
        /// The column.
        column: &'static str,
        /// Why it does not read: the JSON error, or what the value is not.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A value could not be written as JSON for a column.
    #[error("cannot write {column} as json: {source}")]
    Encode {
        /// The column.
        column: &'static str,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// Another writer held the write lock past the busy timeout, a table was locked, or the
    /// connection was lost; retrying later may succeed.
    #[error("the database is busy: {0}")]
    Busy(DieselError),
    /// Any other database error.
    #[error(transparent)]
    Query(DieselError),
    /// No connection could be checked out in time.
    #[error("no database connection available: {0}")]
    Pool(#[from] diesel::r2d2::PoolError),
    /// Opening a connection failed.
    #[error("cannot open the database: {0}")]
    Connection(#[from] diesel::ConnectionError),
    /// Migrations could not be applied.
    #[error("migrations failed: {0}")]
    Migration(String),
}

impl From<DieselError> for StoreError {
    fn from(error: DieselError) -> Self {
        match error {
            // A row whose typed column did not read as it was loaded (`ApiTokenRow`, `UserRow`)
            // already says which row and column.
            DieselError::DeserializationError(error) => match error.downcast::<Self>() {
                Ok(corrupt) => *corrupt,
                Err(other) => Self::Query(DieselError::DeserializationError(other)),
            },
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                let (entity, key) = unique_target(info.as_ref());
                Self::Conflict {
                    entity,
                    key: key.to_owned(),
                }
            }
            error if is_busy(&error) => Self::Busy(error),
            // SQLite does not say which row a foreign key missed, so a foreign-key violation becomes
            // a domain error only where the statement knows its one target
            // (`StoreError::on_missing_reference`). Anywhere else it, like a NOT NULL or CHECK
            // violation, means a query skipped a check: a bug, which stays `Query`.
            other => Self::Query(other),
        }
    }
}

impl StoreError {
    /// A not-found error for `entity` with `key`.
    pub fn not_found(entity: &'static str, key: impl Into<String>) -> Self {
        Self::NotFound {
            entity,
            key: key.into(),
        }
    }

    /// Maps Diesel's `NotFound` to this entity and key, leaving other errors as they are.
    pub(crate) fn or_not_found(
        entity: &'static str,
        key: impl Into<String>,
    ) -> impl FnOnce(DieselError) -> Self {
        let key = key.into();
        move |error| match error {
            DieselError::NotFound => Self::NotFound { entity, key },
            other => Self::from(other),
        }
    }

    /// Maps a foreign-key violation to `missing()`, the domain error for the row the statement
    /// refers to, leaving other errors as they are. Only for statements with a single foreign
    /// key, since SQLite does not say which one failed.
    pub(crate) fn on_missing_reference(missing: impl FnOnce() -> Self) -> impl FnOnce(DieselError) -> Self {
        move |error| match error {
            DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => missing(),
            other => Self::from(other),
        }
    }

    /// Whether retrying later may succeed (the database was busy or no connection was free).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Self::Pool(_) | Self::Busy(_))
    }
}

/// Whether the database gave up waiting for a lock, or could not be reached, so that a retry
/// later may succeed.
///
/// - SQLite: `SQLITE_BUSY` (the busy timeout passed) or `SQLITE_LOCKED` (a table or the schema
///   locked). Diesel 2.3's SQLite backend looks at `sqlite3_extended_errcode` only to pick a
///   `DatabaseErrorKind` for constraint violations, turns every other code into an undocumented
///   `Unknown` kind, and keeps nothing but `sqlite3_errmsg`, so the fixed texts of these codes
///   (`sqlite3ErrStr` and the schema-lock message), which depend neither on the statement nor on
///   a locale, are all there is to read.
/// - PostgreSQL: the lock timeout passed while waiting for the write lock (SQLSTATE 55P03, which
///   Diesel also reports only as text: the server's English message, as the connections do not
///   set `lc_messages`), a serialization failure or deadlock, or a connection the server closed
///   (a restart or failover).
///
/// The kind is not matched for the texts, so that this keeps working if Diesel gives busy errors
/// a kind of their own.
pub(crate) fn is_busy(error: &DieselError) -> bool {
    const BUSY_MESSAGES: [&str; 5] = [
        "database is locked",
        "database table is locked",
        "database schema is locked",
        "canceling statement due to lock timeout",
        "deadlock detected",
    ];
    match error {
        DieselError::DatabaseError(
            DatabaseErrorKind::SerializationFailure | DatabaseErrorKind::ClosedConnection,
            _,
        ) => true,
        DieselError::DatabaseError(_, info) => {
            let message = info.message();
            BUSY_MESSAGES.iter().any(|busy| message.starts_with(busy))
        }
        // A commit refused because the database was busy, whose rollback then failed too.
        DieselError::RollbackErrorOnCommit { commit_error, .. } => is_busy(commit_error),
        _ => false,
    }
}

/// The entity and column of a unique violation.
///
/// The database's structured fields come first: PostgreSQL names the table and the constraint,
/// whose default name for a UNIQUE column is `<table>_<column>_key`. Diesel's SQLite backend
/// fills none of them, so the fallback reads SQLite's message, `UNIQUE constraint failed:
/// users.email` (for a composite key, the first column of `t.a, t.b`). A target it cannot read
/// gives the entity `record` and an empty column, which callers show as `name`.
fn unique_target(info: &(dyn DatabaseErrorInformation + Send + Sync)) -> (&'static str, &str) {
    let (table, column) = match (info.table_name(), info.column_name(), info.constraint_name()) {
        (Some(table), Some(column), _) => (table, column),
        (Some(table), None, Some(constraint)) => (
            table,
            info.details()
                .and_then(details_column)
                .unwrap_or_else(|| constraint_column(table, constraint)),
        ),
        _ => message_target(info.message()),
    };
    (entity_of(table), column)
}

/// The first column in PostgreSQL's detail line, `Key (name)=(beta) already exists.`: the one
/// place a primary key's column is named (its constraint is `<table>_pkey`).
fn details_column(details: &str) -> Option<&str> {
    let columns = details.strip_prefix("Key (")?.split(")=(").next()?;
    columns
        .split(',')
        .next()
        .map(str::trim)
        .filter(|column| !column.is_empty())
}

/// The column in a PostgreSQL default constraint name: `email` in `users_email_key`.
fn constraint_column<'a>(table: &str, constraint: &'a str) -> &'a str {
    constraint
        .strip_prefix(table)
        .and_then(|rest| rest.strip_prefix('_'))
        .map(|rest| rest.strip_suffix("_key").unwrap_or(rest))
        .unwrap_or_default()
}

/// The table and first column in SQLite's `UNIQUE constraint failed: users.email`.
fn message_target(message: &str) -> (&str, &str) {
    let target = message
        .rsplit(": ")
        .next()
        .unwrap_or(message)
        .split(',')
        .next()
        .unwrap_or_default()
        .trim();
    target.split_once('.').unwrap_or((target, ""))
}

/// The entity a table stores, as errors name it.
fn entity_of(table: &str) -> &'static str {
    match table {
        "users" => "user",
        "features" => "feature",
        "projects" => "project",
        "environments" => "environment",
        "segments" => "segment",
        "strategy_types" => "strategy type",
        "context_fields" => "context field",
        "project_environments" => "project environment",
        "public_signup_tokens" => "signup token",
        "api_tokens" => "api token",
        _ => "record",
    }
}

#[cfg(test)]
mod tests {
    use diesel::connection::SimpleConnection;

    use super::*;
    use crate::models::{NewApiToken, NewSegment, SessionRow};
    use crate::queries;
    use crate::testing::{TestResult, TestStore, now, tenant_field};

    /// Error information as PostgreSQL gives it: structured fields besides the message.
    struct Structured {
        table: Option<&'static str>,
        column: Option<&'static str>,
        constraint: Option<&'static str>,
    }

    impl DatabaseErrorInformation for Structured {
        fn message(&self) -> &str {
            "duplicate key value violates unique constraint"
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            self.table
        }
        fn column_name(&self) -> Option<&str> {
            self.column
        }
        fn constraint_name(&self) -> Option<&str> {
            self.constraint
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    fn unique(info: impl DatabaseErrorInformation + Send + Sync + 'static) -> StoreError {
        StoreError::from(DieselError::DatabaseError(
            DatabaseErrorKind::UniqueViolation,
            Box::new(info),
        ))
    }

    fn conflict(error: &StoreError) -> Option<(&'static str, &str)> {
        match error {
            StoreError::Conflict { entity, key } => Some((entity, key.as_str())),
            _ => None,
        }
    }

    #[test]
    fn sqlite_unique_messages_name_the_entity_and_column() -> Result<(), String> {
        let error = unique("UNIQUE constraint failed: users.email".to_owned());
        assert_eq!(conflict(&error), Some(("user", "email")));
        let error = unique(
            "UNIQUE constraint failed: project_environments.project_id, project_environments.environment_name"
                .to_owned(),
        );
        assert_eq!(conflict(&error), Some(("project environment", "project_id")));
        let error = unique("UNIQUE constraint failed: index 'by_lower_name'".to_owned());
        assert_eq!(conflict(&error), Some(("record", "")));
        Ok(())
    }

    #[test]
    fn structured_fields_come_before_the_message() -> Result<(), String> {
        let error = unique(Structured {
            table: Some("users"),
            column: Some("username"),
            constraint: None,
        });
        assert_eq!(conflict(&error), Some(("user", "username")));
        let error = unique(Structured {
            table: Some("context_fields"),
            column: None,
            constraint: Some("context_fields_name_key"),
        });
        assert_eq!(conflict(&error), Some(("context field", "name")));
        let error = unique(Structured {
            table: Some("users"),
            column: None,
            constraint: Some("one_email_per_user"),
        });
        assert_eq!(conflict(&error), Some(("user", "")));
        Ok(())
    }

    #[test]
    fn busy_and_locked_are_unavailable_whatever_their_kind() -> Result<(), String> {
        for message in [
            "database is locked",
            "database table is locked: features",
            "database schema is locked: main",
        ] {
            let error = StoreError::from(DieselError::DatabaseError(
                DatabaseErrorKind::Unknown,
                Box::new(message.to_owned()),
            ));
            assert!(matches!(error, StoreError::Busy(_)), "{message}: {error:?}");
            assert!(error.is_unavailable(), "{message}");
        }
        let commit = StoreError::from(DieselError::RollbackErrorOnCommit {
            rollback_error: Box::new(DieselError::BrokenTransactionManager),
            commit_error: Box::new(DieselError::DatabaseError(
                DatabaseErrorKind::Unknown,
                Box::new("database is locked".to_owned()),
            )),
        });
        assert!(commit.is_unavailable(), "{commit:?}");
        let other = StoreError::from(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new("no such table: events".to_owned()),
        ));
        assert!(matches!(other, StoreError::Query(_)), "{other:?}");
        assert!(!other.is_unavailable());
        Ok(())
    }

    #[test]
    fn foreign_keys_become_not_found_only_where_the_target_is_known() -> Result<(), String> {
        let violation = || {
            DieselError::DatabaseError(
                DatabaseErrorKind::ForeignKeyViolation,
                Box::new("FOREIGN KEY constraint failed".to_owned()),
            )
        };
        let error =
            StoreError::on_missing_reference(|| StoreError::not_found("project", "nope"))(violation());
        assert!(
            matches!(&error, StoreError::NotFound { entity: "project", key } if key == "nope"),
            "{error:?}"
        );
        let error = StoreError::from(violation());
        assert!(matches!(error, StoreError::Query(_)), "{error:?}");
        Ok(())
    }

    #[test]
    fn unique_violations_are_conflicts_naming_the_column() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let field = tenant_field("[]");
        queries::context_fields::create(&mut conn, &field, &crate::models::Actor::system())?;
        let error = queries::context_fields::create(&mut conn, &field, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Conflict { entity: "context field", key }) if key == "name"),
            "{error:?}"
        );
        let token = NewApiToken {
            token_name: "sdk".into(),
            secret_hash: "00".repeat(32),
            token_type: crate::models::TokenType::Client,
            environment: "development".into(),
            projects: crate::models::TokenProjects::all(),
            expires_at: None,
            created_at: now(),
        };
        queries::api_tokens::create(&mut conn, &token, &crate::models::Actor::system())?;
        let error = queries::api_tokens::create(&mut conn, &token, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Conflict { entity: "api token", key }) if key == "secret_hash"),
            "{error:?}"
        );
        Ok(())
    }

    #[test]
    fn a_database_locked_by_another_writer_is_busy_and_unavailable() -> TestResult {
        let db = TestStore::with_config(|config| {
            config.pool_size = 2;
            config.busy_timeout = std::time::Duration::from_millis(50);
        })?;
        let mut holder = db.store.connection()?;
        let mut writer = db.store.connection()?;
        match holder.backend() {
            crate::Backend::Sqlite => holder.batch_execute("BEGIN IMMEDIATE")?,
            crate::Backend::Postgres => holder.batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({})",
                crate::connection::WRITE_LOCK
            ))?,
        }
        let field = tenant_field("[]");
        let error =
            queries::context_fields::create(&mut writer, &field, &crate::models::Actor::system()).err();
        holder.batch_execute("ROLLBACK")?;
        assert!(matches!(&error, Some(StoreError::Busy(_))), "{error:?}");
        assert!(error.is_some_and(|error| error.is_unavailable()));
        // Once the lock is released, the same write goes through.
        queries::context_fields::create(&mut writer, &field, &crate::models::Actor::system())?;
        Ok(())
    }

    #[test]
    fn missing_references_of_single_key_writes_are_domain_errors() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let segment = NewSegment {
            name: "beta".into(),
            description: None,
            project_id: Some("no-such-project".into()),
            constraints: "[]".into(),
            created_by: None,
            created_at: now(),
        };
        let error = queries::segments::create(&mut conn, &segment, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Rejected { message }) if message == "no project no-such-project exists"),
            "{error:?}"
        );
        let session = SessionRow {
            token_hash: "00".repeat(32),
            user_id: 999,
            created_at: now(),
            expires_at: now(),
            via_oidc: false,
            id_token: None,
        };
        let error = queries::sessions::create(&mut conn, &session).err();
        assert!(
            matches!(&error, Some(StoreError::NotFound { entity: "user", key }) if key == "999"),
            "{error:?}"
        );
        Ok(())
    }
}
