//! The settings operations read, built once by the server's configuration.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Settings the operations read.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Public base URL for invite links, without a trailing slash.
    pub unleash_url: String,
    /// Largest request body, in bytes.
    pub body_limit: usize,
    /// The advanced playground's combination limit.
    pub combination_limit: u64,
    /// The advanced playground's limit on the context its answer repeats, in bytes.
    pub context_bytes_limit: u64,
    /// Signups allowed per client address per minute.
    pub signups_per_minute: u32,
    /// Login attempts allowed per client address per minute.
    pub logins_per_minute: u32,
    /// Whether the session cookie is sent only over HTTPS.
    pub secure_cookies: bool,
    /// Threads of the CPU pool; 0 means one per core.
    pub cpu_threads: usize,
    /// Which addresses webhooks may post to.
    pub webhook_urls: crate::runtime::url_policy::UrlPolicy,
    /// Single sign-on as the environment configures it; when set, the stored settings are not
    /// used and cannot be changed.
    pub oidc: Option<OidcSettings>,
    /// Most streams open at once on this server.
    pub streams: usize,
    /// Most streams one API token may hold open on this server.
    pub streams_per_token: usize,
    /// The operator's key for the secrets kept readable (`HALYARD_SECRETS_KEY`): with it, new
    /// API token secrets and the OpenID client secret are stored sealed under it, and admins
    /// read them back as Unleash answers them. Without it, only verifiers are kept.
    pub sealing: Option<crate::runtime::secrets::SealingKey>,
    /// How many flags of an environment read at a past moment are compiled together, as one
    /// part of the deprecated playground's answer ([`DEFAULT_PAST_PART`] unless set).
    pub past_part: usize,
    /// The clock every operation reads: the system's, unless a test sets one.
    pub clock: crate::runtime::clock::Clock,
}

/// The largest request body when none is configured: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// How many flags of a past environment are compiled together when nothing else is set: at
/// 10,000 flags, small enough that the deprecated playground's answer begins after a tenth of
/// them are compiled, large enough that each part's cost of its own is nothing.
pub const DEFAULT_PAST_PART: usize = 1_000;

/// Most streams open at once when none is configured.
pub const DEFAULT_STREAMS: usize = 16_384;

/// Most streams one token may hold open when none is configured.
pub const DEFAULT_STREAMS_PER_TOKEN: usize = 10_000;

impl Default for Settings {
    fn default() -> Self {
        Self {
            unleash_url: "http://localhost:4242".into(),
            body_limit: DEFAULT_BODY_LIMIT,
            combination_limit: flag_eval::DEFAULT_COMBINATION_LIMIT,
            context_bytes_limit: flag_eval::DEFAULT_CONTEXT_BYTES_LIMIT,
            signups_per_minute: 20,
            logins_per_minute: 10,
            secure_cookies: false,
            cpu_threads: 0,
            webhook_urls: crate::runtime::url_policy::UrlPolicy::default(),
            oidc: None,
            streams: DEFAULT_STREAMS,
            streams_per_token: DEFAULT_STREAMS_PER_TOKEN,
            sealing: None,
            past_part: DEFAULT_PAST_PART,
            clock: crate::runtime::clock::Clock::system(),
        }
    }
}

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
