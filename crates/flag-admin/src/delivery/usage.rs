//! The usage pipeline: what SDKs register and report, aggregated in memory and written in
//! batches.
//!
//! Ingest handlers only add to [`Usage`]'s pending aggregate, under a mutex, with no database
//! work. [`Usage::flush`] swaps the aggregate out and writes it in one transaction
//! (`flag_store::queries::client_metrics::record`, which also applies retention); the server
//! flushes every [`Usage::FLUSH_INTERVAL`], before each admin usage view, and once more when
//! it stops. One flush runs at a time, so a view waits for a flush already under way and then
//! shows every report this replica has taken. A batch that fails to write (nothing of it is
//! written) is merged back and retried by the next flush, up to [`Usage::ATTEMPTS`] times,
//! then dropped and counted. The aggregate is bounded ([`Usage::MAX_COUNTS`],
//! [`Usage::MAX_INSTANCES`], [`Usage::MAX_APPLICATIONS`], [`Usage::MAX_VARIANTS`]), merged-back
//! batches included; reports past a bound are dropped and counted, never allowed to grow
//! memory without limit. The database is bounded too: after each flush the least recently seen
//! rows past the store's caps ([`StorageCaps`]: unknown flags per environment, applications,
//! instances) are evicted and counted ([`Usage::evicted`]).

pub mod types;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DurationRound as _, NaiveDateTime, TimeDelta};
use flag_store::Store;
use flag_store::models::ClientInstanceRow;
use flag_store::queries::client_metrics::{
    self, Batch, Evicted, Recorded, SeenApplication, StorageCaps, UsageCount,
};

use crate::runtime::error::AdminError;

/// The key counts are summed under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CountKey {
    feature_name: String,
    app_name: String,
    environment: String,
    hour: NaiveDateTime,
    projects: Option<Vec<String>>,
}

#[derive(Debug, Default)]
struct Counts {
    yes: i64,
    no: i64,
    variants: BTreeMap<String, i64>,
    reported_at: NaiveDateTime,
}

#[derive(Debug, Default)]
struct Pending {
    applications: HashMap<String, SeenApplication>,
    instances: HashMap<(String, String, String), ClientInstanceRow>,
    counts: HashMap<CountKey, Counts>,
    /// Failed attempts to write the oldest part of this aggregate.
    attempts: u32,
    /// What the entries hold, in bytes, about: their text and a fixed cost per entry.
    bytes: usize,
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.applications.is_empty() && self.instances.is_empty() && self.counts.is_empty()
    }

    /// Whether an entry of `bytes` more fits under [`Usage::MAX_BYTES`]; counts it when it does.
    fn reserve(&mut self, bytes: usize) -> bool {
        pending_reserve(&mut self.bytes, bytes)
    }
}

/// Whether an entry of `bytes` more fits in `held` bytes under [`Usage::MAX_BYTES`]; counts it
/// when it does.
fn pending_reserve(held: &mut usize, bytes: usize) -> bool {
    let total = held.saturating_add(bytes).saturating_add(ENTRY_BYTES);
    if total > Usage::MAX_BYTES {
        return false;
    }
    *held = total;
    true
}

/// What one entry of the aggregate costs beyond its text: its map slot, its key and its row.
const ENTRY_BYTES: usize = 256;

/// An instance's report about itself.
#[derive(Debug, Clone)]
pub struct InstanceReport {
    /// The application.
    pub app_name: String,
    /// The instance.
    pub instance_id: String,
    /// The environment of its token.
    pub environment: String,
    /// The projects of its token; `None` for all.
    pub projects: Option<Vec<String>>,
    /// `backend` or `frontend`.
    pub sdk_type: &'static str,
    /// Its SDK and version.
    pub sdk_version: Option<String>,
    /// Its address.
    pub client_ip: Option<String>,
    /// The strategies it knows, when it registered.
    pub strategies: Vec<String>,
    /// When it started, when it registered.
    pub started: Option<NaiveDateTime>,
    /// Its poll interval in milliseconds, when it registered.
    pub interval_ms: Option<i64>,
}

impl InstanceReport {
    /// A report that says only who the instance is, of which SDK type, and where.
    pub fn new(
        app_name: String,
        instance_id: String,
        environment: String,
        projects: Option<Vec<String>>,
        sdk_type: &'static str,
    ) -> Self {
        Self {
            app_name,
            instance_id,
            environment,
            projects,
            sdk_type,
            sdk_version: None,
            client_ip: None,
            strategies: Vec::new(),
            started: None,
            interval_ms: None,
        }
    }
}

