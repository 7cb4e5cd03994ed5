//! Who is asking, and what they may do: the principal, the permission policy, and the API
//! tokens kept in memory.
//!
//! Every operation declares its [`Access`] once, as a constant beside its function (such as
//! `catalogue::features::CREATE`), which every interface reads; the interface resolves the
//! credential the request carries ([`resolve_token`], [`resolve_session`]) and asks the access
//! to admit it ([`Access::admit`]). An operation whose effect is confined to environments
//! named by the request then checks each of them with [`Caller::require_in`], under the
//! permission its access declares. API tokens are looked up by their SHA-256 verifier and
//! compared in constant time; the secret itself is never stored or logged.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::NaiveDateTime;
use flag_store::models::{Actor, ApiTokenRow, UnreadableToken};
use flag_store::{DbConnection, StoreError, queries};

use crate::identity::Identity;
use crate::identity::teams::grants::{self, Grants};
use crate::runtime::Runtime;
use crate::runtime::cache::RevisionCache;
use crate::runtime::db;
use crate::runtime::domain::{Permission, RootRole, TokenType};
use crate::runtime::error::AdminError;
use crate::runtime::secrets;

/// What a personal access token's secret begins with, as Unleash's do.
pub const PERSONAL_TOKEN_PREFIX: &str = "user:";

/// The environment a frontend token made for every environment evaluates in, and the one an
/// API token is made for when none is named: Unleash's default.
pub const DEFAULT_ENVIRONMENT: &str = "development";

/// The setting that holds the frontend API's allowed origins.
pub const FRONTEND_ORIGINS: &str = "frontendApiOrigins";

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
    /// A logged-in user, or a user or service account acting through a personal access token.
    User {
        /// User id.
        id: i32,
        /// Email or username, for the audit log.
        label: String,
        /// Built-in root role: the user's own, raised by their groups'.
        role: RootRole,
        /// What custom roles and project roles add to it.
        grants: Arc<Grants>,
    },
}

/// Who may call an operation. Each operation declares one, as a constant beside its function;
/// the router, the API description and the console all read it, and nothing else decides who
/// may call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, with no credentials.
    Public,
    /// Server-side SDKs: client and backend tokens.
    Client,
    /// Browser SDKs and OpenFeature providers: frontend tokens.
    Frontend,
    /// Any administrator credential; reads nothing specific to an environment.
    Read,
    /// People only: a signed-in user, or a user or service account through a personal access
    /// token; never an API token. Change requests are made, reviewed and applied by people, so
    /// that their approvals are those of distinct people.
    Person,
    /// The lists administrators keep (users, API tokens, invite links): every admin token, since
    /// none of it is specific to an environment, and the Admin role.
    AdminRead,
    /// Reads state specific to the environments the request names (the playgrounds,
    /// environment variants): everyone but a token limited to other environments.
    ReadIn(Permission),
    /// Writes only the state of the environments the request names (strategies, variants, on
    /// and off): the Editor and Admin roles, and admin tokens in their environments.
    WriteIn(Permission),
    /// A write whose effect reaches every environment (features, dependencies, segments): the
    /// Editor and Admin roles, and admin tokens for every environment.
    Write(Permission),
    /// Administration that a custom root role can be given (context fields, strategy types,
    /// integrations, API tokens, creating projects): the Admin role, admin tokens for every
    /// environment, and custom root roles holding the permission.
    Root(Permission),
    /// Administration (users, roles, groups, invite links, environments, settings): the Admin
    /// role and admin tokens for every environment.
    Admin,
}

/// A principal admitted to an operation, with the access that operation declares and the
/// project the request names, when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    principal: Principal,
    access: Access,
    project: Option<String>,
}

fn no_access(permission: Permission, place: &str) -> AdminError {
    AdminError::NoAccess(format!(
        "you don't have the required permissions to perform this operation; to perform this action, you \
         need the \"{permission}\" permission{place}"
    ))
}

