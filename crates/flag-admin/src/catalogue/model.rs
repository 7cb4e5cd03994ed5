//! Schemas of the engine's model types as the API reads and writes them (`flag_eval::Constraint`,
//! `Variant`, `Strategy`). flag-eval knows nothing of HTTP or OpenAPI, so these describe its JSON
//! here; they are never built.

#![allow(dead_code, reason = "schema-only types: read by utoipa, never built")]

use std::collections::BTreeMap;

use utoipa::ToSchema;

/// A constraint on one context field.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Constraint)]
pub struct ConstraintSchema {
    /// The context field.
    context_name: String,
    /// One of Unleash's operators (`IN`, `STR_CONTAINS`, `NUM_GT`, `DATE_AFTER`, `SEMVER_EQ`, ...).
    operator: String,
    /// Values of the list operators.
    values: Option<Vec<String>>,
    /// Value of the single-value operators.
    value: Option<String>,
    /// Compare strings without regard to case (`STR_*` operators).
    case_insensitive: Option<bool>,
    /// Negate the result.
    inverted: Option<bool>,
}

/// A variant's payload.
#[derive(Debug, ToSchema)]
#[schema(as = Payload)]
pub struct PayloadSchema {
    /// `string`, `json`, `csv` or `number`.
    #[schema(rename = "type")]
    payload_type: String,
    /// The payload, as a string.
    value: String,
}

/// A variant override: the variant for these values of a context field.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Override)]
pub struct OverrideSchema {
    context_name: String,
    values: Vec<String>,
}

/// A variant of a flag or a strategy.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = VariantDefinition)]
pub struct VariantSchema {
    name: String,
    /// Out of 1000 across the variants.
    weight: i64,
    /// `variable` or `fix`.
    weight_type: Option<String>,
    stickiness: Option<String>,
    payload: Option<PayloadSchema>,
    overrides: Option<Vec<OverrideSchema>>,
}

/// An activation strategy as the admin API shows it.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Strategy)]
pub struct StrategySchema {
    /// The strategy type.
    name: String,
    /// Its id.
    id: Option<String>,
    title: Option<String>,
    disabled: Option<bool>,
    sort_order: Option<i64>,
    /// Parameters, as strings.
    parameters: BTreeMap<String, String>,
    constraints: Vec<ConstraintSchema>,
    /// Segment ids.
    segments: Option<Vec<i64>>,
    variants: Option<Vec<VariantSchema>>,
}
