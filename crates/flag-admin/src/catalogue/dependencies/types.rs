//! A feature's dependency on a parent feature.

use serde::Deserialize;
use utoipa::ToSchema;

/// Body of `POST .../features/{featureName}/dependencies`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct AddDependency {
    /// The parent feature.
    pub feature: String,
    /// Whether the parent must be on (the default) or off.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// When the parent must be on: the variants it must give; any when empty.
    #[serde(default)]
    pub variants: Vec<String>,
}
