//! Configuration: command-line options that are also environment variables, with Unleash's names.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Parser, Subcommand, ValueEnum};
use flag_admin::app::edge::types::PretrustedToken;
use flag_admin::runtime::secrets::SealingKey;
use flag_store::{ConnectionString, Database, Postgres, StoreConfig};

/// A secret from the command line or the environment; `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("Secret(<redacted>)")
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self(text.trim().to_owned()))
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Plain,
    /// One JSON object per line.
    Json,
}

/// The server's configuration.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "halyard",
    version,
    about = "Halyard: feature flags with Unleash's API"
)]
pub struct Config {
    /// Address to listen on (`-i`/`--interface`, as Unleash Edge names it); `edge` and
    /// `offline` listen on `0.0.0.0` by default, as Edge does.
    #[arg(
        long,
        short = 'i',
        alias = "interface",
        env = "HTTP_HOST",
        default_value = "127.0.0.1",
        global = true
    )]
    pub host: String,
    /// `edge` and `offline`: a path every route is served under (`/flags` serves
    /// `/flags/api/client/features`), as Unleash Edge's `--base-path`.
    #[arg(long, env = "BASE_PATH", global = true)]
    pub base_path: Option<String>,
    /// `edge` and `offline`: the origins browsers may call the frontend API and OFREP from,
    /// comma-separated (`*` for any), as Unleash Edge's `--cors-origin`; the server reads them
    /// from its settings instead (`PUT /api/admin/ui-config/cors`).
    #[arg(long, env = "CORS_ORIGIN", value_delimiter = ',', global = true)]
    pub cors_origin: Vec<String>,
    /// Port to listen on (`PORT` is read too); `edge` and `offline` listen on 3063 by default,
    /// as Edge does.
    #[arg(long, short = 'p', env = "HTTP_PORT", default_value_t = 4242, global = true)]
    pub port: u16,
    /// The database: `postgres://...` or `postgresql://...` for PostgreSQL (`sslmode` and the
    /// other libpq parameters in the query), a file path or `sqlite://<path>` for SQLite. When
    /// neither this nor `DATABASE_HOST` is set, SQLite at `./data/flags.db`.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, global = true)]
    pub database_url: Option<Secret>,
    /// PostgreSQL server, when `DATABASE_URL` is not set (Unleash's split variables).
    #[arg(long, env = "DATABASE_HOST", global = true)]
    pub database_host: Option<String>,
    /// PostgreSQL port.
    #[arg(long, env = "DATABASE_PORT", default_value_t = 5432, global = true)]
    pub database_port: u16,
    /// PostgreSQL user.
    #[arg(long, env = "DATABASE_USERNAME", default_value = "unleash", global = true)]
    pub database_username: String,
    /// PostgreSQL password.
    #[arg(long, env = "DATABASE_PASSWORD", hide_env_values = true, global = true)]
    pub database_password: Option<Secret>,
    /// PostgreSQL database name.
    #[arg(long, env = "DATABASE_NAME", default_value = "unleash", global = true)]
    pub database_name: String,
    /// TLS to PostgreSQL, as Unleash reads it: `true` (verify the server's certificate against
    /// the system's roots), `false`, or a JSON object such as `{"rejectUnauthorized":false}`
    /// (encrypt without verifying). Unset leaves libpq's default (`sslmode=prefer`) or the URL's
    /// `sslmode`.
    #[arg(long, env = "DATABASE_SSL", global = true)]
    pub database_ssl: Option<String>,
    /// Fewest idle connections kept (PostgreSQL default 0, as Unleash; SQLite 1).
    #[arg(long, env = "DATABASE_POOL_MIN", global = true)]
    pub database_pool_min: Option<u32>,
    /// Most connections (PostgreSQL default 4, as Unleash; SQLite 8).
    #[arg(long, env = "DATABASE_POOL_MAX", global = true)]
    pub database_pool_max: Option<u32>,
    /// PostgreSQL schema for the tables, created when missing.
    #[arg(long, env = "DATABASE_SCHEMA", default_value = "public", global = true)]
    pub database_schema: String,
    /// The application name PostgreSQL shows for these connections.
    #[arg(
        long,
        env = "DATABASE_APPLICATION_NAME",
        default_value = "halyard",
        global = true
    )]
    pub database_application_name: String,
    /// Public base URL, used in invite links.
    #[arg(
        long,
        env = "UNLEASH_URL",
        default_value = "http://localhost:4242",
        global = true
    )]
    pub unleash_url: String,
    /// Admin API tokens to accept, comma-separated, such as `*:*.some-secret`.
    #[arg(
        long,
        env = "INIT_ADMIN_API_TOKENS",
        value_delimiter = ',',
        hide_env_values = true,
        global = true
    )]
    pub init_admin_api_tokens: Vec<Secret>,
    /// Backend API tokens for SDKs to accept, comma-separated, such as
    /// `default:production.some-secret`.
    #[arg(
        long,
        env = "INIT_BACKEND_API_TOKENS",
        value_delimiter = ',',
        hide_env_values = true,
        global = true
    )]
    pub init_backend_api_tokens: Vec<Secret>,
    /// Client API tokens, Unleash's older name for backend tokens; read only when
    /// `INIT_BACKEND_API_TOKENS` is not set, as Unleash reads them.
    #[arg(
        long,
        env = "INIT_CLIENT_API_TOKENS",
        value_delimiter = ',',
        hide_env_values = true,
        global = true
    )]
    pub init_client_api_tokens: Vec<Secret>,
    /// Frontend API tokens to accept, comma-separated, such as `*:production.some-secret`.
    #[arg(
        long,
        env = "INIT_FRONTEND_API_TOKENS",
        value_delimiter = ',',
        hide_env_values = true,
        global = true
    )]
    pub init_frontend_api_tokens: Vec<Secret>,
    /// Log filter, such as `info` or `admin_api=debug`.
    #[arg(long, env = "LOG_LEVEL", default_value = "info", global = true)]
    pub log_level: String,
    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Plain, global = true)]
    pub log_format: LogFormat,
    /// Largest request body, in bytes.
    #[arg(long, env = "HALYARD_BODY_LIMIT", default_value_t = 1 << 20, global = true)]
    pub body_limit: usize,
    /// Most environments × features × contexts one advanced playground request may evaluate.
    #[arg(long, env = "HALYARD_PLAYGROUND_COMBINATION_LIMIT", default_value_t = flag_eval::DEFAULT_COMBINATION_LIMIT, global = true)]
    pub combination_limit: u64,
    /// Most bytes of context one advanced playground answer may repeat: environments × features
    /// × the JSON size of all context combinations.
    #[arg(long, env = "HALYARD_PLAYGROUND_CONTEXT_BYTES_LIMIT", default_value_t = flag_eval::DEFAULT_CONTEXT_BYTES_LIMIT, global = true)]
    pub context_bytes_limit: u64,
    /// Most SDK streams (`/api/client/streaming`) open at once; past it, 503 with `Retry-After`.
    #[arg(long, env = "HALYARD_STREAMING_MAX_CONNECTIONS", default_value_t = flag_admin::runtime::settings::DEFAULT_STREAMS, global = true)]
    pub streaming_max_connections: usize,
    /// Most SDK streams one API token may hold open; past it, 429 with `Retry-After`.
    #[arg(long, env = "HALYARD_STREAMING_MAX_CONNECTIONS_PER_TOKEN", default_value_t = flag_admin::runtime::settings::DEFAULT_STREAMS_PER_TOKEN, global = true)]
    pub streaming_max_connections_per_token: usize,
    /// Threads for CPU-heavy work (playground evaluation, password hashing); 0 means one per core.
    #[arg(long, env = "HALYARD_CPU_THREADS", default_value_t = 0, global = true)]
    pub cpu_threads: usize,
    /// Signups allowed per client address per minute.
    #[arg(
        long,
        env = "HALYARD_SIGNUP_RATE_PER_MINUTE",
        default_value_t = 20,
        global = true
    )]
    pub signup_rate_per_minute: u32,
    /// Login attempts allowed per client address per minute (Unleash allows 10).
    #[arg(
        long,
        env = "HALYARD_LOGIN_RATE_PER_MINUTE",
        default_value_t = 10,
        global = true
    )]
    pub login_rate_per_minute: u32,
    /// The first admin user's login name, made when the database has no user.
    #[arg(
        long,
        env = "UNLEASH_DEFAULT_ADMIN_USERNAME",
        default_value = "admin",
        global = true
    )]
    pub default_admin_username: String,
    /// The first admin user's password; without it one is generated and written to
    /// `./data/admin-password`.
    #[arg(
        long,
        env = "UNLEASH_DEFAULT_ADMIN_PASSWORD",
        global = true,
        hide_env_values = true
    )]
    pub default_admin_password: Option<Secret>,
    /// Let webhooks post to private, loopback and link-local addresses, which are refused by
    /// default so that a webhook cannot reach the server's own network.
    #[arg(
        long,
        env = "UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION",
        value_parser = clap::builder::BoolishValueParser::new(),
        global = true
    )]
    pub allow_private_webhook_urls: Option<bool>,
    /// Hosts webhooks may post to even at private addresses, comma-separated.
    #[arg(
        long,
        env = "UNLEASH_ALLOW_LIST_INTEGRATION",
        value_delimiter = ',',
        global = true
    )]
    pub webhook_allow_list: Vec<String>,
    /// Turn on single sign-on with OpenID Connect from the environment. With it set, the
    /// `OIDC_*` variables below are the settings, and the admin API cannot change them.
    #[arg(long, env = "OIDC_ENABLED", value_parser = clap::builder::BoolishValueParser::new(), global = true)]
    pub oidc_enabled: Option<bool>,
    /// The OpenID provider's issuer URL, or its `/.well-known/openid-configuration` URL.
    #[arg(long, env = "OIDC_DISCOVER_URL", global = true)]
    pub oidc_discover_url: Option<String>,
    /// The same as `OIDC_DISCOVER_URL`, which wins when both are set.
    #[arg(long, env = "OIDC_ISSUER_URL", global = true)]
    pub oidc_issuer_url: Option<String>,
    /// The client id registered at the provider.
    #[arg(long, env = "OIDC_CLIENT_ID", global = true)]
    pub oidc_client_id: Option<String>,
    /// The client secret.
    #[arg(long, env = "OIDC_CLIENT_SECRET", hide_env_values = true, global = true)]
    pub oidc_client_secret: Option<Secret>,
    /// Create users on their first login (otherwise only existing users may sign in).
    #[arg(long, env = "OIDC_AUTO_CREATE", value_parser = clap::builder::BoolishValueParser::new(), global = true)]
    pub oidc_auto_create: Option<bool>,
    /// The email domains users may be created for, comma-separated; any when not set.
    #[arg(long, env = "OIDC_AUTO_CREATE_EMAIL_DOMAINS", global = true)]
    pub oidc_auto_create_email_domains: Option<String>,
    /// The root role of created users, and of users no group maps: Viewer, Editor or Admin.
    #[arg(long, env = "OIDC_DEFAULT_ROOT_ROLE", global = true)]
    pub oidc_default_root_role: Option<String>,
    /// Set each user's root role from their groups on every login (`OIDC_GROUP_ROOT_ROLES`).
    #[arg(long, env = "OIDC_ENABLE_GROUP_SYNCING", value_parser = clap::builder::BoolishValueParser::new(), global = true)]
    pub oidc_enable_group_syncing: Option<bool>,
    /// Where the groups are in the ID token: a claim name, or names joined by dots.
    #[arg(long, env = "OIDC_GROUP_JSON_PATH", global = true)]
    pub oidc_group_json_path: Option<String>,
    /// The root role of each group, such as `flag-admins=Admin,flag-editors=Editor`.
    #[arg(long, env = "OIDC_GROUP_ROOT_ROLES", global = true)]
    pub oidc_group_root_roles: Option<String>,
    /// Ask for the `groups` scope.
    #[arg(long, env = "OIDC_ADD_GROUPS_SCOPE", value_parser = clap::builder::BoolishValueParser::new(), global = true)]
    pub oidc_add_groups_scope: Option<bool>,
    /// More scopes to ask for, space-separated, besides `openid email profile`.
    #[arg(long, env = "OIDC_EXTRA_SCOPES", global = true)]
    pub oidc_extra_scopes: Option<String>,
    /// `acr_values` to ask the provider for, space-separated.
    #[arg(long, env = "OIDC_ACR_VALUES", global = true)]
    pub oidc_acr_values: Option<String>,
    /// The ID token's signing algorithm: RS256 (the default), RS384 or RS512.
    #[arg(long, env = "OIDC_ID_TOKEN_SIGNING_ALGORITHM", global = true)]
    pub oidc_id_token_signing_algorithm: Option<String>,
    /// Sign out at the provider too, when it has an end-session endpoint.
    #[arg(long, env = "OIDC_ENABLE_SINGLE_SIGN_OUT", value_parser = clap::builder::BoolishValueParser::new(), global = true)]
    pub oidc_enable_single_sign_out: Option<bool>,
    /// Send the session cookie only over HTTPS; by default, when `UNLEASH_URL` is https.
    #[arg(long, env = "HALYARD_SECURE_COOKIES", global = true)]
    pub secure_cookies: Option<bool>,
    /// A file of flags to apply when the server starts: an export document (what
    /// `POST /api/admin/features-batch/export` answers) or a client-features document. The same
    /// file applied again changes nothing, so a container starts with its flags.
    #[arg(long, env = "IMPORT_FILE")]
    pub import_file: Option<PathBuf>,
    /// The project `IMPORT_FILE` goes into.
    #[arg(long, env = "IMPORT_PROJECT", default_value = "default")]
    pub import_project: String,
    /// The environment whose state `IMPORT_FILE` sets.
    #[arg(long, env = "IMPORT_ENVIRONMENT", default_value = "development")]
    pub import_environment: String,
    /// Keep API token secrets and the OpenID client secret readable by admins, sealed under this
    /// key (32 bytes as 64 hex digits; `openssl rand -hex 32`), for installations managed by
    /// Terraform. The key is never stored; tokens made before it stay masked.
    #[arg(long, env = "HALYARD_SECRETS_KEY", hide_env_values = true, global = true)]
    pub secrets_key: Option<Secret>,
    /// The same key, read from a file (a mounted secret).
    #[arg(long, env = "HALYARD_SECRETS_KEY_FILE", global = true)]
    pub secrets_key_file: Option<PathBuf>,
    /// What to do; serving is the default.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Serve the API (the default).
    Serve,
    /// Copy every table of an SQLite database into a new, empty one, usually PostgreSQL: ids,
    /// API token verifiers, sessions and the audit log included. Row counts are checked before
    /// the copy commits.
    CopyDatabase {
        /// The SQLite database to copy: a file path or `sqlite://` URL.
        #[arg(long)]
        from: String,
        /// The database to copy into: a `postgres://` URL (`DATABASE_SCHEMA` applies) or an
        /// SQLite path.
        #[arg(long)]
        to: Secret,
    },
    /// Serve SDKs from an upstream (Unleash 5 to 8, or Halyard, or another edge) instead of a
    /// database: Unleash Edge's `edge` mode, with its options.
    Edge(EdgeArgs),
    /// Serve SDKs from a file of flags, with no upstream: Unleash Edge's `offline` mode.
    Offline(OfflineArgs),
    /// Exit 0 when the edge at `--edge-url` answers its health check, else 1 (Unleash Edge's
    /// `health`, for container health checks).
    Health {
        /// The edge's base URL.
        #[arg(short = 'e', long, env = "EDGE_URL", default_value = "http://localhost:3063")]
        edge_url: String,
    },
    /// Exit 0 when the edge at `--edge-url` is ready (flags for every scope it follows), else 1
    /// (Unleash Edge's `ready`).
    Ready {
        /// The edge's base URL.
        #[arg(short = 'e', long, env = "EDGE_URL", default_value = "http://localhost:3063")]
        edge_url: String,
    },
    /// Move a whole Unleash installation (5 to 8, or another Halyard) into this server's
    /// database through the source's admin API, in one transaction: projects, environments,
    /// flags, segments, context fields, strategy and tag types, integrations, API tokens (with
    /// their secrets, so SDKs keep working), users and the audit log. The source is only read.
    Migrate(MigrateArgs),
    /// Seal every stored secret under a new key instead of the current one
    /// (`HALYARD_SECRETS_KEY` or `HALYARD_SECRETS_KEY_FILE`), in one transaction; then start
    /// the server with the new key.
    RotateSecretsKey {
        /// The new key, 64 hex digits.
        #[arg(long, env = "HALYARD_NEW_SECRETS_KEY", hide_env_values = true)]
        new_key: Option<Secret>,
        /// The new key, read from a file.
        #[arg(long, env = "HALYARD_NEW_SECRETS_KEY_FILE")]
        new_key_file: Option<PathBuf>,
    },
    /// Load a client-features document (what `GET /api/client/features` returns) into a project
    /// and environment.
    Import {
        /// The JSON file.
        file: PathBuf,
        /// Project to import into.
        #[arg(long, default_value = "default")]
        project: String,
        /// Environment whose state the document describes.
        #[arg(long, default_value = "development")]
        environment: String,
    },
}