/// Refused for `permission` in `environment`.
fn denied_in(permission: Permission, environment: &str) -> AdminError {
    no_access(permission, &format!(" in the \"{environment}\" environment"))
}

/// Refused for a write whose effect reaches beyond the environments a token is limited to.
fn beyond(permission: Permission, allowed: &[String]) -> AdminError {
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
    /// Who the audit log says wrote: a user by email or username and id, or an admin token by
    /// its name.
    pub fn actor(&self) -> Actor {
        match self {
            Self::AdminToken { name, .. } => Actor {
                name: name.clone(),
                user_id: Actor::ADMIN_TOKEN,
            },
            Self::User { id, label, .. } => Actor {
                name: label.clone(),
                user_id: *id,
            },
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

    /// Whether the caller may write features everywhere: admin tokens, Editors and Admins.
    fn may_write(&self) -> bool {
        matches!(
            self,
            Self::AdminToken { .. }
                | Self::User {
                    role: RootRole::Admin | RootRole::Editor,
                    ..
                }
        )
    }

    /// What custom roles and project roles grant the caller: nothing for an admin token.
    fn grants(&self) -> Option<&Grants> {
        match self {
            Self::User { grants, .. } => Some(grants),
            Self::AdminToken { .. } => None,
        }
    }

    /// Whether the caller holds `permission` for a write: everywhere (a built-in root role
    /// that writes, or a custom root role holding it), or in `project` through a project role
    /// (in `environment`, when one is named; in some environment otherwise).
    pub fn holds(&self, permission: Permission, project: Option<&str>, environment: Option<&str>) -> bool {
        let everywhere = if permission.administers_project() {
            self.administers()
        } else {
            self.may_write()
        };
        if everywhere {
            return true;
        }
        let Some(grants) = self.grants() else {
            return false;
        };
        grants.at_root(permission.as_str())
            || project.is_some_and(|project| grants.in_project(permission.as_str(), project, environment))
    }

    /// Whether the caller may give someone else the permission `name` in `project` (in
    /// `environment`, or every environment when it is empty): administrators may give anything;
    /// others only what they hold there themselves, so that giving a role never widens anyone's
    /// access beyond the giver's.
    pub fn may_give(&self, name: &str, project: &str, environment: &str) -> bool {
        if self.administers() {
            return true;
        }
        self.grants()
            .is_some_and(|grants| grants.at_root(name) || grants.in_project_fully(name, project, environment))
    }

    /// Whether the caller may read stored secrets back (with the operator's key): Admins and
    /// admin tokens for every environment, never a token limited to some.
    pub fn may_read_secrets(&self) -> bool {
        self.administers() && self.limited_to().is_none()
    }

    /// Whether the caller administers: admin tokens and Admins.
    pub fn administers(&self) -> bool {
        matches!(
            self,
            Self::AdminToken { .. }
                | Self::User {
                    role: RootRole::Admin,
                    ..
                }
        )
    }
}

impl Access {
    /// Whether `principal`, an administrator's credential, may call the operation; for
    /// [`Access::ReadIn`] and [`Access::WriteIn`], as far as can be told before the request's
    /// environments are known. With no project named, a write needs its permission everywhere.
    pub fn admit(self, principal: Principal) -> Result<Caller, AdminError> {
        self.admit_in(principal, None)
    }

    /// As [`Access::admit`], for a request that names `project` (its path's `projectId`):
    /// project roles held there count too.
    pub fn admit_in(self, principal: Principal, project: Option<&str>) -> Result<Caller, AdminError> {
        let holds = |permission| principal.holds(permission, project, None);
        let admitted = match (self, principal.limited_to()) {
            (Self::Public | Self::Read | Self::ReadIn(_), _) => Ok(()),
            (Self::Person, _) if matches!(principal, Principal::User { .. }) => Ok(()),
            (Self::Person, _) => Err(AdminError::NoAccess(PEOPLE_ONLY.into())),
            (Self::Client | Self::Frontend, _) => Err(wrong_token_type()),
            (Self::AdminRead, _) if principal.administers() => Ok(()),
            (Self::AdminRead, _) => Err(no_access(Permission::Admin, "")),
            (Self::Admin, Some(allowed)) => Err(beyond(Permission::Admin, allowed)),
            (Self::Root(permission), Some(allowed)) => Err(beyond(permission, allowed)),
            (Self::Root(permission), None)
                if principal.administers()
                    || principal
                        .grants()
                        .is_some_and(|grants| grants.at_root(permission.as_str())) =>
            {
                Ok(())
            }
            (Self::Root(permission), None) => Err(no_access(permission, "")),
            (Self::Admin, None) if principal.administers() => Ok(()),
            (Self::Admin, None) => Err(no_access(Permission::Admin, "")),
            (Self::Write(permission), Some(allowed)) => Err(beyond(permission, allowed)),
            (Self::Write(permission) | Self::WriteIn(permission), _) if holds(permission) => Ok(()),
            (Self::Write(permission), None) => Err(no_access(permission, in_project(project))),
            // A Viewer is told which environment it may not write.
            (Self::WriteIn(_), _) => Ok(()),
        };
        admitted.map(|()| Caller {
            principal,
            access: self,
            project: project.map(str::to_owned),
        })
    }
}

/// The refusal of an API token where only people are admitted.
pub const PEOPLE_ONLY: &str =
    "change requests are made, reviewed and applied by people: sign in, or use a personal access token";

/// How a refusal names the project it was asked in.
fn in_project(project: Option<&str>) -> &'static str {
    if project.is_some() { " in this project" } else { "" }
}

impl Caller {
    /// The principal.
    pub fn principal(&self) -> &Principal {
        &self.principal
    }

    /// Who the audit log says wrote.
    pub fn actor(&self) -> Actor {
        self.principal.actor()
    }

    /// Runs `write` as one write transaction on a pooled connection on behalf of this caller,
    /// with the actor its audit events name and the time it is made at: the runtime's clock,
    /// read once the write lock is held, so that writes are dated in the order they commit in.
    /// The shape every write of an operation shares.
    pub async fn write<T, F>(&self, runtime: &Runtime, write: F) -> Result<T, AdminError>
    where
        T: Send + 'static,
        F: FnOnce(&mut DbConnection, &Actor, NaiveDateTime) -> Result<T, StoreError> + Send + 'static,
    {
        let actor = self.actor();
        let clock = runtime.settings.clock.clone();
        db::run(&runtime.store, move |conn| {
            flag_store::queries::write_at(conn, || clock.now(), |conn, now| write(conn, &actor, now))
        })
        .await
    }

    /// Checks a further root permission the request turned out to need, beyond the one its
    /// operation declares (a frontend token, where creating tokens declares client tokens).
    pub fn require_root(&self, permission: Permission) -> Result<(), AdminError> {
        let held = self.principal.limited_to().is_none()
            && (self.principal.administers()
                || self
                    .principal
                    .grants()
                    .is_some_and(|grants| grants.at_root(permission.as_str())));
        if held {
            Ok(())
        } else {
            Err(no_access(permission, ""))
        }
    }

    /// Whether the caller may see state specific to `environment`.
    pub fn may_read(&self, environment: &str) -> bool {
        self.principal.may_read(environment)
    }

    /// Checks that the operation may touch `environment`, one the request names, under the
    /// permission the operation declares. Operations of other accesses pass: they were admitted
    /// whole.
    pub fn require_in(&self, environment: &str) -> Result<(), AdminError> {
        match self.access {
            Access::ReadIn(permission) if !self.principal.may_read(environment) => {
                Err(denied_in(permission, environment))
            }
            Access::WriteIn(permission)
                if !self
                    .principal
                    .holds(permission, self.project.as_deref(), Some(environment))
                    || !self.principal.may_read(environment) =>
            {
                Err(denied_in(permission, environment))
            }
            _ => Ok(()),
        }
    }
}

/// The answer to a token of another type than the operation takes, as Unleash words it.
pub fn wrong_token_type() -> AdminError {
    AdminError::NoAccess("invalid token: expected a different token type for this endpoint".into())
}

/// A caller of the client API (`/api/client`): a client or backend token. Admin and frontend
/// tokens are refused there, as Unleash 8 refuses them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAccess {
    /// The token's environment, when it is bound to one.
    pub environment: Option<String>,
    /// The token's projects, when it is limited to some; sorted, so that tokens for the same
    /// projects share cached answers.
    pub projects: Option<Vec<String>>,
    /// Which token this is: its stored verifier, never the secret. Limits per token count by it.
    pub token: Arc<str>,
}

