//! The admin views of what SDKs reported: applications, their instances and overview, flag
//! usage, and unknown flag names. Each view first writes what this replica has aggregated, so
//! it shows every report the replica has taken.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DurationRound as _, NaiveDateTime, TimeDelta};
use flag_store::queries::{self, client_metrics};

use crate::catalogue::strategy_types::types::StrategyTypeOut;
use crate::delivery::Delivery;
use crate::delivery::usage::types::{
    ApplicationItem, ApplicationLinks, ApplicationOut, ApplicationStrategy, ApplicationUsage,
    ApplicationsOut, ApplicationsQuery, EnvironmentInstance, EnvironmentIssues, FeatureUsageOut, InstanceOut,
    InstancesOut, OutdatedSdkOut, OutdatedSdksOut, OverviewEnvironment, OverviewIssues, OverviewOut,
    ProjectApplicationOut, ProjectApplicationSdkOut, ProjectApplicationsOut, ProjectApplicationsQuery,
    RawQuery, RawUsageOut, SeenFlag, SeenToggle, UnknownFlagEnvironment, UnknownFlagOut, UnknownFlagReport,
    UnknownFlagsOut, UsageOut,
};
use crate::identity::auth::Access;
use crate::runtime::input::iso;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Writes what this replica aggregated, so the view that follows includes it. A failed write
/// is logged and kept for the next flush; the view shows what is stored.
async fn flushed(ctx: &Runtime, delivery: &Delivery) {
    if let Err(error) = delivery.usage.flush(&ctx.store, ctx.now()).await {
        tracing::warn!(%error, "writing SDK usage before a view failed; it is kept for the next flush");
    }
}

fn hour_of(time: NaiveDateTime) -> NaiveDateTime {
    time.duration_trunc(TimeDelta::hours(1)).unwrap_or(time)
}

/// Who may list the applications SDKs reported.
pub const LIST: Access = Access::Read;

/// Applications that registered or reported usage.
pub async fn list(
    ctx: &Runtime,
    delivery: &Delivery,
    query: ApplicationsQuery,
) -> Result<ApplicationsOut, AdminError> {
    flushed(ctx, delivery).await;
    let terms: Vec<String> = query
        .query
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|term| !term.is_empty())
        .map(str::to_owned)
        .collect();
    let offset = query
        .offset
        .and_then(|offset| offset.parse().ok())
        .filter(|&offset| offset >= 0)
        .unwrap_or(0);
    let limit = query
        .limit
        .and_then(|limit| limit.parse().ok())
        .filter(|limit| (1..=1000).contains(limit))
        .unwrap_or(1000);
    let descending = query.sort_order.as_deref() == Some("desc");
    let ((rows, total), (scopes, mut versions)) = db::run(&ctx.store, move |conn| {
        let (rows, total) = client_metrics::applications(conn, &terms, offset, limit, descending)?;
        let names: Vec<String> = rows.iter().map(|row| row.app_name.clone()).collect();
        Ok(((rows, total), client_metrics::scopes_of(conn, &names)?))
    })
    .await?;
    let mut by_application: HashMap<&str, BTreeMap<&str, BTreeSet<&str>>> = HashMap::new();
    for scope in &scopes {
        let usage = by_application.entry(&scope.app_name).or_default();
        for project in &scope.projects {
            usage.entry(project).or_default().insert(&scope.environment);
        }
    }
    let mut applications = Vec::with_capacity(rows.len());
    for row in rows {
        let usage = by_application.remove(row.app_name.as_str()).unwrap_or_default();
        let usage: Vec<ApplicationUsage> = usage
            .into_iter()
            .map(|(project, environments)| ApplicationUsage {
                project: project.to_owned(),
                environments: environments.into_iter().map(str::to_owned).collect(),
            })
            .collect();
        applications.push(ApplicationItem {
            strategies: row.strategies()?,
            sdk_version: versions.remove(&row.app_name).flatten(),
            app_name: row.app_name,
            created_at: iso(row.created_at),
            updated_at: iso(row.seen_at),
            description: row.description,
            created_by: SYSTEM_USER,
            url: row.url,
            color: row.color,
            icon: row.icon,
            project: usage.first().map(|usage| usage.project.clone()),
            environment: usage
                .first()
                .and_then(|usage| usage.environments.first().cloned()),
            usage,
        });
    }
    Ok(ApplicationsOut { applications, total })
}

/// What the application views read: the application, its instances (those seen since
/// `instances_since`, when given), its usage since `usage_since`, the projects of the flags it
/// reported, and the strategy types the server knows.
struct Loaded {
    row: Option<flag_store::models::ClientApplicationRow>,
    instances: Vec<flag_store::models::ClientInstanceRow>,
    usage: Vec<flag_store::models::UsageRow>,
    strategy_types: Vec<flag_store::models::StrategyTypeRow>,
    projects: HashMap<String, String>,
}

