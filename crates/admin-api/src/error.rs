//! `ApiError`: every failure the API reports, rendered as Unleash's error envelope
//! `{id, name, message, details?}`. The application's [`AdminError`] is mapped here, at the
//! edge, with one exhaustive match for its name and one for its status.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use flag_admin::AdminError;
pub use flag_admin::Detail;
use flag_store::StoreError;
use serde::Serialize;
use utoipa::ToSchema;

/// Everything the API can answer with other than success: an operation's failure, or one
/// that only HTTP has.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The operation failed.
    #[error(transparent)]
    Admin(#[from] AdminError),
    /// 413 `PayloadTooLarge`.
    #[error("request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge {
        /// The limit.
        limit: usize,
    },
    /// 415 `ContentTypeError`.
    #[error("we do not accept the content-type you provided ({0}); use application/json")]
    ContentType(String),
    /// 415 `ContentTypeError`: a body in an encoding the server does not decode.
    #[error("we do not accept the content-encoding you provided ({0}); use gzip, deflate, br or none")]
    ContentEncoding(String),
    /// 405 `MethodNotAllowed`.
    #[error("method not allowed")]
    MethodNotAllowed,
    /// 405 `NotImplementedError`: a path Unleash reserves and answers so, such as the frontend
    /// API's health and metrics paths.
    #[error("{0}")]
    NotImplemented(&'static str),
    /// 401 `AuthenticationRequired` with single sign-on among the ways to log in, which
    /// Unleash's web UI reads to show its "Sign in with" button (and the password form only
    /// when `password`).
    #[error("you must log in or give an API token in the Authorization header")]
    LoginRequired {
        /// Whether password login is on.
        password: bool,
    },
}

impl ApiError {
    /// A 400 with one detail at `path`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Admin(AdminError::invalid(path, message))
    }

    /// A 400 without a field.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::Admin(AdminError::bad_request(message))
    }

    /// A 500; `cause` is logged, never sent.
    pub fn internal(cause: impl Into<String>) -> Self {
        Self::Admin(AdminError::Internal(cause.into()))
    }

    /// The error kind's name, as in Unleash's envelope.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Admin(error) => match error {
                AdminError::Validation { .. } => "ValidationError",
                AdminError::BadData(_) => "BadDataError",
                AdminError::AuthenticationRequired => "AuthenticationRequired",
                AdminError::PasswordMismatch => "PasswordMismatch",
                AdminError::NoAccess(_) => "NoAccessError",
                AdminError::InvalidOperation(_) => "InvalidOperationError",
                AdminError::ChangeRequestRequired(_) => "PermissionError",
                AdminError::NotFound(_) => "NotFoundError",
                AdminError::NameExists(_) => "NameExistsError",
                AdminError::Conflict(_) => "ConflictError",
                AdminError::ArchivedFeature => "ArchivedFeatureError",
                AdminError::SignInFailed(_) => "AuthenticationRequired",
                AdminError::ProviderUnavailable(_) => "BadGatewayError",
                AdminError::TooManyRequests { .. } | AdminError::Throttled { .. } => "TooManyRequestsError",
                AdminError::AtCapacity { .. } => "ServiceUnavailableError",
                AdminError::Unavailable => "ServiceUnavailableError",
                AdminError::Internal(_) => "InternalError",
            },
            Self::PayloadTooLarge { .. } => "PayloadTooLarge",
            Self::ContentType(_) | Self::ContentEncoding(_) => "ContentTypeError",
            Self::MethodNotAllowed => "MethodNotAllowedError",
            Self::NotImplemented(_) => "NotImplementedError",
            Self::LoginRequired { .. } => "AuthenticationRequired",
        }
    }
}

