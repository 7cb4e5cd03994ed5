//! `ApiError`: every failure the API reports, rendered as Unleash's error envelope
//! `{id, name, message, details?}`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use flag_store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// One field at fault: `{message, path?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Detail {
    /// What is wrong with it.
    pub message: String,
    /// JSON-pointer-like path, such as `/variants/0/weight`.
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

/// Everything the API can answer with other than success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400 `ValidationError`: the request does not match the schema or breaks a rule.
    #[error("{message}")]
    Validation {
        /// Summary.
        message: String,
        /// Fields at fault.
        details: Vec<Detail>,
    },
    /// 401 `AuthenticationRequired`.
    #[error("you must log in or give an API token in the Authorization header")]
    AuthenticationRequired,
    /// 403 `NoAccessError`.
    #[error("{0}")]
    NoAccess(String),
    /// 403 `InvalidOperationError`: an operation Unleash does not allow on these objects.
    #[error("{0}")]
    InvalidOperation(String),
    /// 404 `NotFoundError`.
    #[error("{0}")]
    NotFound(String),
    /// 409 `NameExistsError`.
    #[error("{0}")]
    NameExists(String),
    /// 413 `PayloadTooLarge`.
    #[error("request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The limit.
        limit: usize,
    },
    /// 415 `ContentTypeError`.
    #[error("we do not accept the content-type you provided ({0}); use application/json")]
    ContentType(String),
    /// 405 `MethodNotAllowed`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 429 `TooManyRequestsError`.
    #[error("too many requests; try again in {retry_after} seconds")]
    TooManyRequests {
        /// Seconds until the next attempt may succeed.
        retry_after: u64,
    },
    /// 503 `ServiceUnavailableError`: the database is busy or no connection was free.
    #[error("the service is busy; try again")]
    Unavailable,
    /// 500 `InternalError`: the cause is logged, never sent.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    /// A 400 with one detail at `path`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::Validation {
            details: vec![Detail::at(path, message.clone())],
            message,
        }
    }

    /// `Ok` when `details` is empty, otherwise a 400 listing every detail.
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

    /// A 400 without a field.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::Validation {
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// The error kind's name, as in Unleash's envelope.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Validation { .. } => "ValidationError",
            Self::AuthenticationRequired => "AuthenticationRequired",
            Self::NoAccess(_) => "NoAccessError",
            Self::InvalidOperation(_) => "InvalidOperationError",
            Self::NotFound(_) => "NotFoundError",
            Self::NameExists(_) => "NameExistsError",
            Self::PayloadTooLarge { .. } => "PayloadTooLarge",
            Self::ContentType(_) => "ContentTypeError",
            Self::MethodNotAllowed => "MethodNotAllowedError",
            Self::TooManyRequests { .. } => "TooManyRequestsError",
            Self::Unavailable => "ServiceUnavailableError",
            Self::Internal(_) => "InternalError",
        }
    }
}

/// The error envelope every failure is answered with.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// A fresh UUID, also in the log line about this failure.
    pub id: String,
    /// The kind of failure, as Unleash names it: `ValidationError`, `NoAccessError`, ...
    #[schema(examples(
        "ValidationError",
        "AuthenticationRequired",
        "NoAccessError",
        "NotFoundError",
        "NameExistsError"
    ))]
    pub name: String,
    /// What went wrong, lower-case, naming the value at fault.
    pub message: String,
    /// The fields at fault, where there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Vec<Detail>>,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Validation { .. } => StatusCode::BAD_REQUEST,
            Self::AuthenticationRequired => StatusCode::UNAUTHORIZED,
            Self::NoAccess(_) | Self::InvalidOperation(_) => StatusCode::FORBIDDEN,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::NameExists(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::ContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Self::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let id = uuid::Uuid::new_v4().to_string();
        let status = self.status_code();
        if let Self::Internal(cause) = self {
            tracing::error!(error_id = %id, cause = %cause, "internal error {id}: {cause}");
        } else if status.is_server_error() {
            tracing::warn!(error_id = %id, "{self}");
        }
        let details = match self {
            Self::Validation { details, .. } if !details.is_empty() => Some(details.clone()),
            _ => None,
        };
        let mut response = HttpResponse::build(status);
        if let Self::TooManyRequests { retry_after } = self
            && let Ok(value) = HeaderValue::from_str(&retry_after.to_string())
        {
            response.insert_header((header::RETRY_AFTER, value));
        }
        response.json(ErrorBody {
            id,
            name: self.name().to_owned(),
            message: self.to_string(),
            details,
        })
    }
}

impl From<StoreError> for ApiError {
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
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(error: actix_web::error::BlockingError) -> Self {
        Self::Internal(format!("blocking task failed: {error}"))
    }
}
