//! The views of projects Unleash's web UI opens: the project list, a project's overview and
//! status, who created its flags, and the personal dashboard. Health is computed as Unleash
//! computes it: 100, less the shares of stale and of potentially stale live flags.

pub mod types;

use std::collections::{BTreeMap, BTreeSet};

use chrono::NaiveDateTime;
use flag_store::models::{FeatureRow, ProjectRow};
use flag_store::queries;
use flag_store::queries::search::Catalogue;

use crate::catalogue::overview::types::{
    ActivityOut, AdminOut, ArchivedSummaryOut, CreatorOut, CurrentOut, DashboardEventOut, DashboardFlagOut,
    DashboardOut, DashboardProjectDetailOut, DashboardProjectOut, InsightsOut, LifecycleSummaryOut,
    OnboardingOut, OverviewEnvironmentOut, OwnerOut, ProjectListItem, ProjectListOut, ProjectOverviewOut,
    ProjectStatsOut, ProjectStatusOut, ResourcesOut, StageSummaryOut, TotalOut, TypeCountOut,
};
use crate::catalogue::search::potentially_stale;
use crate::identity::auth::{Access, Caller, Principal};
use crate::runtime::domain::RootRole;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// A project's live flags and what Unleash's views count of them.
struct Flags<'a> {
    live: Vec<&'a FeatureRow>,
    stale: usize,
    potentially_stale: usize,
}

impl<'a> Flags<'a> {
    fn of(catalogue: &'a Catalogue, project: &str, now: NaiveDateTime) -> Self {
        let live: Vec<&FeatureRow> = catalogue
            .features
            .iter()
            .filter(|row| row.project_id == project && row.archived_at.is_none())
            .collect();
        Self {
            stale: live.iter().filter(|row| row.stale).count(),
            potentially_stale: live
                .iter()
                .filter(|row| potentially_stale(row, catalogue, now))
                .count(),
            live,
        }
    }

    /// 100, less the percentages of stale and of potentially stale flags, rounded.
    fn health(&self) -> i64 {
        if self.live.is_empty() {
            return 100;
        }
        let share = |count: usize| count as f64 * 100.0 / self.live.len() as f64;
        (100.0 - share(self.stale) - share(self.potentially_stale)).round() as i64
    }

    /// When an SDK last reported one of the flags.
    fn last_reported(&self, catalogue: &Catalogue) -> Option<NaiveDateTime> {
        self.live
            .iter()
            .filter_map(|row| catalogue.states.get(&row.name))
            .flatten()
            .filter_map(|state| state.last_seen_at)
            .max()
    }
}

/// Where a project stands in getting started, as Unleash 8 decides it: onboarded once an SDK
/// has used any of its flags (archived ones too) or reported with a token of the project; else
/// its first live flag created; else just started.
fn onboarding(project: &str, catalogue: &Catalogue, connected: &BTreeSet<String>) -> OnboardingOut {
    let mut flags = catalogue.features.iter().filter(|row| row.project_id == project);
    let used = flags.clone().any(|row| {
        catalogue
            .states
            .get(&row.name)
            .into_iter()
            .flatten()
            .any(|state| state.last_seen_at.is_some())
    });
    if used || connected.contains(project) {
        return OnboardingOut {
            status: "onboarded",
            feature: None,
        };
    }
    match flags
        .by_ref()
        .filter(|row| row.archived_at.is_none())
        .min_by_key(|row| row.created_at)
    {
        Some(row) => OnboardingOut {
            status: "first-flag-created",
            feature: Some(row.name.clone()),
        },
        None => OnboardingOut {
            status: "onboarding-started",
            feature: None,
        },
    }
}

fn system_owner() -> Vec<OwnerOut> {
    vec![OwnerOut { owner_type: "system" }]
}

/// Who may list the projects.
pub const LIST: Access = Access::Read;

