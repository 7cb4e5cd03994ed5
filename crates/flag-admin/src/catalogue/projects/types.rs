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
    /// Free text; absent when none was given, as Unleash echoes the request.
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// A project's mode, as Unleash names it. It is kept and answered as written; what it asks of
/// visibility (a private project hidden from non-members) is not enforced here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProjectMode {
    /// Everyone sees it.
    #[default]
    Open,
    /// Everyone sees it; in Unleash only its members submit change requests.
    Protected,
    /// In Unleash only its members and administrators see it.
    Private,
}

impl ProjectMode {
    /// Unleash's name of the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Protected => "protected",
            Self::Private => "private",
        }
    }
}

/// The pattern a project's flag names must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
pub struct FeatureNaming {
    /// A regular expression the whole name must match.
    pub pattern: Option<String>,
    /// A name that matches.
    #[serde(default)]
    pub example: Option<String>,
    /// What it asks for, for people.
    #[serde(default)]
    pub description: Option<String>,
}

/// A link every flag of a project shows, its URL made from the flag's name and project.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LinkTemplate {
    /// Its title.
    #[serde(default)]
    pub title: Option<String>,
    /// The URL, with `{{project}}` and `{{feature}}` in it.
    pub url_template: String,
}

/// Body of `PUT /api/admin/projects/{projectId}/settings`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectSettingsIn {
    /// Who may see and change it; `open` when absent.
    #[serde(default)]
    pub mode: Option<ProjectMode>,
    /// The pattern its flag names must match; none when absent.
    #[serde(default, deserialize_with = "crate::runtime::input::optional_object")]
    pub feature_naming: Option<FeatureNaming>,
    /// The links its flags show.
    #[serde(default, deserialize_with = "crate::runtime::input::optional_objects")]
    pub link_templates: Option<Vec<LinkTemplate>>,
}

/// Body of `PUT /api/admin/projects/{projectId}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct UpdateProjectIn {
    /// Display name, not empty.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
}
