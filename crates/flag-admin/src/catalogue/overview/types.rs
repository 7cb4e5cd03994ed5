//! The views of a project Unleash's web UI opens: the project list, a project's overview and
//! status, its flags' creators, and the personal dashboard.

use serde::Serialize;
use utoipa::ToSchema;

/// Where a project stands in getting started: Unleash's `onboardingStatus`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OnboardingOut {
    /// `onboarding-started`, `first-flag-created` or `onboarded`, as Unleash 8 answers.
    pub status: &'static str,
    /// For `first-flag-created`: a flag of the project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature: Option<String>,
}

/// A project's owner: always the system here, as in an open-source Unleash.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OwnerOut {
    /// `system`.
    pub owner_type: &'static str,
}

/// A project in the list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectListItem {
    /// Display name.
    pub name: String,
    /// Its id, used in paths.
    pub id: String,
    /// Free text.
    pub description: Option<String>,
    /// 100, less the share of stale and potentially stale flags.
    pub health: i64,
    /// 100 less the health.
    pub technical_debt: i64,
    /// Its live flags.
    pub feature_count: usize,
    /// Members: none here.
    pub member_count: usize,
    /// When it was created.
    pub created_at: String,
    /// Always `null`: projects are not archived here.
    pub archived_at: Option<String>,
    /// `open`, `protected` or `private`.
    pub mode: String,
    /// When an SDK last reported one of its flags.
    pub last_reported_flag_usage: Option<String>,
    /// When one of its flags last changed.
    pub last_updated_at: Option<String>,
    /// Where it stands in getting started.
    pub onboarding_status: OnboardingOut,
    /// Its owners.
    pub owners: Vec<OwnerOut>,
}

/// `GET /api/admin/projects`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectListOut {
    /// Always 1.
    pub version: u32,
    /// Every project, by name.
    pub projects: Vec<ProjectListItem>,
}

/// A project's activity in the last 30 days and the 30 before: zeros here, as in a fresh Unleash.
#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatsOut {
    /// Days from creation to production.
    pub avg_time_to_prod_current_window: f64,
    /// Flags created, last 30 days.
    pub created_current_window: i64,
    /// Flags created, the 30 days before.
    pub created_past_window: i64,
    /// Flags archived, last 30 days.
    pub archived_current_window: i64,
    /// Flags archived, the 30 days before.
    pub archived_past_window: i64,
    /// Changes, last 30 days.
    pub project_activity_current_window: i64,
    /// Changes, the 30 days before.
    pub project_activity_past_window: i64,
    /// Members added, last 30 days.
    pub project_members_added_current_window: i64,
}

/// The pattern a project's flag names must match; all `null` when it has none.
#[derive(Debug, Default, Serialize, serde::Deserialize, ToSchema)]
pub struct FeatureNamingOut {
    /// The pattern.
    pub pattern: Option<String>,
    /// A name that matches.
    pub example: Option<String>,
    /// What it asks for.
    pub description: Option<String>,
}

/// An environment of a project.
#[derive(Debug, Serialize, ToSchema)]
pub struct OverviewEnvironmentOut {
    /// Its name.
    pub environment: String,
}

/// How many live flags of a type a project has.
#[derive(Debug, Serialize, ToSchema)]
pub struct TypeCountOut {
    /// The type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// How many.
    pub count: usize,
}

/// `GET /api/admin/projects/{projectId}/overview`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOverviewOut {
    /// Activity.
    pub stats: ProjectStatsOut,
    /// Display name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// `open`, `protected` or `private`.
    pub mode: String,
    /// No limit: `null`.
    pub feature_limit: Option<u32>,
    /// No naming pattern.
    pub feature_naming: FeatureNamingOut,
    /// None.
    #[schema(value_type = Vec<Object>)]
    pub link_templates: Vec<serde_json::Value>,
    /// `default`.
    pub default_stickiness: &'static str,
    /// 100, less the share of stale and potentially stale flags.
    pub health: i64,
    /// 100 less the health.
    pub technical_debt: i64,
    /// Always false.
    pub favorite: bool,
    /// When one of its flags last changed, else when it was created.
    pub updated_at: String,
    /// When it was created.
    pub created_at: String,
    /// Where it stands in getting started.
    pub onboarding_status: OnboardingOut,
    /// Its environments, by display order.
    pub environments: Vec<OverviewEnvironmentOut>,
    /// Its live flags by type.
    pub feature_type_counts: Vec<TypeCountOut>,
    /// Members: none here.
    pub members: usize,
    /// Always 1.
    pub version: u32,
}

