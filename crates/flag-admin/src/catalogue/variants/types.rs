//! Variants: the variants-batch body and both operations' answer.
//!
//! Unleash coerces the variants-batch body as it validates it (a weight given as a numeric
//! string is read as its number) and answers with the variants as the client sent them, key
//! order included, with defaults filled in and weights normalised. No derived `Deserialize` can
//! both coerce and keep what was sent, so [`VariantsPush::parse`] reads the body as a JSON value,
//! here and nowhere else, and the schema-only [`PushVariantsRequest`] states the shape it accepts.

use flag_eval::model::Override;
use flag_eval::{Payload, Variant, fix_variant_weights};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::runtime::domain::ResourceName;
use crate::runtime::error::{AdminError, Detail};

const VARIANT_KEYS: [&str; 6] = [
    "name",
    "weight",
    "weightType",
    "stickiness",
    "payload",
    "overrides",
];
const PAYLOAD_TYPES: [&str; 4] = ["json", "csv", "string", "number"];

/// A feature's variants in an environment (Unleash's `featureVariantsSchema`).
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureVariantsResponse {
    /// Always 1.
    #[schema(example = 1)]
    version: u32,
    #[schema(value_type = Vec<VariantSchema>)]
    variants: Vec<VariantOut>,
}

/// A variant as stored, or as a variants-batch request sent it.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum VariantOut {
    Stored(Variant),
    Echoed(Map<String, Value>),
}

impl From<Vec<Variant>> for FeatureVariantsResponse {
    fn from(variants: Vec<Variant>) -> Self {
        Self {
            version: 1,
            variants: variants.into_iter().map(VariantOut::Stored).collect(),
        }
    }
}

/// A variants-batch body, read and checked: the variants as sent, as parsed, and the
/// environments to write them to.
#[derive(Debug)]
pub struct VariantsPush {
    raw: Vec<Map<String, Value>>,
    variants: Vec<Variant>,
    environments: Vec<String>,
}

impl VariantsPush {
    /// Checks `body` against the schema, coercing a numeric-string weight as Unleash does; at
    /// least one environment must be named.
    pub fn parse(body: Value) -> Result<Self, AdminError> {
        let Value::Object(mut fields) = body else {
            return Err(AdminError::invalid("/", "the body must be an object"));
        };
        let (raw, variants) = match fields.remove("variants") {
            None | Some(Value::Null) => (Vec::new(), Vec::new()),
            Some(list) => parse_list(list, "/variants")?,
        };
        let environments: Vec<String> = match fields.remove("environments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(index, item)| match item {
                    Value::String(environment) => Ok(environment),
                    _ => Err(AdminError::invalid(
                        format!("/environments/{index}"),
                        "an environment must be a string",
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(AdminError::invalid(
                    "/environments",
                    "/environments must be an array",
                ));
            }
        };
        if environments.is_empty() {
            return Err(AdminError::invalid("/environments", "no environments provided"));
        }
        Ok(Self {
            raw,
            variants,
            environments,
        })
    }

    /// A variants-batch command from typed values: `variants` for every one of `environments`,
    /// checked as [`parse`](Self::parse) checks a body that sends them, and answered as such a
    /// body is, so a page's save and the API's agree.
    pub fn new(variants: &[Variant], environments: Vec<String>) -> Result<Self, AdminError> {
        let list = serde_json::to_value(variants)
            .map_err(|error| AdminError::Internal(format!("cannot write variants as JSON: {error}")))?;
        let (raw, variants) = parse_list(list, "/variants")?;
        if environments.is_empty() {
            return Err(AdminError::invalid("/environments", "no environments provided"));
        }
        Ok(Self {
            raw,
            variants,
            environments,
        })
    }

    /// The environments to write, as named (repeats included).
    pub fn environments(&self) -> &[String] {
        &self.environments
    }

    /// The variants as they will be stored, once [`normalise`](Self::normalise)d.
    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }

    /// Applies Unleash's rules beyond the schema, then fills in stickiness (`default`) and weight
    /// types and shares the variable weights, so the variants read back as Unleash stores them.
    pub fn normalise(&mut self) -> Result<(), AdminError> {
        normalise(&mut self.variants, "/variants")
    }

