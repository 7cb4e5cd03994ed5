//! API tokens and public signup tokens.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::{api_tokens, public_signup_tokens};

/// A public signup token.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = public_signup_tokens, check_for_backend(crate::connection::MultiBackend))]
pub struct SignupTokenRow {
    /// The secret, part of the invite link.
    pub secret: String,
    /// Display name.
    pub name: String,
    /// The invite link.
    pub url: Option<String>,
    /// Role given to users who sign up.
    pub role_id: i32,
    /// Whether it can be used (an expired token cannot, whatever this says).
    pub enabled: bool,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Creator.
    pub created_by: Option<String>,
}

/// An API token: only a SHA-256 verifier of its secret is stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_tokens, check_for_backend(crate::connection::MultiBackend))]
pub struct ApiTokenRow {
    /// Token id.
    pub id: i32,
    /// Display name.
    pub token_name: String,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// `admin`, `client`, `backend`, `frontend`.
    pub token_type: String,
    /// Environment, or `*`.
    pub environment: String,
    /// Projects, JSON list; `["*"]` for all.
    pub projects: String,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last use, UTC.
    pub seen_at: Option<NaiveDateTime>,
}

impl ApiTokenRow {
    /// The projects the token may read, decoded from `projects`; `["*"]` means all.
    pub fn projects(&self) -> Result<Vec<String>, StoreError> {
        from_json("api token", self.id, "projects", &self.projects)
    }
}

/// A new API token.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = api_tokens)]
pub struct NewApiToken {
    /// Display name.
    pub token_name: String,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// `admin`, `client`, `backend`, `frontend`.
    pub token_type: String,
    /// Environment, or `*`.
    pub environment: String,
    /// Projects, JSON list.
    pub projects: String,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl NewApiToken {
    /// A token of `token_type` (`admin`, `client`, `backend`, `frontend`) for `environment` (or
    /// `*`) and `projects` (`["*"]` for all), stored by the verifier of its secret; the store
    /// writes the projects as JSON and keeps times to the microsecond.
    pub fn new(
        token_name: String,
        secret_hash: String,
        token_type: &str,
        environment: String,
        projects: &[String],
        expires_at: Option<NaiveDateTime>,
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            token_name,
            secret_hash,
            token_type: token_type.to_owned(),
            environment,
            projects: crate::queries::to_json("api_tokens.projects", projects)?,
            expires_at: expires_at.map(crate::time::stored),
            created_at: crate::time::stored(at),
        })
    }
}