impl Loaded {
    fn known_strategies(&self) -> BTreeSet<&str> {
        self.strategy_types.iter().map(|row| row.name.as_str()).collect()
    }
}

async fn load(
    ctx: &Runtime,
    name: String,
    instances_since: Option<NaiveDateTime>,
    usage_since: NaiveDateTime,
) -> Result<Loaded, AdminError> {
    db::run(&ctx.store, move |conn| {
        let Some(row) = client_metrics::application(conn, &name)? else {
            return Ok(Loaded {
                row: None,
                instances: Vec::new(),
                usage: Vec::new(),
                strategy_types: Vec::new(),
                projects: HashMap::new(),
            });
        };
        let usage = client_metrics::usage_of_application(conn, &name, usage_since)?;
        let names: Vec<String> = usage.iter().map(|row| row.feature_name.clone()).collect();
        Ok(Loaded {
            row: Some(row),
            instances: client_metrics::instances(conn, &name, None, instances_since)?,
            projects: client_metrics::projects_of(conn, &names)?,
            strategy_types: queries::strategies::list_types(conn)?,
            usage,
        })
    })
    .await
}

/// Who may read an application.
pub const GET: Access = Access::Read;

/// One application as Unleash answers it: its strategies as whole strategy types, its
/// instances, and the flags it reported in the last 24 hours as whole flags (live ones; others
/// `{name, notFound: true}`).
pub async fn get(ctx: &Runtime, delivery: &Delivery, app_name: String) -> Result<ApplicationOut, AdminError> {
    flushed(ctx, delivery).await;
    let now = ctx.now();
    let name = app_name.clone();
    let loaded = load(ctx, name, None, now - TimeDelta::hours(24)).await?;
    let Loaded {
        row,
        instances,
        usage,
        strategy_types,
        ..
    } = loaded;
    let row = row.ok_or_else(|| AdminError::NotFound(format!("could not find appName={app_name}")))?;
    let seen: Vec<String> = usage
        .into_iter()
        .map(|row| row.feature_name)
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let names = seen.clone();
    let (features, last_seen) = db::run(&ctx.store, move |conn| {
        Ok((
            queries::features::named(conn, &names)?,
            queries::features::last_seen(conn, &names)?,
        ))
    })
    .await?;
    let live: HashMap<&str, &flag_store::models::FeatureRow> = features
        .iter()
        .filter(|feature| feature.archived_at.is_none())
        .map(|feature| (feature.name.as_str(), feature))
        .collect();
    let mut strategy_types: HashMap<String, flag_store::models::StrategyTypeRow> = strategy_types
        .into_iter()
        .map(|row| (row.name.clone(), row))
        .collect();
    Ok(ApplicationOut {
        strategies: row
            .strategies()?
            .into_iter()
            .map(|name| match strategy_types.remove(&name) {
                Some(known) => StrategyTypeOut::try_from(known).map(ApplicationStrategy::Known),
                None => Ok(ApplicationStrategy::NotFound {
                    name,
                    not_found: true,
                }),
            })
            .collect::<Result<_, _>>()?,
        instances: instances
            .into_iter()
            .map(|instance| InstanceOut {
                app_name: instance.app_name,
                instance_id: instance.instance_id,
                sdk_version: instance.sdk_version,
                sdk_type: instance.sdk_type,
                client_ip: instance.client_ip,
                last_seen: iso(instance.last_seen),
                created_at: iso(instance.created_at),
                environment: instance.environment,
            })
            .collect(),
        seen_toggles: seen
            .into_iter()
            .map(|name| match live.get(name.as_str()) {
                Some(feature) => SeenToggle::Known(SeenFlag {
                    description: feature.description.clone(),
                    feature_type: feature.feature_type.clone(),
                    project: feature.project_id.clone(),
                    stale: feature.stale,
                    created_at: iso(feature.created_at),
                    last_seen_at: last_seen.get(&name).copied().map(iso),
                    impression_data: feature.impression_data,
                    archived_at: None,
                    archived: false,
                    name,
                }),
                None => SeenToggle::NotFound {
                    name,
                    not_found: true,
                },
            })
            .collect(),
        links: ApplicationLinks {
            this: format!("/api/applications/{}", row.app_name),
        },
        app_name: row.app_name,
        created_at: iso(row.created_at),
        description: row.description,
        url: row.url,
        color: row.color,
        icon: row.icon,
    })
}