    /// The answer: each variant as sent, in the client's key order after `weightType` and
    /// `stickiness` (filled in when absent), with its normalised weight.
    pub fn into_answer(self) -> FeatureVariantsResponse {
        let variants = self
            .raw
            .into_iter()
            .zip(&self.variants)
            .map(|(raw, variant)| {
                let mut out = Map::new();
                out.insert(
                    "weightType".into(),
                    Value::from(variant.weight_type.as_deref().unwrap_or("variable")),
                );
                out.insert(
                    "stickiness".into(),
                    Value::from(variant.stickiness.as_deref().unwrap_or("default")),
                );
                for (key, value) in raw {
                    match key.as_str() {
                        "weightType" | "stickiness" => {}
                        "weight" => {
                            out.insert(key, Value::from(variant.weight));
                        }
                        _ => {
                            out.insert(key, value);
                        }
                    }
                }
                VariantOut::Echoed(out)
            })
            .collect();
        FeatureVariantsResponse { version: 1, variants }
    }
}

/// The variants of one environment, as the per-environment `PUT` sends them or a `PATCH`
/// leaves them: checked against the schema and normalised as the batch's are. `at` is where
/// the list stands in the body (empty for a body that is the list).
pub fn environment_variants(list: Value, at: &str) -> Result<Vec<Variant>, AdminError> {
    let (_, mut variants) = parse_list(list, at)?;
    normalise(&mut variants, if at.is_empty() { "/" } else { at })?;
    Ok(variants)
}

/// Applies Unleash's rules beyond the schema to the variants at `at`, then fills in stickiness
/// (`default`) and weight types and shares the variable weights.
fn normalise(variants: &mut [Variant], at: &str) -> Result<(), AdminError> {
    check_rules(variants)?;
    for variant in variants.iter_mut() {
        variant.stickiness.get_or_insert_with(|| "default".into());
    }
    fix_variant_weights(variants).map_err(|error| AdminError::invalid(at, error.to_string()))
}

/// Variants as a client sent them, each an object in its key order.
type SentVariants = Vec<Map<String, Value>>;

/// A list of variants at `at`: each as sent, and as parsed.
fn parse_list(list: Value, at: &str) -> Result<(SentVariants, Vec<Variant>), AdminError> {
    let Value::Array(items) = list else {
        let place = if at.is_empty() { "the body" } else { at };
        return Err(AdminError::invalid(
            if at.is_empty() { "/" } else { at },
            format!("{place} must be an array"),
        ));
    };
    let raw: Vec<Map<String, Value>> = items
        .into_iter()
        .enumerate()
        .map(|(index, item)| match item {
            Value::Object(map) => Ok(map),
            _ => Err(AdminError::invalid(
                format!("{at}/{index}"),
                "a variant must be an object",
            )),
        })
        .collect::<Result<_, _>>()?;
    let variants = raw
        .iter()
        .enumerate()
        .map(|(index, raw)| parse_variant(raw, &format!("{at}/{index}")))
        .collect::<Result<_, _>>()?;
    Ok((raw, variants))
}