/// A key from its variable or its file (`<variable>_FILE`); both at once is refused.
pub fn sealing_key(
    variable: &str,
    key: Option<&Secret>,
    file: Option<&std::path::Path>,
) -> anyhow::Result<Option<SealingKey>> {
    use anyhow::Context as _;
    let text = match (key, file) {
        (Some(_), Some(_)) => anyhow::bail!("set {variable} or {variable}_FILE, not both"),
        (Some(key), None) => key.0.clone(),
        (None, Some(path)) => std::fs::read_to_string(path)
            .with_context(|| format!("{variable}_FILE: reading {}", path.display()))?,
        (None, None) => return Ok(None),
    };
    SealingKey::from_hex(&text)
        .map(Some)
        .with_context(|| variable.to_owned())
}

/// `halyard edge`: Unleash Edge's `edge` options, with its names and variables.
#[derive(Debug, Clone, clap::Args)]
pub struct EdgeArgs {
    /// The upstream's base URL (Unleash, Halyard or another edge), without `/api`.
    #[arg(short = 'u', long, env = "UPSTREAM_URL")]
    pub upstream_url: String,
    /// SDK tokens to validate and follow at start, comma-separated.
    #[arg(
        short = 't',
        long,
        env = "TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub tokens: Vec<Secret>,
    /// Frontend tokens trusted without validation, comma-separated, as `<token>@<environment>`.
    #[arg(
        long,
        env = "PRETRUSTED_TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub pretrusted_tokens: Vec<Secret>,
    /// Where to keep the last flags and tokens, to start from when the upstream is away.
    #[arg(short = 'b', long, env = "BACKUP_FOLDER")]
    pub backup_folder: Option<PathBuf>,
    /// How often to send SDK usage upstream, in seconds.
    #[arg(short = 'm', long, env = "METRICS_INTERVAL_SECONDS", default_value_t = 60)]
    pub metrics_interval_seconds: u64,
    /// How often to poll an upstream that has no stream, in seconds.
    #[arg(
        short = 'f',
        long,
        env = "FEATURES_REFRESH_INTERVAL_SECONDS",
        default_value_t = 15
    )]
    pub features_refresh_interval_seconds: u64,
    /// How often to validate every token again, in seconds.
    #[arg(long, env = "TOKEN_REVALIDATION_INTERVAL_SECONDS", default_value_t = 3600)]
    pub token_revalidation_interval_seconds: u64,
    /// Headers sent with every upstream request, `Name: value`, comma-separated or repeated.
    #[arg(short = 'H', long, env = "CUSTOM_CLIENT_HEADERS", value_delimiter = ',')]
    pub custom_client_headers: Vec<String>,
    /// The edge's application name upstream.
    #[arg(short = 'a', long, env = "APP_NAME", default_value = "halyard-edge")]
    pub app_name: String,
    /// Accepted for Edge's command lines: the edge always follows an upstream's stream when it
    /// has one, and polls when it has none.
    #[arg(long, env = "STREAMING", hide = true)]
    pub streaming: bool,
    /// Accepted for Edge's command lines: the edge serves the delta API whatever the upstream.
    #[arg(long, env = "DELTA", hide = true)]
    pub delta: bool,
}

