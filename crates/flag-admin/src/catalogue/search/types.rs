//! `GET /api/admin/search/features`, as Unleash answers it.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::catalogue::features::types::{LifecycleOut, PersonOut};

/// The query: filters in Unleash's syntax (`IS:value`, `IS_ANY_OF:a,b`, `INCLUDE:type:value`,
/// `IS_BEFORE:yyyy-MM-dd`...), paging and sorting.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Words, separated by commas, found in a flag's name or description.
    #[serde(default)]
    pub query: Option<String>,
    /// `IS`, `IS_NOT`, `IS_ANY_OF` or `IS_NONE_OF` projects.
    #[serde(default)]
    pub project: Option<String>,
    /// `IS`, `IS_NOT`, `IS_ANY_OF` or `IS_NONE_OF` flag types.
    #[serde(default, rename = "type")]
    pub feature_type: Option<String>,
    /// `IS`, `IS_NOT`, `IS_ANY_OF` or `IS_NONE_OF` creators' user ids.
    #[serde(default)]
    pub created_by: Option<String>,
    /// `INCLUDE`, `DO_NOT_INCLUDE`, `INCLUDE_ALL_OF`, `INCLUDE_ANY_OF`, `EXCLUDE_IF_ANY_OF` or
    /// `EXCLUDE_ALL` tags, each `type:value`.
    #[serde(default)]
    pub tag: Option<String>,
    /// The same operators as `tag`, on the names of the segments a flag's strategies use.
    #[serde(default)]
    pub segment: Option<String>,
    /// `IS`, `IS_NOT`, `IS_ANY_OF` or `IS_NONE_OF` of `active`, `stale` and `potentially-stale`.
    #[serde(default)]
    pub state: Option<String>,
    /// `IS`, `IS_NOT`, `IS_ANY_OF` or `IS_NONE_OF` lifecycle stages; `archived` finds archived
    /// flags.
    #[serde(default)]
    pub lifecycle: Option<String>,
    /// `IS_BEFORE` or `IS_ON_OR_AFTER` a day, `yyyy-MM-dd`.
    #[serde(default)]
    pub created_at: Option<String>,
    /// `IS_BEFORE` or `IS_ON_OR_AFTER` a day, `yyyy-MM-dd`, in any environment.
    #[serde(default)]
    pub last_seen_at: Option<String>,
    /// `IS:true` or `IS:false`: favourites are not kept here, so `true` finds none.
    #[serde(default)]
    pub favorite: Option<String>,
    /// `IS:true` for archived flags only; live flags otherwise.
    #[serde(default)]
    pub archived: Option<String>,
    /// `environment:enabled` or `environment:disabled`.
    #[serde(default)]
    pub status: Option<String>,
    /// Flags to skip; 0 by default.
    #[serde(default)]
    pub offset: Option<String>,
    /// Flags to answer, 1 to 100; 50 otherwise.
    #[serde(default)]
    pub limit: Option<String>,
    /// `name`, `type`, `stale`, `project`, `createdAt` (the default), `lastSeenAt` or
    /// `environment:<name>`.
    #[serde(default)]
    pub sort_by: Option<String>,
    /// `asc` (the default) or `desc`.
    #[serde(default)]
    pub sort_order: Option<String>,
    /// Accepted, with no effect: favourites are not kept here.
    #[serde(default)]
    pub favorites_first: Option<String>,
}

/// A flag in one environment, as a search shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchEnvironmentOut {
    /// The environment.
    pub name: String,
    /// Whether the flag is on there.
    pub enabled: bool,
    /// The environment's type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// The environment's display order.
    pub sort_order: i32,
    /// The flag's variants there.
    pub variant_count: usize,
    /// When an SDK last reported evaluating it there.
    pub last_seen_at: Option<String>,
    /// Whether it has strategies there.
    pub has_strategies: bool,
    /// Whether any of them is enabled.
    pub has_enabled_strategies: bool,
    /// Evaluations to true in the last hour.
    pub yes: i64,
    /// Evaluations to false in the last hour.
    pub no: i64,
    /// Pending change requests: none here.
    pub change_request_ids: Vec<i64>,
}

/// A tag with its tag type's colour.
#[derive(Debug, Serialize, ToSchema)]
pub struct ColoredTagOut {
    /// The value.
    pub value: String,
    /// The tag type.
    #[serde(rename = "type")]
    pub tag_type: String,
    /// The tag type's colour.
    pub color: Option<String>,
}

/// A flag found. It has no `lastSeenAt` of its own, as in Unleash since 8.0: each environment
/// says when the flag was last seen there.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchFeatureOut {
    /// Its type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// Free text.
    pub description: Option<String>,
    /// Its project.
    pub project: String,
    /// Always false: favourites are not kept here.
    pub favorite: bool,
    /// Its name.
    pub name: String,
    /// When it was created.
    pub created_at: String,
    /// Whether it is marked stale.
    pub stale: bool,
    /// When it was archived; `null` while it is live.
    pub archived_at: Option<String>,
    /// Whether SDKs emit impression events for it.
    pub impression_data: bool,
    /// `parent`, `child`, or `null`.
    pub dependency_type: Option<&'static str>,
    /// Its state in each environment, by display order.
    pub environments: Vec<SearchEnvironmentOut>,
    /// The names of the segments its strategies use.
    pub segments: Vec<String>,
    /// Who created it.
    pub created_by: PersonOut,
    /// Its lifecycle stage, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<LifecycleOut>,
    /// Its tags; absent when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<ColoredTagOut>>,
}

/// The answer: a page of flags and how many match.
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchOut {
    /// The page.
    pub features: Vec<SearchFeatureOut>,
    /// How many flags match.
    pub total: usize,
}