/// Schema checks of one variant, with coercion of a numeric-string weight as Unleash does.
fn parse_variant(raw: &Map<String, Value>, path: &str) -> Result<Variant, AdminError> {
    if let Some(key) = raw.keys().find(|key| !VARIANT_KEYS.contains(&key.as_str())) {
        return Err(AdminError::invalid(
            format!("{path}/{key}"),
            format!("{path} does not allow the property {key}"),
        ));
    }
    let name = match raw.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(_) => {
            return Err(AdminError::invalid(
                format!("{path}/name"),
                format!("{path}/name must be a string"),
            ));
        }
        None => {
            return Err(AdminError::invalid(
                format!("{path}/name"),
                format!("{path}/name is required"),
            ));
        }
    };
    let weight_path = format!("{path}/weight");
    let weight = match raw.get("weight") {
        Some(Value::Number(number)) => number.as_f64(),
        Some(Value::String(text)) => text.trim().parse::<f64>().ok(),
        Some(_) => None,
        None => {
            return Err(AdminError::invalid(
                &weight_path,
                format!("{weight_path} is required"),
            ));
        }
    }
    .ok_or_else(|| AdminError::invalid(&weight_path, format!("{weight_path} must be a number")))?;
    if !(0.0..=1000.0).contains(&weight) {
        return Err(AdminError::invalid(
            &weight_path,
            format!("{weight_path} must be between 0 and 1000; you sent {weight}"),
        ));
    }
    if weight.fract() != 0.0 {
        return Err(AdminError::invalid(
            &weight_path,
            format!("{weight_path} must be a whole number; you sent {weight}"),
        ));
    }
    let weight_type = match raw.get("weightType") {
        None => None,
        Some(Value::String(kind)) if kind == "variable" || kind == "fix" => Some(kind.clone()),
        Some(other) => {
            return Err(AdminError::invalid(
                format!("{path}/weightType"),
                format!("{path}/weightType must be \"variable\" or \"fix\"; you sent {other}"),
            ));
        }
    };
    let stickiness = match raw.get("stickiness") {
        None => None,
        Some(Value::String(stickiness)) => Some(stickiness.clone()),
        Some(_) => {
            return Err(AdminError::invalid(
                format!("{path}/stickiness"),
                format!("{path}/stickiness must be a string"),
            ));
        }
    };
    let payload = raw
        .get("payload")
        .map(|payload| parse_payload(payload, &format!("{path}/payload")))
        .transpose()?;
    let overrides = match raw.get("overrides") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(index, item)| parse_override(item, &format!("{path}/overrides/{index}")))
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(AdminError::invalid(
                format!("{path}/overrides"),
                format!("{path}/overrides must be an array"),
            ));
        }
    };
    Ok(Variant {
        name,
        // The range check above makes the conversion exact.
        weight: weight as i64,
        weight_type,
        stickiness,
        payload,
        overrides,
    })
}

fn parse_payload(value: &Value, path: &str) -> Result<Payload, AdminError> {
    let Value::Object(fields) = value else {
        return Err(AdminError::invalid(path, format!("{path} must be an object")));
    };
    if let Some(key) = fields.keys().find(|key| *key != "type" && *key != "value") {
        return Err(AdminError::invalid(
            format!("{path}/{key}"),
            format!("{path} does not allow the property {key}"),
        ));
    }
    let payload_type = match fields.get("type") {
        Some(Value::String(kind)) if PAYLOAD_TYPES.contains(&kind.as_str()) => kind.clone(),
        Some(_) => {
            return Err(AdminError::invalid(
                format!("{path}/type"),
                format!("{path}/type must be one of json, csv, string, number"),
            ));
        }
        None => {
            return Err(AdminError::invalid(
                format!("{path}/type"),
                format!("{path}/type is required"),
            ));
        }
    };
    let value = match fields.get("value") {
        Some(Value::String(text)) => text.clone(),
        Some(_) => {
            return Err(AdminError::invalid(
                format!("{path}/value"),
                format!("{path}/value must be a string"),
            ));
        }
        None => {
            return Err(AdminError::invalid(
                format!("{path}/value"),
                format!("{path}/value is required"),
            ));
        }
    };
    Ok(Payload { payload_type, value })
}

fn parse_override(value: &Value, path: &str) -> Result<Override, AdminError> {
    let Value::Object(fields) = value else {
        return Err(AdminError::invalid(path, format!("{path} must be an object")));
    };
    if let Some(key) = fields
        .keys()
        .find(|key| *key != "contextName" && *key != "values")
    {
        return Err(AdminError::invalid(
            format!("{path}/{key}"),
            format!("{path} does not allow the property {key}"),
        ));
    }
    let context_name = fields.get("contextName").and_then(Value::as_str).ok_or_else(|| {
        AdminError::invalid(
            format!("{path}/contextName"),
            format!("{path}/contextName must be a string"),
        )
    })?;
    let values = fields
        .get("values")
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| {
            AdminError::invalid(
                format!("{path}/values"),
                format!("{path}/values must be an array of strings"),
            )
        })?;
    Ok(Override {
        context_name: context_name.into(),
        values,
    })
}

