//! Features: `/api/admin/projects/{projectId}/features`.

use flag_eval::{Strategy, Variant};
use flag_store::models::FeatureRow;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::{FeatureType, ResourceName};
use crate::dto::iso;
use crate::dto::model::{StrategySchema, VariantSchema};

/// A feature, without its environments.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureOut {
    /// Its name.
    pub name: String,
    /// `release`, `experiment`, `operational`, `kill-switch`, `permission` or `sunset`.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// Free text.
    pub description: Option<String>,
    /// The project it belongs to.
    pub project: String,
    /// Whether it is marked stale.
    pub stale: bool,
    /// Whether SDKs emit impression events for it.
    pub impression_data: bool,
    /// Whether it is archived.
    pub archived: bool,
    /// When it was created.
    pub created_at: String,
}

impl From<FeatureRow> for FeatureOut {
    fn from(row: FeatureRow) -> Self {
        Self {
            name: row.name,
            feature_type: row.feature_type,
            description: row.description,
            project: row.project_id,
            stale: row.stale,
            impression_data: row.impression_data,
            archived: row.archived_at.is_some(),
            created_at: iso(row.created_at),
        }
    }
}

/// A feature in one environment, as a feature list shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironmentSummary {
    /// The environment.
    pub name: String,
    /// Whether the feature is on there.
    pub enabled: bool,
    /// When an SDK last reported evaluating it there.
    pub last_seen_at: Option<String>,
}

/// A feature in a project's list.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureListItem {
    /// The feature.
    #[serde(flatten)]
    pub feature: FeatureOut,
    /// Its state in each environment of its project that the caller may read.
    pub environments: Vec<FeatureEnvironmentSummary>,
}

/// `GET /api/admin/projects/{projectId}/features`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeaturesOut {
    /// Always 1.
    pub version: u32,
    /// The project's features, by name.
    pub features: Vec<FeatureListItem>,
}

/// Body of `POST /api/admin/projects/{projectId}/features`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateFeature {
    /// Unique across projects, archived features included.
    pub name: ResourceName,
    /// `release` when absent.
    #[serde(default, rename = "type")]
    pub feature_type: FeatureType,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether SDKs emit impression events for it.
    #[serde(default)]
    pub impression_data: bool,
}

/// A feature's state in one environment.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureEnvironmentOut {
    /// The environment.
    pub name: String,
    /// Whether the feature is on there.
    pub enabled: bool,
    /// Its strategies there, in evaluation order.
    #[schema(value_type = Vec<StrategySchema>)]
    pub strategies: Vec<Strategy>,
    /// Its variants there.
    #[schema(value_type = Vec<VariantSchema>)]
    pub variants: Vec<Variant>,
    /// When an SDK last reported evaluating it there.
    #[serde(rename = "lastSeenAt")]
    pub last_seen_at: Option<String>,
}

/// `GET /api/admin/projects/{projectId}/features/{featureName}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureDetailOut {
    /// The feature.
    #[serde(flatten)]
    pub feature: FeatureOut,
    /// Its state in each environment of its project that the caller may read.
    pub environments: Vec<FeatureEnvironmentOut>,
}
