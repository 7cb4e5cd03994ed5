//! What the client's threads and its callers share: the current flags, readiness, the
//! listener, fetch statistics, and stopping.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use arc_swap::ArcSwap;
use flag_eval::{ClientFeatures, Context, Engine};
use rustc_hash::FxHashSet;

use crate::builder::Mode;
use crate::metrics::{Counters, FlagCounters, Metrics};
use crate::ready::ReadyState;
use crate::{Error, Event, Fetches, Impression, Source};

/// Seeds for contexts' random sources: a random start, then a Weyl sequence, so each
/// evaluation draws differently without asking the operating system each time.
static SEEDS: std::sync::LazyLock<AtomicU64> =
    std::sync::LazyLock::new(|| AtomicU64::new(getrandom::u64().unwrap_or(0x2545_f491_4f6c_dd1d)));

/// A fresh seed.
pub(crate) fn next_seed() -> u64 {
    SEEDS.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
}

/// The machine's name, for the `applicationHostname` strategy, as Unleash's SDKs read it.
fn hostname() -> Option<String> {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

/// How flags are compiled: with this machine's name.
pub(crate) fn compile_options() -> flag_eval::CompileOptions {
    flag_eval::CompileOptions {
        hostname: hostname(),
        ..flag_eval::CompileOptions::default()
    }
}

/// The program's listener for [`Event`]s.
pub(crate) type Listener = Box<dyn Fn(&Event) + Send + Sync>;

/// The program's listener for whole documents.
pub(crate) type DocumentListener = Box<dyn Fn(&ClientFeatures, Source) + Send + Sync>;

/// The builder's settings, fixed for the client's life.
#[derive(Debug)]
pub(crate) struct Config {
    /// The API root, without a trailing slash.
    pub url: String,
    pub token: String,
    pub app_name: String,
    pub instance_id: String,
    pub connection_id: String,
    pub environment: String,
    pub mode: Mode,
    pub refresh_interval: Duration,
    pub metrics_interval: Option<Duration>,
    pub backup: PathBuf,
    /// Sent with every request besides the client's own.
    pub headers: Vec<(String, String)>,
    /// Whether the flags are compiled to answer evaluations; a client that only hands its
    /// documents on (`Builder::documents_only`) compiles nothing.
    pub evaluates: bool,
    /// Most bytes of one answer or stream event.
    pub body_limit: u64,
}

/// The flags as of one state: the compiled engine, and what counting and impressions need.
pub(crate) struct Snapshot {
    pub engine: Engine,
    /// Every flag's name.
    pub names: Vec<Box<str>>,
    /// The flags whose `impressionData` is on.
    pub impressions: FxHashSet<Box<str>>,
    /// Usage counters, one per flag, carried from one state to the next.
    pub counters: Counters,
    /// The same counters by [`flag_eval::Flag::ordinal`], so that a read that found its flag
    /// counts without looking the name up again.
    pub by_ordinal: Vec<Option<Arc<FlagCounters>>>,
}

impl Snapshot {
    fn new(engine: Engine, previous: Option<&Snapshot>) -> Self {
        let names: Vec<Box<str>> = engine
            .features()
            .map(|feature| feature.name.as_str().into())
            .collect();
        let impressions = engine
            .features()
            .filter(|feature| feature.impression_data.unwrap_or(false))
            .map(|feature| feature.name.as_str().into())
            .collect();
        let counters = Metrics::counters_for(&engine, previous.map(|snapshot| &snapshot.counters));
        let mut by_ordinal = vec![None; engine.ordinal_bound()];
        for (name, flag_counters) in &counters {
            if let Some(slot) = engine
                .flag(name)
                .and_then(|flag| by_ordinal.get_mut(flag.ordinal()))
            {
                *slot = Some(Arc::clone(flag_counters));
            }
        }
        Self {
            engine,
            names,
            impressions,
            counters,
            by_ordinal,
        }
    }
}

/// Why the client's threads end early: the client stopped, or the server refused the token.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Halt {
    /// The last clone of the client was dropped.
    pub stopped: bool,
    /// The status (401 or 403) with which the server refused the token to the fetching thread.
    pub refused: Option<u16>,
}

