//! Who is asking, and what they may do.
//!
//! Credentials come as `Authorization: <token>` (a `Bearer ` prefix is accepted) or as the
//! session cookie set by `POST /auth/simple/login`. API tokens are looked up by their SHA-256
//! verifier and compared in constant time; the secret itself is never stored or logged.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

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
    Frontend(FrontendAccess),
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

/// A caller of the frontend API (`/api/frontend`): a frontend token, always bound to one
/// environment (`development` for a token made for every environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontendAccess {
    /// The environment the token evaluates in.
    pub environment: String,
    /// The token's projects, when it is limited to some.
    pub projects: Option<Vec<String>>,
}

fn app_state(request: &HttpRequest) -> Result<&web::Data<AppState>, ApiError> {
    request
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::Internal("application state missing".into()))
}

/// One stored API token, as requests are checked against it.
#[derive(Debug)]
struct TokenGrant {
    id: i32,
    name: String,
    secret_hash: String,
    kind: Option<TokenType>,
    environment: String,
    projects: Result<Vec<String>, String>,
    expires_at: Option<chrono::NaiveDateTime>,
}

/// Every API token by its verifier, and the origins the frontend API answers, as of one
/// store revision.
#[derive(Debug)]
struct TokenMap {
    revision: i32,
    by_hash: HashMap<String, TokenGrant>,
    origins: Arc<[String]>,
}

/// The setting that holds the frontend API's allowed origins.
pub const FRONTEND_ORIGINS: &str = "frontendApiOrigins";

/// The origins the frontend API answers when none were set: every origin, as in Unleash.
fn default_origins() -> Arc<[String]> {
    Arc::from(vec!["*".to_owned()])
}

/// The origins the frontend API answers (`*` for all), as of the store's current revision.
pub async fn frontend_origins(state: &AppState) -> Result<Arc<[String]>, ApiError> {
    Ok(Arc::clone(&TokenCache::current(state).await?.origins))
}

/// The API tokens in memory, so that checking a token needs no database round trip.
///
/// Creating or deleting a token records an audit event, which moves the store's revision; the
/// map is read again, whole, by the first request that sees a newer revision (see
/// [`crate::engines::RevisionWatch`]). Expiry is checked against the clock on every request.
#[derive(Debug, Default)]
pub struct TokenCache {
    map: Mutex<Option<Arc<TokenMap>>>,
    /// Held while the map is read, so requests that find it stale together read it once.
    loading: tokio::sync::Mutex<()>,
}

impl TokenCache {
    fn cached(&self, revision: i32) -> Option<Arc<TokenMap>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .filter(|map| map.revision >= revision)
            .map(Arc::clone)
    }

    fn store(&self, map: Arc<TokenMap>) {
        let mut slot = self.map.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_none_or(|held| held.revision <= map.revision) {
            *slot = Some(map);
        }
    }

    /// The tokens at the store's current revision: from memory while the revision reading
    /// stands, else after one question (and one read of the table when the revision moved).
    async fn current(state: &AppState) -> Result<Arc<TokenMap>, ApiError> {
        if let Some(map) = state
            .revision
            .fresh()
            .and_then(|revision| state.tokens.cached(revision))
        {
            return Ok(map);
        }
        let _loading = state.tokens.loading.lock().await;
        // Another request may have read it while this one waited.
        if let Some(map) = state
            .revision
            .fresh()
            .and_then(|revision| state.tokens.cached(revision))
        {
            return Ok(map);
        }
        let watch = Arc::clone(&state.revision);
        let cache = Arc::clone(&state.tokens);
        let (map, loaded) = crate::db::run(&state.store, move |conn| {
            let revision = watch.read(conn)?;
            if let Some(map) = cache.cached(revision) {
                return Ok((map, false));
            }
            queries::snapshot(conn, |conn| {
                let revision = queries::events::latest_id(conn)?;
                let by_hash = queries::api_tokens::list(conn)?
                    .into_iter()
                    .map(|row| {
                        let projects = row.projects().map_err(|error| error.to_string());
                        let grant = TokenGrant {
                            id: row.id,
                            kind: TokenType::parse(&row.token_type),
                            name: row.token_name,
                            environment: row.environment,
                            projects,
                            expires_at: row.expires_at,
                            secret_hash: row.secret_hash,
                        };
                        (grant.secret_hash.clone(), grant)
                    })
                    .collect();
                // An unreadable setting is an error, never a fallback to every origin.
                let origins = queries::settings::get::<Vec<String>>(conn, FRONTEND_ORIGINS)?
                    .map_or_else(default_origins, Arc::from);
                Ok((
                    Arc::new(TokenMap {
                        revision,
                        by_hash,
                        origins,
                    }),
                    true,
                ))
            })
        })
        .await?;
        if loaded {
            state.tokens.store(Arc::clone(&map));
        }
        Ok(map)
    }
}

