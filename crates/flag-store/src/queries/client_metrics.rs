//! What SDKs report: applications, instances, hourly usage and unknown flag names. The server
//! aggregates reports in memory and hands them here in batches ([`record`]); [`prune`] keeps
//! the tables to their retention and [`evict`] to their caps ([`StorageCaps`]), so a leaked
//! token reporting without end cannot grow the database without end.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{Duration, NaiveDateTime};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel::upsert::excluded;

use crate::connection::{Backend, DbConnection};
use crate::error::StoreError;
use crate::models::{ClientApplicationRow, ClientInstanceRow, UnknownFlagRow, UsageRow};
use crate::queries::to_json;
use crate::schema::{
    client_applications, client_instances, client_usage, feature_environments, features, unknown_flags,
};

/// Hourly usage is kept this long.
pub const USAGE_RETENTION: Duration = Duration::hours(48);
/// An instance not heard from for this long is forgotten.
pub const INSTANCE_RETENTION: Duration = Duration::days(1);
/// An application not heard from for this long is forgotten.
pub const APPLICATION_RETENTION: Duration = Duration::days(30);
/// An unknown flag name not asked for again for this long is forgotten.
pub const UNKNOWN_FLAG_RETENTION: Duration = Duration::hours(24);
/// How far off the server's clock a report's times may be and still be believed: SDK clocks
/// drift, but not by more than this; further off, a count is filed at the time it arrived.
pub const FUTURE_SKEW: Duration = Duration::hours(1);
/// Most unknown flag rows kept per environment, a row being one name asked for by one
/// application: ten times the flags a large organisation has in use, so a typo or a removed
/// flag is always listed, and a flood of made-up names is not kept beyond it.
pub const STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT: usize = 10_000;
/// Most applications kept: far more than the services even a large organisation runs.
pub const STORED_APPLICATIONS: usize = 10_000;
/// Most instances kept: a few per application for the largest fleets, as instances are
/// forgotten a day after their last report.
pub const STORED_INSTANCES: usize = 50_000;

/// The most rows of SDK reports the store keeps, however recent; [`evict`] deletes the
/// least recently seen beyond them. The server uses [`StorageCaps::default`], the constants
/// above; tests pass smaller ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageCaps {
    /// Unknown flag names per environment, as `(name, application)` rows.
    pub unknown_flags_per_environment: usize,
    /// Applications, in all.
    pub applications: usize,
    /// Instances, in all environments and applications.
    pub instances: usize,
}

impl Default for StorageCaps {
    fn default() -> Self {
        Self {
            unknown_flags_per_environment: STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT,
            applications: STORED_APPLICATIONS,
            instances: STORED_INSTANCES,
        }
    }
}

/// Rows [`evict`] deleted, by table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evicted {
    /// Unknown flag rows.
    pub unknown_flags: u64,
    /// Applications.
    pub applications: u64,
    /// Instances.
    pub instances: u64,
}

impl Evicted {
    /// Rows deleted in all.
    pub fn total(&self) -> u64 {
        self.unknown_flags + self.applications + self.instances
    }
}

/// An application as one report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenApplication {
    /// Its name.
    pub app_name: String,
    /// The strategies it registered with; kept only from the first report that names some.
    pub strategies: Vec<String>,
    /// When it was reported.
    pub seen_at: NaiveDateTime,
}

/// Usage counts of one flag by one application in one environment and hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageCount {
    /// The flag name as the SDK sent it.
    pub feature_name: String,
    /// The application.
    pub app_name: String,
    /// The environment.
    pub environment: String,
    /// The start of the hour.
    pub hour: NaiveDateTime,
    /// The projects the reporting token may see; `None` for all. Counts of flags in other
    /// projects are dropped.
    pub projects: Option<Vec<String>>,
    /// Evaluations that were on.
    pub yes: i64,
    /// Evaluations that were off.
    pub no: i64,
    /// Counts by variant.
    pub variants: BTreeMap<String, i64>,
    /// When it was reported, as the SDK's clock says; for unknown names.
    pub reported_at: NaiveDateTime,
}