/// One flag's counts in one report.
#[derive(Debug, Clone)]
pub struct FlagCount {
    /// The flag name.
    pub feature_name: String,
    /// Evaluations that were on.
    pub yes: i64,
    /// Evaluations that were off.
    pub no: i64,
    /// Counts by variant.
    pub variants: BTreeMap<String, i64>,
}

/// Pending reports and what happened to earlier ones.
#[derive(Debug, Default)]
pub struct Usage {
    pending: Mutex<Pending>,
    /// Held by the flush under way.
    flushing: tokio::sync::Mutex<()>,
    /// Woken when the aggregate passes half of a bound, so it is written before it fills.
    half_full: tokio::sync::Notify,
    dropped: AtomicU64,
    /// `dropped` as last logged.
    logged: AtomicU64,
    /// What the store keeps at most.
    caps: StorageCaps,
    /// Unknown flag rows evicted past `caps` since the start.
    evicted_unknown_flags: AtomicU64,
    /// Applications evicted past `caps` since the start.
    evicted_applications: AtomicU64,
    /// Instances evicted past `caps` since the start.
    evicted_instances: AtomicU64,
}

impl Usage {
    /// How often the server writes what it aggregated.
    pub const FLUSH_INTERVAL: Duration = Duration::from_secs(5);
    /// Most (flag, application, environment, hour, scope) counts held between flushes.
    pub const MAX_COUNTS: usize = 100_000;
    /// Most instances held between flushes.
    pub const MAX_INSTANCES: usize = 10_000;
    /// Most applications held between flushes.
    pub const MAX_APPLICATIONS: usize = 5_000;
    /// Most variant names counted per flag and hour.
    pub const MAX_VARIANTS: usize = 64;
    /// Most memory the aggregate holds between flushes, in bytes, about; reports past it are
    /// dropped and counted.
    pub const MAX_BYTES: usize = 4 << 20;
    /// Writes a batch is given before it is dropped.
    pub const ATTEMPTS: u32 = 3;
    /// Most rows written in one transaction.
    pub const ROWS_PER_WRITE: usize = 500;