/// A caller of the frontend API (`/api/frontend`): a frontend token, always bound to one
/// environment ([`DEFAULT_ENVIRONMENT`] for a token made for every environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontendAccess {
    /// The environment the token evaluates in.
    pub environment: String,
    /// The token's projects, when it is limited to some.
    pub projects: Option<Vec<String>>,
}

/// What a credential turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// An administrator: an admin token or a logged-in user.
    Admin(Principal),
    /// A client or backend token.
    Client(ClientAccess),
    /// A frontend token.
    Frontend(FrontendAccess),
    /// No credential this server knows, or an expired one.
    Unknown,
}

/// One stored API token, as requests are checked against it: its row, or, when its stored type
/// or projects do not read, its verifier, its expiry and why. A token whose row is corrupt is
/// refused with an internal error when used, and the other tokens keep working.
#[derive(Debug)]
struct TokenGrant(Result<ApiTokenRow, UnreadableToken>);

impl TokenGrant {
    fn secret_hash(&self) -> &str {
        match &self.0 {
            Ok(row) => &row.secret_hash,
            Err(unreadable) => &unreadable.secret_hash,
        }
    }

    fn expires_at(&self) -> Option<chrono::NaiveDateTime> {
        match &self.0 {
            Ok(row) => row.expires_at,
            Err(unreadable) => unreadable.expires_at,
        }
    }

