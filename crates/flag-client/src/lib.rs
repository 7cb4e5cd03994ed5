//! A live client of the Unleash protocol that embeds `flag-eval`: it keeps a service's flags
//! current from Halyard or Unleash and answers on the hot path without leaving the process.
//!
//! - **Staying current.** It follows the server's event stream (`/api/client/streaming`) when
//!   the server offers one, and otherwise polls `/api/client/features` with `If-None-Match`, so
//!   an unchanged poll costs a 304; or it polls the delta API (`/api/client/delta`) when asked
//!   to ([`Mode`]). Errors back off with jitter; a refused token stops the fetching, and with
//!   it the registration and usage posts, with a clear [`Error::Unauthorized`] instead of
//!   retrying in a loop.
//! - **Starting without the server.** Every state it receives is written to a backup file, which
//!   the next start answers from until the server's first answer; or it starts from a bootstrap
//!   document of its own.
//! - **Answering.** [`Client::is_enabled`], [`Client::variant`] and [`Client::explain`] (the
//!   playground's explanation, computed locally) evaluate the current flags with `flag-eval`;
//!   `is_enabled` and `variant` read them through a per-thread cache, which checks one pointer
//!   while they have not changed. For a flag it knows and a context from [`Client::context`],
//!   `is_enabled` takes no lock, and once the thread has read the client and while its flags stay
//!   the same, allocates nothing and writes nothing shared but the usage count. A context is
//!   completed as Unleash's SDKs complete it: `appName` and environment from the builder, the
//!   current time, a random seed.
//!   A [`Context`] read from JSON keeps top-level fields other than Unleash's own as
//!   properties, as Unleash's SDKs do.
//!   `explain` decides `applicationHostname` strategies with this machine's name, as
//!   `is_enabled` does, where the server's playground cannot.
//!   The client is `Send + Sync`.
//! - **Reporting.** It registers and posts usage in Unleash's format (counts per flag and
//!   variant, in buckets), so Halyard's and Unleash's views show the application.
//!
//! It uses blocking HTTP (`ureq`) on two threads of its own, one fetching and one reporting, so
//! it works the same in a synchronous program and under any async runtime, and forces none on
//! the program; [`Client::ready`] is a future that needs no runtime either.
//!
//! # Quick start
//!
//! ```no_run
//! use std::time::Duration;
//! use flag_client::{Client, Context};
//!
//! # fn main() -> Result<(), flag_client::Error> {
//! let client = Client::builder("http://localhost:4242/api", "*:development.backend-secret")
//!     .app_name("checkout")
//!     .build()?;
//! client.wait_until_ready(Duration::from_secs(5))?;
//!
//! // This client's appName and environment, the time, a random seed; then the request's user.
//! let mut context = client.context();
//! context.user_id = Some("42".into());
//! if client.is_enabled("new-checkout", &context) {
//!     // the new checkout
//! }
//! let variant = client.variant("new-checkout", &context);
//! println!("{} {:?}", variant.name, variant.payload);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod builder;
mod fetch;
mod metrics;
mod ready;
pub mod report;
mod sse;
mod state;

use std::cell::RefCell;
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use arc_swap::cache::Cache;

use flag_eval::Flag;
pub use flag_eval::{ClientFeatures, Context, Payload, ResolvedVariant};

pub use crate::builder::{Builder, Mode};
pub use crate::ready::Ready;
use crate::state::{Shared, Snapshot};

/// A thread's cache of one client's flags.
type SnapshotCache = Cache<Arc<ArcSwap<Snapshot>>, Arc<Snapshot>>;

/// A thread's cache of the flags of one client, known by its shared state: the `Weak` keeps
/// that allocation's address from being reused while the entry lives, and says when the client
/// is gone.
struct CachedClient {
    client: Weak<Shared>,
    flags: SnapshotCache,
}

/// How many clients' flags a thread keeps a cache of; past that, reads of other clients load
/// their flags plainly.
const CACHED_CLIENTS: usize = 8;