    /// A pipeline whose flushes keep the store within `caps` instead of the production caps
    /// that [`Usage::default`] keeps.
    pub fn with_caps(caps: StorageCaps) -> Self {
        Self {
            caps,
            ..Self::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until the aggregate passes half of one of its bounds: the server then flushes at
    /// once instead of at the next interval, so a flood of reports is written as it comes and
    /// fills the aggregate only when the database cannot keep up.
    pub async fn half_full(&self) {
        self.half_full.notified().await;
    }

    /// Wakes [`Usage::half_full`] when `pending` passes half of a bound.
    fn note_size(&self, pending: &Pending) {
        if pending.bytes > Self::MAX_BYTES / 2
            || pending.counts.len() > Self::MAX_COUNTS / 2
            || pending.instances.len() > Self::MAX_INSTANCES / 2
            || pending.applications.len() > Self::MAX_APPLICATIONS / 2
        {
            self.half_full.notify_one();
        }
    }

    /// Reports dropped because a bound was reached, since the server started.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Rows evicted from the store past its caps since the server started, by table.
    pub fn evicted(&self) -> Evicted {
        Evicted {
            unknown_flags: self.evicted_unknown_flags.load(Ordering::Relaxed),
            applications: self.evicted_applications.load(Ordering::Relaxed),
            instances: self.evicted_instances.load(Ordering::Relaxed),
        }
    }

    /// Notes an instance (and its application) as heard from `now`.
    pub fn instance(&self, report: InstanceReport, now: NaiveDateTime) -> Result<(), AdminError> {
        let row = ClientInstanceRow::new(
            report.app_name.clone(),
            report.instance_id,
            report.environment,
            report.projects.as_deref(),
            report.sdk_type,
            now,
        )?;
        let row = ClientInstanceRow {
            sdk_version: report.sdk_version,
            client_ip: report.client_ip,
            started: report.started,
            interval_ms: report.interval_ms,
            ..row
        };
        let application = SeenApplication {
            app_name: report.app_name,
            strategies: report.strategies,
            seen_at: now,
        };
        let mut pending = self.lock();
        self.add_application(&mut pending, application);
        self.add_instance(&mut pending, row);
        self.note_size(&pending);
        Ok(())
    }

    fn add_application(&self, pending: &mut Pending, application: SeenApplication) {
        if let Some(held) = pending.applications.get_mut(&application.app_name) {
            held.seen_at = held.seen_at.max(application.seen_at);
            if held.strategies.is_empty() {
                held.strategies = application.strategies;
            }
        } else if pending.applications.len() < Self::MAX_APPLICATIONS
            && pending.reserve(
                application.app_name.len() * 2
                    + application.strategies.iter().map(String::len).sum::<usize>(),
            )
        {
            pending
                .applications
                .insert(application.app_name.clone(), application);
        } else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Adds what `row` says of an instance: newer facts win, facts it does not give are kept.
    fn add_instance(&self, pending: &mut Pending, row: ClientInstanceRow) {
        let key = (
            row.app_name.clone(),
            row.instance_id.clone(),
            row.environment.clone(),
        );
        let Some(held) = pending.instances.get_mut(&key) else {
            let text = [
                Some(&row.app_name),
                Some(&row.instance_id),
                Some(&row.environment),
                row.sdk_version.as_ref(),
                row.client_ip.as_ref(),
                Some(&row.projects),
            ]
            .into_iter()
            .flatten()
            .map(String::len)
            .sum::<usize>();
            if pending.instances.len() < Self::MAX_INSTANCES && pending.reserve(text * 2) {
                pending.instances.insert(key, row);
            } else {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            return;
        };
        let (newer, older) = if row.last_seen >= held.last_seen {
            (row, held.clone())
        } else {
            (held.clone(), row)
        };
        *held = ClientInstanceRow {
            sdk_version: newer.sdk_version.or(older.sdk_version),
            client_ip: newer.client_ip.or(older.client_ip),
            started: newer.started.or(older.started),
            interval_ms: newer.interval_ms.or(older.interval_ms),
            created_at: newer.created_at.min(older.created_at),
            ..newer
        };
    }

    fn add_count(&self, pending: &mut Pending, key: CountKey, counts: Counts) {
        if !pending.counts.contains_key(&key) {
            let text = key.feature_name.len()
                + key.app_name.len()
                + key.environment.len()
                + key.projects.iter().flatten().map(String::len).sum::<usize>();
            if pending.counts.len() >= Self::MAX_COUNTS || !pending.reserve(text) {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
        let held = pending.counts.entry(key).or_default();
        held.yes = held.yes.saturating_add(counts.yes);
        held.no = held.no.saturating_add(counts.no);
        held.reported_at = held.reported_at.max(counts.reported_at);
        for (variant, n) in counts.variants {
            if !held.variants.contains_key(&variant)
                && (held.variants.len() >= Self::MAX_VARIANTS
                    || !pending_reserve(&mut pending.bytes, variant.len()))
            {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let total = held.variants.entry(variant).or_default();
            *total = total.saturating_add(n);
        }
    }

    /// Adds one report's counts, for the hour `reported_at` falls in. Counts of zero are
    /// skipped, as Unleash skips them.
    pub fn count(
        &self,
        app_name: &str,
        environment: &str,
        projects: Option<&[String]>,
        reported_at: NaiveDateTime,
        counts: impl IntoIterator<Item = FlagCount>,
    ) {
        let hour = reported_at
            .duration_trunc(TimeDelta::hours(1))
            .unwrap_or(reported_at);
        let mut pending = self.lock();
        for count in counts {
            if count.yes == 0 && count.no == 0 {
                continue;
            }
            let key = CountKey {
                feature_name: count.feature_name,
                app_name: app_name.to_owned(),
                environment: environment.to_owned(),
                hour,
                projects: projects.map(<[String]>::to_vec),
            };
            let counts = Counts {
                yes: count.yes,
                no: count.no,
                variants: count.variants,
                reported_at,
            };
            self.add_count(&mut pending, key, counts);
        }
        self.note_size(&pending);
    }

    /// Writes everything pending, in parts of at most [`Usage::ROWS_PER_WRITE`] rows, each
    /// its own transaction, so a write of the admin API waits at most for one small part. One
    /// flush runs at a time: a flush that finds another under way waits for it, then writes
    /// what arrived since.
    ///
    /// A part the database refuses is written again row by row, so one bad row costs only
    /// itself, never another client's usage; a row that still fails is dropped and counted.
    /// When the database is unavailable, what was not written is kept for the next flush, up
    /// to [`Usage::ATTEMPTS`] attempts. What is written is dated `now`.
    pub async fn flush(&self, store: &Store, now: NaiveDateTime) -> Result<Recorded, AdminError> {
        let _flushing = self.flushing.lock().await;
        let pending = std::mem::take(&mut *self.lock());
        if pending.is_empty() {
            return Ok(Recorded::default());
        }
        let attempts = pending.attempts;
        let mut recorded = Recorded::default();
        let mut failure = None;
        let mut unwritten = Vec::new();
        for part in parts(pending, Self::ROWS_PER_WRITE) {
            if failure.is_some() {
                unwritten.push(part);
                continue;
            }
            match write(store, part.clone(), now).await {
                Ok(done) => add(&mut recorded, done),
                Err(error @ AdminError::Unavailable) => {
                    failure = Some(error);
                    unwritten.push(part);
                }
                Err(error) => {
                    tracing::warn!(%error, "a part of the SDK usage was refused; writing its rows one by one");
                    for row in parts_of(part, 1) {
                        if failure.is_some() {
                            unwritten.push(row);
                            continue;
                        }
                        match write(store, row.clone(), now).await {
                            Ok(done) => add(&mut recorded, done),
                            Err(error @ AdminError::Unavailable) => {
                                failure = Some(error);
                                unwritten.push(row);
                            }
                            Err(error) => {
                                self.dropped.fetch_add(1, Ordering::Relaxed);
                                tracing::warn!(%error, "one SDK usage row was refused by the database; dropped");
                            }
                        }
                    }
                }
            }
        }
        if failure.is_none() {
            let caps = self.caps;
            let pruned = crate::runtime::db::run(store, move |conn| {
                client_metrics::prune(conn, now)?;
                client_metrics::evict(conn, caps)
            })
            .await;
            match pruned {
                Ok(evicted) => self.count_evicted(evicted),
                Err(error) => {
                    tracing::warn!(%error, "pruning SDK usage failed; the next flush prunes again");
                }
            }
        }
        if let Some(error) = &failure {
            let lost: usize = unwritten.iter().map(Batch::len).sum();
            if attempts + 1 >= Self::ATTEMPTS {
                self.dropped.fetch_add(lost as u64, Ordering::Relaxed);
                tracing::error!(%error, lost, "SDK usage could not be written in {} attempts; dropped", Self::ATTEMPTS);
            } else {
                self.merge_back(unwritten, attempts + 1);
            }
        }
        let dropped = self.dropped();
        if self.logged.swap(dropped, Ordering::Relaxed) != dropped {
            tracing::warn!(
                dropped,
                "SDK reports dropped since the start, over the in-memory bounds or unwritable"
            );
        }
        failure.map_or(Ok(recorded), Err)
    }

    /// Hands what is pending to `send`, in parts of at most `size` rows, instead of writing it:
    /// how an edge passes its SDKs' usage to its upstream. One forward or flush runs at a time.
    /// A part `send` fails, and every part after it, is merged back into the aggregate for the
    /// next forward, within the aggregate's bounds (what no longer fits is dropped and counted),
    /// so an upstream that is away for a while loses nothing until the bounds are reached, and
    /// memory never grows past them. Returns the rows sent.
    pub async fn forward<F, Fut>(&self, size: usize, mut send: F) -> Result<usize, AdminError>
    where
        F: FnMut(Batch) -> Fut,
        Fut: Future<Output = Result<(), AdminError>>,
    {
        let _flushing = self.flushing.lock().await;
        let pending = std::mem::take(&mut *self.lock());
        if pending.is_empty() {
            return Ok(0);
        }
        let attempts = pending.attempts;
        let mut sent = 0;
        let mut failure = None;
        let mut unsent = Vec::new();
        for part in parts(pending, size) {
            if failure.is_some() {
                unsent.push(part);
                continue;
            }
            let rows = part.len();
            match send(part.clone()).await {
                Ok(()) => sent += rows,
                Err(error) => {
                    failure = Some(error);
                    unsent.push(part);
                }
            }
        }
        if failure.is_some() {
            self.merge_back(unsent, attempts.saturating_add(1));
        }
        let dropped = self.dropped();
        if self.logged.swap(dropped, Ordering::Relaxed) != dropped {
            tracing::warn!(
                dropped,
                "SDK reports dropped since the start, over the in-memory bounds or unsendable"
            );
        }
        failure.map_or(Ok(sent), Err)
    }

    /// Adds what one flush evicted to the totals, and logs it.
    fn count_evicted(&self, evicted: Evicted) {
        if evicted.total() == 0 {
            return;
        }
        self.evicted_unknown_flags
            .fetch_add(evicted.unknown_flags, Ordering::Relaxed);
        self.evicted_applications
            .fetch_add(evicted.applications, Ordering::Relaxed);
        self.evicted_instances
            .fetch_add(evicted.instances, Ordering::Relaxed);
        tracing::warn!(
            unknown_flags = evicted.unknown_flags,
            applications = evicted.applications,
            instances = evicted.instances,
            "SDK usage past the store's caps; the least recently seen rows were evicted"
        );
    }

    /// Returns parts that could not be written to the pending aggregate, within its bounds.
    fn merge_back(&self, parts: Vec<Batch>, attempts: u32) {
        let mut pending = self.lock();
        pending.attempts = pending.attempts.max(attempts);
        for part in parts {
            for application in part.applications {
                self.add_application(&mut pending, application);
            }
            for instance in part.instances {
                self.add_instance(&mut pending, instance);
            }
            for count in part.usage {
                let key = CountKey {
                    feature_name: count.feature_name,
                    app_name: count.app_name,
                    environment: count.environment,
                    hour: count.hour,
                    projects: count.projects,
                };
                let counts = Counts {
                    yes: count.yes,
                    no: count.no,
                    variants: count.variants,
                    reported_at: count.reported_at,
                };
                self.add_count(&mut pending, key, counts);
            }
        }
    }
}

/// Writes one part in one transaction.
async fn write(store: &Store, part: Batch, now: NaiveDateTime) -> Result<Recorded, AdminError> {
    crate::runtime::db::run(store, move |conn| client_metrics::record(conn, &part, now)).await
}

fn add(total: &mut Recorded, part: Recorded) {
    total.counted += part.counted;
    total.unknown += part.unknown;
    total.out_of_scope += part.out_of_scope;
}

/// The pending aggregate as batches of at most `size` rows: applications first, then instances,
/// then usage, so a usage row is never written before its application.
fn parts(pending: Pending, size: usize) -> Vec<Batch> {
    let batch = Batch {
        applications: pending.applications.into_values().collect(),
        instances: pending.instances.into_values().collect(),
        usage: pending
            .counts
            .into_iter()
            .map(|(key, counts)| UsageCount {
                feature_name: key.feature_name,
                app_name: key.app_name,
                environment: key.environment,
                hour: key.hour,
                projects: key.projects,
                yes: counts.yes,
                no: counts.no,
                variants: counts.variants,
                reported_at: counts.reported_at,
            })
            .collect(),
    };
    parts_of(batch, size)
}

/// `batch` cut into batches of at most `size` rows, in its order.
fn parts_of(batch: Batch, size: usize) -> Vec<Batch> {
    let size = size.max(1);
    let mut parts = Vec::new();
    let mut part = Batch::default();
    let full = |part: &mut Batch, parts: &mut Vec<Batch>| {
        if part.len() >= size {
            parts.push(std::mem::take(part));
        }
    };
    for application in batch.applications {
        part.applications.push(application);
        full(&mut part, &mut parts);
    }
    for instance in batch.instances {
        part.instances.push(instance);
        full(&mut part, &mut parts);
    }
    for count in batch.usage {
        part.usage.push(count);
        full(&mut part, &mut parts);
    }
    if !part.is_empty() {
        parts.push(part);
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(hour: u32) -> NaiveDateTime {
        chrono::NaiveDate::from_ymd_opt(2026, 11, 24)
            .and_then(|day| day.and_hms_opt(hour, 30, 0))
            .unwrap_or_default()
    }

    fn count(name: &str, variants: &[(&str, i64)]) -> FlagCount {
        FlagCount {
            feature_name: name.into(),
            yes: 1,
            no: 2,
            variants: variants.iter().map(|(name, n)| ((*name).into(), *n)).collect(),
        }
    }

    fn report(app: &str, instance: &str, sdk: Option<&str>, strategies: &[&str]) -> InstanceReport {
        InstanceReport {
            app_name: app.into(),
            instance_id: instance.into(),
            environment: "development".into(),
            projects: None,
            sdk_type: "backend",
            sdk_version: sdk.map(str::to_owned),
            client_ip: None,
            strategies: strategies.iter().map(|name| (*name).to_owned()).collect(),
            started: None,
            interval_ms: Some(15_000),
        }
    }

    #[test]
    fn counts_add_up_per_flag_application_environment_and_hour() {
        let usage = Usage::default();
        usage.count("web", "development", None, at(10), [count("f", &[("blue", 1)])]);
        usage.count(
            "web",
            "development",
            None,
            at(10),
            [count("f", &[("blue", 2), ("red", 1)])],
        );
        usage.count("web", "development", None, at(11), [count("f", &[])]);
        usage.count(
            "web",
            "development",
            None,
            at(11),
            [FlagCount {
                yes: 0,
                no: 0,
                ..count("zero", &[])
            }],
        );
        let pending = usage.lock();
        assert_eq!(
            pending.counts.len(),
            2,
            "one count per hour; zero counts are skipped"
        );
        let ten = pending
            .counts
            .iter()
            .find(|(key, _)| key.hour.format("%H").to_string() == "10")
            .map(|(_, counts)| (counts.yes, counts.no, counts.variants.clone()));
        assert_eq!(ten, Some((2, 4, [("blue".into(), 3), ("red".into(), 1)].into())));
    }

    #[tokio::test]
    async fn a_forward_that_fails_keeps_everything_for_the_next_and_one_that_succeeds_takes_it()
    -> Result<(), AdminError> {
        let usage = Usage::default();
        usage.instance(
            report("web", "i-1", Some("unleash-node-sdk:6.12.1"), &["default"]),
            at(10),
        )?;
        usage.count("web", "development", None, at(10), [count("f", &[("blue", 1)])]);
        let refused = usage.forward(1, |_| async { Err(AdminError::Unavailable) }).await;
        assert!(matches!(refused, Err(AdminError::Unavailable)));
        assert_eq!(usage.dropped(), 0, "nothing is lost while the bounds hold");
        let mut sent = Vec::new();
        let rows = usage
            .forward(1, |batch| {
                sent.push(batch);
                async { Ok(()) }
            })
            .await?;
        assert_eq!(rows, 3, "the application, the instance and the count");
        assert_eq!(sent.len(), 3, "in parts of the size asked for");
        let usage_rows: Vec<&UsageCount> = sent.iter().flat_map(|batch| &batch.usage).collect();
        assert_eq!(usage_rows.len(), 1);
        assert_eq!((usage_rows[0].yes, usage_rows[0].no), (1, 2));
        assert_eq!(
            usage.forward(1, |_| async { Ok(()) }).await?,
            0,
            "nothing is sent twice"
        );
        Ok(())
    }

    #[test]
    fn the_aggregate_is_bounded_in_entries_and_in_bytes() {
        let usage = Usage::default();
        let variants: Vec<(String, i64)> = (0..Usage::MAX_VARIANTS + 5)
            .map(|n| (format!("v{n}"), 1))
            .collect();
        let borrowed: Vec<(&str, i64)> = variants.iter().map(|(name, n)| (name.as_str(), *n)).collect();
        usage.count("web", "development", None, at(10), [count("f", &borrowed)]);
        assert_eq!(usage.dropped(), 5);
        // More counts than either bound takes: what is held stays within both, and every
        // count not held is counted as dropped.
        let offered = Usage::MAX_COUNTS + 10;
        usage.count(
            "web",
            "development",
            None,
            at(10),
            (0..offered).map(|n| count(&format!("flag-{n}"), &[])),
        );
        let held = usage.lock().counts.len();
        assert!(held <= Usage::MAX_COUNTS && held > 1_000, "{held} counts held");
        assert!(usage.lock().bytes <= Usage::MAX_BYTES);
        assert_eq!(usage.dropped(), (5 + offered + 1 - held) as u64);
        // With the bytes spent, new applications are dropped too; a fresh aggregate takes
        // applications up to their own bound.
        let usage = Usage::default();
        for n in 0..Usage::MAX_APPLICATIONS + 3 {
            usage
                .instance(report(&format!("app-{n}"), "i", None, &[]), at(10))
                .unwrap_or_default();
        }
        assert_eq!(usage.lock().applications.len(), Usage::MAX_APPLICATIONS);
        assert!(usage.lock().instances.len() <= Usage::MAX_INSTANCES);
        assert!(usage.lock().bytes <= Usage::MAX_BYTES);
    }

    #[test]
    fn a_merged_back_batch_keeps_what_the_registration_said() {
        let usage = Usage::default();
        usage
            .instance(
                report("web", "i-1", Some("unleash-node-sdk:6.12.1"), &["default"]),
                at(10),
            )
            .unwrap_or_default();
        let batch = std::mem::take(&mut *usage.lock());
        // A metrics report arrives while the batch is being written, and the write fails.
        let mut metrics_only = report("web", "i-1", None, &[]);
        metrics_only.interval_ms = None;
        usage.instance(metrics_only, at(11)).unwrap_or_default();
        usage.merge_back(parts(batch, Usage::ROWS_PER_WRITE), 1);
        let pending = usage.lock();
        let instance = pending.instances.values().next().cloned();
        assert_eq!(
            instance.map(|row| (row.sdk_version, row.interval_ms, row.last_seen)),
            Some((Some("unleash-node-sdk:6.12.1".into()), Some(15_000), at(11)))
        );
        assert_eq!(
            pending.applications.get("web").map(|app| app.strategies.clone()),
            Some(vec!["default".into()])
        );
        assert_eq!(pending.attempts, 1);
    }

    #[tokio::test]
    async fn passing_half_of_a_bound_asks_for_a_flush_at_once() {
        let usage = Usage::default();
        let below = Usage::MAX_APPLICATIONS / 2;
        for n in 0..below {
            usage
                .instance(report(&format!("app-{n}"), "i", None, &[]), at(10))
                .unwrap_or_default();
        }
        let asked = tokio::time::timeout(Duration::from_millis(50), usage.half_full()).await;
        assert!(asked.is_err(), "half of a bound is not yet past it");
        usage
            .instance(report("one-more", "i", None, &[]), at(10))
            .unwrap_or_default();
        let asked = tokio::time::timeout(Duration::from_millis(50), usage.half_full()).await;
        assert!(
            asked.is_ok(),
            "past half of the applications' bound, a flush is asked for"
        );
    }

    #[tokio::test]
    async fn a_flush_evicts_past_the_stores_caps_and_counts_what_it_evicted()
    -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(Usage::default().caps, StorageCaps::default());
        let scratch = flag_store::scratch::Scratch::new()?;
        let store = scratch.open()?;
        let usage = Usage::with_caps(StorageCaps {
            unknown_flags_per_environment: 2,
            applications: 3,
            instances: 4,
        });
        let now = crate::now();
        for n in 0..5 {
            usage.instance(report(&format!("app-{n}"), "i", None, &[]), now)?;
        }
        usage.count(
            "app-0",
            "development",
            None,
            now,
            (0..4).map(|n| count(&format!("unknown-{n}"), &[])),
        );
        usage.flush(&store, crate::now()).await?;
        assert_eq!(
            usage.evicted(),
            Evicted {
                unknown_flags: 2,
                applications: 2,
                instances: 1,
            }
        );
        // The totals add up over flushes: three more names, past a full cap, evict three.
        usage.count(
            "app-0",
            "development",
            None,
            now + TimeDelta::seconds(1),
            (4..7).map(|n| count(&format!("unknown-{n}"), &[])),
        );
        usage.flush(&store, crate::now()).await?;
        assert_eq!(usage.evicted().unknown_flags, 5);
        assert_eq!(usage.evicted().total(), 8);
        Ok(())
    }

    #[test]
    fn a_flush_is_cut_into_small_parts_applications_first() {
        let usage = Usage::default();
        for n in 0..3 {
            usage
                .instance(report(&format!("app-{n}"), "i", None, &[]), at(10))
                .unwrap_or_default();
        }
        usage.count(
            "app-0",
            "development",
            None,
            at(10),
            (0..4).map(|n| count(&format!("flag-{n}"), &[])),
        );
        let pending = std::mem::take(&mut *usage.lock());
        let cut = parts(pending, 4);
        let sizes: Vec<usize> = cut.iter().map(Batch::len).collect();
        assert_eq!(sizes, [4, 4, 2]);
        assert_eq!(cut[0].applications.len(), 3, "applications come first");
        assert!(cut.iter().skip(1).all(|part| part.applications.is_empty()));
    }
}
