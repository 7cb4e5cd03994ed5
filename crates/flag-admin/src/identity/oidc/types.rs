//! Single sign-on settings, as Unleash's admin UI reads and writes them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// OpenID Connect settings: `GET` and `POST /api/admin/auth/oidc/settings`, stored as Unleash
/// stores them (the setting `unleash.enterprise.auth.oidc`). Fields left out take their
/// defaults; fields Unleash's UI adds that are not listed here (such as `unleashHostname`) are
/// ignored. On reads the secret is `*****`; sending `*****` back keeps the stored one.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OidcSettings {
    /// Whether "Sign in with OpenID Connect" is offered.
    #[serde(default)]
    pub enabled: bool,
    /// The provider's issuer URL, or its `/.well-known/openid-configuration` URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "https://login.example.com/realms/acme")]
    pub discover_url: Option<String>,
    /// The client id registered at the provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The client secret; `*****` on reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Whether signing out also signs out at the provider, when it has an end-session endpoint.
    #[serde(default)]
    pub enable_single_sign_out: bool,
    /// Accepted for Unleash's UI; PKCE is always used.
    #[serde(default)]
    pub enable_pkce: bool,
    /// Space-separated `acr_values` to ask the provider for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acr_values: Option<String>,
    /// Space-separated scopes asked for besides `openid email profile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_scopes: Option<String>,
    /// Whether each login sets the user's root role from the groups claim (see
    /// `groupRootRoles`).
    #[serde(default)]
    pub enable_group_syncing: bool,
    /// Where the groups are in the ID token's claims: a name, or names joined by dots
    /// (`realm_access.roles`). `groups` when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_json_path: Option<String>,
    /// Whether the `groups` scope is asked for.
    #[serde(default)]
    pub add_groups_scope: bool,
    /// Whether a user who signs in for the first time is created; otherwise only users who
    /// already exist (matched by email, in any letter case) may sign in.
    #[serde(default)]
    pub auto_create: bool,
    /// Comma-separated email domains users may be created for; any when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email_domains: Option<String>,
    /// The root role of created users, and of users no group maps: `Viewer` (the default),
    /// `Editor` or `Admin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_root_role: Option<String>,
    /// The same as a role id (1 Admin, 2 Editor, 3 Viewer); wins over `defaultRootRole`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_root_role_id: Option<i32>,
    /// The ID token's signing algorithm: `RS256` (the default), `RS384` or `RS512`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_signing_algorithm: Option<String>,
    /// With group syncing: the root role each group gives (`Admin`, `Editor` or `Viewer`). Of
    /// several groups, the strongest role wins; with none, the default root role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_root_roles: Option<BTreeMap<String, String>>,
}

/// Everything but the secret.
impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("OidcSettings")
            .field("enabled", &self.enabled)
            .field("discover_url", &self.discover_url)
            .field("client_id", &self.client_id)
            .field("secret", &self.secret.as_ref().map(|_| "<redacted>"))
            .field("auto_create", &self.auto_create)
            .field("enable_group_syncing", &self.enable_group_syncing)
            .finish_non_exhaustive()
    }
}

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
