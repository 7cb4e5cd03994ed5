//! Strategy types: `/api/admin/strategies`.

use flag_store::StoreError;
use flag_store::models::{StrategyParameter, StrategyTypeRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::runtime::domain::ResourceName;

/// A parameter a strategy type declares.
#[derive(Debug, ToSchema)]
#[schema(as = StrategyParameter)]
#[allow(
    dead_code,
    reason = "schema-only: flag-store's StrategyParameter is the value"
)]
pub struct StrategyParameterSchema {
    name: String,
    /// `string`, `percentage`, `list`, `number` or `boolean`.
    #[schema(rename = "type")]
    parameter_type: String,
    description: Option<String>,
    required: Option<bool>,
}

/// A strategy type.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyTypeOut {
    /// Its name, as strategies refer to it.
    pub name: String,
    /// The name people read: `Gradual rollout` for `flexibleRollout`, as Unleash names its
    /// built-in types; `null` for custom ones.
    pub display_name: Option<String>,
    /// A title given with a custom type; `null` for the built-in ones, as in Unleash.
    pub title: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// False for the built-in types.
    pub editable: bool,
    /// Whether it is deprecated: still evaluated, no longer offered for new strategies.
    pub deprecated: bool,
    /// The parameters its strategies take.
    #[schema(value_type = Vec<StrategyParameterSchema>)]
    pub parameters: Vec<StrategyParameter>,
}

impl TryFrom<StrategyTypeRow> for StrategyTypeOut {
    type Error = StoreError;

    fn try_from(row: StrategyTypeRow) -> Result<Self, StoreError> {
        Ok(Self {
            parameters: row.parameters()?,
            editable: !row.built_in,
            name: row.name,
            display_name: row.display_name,
            title: row.title,
            description: row.description,
            deprecated: row.deprecated,
        })
    }
}

/// `GET /api/admin/strategies`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StrategyTypesOut {
    /// Always 1.
    pub version: u32,
    /// Every strategy type.
    pub strategies: Vec<StrategyTypeOut>,
}

/// Body of `POST /api/admin/strategies`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateStrategyType {
    /// Its name.
    pub name: ResourceName,
    /// Display title.
    #[serde(default)]
    pub title: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The parameters its strategies take.
    #[serde(default)]
    #[schema(value_type = Vec<StrategyParameterSchema>)]
    pub parameters: Vec<StrategyParameter>,
}

/// Body of `PUT /api/admin/strategies/{name}`: the name comes from the path.
#[derive(Debug, Deserialize, ToSchema)]
pub struct UpdateStrategyType {
    /// Display title.
    #[serde(default)]
    pub title: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The parameters its strategies take.
    #[schema(value_type = Vec<StrategyParameterSchema>)]
    pub parameters: Vec<StrategyParameter>,
}