/// One batch of reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    /// Applications heard from.
    pub applications: Vec<SeenApplication>,
    /// Instances heard from, with what they said about themselves (`created_at` is ignored
    /// for instances already stored).
    pub instances: Vec<ClientInstanceRow>,
    /// Usage counts.
    pub usage: Vec<UsageCount>,
}

impl Batch {
    /// How many rows it holds.
    pub fn len(&self) -> usize {
        self.applications.len() + self.instances.len() + self.usage.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Usage counts added to a flag.
    pub counted: usize,
    /// Counts for names no flag has, recorded as unknown flags.
    pub unknown: usize,
    /// Counts for flags outside the reporting token's projects, dropped.
    pub out_of_scope: usize,
}

/// Rows read or written per statement: far below either backend's limit on bound values.
const ROWS_PER_STATEMENT: usize = 500;

/// Writes one batch in one transaction: applications and instances are created or touched,
/// usage is added to its hour, unknown names are recorded, and each used flag's `last_seen_at`
/// in its environment becomes `now`. All of it or none is written, so a failed batch can be
/// retried without counting twice. Each table is read once per 500 keys and written with one
/// multi-row upsert per 500 rows, so a batch costs a few statements, not a few per row; the
/// write lock (`BEGIN IMMEDIATE`, or PostgreSQL's advisory lock) makes the read and the write
/// one step. [`prune`] runs apart.
pub fn record(conn: &mut DbConnection, batch: &Batch, now: NaiveDateTime) -> Result<Recorded, StoreError> {
    crate::queries::write(conn, |conn| {
        if let DbConnection::Postgres(postgres) = conn {
            // A plan cached while the tables were small would scan them whole once they grew;
            // the keys read here are few, so each read is planned for the table as it is.
            diesel::connection::SimpleConnection::batch_execute(
                postgres,
                "SET LOCAL plan_cache_mode = force_custom_plan",
            )?;
        }
        touch_applications(conn, &batch.applications)?;
        touch_instances(conn, &batch.instances)?;

        let names: BTreeSet<&String> = batch.usage.iter().map(|count| &count.feature_name).collect();
        let projects = projects_of(conn, &names.into_iter().cloned().collect::<Vec<_>>())?;
        let mut recorded = Recorded::default();
        let mut counted = Vec::new();
        let mut unknown = Vec::new();
        for count in &batch.usage {
            let Some(project) = projects.get(&count.feature_name) else {
                unknown.push(count);
                recorded.unknown += 1;
                continue;
            };
            if count
                .projects
                .as_ref()
                .is_some_and(|allowed| !allowed.iter().any(|allowed| allowed == project))
            {
                recorded.out_of_scope += 1;
                continue;
            }
            counted.push(count);
            recorded.counted += 1;
        }
        add_usage(conn, &counted)?;
        record_unknown(conn, &unknown)?;

        let seen: BTreeSet<(&str, &str)> = counted
            .iter()
            .map(|count| (count.feature_name.as_str(), count.environment.as_str()))
            .collect();
        let kinds: HashMap<String, String> = crate::queries::environments::list(conn)?
            .into_iter()
            .map(|environment| (environment.name, environment.environment_type))
            .collect();
        for (feature, environment) in seen {
            let updated = diesel::update(feature_environments::table.find((feature, environment)))
                .set(feature_environments::last_seen_at.eq(now))
                .returning(feature_environments::enabled)
                .get_results::<bool>(conn)?;
            // A flag SDKs use is at least pre-live; used where it is on in production, live.
            let Some(kind) = kinds.get(environment) else {
                continue;
            };
            crate::queries::lifecycle::enter(conn, feature, "pre-live", now)?;
            if kind == "production" && updated.first() == Some(&true) {
                crate::queries::lifecycle::enter(conn, feature, "live", now)?;
            }
        }
        Ok(recorded)
    })
}

/// Writes `rows`, whole, over any stored under the same key: on a conflict over `$target`,
/// PostgreSQL sets `$set` (in terms of `excluded`), which names every column a stored row may
/// change. Statements of [`ROWS_PER_STATEMENT`] rows; Diesel builds multi-row inserts for one
/// backend at a time, so each statement is built for the connection's own.
macro_rules! upsert_rows {
    ($conn:expr, $table:expr, $rows:expr, $target:expr, $set:expr) => {{
        for chunk in $rows.chunks(ROWS_PER_STATEMENT) {
            match &mut *$conn {
                DbConnection::Postgres(conn) => diesel::insert_into($table)
                    .values(chunk)
                    .on_conflict($target)
                    .do_update()
                    .set($set)
                    .execute(conn)?,
                // Diesel builds no multi-row upsert for SQLite; the rows are whole and no key
                // refers to them, so replacing a stored row is the same write.
                DbConnection::Sqlite(conn) => diesel::replace_into($table).values(chunk).execute(conn)?,
            };
        }
    }};
}

/// Applications as the batch leaves them: created when new, `seen_at` the latest report's, and
/// the strategies of the first report that named some.
fn touch_applications(conn: &mut DbConnection, applications: &[SeenApplication]) -> Result<(), StoreError> {
    use client_applications::dsl;
    let names: Vec<&String> = applications
        .iter()
        .map(|application| &application.app_name)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut stored: HashMap<String, ClientApplicationRow> = HashMap::new();
    for chunk in names.chunks(ROWS_PER_STATEMENT) {
        for row in dsl::client_applications
            .filter(dsl::app_name.eq_any(chunk))
            .select(ClientApplicationRow::as_select())
            .load::<ClientApplicationRow>(conn)?
        {
            stored.insert(row.app_name.clone(), row);
        }
    }
    let mut touched: BTreeMap<&str, ClientApplicationRow> = BTreeMap::new();
    for application in applications {
        let row = match touched.entry(&application.app_name) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => {
                entry.insert(match stored.remove(&application.app_name) {
                    Some(row) => row,
                    None => ClientApplicationRow {
                        app_name: application.app_name.clone(),
                        strategies: "[]".to_owned(),
                        description: None,
                        url: None,
                        color: None,
                        icon: None,
                        created_at: application.seen_at,
                        seen_at: application.seen_at,
                    },
                })
            }
        };
        if row.strategies == "[]" && !application.strategies.is_empty() {
            row.strategies = to_json("strategies", &application.strategies)?;
        }
        row.seen_at = application.seen_at;
    }
    let rows: Vec<ClientApplicationRow> = touched.into_values().collect();
    upsert_rows!(
        conn,
        dsl::client_applications,
        rows,
        dsl::app_name,
        (
            dsl::strategies.eq(excluded(dsl::strategies)),
            dsl::seen_at.eq(excluded(dsl::seen_at)),
        )
    );
    Ok(())
}