/// What Unleash Edge learns of a token it validates (Edge's `EdgeToken`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ValidToken {
    /// The token, as sent.
    pub token: String,
    /// `client`, `backend`, `frontend` or `admin`.
    #[serde(rename = "type")]
    pub token_type: &'static str,
    /// Its environment; `*` for every environment.
    pub environment: String,
    /// Its projects; `["*"]` for all.
    pub projects: Vec<String>,
}

/// The tokens among `tokens` that are valid now, checked against the tokens in memory; the
/// others are left out, as Unleash leaves them out.
pub async fn validate_tokens(state: &AppState, tokens: Vec<String>) -> Result<Vec<ValidToken>, ApiError> {
    let now = crate::now();
    let map = TokenCache::current(state).await?;
    Ok(tokens
        .into_iter()
        .filter_map(|token| {
            let grant = map
                .by_hash
                .get(&secrets::verifier(&token))
                .filter(|grant| grant.expires_at.is_none_or(|at| at > now))?;
            Some(ValidToken {
                token_type: grant.kind?.as_str(),
                environment: grant.environment.clone(),
                projects: grant.projects.clone().ok()?,
                token,
            })
        })
        .collect())
}

/// What `token` grants, checked against the tokens in memory.
async fn token_credential(state: &AppState, token: &str) -> Result<Credential, ApiError> {
    let now = crate::now();
    let map = TokenCache::current(state).await?;
    let Some(grant) = map.by_hash.get(&secrets::verifier(token)).filter(|grant| {
        secrets::matches(token, &grant.secret_hash) && grant.expires_at.is_none_or(|at| at > now)
    }) else {
        return Ok(Credential::Unknown);
    };
    let environment = (grant.environment != "*").then(|| grant.environment.clone());
    let projects = || -> Result<Option<Vec<String>>, ApiError> {
        let projects = grant
            .projects
            .as_ref()
            .map_err(|error| ApiError::Internal(error.clone()))?;
        // Sorted, so that tokens for the same projects share cached answers.
        Ok((!projects.iter().any(|project| project == "*")).then(|| {
            let mut projects = projects.clone();
            projects.sort_unstable();
            projects.dedup();
            projects
        }))
    };
    Ok(match grant.kind {
        Some(TokenType::Admin) => Credential::Admin(Principal::AdminToken {
            name: grant.name.clone(),
            environments: environment.map(|environment| vec![environment]),
        }),
        Some(TokenType::Client | TokenType::Backend) => Credential::Client(ClientAccess {
            environment,
            projects: projects()?,
        }),
        Some(TokenType::Frontend) => Credential::Frontend(FrontendAccess {
            environment: environment.unwrap_or_else(|| "development".into()),
            projects: projects()?,
        }),
        None => {
            return Err(ApiError::Internal(format!(
                "api token {} has an unknown type",
                grant.id
            )));
        }
    })
}

async fn resolve(state: &AppState, request: &HttpRequest) -> Result<Credential, ApiError> {
    if let Some(token) = bearer(request) {
        return token_credential(state, &token).await;
    }
    let now = crate::now();
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
                Credential::Client(_) | Credential::Frontend(_) => Err(wrong_token_type()),
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
                Credential::Admin(Principal::AdminToken { .. }) | Credential::Frontend(_) => {
                    Err(wrong_token_type())
                }
                Credential::Admin(Principal::User { .. }) | Credential::Unknown => {
                    Err(ApiError::AuthenticationRequired)
                }
            }
        })
    }
}

impl FromRequest for FrontendAccess {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            let state = app_state(&request)?;
            // OpenFeature's providers may send the token as `X-API-Key`, as OFREP allows.
            let api_key = || {
                request
                    .path()
                    .starts_with("/ofrep/")
                    .then(|| request.headers().get("X-API-Key")?.to_str().ok())
                    .flatten()
                    .map(|key| key.trim().to_owned())
                    .filter(|key| !key.is_empty())
            };
            let Some(token) = bearer(&request).or_else(api_key) else {
                return Err(ApiError::AuthenticationRequired);
            };
            match token_credential(state, &token).await? {
                Credential::Frontend(access) => Ok(access),
                Credential::Admin(_) | Credential::Client(_) => Err(wrong_token_type()),
                Credential::Unknown => Err(ApiError::AuthenticationRequired),
            }
        })
    }
}
