//! Single sign-on settings, as Unleash's admin UI reads and writes them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub use crate::runtime::settings::OidcSettings;

/// Password login: `GET` and `POST /api/admin/auth/simple/settings`, as Unleash stores it (the
/// setting `unleash.auth.simple`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PasswordAuthSettings {
    /// Whether logging in with a password is switched off. It can be only while single sign-on
    /// is on; API tokens keep working.
    #[serde(default)]
    pub disabled: bool,
}
