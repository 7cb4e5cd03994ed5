//! Serde types for Unleash's client-features document and its delta events.
//!
//! These mirror what `GET /api/client/features` returns and what the client specification calls
//! `state`. They are read leniently, as Unleash's SDKs read them: missing lists are empty, `null`
//! is the same as absent, and strategy parameters given as numbers or booleans become strings.
//! Nothing here is validated; [`crate::compile`] and [`crate::validate`] do that.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// A client-features document: `{version, features, segments}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientFeatures {
    /// Schema version of the document (2 for current Unleash servers).
    #[serde(default)]
    pub version: u32,
    /// The flags.
    #[serde(default, deserialize_with = "null_as_default")]
    pub features: Vec<Feature>,
    /// Segments referenced by strategies, when the server sends them separately.
    #[serde(default, deserialize_with = "null_as_default")]
    pub segments: Vec<Segment>,
}

/// One feature flag as an SDK sees it in one environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Feature {
    /// Unique name of the flag.
    pub name: String,
    /// Flag type (`release`, `experiment`, ...).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub feature_type: Option<String>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the flag is on in this environment.
    #[serde(default)]
    pub enabled: bool,
    /// Project the flag belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Whether the flag is marked stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<bool>,
    /// Whether SDKs emit impression events for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impression_data: Option<bool>,
    /// Activation strategies, in evaluation order.
    #[serde(default, deserialize_with = "null_as_default")]
    pub strategies: Vec<Strategy>,
    /// Flag-level variants of this environment.
    #[serde(default, deserialize_with = "null_as_default")]
    pub variants: Vec<Variant>,
    /// Parent flags this flag depends on.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub dependencies: Vec<Dependency>,
}

/// An activation strategy of a flag.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Strategy {
    /// Strategy type name (`default`, `flexibleRollout`, or a custom name).
    pub name: String,
    /// Strategy id; the admin API always has one, the client API leaves it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Human title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Disabled strategies are skipped by SDKs and shown as unevaluated by the playground.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// Position among the flag's strategies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i64>,
    /// Parameters; numbers and booleans are read as their string form.
    #[serde(default, deserialize_with = "string_map")]
    pub parameters: BTreeMap<String, String>,
    /// Constraints that must all hold.
    #[serde(default, deserialize_with = "null_as_default")]
    pub constraints: Vec<Constraint>,
    /// Ids of segments whose constraints must all hold.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub segments: Vec<i64>,
    /// Strategy variants, chosen when this strategy is the one that enables the flag.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub variants: Vec<Variant>,
}

/// A constraint on one context field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Constraint {
    /// The context field it reads.
    pub context_name: String,
    /// The operator's name, such as `IN` or `SEMVER_GT`; unknown names are kept, not rejected.
    pub operator: String,
    /// Values for list operators.
    #[serde(default, deserialize_with = "null_as_default")]
    pub values: Vec<String>,
    /// Value for single-value operators.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_string"
    )]
    pub value: Option<String>,
    /// Compare ignoring letter case (`STR_*` and `REGEX` only). Absent means false; kept apart
    /// from an explicit `false` so a constraint reads back as it was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub case_insensitive: Option<bool>,
    /// Negate the result. Absent means false, and is kept apart from an explicit `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inverted: Option<bool>,
}

impl Constraint {
    /// Whether letter case is ignored.
    pub fn is_case_insensitive(&self) -> bool {
        self.case_insensitive.unwrap_or(false)
    }

    /// Whether the result is negated.
    pub fn is_inverted(&self) -> bool {
        self.inverted.unwrap_or(false)
    }
}

/// A named group of constraints shared between strategies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Segment {
    /// Segment id, referenced by strategies.
    pub id: i64,
    /// Segment name.
    #[serde(default)]
    pub name: String,
    /// Constraints that must all hold.
    #[serde(default, deserialize_with = "null_as_default")]
    pub constraints: Vec<Constraint>,
}

/// A variant of a flag or of a strategy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// Variant name, unique within its list.
    pub name: String,
    /// Share of users on a 0..=1000 scale.
    #[serde(default)]
    pub weight: i64,
    /// `variable` or `fix`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_type: Option<String>,
    /// Context field whose value keeps a user on the same variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stickiness: Option<String>,
    /// Data handed to the application with the variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Payload>,
    /// Context values that force this variant.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub overrides: Vec<Override>,
}