/// Instances as the batch leaves them: what a report leaves out is kept from before,
/// `created_at` is the first report's and `last_seen` the latest.
fn touch_instances(conn: &mut DbConnection, instances: &[ClientInstanceRow]) -> Result<(), StoreError> {
    use client_instances::dsl;
    type Key = (String, String, String);
    let key = |row: &ClientInstanceRow| -> Key {
        (
            row.app_name.clone(),
            row.instance_id.clone(),
            row.environment.clone(),
        )
    };
    let applications: Vec<&String> = distinct(instances.iter().map(|row| &row.app_name));
    let ids: Vec<&String> = distinct(instances.iter().map(|row| &row.instance_id));
    let mut stored: HashMap<Key, ClientInstanceRow> = HashMap::new();
    for applications in applications.chunks(ROWS_PER_STATEMENT) {
        for ids in ids.chunks(ROWS_PER_STATEMENT) {
            for row in dsl::client_instances
                .filter(dsl::app_name.eq_any(applications))
                .filter(dsl::instance_id.eq_any(ids))
                .select(ClientInstanceRow::as_select())
                .load::<ClientInstanceRow>(conn)?
            {
                stored.insert(key(&row), row);
            }
        }
    }
    let mut touched: BTreeMap<Key, ClientInstanceRow> = BTreeMap::new();
    for instance in instances {
        let key = key(instance);
        let before = touched.remove(&key).or_else(|| stored.remove(&key));
        let row = match before {
            None => instance.clone(),
            Some(before) => ClientInstanceRow {
                sdk_version: instance.sdk_version.clone().or(before.sdk_version),
                sdk_type: instance.sdk_type.clone(),
                client_ip: instance.client_ip.clone().or(before.client_ip),
                projects: instance.projects.clone(),
                started: instance.started.or(before.started),
                interval_ms: instance.interval_ms.or(before.interval_ms),
                last_seen: instance.last_seen.max(before.last_seen),
                ..before
            },
        };
        touched.insert(key, row);
    }
    let rows: Vec<ClientInstanceRow> = touched.into_values().collect();
    upsert_rows!(
        conn,
        dsl::client_instances,
        rows,
        (dsl::app_name, dsl::instance_id, dsl::environment),
        (
            dsl::sdk_version.eq(excluded(dsl::sdk_version)),
            dsl::sdk_type.eq(excluded(dsl::sdk_type)),
            dsl::client_ip.eq(excluded(dsl::client_ip)),
            dsl::projects.eq(excluded(dsl::projects)),
            dsl::started.eq(excluded(dsl::started)),
            dsl::interval_ms.eq(excluded(dsl::interval_ms)),
            dsl::last_seen.eq(excluded(dsl::last_seen)),
        )
    );
    Ok(())
}

