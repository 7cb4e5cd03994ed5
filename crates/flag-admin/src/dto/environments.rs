//! Environments: `GET`/`POST /api/admin/environments`.

use flag_store::models::EnvironmentRow;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ResourceName;

/// An environment, as Unleash shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentOut {
    /// Its name.
    pub name: String,
    /// `development`, `production`, or any other type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Whether it is in use.
    pub enabled: bool,
    /// Display order.
    pub sort_order: i32,
    /// Always `false`: no environment is protected here.
    pub protected: bool,
}

impl From<EnvironmentRow> for EnvironmentOut {
    fn from(row: EnvironmentRow) -> Self {
        Self {
            name: row.name,
            environment_type: row.environment_type,
            enabled: row.enabled,
            sort_order: row.sort_order,
            protected: false,
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
    /// Display order; 1000 by default.
    #[serde(default)]
    pub sort_order: Option<i32>,
}