/// The resources of a project.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesOut {
    /// Members: none here.
    pub members: usize,
    /// API tokens limited to it.
    pub api_tokens: usize,
    /// Segments of it.
    pub segments: usize,
}

/// Changes on one day.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActivityOut {
    /// `yyyy-MM-dd`.
    pub date: String,
    /// How many.
    pub count: usize,
}

/// A current value.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentOut {
    /// The value now.
    pub current: i64,
}

/// Flags in a lifecycle stage.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageSummaryOut {
    /// Average days flags spent in it; `null` without data.
    pub average_days: Option<i64>,
    /// Live flags in it now.
    pub current_flags: usize,
}

/// Archived flags.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchivedSummaryOut {
    /// Archived flags of the project.
    pub current_flags: usize,
    /// Of which archived in the last 30 days.
    pub last30_days: usize,
}

/// Flags by lifecycle stage.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleSummaryOut {
    /// `initial`.
    pub initial: StageSummaryOut,
    /// `pre-live`.
    pub pre_live: StageSummaryOut,
    /// `live`.
    pub live: StageSummaryOut,
    /// `completed`.
    pub completed: StageSummaryOut,
    /// `archived`.
    pub archived: ArchivedSummaryOut,
}

/// A count.
#[derive(Debug, Serialize, ToSchema)]
pub struct TotalOut {
    /// How many.
    pub total: usize,
}

/// `GET /api/admin/projects/{projectId}/status`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectStatusOut {
    /// Its members, tokens and segments.
    pub resources: ResourcesOut,
    /// Changes per day over the last year.
    pub activity_count_by_date: Vec<ActivityOut>,
    /// Its health now.
    pub health: CurrentOut,
    /// Its technical debt now.
    pub technical_debt: CurrentOut,
    /// Its flags by lifecycle stage.
    pub lifecycle_summary: LifecycleSummaryOut,
    /// Stale and potentially stale live flags.
    pub stale_flags: TotalOut,
}

/// Someone who created flags of a project.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatorOut {
    /// The user's id.
    pub id: i32,
    /// Their name.
    pub name: String,
}

/// A project on the personal dashboard.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardProjectOut {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its health.
    pub health: i64,
    /// 100 less the health.
    pub technical_debt: i64,
    /// Members: none here.
    pub member_count: usize,
    /// Its live flags.
    pub feature_count: usize,
}

/// A flag on the personal dashboard.
#[derive(Debug, Serialize, ToSchema)]
pub struct DashboardFlagOut {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// Its project.
    pub project: String,
}

/// An administrator.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminOut {
    /// Their id.
    pub id: i32,
    /// Their name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Their username.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Their email.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// A Gravatar address.
    pub image_url: String,
}

/// `GET /api/admin/personal-dashboard`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardOut {
    /// The projects.
    pub projects: Vec<DashboardProjectOut>,
    /// The flags the caller created, newest first, at most 100.
    pub flags: Vec<DashboardFlagOut>,
    /// Project owners: none here.
    #[schema(value_type = Vec<Object>)]
    pub project_owners: Vec<serde_json::Value>,
    /// The administrators.
    pub admins: Vec<AdminOut>,
}

/// An event on the personal dashboard.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardEventOut {
    /// When.
    pub created_at: String,
    /// What happened, in Markdown.
    pub summary: String,
    /// Who.
    pub created_by: String,
    /// Its id.
    pub id: i32,
    /// A Gravatar address for who.
    pub created_by_image_url: String,
}

/// A project's health in figures.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InsightsOut {
    /// Not kept here: `null`.
    pub avg_health_current_window: Option<f64>,
    /// Not kept here: `null`.
    pub avg_health_past_window: Option<f64>,
    /// Live flags.
    pub total_flags: usize,
    /// Potentially stale, not marked stale.
    pub potentially_stale_flags: usize,
    /// Marked stale.
    pub stale_flags: usize,
    /// The rest.
    pub active_flags: usize,
    /// 100 less the health.
    pub technical_debt: i64,
    /// The health.
    pub health: i64,
}

/// `GET /api/admin/personal-dashboard/{projectId}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DashboardProjectDetailOut {
    /// The newest 10 events.
    pub latest_events: Vec<DashboardEventOut>,
    /// Where it stands in getting started.
    pub onboarding_status: OnboardingOut,
    /// Its owners.
    pub owners: Vec<OwnerOut>,
    /// The caller's roles in it: none here.
    #[schema(value_type = Vec<Object>)]
    pub roles: Vec<serde_json::Value>,
    /// Its health in figures.
    pub insights: InsightsOut,
}