/// Adds `counts` to their hours.
fn add_usage(conn: &mut DbConnection, counts: &[&UsageCount]) -> Result<(), StoreError> {
    use client_usage::dsl;
    type Key = (String, String, String, NaiveDateTime);
    let features: Vec<&String> = distinct(counts.iter().map(|count| &count.feature_name));
    let applications: Vec<&String> = distinct(counts.iter().map(|count| &count.app_name));
    let hours: Vec<NaiveDateTime> = distinct(counts.iter().map(|count| count.hour));
    let mut rows: BTreeMap<Key, UsageRow> = BTreeMap::new();
    let mut variants: HashMap<Key, BTreeMap<String, i64>> = HashMap::new();
    for features in features.chunks(ROWS_PER_STATEMENT) {
        for applications in applications.chunks(ROWS_PER_STATEMENT) {
            for row in dsl::client_usage
                .filter(dsl::feature_name.eq_any(features))
                .filter(dsl::app_name.eq_any(applications))
                .filter(dsl::hour.eq_any(&hours))
                .select(UsageRow::as_select())
                .load::<UsageRow>(conn)?
            {
                let key = (
                    row.feature_name.clone(),
                    row.app_name.clone(),
                    row.environment.clone(),
                    row.hour,
                );
                variants.insert(key.clone(), row.variants()?);
                rows.insert(key, row);
            }
        }
    }
    let mut touched: BTreeSet<Key> = BTreeSet::new();
    for count in counts {
        let key = (
            count.feature_name.clone(),
            count.app_name.clone(),
            count.environment.clone(),
            count.hour,
        );
        let row = rows.entry(key.clone()).or_insert_with(|| UsageRow {
            feature_name: count.feature_name.clone(),
            app_name: count.app_name.clone(),
            environment: count.environment.clone(),
            hour: count.hour,
            yes: 0,
            no: 0,
            variants: String::new(),
        });
        row.yes += count.yes;
        row.no += count.no;
        let merged = variants.entry(key.clone()).or_default();
        for (name, n) in &count.variants {
            *merged.entry(name.clone()).or_default() += n;
        }
        touched.insert(key);
    }
    let mut written = Vec::with_capacity(touched.len());
    for key in touched {
        if let Some(mut row) = rows.remove(&key) {
            row.variants = to_json("variants", &variants.remove(&key).unwrap_or_default())?;
            written.push(row);
        }
    }
    upsert_rows!(
        conn,
        dsl::client_usage,
        written,
        (dsl::feature_name, dsl::app_name, dsl::environment, dsl::hour),
        (
            dsl::yes.eq(excluded(dsl::yes)),
            dsl::no.eq(excluded(dsl::no)),
            dsl::variants.eq(excluded(dsl::variants)),
        )
    );
    Ok(())
}