/// The name Unleash gives the server's own writes, and the creator of every application.
const SYSTEM_USER: &str = "unleash_system_user";

/// Strategies SDKs register that Unleash retired; an application is not missing them.
const RETIRED_STRATEGIES: [&str; 4] = [
    "gradualRolloutRandom",
    "gradualRolloutSessionId",
    "gradualRolloutUserId",
    "userWithId",
];

/// Who may read an application's overview.
pub const OVERVIEW: Access = Access::Read;

/// An application at a glance: where it runs, with which SDKs, and what may be wrong.
pub async fn overview(
    ctx: &Runtime,
    delivery: &Delivery,
    app_name: String,
) -> Result<OverviewOut, AdminError> {
    flushed(ctx, delivery).await;
    let now = ctx.now();
    let name = app_name.clone();
    let loaded = load(
        ctx,
        name,
        Some(now - TimeDelta::hours(24)),
        now - client_metrics::USAGE_RETENTION,
    )
    .await?;
    let known_strategies: BTreeSet<String> =
        loaded.known_strategies().into_iter().map(str::to_owned).collect();
    let Loaded {
        row,
        instances,
        usage,
        projects,
        ..
    } = loaded;
    let row = row.ok_or_else(|| AdminError::NotFound(format!("could not find appName={app_name}")))?;
    let mut by_environment: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for usage in &usage {
        by_environment
            .entry(usage.environment.clone())
            .or_default()
            .insert(usage.feature_name.clone());
    }
    let environments = by_environment
        .into_iter()
        .map(|(environment, features)| {
            let here: Vec<_> = instances
                .iter()
                .filter(|instance| instance.environment == environment)
                .collect();
            let sdks = |kind: Option<&str>| -> Vec<String> {
                here.iter()
                    .filter(|instance| kind.is_none_or(|kind| instance.sdk_type == kind))
                    .filter_map(|instance| instance.sdk_version.clone())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect()
            };
            let instance_ids: BTreeSet<&str> = here
                .iter()
                .map(|instance| instance.instance_id.as_str())
                .collect();
            OverviewEnvironment {
                instance_count: instance_ids.len(),
                sdks: sdks(None),
                frontend_sdks: sdks(Some("frontend")),
                backend_sdks: sdks(Some("backend")),
                last_seen: here.iter().map(|instance| instance.last_seen).max().map(iso),
                issues: EnvironmentIssues {
                    missing_features: features
                        .into_iter()
                        .filter(|name| !projects.contains_key(name))
                        .collect(),
                    outdated_sdks: sdks(None)
                        .into_iter()
                        .filter(|sdk| crate::runtime::domain::outdated_sdk(sdk))
                        .collect(),
                },
                name: environment,
            }
        })
        .collect();
    let used: BTreeSet<&String> = usage
        .iter()
        .map(|row| &row.feature_name)
        .filter(|name| projects.contains_key(*name))
        .collect();
    Ok(OverviewOut {
        projects: projects
            .iter()
            .filter(|(name, _)| used.contains(name))
            .map(|(_, project)| project.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        feature_count: used.len(),
        environments,
        issues: OverviewIssues {
            // As Unleash counts them: only once the application has reported usage, and never
            // the strategies its SDKs still register though they were retired.
            missing_strategies: if usage.is_empty() {
                Vec::new()
            } else {
                row.strategies()?
                    .into_iter()
                    .filter(|name| {
                        !RETIRED_STRATEGIES.contains(&name.as_str()) && !known_strategies.contains(name)
                    })
                    .collect()
            },
        },
    })
}

/// Who may list an application's instances.
pub const INSTANCES: Access = Access::Read;

/// The instances of an application seen in one environment in the last 24 hours.
pub async fn instances(
    ctx: &Runtime,
    delivery: &Delivery,
    app_name: String,
    environment: String,
) -> Result<InstancesOut, AdminError> {
    flushed(ctx, delivery).await;
    let since = ctx.now() - TimeDelta::hours(24);
    let rows = db::run(&ctx.store, move |conn| {
        client_metrics::instances(conn, &app_name, Some(&environment), Some(since))
    })
    .await?;
    Ok(InstancesOut {
        instances: rows
            .into_iter()
            .map(|row| EnvironmentInstance {
                instance_id: row.instance_id,
                sdk_version: row.sdk_version,
                client_ip: row.client_ip,
                last_seen: iso(row.last_seen),
            })
            .collect(),
    })
}

/// Who may read which applications use a flag.
pub const FEATURE_USAGE: Access = Access::Read;

/// A flag's usage in the last hour per environment, and the applications that used it.
pub async fn feature_usage(
    ctx: &Runtime,
    delivery: &Delivery,
    name: String,
) -> Result<FeatureUsageOut, AdminError> {
    flushed(ctx, delivery).await;
    let now = ctx.now();
    let feature = name.clone();
    // The hours that started in the last hour, as Unleash counts them, and the applications of
    // the last day: only those rows are read.
    let last_hour = now - TimeDelta::hours(1);
    let (rows, seen) = db::run(&ctx.store, move |conn| {
        Ok((
            client_metrics::usage_of_feature(conn, &feature, last_hour, None)?,
            client_metrics::applications_of_feature(conn, &feature, now - TimeDelta::hours(24), i64::MAX)?,
        ))
    })
    .await?;
    let mut by_environment: BTreeMap<&str, UsageOut> = BTreeMap::new();
    for row in &rows {
        let total = by_environment
            .entry(&row.environment)
            .or_insert_with(|| UsageOut {
                feature_name: None,
                app_name: None,
                environment: row.environment.clone(),
                timestamp: iso(row.hour),
                yes: 0,
                no: 0,
                variants: None,
            });
        total.yes += row.yes;
        total.no += row.no;
    }
    Ok(FeatureUsageOut {
        version: 1,
        maturity: "stable",
        last_hour_usage: by_environment.into_values().collect(),
        seen_applications: seen,
        feature_name: name,
    })
}

/// Who may read a flag's usage counts.
pub const RAW_USAGE: Access = Access::Read;

/// A flag's hourly usage per application and environment, newest hour first, zero in hours
/// without reports.
pub async fn raw_usage(
    ctx: &Runtime,
    delivery: &Delivery,
    name: String,
    query: RawQuery,
) -> Result<RawUsageOut, AdminError> {
    flushed(ctx, delivery).await;
    let hours: i64 = query
        .hours_back
        .and_then(|hours| hours.parse().ok())
        .filter(|hours| (1..=48).contains(hours))
        .unwrap_or(24);
    let newest = hour_of(ctx.now());
    let oldest = newest - TimeDelta::hours(hours - 1);
    let feature = name.clone();
    // At most 100 applications, as Unleash shows, picked in the database.
    let rows = db::run(&ctx.store, move |conn| {
        let applications = client_metrics::applications_of_feature(conn, &feature, oldest, 100)?;
        client_metrics::usage_of_feature(conn, &feature, oldest, Some(&applications))
    })
    .await?;
    let by_key: HashMap<(NaiveDateTime, &str, &str), &flag_store::models::UsageRow> = rows
        .iter()
        .map(|row| ((row.hour, row.environment.as_str(), row.app_name.as_str()), row))
        .collect();
    // As Unleash answers: every environment that reported, times every application that did,
    // times every hour from the newest back, with zero counts where none came.
    let environments: BTreeSet<&str> = rows.iter().map(|row| row.environment.as_str()).collect();
    let applications: BTreeSet<&str> = rows.iter().map(|row| row.app_name.as_str()).collect();
    let mut data =
        Vec::with_capacity(environments.len() * applications.len() * usize::try_from(hours).unwrap_or(0));
    for &environment in &environments {
        for &app_name in &applications {
            for step in 0..hours {
                let hour = newest - TimeDelta::hours(step);
                let found = by_key.get(&(hour, environment, app_name));
                data.push(UsageOut {
                    feature_name: Some(name.clone()),
                    app_name: Some(app_name.to_owned()),
                    environment: environment.to_owned(),
                    timestamp: iso(hour),
                    yes: found.map_or(0, |row| row.yes),
                    no: found.map_or(0, |row| row.no),
                    variants: Some(match found {
                        Some(row) => row.variants()?,
                        None => BTreeMap::new(),
                    }),
                });
            }
        }
    }
    Ok(RawUsageOut {
        version: 1,
        maturity: "stable",
        data,
    })
}

/// Who may list the flags SDKs asked for that do not exist.
pub const UNKNOWN_FLAGS: Access = Access::Read;

/// Flag names SDKs asked for in the last 24 hours that no flag has.
pub async fn unknown_flags(ctx: &Runtime, delivery: &Delivery) -> Result<UnknownFlagsOut, AdminError> {
    flushed(ctx, delivery).await;
    let rows = db::run(&ctx.store, client_metrics::unknown).await?;
    let mut flags: Vec<UnknownFlagOut> = Vec::new();
    for row in rows {
        if flags.last().is_none_or(|flag| flag.name != row.name) {
            flags.push(UnknownFlagOut {
                name: row.name.clone(),
                last_seen_at: iso(row.seen_at),
                last_event_at: None,
                reports: Vec::new(),
            });
        }
        let Some(flag) = flags.last_mut() else { continue };
        flag.last_seen_at = flag.last_seen_at.clone().max(iso(row.seen_at));
        if flag
            .reports
            .last()
            .is_none_or(|report| report.app_name != row.app_name)
        {
            flag.reports.push(UnknownFlagReport {
                app_name: row.app_name.clone(),
                environments: Vec::new(),
            });
        }
        if let Some(report) = flag.reports.last_mut() {
            report.environments.push(UnknownFlagEnvironment {
                environment: row.environment,
                seen_at: iso(row.seen_at),
            });
        }
    }
    Ok(UnknownFlagsOut { unknown_flags: flags })
}

/// Who may list the outdated SDKs, of every project or of one.
pub const OUTDATED_SDKS: Access = Access::Read;

/// The outdated SDK versions in use, with the applications running them; only applications
/// that used `project`'s flags when it is given.
pub async fn outdated_sdks(ctx: &Runtime, project: Option<String>) -> Result<OutdatedSdksOut, AdminError> {
    let rows = db::run(&ctx.store, move |conn| {
        queries::client_metrics::sdks_of_applications(conn, project.as_deref())
    })
    .await?;
    let mut by_sdk: std::collections::BTreeMap<String, BTreeSet<String>> = std::collections::BTreeMap::new();
    for (sdk, application) in rows {
        if let Some(sdk) = sdk.filter(|sdk| crate::runtime::domain::outdated_sdk(sdk)) {
            by_sdk.entry(sdk).or_default().insert(application);
        }
    }
    Ok(OutdatedSdksOut {
        sdks: by_sdk
            .into_iter()
            .map(|(sdk_version, applications)| OutdatedSdkOut {
                sdk_version,
                applications: applications.into_iter().collect(),
            })
            .collect(),
    })
}

/// Who may list a project's applications.
pub const OF_PROJECT: Access = Access::Read;

/// The applications that used a project's flags, with their environments, instances and SDKs.
pub async fn of_project(
    ctx: &Runtime,
    project: String,
    query: ProjectApplicationsQuery,
) -> Result<ProjectApplicationsOut, AdminError> {
    let descending = match query.sort_order.as_deref() {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(other) => {
            return Err(AdminError::invalid(
                "/query/sortOrder",
                format!("sortOrder must be asc or desc, not {other:?}"),
            ));
        }
    };
    let check = project.clone();
    let (names, instances) = db::run(&ctx.store, move |conn| {
        queries::projects::get(conn, &check)?;
        let names: BTreeSet<String> = queries::client_metrics::sdks_of_applications(conn, Some(&check))?
            .into_iter()
            .map(|(_, application)| application)
            .collect();
        let mut instances = Vec::new();
        for name in &names {
            instances.extend(queries::client_metrics::instances(conn, name, None, None)?);
        }
        Ok((names, instances))
    })
    .await?;
    let filter = query.query.map(|text| flag_eval::fold_case(&text));
    let mut applications: Vec<ProjectApplicationOut> = names
        .into_iter()
        .filter(|name| {
            filter
                .as_ref()
                .is_none_or(|text| flag_eval::fold_case(name).contains(text.as_str()))
        })
        .map(|name| {
            let own: Vec<_> = instances
                .iter()
                .filter(|instance| instance.app_name == name)
                .collect();
            let mut sdks: std::collections::BTreeMap<String, BTreeSet<String>> =
                std::collections::BTreeMap::new();
            for instance in &own {
                if let Some((sdk, version)) = instance
                    .sdk_version
                    .as_deref()
                    .and_then(|sdk| sdk.split_once(':'))
                {
                    sdks.entry(sdk.to_owned()).or_default().insert(version.to_owned());
                }
            }
            ProjectApplicationOut {
                environments: own
                    .iter()
                    .map(|instance| instance.environment.clone())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                instances: own
                    .iter()
                    .map(|instance| instance.instance_id.clone())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect(),
                sdks: sdks
                    .into_iter()
                    .map(|(name, versions)| ProjectApplicationSdkOut {
                        name,
                        versions: versions.into_iter().collect(),
                    })
                    .collect(),
                name,
            }
        })
        .collect();
    if descending {
        applications.reverse();
    }
    let total = applications.len();
    let offset = query.offset.and_then(|text| text.parse().ok()).unwrap_or(0);
    let limit = query
        .limit
        .and_then(|text| text.parse().ok())
        .filter(|limit| (1..=1000).contains(limit))
        .unwrap_or(50);
    Ok(ProjectApplicationsOut {
        total,
        applications: applications.into_iter().skip(offset).take(limit).collect(),
    })
}