/// The status an operation's failure is answered with, in the API and in the console.
pub fn status_of(error: &AdminError) -> StatusCode {
    match error {
        AdminError::Validation { .. } | AdminError::BadData(_) | AdminError::ArchivedFeature => {
            StatusCode::BAD_REQUEST
        }
        AdminError::AuthenticationRequired | AdminError::PasswordMismatch | AdminError::SignInFailed(_) => {
            StatusCode::UNAUTHORIZED
        }
        AdminError::ProviderUnavailable(_) => StatusCode::BAD_GATEWAY,
        AdminError::NoAccess(_) | AdminError::InvalidOperation(_) | AdminError::ChangeRequestRequired(_) => {
            StatusCode::FORBIDDEN
        }
        AdminError::NotFound(_) => StatusCode::NOT_FOUND,
        AdminError::NameExists(_) | AdminError::Conflict(_) => StatusCode::CONFLICT,
        AdminError::TooManyRequests { .. } | AdminError::Throttled { .. } => StatusCode::TOO_MANY_REQUESTS,
        AdminError::Unavailable | AdminError::AtCapacity { .. } => StatusCode::SERVICE_UNAVAILABLE,
        AdminError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
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
    /// On `AuthenticationRequired`: the login operation's path, which Unleash's web UI reads to
    /// show its login form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'static str>,
    /// On `AuthenticationRequired`: `password`, a username and password form.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub login_type: Option<&'static str>,
    /// On `AuthenticationRequired`: whether the password form starts hidden, as it does when
    /// password login is switched off.
    #[serde(rename = "defaultHidden", skip_serializing_if = "Option::is_none")]
    pub default_hidden: Option<bool>,
    /// On `AuthenticationRequired` from `GET /api/admin/user` with single sign-on on: the other
    /// ways to log in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options: Option<Vec<LoginOption>>,
}

/// Another way to log in: `{type, message, path}`, as Unleash's web UI reads it.
#[derive(Debug, Serialize, ToSchema)]
pub struct LoginOption {
    /// `oidc`.
    #[serde(rename = "type")]
    pub login_type: &'static str,
    /// The button's label.
    pub message: &'static str,
    /// Where the browser goes to log in this way.
    pub path: &'static str,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Admin(error) => status_of(error),
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::ContentType(_) | Self::ContentEncoding(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::MethodNotAllowed | Self::NotImplemented(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::LoginRequired { .. } => StatusCode::UNAUTHORIZED,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let id = uuid::Uuid::new_v4().to_string();
        let status = self.status_code();
        if let Self::Admin(AdminError::Internal(cause)) = self {
            tracing::error!(error_id = %id, cause = %cause, "internal error {id}: {cause}");
        } else if status.is_server_error() {
            tracing::warn!(error_id = %id, "{self}");
        }
        let details = match self {
            Self::Admin(AdminError::Validation { details, .. }) if !details.is_empty() => {
                Some(details.clone())
            }
            _ => None,
        };
        let mut response = HttpResponse::build(status);
        if let Self::Admin(
            AdminError::TooManyRequests { retry_after }
            | AdminError::Throttled { retry_after, .. }
            | AdminError::AtCapacity { retry_after, .. },
        ) = self
            && let Ok(value) = HeaderValue::from_str(&retry_after.to_string())
        {
            response.insert_header((header::RETRY_AFTER, value));
        }
        let (login, password) = match self {
            Self::Admin(AdminError::AuthenticationRequired) => (true, true),
            Self::LoginRequired { password } => (true, *password),
            _ => (false, true),
        };
        // Unleash's 401 repeats its message as the one detail, as its middleware's errors do.
        let details = details.or_else(|| {
            login.then(|| {
                vec![Detail {
                    message: self.to_string(),
                    path: None,
                }]
            })
        });
        response.json(ErrorBody {
            id,
            name: self.name().to_owned(),
            message: self.to_string(),
            details,
            path: login.then_some("/auth/simple/login"),
            login_type: login.then_some("password"),
            default_hidden: login.then_some(!password),
            options: matches!(self, Self::LoginRequired { .. }).then(|| {
                vec![LoginOption {
                    login_type: "oidc",
                    message: "Sign in with single sign-on",
                    path: flag_admin::identity::oidc::LOGIN_PATH,
                }]
            }),
        })
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        Self::Admin(AdminError::from(error))
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(error: actix_web::error::BlockingError) -> Self {
        Self::internal(format!("blocking task failed: {error}"))
    }
}