/// Records names no flag has, each with the latest time it was asked for.
fn record_unknown(conn: &mut DbConnection, counts: &[&UsageCount]) -> Result<(), StoreError> {
    use unknown_flags::dsl;
    type Key = (String, String, String);
    let names: Vec<&String> = distinct(counts.iter().map(|count| &count.feature_name));
    let applications: Vec<&String> = distinct(counts.iter().map(|count| &count.app_name));
    let mut stored: HashMap<Key, NaiveDateTime> = HashMap::new();
    for names in names.chunks(ROWS_PER_STATEMENT) {
        for applications in applications.chunks(ROWS_PER_STATEMENT) {
            for row in dsl::unknown_flags
                .filter(dsl::name.eq_any(names))
                .filter(dsl::app_name.eq_any(applications))
                .select(UnknownFlagRow::as_select())
                .load::<UnknownFlagRow>(conn)?
            {
                stored.insert((row.name, row.app_name, row.environment), row.seen_at);
            }
        }
    }
    let mut latest: BTreeMap<Key, NaiveDateTime> = BTreeMap::new();
    for count in counts {
        let key = (
            count.feature_name.clone(),
            count.app_name.clone(),
            count.environment.clone(),
        );
        let seen = latest.entry(key).or_insert(count.reported_at);
        *seen = (*seen).max(count.reported_at);
    }
    let rows: Vec<UnknownFlagRow> = latest
        .into_iter()
        .filter(|(key, seen_at)| stored.get(key).is_none_or(|stored| stored < seen_at))
        .map(|((name, app_name, environment), seen_at)| UnknownFlagRow {
            name,
            app_name,
            environment,
            seen_at,
        })
        .collect();
    upsert_rows!(
        conn,
        dsl::unknown_flags,
        rows,
        (dsl::name, dsl::app_name, dsl::environment),
        dsl::seen_at.eq(excluded(dsl::seen_at))
    );
    Ok(())
}

/// The distinct values of `values`, in order.
fn distinct<T: Ord>(values: impl Iterator<Item = T>) -> Vec<T> {
    values.collect::<BTreeSet<T>>().into_iter().collect()
}

/// Deletes what is past its retention, and what claims to be from further ahead than
/// [`FUTURE_SKEW`] (reports past it are filed at the time they arrive, so only rows written
/// before that rule lie there), so every row expires whatever time it claimed; returns how many
/// rows went.
pub fn prune(conn: &mut DbConnection, now: NaiveDateTime) -> Result<usize, StoreError> {
    crate::queries::write(conn, |conn| {
        Ok(diesel::delete(
            client_usage::table.filter(
                client_usage::hour
                    .le(now - USAGE_RETENTION)
                    .or(client_usage::hour.gt(now + FUTURE_SKEW)),
            ),
        )
        .execute(conn)?
            + diesel::delete(
                client_instances::table.filter(client_instances::last_seen.lt(now - INSTANCE_RETENTION)),
            )
            .execute(conn)?
            + diesel::delete(
                client_applications::table
                    .filter(client_applications::seen_at.lt(now - APPLICATION_RETENTION)),
            )
            .execute(conn)?
            + diesel::delete(
                unknown_flags::table.filter(
                    unknown_flags::seen_at
                        .le(now - UNKNOWN_FLAG_RETENTION)
                        .or(unknown_flags::seen_at.gt(now + FUTURE_SKEW)),
                ),
            )
            .execute(conn)?)
    })
}