    /// Whether it works at `now`: it has no expiry, or one after `now`.
    fn unexpired(&self, now: chrono::NaiveDateTime) -> bool {
        self.expires_at().is_none_or(|at| at > now)
    }

    /// The row, or the internal error that names the token and its unreadable column.
    fn row(&self) -> Result<&ApiTokenRow, AdminError> {
        self.0
            .as_ref()
            .map_err(|unreadable| AdminError::Internal(unreadable.error.to_string()))
    }
}

/// Every API token by its verifier, and the origins the frontend API answers, as of one store
/// revision.
#[derive(Debug)]
pub struct TokenMap {
    by_hash: HashMap<String, TokenGrant>,
    /// The origins, or why the stored setting does not read: that fails CORS alone, never a
    /// token check.
    origins: Result<Arc<[String]>, String>,
}

/// The API tokens in memory, so that checking a token needs no database round trip. Expiry is
/// checked against the clock on every request.
pub type TokenCache = RevisionCache<(), TokenMap>;

/// The origins the frontend API answers when none were set: every origin, as in Unleash.
fn default_origins() -> Arc<[String]> {
    Arc::from(vec!["*".to_owned()])
}

/// The tokens at the store's current revision: from memory while the revision reading stands,
/// else after one question (and one read of the table when the revision moved).
async fn token_map(ctx: &Runtime, identity: &Identity) -> Result<Arc<TokenMap>, AdminError> {
    let revision = ctx.revision.current(&ctx.store).await?;
    let store = ctx.store.clone();
    identity
        .tokens
        .get_or_build(&(), revision, |_| async move {
            crate::runtime::db::run(&store, |conn| {
                let tokens = queries::api_tokens::list_each(conn)?;
                // An unreadable setting is an error, never a fallback to every origin.
                let origins = match queries::settings::get::<Vec<String>>(conn, FRONTEND_ORIGINS) {
                    Ok(origins) => Ok(origins.map_or_else(default_origins, Arc::from)),
                    Err(error @ flag_store::StoreError::Corrupt { .. }) => Err(error.to_string()),
                    Err(error) => return Err(error),
                };
                Ok((tokens, origins))
            })
            .await
            .map(|(tokens, origins)| {
                let by_hash = tokens
                    .into_iter()
                    .map(|token| {
                        let grant = TokenGrant(token);
                        (grant.secret_hash().to_owned(), grant)
                    })
                    .collect();
                Arc::new(TokenMap { by_hash, origins })
            })
        })
        .await
}