/// What the client, its clones and its threads share.
pub(crate) struct Shared {
    pub config: Config,
    /// The current flags; behind an `Arc` of its own so that each reading thread can keep a
    /// `Cache` of it (see `Client::with_snapshot`).
    pub state: Arc<ArcSwap<Snapshot>>,
    pub ready: ReadyState,
    pub metrics: Metrics,
    listener: Option<Listener>,
    document_listener: Option<DocumentListener>,
    updated: AtomicU64,
    unchanged: AtomicU64,
    failed: AtomicU64,
    last_error: Mutex<Option<Error>>,
    halt: Mutex<Halt>,
    wake: Condvar,
    stopped: AtomicBool,
}

impl Shared {
    pub fn new(
        config: Config,
        listener: Option<Listener>,
        document_listener: Option<DocumentListener>,
    ) -> Self {
        let metrics = Metrics::new(config.metrics_interval.is_some());
        let empty = Snapshot::new(Engine::default(), None);
        Self {
            config,
            state: Arc::new(ArcSwap::from_pointee(empty)),
            ready: ReadyState::default(),
            metrics,
            listener,
            document_listener,
            updated: AtomicU64::new(0),
            unchanged: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            last_error: Mutex::new(None),
            halt: Mutex::new(Halt::default()),
            wake: Condvar::new(),
            stopped: AtomicBool::new(false),
        }
    }

    pub fn emit(&self, event: &Event) {
        if let Some(listener) = &self.listener {
            listener(event);
        }
    }

    /// Hands `document` to the program's document listener, when it gave one.
    pub fn document_changed(&self, document: &ClientFeatures, source: Source) {
        if let Some(listener) = &self.document_listener {
            listener(document, source);
        }
    }

    /// Answers from `document` from now on.
    pub fn publish(&self, document: ClientFeatures, source: Source) {
        if !self.config.evaluates {
            self.announce(source);
            return;
        }
        let (engine, _warnings) = Engine::compile_owned(document, compile_options());
        self.install(engine, source);
    }

    /// Says the flags changed (or are there for the first time) without compiling them: a
    /// client that only hands its documents on.
    pub fn announce(&self, source: Source) {
        if self.ready.is_ready() {
            self.emit(&Event::Updated(source));
        } else {
            self.emit(&Event::Ready(source));
            self.ready.set_ready();
        }
    }

    /// Answers from `engine` from now on, and says so. Called by one thread at a time: the
    /// builder's, before the client's threads start, then the fetching thread.
    pub fn install(&self, engine: Engine, source: Source) {
        let previous = self.state.load_full();
        let snapshot = Snapshot::new(engine, Some(&previous));
        self.metrics.retire(&previous.counters, &snapshot.counters);
        self.state.store(Arc::new(snapshot));
        if self.ready.is_ready() {
            self.emit(&Event::Updated(source));
        } else {
            // The listener hears of the flags before anyone waiting for them is woken, so a
            // caller that waited finds `Ready` in what its listener saw.
            self.emit(&Event::Ready(source));
            self.ready.set_ready();
        }
    }