impl EdgeArgs {
    /// The headers `--custom-client-headers` names, each `Name: value`; one without a colon is
    /// refused.
    ///
    /// A header may carry a secret, so the message names the entry by its place, not its text.
    pub fn headers(&self) -> anyhow::Result<Vec<(String, String)>> {
        self.custom_client_headers
            .iter()
            .filter(|header| !header.trim().is_empty())
            .enumerate()
            .map(|(index, header)| {
                let (name, value) = header.split_once(':').ok_or_else(|| {
                    anyhow::anyhow!(
                        "--custom-client-headers: entry {} is not `Name: value`",
                        index + 1
                    )
                })?;
                Ok((name.trim().to_owned(), value.trim().to_owned()))
            })
            .collect()
    }

    /// The frontend tokens `--pretrusted-tokens` trusts, each `<token>@<environment>`; one
    /// otherwise written is refused, named by its place, never by its secret.
    pub fn pretrusted(&self) -> anyhow::Result<Vec<PretrustedToken>> {
        self.pretrusted_tokens
            .iter()
            .filter(|entry| !entry.0.is_empty())
            .enumerate()
            .map(|(index, entry)| {
                entry.0.parse().map_err(|error: String| {
                    anyhow::anyhow!("--pretrusted-tokens: entry {}: {error}", index + 1)
                })
            })
            .collect()
    }
}

