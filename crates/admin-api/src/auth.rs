//! Who is asking, and what they may do.
//!
//! Credentials come as `Authorization: <token>` (a `Bearer ` prefix is accepted) or as the
//! session cookie set by `POST /auth/simple/login`. API tokens are looked up by their SHA-256
//! verifier and compared in constant time; the secret itself is never stored or logged.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, web};
use flag_store::queries;

use crate::AppState;
use crate::domain::{Permission, RootRole, TokenType};
use crate::error::ApiError;
use crate::secrets;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "unleash-session";

/// An authenticated caller of the admin API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// An admin API token, for all environments (`None`) or some.
    AdminToken {
        /// Token name, for the audit log.
        name: String,
        /// Environments it may write, when limited.
        environments: Option<Vec<String>>,
    },
    /// A logged-in user.
    User {
        /// User id.
        id: i32,
        /// Email or username, for the audit log.
        label: String,
        /// Root role.
        role: RootRole,
    },
}

fn no_access(permission: Permission, place: &str) -> ApiError {
    ApiError::NoAccess(format!(
        "you don't have the required permissions to perform this operation; to perform this action, you \
         need the \"{permission}\" permission{place}"
    ))
}

/// 403 for `permission` in `environment`.
fn denied_in(permission: Permission, environment: &str) -> ApiError {
    no_access(permission, &format!(" in the \"{environment}\" environment"))
}

/// 403 for a write whose effect reaches beyond the environments a token is limited to.
fn beyond(permission: Permission, allowed: &[String]) -> ApiError {
    let names = allowed
        .iter()
        .map(|name| format!("\"{name}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let noun = if allowed.len() == 1 {
        "environment"
    } else {
        "environments"
    };
    no_access(
        permission,
        &format!(" for every environment, and this token is limited to the {names} {noun}"),
    )
}

impl Principal {
    /// The name written to the audit log.
    pub fn actor(&self) -> &str {
        match self {
            Self::AdminToken { name, .. } => name,
            Self::User { label, .. } => label,
        }
    }

    /// The environments an environment-scoped admin token is limited to.
    fn limited_to(&self) -> Option<&[String]> {
        match self {
            Self::AdminToken {
                environments: Some(allowed),
                ..
            } => Some(allowed),
            _ => None,
        }
    }

    /// Whether the caller may see state specific to `environment` (its strategies, variants, on
    /// or off): everyone but a token limited to other environments.
    pub fn may_read(&self, environment: &str) -> bool {
        self.limited_to()
            .is_none_or(|allowed| allowed.iter().any(|name| name == environment))
    }

    /// Reading state specific to `environment` (the playgrounds, environment variants).
    pub fn require_read(&self, permission: Permission, environment: &str) -> Result<(), ApiError> {
        if self.may_read(environment) {
            Ok(())
        } else {
            Err(denied_in(permission, environment))
        }
    }

    /// Writing `permission`: in `environment` when the write changes only that environment's
    /// state, or `None` when its effect reaches every environment (features, dependencies,
    /// segments). Feature writes need the Editor role; a token limited to some environments may
    /// write only in those.
    pub fn require_write(&self, permission: Permission, environment: Option<&str>) -> Result<(), ApiError> {
        match (self, self.limited_to(), environment) {
            (Self::AdminToken { .. }, None, _) => Ok(()),
            (_, Some(_), Some(environment)) if self.may_read(environment) => Ok(()),
            (_, Some(_), Some(environment)) => Err(denied_in(permission, environment)),
            (_, Some(allowed), None) => Err(beyond(permission, allowed)),
            (
                Self::User {
                    role: RootRole::Admin | RootRole::Editor,
                    ..
                },
                _,
                _,
            ) => Ok(()),
            (Self::User { .. }, _, Some(environment)) => Err(denied_in(permission, environment)),
            (Self::User { .. }, _, None) => Err(no_access(permission, "")),
        }
    }

    /// Reading what administrators manage (users, API tokens, invite links): every admin token,
    /// since none of it is specific to an environment, and the Admin role.
    pub fn require_admin_read(&self) -> Result<(), ApiError> {
        match self {
            Self::AdminToken { .. }
            | Self::User {
                role: RootRole::Admin,
                ..
            } => Ok(()),
            Self::User { .. } => Err(no_access(Permission::Admin, "")),
        }
    }

    /// Administration (tokens, users, invite links, projects, environments, context fields,
    /// strategy types): admin tokens for every environment and the Admin role.
    pub fn require_admin(&self) -> Result<(), ApiError> {
        match (self, self.limited_to()) {
            (_, Some(allowed)) => Err(beyond(Permission::Admin, allowed)),
            (Self::AdminToken { .. }, None)
            | (
                Self::User {
                    role: RootRole::Admin,
                    ..
                },
                _,
            ) => Ok(()),
            (Self::User { .. }, None) => Err(no_access(Permission::Admin, "")),
        }
    }
}

/// The token in an `Authorization` header, without an optional `Bearer ` prefix.
pub fn bearer(request: &HttpRequest) -> Option<String> {
    let value = request.headers().get(AUTHORIZATION)?.to_str().ok()?.trim();
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or(value)
        .trim();
    (!token.is_empty()).then(|| token.to_owned())
}

/// What a credential turned out to be.
enum Credential {
    Admin(Principal),
    Client(ClientAccess),
    Frontend,
    Unknown,
}

/// The answer to a token of another type than the endpoint takes, as Unleash words it.
fn wrong_token_type() -> ApiError {
    ApiError::NoAccess("invalid token: expected a different token type for this endpoint".into())
}

/// A caller of the client API (`/api/client`): a client or backend token. Admin and frontend
/// tokens are refused there, as Unleash 8 refuses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAccess {
    /// The token's environment, when it is bound to one.
    pub environment: Option<String>,
    /// The token's projects, when it is limited to some.
    pub projects: Option<Vec<String>>,
}