/// A variant payload: `{type, value}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payload {
    /// `json`, `csv`, `string` or `number`.
    #[serde(rename = "type")]
    pub payload_type: String,
    /// The payload, always as a string.
    #[serde(deserialize_with = "any_as_string")]
    pub value: String,
}

/// Forces a variant for users whose context field has one of the values.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Override {
    /// The context field to read.
    pub context_name: String,
    /// Values that select the variant.
    #[serde(default, deserialize_with = "null_as_default")]
    pub values: Vec<String>,
}

/// A dependency on a parent flag.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dependency {
    /// Name of the parent flag.
    pub feature: String,
    /// Whether the parent must be enabled (the default) or disabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// When non-empty, the parent's variant must be one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<String>>,
}

/// A delta document: `{events: [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Events, applied in order.
    pub events: Vec<DeltaEvent>,
}

/// One event of Unleash's delta API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum DeltaEvent {
    /// Replaces the whole state.
    #[serde(rename_all = "camelCase")]
    Hydration {
        /// Event sequence number.
        #[serde(default)]
        event_id: i64,
        /// All flags.
        #[serde(default, deserialize_with = "null_as_default")]
        features: Vec<Feature>,
        /// All segments.
        #[serde(default, deserialize_with = "null_as_default")]
        segments: Vec<Segment>,
    },
    /// Adds or replaces one flag.
    #[serde(rename_all = "camelCase")]
    FeatureUpdated {
        /// Event sequence number.
        #[serde(default)]
        event_id: i64,
        /// The flag's new definition.
        feature: Feature,
    },
    /// Removes one flag.
    #[serde(rename_all = "camelCase")]
    FeatureRemoved {
        /// Event sequence number.
        #[serde(default)]
        event_id: i64,
        /// The removed flag.
        feature_name: String,
        /// Its project.
        #[serde(default)]
        project: Option<String>,
    },
    /// Adds or replaces one segment.
    #[serde(rename_all = "camelCase")]
    SegmentUpdated {
        /// Event sequence number.
        #[serde(default)]
        event_id: i64,
        /// The segment's new definition.
        segment: Segment,
    },
    /// Removes one segment.
    #[serde(rename_all = "camelCase")]
    SegmentRemoved {
        /// Event sequence number.
        #[serde(default)]
        event_id: i64,
        /// The removed segment.
        segment_id: i64,
    },
}

/// Either form of Unleash state an SDK may receive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum State {
    /// A delta document.
    Delta(Delta),
    /// A full client-features document.
    Full(ClientFeatures),
}

fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Renders a scalar JSON value the way JavaScript's `String()` would.
fn scalar_to_string(value: serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Null => None,
        serde_json::Value::String(text) => Some(text),
        serde_json::Value::Bool(flag) => Some(flag.to_string()),
        serde_json::Value::Number(number) => Some(number.to_string()),
        other => Some(other.to_string()),
    }
}

fn lenient_string<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(scalar_to_string(serde_json::Value::deserialize(deserializer)?))
}

fn any_as_string<'de, D>(deserializer: D) -> Result<String, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(scalar_to_string(serde_json::Value::deserialize(deserializer)?).unwrap_or_default())
}

fn string_map<'de, D>(deserializer: D) -> Result<BTreeMap<String, String>, D::Error>
where
    D: Deserializer<'de>,
{
    let raw = Option::<BTreeMap<String, serde_json::Value>>::deserialize(deserializer)?;
    Ok(raw
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(key, value)| scalar_to_string(value).map(|text| (key, text)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_numbers_as_strings_and_null_lists_as_empty() -> Result<(), serde_json::Error> {
        let feature: Feature = serde_json::from_str(
            r#"{"name":"f","enabled":true,"strategies":[{"name":"flexibleRollout",
                "parameters":{"rollout":50,"groupId":"g"},"constraints":null}],"variants":null}"#,
        )?;
        assert_eq!(feature.strategies[0].parameters["rollout"], "50");
        assert!(feature.strategies[0].constraints.is_empty());
        assert!(feature.variants.is_empty());
        Ok(())
    }

    #[test]
    fn reads_delta_events() -> Result<(), serde_json::Error> {
        let state: State = serde_json::from_str(
            r#"{"events":[{"eventId":1,"type":"feature-removed","featureName":"a","project":"p"}]}"#,
        )?;
        let State::Delta(delta) = state else {
            panic!("expected a delta document");
        };
        assert!(matches!(
            &delta.events[0],
            DeltaEvent::FeatureRemoved { feature_name, .. } if feature_name == "a"
        ));
        Ok(())
    }
}