/// `halyard migrate`: where to read from and how to write.
#[derive(Debug, Clone, clap::Args)]
pub struct MigrateArgs {
    /// The source's base URL, without `/api`: `https://unleash.example.com`.
    #[arg(long, env = "MIGRATE_FROM")]
    pub from: String,
    /// An admin API token of the source, or an admin user's personal access token.
    #[arg(long, env = "MIGRATE_TOKEN", hide_env_values = true)]
    pub token: Secret,
    /// The source's own PostgreSQL database (`postgres://...`), read-only, for what its API never
    /// shows: users' password hashes, integrations' secrets, API tokens' true types and the whole
    /// audit log. Unleash 6 to 8.
    #[arg(long, env = "MIGRATE_FROM_DATABASE", hide_env_values = true)]
    pub from_database: Option<Secret>,
    /// Print what would be created and every conflict, per kind; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Write into a database that already holds data: identical objects are skipped, changed
    /// ones updated, each reported.
    #[arg(long)]
    pub merge: bool,
    /// Carry the audit log's events from this day on (`YYYY-MM-DD`, UTC); every event when absent.
    #[arg(long)]
    pub events_since: Option<chrono::NaiveDate>,
    /// How long each request to the source may take, in seconds.
    #[arg(long, default_value_t = 120)]
    pub timeout_seconds: u64,
}

