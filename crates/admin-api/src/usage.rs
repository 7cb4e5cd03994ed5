//! The usage pipeline: what SDKs register and report, aggregated in memory and written in
//! batches.
//!
//! Ingest handlers only add to [`Usage`]'s pending aggregate, under a mutex, with no database
//! work. [`Usage::flush`] swaps the aggregate out and writes it in one transaction
//! (`flag_store::queries::client_metrics::record`); the server flushes every
//! [`Usage::FLUSH_INTERVAL`], before each admin usage view (so a view shows every report this
//! replica has taken), and once more when it stops. A batch that fails to write is merged back
//! and retried by the next flush. The aggregate is bounded ([`Usage::MAX_COUNTS`],
//! [`Usage::MAX_INSTANCES`], [`Usage::MAX_VARIANTS`]); reports past a bound are dropped and
//! counted, never allowed to grow memory without limit.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DurationRound as _, NaiveDateTime, TimeDelta};
use flag_store::Store;
use flag_store::models::ClientInstanceRow;
use flag_store::queries::client_metrics::{self, Batch, Recorded, SeenApplication, UsageCount};

use crate::error::ApiError;

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
}

impl Pending {
    fn is_empty(&self) -> bool {
        self.applications.is_empty() && self.instances.is_empty() && self.counts.is_empty()
    }
}

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
    dropped: AtomicU64,
}

impl Usage {
    /// How often the server writes what it aggregated.
    pub const FLUSH_INTERVAL: Duration = Duration::from_secs(5);
    /// Most (flag, application, environment, hour, scope) counts held between flushes.
    pub const MAX_COUNTS: usize = 100_000;
    /// Most instances held between flushes.
    pub const MAX_INSTANCES: usize = 20_000;
    /// Most variant names counted per flag and hour.
    pub const MAX_VARIANTS: usize = 64;

    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reports dropped because a bound was reached, since the server started.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Notes an instance (and its application) as heard from `now`.
    pub fn instance(&self, report: InstanceReport, now: NaiveDateTime) -> Result<(), ApiError> {
        let projects = serde_json::to_string(report.projects.as_deref().unwrap_or(&["*".to_owned()]))
            .map_err(|error| ApiError::Internal(error.to_string()))?;
        let mut pending = self.lock();
        let application = pending
            .applications
            .entry(report.app_name.clone())
            .or_insert_with(|| SeenApplication {
                app_name: report.app_name.clone(),
                strategies: Vec::new(),
                seen_at: now,
            });
        application.seen_at = now;
        if application.strategies.is_empty() {
            application.strategies.clone_from(&report.strategies);
        }
        let key = (
            report.app_name.clone(),
            report.instance_id.clone(),
            report.environment.clone(),
        );
        if !pending.instances.contains_key(&key) && pending.instances.len() >= Self::MAX_INSTANCES {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        let instance = pending.instances.entry(key).or_insert_with(|| ClientInstanceRow {
            app_name: report.app_name,
            instance_id: report.instance_id,
            environment: report.environment,
            sdk_version: None,
            sdk_type: report.sdk_type.into(),
            client_ip: None,
            projects: projects.clone(),
            started: None,
            interval_ms: None,
            created_at: now,
            last_seen: now,
        });
        instance.last_seen = now;
        instance.sdk_type = report.sdk_type.into();
        instance.projects = projects;
        instance.sdk_version = report.sdk_version.or(instance.sdk_version.take());
        instance.client_ip = report.client_ip.or(instance.client_ip.take());
        instance.started = report.started.or(instance.started);
        instance.interval_ms = report.interval_ms.or(instance.interval_ms);
        Ok(())
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
            if !pending.counts.contains_key(&key) && pending.counts.len() >= Self::MAX_COUNTS {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            let held = pending.counts.entry(key).or_default();
            held.yes = held.yes.saturating_add(count.yes);
            held.no = held.no.saturating_add(count.no);
            held.reported_at = held.reported_at.max(reported_at);
            for (variant, n) in count.variants {
                if held.variants.len() >= Self::MAX_VARIANTS && !held.variants.contains_key(&variant) {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let total = held.variants.entry(variant).or_default();
                *total = total.saturating_add(n);
            }
        }
    }

    /// Writes everything pending in one transaction; on failure, keeps it for the next flush.
    pub async fn flush(&self, store: &Store) -> Result<Recorded, ApiError> {
        let pending = std::mem::take(&mut *self.lock());
        if pending.is_empty() {
            return Ok(Recorded::default());
        }
        let batch = Batch {
            applications: pending.applications.values().cloned().collect(),
            instances: pending.instances.values().cloned().collect(),
            usage: pending
                .counts
                .iter()
                .map(|(key, counts)| UsageCount {
                    feature_name: key.feature_name.clone(),
                    app_name: key.app_name.clone(),
                    environment: key.environment.clone(),
                    hour: key.hour,
                    projects: key.projects.clone(),
                    yes: counts.yes,
                    no: counts.no,
                    variants: counts.variants.clone(),
                    reported_at: counts.reported_at,
                })
                .collect(),
        };
        let now = crate::now();
        match crate::db::run(store, move |conn| {
            let recorded = client_metrics::record(conn, &batch, now)?;
            client_metrics::prune(conn, now)?;
            Ok(recorded)
        })
        .await
        {
            Ok(recorded) => Ok(recorded),
            Err(error) => {
                self.merge_back(pending);
                Err(error)
            }
        }
    }

    /// Returns a batch that failed to write to the pending aggregate.
    fn merge_back(&self, batch: Pending) {
        let mut pending = self.lock();
        for (name, application) in batch.applications {
            pending.applications.entry(name).or_insert(application);
        }
        for (key, instance) in batch.instances {
            pending.instances.entry(key).or_insert(instance);
        }
        for (key, counts) in batch.counts {
            let held = pending.counts.entry(key).or_default();
            held.yes = held.yes.saturating_add(counts.yes);
            held.no = held.no.saturating_add(counts.no);
            held.reported_at = held.reported_at.max(counts.reported_at);
            for (variant, n) in counts.variants {
                let total = held.variants.entry(variant).or_default();
                *total = total.saturating_add(n);
            }
        }
    }
}

/// Flushes `state`'s usage every [`Usage::FLUSH_INTERVAL`], for as long as the server runs.
pub async fn flush_periodically(state: actix_web::web::Data<crate::AppState>) {
    let mut interval = actix_web::rt::time::interval(Usage::FLUSH_INTERVAL);
    loop {
        interval.tick().await;
        if let Err(error) = state.usage.flush(&state.store).await {
            tracing::warn!(%error, "writing SDK usage failed; it is kept for the next flush");
        }
    }
}