/// Deletes the least recently seen rows past `caps`: in each environment the unknown flag rows
/// beyond the newest `caps.unknown_flags_per_environment`, then the applications and the
/// instances beyond the newest `caps.applications` and `caps.instances`. Rows seen at the same
/// time are ordered arbitrarily, so exactly the cap is kept. Returns how many rows of each went.
///
/// Each table costs one `DELETE` whose subquery walks its index on the time last seen, newest
/// first, past the rows kept (`unknown_flags (environment, seen_at)`,
/// `client_applications (seen_at)`, `client_instances (last_seen)`), and deletes the rest by
/// their physical address: SQLite's `rowid`, PostgreSQL's `ctid`. The environments of unknown
/// flags are found by one index seek each. A table under its cap costs a walk of its rows'
/// index entries and no write.
pub fn evict(conn: &mut DbConnection, caps: StorageCaps) -> Result<Evicted, StoreError> {
    crate::queries::write(conn, |conn| {
        let mut evicted = Evicted::default();
        let mut after: Option<String> = None;
        loop {
            let mut next = unknown_flags::table
                .select(diesel::dsl::min(unknown_flags::environment))
                .into_boxed();
            if let Some(after) = &after {
                next = next.filter(unknown_flags::environment.gt(after.clone()));
            }
            let Some(environment) = next.first::<Option<String>>(conn)? else {
                break;
            };
            evicted.unknown_flags += delete_past(
                conn,
                "unknown_flags",
                "seen_at",
                Some(&environment),
                caps.unknown_flags_per_environment,
            )?;
            after = Some(environment);
        }
        evicted.applications = delete_past(conn, "client_applications", "seen_at", None, caps.applications)?;
        evicted.instances = delete_past(conn, "client_instances", "last_seen", None, caps.instances)?;
        Ok(evicted)
    })
}

/// Deletes the rows of `table` (in `environment` when given) past the `keep` with the latest
/// `seen`; returns how many went. `table` and `seen` are names from this module, never input.
fn delete_past(
    conn: &mut DbConnection,
    table: &'static str,
    seen: &'static str,
    environment: Option<&str>,
    keep: usize,
) -> Result<u64, StoreError> {
    let keep = i64::try_from(keep).unwrap_or(i64::MAX);
    let sql = match (conn.backend(), environment.is_some()) {
        // `LIMIT -1` is SQLite's "no limit"; an offset needs a limit before it.
        (Backend::Sqlite, scoped) => {
            let filter = if scoped { "WHERE environment = ?" } else { "" };
            format!(
                "DELETE FROM {table} WHERE rowid IN \
                 (SELECT rowid FROM {table} {filter} ORDER BY {seen} DESC LIMIT -1 OFFSET ?)"
            )
        }
        // `ctid = ANY(ARRAY(..))` deletes by a TID scan, one visit per row deleted.
        (Backend::Postgres, scoped) => {
            let (filter, offset) = if scoped {
                ("WHERE environment = $1", "$2")
            } else {
                ("", "$1")
            };
            format!(
                "DELETE FROM {table} WHERE ctid = ANY(ARRAY(\
                 SELECT ctid FROM {table} {filter} ORDER BY {seen} DESC OFFSET {offset}))"
            )
        }
    };
    let query = diesel::sql_query(sql);
    let deleted = match environment {
        Some(environment) => query
            .bind::<Text, _>(environment)
            .bind::<BigInt, _>(keep)
            .execute(conn)?,
        None => query.bind::<BigInt, _>(keep).execute(conn)?,
    };
    Ok(deleted as u64)
}

/// SQL functions both backends have.
mod sql {
    diesel::define_sql_function!(fn lower(text: diesel::sql_types::Text) -> diesel::sql_types::Text);
}
use sql::lower;

/// `term` as a `LIKE` pattern that matches it anywhere, its wildcards escaped with `\`.
fn contains_pattern(term: &str) -> String {
    let mut pattern = String::with_capacity(term.len() + 2);
    pattern.push('%');
    for c in term.to_lowercase().chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

/// Applications whose name contains one of `terms` in any letter case (all when none), by
/// name, with the total matching: the database filters, counts and pages, so only the rows
/// returned are read.
pub fn applications(
    conn: &mut DbConnection,
    terms: &[String],
    offset: i64,
    limit: i64,
    descending: bool,
) -> Result<(Vec<ClientApplicationRow>, i64), StoreError> {
    let patterns: Vec<String> = terms.iter().map(|term| contains_pattern(term)).collect();
    let matching = || {
        let mut query = client_applications::table.into_boxed();
        for pattern in &patterns {
            query = query.or_filter(
                lower(client_applications::app_name)
                    .like(pattern.clone())
                    .escape('\\'),
            );
        }
        query
    };
    let total: i64 = matching().count().get_result(conn)?;
    let ordered = if descending {
        matching().order(client_applications::app_name.desc())
    } else {
        matching().order(client_applications::app_name.asc())
    };
    let rows = ordered
        .offset(offset)
        .limit(limit)
        .select(ClientApplicationRow::as_select())
        .load(conn)?;
    Ok((rows, total))
}

/// Where an application's instances run: an environment and the projects of the token they
/// reported with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceScope {
    /// The application.
    pub app_name: String,
    /// The environment.
    pub environment: String,
    /// The projects, `["*"]` for all.
    pub projects: Vec<String>,
}