fn app_state(request: &HttpRequest) -> Result<&web::Data<AppState>, ApiError> {
    request
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::Internal("application state missing".into()))
}

async fn resolve(state: &AppState, request: &HttpRequest) -> Result<Credential, ApiError> {
    let now = crate::now();
    if let Some(token) = bearer(request) {
        let hash = secrets::verifier(&token);
        let row = crate::db::run(&state.store, move |conn| {
            queries::api_tokens::find_by_hash(conn, &hash)
        })
        .await?;
        return Ok(match row {
            Some(row)
                if secrets::matches(&token, &row.secret_hash) && row.expires_at.is_none_or(|at| at > now) =>
            {
                match TokenType::parse(&row.token_type) {
                    Some(TokenType::Admin) => Credential::Admin(Principal::AdminToken {
                        name: row.token_name,
                        environments: (row.environment != "*").then(|| vec![row.environment]),
                    }),
                    Some(TokenType::Client | TokenType::Backend) => {
                        let projects = row.projects()?;
                        Credential::Client(ClientAccess {
                            environment: (row.environment != "*").then_some(row.environment),
                            projects: (!projects.iter().any(|project| project == "*")).then_some(projects),
                        })
                    }
                    Some(TokenType::Frontend) => Credential::Frontend,
                    None => {
                        return Err(ApiError::Internal(format!(
                            "api token {} has the unknown type {:?}",
                            row.id, row.token_type
                        )));
                    }
                }
            }
            _ => Credential::Unknown,
        });
    }
    if let Some(cookie) = request.cookie(SESSION_COOKIE) {
        let hash = secrets::verifier(cookie.value());
        let user = crate::db::run(&state.store, move |conn| {
            queries::sessions::find_user(conn, &hash, now)
        })
        .await?;
        if let Some(user) = user {
            return Ok(Credential::Admin(Principal::User {
                id: user.id,
                label: user
                    .email
                    .or(user.username)
                    .unwrap_or_else(|| format!("user {}", user.id)),
                role: RootRole::from_id(user.root_role)
                    .filter(|role| role.is_root())
                    .unwrap_or(RootRole::Viewer),
            }));
        }
    }
    Ok(Credential::Unknown)
}

impl FromRequest for Principal {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            let state = app_state(&request)?;
            match resolve(state, &request).await? {
                Credential::Admin(principal) => Ok(principal),
                Credential::Client(_) | Credential::Frontend => Err(wrong_token_type()),
                Credential::Unknown => Err(ApiError::AuthenticationRequired),
            }
        })
    }
}

impl FromRequest for ClientAccess {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            let state = app_state(&request)?;
            if bearer(&request).is_none() {
                return Err(ApiError::AuthenticationRequired);
            }
            match resolve(state, &request).await? {
                Credential::Client(access) => Ok(access),
                Credential::Admin(Principal::AdminToken { .. }) | Credential::Frontend => {
                    Err(wrong_token_type())
                }
                Credential::Admin(Principal::User { .. }) | Credential::Unknown => {
                    Err(ApiError::AuthenticationRequired)
                }
            }
        })
    }
}
