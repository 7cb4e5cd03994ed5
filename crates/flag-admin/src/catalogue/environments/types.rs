//! Environments: `GET`/`POST /api/admin/environments`.

use flag_store::models::EnvironmentRow;
use flag_store::queries::environments::EnvironmentCounts;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::runtime::domain::ResourceName;

/// An environment as `GET /api/admin/environments` lists it, with Unleash's counts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentOut {
    /// Its name.
    pub name: String,
    /// `development`, `production`, or any other type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Display order.
    pub sort_order: i32,
    /// Whether it is in use.
    pub enabled: bool,
    /// Always `false`: no environment is protected here.
    pub protected: bool,
    /// Approvals a change request needs: always `null`, as in Unleash's open edition, since
    /// change requests are not supported.
    pub required_approvals: Option<u32>,
    /// The projects that use it.
    pub project_count: i64,
    /// The API tokens for it, of every type, expired ones included.
    pub api_token_count: i64,
    /// The flags on in it, archived ones included, as Unleash counts them.
    pub enabled_toggle_count: i64,
}

impl From<(EnvironmentRow, EnvironmentCounts)> for EnvironmentOut {
    fn from((row, counts): (EnvironmentRow, EnvironmentCounts)) -> Self {
        Self {
            name: row.name,
            environment_type: row.environment_type,
            sort_order: row.sort_order,
            enabled: row.enabled,
            protected: false,
            required_approvals: None,
            project_count: counts.projects,
            api_token_count: counts.api_tokens,
            enabled_toggle_count: counts.enabled_flags,
        }
    }
}

/// `GET /api/admin/environments`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnvironmentsOut {
    /// Always 1.
    pub version: u32,
    /// Every environment, by display order.
    pub environments: Vec<EnvironmentOut>,
}

/// Body of `POST /api/admin/environments`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateEnvironment {
    /// The new environment's name.
    pub name: ResourceName,
    /// Its type, such as `development` or `production`.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Whether it starts in use; it does by default.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Display order; one past the largest by default, so it sorts last.
    #[serde(default)]
    pub sort_order: Option<i32>,
}

/// Body of `PUT /api/admin/environments/update/{name}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateEnvironment {
    /// Its type, such as `development` or `production`.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Display order; unchanged when absent.
    #[serde(default)]
    pub sort_order: Option<i32>,
}

/// One environment, as its own read and its creation answer it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentDetailOut {
    /// Its name.
    pub name: String,
    /// `development`, `production`, or any other type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Display order.
    pub sort_order: i32,
    /// Whether it is in use.
    pub enabled: bool,
    /// Always `false`.
    pub protected: bool,
    /// Approvals a change request needs: always `null`, as in Unleash's open edition.
    pub required_approvals: Option<u32>,
}

impl From<EnvironmentRow> for EnvironmentDetailOut {
    fn from(row: EnvironmentRow) -> Self {
        Self {
            name: row.name,
            environment_type: row.environment_type,
            sort_order: row.sort_order,
            enabled: row.enabled,
            protected: false,
            required_approvals: None,
        }
    }
}

/// An environment as a project sees it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProjectEnvironmentView {
    /// Its name.
    pub name: String,
    /// `development`, `production`, or any other type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Display order.
    pub sort_order: i32,
    /// Whether it is in use.
    pub enabled: bool,
    /// Always `false`.
    pub protected: bool,
    /// Always `null`.
    pub required_approvals: Option<u32>,
    /// API tokens for the project (or every project) in it.
    pub project_api_token_count: usize,
    /// The project's live flags on in it.
    pub project_enabled_toggle_count: i64,
    /// Whether the project has it.
    pub visible: bool,
}

/// `GET /api/admin/environments/project/{projectId}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectEnvironmentsOut {
    /// Always 1.
    pub version: u32,
    /// Every environment, by display order.
    pub environments: Vec<ProjectEnvironmentView>,
}
