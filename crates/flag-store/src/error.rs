//! The store's one error type.

use diesel::result::{DatabaseErrorKind, Error as DieselError};

/// Everything a store call can fail with.
///
/// Diesel's "not found" and unique violations are turned into [`StoreError::NotFound`] and
/// [`StoreError::Conflict`] here, so callers match on the domain, not on SQL.
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
        /// The value that is taken.
        key: String,
    },
    /// The write breaks a rule of the model (an expired signup token, a self-dependency...).
    #[error("{message}")]
    Rejected {
        /// What is wrong, for the user.
        message: String,
    },
    /// A stored JSON column of one row could not be read back into its type.
    #[error("stored {column} of {entity} {key} is not valid: {source}")]
    Corrupt {
        /// What the row is (`context field`, `segment`, ...).
        entity: &'static str,
        /// Which row: its name or id.
        key: String,
        /// The column.
        column: &'static str,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A value could not be written as JSON for a column.
    #[error("cannot write {column} as json: {source}")]
    Encode {
        /// The column.
        column: &'static str,
        /// The JSON error.
        source: serde_json::Error,
    },
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
            DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                let (entity, key) = unique_target(info.message());
                Self::Conflict { entity, key }
            }
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

    /// Whether retrying later may succeed (the database was busy or no connection was free).
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Pool(_) => true,
            Self::Query(DieselError::DatabaseError(_, info)) => {
                let message = info.message();
                message.contains("database is locked") || message.contains("database is busy")
            }
            _ => false,
        }
    }
}

/// Reads the table and column out of a unique-violation message: SQLite says
/// `UNIQUE constraint failed: users.email`, PostgreSQL names the constraint `users_email_key`.
fn unique_target(message: &str) -> (&'static str, String) {
    let target = message
        .rsplit(": ")
        .next()
        .unwrap_or(message)
        .split(',')
        .next()
        .unwrap_or_default()
        .trim();
    let (table, column) = target.split_once('.').unwrap_or((target, ""));
    let entity = match table {
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
    };
    (entity, column.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_messages_name_the_entity_and_column() {
        assert_eq!(
            unique_target("UNIQUE constraint failed: users.email"),
            ("user", "email".into())
        );
        assert_eq!(
            unique_target(
                "UNIQUE constraint failed: project_environments.project_id, project_environments.environment_name"
            ),
            ("project environment", "project_id".into())
        );
    }
}