/// The projects SDK instances reported with tokens limited to (a token of every project names
/// none): where Unleash counts an SDK as connected to a project.
pub fn reporting_projects(conn: &mut DbConnection) -> Result<std::collections::BTreeSet<String>, StoreError> {
    let rows: Vec<String> = client_instances::table
        .select(client_instances::projects)
        .distinct()
        .load(conn)?;
    let mut projects = std::collections::BTreeSet::new();
    for row in rows {
        let named: Vec<String> =
            crate::queries::from_json("client instance", "of some application", "projects", &row)?;
        projects.extend(named.into_iter().filter(|project| project != "*"));
    }
    Ok(projects)
}

/// Each application's SDK version, as its newest instance gave it.
pub type SdkVersions = HashMap<String, Option<String>>;

/// The distinct places the instances of `app_names` run, and each application's SDK version
/// as its newest instance gave it: a few rows per application, however many instances it has.
pub fn scopes_of(
    conn: &mut DbConnection,
    app_names: &[String],
) -> Result<(Vec<InstanceScope>, SdkVersions), StoreError> {
    let rows: Vec<(String, String, String)> = client_instances::table
        .filter(client_instances::app_name.eq_any(app_names))
        .select((
            client_instances::app_name,
            client_instances::environment,
            client_instances::projects,
        ))
        .distinct()
        .load(conn)?;
    let scopes = rows
        .into_iter()
        .map(|(app_name, environment, projects)| {
            let projects = crate::queries::from_json("client instance of", &app_name, "projects", &projects)?;
            Ok(InstanceScope {
                app_name,
                environment,
                projects,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    // Each application's newest instance: one seek on the index of (app_name, last_seen) per
    // application listed, however many instances it has.
    let mut versions = SdkVersions::new();
    for app_name in app_names {
        let newest: Option<Option<String>> = client_instances::table
            .filter(client_instances::app_name.eq(app_name))
            .order(client_instances::last_seen.desc())
            .select(client_instances::sdk_version)
            .first(conn)
            .optional()?;
        versions.insert(app_name.clone(), newest.flatten());
    }
    Ok((scopes, versions))
}

/// One application.
pub fn application(
    conn: &mut DbConnection,
    app_name: &str,
) -> Result<Option<ClientApplicationRow>, StoreError> {
    Ok(client_applications::table
        .find(app_name)
        .select(ClientApplicationRow::as_select())
        .first(conn)
        .optional()?)
}

/// The instances of an application, newest report first; only those seen since `since` when
/// given, and only in `environment` when given.
pub fn instances(
    conn: &mut DbConnection,
    app_name: &str,
    environment: Option<&str>,
    since: Option<NaiveDateTime>,
) -> Result<Vec<ClientInstanceRow>, StoreError> {
    let mut query = client_instances::table
        .filter(client_instances::app_name.eq(app_name))
        .select(ClientInstanceRow::as_select())
        .order((
            client_instances::last_seen.desc(),
            client_instances::instance_id.asc(),
        ))
        .limit(1000)
        .into_boxed();
    if let Some(environment) = environment {
        query = query.filter(client_instances::environment.eq(environment));
    }
    if let Some(since) = since {
        query = query.filter(client_instances::last_seen.ge(since));
    }
    Ok(query.load(conn)?)
}

/// Usage rows of an application since `since`.
pub fn usage_of_application(
    conn: &mut DbConnection,
    app_name: &str,
    since: NaiveDateTime,
) -> Result<Vec<UsageRow>, StoreError> {
    Ok(client_usage::table
        .filter(client_usage::app_name.eq(app_name))
        .filter(client_usage::hour.ge(since))
        .select(UsageRow::as_select())
        .order((client_usage::feature_name.asc(), client_usage::hour.asc()))
        .load(conn)?)
}

/// The applications that used a flag since `since`, by name, at most `limit`: read from the
/// primary key, one row per application.
pub fn applications_of_feature(
    conn: &mut DbConnection,
    feature_name: &str,
    since: NaiveDateTime,
    limit: i64,
) -> Result<Vec<String>, StoreError> {
    Ok(client_usage::table
        .filter(client_usage::feature_name.eq(feature_name))
        .filter(client_usage::hour.ge(since))
        .select(client_usage::app_name)
        .distinct()
        .order(client_usage::app_name.asc())
        .limit(limit)
        .load(conn)?)
}

/// Usage rows of a flag since `since`, by hour; only those of `applications` when given.
pub fn usage_of_feature(
    conn: &mut DbConnection,
    feature_name: &str,
    since: NaiveDateTime,
    applications: Option<&[String]>,
) -> Result<Vec<UsageRow>, StoreError> {
    let mut query = client_usage::table
        .filter(client_usage::feature_name.eq(feature_name))
        .filter(client_usage::hour.ge(since))
        .into_boxed();
    if let Some(applications) = applications {
        query = query.filter(client_usage::app_name.eq_any(applications));
    }
    Ok(query
        .select(UsageRow::as_select())
        .order((
            client_usage::hour.asc(),
            client_usage::app_name.asc(),
            client_usage::environment.asc(),
        ))
        .load(conn)?)
}

/// Unknown flag names no flag has taken since, by name, at most 1,000 of them, with every
/// application and environment that asked for each: the database picks the names, so only the
/// rows returned are read.
pub fn unknown(conn: &mut DbConnection) -> Result<Vec<UnknownFlagRow>, StoreError> {
    let names: Vec<String> = unknown_flags::table
        .filter(diesel::dsl::not(
            unknown_flags::name.eq_any(features::table.select(features::name)),
        ))
        .select(unknown_flags::name)
        .distinct()
        .order(unknown_flags::name.asc())
        .limit(1000)
        .load(conn)?;
    let mut rows = Vec::new();
    for chunk in names.chunks(500) {
        rows.extend(
            unknown_flags::table
                .filter(unknown_flags::name.eq_any(chunk))
                .select(UnknownFlagRow::as_select())
                .order((
                    unknown_flags::name.asc(),
                    unknown_flags::app_name.asc(),
                    unknown_flags::environment.asc(),
                ))
                .load::<UnknownFlagRow>(conn)?,
        );
    }
    Ok(rows)
}

/// Which of `names` are flags, with their projects.
pub fn projects_of(conn: &mut DbConnection, names: &[String]) -> Result<HashMap<String, String>, StoreError> {
    let mut projects = HashMap::new();
    for chunk in names.chunks(500) {
        let rows: Vec<(String, String)> = features::table
            .filter(features::name.eq_any(chunk))
            .select((features::name, features::project_id))
            .load(conn)?;
        projects.extend(rows);
    }
    Ok(projects)
}

/// The SDK each application's instances reported, as `(sdk version, application)`, distinct;
/// only applications that reported using one of `project`'s flags when it is given.
pub fn sdks_of_applications(
    conn: &mut DbConnection,
    project: Option<&str>,
) -> Result<Vec<(Option<String>, String)>, StoreError> {
    let mut rows: Vec<(Option<String>, String)> = client_instances::table
        .select((client_instances::sdk_version, client_instances::app_name))
        .distinct()
        .load(conn)?;
    if let Some(project) = project {
        let used: BTreeSet<String> = client_usage::table
            .inner_join(features::table.on(features::name.eq(client_usage::feature_name)))
            .filter(features::project_id.eq(project))
            .select(client_usage::app_name)
            .distinct()
            .load::<String>(conn)?
            .into_iter()
            .collect();
        rows.retain(|(_, application)| used.contains(application));
    }
    Ok(rows)
}