    /// The backup an earlier run wrote, when there is one that reads.
    pub fn read_backup(&self) -> Option<ClientFeatures> {
        let text = std::fs::read(&self.config.backup).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Writes `document` as the backup, through a temporary file, so a crash never leaves half
    /// of one.
    pub fn write_backup(&self, document: &ClientFeatures) {
        let result = (|| -> Result<(), String> {
            let json = serde_json::to_vec(document).map_err(|error| error.to_string())?;
            // A name of its own, so clients sharing a backup never rename each other's file.
            let mut temporary = self.config.backup.clone().into_os_string();
            temporary.push(format!(".{}.tmp", uuid::Uuid::new_v4()));
            let written = (|| {
                let mut file = std::fs::File::create(&temporary)?;
                std::io::Write::write_all(&mut file, &json)?;
                file.sync_all()?;
                std::fs::rename(&temporary, &self.config.backup)
            })();
            if written.is_err() {
                let _ = std::fs::remove_file(&temporary);
            }
            written.map_err(|error| error.to_string())
        })();
        if let Err(error) = result {
            self.report(Error::Io(format!(
                "cannot write the backup {}: {error}",
                self.config.backup.display()
            )));
        }
    }

    pub fn impression(
        &self,
        name: &str,
        event_type: &'static str,
        enabled: bool,
        variant: Option<&str>,
        context: &Context,
    ) {
        if self.listener.is_some() {
            self.emit(&Event::Impression(Box::new(Impression {
                feature_name: name.to_owned(),
                event_type,
                enabled,
                variant: variant.map(str::to_owned),
                context: context.clone(),
            })));
        }
    }

    pub fn succeeded(&self, changed: bool) {
        if changed {
            self.updated.fetch_add(1, Ordering::Relaxed);
        } else {
            self.unchanged.fetch_add(1, Ordering::Relaxed);
        }
        *self.lock_error() = None;
    }

    /// A fetch failed: counted, and reported. A refused token also stops the reporting thread,
    /// as Unleash's Node SDK stops its metrics when its fetch is refused.
    pub fn failure(&self, error: Error) {
        self.failed.fetch_add(1, Ordering::Relaxed);
        if let Error::Unauthorized { status } = error {
            self.lock_halt().refused = Some(status);
            self.wake.notify_all();
            self.ready.set_failed(error.clone());
        }
        self.report(error);
    }

    /// The refusal that stopped fetching and reporting, if the server refused the token.
    pub fn refusal(&self) -> Option<Error> {
        self.lock_halt()
            .refused
            .map(|status| Error::Unauthorized { status })
    }

    /// Something else failed (a usage post, the backup): reported only.
    pub fn report(&self, error: Error) {
        *self.lock_error() = Some(error.clone());
        self.emit(&Event::Error(error));
    }

    fn lock_error(&self) -> MutexGuard<'_, Option<Error>> {
        self.last_error.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn last_error(&self) -> Option<Error> {
        self.lock_error().clone()
    }

    pub fn fetches(&self) -> Fetches {
        Fetches {
            updated: self.updated.load(Ordering::Relaxed),
            unchanged: self.unchanged.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
        }
    }

    /// Whether the client is stopping.
    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    fn lock_halt(&self) -> MutexGuard<'_, Halt> {
        self.halt.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleeps `duration`, or less when the client stops; true when it stopped.
    pub fn sleep(&self, duration: Duration) -> bool {
        self.sleep_until(duration, |halt| halt.stopped).stopped
    }

    /// Sleeps `duration`, or less when the client stops or the server refuses the token; says
    /// which, if either.
    pub fn sleep_reporting(&self, duration: Duration) -> Halt {
        self.sleep_until(duration, |halt| halt.stopped || halt.refused.is_some())
    }

    fn sleep_until(&self, duration: Duration, woken: impl Fn(&Halt) -> bool) -> Halt {
        let guard = self.lock_halt();
        let (guard, _) = self
            .wake
            .wait_timeout_while(guard, duration, |halt| !woken(halt))
            .unwrap_or_else(PoisonError::into_inner);
        *guard
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.lock_halt().stopped = true;
        self.wake.notify_all();
    }
}

/// The client's threads; dropping this (with the last clone of the client) stops them. A thread
/// blocked reading a stream ends at its next heartbeat.
pub(crate) struct Threads {
    shared: Arc<Shared>,
}

impl Threads {
    pub fn start(shared: &Arc<Shared>) -> Result<Self, Error> {
        // Made first, so a thread that cannot start stops the one that did.
        let threads = Self {
            shared: Arc::clone(shared),
        };
        let spawn = |name: &str, work: fn(Arc<Shared>)| {
            let shared = Arc::clone(shared);
            std::thread::Builder::new()
                .name(name.into())
                .spawn(move || work(shared))
                .map(drop)
                .map_err(|error| Error::Io(format!("cannot start the client's {name} thread: {error}")))
        };
        spawn("flag-client-fetch", crate::fetch::run)?;
        if shared.config.metrics_interval.is_some() {
            spawn("flag-client-metrics", crate::metrics::run)?;
        }
        Ok(threads)
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        self.shared.stop();
    }
}
