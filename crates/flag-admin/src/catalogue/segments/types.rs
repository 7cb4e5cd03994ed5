//! Segments: `/api/admin/segments`.

use flag_eval::Constraint;
use flag_store::StoreError;
use flag_store::models::SegmentRow;
use flag_store::queries::segments::Usage;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::catalogue::model::ConstraintSchema;
use crate::runtime::input::iso;

/// A segment in the list.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentOut {
    /// Its id, as strategies refer to it.
    pub id: i32,
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Constraints that must all hold.
    #[schema(value_type = Vec<ConstraintSchema>)]
    pub constraints: Vec<Constraint>,
    /// The project it belongs to; absent for a global segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Who created it.
    pub created_by: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// How many live flags use it.
    pub used_in_features: i64,
    /// In how many projects.
    pub used_in_projects: i64,
}

impl TryFrom<(SegmentRow, Usage)> for SegmentOut {
    type Error = StoreError;

    fn try_from((row, usage): (SegmentRow, Usage)) -> Result<Self, StoreError> {
        Ok(Self {
            constraints: row.constraints()?,
            id: row.id,
            name: row.name,
            description: row.description,
            project: row.project_id,
            created_by: row.created_by,
            created_at: iso(row.created_at),
            used_in_features: usage.features,
            used_in_projects: usage.projects,
        })
    }
}

/// `GET /api/admin/segments`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SegmentsOut {
    /// Every segment.
    pub segments: Vec<SegmentOut>,
}

/// A segment just created, in the order Unleash answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedSegmentOut {
    /// Its id.
    pub id: i32,
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Constraints that must all hold.
    #[schema(value_type = Vec<ConstraintSchema>)]
    pub constraints: Vec<Constraint>,
    /// When it was created.
    pub created_at: String,
    /// Who created it.
    pub created_by: Option<String>,
    /// The project it belongs to; absent for a global segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// Body of `POST /api/admin/segments`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateSegment {
    /// Its name, not empty.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The project it belongs to; global when absent.
    #[serde(default)]
    pub project: Option<String>,
    /// Constraints, validated as strategy constraints are.
    #[serde(default)]
    #[schema(value_type = Vec<ConstraintSchema>)]
    pub constraints: Vec<Constraint>,
}

/// One segment as its own read answers it: the project left out when global.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentDetailOut {
    /// Its id.
    pub id: i32,
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The project it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Constraints that must all hold.
    #[schema(value_type = Vec<ConstraintSchema>)]
    pub constraints: Vec<Constraint>,
    /// Who created it.
    pub created_by: Option<String>,
    /// When it was created.
    pub created_at: String,
}

impl TryFrom<SegmentRow> for SegmentDetailOut {
    type Error = StoreError;

    fn try_from(row: SegmentRow) -> Result<Self, StoreError> {
        Ok(Self {
            constraints: row.constraints()?,
            id: row.id,
            name: row.name,
            description: row.description,
            project: row.project_id,
            created_by: row.created_by,
            created_at: iso(row.created_at),
        })
    }
}

/// A strategy that uses a segment or a context field.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyUseOut {
    /// The strategy.
    pub id: String,
    /// Its flag's project.
    pub project_id: String,
    /// Its flag.
    pub feature_name: String,
    /// Its strategy type.
    pub strategy_name: String,
    /// Its environment.
    pub environment: String,
}

impl From<flag_store::queries::segments::StrategyUse> for StrategyUseOut {
    fn from(
        (id, project_id, feature_name, strategy_name, environment): flag_store::queries::segments::StrategyUse,
    ) -> Self {
        Self {
            id,
            project_id,
            feature_name,
            strategy_name,
            environment,
        }
    }
}

/// `GET /api/admin/segments/{id}/strategies`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SegmentStrategiesOut {
    /// The strategies of live flags that use it.
    pub strategies: Vec<StrategyUseOut>,
    /// Strategies in pending change requests: always none here.
    pub change_request_strategies: Vec<StrategyUseOut>,
}

/// `GET /api/admin/segments/strategies/{strategyId}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StrategySegmentsOut {
    /// The segments the strategy uses.
    pub segments: Vec<SegmentDetailOut>,
}

/// Body of `POST /api/admin/segments/validate` and `POST /api/admin/context/validate`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NameIn {
    /// The name to check.
    pub name: String,
}