/// `halyard offline`: Unleash Edge's `offline` options.
#[derive(Debug, Clone, clap::Args)]
pub struct OfflineArgs {
    /// The flags: a client-features document.
    #[arg(short = 'b', long, env = "BOOTSTRAP_FILE")]
    pub bootstrap_file: PathBuf,
    /// Client tokens to accept, comma-separated.
    #[arg(
        short = 'c',
        long,
        env = "CLIENT_TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub client_tokens: Vec<Secret>,
    /// Frontend tokens to accept, comma-separated.
    #[arg(
        short = 'f',
        long,
        env = "FRONTEND_TOKENS",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub frontend_tokens: Vec<Secret>,
    /// Read the file again every so many seconds; 0 never does.
    #[arg(short = 'r', long, env = "RELOAD_INTERVAL", default_value_t = 0)]
    pub reload_interval: u64,
}

impl Config {
    /// The API tokens to store at start-up, by type: `INIT_ADMIN_API_TOKENS`,
    /// `INIT_BACKEND_API_TOKENS` (else `INIT_CLIENT_API_TOKENS`) and `INIT_FRONTEND_API_TOKENS`.
    pub fn initial_tokens(&self) -> [(flag_admin::runtime::domain::TokenType, &[Secret]); 3] {
        use flag_admin::runtime::domain::TokenType;
        let backend = if self.init_backend_api_tokens.is_empty() {
            &self.init_client_api_tokens
        } else {
            &self.init_backend_api_tokens
        };
        [
            (TokenType::Admin, &self.init_admin_api_tokens),
            (TokenType::Backend, backend),
            (TokenType::Frontend, &self.init_frontend_api_tokens),
        ]
    }

    /// Parses the command line and environment; `PORT` applies when `HTTP_PORT` is not set.
    pub fn load() -> Self {
        use clap::{CommandFactory as _, FromArgMatches as _, parser::ValueSource};
        let matches = Self::command().get_matches();
        let mut config = Self::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
        // Where the edge listens unless told: Unleash Edge's port and interface.
        if matches!(config.command, Some(Command::Edge(_) | Command::Offline(_))) {
            if matches.value_source("port") == Some(ValueSource::DefaultValue)
                && std::env::var_os("PORT").is_none()
            {
                config.port = 3063;
            }
            if matches.value_source("host") == Some(ValueSource::DefaultValue) {
                config.host = std::env::var("INTERFACE").unwrap_or_else(|_| "0.0.0.0".into());
            }
        }
        if std::env::var_os("HTTP_PORT").is_none()
            && let Some(port) = std::env::var("PORT").ok().and_then(|port| port.parse().ok())
        {
            config.port = port;
        }
        config
    }