/// Whether the token `access` was resolved from still admits it: not deleted, not expired.
pub async fn still_valid(
    ctx: &Runtime,
    identity: &Identity,
    access: &ClientAccess,
) -> Result<bool, AdminError> {
    let now = ctx.now();
    let map = token_map(ctx, identity).await?;
    Ok(map
        .by_hash
        .get(&*access.token)
        .is_some_and(|grant| grant.unexpired(now)))
}

/// The origins the frontend API answers (`*` for all), as of the store's current revision.
pub async fn frontend_origins(ctx: &Runtime, identity: &Identity) -> Result<Arc<[String]>, AdminError> {
    token_map(ctx, identity)
        .await?
        .origins
        .clone()
        .map_err(AdminError::Internal)
}

/// What Unleash Edge learns of a token it validates (Edge's `EdgeToken`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ValidToken {
    /// The token, as sent.
    pub token: String,
    /// `client`, `backend`, `frontend` or `admin`.
    #[serde(rename = "type")]
    #[schema(value_type = crate::runtime::domain::TokenTypeSchema)]
    pub token_type: TokenType,
    /// Its environment; `*` for every environment.
    pub environment: String,
    /// Its projects; `["*"]` for all.
    pub projects: Vec<String>,
}

/// Who may ask which of some tokens are valid: anyone.
pub const VALIDATE_TOKENS: Access = Access::Public;

/// The tokens among `tokens` that are valid now; the others are left out, as Unleash leaves
/// them out.
pub async fn validate_tokens(
    ctx: &Runtime,
    identity: &Identity,
    tokens: Vec<String>,
) -> Result<Vec<ValidToken>, AdminError> {
    let now = ctx.now();
    let map = token_map(ctx, identity).await?;
    Ok(tokens
        .into_iter()
        .filter_map(|token| {
            let grant = map
                .by_hash
                .get(&secrets::verifier(&token))
                .filter(|grant| grant.unexpired(now))?;
            // A token whose row does not read is left out, as an invalid one is, and logged.
            let row = match grant.row() {
                Ok(row) => row,
                Err(error) => {
                    tracing::error!(%error, "left out of Edge's token validation");
                    return None;
                }
            };
            Some(ValidToken {
                token_type: row.token_type,
                environment: row.environment.clone(),
                projects: row.projects.as_slice().to_vec(),
                token,
            })
        })
        .collect())
}

/// What the API token `token` grants now.
pub async fn resolve_token(
    ctx: &Runtime,
    identity: &Identity,
    token: &str,
) -> Result<Credential, AdminError> {
    let now = ctx.now();
    let map = token_map(ctx, identity).await?;
    let Some(grant) = map
        .by_hash
        .get(&secrets::verifier(token))
        .filter(|grant| secrets::matches(token, grant.secret_hash()) && grant.unexpired(now))
    else {
        // Personal access tokens are looked up in the store: they are few, and used by
        // scripts and pipelines rather than by every SDK request.
        if token.starts_with(PERSONAL_TOKEN_PREFIX) {
            return resolve_personal_token(ctx, token).await;
        }
        return Ok(Credential::Unknown);
    };
    let row = grant.row()?;
    let environment = (row.environment != "*").then(|| row.environment.clone());
    let projects = (!row.projects.include_all()).then(|| {
        let mut projects = row.projects.as_slice().to_vec();
        projects.sort_unstable();
        projects.dedup();
        projects
    });
    Ok(match row.token_type {
        TokenType::Admin => Credential::Admin(Principal::AdminToken {
            name: row.token_name.clone(),
            environments: environment.map(|environment| vec![environment]),
        }),
        TokenType::Client | TokenType::Backend => Credential::Client(ClientAccess {
            environment,
            projects,
            token: row.secret_hash.as_str().into(),
        }),
        TokenType::Frontend => Credential::Frontend(FrontendAccess {
            environment: environment.unwrap_or_else(|| DEFAULT_ENVIRONMENT.into()),
            projects,
        }),
    })
}

