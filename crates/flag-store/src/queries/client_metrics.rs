//! What SDKs report: applications, instances, hourly usage and unknown flag names. The server
//! aggregates reports in memory and hands them here in batches ([`record`]); [`prune`] keeps
//! the tables to their retention.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{Duration, NaiveDateTime};
use diesel::prelude::*;

use crate::connection::DbConnection;
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
/// How far ahead of the server's clock a report's times may be: SDK clocks drift, but not by
/// more than this.
pub const FUTURE_SKEW: Duration = Duration::hours(1);

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

/// Writes one batch in one transaction: applications and instances are created or touched,
/// usage is added to its hour, unknown names are recorded, and each used flag's `last_seen_at`
/// in its environment becomes `now`. All of it or none is written, so a failed batch can be
/// retried without counting twice. Callers keep batches small (see `flag_admin::usage`), so the
/// write lock is held briefly; [`prune`] runs apart.
pub fn record(conn: &mut DbConnection, batch: &Batch, now: NaiveDateTime) -> Result<Recorded, StoreError> {
    crate::queries::write(conn, |conn| {
        for application in &batch.applications {
            touch_application(conn, application)?;
        }
        for instance in &batch.instances {
            touch_instance(conn, instance)?;
        }
        let names: BTreeSet<&String> = batch.usage.iter().map(|count| &count.feature_name).collect();
        let projects = projects_of(conn, &names.into_iter().cloned().collect::<Vec<_>>())?;
        let mut recorded = Recorded::default();
        let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
        for count in &batch.usage {
            let Some(project) = projects.get(&count.feature_name) else {
                unknown_flag(conn, count)?;
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
            add_usage(conn, count)?;
            seen.insert((&count.feature_name, &count.environment));
            recorded.counted += 1;
        }
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

fn touch_application(conn: &mut DbConnection, application: &SeenApplication) -> Result<(), StoreError> {
    let stored: Option<String> = client_applications::table
        .find(&application.app_name)
        .select(client_applications::strategies)
        .first(conn)
        .optional()?;
    match stored {
        Some(strategies) => {
            let keep_first = strategies != "[]" || application.strategies.is_empty();
            let strategies = if keep_first {
                strategies
            } else {
                to_json("strategies", &application.strategies)?
            };
            diesel::update(client_applications::table.find(&application.app_name))
                .set((
                    client_applications::seen_at.eq(application.seen_at),
                    client_applications::strategies.eq(strategies),
                ))
                .execute(conn)?;
        }
        None => {
            diesel::insert_into(client_applications::table)
                .values(&ClientApplicationRow {
                    app_name: application.app_name.clone(),
                    strategies: to_json("strategies", &application.strategies)?,
                    description: None,
                    url: None,
                    color: None,
                    icon: None,
                    created_at: application.seen_at,
                    seen_at: application.seen_at,
                })
                .execute(conn)?;
        }
    }
    Ok(())
}

fn touch_instance(conn: &mut DbConnection, instance: &ClientInstanceRow) -> Result<(), StoreError> {
    let key = (&instance.app_name, &instance.instance_id, &instance.environment);
    let stored: Option<ClientInstanceRow> = client_instances::table
        .find(key)
        .select(ClientInstanceRow::as_select())
        .first(conn)
        .optional()?;
    match stored {
        Some(stored) => {
            diesel::update(client_instances::table.find(key))
                .set((
                    client_instances::sdk_version.eq(instance.sdk_version.clone().or(stored.sdk_version)),
                    client_instances::sdk_type.eq(&instance.sdk_type),
                    client_instances::client_ip.eq(instance.client_ip.clone().or(stored.client_ip)),
                    client_instances::projects.eq(&instance.projects),
                    client_instances::started.eq(instance.started.or(stored.started)),
                    client_instances::interval_ms.eq(instance.interval_ms.or(stored.interval_ms)),
                    client_instances::last_seen.eq(instance.last_seen.max(stored.last_seen)),
                ))
                .execute(conn)?;
        }
        None => {
            diesel::insert_into(client_instances::table)
                .values(instance)
                .execute(conn)?;
        }
    }
    Ok(())
}

fn add_usage(conn: &mut DbConnection, count: &UsageCount) -> Result<(), StoreError> {
    let key = (
        &count.feature_name,
        &count.app_name,
        &count.environment,
        count.hour,
    );
    let stored: Option<UsageRow> = client_usage::table
        .find(key)
        .select(UsageRow::as_select())
        .first(conn)
        .optional()?;
    match stored {
        Some(stored) => {
            let mut variants = stored.variants()?;
            for (name, n) in &count.variants {
                *variants.entry(name.clone()).or_default() += n;
            }
            diesel::update(client_usage::table.find(key))
                .set((
                    client_usage::yes.eq(stored.yes + count.yes),
                    client_usage::no.eq(stored.no + count.no),
                    client_usage::variants.eq(to_json("variants", &variants)?),
                ))
                .execute(conn)?;
        }
        None => {
            diesel::insert_into(client_usage::table)
                .values(&UsageRow {
                    feature_name: count.feature_name.clone(),
                    app_name: count.app_name.clone(),
                    environment: count.environment.clone(),
                    hour: count.hour,
                    yes: count.yes,
                    no: count.no,
                    variants: to_json("variants", &count.variants)?,
                })
                .execute(conn)?;
        }
    }
    Ok(())
}

fn unknown_flag(conn: &mut DbConnection, count: &UsageCount) -> Result<(), StoreError> {
    let key = (&count.feature_name, &count.app_name, &count.environment);
    let updated = diesel::update(unknown_flags::table.find(key))
        .filter(unknown_flags::seen_at.lt(count.reported_at))
        .set(unknown_flags::seen_at.eq(count.reported_at))
        .execute(conn)?;
    if updated == 0 {
        let exists: i64 = unknown_flags::table.find(key).count().get_result(conn)?;
        if exists == 0 {
            diesel::insert_into(unknown_flags::table)
                .values(&UnknownFlagRow {
                    name: count.feature_name.clone(),
                    app_name: count.app_name.clone(),
                    environment: count.environment.clone(),
                    seen_at: count.reported_at,
                })
                .execute(conn)?;
        }
    }
    Ok(())
}

/// Deletes what is past its retention, and what claims to be from further ahead than
/// [`FUTURE_SKEW`] (reports are refused beyond it, so only rows written before that rule were),
/// so every row expires whatever time it claimed; returns how many rows went.
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