    /// The operator's key for the secrets kept readable, from `HALYARD_SECRETS_KEY` or
    /// `HALYARD_SECRETS_KEY_FILE`; `None` when neither is set. A missing file or a malformed key
    /// is an error, so the server never starts without the key it was given.
    pub fn sealing_key(&self) -> anyhow::Result<Option<SealingKey>> {
        sealing_key(
            "HALYARD_SECRETS_KEY",
            self.secrets_key.as_ref(),
            self.secrets_key_file.as_deref(),
        )
    }

    /// What the handlers read.
    pub fn settings(&self) -> flag_admin::Settings {
        flag_admin::Settings {
            unleash_url: self.unleash_url.clone(),
            body_limit: self.body_limit,
            combination_limit: self.combination_limit,
            context_bytes_limit: self.context_bytes_limit,
            signups_per_minute: self.signup_rate_per_minute,
            logins_per_minute: self.login_rate_per_minute,
            secure_cookies: self.secure_cookies.unwrap_or_else(|| {
                self.unleash_url
                    .get(..8)
                    .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
            }),
            cpu_threads: self.cpu_threads,
            streams: self.streaming_max_connections,
            streams_per_token: self.streaming_max_connections_per_token,
            webhook_urls: flag_admin::runtime::url_policy::UrlPolicy {
                allow_private: self.allow_private_webhook_urls.unwrap_or(false),
                allow_list: self
                    .webhook_allow_list
                    .iter()
                    .map(|host| host.trim().to_owned())
                    .filter(|host| !host.is_empty())
                    .collect(),
            },
            oidc: self.oidc(),
            // Reading the key can fail: `main` sets it from `sealing_key`.
            sealing: None,
            past_part: flag_admin::runtime::settings::DEFAULT_PAST_PART,
            clock: flag_admin::runtime::clock::Clock::system(),
        }
    }

    /// Single sign-on as the environment configures it: `None` unless `OIDC_ENABLED` is set.
    pub fn oidc(&self) -> Option<flag_admin::identity::oidc::types::OidcSettings> {
        let enabled = self.oidc_enabled?;
        let group_root_roles = self.oidc_group_root_roles.as_deref().map(|pairs| {
            pairs
                .split(',')
                .filter(|pair| !pair.trim().is_empty())
                // An entry without `=` names no role, which the settings' check refuses.
                .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
                .map(|(group, role)| (group.trim().to_owned(), role.trim().to_owned()))
                .collect()
        });
        Some(flag_admin::identity::oidc::types::OidcSettings {
            enabled,
            discover_url: self
                .oidc_discover_url
                .clone()
                .or_else(|| self.oidc_issuer_url.clone()),
            client_id: self.oidc_client_id.clone(),
            secret: self.oidc_client_secret.as_ref().map(|secret| secret.0.clone()),
            enable_single_sign_out: self.oidc_enable_single_sign_out.unwrap_or(false),
            enable_pkce: true,
            acr_values: self.oidc_acr_values.clone(),
            extra_scopes: self.oidc_extra_scopes.clone(),
            enable_group_syncing: self.oidc_enable_group_syncing.unwrap_or(false),
            group_json_path: self.oidc_group_json_path.clone(),
            add_groups_scope: self.oidc_add_groups_scope.unwrap_or(false),
            auto_create: self.oidc_auto_create.unwrap_or(false),
            email_domains: self.oidc_auto_create_email_domains.clone(),
            default_root_role: self.oidc_default_root_role.clone(),
            default_root_role_id: None,
            id_token_signing_algorithm: self.oidc_id_token_signing_algorithm.clone(),
            group_root_roles,
        })
    }

    /// The first admin user, made when the database has no user.
    pub fn first_admin(&self) -> flag_admin::app::seeding::FirstAdmin {
        flag_admin::app::seeding::FirstAdmin {
            username: self.default_admin_username.clone(),
            password: self
                .default_admin_password
                .as_ref()
                .map(|secret| secret.0.clone()),
        }
    }