/// The user logged in with the session secret `session`, when it is valid now.
pub async fn resolve_session(ctx: &Runtime, session: &str) -> Result<Credential, AdminError> {
    let hash = secrets::verifier(session);
    let now = ctx.now();
    let user = crate::runtime::db::run(&ctx.store, move |conn| {
        queries::sessions::find_user(conn, &hash, now)?
            .map(|user| grants::of_user(conn, &user).map(|held| (user, held)))
            .transpose()
    })
    .await?;
    let Some((user, (role, grants))) = user else {
        return Ok(Credential::Unknown);
    };
    Ok(Credential::Admin(user_principal(user, role, grants)))
}

/// The principal of `user`, holding `role` and `grants`.
fn user_principal(user: flag_store::models::UserRow, role: RootRole, grants: Grants) -> Principal {
    Principal::User {
        id: user.id,
        label: user
            .email
            .or(user.username)
            .unwrap_or_else(|| format!("user {}", user.id)),
        role,
        grants: Arc::new(grants),
    }
}

/// The user or service account a personal access token acts as, when it is valid now.
async fn resolve_personal_token(ctx: &Runtime, token: &str) -> Result<Credential, AdminError> {
    let hash = secrets::verifier(token);
    let now = ctx.now();
    let found = crate::runtime::db::run(&ctx.store, move |conn| {
        queries::access::find_token(conn, &hash, now)?
            .map(|(_, user)| grants::of_user(conn, &user).map(|held| (user, held)))
            .transpose()
    })
    .await?;
    Ok(match found {
        Some((user, (role, grants))) => Credential::Admin(user_principal(user, role, grants)),
        None => Credential::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: RootRole) -> Principal {
        Principal::User {
            id: 1,
            label: "u".into(),
            role,
            grants: Arc::default(),
        }
    }

    fn production_token() -> Principal {
        Principal::AdminToken {
            name: "t".into(),
            environments: Some(vec!["production".into()]),
        }
    }

    #[test]
    fn each_access_admits_whom_it_declares() {
        let viewer = user(RootRole::Viewer);
        let editor = user(RootRole::Editor);
        let admin = user(RootRole::Admin);
        assert!(Access::Read.admit(viewer.clone()).is_ok());
        assert!(Access::AdminRead.admit(viewer.clone()).is_err());
        assert!(Access::AdminRead.admit(production_token()).is_ok());
        assert!(
            Access::Write(Permission::CreateFeature)
                .admit(viewer.clone())
                .is_err()
        );
        assert!(
            Access::Write(Permission::CreateFeature)
                .admit(editor.clone())
                .is_ok()
        );
        assert!(
            Access::Write(Permission::CreateFeature)
                .admit(production_token())
                .is_err()
        );
        assert!(Access::Admin.admit(editor.clone()).is_err());
        assert!(Access::Admin.admit(admin).is_ok());
        assert!(Access::Client.admit(editor).is_err());
    }

    #[test]
    fn environment_scoped_operations_check_each_environment() -> Result<(), AdminError> {
        let write = Access::WriteIn(Permission::UpdateFeatureEnvironment);
        let token = write.admit(production_token())?;
        assert!(token.require_in("production").is_ok());
        let refused = token.require_in("development");
        assert!(
            matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"development\"")),
            "{refused:?}"
        );
        let viewer = write.admit(user(RootRole::Viewer))?;
        assert!(viewer.require_in("production").is_err());
        let read = Access::ReadIn(Permission::Playground).admit(user(RootRole::Viewer))?;
        assert!(read.require_in("production").is_ok());
        Ok(())
    }
}
