//! Flags' lifecycles.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Whether a completed flag was kept or discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompletedStatus {
    /// Kept in the code.
    Kept,
    /// Removed from the code.
    Discarded,
}

impl CompletedStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Kept => "kept",
            Self::Discarded => "discarded",
        }
    }
}

/// Body of `POST .../lifecycle/complete`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompleteFeature {
    /// Kept or discarded.
    pub status: CompletedStatus,
    /// The variant kept.
    #[serde(default)]
    pub status_value: Option<String>,
}

/// `GET /api/admin/lifecycle/count`: flags by the stage they entered last.
#[derive(Debug, Default, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleCountOut {
    /// In `initial`.
    pub initial: usize,
    /// In `pre-live`.
    pub pre_live: usize,
    /// In `live`.
    pub live: usize,
    /// In `completed`.
    pub completed: usize,
    /// In `archived`.
    pub archived: usize,
}
