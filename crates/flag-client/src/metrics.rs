//! Usage: counts per flag and variant, kept in atomics beside the flags they count, and posted
//! in Unleash's format (`/client/register` once, then `/client/metrics` every interval) until
//! the client stops or the server refuses the token.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, SecondsFormat, Utc};
use flag_eval::Engine;
use rustc_hash::FxHashMap;
use serde_json::json;

use crate::Error;
use crate::state::{Shared, Snapshot};

/// Most names of unknown flags counted between two posts.
const UNKNOWN_NAMES: usize = 1_000;

/// Most flag names a failed post keeps for the next.
const PENDING_NAMES: usize = 20_000;

/// One flag's counts since the last post.
#[derive(Debug)]
pub(crate) struct FlagCounters {
    yes: AtomicU64,
    no: AtomicU64,
    /// Every variant name the flag can answer, `disabled` included.
    variants: Box<[(Box<str>, AtomicU64)]>,
}

impl FlagCounters {
    fn new(variants: Vec<Box<str>>) -> Self {
        Self {
            yes: AtomicU64::new(0),
            no: AtomicU64::new(0),
            variants: variants
                .into_iter()
                .map(|name| (name, AtomicU64::new(0)))
                .collect(),
        }
    }

    fn same_variants(&self, names: &[Box<str>]) -> bool {
        self.variants.len() == names.len() && self.variants.iter().zip(names).all(|((a, _), b)| a == b)
    }

    /// Takes the counts, leaving zeros.
    fn take(&self) -> Tally {
        Tally {
            yes: self.yes.swap(0, Ordering::Relaxed),
            no: self.no.swap(0, Ordering::Relaxed),
            variants: self
                .variants
                .iter()
                .filter_map(|(name, count)| {
                    let count = count.swap(0, Ordering::Relaxed);
                    (count > 0).then(|| (name.to_string(), count))
                })
                .collect(),
        }
    }
}

/// Counts per flag, by name.
pub(crate) type Counters = FxHashMap<Box<str>, Arc<FlagCounters>>;

/// Counts as posted: `{yes, no, variants}`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Tally {
    yes: u64,
    no: u64,
    variants: BTreeMap<String, u64>,
}

impl Tally {
    fn is_empty(&self) -> bool {
        self.yes == 0 && self.no == 0 && self.variants.is_empty()
    }

    fn add(&mut self, other: Tally) {
        self.yes += other.yes;
        self.no += other.no;
        for (name, count) in other.variants {
            *self.variants.entry(name).or_default() += count;
        }
    }
}

/// What is counted beside the flags' own counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    /// Whether usage is posted at all; when not, nothing is counted.
    enabled: bool,
    /// Flags asked for that the client does not know.
    unknown: Mutex<FxHashMap<String, Tally>>,
    /// Counters of flags a newer state dropped or changed, still to be posted once.
    retired: Mutex<Vec<(Box<str>, Arc<FlagCounters>)>>,
    /// Counts a failed post kept for the next, and when their bucket began.
    pending: Mutex<Pending>,
}

#[derive(Debug, Default)]
struct Pending {
    start: Option<DateTime<Utc>>,
    toggles: BTreeMap<String, Tally>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Metrics {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            ..Self::default()
        }
    }

    /// Counts one evaluation of `name`, whose flag (when the client knows it) has `ordinal`:
    /// an index into a vector and an atomic add.
    pub fn count(
        &self,
        snapshot: &Snapshot,
        ordinal: Option<usize>,
        name: &str,
        enabled: bool,
        variant: Option<&str>,
    ) {
        if !self.enabled {
            return;
        }
        match ordinal
            .and_then(|ordinal| snapshot.by_ordinal.get(ordinal))
            .and_then(Option::as_ref)
        {
            Some(counters) => {
                let tally = if enabled { &counters.yes } else { &counters.no };
                tally.fetch_add(1, Ordering::Relaxed);
                if let Some(variant) = variant
                    && let Some((_, count)) = counters.variants.iter().find(|(known, _)| &**known == variant)
                {
                    count.fetch_add(1, Ordering::Relaxed);
                }
            }
            None => {
                let mut unknown = lock(&self.unknown);
                if unknown.len() >= UNKNOWN_NAMES && !unknown.contains_key(name) {
                    return;
                }
                let tally = unknown.entry(name.to_owned()).or_default();
                if enabled {
                    tally.yes += 1;
                } else {
                    tally.no += 1;
                }
                if let Some(variant) = variant {
                    *tally.variants.entry(variant.to_owned()).or_default() += 1;
                }
            }
        }
    }

    /// Counters for every flag of `engine`, reusing `previous` ones where the flag's variants
    /// are the same, so counts made meanwhile on the older state are kept.
    pub fn counters_for(engine: &Engine, previous: Option<&Counters>) -> Counters {
        engine
            .features()
            .map(|feature| {
                let mut variants: Vec<Box<str>> = feature
                    .variants
                    .iter()
                    .chain(
                        feature
                            .strategies
                            .iter()
                            .flat_map(|strategy| strategy.variants.iter()),
                    )
                    .map(|variant| variant.name.as_str().into())
                    .chain(std::iter::once("disabled".into()))
                    .collect();
                variants.sort();
                variants.dedup();
                let counters = previous
                    .and_then(|previous| previous.get(feature.name.as_str()))
                    .filter(|counters| counters.same_variants(&variants))
                    .map_or_else(|| Arc::new(FlagCounters::new(variants)), Arc::clone);
                (feature.name.as_str().into(), counters)
            })
            .collect()
    }

    /// Keeps the counters of `previous` that `next` does not reuse, to post them once.
    pub fn retire(&self, previous: &Counters, next: &Counters) {
        if !self.enabled {
            return;
        }
        let mut retired = lock(&self.retired);
        for (name, counters) in previous {
            if next.get(name).is_none_or(|kept| !Arc::ptr_eq(kept, counters)) {
                retired.push((name.clone(), Arc::clone(counters)));
            }
        }
    }

    /// Everything counted since the last take, merged into what a failed post kept.
    fn take(&self, current: &Counters) -> (DateTime<Utc>, BTreeMap<String, Tally>) {
        let mut pending = lock(&self.pending);
        let start = *pending.start.get_or_insert_with(Utc::now);
        let mut toggles = std::mem::take(&mut pending.toggles);
        let mut add = |name: &str, tally: Tally| {
            if !tally.is_empty() {
                toggles.entry(name.to_owned()).or_default().add(tally);
            }
        };
        for (name, counters) in current {
            add(name, counters.take());
        }
        for (name, counters) in lock(&self.retired).drain(..) {
            add(&name, counters.take());
        }
        for (name, tally) in lock(&self.unknown).drain() {
            add(&name, tally);
        }
        (start, toggles)
    }

    /// Keeps what a failed post did not deliver, for the next.
    fn keep(&self, start: DateTime<Utc>, toggles: BTreeMap<String, Tally>) {
        let mut pending = lock(&self.pending);
        pending.start = Some(start);
        for (name, tally) in toggles {
            if pending.toggles.len() < PENDING_NAMES || pending.toggles.contains_key(&name) {
                pending.toggles.entry(name).or_default().add(tally);
            }
        }
    }

    fn posted(&self) {
        lock(&self.pending).start = Some(Utc::now());
    }
}