/// Unleash's variant rules beyond the schema: URL-friendly unique names of 1 to 100 characters,
/// and payloads that hold what their type says.
fn check_rules(variants: &[Variant]) -> Result<(), AdminError> {
    let mut details = Vec::new();
    for (index, variant) in variants.iter().enumerate() {
        let path = format!("/variants/{index}");
        let name = &variant.name;
        // The resource-name rule, on the name as sent: white space around it is not trimmed here.
        let url_friendly = ResourceName::try_from(name.as_str()).is_ok_and(|parsed| parsed.as_str() == name);
        if !url_friendly {
            details.push(Detail::at(
                format!("{path}/name"),
                format!("{path}/name must be 1 to 100 URL-friendly characters; you sent {name:?}"),
            ));
        }
        if variants[..index].iter().any(|earlier| earlier.name == *name) {
            details.push(Detail::at(
                format!("{path}/name"),
                format!("{path}/name {name:?} is a duplicate"),
            ));
        }
        if let Some(payload) = &variant.payload {
            let ok = match payload.payload_type.as_str() {
                "json" => matches!(
                    serde_json::from_str::<Value>(&payload.value),
                    Ok(Value::Object(_) | Value::Array(_))
                ),
                "number" => payload.value.trim().parse::<f64>().is_ok_and(f64::is_finite),
                _ => true,
            };
            if !ok {
                details.push(Detail::at(
                    format!("{path}/payload/value"),
                    format!(
                        "{path}/payload/value is not a valid {} payload",
                        payload.payload_type
                    ),
                ));
            }
        }
    }
    AdminError::check(details)
}

pub use schema::{PushVariantsRequest, VariantSchema};

/// The OpenAPI description of variants: what variants-batch accepts and what both operations
/// answer. The variants-batch handler reads its body with [`VariantsPush::parse`]; these types
/// only state the shape.
mod schema {
    #![allow(dead_code, reason = "schema-only types: read by utoipa, never built")]

    use super::*;

    /// A variant's weight: a whole number from 0 to 1000. A request may give it as a numeric
    /// string, which is read as its number; answers always give a number.
    #[derive(Debug)]
    pub struct VariantWeight;

    impl PartialSchema for VariantWeight {
        fn schema() -> RefOr<Schema> {
            OneOfBuilder::new()
                .item(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(0))
                        .maximum(Some(1000)),
                )
                .item(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .pattern(Some(r"^\s*[0-9]+(\.0*)?\s*$")),
                )
                .description(Some(
                    "A whole number from 0 to 1000; a request may give it as a numeric string. Variable weights are shared so that they total 1000.",
                ))
                .into()
        }
    }

    impl ToSchema for VariantWeight {}

    /// How a variant's weight is set: `fix` keeps it, `variable` gets a share of what the
    /// `fix` weights leave of 1000.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "lowercase")]
    #[schema(as = VariantWeightType)]
    pub enum WeightType {
        Variable,
        Fix,
    }

    /// What a payload's value holds: `json` an object or an array, `number` a finite number.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "lowercase")]
    #[schema(as = VariantPayloadType)]
    pub enum PayloadType {
        Json,
        Csv,
        String,
        Number,
    }

    /// Data handed to the application with the variant.
    #[derive(Debug, ToSchema)]
    #[serde(deny_unknown_fields)]
    #[schema(as = VariantPayload)]
    pub struct PayloadSchema {
        #[serde(rename = "type")]
        payload_type: PayloadType,
        /// The payload, as a string that holds what `type` says.
        value: String,
    }

    /// Context values that force the variant.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[schema(as = VariantOverride)]
    pub struct OverrideSchema {
        context_name: String,
        values: Vec<String>,
    }

    /// A variant of a feature in an environment (Unleash's `variantSchema`). The optional fields
    /// may be absent but not null.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    #[schema(as = Variant)]
    pub struct VariantSchema {
        /// 1 to 100 URL-friendly characters, unique among the feature's variants.
        name: crate::runtime::domain::ResourceName,
        weight: VariantWeight,
        /// `variable` when absent.
        #[serde(default)]
        weight_type: WeightType,
        /// The context field that keeps a user on one variant; `default` when absent.
        #[serde(default)]
        stickiness: String,
        #[serde(default)]
        payload: PayloadSchema,
        /// Absent when there are none.
        #[serde(default)]
        overrides: Vec<OverrideSchema>,
    }

    /// Body of variants-batch (Unleash's `pushVariantsSchema`): the variants replace the
    /// feature's variants in every listed environment, all or none.
    #[derive(Debug, ToSchema)]
    pub struct PushVariantsRequest {
        /// Absent or null means none.
        variants: Option<Vec<VariantSchema>>,
        /// At least one environment.
        #[schema(min_items = 1)]
        environments: Vec<String>,
    }
}