/// Every project, by name, with its health, flags and onboarding.
pub async fn list(ctx: &Runtime) -> Result<ProjectListOut, AdminError> {
    let now = ctx.now();
    let (projects, catalogue, activity, connected, settings) = db::run(&ctx.store, move |conn| {
        let settings = queries::projects::all_settings(conn)?;
        let projects = queries::projects::list(conn)?;
        let catalogue = queries::search::catalogue(conn, now)?;
        let activity = projects
            .iter()
            .map(|project| queries::events::project_activity(conn, &project.id))
            .collect::<Result<Vec<_>, _>>()?;
        let connected = queries::client_metrics::reporting_projects(conn)?;
        Ok((projects, catalogue, activity, connected, settings))
    })
    .await?;
    let modes: BTreeMap<String, String> = settings.into_iter().map(|row| (row.id, row.mode)).collect();
    let mut items: Vec<ProjectListItem> = projects
        .into_iter()
        .zip(activity)
        .map(|(project, last_updated)| {
            let flags = Flags::of(&catalogue, &project.id, now);
            let health = flags.health();
            ProjectListItem {
                description: project.description,
                health,
                technical_debt: 100 - health,
                feature_count: flags.live.len(),
                member_count: 0,
                created_at: crate::runtime::input::iso(project.created_at),
                archived_at: None,
                mode: modes
                    .get(&project.id)
                    .cloned()
                    .unwrap_or_else(|| "open".to_owned()),
                last_reported_flag_usage: flags.last_reported(&catalogue).map(crate::runtime::input::iso),
                last_updated_at: last_updated.map(crate::runtime::input::iso),
                onboarding_status: onboarding(&project.id, &catalogue, &connected),
                owners: system_owner(),
                name: project.name,
                id: project.id,
            }
        })
        .collect();
    items.sort_by(|left, right| left.name.cmp(&right.name));
    Ok(ProjectListOut {
        version: 1,
        projects: items,
    })
}

/// What a project's views read.
struct ProjectRead {
    project: ProjectRow,
    settings: flag_store::models::ProjectSettingsRow,
    catalogue: Catalogue,
    environments: Vec<String>,
    last_updated: Option<NaiveDateTime>,
    connected: BTreeSet<String>,
}

async fn read(ctx: &Runtime, project: String, now: NaiveDateTime) -> Result<ProjectRead, AdminError> {
    db::run(&ctx.store, move |conn| {
        let project = queries::projects::get(conn, &project)?;
        let last_updated = queries::events::project_activity(conn, &project.id)?;
        Ok(ProjectRead {
            settings: queries::projects::settings(conn, &project.id)?,
            environments: queries::projects::environments_of(conn, &project.id)?,
            catalogue: queries::search::catalogue(conn, now)?,
            connected: queries::client_metrics::reporting_projects(conn)?,
            project,
            last_updated,
        })
    })
    .await
}

/// Who may read a project's overview.
pub const OVERVIEW: Access = Access::Read;

/// A project at a glance.
pub async fn overview(ctx: &Runtime, project: String) -> Result<ProjectOverviewOut, AdminError> {
    let now = ctx.now();
    let read = read(ctx, project, now).await?;
    let flags = Flags::of(&read.catalogue, &read.project.id, now);
    let health = flags.health();
    let mut types: BTreeMap<String, usize> = BTreeMap::new();
    for row in &flags.live {
        *types.entry(row.feature_type.clone()).or_default() += 1;
    }
    let mut environments: Vec<(i32, String)> = read
        .environments
        .iter()
        .map(|name| {
            let order = read
                .catalogue
                .environments
                .iter()
                .find(|environment| environment.name == *name)
                .map_or(0, |environment| environment.sort_order);
            (order, name.clone())
        })
        .collect();
    environments.sort();
    Ok(ProjectOverviewOut {
        stats: ProjectStatsOut::default(),
        name: read.project.name.clone(),
        description: read.project.description.clone(),
        mode: read.settings.mode.clone(),
        feature_limit: None,
        feature_naming: read
            .settings
            .feature_naming
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|error| AdminError::Internal(format!("stored naming pattern: {error}")))?
            .unwrap_or_default(),
        link_templates: serde_json::from_str(&read.settings.link_templates)
            .map_err(|error| AdminError::Internal(format!("stored link templates: {error}")))?,
        default_stickiness: "default",
        health,
        technical_debt: 100 - health,
        favorite: false,
        updated_at: crate::runtime::input::iso(read.last_updated.unwrap_or(read.project.created_at)),
        created_at: crate::runtime::input::iso(read.project.created_at),
        onboarding_status: onboarding(&read.project.id, &read.catalogue, &read.connected),
        environments: environments
            .into_iter()
            .map(|(_, environment)| OverviewEnvironmentOut { environment })
            .collect(),
        feature_type_counts: types
            .into_iter()
            .map(|(feature_type, count)| TypeCountOut { feature_type, count })
            .collect(),
        members: 0,
        version: 1,
    })
}

