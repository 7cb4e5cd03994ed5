//! The flag platform's HTTP server: Unleash's admin and client API over `flag-eval` and
//! `flag-store`.
//!
//! [`build_app`] assembles the whole application from an [`AppState`]; `main` and the tests
//! both call it. Handlers are thin: extractors, one store or engine call, a response DTO.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod auth;
pub mod config;
pub mod cpu_pool;
pub mod db;
pub mod domain;
pub mod dto;
pub mod engines;
pub mod error;
pub mod extract;
pub mod handlers;
pub mod metrics;
pub mod openapi;
pub mod password;
pub mod rate_limit;
pub mod respond;
pub mod routes;
pub mod secrets;
pub mod server;

use std::path::Path;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, web};
use flag_store::models::NewApiToken;
use flag_store::{Store, StoreError, queries};

use crate::config::Secret;
use crate::cpu_pool::CpuPool;
use crate::extract::BodyLimit;
use crate::rate_limit::RateLimiter;

/// Settings the handlers read.
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
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            unleash_url: "http://localhost:4242".into(),
            body_limit: extract::DEFAULT_BODY_LIMIT,
            combination_limit: flag_eval::DEFAULT_COMBINATION_LIMIT,
            context_bytes_limit: flag_eval::DEFAULT_CONTEXT_BYTES_LIMIT,
            signups_per_minute: 20,
            logins_per_minute: 10,
            secure_cookies: false,
            cpu_threads: 0,
        }
    }
}

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// Settings.
    pub settings: Settings,
    /// Signups per client address.
    pub signup_limiter: RateLimiter,
    /// Login attempts per client address.
    pub login_limiter: RateLimiter,
    /// Compiled environments for the playground.
    pub engines: std::sync::Arc<engines::EngineCache>,
    /// Where CPU-heavy work runs: evaluation and password hashing.
    pub cpu: CpuPool,
    /// Set when shutdown begins, so `/ready` answers 503 while requests drain.
    pub shutting_down: std::sync::atomic::AtomicBool,
    /// Request metrics.
    pub metrics: metrics::Metrics,
}

impl AppState {
    /// State over `store` with these settings; fails only when no CPU-pool thread can start.
    pub fn new(store: Store, settings: Settings) -> Result<Self, rayon::ThreadPoolBuildError> {
        Ok(Self {
            store,
            signup_limiter: RateLimiter::new(settings.signups_per_minute),
            login_limiter: RateLimiter::new(settings.logins_per_minute),
            engines: std::sync::Arc::default(),
            cpu: CpuPool::new(settings.cpu_threads)?,
            settings,
            shutting_down: std::sync::atomic::AtomicBool::new(false),
            metrics: metrics::Metrics::default(),
        })
    }
}

/// Stores the configured admin tokens (`<project>:<environment>.<secret>`; an environment other
/// than `*` limits the token to it). Only their verifiers are kept.
pub fn seed_admin_tokens(store: &Store, tokens: &[Secret]) -> Result<(), StoreError> {
    let mut conn = store.connection()?;
    let now = chrono::Utc::now().naive_utc();
    for (index, Secret(token)) in tokens.iter().enumerate() {
        if token.is_empty() {
            continue;
        }
        let hash = secrets::verifier(token);
        if queries::api_tokens::find_by_hash(&mut conn, &hash)?.is_some() {
            continue;
        }
        let environment = token
            .split_once('.')
            .and_then(|(scope, _)| scope.split_once(':'))
            .map_or("*", |(_, environment)| environment);
        queries::api_tokens::create(
            &mut conn,
            &NewApiToken {
                token_name: format!("init-admin-token-{}", index + 1),
                secret_hash: hash,
                token_type: "admin".into(),
                environment: environment.into(),
                projects: "[\"*\"]".into(),
                expires_at: None,
                created_at: now,
            },
            "system",
        )?;
    }
    Ok(())
}

/// On a first start with no admin token at all, creates one and writes it to `admin-token` next
/// to the database, readable by its owner only. Returns the file's path when it did.
pub fn ensure_admin_token(store: &Store, database: &Path) -> anyhow::Result<Option<std::path::PathBuf>> {
    let mut conn = store.connection()?;
    if queries::api_tokens::list(&mut conn)?
        .iter()
        .any(|token| token.token_type == "admin")
    {
        return Ok(None);
    }
    let token = format!("*:*.{}", secrets::random_hex(28)?);
    let path = database
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("admin-token");
    write_private(&path, &format!("{token}\n"))?;
    seed_admin_tokens(store, &[Secret(token)])?;
    Ok(Some(path))
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(contents.as_bytes())
}

/// Logs one line per request: method, route pattern, status and duration. Never the path or the
/// query string, which can carry secrets (an invite token in `/invite/{token}/signup`).
async fn log_request(
    request: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = request.method().clone();
    let response = next.call(request).await?;
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "(unmatched)".into());
    let status = response.status().as_u16();
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(state) = response.request().app_data::<web::Data<AppState>>() {
        state.metrics.observe(method.as_str(), &route, status, elapsed);
    }
    let elapsed_ms = elapsed * 1000.0;
    tracing::info!(%method, %route, status, elapsed_ms, "{method} {route} {status} in {elapsed_ms:.1} ms");
    Ok(response)
}

/// The whole application on `state`.
pub fn build_app(
    state: web::Data<AppState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let limit = state.settings.body_limit;
    App::new()
        .wrap(actix_web::middleware::from_fn(log_request))
        .app_data(state)
        .app_data(web::Data::new(BodyLimit(limit)))
        .app_data(web::PayloadConfig::new(limit))
        .app_data(web::PathConfig::default().error_handler(extract::path_error))
        .app_data(web::QueryConfig::default().error_handler(extract::query_error))
        .configure(routes::configure)
        .service(
            utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
                .external_url_unchecked("/docs/openapi.json", openapi::document()),
        )
        .default_service(web::to(handlers::not_found))
}