thread_local! {
    /// Per thread, a cache of the flags of each client it reads (see `Client::with_snapshot`).
    /// A cache holds the flags it last saw until the thread reads that client again; the caches
    /// of dropped clients are let go when the thread next reads a client it has no cache for.
    static SNAPSHOTS: RefCell<Vec<CachedClient>> = const { RefCell::new(Vec::new()) };
}

/// The thread's cache of `client`'s flags, made on its first read there; `None` when the thread
/// already caches [`CACHED_CLIENTS`] live clients.
fn cache_of<'c>(caches: &'c mut Vec<CachedClient>, client: &Arc<Shared>) -> Option<&'c mut SnapshotCache> {
    let position = match caches
        .iter()
        .position(|cached| std::ptr::eq(cached.client.as_ptr(), Arc::as_ptr(client)))
    {
        Some(position) => position,
        None => {
            caches.retain(|cached| cached.client.strong_count() > 0);
            if caches.len() >= CACHED_CLIENTS {
                return None;
            }
            caches.push(CachedClient {
                client: Arc::downgrade(client),
                flags: Cache::new(Arc::clone(&client.state)),
            });
            caches.len() - 1
        }
    };
    caches.get_mut(position).map(|cached| &mut cached.flags)
}

/// What the client tells the program, through the listener given to [`Builder::on_event`].
#[derive(Debug, Clone)]
pub enum Event {
    /// The client has flags to answer with for the first time: from the server, the backup
    /// file or the bootstrap document. It is delivered before [`Client::wait_until_ready`] and
    /// [`Client::ready`] return and before [`Client::is_ready`] says so.
    Ready(Source),
    /// The flags changed.
    Updated(Source),
    /// Fetching or reporting failed; the client keeps answering with what it has.
    Error(Error),
    /// A flag with `impressionData` was evaluated.
    Impression(Box<Impression>),
}

/// Where the flags the client answers with came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The server.
    Server,
    /// The backup file an earlier run wrote.
    Backup,
    /// The bootstrap document given to the builder.
    Bootstrap,
}

/// One evaluation of a flag whose `impressionData` is on.
#[derive(Debug, Clone)]
pub struct Impression {
    /// The flag.
    pub feature_name: String,
    /// `isEnabled` or `getVariant`, as Unleash's SDKs name the two.
    pub event_type: &'static str,
    /// The answer.
    pub enabled: bool,
    /// The variant, for `getVariant`.
    pub variant: Option<String>,
    /// The context it was evaluated for.
    pub context: Context,
}

/// Why fetching, reporting or waiting failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The server refused the token (401 or 403): fetching, registration and usage posts stop
    /// until the client is rebuilt.
    #[error("the server refused the API token ({status}): fetching stopped")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
    },
    /// The server answered with another status that is not a success.
    #[error("the server answered {status} to {path}")]
    Status {
        /// The path asked.
        path: String,
        /// The status.
        status: u16,
    },
    /// The server could not be reached, or the connection failed.
    #[error("the server could not be reached: {0}")]
    Transport(String),
    /// The server's answer is not a document of flags.
    #[error("the server's answer does not read: {0}")]
    Decode(String),
    /// A local file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The builder was given something unusable.
    #[error("{0}")]
    Config(String),
    /// No flags arrived within the time waited.
    #[error("no flags within {0:?}")]
    Timeout(Duration),
}

/// A variant as Unleash's SDKs answer it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Variant {
    /// The variant's name, or `disabled`.
    pub name: String,
    /// Whether a variant was chosen.
    pub enabled: bool,
    /// Whether the flag is enabled.
    pub feature_enabled: bool,
    /// Its payload, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
}

impl From<ResolvedVariant<'_>> for Variant {
    fn from(variant: ResolvedVariant<'_>) -> Self {
        Self {
            name: variant.name.to_owned(),
            enabled: variant.enabled,
            feature_enabled: variant.feature_enabled,
            payload: variant.payload.cloned(),
        }
    }
}

/// How fetching flags has gone so far (usage posts are not counted here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetches {
    /// Answers with flags: full documents, deltas, stream events.
    pub updated: u64,
    /// Polls answered 304 or with no change.
    pub unchanged: u64,
    /// Attempts that failed.
    pub failed: u64,
}

