//! Halyard's application layer: every operation of the flag platform, declared once, with its
//! rules, over `flag-eval` (the engine) and `flag-store` (the database).
//!
//! Every interface (the JSON API, the SDK protocols, the console) parses its input into the
//! types here, calls one operation, and renders the view model it returns. Nothing here knows
//! HTTP: failures are [`AdminError`]s, which each interface maps to its own answer.
//!
//! - [`Ctx`] is what every operation shares: the store, the settings, the caches, the CPU pool
//!   and the usage pipeline.
//! - [`auth`] holds the principal and the permission policy: each operation declares an
//!   [`auth::Access`].
//! - One module per resource holds its operations: [`tokens::create`] takes the context, the
//!   caller and a parsed request, and returns a view model.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use flag_admin::{Ctx, Settings};
//! let scratch = flag_store::scratch::Scratch::new()?;
//! let ctx = Ctx::new(scratch.open()?, Settings::default())?;
//! assert_eq!(ctx.settings().unleash_url, "http://localhost:4242");
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod addons;
pub mod applications;
pub mod archive;
pub mod auth;
pub mod cache;
pub mod client;
pub mod clock;
pub mod context_fields;
pub mod cpu_pool;
pub mod db;
pub mod delta;
pub mod dependencies;
pub mod domain;
pub mod dto;
pub mod engines;
pub mod environments;
pub mod error;
pub mod events;
pub mod export;
pub mod features;
pub mod frontend;
pub mod health;
pub mod invite;
pub mod lifecycle;
pub mod me;
pub mod memory;
pub mod ofrep;
pub mod oidc;
pub mod overview;
pub mod password;
pub mod playground;
pub mod projects;
pub mod rate_limit;
pub mod reports;
pub mod search;
pub mod secrets;
pub mod seeding;
pub mod segments;
pub mod session;
pub mod settings;
pub mod strategies;
pub mod strategy_types;
pub mod system;
pub mod tags;
pub mod tokens;
pub mod usage;
pub mod users;
pub mod variants;
pub mod webhooks;

use std::sync::Arc;

use flag_store::Store;

pub use crate::clock::now;
pub use crate::error::{AdminError, Detail};
pub use crate::settings::Settings;

/// What every operation shares. One per process; every interface holds it.
#[derive(Debug)]
pub struct Ctx {
    store: Store,
    settings: Settings,
    /// Signups per client address.
    signup_limiter: rate_limit::RateLimiter,
    /// Login attempts per client address.
    login_limiter: rate_limit::RateLimiter,
    /// Compiled environments for the playground, the frontend API and OFREP.
    engines: Arc<engines::EngineCache>,
    /// The API tokens, as of the store's revision.
    tokens: auth::TokenCache,
    /// The store's revision as last read, which the caches are checked against.
    revision: Arc<cache::RevisionWatch>,
    /// Where CPU-heavy work runs: evaluation and password hashing.
    cpu: cpu_pool::CpuPool,
    /// What SDKs registered and reported, waiting to be written.
    usage: usage::Usage,
    /// Password verifications run by logins, unknown users included.
    passwords_verified: std::sync::atomic::AtomicU64,
    /// The OpenID provider as last discovered.
    oidc: oidc::Oidc,
    /// The questions SDKs follow through the delta API and streams, with their changes.
    feeds: delta::Feeds,
}

impl Ctx {
    /// The context over `store` with these settings; fails only when no CPU-pool thread can
    /// start.
    pub fn new(store: Store, settings: Settings) -> Result<Self, rayon::ThreadPoolBuildError> {
        Ok(Self {
            store,
            signup_limiter: rate_limit::RateLimiter::new(settings.signups_per_minute),
            login_limiter: rate_limit::RateLimiter::new(settings.logins_per_minute),
            engines: Arc::new(engines::EngineCache::new(engines::CAPACITY)),
            tokens: auth::TokenCache::new(1),
            revision: Arc::default(),
            cpu: cpu_pool::CpuPool::new(settings.cpu_threads)?,
            feeds: delta::Feeds::new(settings.streams, settings.streams_per_token),
            settings,
            usage: usage::Usage::default(),
            passwords_verified: std::sync::atomic::AtomicU64::new(0),
            oidc: oidc::Oidc::default(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The usage pipeline.
    pub fn usage(&self) -> &usage::Usage {
        &self.usage
    }

    /// The store's current revision: every cache keyed by revision asks it first.
    pub async fn revision(&self) -> Result<i32, AdminError> {
        self.revision.current(&self.store).await
    }

    /// The store's revision read from the database now, for an answer that must not be behind
    /// what another replica already answered.
    pub async fn revision_now(&self) -> Result<i32, AdminError> {
        let watch = Arc::clone(&self.revision);
        db::run(&self.store, move |conn| watch.read(conn)).await
    }

    /// The questions SDKs follow, with their changes.
    pub fn feeds(&self) -> &delta::Feeds {
        &self.feeds
    }

    /// The CPU pool, for interfaces that render large answers off the request threads.
    pub fn cpu(&self) -> &cpu_pool::CpuPool {
        &self.cpu
    }

    /// Password verifications run by logins since the start, unknown users included.
    pub fn passwords_verified(&self) -> u64 {
        self.passwords_verified.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many compiled environments are kept.
    pub fn compiled_environments(&self) -> usize {
        self.engines.len()
    }

    /// Starts delivering the audit log's new events to webhooks, on threads of their own.
    pub fn start_webhooks(&self) -> std::io::Result<webhooks::Webhooks> {
        webhooks::Webhooks::start(
            self.store.clone(),
            self.settings.webhook_urls.clone(),
            events::EventFormatter::new(&self.settings.unleash_url, events::Bold::Simple),
        )
    }

    /// Writes what SDKs reported and is still in memory.
    pub async fn flush_usage(&self) -> Result<flag_store::queries::client_metrics::Recorded, AdminError> {
        self.usage.flush(&self.store).await
    }
}
