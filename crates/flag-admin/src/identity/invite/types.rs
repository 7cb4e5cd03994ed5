//! Bodies and answers of public signup tokens (`/api/admin/invite-link/tokens`) and of signing up
//! with one (`/invite/{token}/signup`).

use chrono::NaiveDateTime;
use flag_store::models::UserRow;
use flag_store::queries::signup_tokens::SignupToken;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::identity::users::types::Role;
use crate::runtime::domain::Timestamp;
use crate::runtime::input::iso;

/// A user who signed up with a token.
#[derive(Debug, Serialize, ToSchema)]
pub struct SignupTokenUser {
    id: i32,
    name: Option<String>,
    username: Option<String>,
}

impl SignupTokenUser {
    /// Their display name.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Their login name.
    pub fn username(&self) -> Option<&str> {
        self.username.as_deref()
    }
}

impl From<UserRow> for SignupTokenUser {
    fn from(user: UserRow) -> Self {
        Self {
            id: user.id,
            name: user.name,
            username: user.username,
        }
    }
}

/// A public signup token (Unleash's `publicSignupTokenSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignupTokenResponse {
    /// The secret, part of the invite link.
    secret: String,
    name: String,
    /// The invite link.
    url: Option<String>,
    #[schema(format = DateTime)]
    expires_at: String,
    /// Whether the token can be used now: switched on and not expired.
    enabled: bool,
    #[schema(format = DateTime)]
    created_at: String,
    created_by: Option<String>,
    /// The role users who sign up get: always Viewer.
    role: Role,
    /// The users who signed up with it.
    users: Vec<SignupTokenUser>,
}

impl SignupTokenResponse {
    /// The secret, which names the link in its URL and in paths.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The invite link.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// When it expires, in RFC 3339.
    pub fn expires_at(&self) -> &str {
        &self.expires_at
    }

    /// Whether it can be used now: switched on and not expired.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The users who signed up with it.
    pub fn users(&self) -> &[SignupTokenUser] {
        &self.users
    }

    /// The token as it stands at `now`: an expired token is never shown as enabled, so the
    /// answer depends on the time as well as on the row.
    pub fn new(token: SignupToken, now: NaiveDateTime) -> Self {
        let enabled = token.is_usable(now);
        let SignupToken { token, role, users } = token;
        Self {
            secret: token.secret,
            name: token.name,
            url: token.url,
            expires_at: iso(token.expires_at),
            enabled,
            created_at: iso(token.created_at),
            created_by: token.created_by,
            role: Role::from(role),
            users: users.into_iter().map(SignupTokenUser::from).collect(),
        }
    }
}

/// Every public signup token (Unleash's `publicSignupTokensSchema`).
#[derive(Debug, Serialize, ToSchema)]
pub struct SignupTokensResponse {
    tokens: Vec<SignupTokenResponse>,
}

impl SignupTokensResponse {
    /// The tokens.
    pub fn tokens(&self) -> &[SignupTokenResponse] {
        &self.tokens
    }

    /// The tokens as they stand at `now`.
    pub fn new(tokens: Vec<SignupToken>, now: NaiveDateTime) -> Self {
        Self {
            tokens: tokens
                .into_iter()
                .map(|token| SignupTokenResponse::new(token, now))
                .collect(),
        }
    }
}

/// Body of `POST /api/admin/invite-link/tokens`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSignupTokenRequest {
    /// Not empty.
    #[schema(min_length = 1)]
    pub name: String,
    /// Capped at one month from now.
    pub expires_at: Timestamp,
}

impl CreateSignupTokenRequest {
    /// A link named `name` that expires at `expires_at`, read as a body's `expiresAt` is; when
    /// it does not read, why, as a body is told.
    pub fn new(name: String, expires_at: &str) -> Result<Self, String> {
        Ok(Self {
            name,
            expires_at: Timestamp::read(expires_at)?,
        })
    }
}

/// Body of `PUT /api/admin/invite-link/tokens/{token}`: at least one of the two.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSignupTokenRequest {
    /// The new expiry; not capped. May be left out, but not `null`.
    #[serde(default, deserialize_with = "crate::runtime::input::not_null")]
    #[schema(nullable = false, value_type = Timestamp)]
    pub expires_at: Option<Timestamp>,
    /// The new switch. May be left out, but not `null`.
    #[serde(default, deserialize_with = "crate::runtime::input::not_null")]
    #[schema(nullable = false, value_type = bool)]
    pub enabled: Option<bool>,
}

impl UpdateSignupTokenRequest {
    /// A new expiry alone, read as a body's `expiresAt` is; when it does not read, why, as a
    /// body is told.
    pub fn expiring(expires_at: &str) -> Result<Self, String> {
        Ok(Self {
            expires_at: Some(Timestamp::read(expires_at)?),
            enabled: None,
        })
    }

    /// Switching the link on or off, alone.
    pub fn switching(enabled: bool) -> Self {
        Self {
            expires_at: None,
            enabled: Some(enabled),
        }
    }
}

/// Body of `POST /invite/{token}/signup` (Unleash's `createInvitedUserSchema`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInvitedUserRequest {
    /// At most 255 characters, without `@` or control characters.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 255, pattern = r"^[^@\x00-\x1f\x7f-\x9f]+$")]
    pub username: Option<String>,
    /// Lower-cased when stored.
    #[schema(format = Email, max_length = 255)]
    pub email: String,
    /// Display name, at most 255 characters without control characters.
    #[schema(min_length = 1, max_length = 255, pattern = r"^[^\x00-\x1f\x7f-\x9f]+$")]
    pub name: String,
    /// Unleash's password rules: 10 to 128 characters, lower and upper case, a digit, a symbol,
    /// no character three times in a row.
    #[schema(min_length = 10, max_length = 128)]
    pub password: String,
}