/// A client of one server, for one application. Cheap to share: clone it, or put it in an
/// `Arc`; every clone answers from the same flags. Dropping the last clone stops its threads.
#[derive(Clone)]
pub struct Client {
    shared: Arc<Shared>,
    _threads: Arc<state::Threads>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Client")
            .field("url", &self.shared.config.url)
            .field("app_name", &self.shared.config.app_name)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A builder for a client of the server at `url` (its API root, such as
    /// `http://host:4242/api`), with a client or backend `token`.
    pub fn builder(url: impl Into<String>, token: impl Into<String>) -> Builder {
        Builder::new(url.into(), token.into())
    }

    /// A context for one request with what Unleash's SDKs fill in themselves: this client's
    /// `appName` and environment, the current time, and a fresh random seed. Evaluating a context
    /// made here (with the request's user and properties added) costs nothing more than the
    /// evaluation; a context that lacks any of these is completed on a copy at each evaluation.
    pub fn context(&self) -> Context {
        let context = Context {
            app_name: Some(self.shared.config.app_name.clone()),
            environment: Some(self.shared.config.environment.clone()),
            ..Context::default()
        }
        .at(chrono::Utc::now());
        context.random.reseed(state::next_seed());
        context
    }

    /// Runs `evaluate` on `context` completed as Unleash's SDKs complete it: `appName` and
    /// `environment` from the builder and the current time when it lacks them (on a copy), and a
    /// fresh random seed when it was never seeded, so random rollouts are random.
    fn completed<R>(&self, context: &Context, evaluate: impl FnOnce(&Context) -> R) -> R {
        if context.random.state() == flag_eval::Randomness::UNSEEDED {
            context.random.reseed(state::next_seed());
        }
        if context.app_name.is_some() && context.environment.is_some() && !context.current_time.is_unset() {
            return evaluate(context);
        }
        let mut filled = context.clone();
        let config = &self.shared.config;
        filled.app_name.get_or_insert_with(|| config.app_name.clone());
        filled
            .environment
            .get_or_insert_with(|| config.environment.clone());
        filled.current_time = filled.current_time.or_at(chrono::Utc::now());
        evaluate(&filled)
    }

    /// Hands the current flags to `read`.
    ///
    /// Each thread keeps a `Cache` of the flags of the clients it reads (up to
    /// [`CACHED_CLIENTS`]): while they have not changed, a read checks one pointer, with none of
    /// the atomic read-modify-writes of a plain `ArcSwap::load` and its guard. A read from within
    /// another on the same thread (an impression hook, or a `with_variant` closure, that reads a
    /// flag) loads them plainly, as do reads past that many clients.
    #[inline]
    fn with_snapshot<R>(&self, read: impl FnOnce(&Snapshot) -> R) -> R {
        let mut read = Some(read);
        let mut answer = None;
        // Fails only while the thread's locals are being destroyed; the plain load then serves.
        let _ = SNAPSHOTS.try_with(|caches| {
            if let Ok(mut caches) = caches.try_borrow_mut()
                && let Some(flags) = cache_of(&mut caches, &self.shared)
                && let Some(read) = read.take()
            {
                answer = Some(read(flags.load()));
            }
        });
        match (answer, read) {
            (Some(answer), _) => answer,
            (None, Some(read)) => read(&self.shared.state.load()),
            (None, None) => unreachable!("`read` is taken only to give the answer"),
        }
    }

    /// Whether `name` is enabled for `context`; false for a flag the client does not know.
    pub fn is_enabled(&self, name: &str, context: &Context) -> bool {
        self.completed(context, |context| {
            self.with_snapshot(|snapshot| self.enabled_in(snapshot, name, context))
        })
    }

    fn enabled_in(&self, snapshot: &Snapshot, name: &str, context: &Context) -> bool {
        let flag = snapshot.engine.flag(name);
        let enabled = flag.is_some_and(|flag| flag.is_enabled(context));
        self.shared
            .metrics
            .count(snapshot, flag.map(Flag::ordinal), name, enabled, None);
        if !snapshot.impressions.is_empty() && snapshot.impressions.contains(name) {
            self.shared.impression(name, "isEnabled", enabled, None, context);
        }
        enabled
    }

    /// The variant of `name` for `context`: `disabled` for a flag that is off or unknown.
    pub fn variant(&self, name: &str, context: &Context) -> Variant {
        self.with_variant(name, context, |variant| Variant::from(variant))
    }

    /// Hands the variant of `name` for `context` to `read` as flag-eval resolved it, borrowing
    /// its name and payload instead of copying them: [`Client::variant`] without allocating.
    pub fn with_variant<R>(
        &self,
        name: &str,
        context: &Context,
        read: impl FnOnce(ResolvedVariant<'_>) -> R,
    ) -> R {
        self.completed(context, |context| {
            self.with_snapshot(|snapshot| self.variant_in(snapshot, name, context, read))
        })
    }

    fn variant_in<R>(
        &self,
        snapshot: &Snapshot,
        name: &str,
        context: &Context,
        read: impl FnOnce(ResolvedVariant<'_>) -> R,
    ) -> R {
        let flag = snapshot.engine.flag(name);
        let variant = flag.map_or(ResolvedVariant::disabled(false), |flag| flag.variant(context));
        self.shared.metrics.count(
            snapshot,
            flag.map(Flag::ordinal),
            name,
            variant.feature_enabled,
            Some(variant.name),
        );
        if !snapshot.impressions.is_empty() && snapshot.impressions.contains(name) {
            self.shared.impression(
                name,
                "getVariant",
                variant.feature_enabled,
                Some(variant.name),
                context,
            );
        }
        read(variant)
    }

    /// Why `name` is on or off for `context`, as Unleash's playground explains it (each strategy,
    /// constraint and segment with its result, the variant), computed here; `None` for a flag
    /// the client does not know. Not counted in usage.
    ///
    /// Unlike the playground, which cannot know an application's host, it decides
    /// `applicationHostname` strategies with the host name `is_enabled` uses, so they are
    /// `complete` and agree with `is_enabled`.
    pub fn explain(&self, name: &str, context: &Context) -> Option<serde_json::Value> {
        self.completed(context, |context| {
            let snapshot = self.shared.state.load();
            let explanation = snapshot.engine.explain(name, context)?;
            serde_json::to_value(&explanation).ok()
        })
    }

    /// The names of the flags the client knows, sorted.
    pub fn flag_names(&self) -> Vec<String> {
        let snapshot = self.shared.state.load();
        let mut names: Vec<String> = snapshot.names.iter().map(ToString::to_string).collect();
        names.sort();
        names
    }

    /// Whether the client has flags to answer with (and has told its listener so).
    pub fn is_ready(&self) -> bool {
        self.shared.ready.is_ready()
    }

    /// Blocks until the client has flags and its listener has been given [`Event::Ready`], at
    /// most `timeout`; fails at once when the server refuses the token before any flags arrived.
    /// A listener must not wait for this itself while handling `Ready`.
    pub fn wait_until_ready(&self, timeout: Duration) -> Result<(), Error> {
        self.shared.ready.wait(timeout)
    }

    /// A future that resolves when the client has flags and its listener has been given
    /// [`Event::Ready`] (or the server refused the token before any arrived); it needs no
    /// particular async runtime.
    pub fn ready(&self) -> Ready {
        Ready::new(Arc::clone(&self.shared))
    }

    /// How fetching has gone so far.
    pub fn fetches(&self) -> Fetches {
        self.shared.fetches()
    }

    /// The last error fetching or reporting met, if the last attempt failed.
    pub fn last_error(&self) -> Option<Error> {
        self.shared.last_error()
    }

    /// Sends the usage counted so far now, instead of at the next interval; after the server
    /// refused the token, sends nothing and answers with that refusal.
    pub fn flush_metrics(&self) -> Result<(), Error> {
        metrics::post(&self.shared)
    }
}