/// Who may read a project's status.
pub const STATUS: Access = Access::Read;

/// A project's status: its resources, activity over the last year, health, and flags by
/// lifecycle stage. An unknown project has nothing.
pub async fn status(ctx: &Runtime, project: String) -> Result<ProjectStatusOut, AdminError> {
    let now = ctx.now();
    let year_ago = now - chrono::Duration::days(365);
    let id = project.clone();
    let (catalogue, times, tokens, segments) = db::run(&ctx.store, move |conn| {
        Ok((
            queries::search::catalogue(conn, now)?,
            queries::events::times_of_project(conn, &id, year_ago)?,
            queries::api_tokens::list(conn)?
                .into_iter()
                .filter(|token| token.projects.as_slice().contains(&id))
                .count(),
            queries::segments::list(conn)?
                .into_iter()
                .filter(|segment| segment.project_id.as_deref() == Some(id.as_str()))
                .count(),
        ))
    })
    .await?;
    let flags = Flags::of(&catalogue, &project, now);
    let health = flags.health();
    let mut days: BTreeMap<String, usize> = BTreeMap::new();
    for at in times {
        *days.entry(at.format("%Y-%m-%d").to_string()).or_default() += 1;
    }
    let mut current: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &flags.live {
        let latest = catalogue
            .stages
            .get(&row.name)
            .and_then(|stages| stages.iter().max_by_key(|stage| stage.created_at))
            .map_or("initial", |stage| stage.stage.as_str());
        let stage = if latest == "archived" { "initial" } else { latest };
        *current.entry(stage).or_default() += 1;
    }
    let archived: Vec<&FeatureRow> = catalogue
        .features
        .iter()
        .filter(|row| row.project_id == project && row.archived_at.is_some())
        .collect();
    let month_ago = now - chrono::Duration::days(30);
    let summary = |stage: &str| StageSummaryOut {
        average_days: None,
        current_flags: current.get(stage).copied().unwrap_or(0),
    };
    Ok(ProjectStatusOut {
        resources: ResourcesOut {
            members: 0,
            api_tokens: tokens,
            segments,
        },
        activity_count_by_date: days
            .into_iter()
            .map(|(date, count)| ActivityOut { date, count })
            .collect(),
        health: CurrentOut { current: health },
        technical_debt: CurrentOut {
            current: 100 - health,
        },
        lifecycle_summary: LifecycleSummaryOut {
            initial: summary("initial"),
            pre_live: summary("pre-live"),
            live: summary("live"),
            completed: summary("completed"),
            archived: ArchivedSummaryOut {
                current_flags: archived.len(),
                last30_days: archived
                    .iter()
                    .filter(|row| row.archived_at.is_some_and(|at| at >= month_ago))
                    .count(),
            },
        },
        stale_flags: TotalOut {
            total: flags.stale + flags.potentially_stale,
        },
    })
}

/// Who may list who created a project's flags.
pub const FLAG_CREATORS: Access = Access::Read;

