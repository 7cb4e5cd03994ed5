//! The flag platform's HTTP server: Unleash's admin and client API over `flag-eval` and
//! `flag-store`.
//!
//! [`build_app`] assembles the whole application from an [`AppState`]; `main` and the tests
//! both call it. Handlers are thin: extractors, one store or engine call, a response DTO.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod auth;
pub mod client_cache;
pub mod config;
pub mod cors;
pub mod cpu_pool;
pub mod db;
pub mod domain;
pub mod dto;
pub mod engines;
pub mod error;
pub mod extract;
pub mod handlers;
pub mod memory;
pub mod metrics;
pub mod openapi;
pub mod password;
pub mod rate_limit;
pub mod request_log;
pub mod respond;
pub mod routes;
pub mod secrets;
pub mod seeding;
pub mod server;
pub mod usage;

pub use seeding::{ensure_admin_token, seed_admin_tokens, seed_tokens};

/// The current time in UTC, to the microsecond: the precision PostgreSQL keeps, so a time reads
/// back exactly as it was written on either backend.
pub fn now() -> chrono::NaiveDateTime {
    use chrono::SubsecRound as _;
    chrono::Utc::now().naive_utc().trunc_subsecs(6)
}

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, web};
use flag_store::Store;

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
    /// The API tokens, as of the store's revision.
    pub tokens: std::sync::Arc<auth::TokenCache>,
    /// Serialised client-API answers, as of the store's revision.
    pub answers: std::sync::Arc<client_cache::AnswerCache>,
    /// The store's revision as last read, which the caches are checked against.
    pub revision: std::sync::Arc<engines::RevisionWatch>,
    /// Where CPU-heavy work runs: evaluation and password hashing.
    pub cpu: CpuPool,
    /// Set when shutdown begins, so `/ready` answers 503 while requests drain.
    pub shutting_down: std::sync::atomic::AtomicBool,
    /// Request metrics.
    pub metrics: metrics::Metrics,
    /// What SDKs registered and reported, waiting to be written.
    pub usage: usage::Usage,
}

impl AppState {
    /// State over `store` with these settings; fails only when no CPU-pool thread can start.
    pub fn new(store: Store, settings: Settings) -> Result<Self, rayon::ThreadPoolBuildError> {
        Ok(Self {
            store,
            signup_limiter: RateLimiter::new(settings.signups_per_minute),
            login_limiter: RateLimiter::new(settings.logins_per_minute),
            engines: std::sync::Arc::default(),
            tokens: std::sync::Arc::default(),
            answers: std::sync::Arc::default(),
            revision: std::sync::Arc::default(),
            cpu: CpuPool::new(settings.cpu_threads)?,
            settings,
            shutting_down: std::sync::atomic::AtomicBool::new(false),
            metrics: metrics::Metrics::default(),
            usage: usage::Usage::default(),
        })
    }
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
        .wrap(actix_web::middleware::Compress::default())
        .wrap(actix_web::middleware::from_fn(cors::cors))
        .wrap(actix_web::middleware::from_fn(request_log::log_request))
        .app_data(state)
        .app_data(web::Data::new(BodyLimit(limit)))
        .app_data(web::PayloadConfig::new(limit))
        .app_data(web::PathConfig::default().error_handler(extract::path_error))
        .app_data(web::QueryConfig::default().error_handler(extract::query_error))
        .configure(routes::configure)
        .route("/docs/openapi.json", web::get().to(openapi::serve))
        .service(
            utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
                .config(utoipa_swagger_ui::Config::from("/docs/openapi.json")),
        )
        .default_service(web::to(handlers::not_found))
}
