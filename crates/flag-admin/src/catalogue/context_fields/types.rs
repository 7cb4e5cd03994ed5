//! Context fields: `/api/admin/context`.

use flag_store::StoreError;
use flag_store::models::ContextFieldRow;
pub use flag_store::models::LegalValue;
use flag_store::queries::segments::Usage;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::runtime::domain::ResourceName;
use crate::runtime::input::iso;

/// One allowed value of a context field.
#[derive(Debug, ToSchema)]
#[schema(as = LegalValue)]
#[allow(dead_code, reason = "schema-only: flag-store's LegalValue is the value")]
pub struct LegalValueSchema {
    value: String,
    description: Option<String>,
}

/// A context field.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextFieldOut {
    /// Its name, as constraints refer to it.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it can be used for stickiness.
    pub stickiness: bool,
    /// Display order.
    pub sort_order: i32,
    /// The values constraints on it may use; any when empty.
    #[schema(value_type = Vec<LegalValueSchema>)]
    pub legal_values: Vec<LegalValue>,
    /// When it was created.
    pub created_at: String,
    /// How many live flags have a strategy constraint on it; in lists only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_in_features: Option<i64>,
    /// In how many projects; in lists only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub used_in_projects: Option<i64>,
}

impl TryFrom<ContextFieldRow> for ContextFieldOut {
    type Error = StoreError;

    fn try_from(row: ContextFieldRow) -> Result<Self, StoreError> {
        Ok(Self {
            legal_values: row.legal_values()?,
            name: row.name,
            description: row.description,
            stickiness: row.stickiness,
            sort_order: row.sort_order,
            created_at: iso(row.created_at),
            used_in_features: None,
            used_in_projects: None,
        })
    }
}

impl TryFrom<(ContextFieldRow, Usage)> for ContextFieldOut {
    type Error = StoreError;

    fn try_from((row, usage): (ContextFieldRow, Usage)) -> Result<Self, StoreError> {
        Ok(Self {
            used_in_features: Some(usage.features),
            used_in_projects: Some(usage.projects),
            ..Self::try_from(row)?
        })
    }
}

/// Body of `POST /api/admin/context`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateContextField {
    /// Its name.
    pub name: ResourceName,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether it can be used for stickiness.
    #[serde(default)]
    pub stickiness: bool,
    /// Display order; 10 when absent.
    #[serde(default)]
    pub sort_order: Option<i32>,
    /// The values constraints on it may use.
    #[serde(default)]
    #[schema(value_type = Vec<LegalValueSchema>)]
    pub legal_values: Vec<LegalValue>,
}

/// Body of `PUT /api/admin/context/{name}`: the name comes from the path.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateContextField {
    /// Free text; unchanged when absent.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether it can be used for stickiness; `false` when absent.
    #[serde(default)]
    pub stickiness: bool,
    /// Display order; unchanged when absent.
    #[serde(default)]
    pub sort_order: Option<i32>,
    /// The values constraints on it may use; none when absent.
    #[serde(default)]
    #[schema(value_type = Vec<LegalValueSchema>)]
    pub legal_values: Vec<LegalValue>,
}

/// Body of `POST /api/admin/context/{name}/legal-values`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LegalValueIn {
    /// The value, 1 to 100 characters.
    pub value: String,
    /// What it means.
    #[serde(default)]
    pub description: Option<String>,
}

/// `GET /api/admin/context/{name}/strategies`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContextStrategiesOut {
    /// The strategies of live flags with a constraint on the field.
    pub strategies: Vec<crate::catalogue::segments::types::StrategyUseOut>,
}
