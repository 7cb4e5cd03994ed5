//! Configuration: command-line options that are also environment variables, with Unleash's names.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Parser, Subcommand, ValueEnum};

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
#[command(name = "admin-api", version, about = "Feature flags with Unleash's API")]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "HTTP_HOST", default_value = "127.0.0.1", global = true)]
    pub host: String,
    /// Port to listen on (`PORT` is read too).
    #[arg(long, env = "HTTP_PORT", default_value_t = 4242, global = true)]
    pub port: u16,
    /// SQLite database: a file path or a `sqlite://` URL.
    #[arg(long, env = "DATABASE_URL", default_value = "./data/flags.db", global = true)]
    pub database_url: String,
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
    #[arg(long, env = "BODY_LIMIT", default_value_t = 1 << 20, global = true)]
    pub body_limit: usize,
    /// Most environments × features × contexts one advanced playground request may evaluate.
    #[arg(long, env = "PLAYGROUND_COMBINATION_LIMIT", default_value_t = flag_eval::DEFAULT_COMBINATION_LIMIT, global = true)]
    pub combination_limit: u64,
    /// Most bytes of context one advanced playground answer may repeat: environments × features
    /// × the JSON size of all context combinations.
    #[arg(long, env = "PLAYGROUND_CONTEXT_BYTES_LIMIT", default_value_t = flag_eval::DEFAULT_CONTEXT_BYTES_LIMIT, global = true)]
    pub context_bytes_limit: u64,
    /// Threads for CPU-heavy work (playground evaluation, password hashing); 0 means one per core.
    #[arg(long, env = "CPU_THREADS", default_value_t = 0, global = true)]
    pub cpu_threads: usize,
    /// Signups allowed per client address per minute.
    #[arg(long, env = "SIGNUP_RATE_PER_MINUTE", default_value_t = 20, global = true)]
    pub signup_rate_per_minute: u32,
    /// Login attempts allowed per client address per minute (Unleash allows 10).
    #[arg(long, env = "LOGIN_RATE_PER_MINUTE", default_value_t = 10, global = true)]
    pub login_rate_per_minute: u32,
    /// Send the session cookie only over HTTPS; by default, when `UNLEASH_URL` is https.
    #[arg(long, env = "SECURE_COOKIES", global = true)]
    pub secure_cookies: Option<bool>,
    /// What to do; serving is the default.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Serve the API (the default).
    Serve,
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

impl Config {
    /// The API tokens to store at start-up, by type: `INIT_ADMIN_API_TOKENS`,
    /// `INIT_BACKEND_API_TOKENS` (else `INIT_CLIENT_API_TOKENS`) and `INIT_FRONTEND_API_TOKENS`.
    pub fn initial_tokens(&self) -> [(crate::domain::TokenType, &[Secret]); 3] {
        use crate::domain::TokenType;
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
        let mut config = Self::parse();
        if std::env::var_os("HTTP_PORT").is_none()
            && let Some(port) = std::env::var("PORT").ok().and_then(|port| port.parse().ok())
        {
            config.port = port;
        }
        config
    }

    /// What the handlers read.
    pub fn settings(&self) -> crate::Settings {
        crate::Settings {
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
        }
    }

    /// The database file: `DATABASE_URL` without a `sqlite://` or `sqlite:` scheme.
    pub fn database_path(&self) -> PathBuf {
        let url = self.database_url.as_str();
        PathBuf::from(
            url.strip_prefix("sqlite://")
                .or_else(|| url.strip_prefix("sqlite:"))
                .unwrap_or(url),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_redacted_and_urls_become_paths() {
        let config = Config::parse_from([
            "admin-api",
            "--init-admin-api-tokens",
            "*:*.topsecret,*:production.other",
            "--database-url",
            "sqlite:///tmp/x.db",
        ]);
        assert_eq!(config.init_admin_api_tokens.len(), 2);
        assert!(!format!("{config:?}").contains("topsecret"));
        assert_eq!(config.initial_tokens()[1].1.len(), 0);
        assert_eq!(config.database_path(), PathBuf::from("/tmp/x.db"));
    }

    #[test]
    fn client_tokens_are_backend_tokens_when_no_backend_tokens_are_set() {
        let parse =
            |args: &[&str]| Config::parse_from(std::iter::once("admin-api").chain(args.iter().copied()));
        let older = parse(&["--init-client-api-tokens", "*:development.a,*:production.b"]);
        let [_, (kind, tokens), _] = older.initial_tokens();
        assert_eq!((kind, tokens.len()), (crate::domain::TokenType::Backend, 2));
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
            Config::parse_from(std::iter::once("admin-api").chain(args.iter().copied()))
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
