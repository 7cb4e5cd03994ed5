//! Projects: `/api/admin/projects`.

use flag_store::models::{FeatureRow, ProjectRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::runtime::domain::ResourceName;
use crate::runtime::input::iso;

/// A project just created, as Unleash answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedProjectOut {
    /// Its id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The environments it uses.
    pub environments: Vec<String>,
    /// Always `open`.
    pub mode: &'static str,
    /// Always `default`.
    pub default_stickiness: &'static str,
    /// Always `null`: no limit.
    pub feature_limit: Option<u32>,
    /// When it was created.
    pub created_at: String,
}

impl CreatedProjectOut {
    /// The answer for `row`, which uses `environments`.
    pub fn new(row: ProjectRow, environments: Vec<String>) -> Self {
        Self {
            id: row.id,
            name: row.name,
            description: row.description,
            environments,
            mode: "open",
            default_stickiness: "default",
            feature_limit: None,
            created_at: iso(row.created_at),
        }
    }
}

/// An environment a project uses.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectEnvironmentOut {
    /// The environment's name.
    pub environment: String,
}

/// A feature of a project, in brief.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectFeatureOut {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// Whether it is marked stale.
    pub stale: bool,
}

impl From<FeatureRow> for ProjectFeatureOut {
    fn from(row: FeatureRow) -> Self {
        Self {
            name: row.name,
            feature_type: row.feature_type,
            stale: row.stale,
        }
    }
}

/// `GET /api/admin/projects/{projectId}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectDetailOut {
    /// Its id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The environments it uses.
    pub environments: Vec<ProjectEnvironmentOut>,
    /// Its features.
    pub features: Vec<ProjectFeatureOut>,
    /// When it was created.
    pub created_at: String,
}

/// Body of `POST /api/admin/projects`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateProject {
    /// Its id; made from the name when absent.
    #[serde(default)]
    pub id: Option<ResourceName>,
    /// Display name, not empty.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The environments it uses; every enabled one when absent.
    #[serde(default)]
    pub environments: Option<Vec<ResourceName>>,
}

/// Body of `POST /api/admin/projects/{projectId}/environments`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProjectEnvironment {
    /// The environment to enable.
    pub environment: ResourceName,
    /// Change requests are not supported: only `false` is accepted.
    #[serde(default)]
    pub change_requests_enabled: Option<bool>,
    /// A strategy for new flags in this environment; accepted and ignored, as Unleash's open
    /// edition ignores it.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub default_strategy: Option<serde_json::Map<String, serde_json::Value>>,
}