    /// The database and its pool, from `DATABASE_URL` or, without it, Unleash's split
    /// `DATABASE_*` variables; SQLite at `./data/flags.db` when neither names a database.
    pub fn store_config(&self) -> Result<StoreConfig, DatabaseConfigError> {
        let database = match (&self.database_url, &self.database_host) {
            (Some(Secret(url)), _) => self.with_postgres_settings(Database::from_url(url)?, Some(url))?,
            (None, Some(host)) => {
                let mut connection = vec![
                    format!("host={}", libpq_value(host)),
                    format!("port={}", self.database_port),
                    format!("user={}", libpq_value(&self.database_username)),
                    format!("dbname={}", libpq_value(&self.database_name)),
                ];
                if let Some(Secret(password)) = &self.database_password {
                    connection.push(format!("password={}", libpq_value(password)));
                }
                let text = connection.join(" ");
                self.with_postgres_settings(
                    Database::Postgres(Postgres {
                        connection: ConnectionString::new(text),
                        schema: None,
                        application_name: String::new(),
                    }),
                    None,
                )?
            }
            (None, None) => Database::Sqlite(PathBuf::from("./data/flags.db")),
        };
        let mut config = StoreConfig::new(database);
        if config.database.backend() == flag_store::Backend::Postgres {
            config.pool_size = 4;
            config.min_idle = Some(0);
        }
        if let Some(max) = self.database_pool_max {
            config.pool_size = max.max(1);
        }
        if let Some(min) = self.database_pool_min {
            config.min_idle = Some(min);
        }
        Ok(config)
    }

    /// Applies `DATABASE_SCHEMA`, `DATABASE_APPLICATION_NAME` and `DATABASE_SSL` to a PostgreSQL
    /// database (`url` is the `DATABASE_URL` it came from, whose own `sslmode` wins).
    fn with_postgres_settings(
        &self,
        database: Database,
        url: Option<&str>,
    ) -> Result<Database, DatabaseConfigError> {
        let Database::Postgres(mut postgres) = database else {
            return Ok(database);
        };
        if self.database_schema != "public" {
            postgres.schema = Some(self.database_schema.clone());
        }
        postgres
            .application_name
            .clone_from(&self.database_application_name);
        let url_sets_ssl = url.is_some_and(|url| url.contains("sslmode="));
        if let Some(ssl) = self
            .database_ssl
            .as_deref()
            .map(str::trim)
            .filter(|ssl| !ssl.is_empty())
            && !url_sets_ssl
        {
            let parameters = ssl_parameters(ssl)?;
            let text = postgres.connection.expose();
            let joined = match url {
                Some(_) => {
                    let separator = if text.contains('?') { '&' } else { '?' };
                    format!("{text}{separator}{}", parameters.replace(' ', "&"))
                }
                None => format!("{text} {parameters}"),
            };
            postgres.connection = ConnectionString::new(joined);
        }
        Ok(Database::Postgres(postgres))
    }
}

/// Why the database settings were refused at start-up.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseConfigError {
    /// `DATABASE_URL` has a scheme that names neither backend.
    #[error(transparent)]
    Unsupported(#[from] flag_store::UnsupportedDatabase),
    /// `DATABASE_SSL` is not `true`, `false` or a JSON object of the supported form.
    #[error(
        "DATABASE_SSL={0} is not understood: use true, false, or {{\"rejectUnauthorized\":false}}; \
         for certificate files, put sslrootcert, sslcert and sslkey in DATABASE_URL"
    )]
    Ssl(String),
}

/// libpq parameters for `DATABASE_SSL`, read as Unleash reads it (`JSON.parse`): `true` verifies
/// the server against the system's certificate roots, `false` uses no TLS, and an object
/// encrypts, verifying unless `rejectUnauthorized` is `false`.
fn ssl_parameters(ssl: &str) -> Result<&'static str, DatabaseConfigError> {
    const VERIFY: &str = "sslmode=verify-full sslrootcert=system";
    match serde_json::from_str::<serde_json::Value>(ssl) {
        Ok(serde_json::Value::Bool(true)) => Ok(VERIFY),
        Ok(serde_json::Value::Bool(false)) => Ok("sslmode=disable"),
        Ok(serde_json::Value::Object(options)) => {
            if options.keys().any(|key| key != "rejectUnauthorized") {
                return Err(DatabaseConfigError::Ssl(ssl.to_owned()));
            }
            match options.get("rejectUnauthorized") {
                Some(serde_json::Value::Bool(false)) => Ok("sslmode=require"),
                None | Some(serde_json::Value::Bool(true)) => Ok(VERIFY),
                Some(_) => Err(DatabaseConfigError::Ssl(ssl.to_owned())),
            }
        }
        _ => Err(DatabaseConfigError::Ssl(ssl.to_owned())),
    }
}

