//! Users, their roles, login sessions and logins through an OpenID provider in progress.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::schema::{login_sessions, oidc_logins, roles, users};

/// A role.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = roles, check_for_backend(crate::connection::MultiBackend))]
pub struct RoleRow {
    /// Role id: Admin 1, Editor 2, Viewer 3, Owner 4, Member 5.
    pub id: i32,
    /// Role name.
    pub name: String,
    /// `root` or `project`.
    pub role_type: String,
    /// Free text.
    pub description: Option<String>,
}

/// A user.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(crate::connection::MultiBackend))]
pub struct UserRow {
    /// User id.
    pub id: i32,
    /// Display name.
    pub name: Option<String>,
    /// Unique login name.
    pub username: Option<String>,
    /// Unique email, lower-cased.
    pub email: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// Root role id.
    pub root_role: i32,
    /// Failed logins since the last success.
    pub login_attempts: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last login, UTC.
    pub seen_at: Option<NaiveDateTime>,
}

/// What an administrator changes on a user; a `None` field is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, AsChangeset)]
#[diesel(table_name = users)]
pub struct UserChanges {
    /// New display name.
    pub name: Option<String>,
    /// New email; lower-cased by [`crate::queries::users::update`].
    pub email: Option<String>,
    /// New root role id.
    pub root_role: Option<i32>,
}

/// A new user; `email` must already be lower-cased (see [`crate::queries::users::create`]).
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = users)]
pub struct NewUser {
    /// Display name.
    pub name: Option<String>,
    /// Unique login name.
    pub username: Option<String>,
    /// Unique email.
    pub email: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// Root role id.
    pub root_role: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A login session: only a hash of its cookie value is stored.
#[derive(Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_sessions, check_for_backend(crate::connection::MultiBackend))]
pub struct SessionRow {
    /// Hex SHA-256 of the session secret.
    pub token_hash: String,
    /// The user.
    pub user_id: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
    /// Whether it was opened through the OpenID provider.
    pub via_oidc: bool,
    /// The provider's ID token, kept for `id_token_hint` when signing out there too; never
    /// shown by `Debug`.
    pub id_token: Option<String>,
}

impl std::fmt::Debug for SessionRow {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SessionRow")
            .field("token_hash", &self.token_hash)
            .field("user_id", &self.user_id)
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .field("via_oidc", &self.via_oidc)
            .field("id_token", &self.id_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// A login through an OpenID provider that has started and not come back yet.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oidc_logins, check_for_backend(crate::connection::MultiBackend))]
pub struct OidcLoginRow {
    /// Hex SHA-256 of the secret in the browser's cookie.
    pub cookie_hash: String,
    /// The `state` sent to the provider.
    pub state: String,
    /// The `nonce` the ID token must carry.
    pub nonce: String,
    /// The PKCE code verifier.
    pub pkce_verifier: String,
    /// The console path to go back to.
    pub return_to: String,
    /// When it started, UTC.
    pub created_at: NaiveDateTime,
}
