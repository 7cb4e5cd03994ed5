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
    /// The SDK streams written out of the HTTP dispatcher (`crate::handoff`), which a stop
    /// waits for.
    pub detached: tokio_util::task::TaskTracker,
    /// Set when the process is an edge: where its flags, tokens and usage come from and go.
    pub edge: Option<std::sync::Arc<flag_admin::app::edge::Edge>>,
    /// The path every route is served under (an edge's `--base-path`), without a trailing slash.
    pub base_path: Option<String>,
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
            detached: tokio_util::task::TaskTracker::new(),
            edge: None,
            base_path: None,
        }
    }

    /// The HTTP interface of an edge over `app`: only the SDKs' API and the backstage.
    pub fn edge(
        app: Ctx,
        edge: std::sync::Arc<flag_admin::app::edge::Edge>,
        base_path: Option<&str>,
    ) -> Self {
        let base_path = base_path
            .map(|path| format!("/{}", path.trim_matches('/')))
            .filter(|path| path != "/");
        Self {
            edge: Some(edge),
            base_path,
            ..Self::new(app)
        }
    }
}
