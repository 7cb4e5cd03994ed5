//! What the HTTP interface shares: the application context, and what only HTTP has.

use std::sync::atomic::AtomicBool;

use flag_admin::Ctx;

use crate::client_cache::AnswerCache;
use crate::metrics::Metrics;

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The application: every operation runs on it.
    pub app: Ctx,
    /// Serialised client-API answers, as of the store's revision.
    pub answers: AnswerCache,
    /// Set when shutdown begins, so `/ready` answers 503 while requests drain.
    pub shutting_down: AtomicBool,
    /// Request metrics.
    pub metrics: Metrics,
    /// Turns true when shutdown begins: every SDK stream then ends.
    pub stopping: tokio::sync::watch::Sender<bool>,
}

impl AppState {
    /// The HTTP interface over `app`.
    pub fn new(app: Ctx) -> Self {
        Self {
            app,
            answers: AnswerCache::new(crate::client_cache::CAPACITY),
            shutting_down: AtomicBool::new(false),
            metrics: Metrics::default(),
            stopping: tokio::sync::watch::Sender::new(false),
        }
    }
}
