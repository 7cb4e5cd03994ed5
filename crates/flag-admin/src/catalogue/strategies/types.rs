//! A feature's strategies in an environment.

use std::collections::BTreeMap;

use flag_eval::{Constraint, Variant};
use flag_store::queries::strategies::StrategyInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::catalogue::model::{ConstraintSchema, VariantSchema};
use crate::runtime::error::AdminError;

/// Body of `POST .../strategies` and `PUT .../strategies/{strategyId}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyRequest {
    /// A registered strategy type.
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    disabled: Option<bool>,
    /// Evaluation order; after the others when absent.
    #[serde(default)]
    sort_order: Option<i32>,
    /// Parameters; numbers and booleans are read as strings.
    #[serde(default)]
    #[schema(value_type = Object)]
    parameters: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    #[schema(value_type = Vec<ConstraintSchema>)]
    constraints: Vec<Constraint>,
    /// Segment ids; each must exist.
    #[serde(default)]
    segments: Vec<i32>,
    #[serde(default)]
    #[schema(value_type = Vec<VariantSchema>)]
    variants: Vec<Variant>,
}

impl StrategyRequest {
    /// Checks the definition with flag-eval's strict validation and fills Unleash's defaults.
    pub fn into_input(self, feature: &str) -> Result<StrategyInput, AdminError> {
        crate::runtime::input::check_constraints(&self.constraints)?;
        let mut parameters: BTreeMap<String, String> = self
            .parameters
            .into_iter()
            .map(|(key, value)| {
                let text = match value {
                    serde_json::Value::String(text) => text,
                    other => other.to_string(),
                };
                (key, text)
            })
            .collect();
        if self.name == "flexibleRollout" {
            parameters.entry("rollout".into()).or_insert_with(|| "100".into());
            parameters
                .entry("stickiness".into())
                .or_insert_with(|| "default".into());
            parameters
                .entry("groupId".into())
                .or_insert_with(|| feature.to_owned());
        }
        let mut variants = self.variants;
        flag_eval::fix_variant_weights(&mut variants)
            .map_err(|error| AdminError::invalid("/variants", error.to_string()))?;
        let strategy = flag_eval::Strategy {
            name: self.name.clone(),
            parameters: parameters.clone().into(),
            constraints: self.constraints.clone(),
            variants: variants.clone(),
            ..flag_eval::Strategy::default()
        };
        let probe = flag_eval::Feature {
            name: feature.to_owned(),
            strategies: vec![strategy],
            ..flag_eval::Feature::default()
        };
        flag_eval::validate(&probe, &[]).or_else(|error| match error {
            // Segments are checked by the store, which knows them.
            flag_eval::ValidationError::UnknownSegment { .. } => Ok(()),
            other => Err(AdminError::invalid("/", other.to_string())),
        })?;
        Ok(StrategyInput {
            name: self.name,
            title: self.title,
            disabled: self.disabled.unwrap_or(false),
            sort_order: self.sort_order,
            parameters,
            constraints: self.constraints,
            segments: self.segments,
            variants,
        })
    }
}
