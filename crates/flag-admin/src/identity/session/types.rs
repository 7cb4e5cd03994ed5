//! The body of `POST /auth/simple/login`; the answer is a [`UserOut`](crate::identity::users::types::UserOut).

use serde::Deserialize;
use utoipa::ToSchema;

/// Unleash's `loginSchema`, which refuses other fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoginRequest {
    /// An email or a username; an email is matched first.
    pub username: String,
    /// The password.
    pub password: String,
}
