//! The settings operations read, built once by the server's configuration.

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
    pub webhook_urls: crate::addons::UrlPolicy,
    /// Single sign-on as the environment configures it; when set, the stored settings are not
    /// used and cannot be changed.
    pub oidc: Option<crate::dto::sso::OidcSettings>,
    /// Most streams open at once on this server.
    pub streams: usize,
    /// Most streams one API token may hold open on this server.
    pub streams_per_token: usize,
}

/// The largest request body when none is configured: 1 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

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
            webhook_urls: crate::addons::UrlPolicy::default(),
            oidc: None,
            streams: DEFAULT_STREAMS,
            streams_per_token: DEFAULT_STREAMS_PER_TOKEN,
        }
    }
}