/// A value for libpq's `key=value` form: single-quoted, with quotes and backslashes escaped.
fn libpq_value(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_urls_become_paths() {
        let config = Config::parse_from([
            "halyard",
            "--init-admin-api-tokens",
            "*:*.topsecret,*:production.other",
            "--database-url",
            "sqlite:///tmp/x.db",
        ]);
        assert_eq!(config.init_admin_api_tokens.len(), 2);
        assert!(!format!("{config:?}").contains("topsecret"));
        assert_eq!(config.initial_tokens()[1].1.len(), 0);
        assert_eq!(
            config.store_config().map(|store| store.database).ok(),
            Some(Database::Sqlite(PathBuf::from("/tmp/x.db")))
        );
    }

    fn database(args: &[&str]) -> Result<StoreConfig, DatabaseConfigError> {
        Config::parse_from(std::iter::once("halyard").chain(args.iter().copied())).store_config()
    }

    fn postgres(config: &StoreConfig) -> Option<&Postgres> {
        match &config.database {
            Database::Postgres(postgres) => Some(postgres),
            Database::Sqlite(_) => None,
        }
    }

    #[test]
    fn the_database_comes_from_the_url_or_unleashs_split_variables() -> Result<(), DatabaseConfigError> {
        let default = database(&[])?;
        assert_eq!(
            default.database,
            Database::Sqlite(PathBuf::from("./data/flags.db"))
        );
        assert_eq!(default.pool_size, 8);

        let url = database(&[
            "--database-url",
            "postgres://halyard:s3cret@db/unleash",
            "--database-pool-max",
            "12",
        ])?;
        let pg = postgres(&url).ok_or(DatabaseConfigError::Ssl("not postgres".into()))?;
        assert_eq!(pg.connection.expose(), "postgres://halyard:s3cret@db/unleash");
        assert_eq!(
            (pg.schema.as_deref(), pg.application_name.as_str()),
            (None, "halyard")
        );
        assert_eq!((url.pool_size, url.min_idle), (12, Some(0)));
        assert!(!format!("{url:?}").contains("s3cret"), "{url:?}");
        let config = Config::parse_from([
            "halyard",
            "--database-url",
            "postgres://halyard:s3cret@db/unleash",
        ]);
        assert!(!format!("{config:?}").contains("s3cret"), "{config:?}");

        let split = database(&[
            "--database-host",
            "db.internal",
            "--database-username",
            "flag's",
            "--database-password",
            r"pa ss\word",
            "--database-name",
            "flags",
            "--database-schema",
            "halyard",
            "--database-ssl",
            r#"{"rejectUnauthorized":false}"#,
            "--database-pool-min",
            "2",
        ])?;
        let pg = postgres(&split).ok_or(DatabaseConfigError::Ssl("not postgres".into()))?;
        assert_eq!(
            pg.connection.expose(),
            r"host='db.internal' port=5432 user='flag\'s' dbname='flags' password='pa ss\\word' sslmode=require"
        );
        assert!(!pg.connection.to_string().contains("pa ss"), "{}", pg.connection);
        assert_eq!(pg.schema.as_deref(), Some("halyard"));
        assert_eq!((split.pool_size, split.min_idle), (4, Some(2)));

        let verified = database(&[
            "--database-url",
            "postgres://db/unleash",
            "--database-ssl",
            "true",
        ])?;
        assert_eq!(
            postgres(&verified).map(|pg| pg.connection.expose()),
            Some("postgres://db/unleash?sslmode=verify-full&sslrootcert=system")
        );
        let own = database(&[
            "--database-url",
            "postgres://db/unleash?sslmode=require",
            "--database-ssl",
            "true",
        ])?;
        assert_eq!(
            postgres(&own).map(|pg| pg.connection.expose()),
            Some("postgres://db/unleash?sslmode=require")
        );
        Ok(())
    }

    #[test]
    fn unknown_schemes_and_ssl_forms_are_startup_errors() {
        let error = database(&["--database-url", "mysql://root@db/unleash"])
            .err()
            .map(|error| error.to_string());
        assert!(
            error
                .as_deref()
                .is_some_and(|error| error.contains("postgres://") && error.contains("sqlite://")),
            "{error:?}"
        );
        for ssl in [
            "yes",
            r#"{"ca":"-----BEGIN CERTIFICATE-----"}"#,
            r#"{"rejectUnauthorized":"no"}"#,
        ] {
            let error = database(&["--database-host", "db", "--database-ssl", ssl]).err();
            assert!(
                matches!(error, Some(DatabaseConfigError::Ssl(_))),
                "{ssl}: {error:?}"
            );
        }
    }

    #[test]
    fn client_tokens_are_backend_tokens_when_no_backend_tokens_are_set() {
        let parse =
            |args: &[&str]| Config::parse_from(std::iter::once("halyard").chain(args.iter().copied()));
        let older = parse(&["--init-client-api-tokens", "*:development.a,*:production.b"]);
        let [_, (kind, tokens), _] = older.initial_tokens();
        assert_eq!(
            (kind, tokens.len()),
            (flag_admin::runtime::domain::TokenType::Backend, 2)
        );
        let both = parse(&[
            "--init-client-api-tokens",
            "*:development.a",
            "--init-backend-api-tokens",
            "*:development.c",
        ]);
        let [_, (_, tokens), _] = both.initial_tokens();
        assert_eq!(
            tokens
                .iter()
                .map(|Secret(text)| text.as_str())
                .collect::<Vec<_>>(),
            ["*:development.c"]
        );
    }

    #[test]
    fn session_cookies_are_secure_behind_https_or_when_asked() {
        let secure = |args: &[&str]| {
            Config::parse_from(std::iter::once("halyard").chain(args.iter().copied()))
                .settings()
                .secure_cookies
        };
        assert!(!secure(&[]));
        assert!(secure(&["--unleash-url", "HTTPS://flags.example.com"]));
        assert!(!secure(&[
            "--unleash-url",
            "https://flags.example.com",
            "--secure-cookies",
            "false"
        ]));
        assert!(secure(&[
            "--unleash-url",
            "http://localhost:4242",
            "--secure-cookies",
            "true"
        ]));
    }
}