fn timestamp(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Registers, then posts usage every interval until the client stops, and once more then (a
/// process that exits at once may end before that last post). When the server refuses the
/// token to the fetching thread, it stops at once, without registering or posting again, as
/// Unleash's Node SDK stops its metrics with its polling.
pub(crate) fn run(shared: Arc<Shared>) {
    let Some(interval) = shared.config.metrics_interval else {
        return;
    };
    let started = Utc::now();
    lock(&shared.metrics.pending).start = Some(started);
    // Registration is tried at each interval until it succeeds, so a client started while the
    // server is down still registers.
    let mut registered = false;
    loop {
        if !registered {
            if shared.refusal().is_some() {
                return;
            }
            match register(&shared, started, interval) {
                Ok(()) => registered = true,
                Err(error) => shared.report(error),
            }
        }
        let halt = shared.sleep_reporting(interval);
        if halt.refused.is_some() {
            return;
        }
        if let Err(error) = post(&shared) {
            shared.report(error);
        }
        if halt.stopped {
            return;
        }
    }
}

fn register(shared: &Shared, started: DateTime<Utc>, interval: std::time::Duration) -> Result<(), Error> {
    let config = &shared.config;
    let body = json!({
        "appName": config.app_name,
        "instanceId": config.instance_id,
        "connectionId": config.connection_id,
        "sdkVersion": crate::fetch::SDK_VERSION,
        "environment": config.environment,
        "strategies": ["default", "flexibleRollout", "userWithId", "remoteAddress", "applicationHostname", "gradualRolloutRandom", "gradualRolloutSessionId", "gradualRolloutUserId"],
        "started": timestamp(started),
        "interval": interval.as_millis() as u64,
    });
    crate::fetch::post_json(shared, "/client/register", &body)
}

/// Posts what was counted since the last post; nothing when nothing was, or when the server
/// refused the token (that refusal is the answer).
pub(crate) fn post(shared: &Shared) -> Result<(), Error> {
    if let Some(refusal) = shared.refusal() {
        return Err(refusal);
    }
    let current = shared.state.load();
    let (start, toggles) = shared.metrics.take(&current.counters);
    if toggles.is_empty() {
        return Ok(());
    }
    let config = &shared.config;
    let body = json!({
        "appName": config.app_name,
        "instanceId": config.instance_id,
        "connectionId": config.connection_id,
        "environment": config.environment,
        "sdkVersion": crate::fetch::SDK_VERSION,
        "bucket": {
            "start": timestamp(start),
            "stop": timestamp(Utc::now()),
            "toggles": toggles.iter().map(|(name, tally)| (name.clone(), json!({
                "yes": tally.yes,
                "no": tally.no,
                "variants": tally.variants,
            }))).collect::<serde_json::Map<_, _>>(),
        },
    });
    match crate::fetch::post_json(shared, "/client/metrics", &body) {
        Ok(()) => {
            shared.metrics.posted();
            Ok(())
        }
        Err(error) => {
            shared.metrics.keep(start, toggles);
            Err(error)
        }
    }
}
