//! `AdminError`: every way an application operation can fail, with no notion of HTTP. Each
//! interface maps it to its own answer: admin-api to Unleash's error envelope and a status.

use flag_store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// One field at fault: `{message, path?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Detail {
    /// What is wrong with it.
    pub message: String,
    /// A JSON Pointer to the field, such as `/variants/0/weight`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Detail {
    /// A detail about the field at `path`.
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            path: Some(path.into()),
        }
    }
}

/// Why an operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The input does not match the schema or breaks a rule.
    #[error("{message}")]
    Validation {
        /// Summary.
        message: String,
        /// Fields at fault.
        details: Vec<Detail>,
    },
    /// The input is well formed but names what is not there, where Unleash answers 400
    /// `BadDataError` rather than 404 (adding an unknown environment to a project).
    #[error("{0}")]
    BadData(String),
    /// No credentials, or unknown ones.
    #[error("you must log in or give an API token in the Authorization header")]
    AuthenticationRequired,
    /// An unknown user or a wrong password at login.
    #[error("Wrong password, try again.")]
    PasswordMismatch,
    /// The caller may not do this.
    #[error("{0}")]
    NoAccess(String),
    /// An operation Unleash does not allow on these objects.
    #[error("{0}")]
    InvalidOperation(String),
    /// A direct write to an environment that takes changes only through change requests.
    #[error("{0}")]
    ChangeRequestRequired(String),
    /// The object does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The name is taken.
    #[error("{0}")]
    NameExists(String),
    /// The object is in use and cannot be removed, or the write conflicts with the current state.
    #[error("{0}")]
    Conflict(String),
    /// The operation needs a live feature and the feature is archived.
    #[error("Cannot perform this operation on archived features")]
    ArchivedFeature,
    /// A login through the OpenID provider failed its checks: the provider refused, or what it
    /// answered does not verify. The message says which check, never a token or a secret.
    #[error("{0}")]
    SignInFailed(String),
    /// The OpenID provider could not be reached, or answered what is not OpenID Connect.
    #[error("{0}")]
    ProviderUnavailable(String),
    /// Too many attempts from one address.
    #[error("too many requests; try again in {retry_after} seconds")]
    TooManyRequests {
        /// Seconds until the next attempt may succeed.
        retry_after: u64,
    },
    /// A limit on what one caller may hold was reached, such as one token's streams.
    #[error("{message}")]
    Throttled {
        /// Which limit, and what to do instead.
        message: String,
        /// Seconds after which trying again may succeed.
        retry_after: u64,
    },
    /// The server holds all it may of something every caller shares, such as streams.
    #[error("{message}")]
    AtCapacity {
        /// Which limit, and what to do instead.
        message: String,
        /// Seconds after which trying again may succeed.
        retry_after: u64,
    },
    /// The database is busy or no connection was free; retrying may succeed.
    #[error("the service is busy; try again")]
    Unavailable,
    /// A fault of the server; the cause is for the log, never for the caller.
    #[error("internal error")]
    Internal(String),
}

impl AdminError {
    /// A validation failure with one detail at `path`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Validation {
            details: vec![Detail::at(path, message.clone())],
            message,
        }
    }

    /// `Ok` when `details` is empty, otherwise a validation failure listing every detail.
    pub fn check(details: Vec<Detail>) -> Result<(), Self> {
        if details.is_empty() {
            return Ok(());
        }
        Err(Self::Validation {
            message: details
                .iter()
                .map(|detail| detail.message.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            details,
        })
    }

    /// A validation failure without a field.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::Validation {
            message: message.into(),
            details: Vec::new(),
        }
    }
}

impl From<std::io::Error> for AdminError {
    fn from(error: std::io::Error) -> Self {
        Self::Internal(format!("i/o failed: {error}"))
    }
}

impl From<StoreError> for AdminError {
    fn from(error: StoreError) -> Self {
        if error.is_unavailable() {
            return Self::Unavailable;
        }
        match error {
            StoreError::NotFound { entity, key } => Self::NotFound(format!("could not find {entity} {key}")),
            StoreError::Conflict { entity, key } => {
                let article = if entity.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                Self::NameExists(format!(
                    "{article} {entity} with this {} already exists",
                    if key.is_empty() { "name" } else { &key }
                ))
            }
            StoreError::Rejected { message } => Self::bad_request(message),
            StoreError::InvalidOperation { message } => Self::InvalidOperation(message),
            StoreError::InUse { message } => Self::Conflict(message),
            StoreError::Archived => Self::ArchivedFeature,
            error @ StoreError::ChangeRequestRequired { .. } => {
                Self::ChangeRequestRequired(error.to_string())
            }
            other => Self::Internal(other.to_string()),
        }
    }
}
