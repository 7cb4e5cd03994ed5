//! A feature's strategies in an environment.

use std::collections::BTreeMap;

use flag_eval::{Constraint, Variant};
use flag_store::queries::strategies::StrategyInput;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::catalogue::features::types::StrategyOut;
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
    /// A strategy of type `name` and nothing else: no title, parameters, constraints, segments
    /// or variants, enabled, after the others.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            disabled: None,
            sort_order: None,
            parameters: BTreeMap::new(),
            constraints: Vec::new(),
            segments: Vec::new(),
            variants: Vec::new(),
        }
    }

    /// The strategy type.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the strategy type; the parameters stay until [`clear_parameters`](Self::clear_parameters).
    pub fn set_name(&mut self, name: impl Into<String>) {
        self.name = name.into();
    }

    /// Drops every parameter.
    pub fn clear_parameters(&mut self) {
        self.parameters.clear();
    }

    /// Sets the parameter `name` to `value`.
    pub fn set_parameter(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.parameters
            .insert(name.into(), serde_json::Value::String(value.into()));
    }

    /// The constraints.
    pub fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }

    /// Replaces the constraints.
    pub fn set_constraints(&mut self, constraints: Vec<Constraint>) {
        self.constraints = constraints;
    }

    /// Sets the display title; none when empty.
    pub fn set_title(&mut self, title: impl Into<String>) {
        let title = title.into();
        self.title = (!title.trim().is_empty()).then_some(title);
    }

    /// Keeps the strategy without evaluating it, or evaluates it again.
    pub fn set_disabled(&mut self, disabled: bool) {
        self.disabled = Some(disabled);
    }

    /// Replaces the segments, by id.
    pub fn set_segments(&mut self, segments: Vec<i32>) {
        self.segments = segments;
    }

    /// Replaces the strategy variants.
    pub fn set_variants(&mut self, variants: Vec<Variant>) {
        self.variants = variants;
    }
}

/// The request that saves a stored strategy as it stands: an edit starts from it and changes
/// only what it sets.
impl TryFrom<StrategyOut> for StrategyRequest {
    type Error = AdminError;

    fn try_from(stored: StrategyOut) -> Result<Self, AdminError> {
        let out_of_range = |what: &str, value: i64| {
            AdminError::Internal(format!(
                "strategy {} has the {what} {value}, out of range",
                stored.id
            ))
        };
        let sort_order =
            i32::try_from(stored.sort_order).map_err(|_| out_of_range("sort order", stored.sort_order))?;
        let segments = stored
            .segments
            .iter()
            .map(|&id| i32::try_from(id).map_err(|_| out_of_range("segment", id)))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            parameters: stored
                .parameters
                .iter()
                .map(|(name, value)| (name.to_owned(), serde_json::Value::String(value.to_owned())))
                .collect(),
            name: stored.name,
            title: stored.title,
            disabled: Some(stored.disabled),
            sort_order: Some(sort_order),
            constraints: stored.constraints,
            segments,
            variants: stored.variants,
        })
    }
}

impl StrategyRequest {
    /// Checks the definition with flag-eval's strict validation and fills Unleash's defaults.
    pub fn into_input(self, feature: &str) -> Result<StrategyInput, AdminError> {
        crate::runtime::input::check_constraints(&self.constraints)?;
        let mut parameters: BTreeMap<String, String> = self
            .parameters
            .into_iter()
            .map(|(key, value)| (key, flag_eval::parameter_text(value)))
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