/// The users who created a project's live flags, by id.
pub async fn flag_creators(ctx: &Runtime, project: String) -> Result<Vec<CreatorOut>, AdminError> {
    let now = ctx.now();
    let catalogue = db::run(&ctx.store, move |conn| queries::search::catalogue(conn, now)).await?;
    let mut ids: Vec<i32> = Flags::of(&catalogue, &project, now)
        .live
        .iter()
        .filter_map(|row| row.created_by_user_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(ids
        .into_iter()
        .filter_map(|id| {
            let user = catalogue.creators.iter().find(|user| user.id == id)?;
            let name = user
                .name
                .clone()
                .or_else(|| user.username.clone())
                .or_else(|| user.email.clone())?;
            Some(CreatorOut { id, name })
        })
        .collect())
}

/// Who may read the personal dashboard.
pub const DASHBOARD: Access = Access::Read;

/// The caller's dashboard: every project, the flags they created, and the administrators.
pub async fn dashboard(ctx: &Runtime, caller: &Caller) -> Result<DashboardOut, AdminError> {
    let now = ctx.now();
    let creator = match caller.principal() {
        Principal::User { id, .. } => *id,
        Principal::AdminToken { .. } => flag_store::models::Actor::ADMIN_TOKEN,
    };
    let (projects, catalogue, users) = db::run(&ctx.store, move |conn| {
        Ok((
            queries::projects::list(conn)?,
            queries::search::catalogue(conn, now)?,
            queries::users::list(conn)?,
        ))
    })
    .await?;
    let mut mine: Vec<&FeatureRow> = catalogue
        .features
        .iter()
        .filter(|row| row.archived_at.is_none() && row.created_by_user_id == Some(creator))
        .collect();
    mine.sort_by_key(|row| std::cmp::Reverse(row.created_at));
    let mut projects: Vec<DashboardProjectOut> = projects
        .into_iter()
        .map(|project| {
            let flags = Flags::of(&catalogue, &project.id, now);
            let health = flags.health();
            DashboardProjectOut {
                id: project.id,
                name: project.name,
                health,
                technical_debt: 100 - health,
                member_count: 0,
                feature_count: flags.live.len(),
            }
        })
        .collect();
    projects.sort_by(|left, right| left.name.cmp(&right.name));
    Ok(DashboardOut {
        projects,
        flags: mine
            .into_iter()
            .take(100)
            .map(|row| DashboardFlagOut {
                name: row.name.clone(),
                feature_type: row.feature_type.clone(),
                project: row.project_id.clone(),
            })
            .collect(),
        project_owners: Vec::new(),
        admins: users
            .into_iter()
            .filter(|user| user.root_role == RootRole::Admin)
            .map(|user| AdminOut {
                image_url: crate::identity::users::types::image_url(
                    user.email.as_deref(),
                    user.username.as_deref(),
                    user.id,
                ),
                id: user.id,
                name: user.name.filter(|name| !name.is_empty()),
                username: user.username.filter(|name| !name.is_empty()),
                email: user.email.filter(|email| !email.is_empty()),
            })
            .collect(),
    })
}

/// Who may read a project on the personal dashboard.
pub const DASHBOARD_PROJECT: Access = Access::Read;

/// A project on the caller's dashboard: its newest events, onboarding and health in figures.
pub async fn dashboard_project(
    ctx: &Runtime,
    project: String,
) -> Result<DashboardProjectDetailOut, AdminError> {
    let now = ctx.now();
    let id = project.clone();
    let events = db::run(&ctx.store, move |conn| {
        queries::events::latest_of_project(conn, &id, 10)
    })
    .await?;
    let read = read(ctx, project, now).await.map_err(|error| match error {
        AdminError::NotFound(_) => AdminError::NotFound("No project with that id exists.".into()),
        other => other,
    })?;
    let flags = Flags::of(&read.catalogue, &read.project.id, now);
    let health = flags.health();
    // Told as the event log tells them, with links to the console.
    let formatter = crate::catalogue::events::EventFormatter::new(
        &ctx.settings.unleash_url,
        crate::catalogue::events::Bold::Markdown,
    );
    Ok(DashboardProjectDetailOut {
        latest_events: events
            .into_iter()
            .map(|event| {
                let (_, summary) =
                    formatter.format(&crate::catalogue::events::types::EventOut::of(event.clone()));
                DashboardEventOut {
                    created_at: crate::runtime::input::iso(event.created_at),
                    summary,
                    created_by_image_url: crate::identity::users::types::image_url(
                        Some(&event.created_by),
                        None,
                        0,
                    ),
                    created_by: event.created_by,
                    id: event.id,
                }
            })
            .collect(),
        onboarding_status: onboarding(&read.project.id, &read.catalogue, &read.connected),
        owners: system_owner(),
        roles: Vec::new(),
        insights: InsightsOut {
            avg_health_current_window: None,
            avg_health_past_window: None,
            total_flags: flags.live.len(),
            potentially_stale_flags: flags.potentially_stale,
            stale_flags: flags.stale,
            active_flags: flags.live.len() - flags.stale - flags.potentially_stale,
            technical_debt: 100 - health,
            health,
        },
    })
}
