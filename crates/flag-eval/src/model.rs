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
    #[serde(default)]
    pub parameters: Parameters,
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

/// A strategy parameter's value as text, as Unleash's admin API shows it: a string as it is,
/// anything else as its JSON.
pub fn parameter_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text,
        other => other.to_string(),
    }
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

/// A strategy's parameters: names and their values as strings, sorted by name, each name once.
///
/// A sorted list, not a map: a strategy has two or three parameters, and a B-tree node for them
/// takes 544 bytes, which at 10,000 flags was the largest part of a compiled engine. Serialises as
/// a JSON object in name order, as a `BTreeMap` would; reads numbers and booleans as strings and
/// drops `null` values, as Unleash's SDKs do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parameters(Vec<(String, String)>);

impl Parameters {
    /// The value of the parameter `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(key, _)| key.as_str().cmp(name))
            .ok()
            .map(|index| self.0[index].1.as_str())
    }

    /// Every parameter, in name order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value.as_str()))
    }

    /// How many parameters there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Later values win over earlier ones of the same name, as inserting into a map would.
impl FromIterator<(String, String)> for Parameters {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        let mut pairs: Vec<(String, String)> = pairs.into_iter().collect();
        // Newest first among equal names (the sort is stable), then the first of each name kept.
        pairs.reverse();
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|later, kept| later.0 == kept.0);
        pairs.shrink_to_fit();
        Self(pairs)
    }
}

impl From<BTreeMap<String, String>> for Parameters {
    fn from(map: BTreeMap<String, String>) -> Self {
        Self(map.into_iter().collect())
    }
}

impl From<Parameters> for BTreeMap<String, String> {
    fn from(parameters: Parameters) -> Self {
        parameters.0.into_iter().collect()
    }
}

impl std::ops::Index<&str> for Parameters {
    type Output = str;

    /// The value of `name`; panics when there is none, as a map's index does.
    fn index(&self, name: &str) -> &str {
        self.get(name)
            .unwrap_or_else(|| panic!("no parameter named {name}"))
    }
}

impl Serialize for Parameters {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Parameters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Lenient;

        impl<'de> serde::de::Visitor<'de> for Lenient {
            type Value = Parameters;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("an object of parameters, or null")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<Parameters, E> {
                Ok(Parameters::default())
            }

            fn visit_none<E: serde::de::Error>(self) -> Result<Parameters, E> {
                Ok(Parameters::default())
            }

            fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Parameters, D::Error> {
                deserializer.deserialize_map(self)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Parameters, A::Error> {
                let mut pairs: Vec<(String, String)> = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((key, value)) = map.next_entry::<String, serde_json::Value>()? {
                    match scalar_to_string(value) {
                        Some(text) => pairs.push((key, text)),
                        // A later `null` removes the name, as it would from a map read first.
                        None => pairs.retain(|(name, _)| *name != key),
                    }
                }
                Ok(pairs.into_iter().collect())
            }
        }

        deserializer.deserialize_option(Lenient)
    }
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
        assert_eq!(&feature.strategies[0].parameters["rollout"], "50");
        assert_eq!(feature.strategies[0].parameters.get("groupId"), Some("g"));
        assert!(feature.strategies[0].constraints.is_empty());
        assert!(feature.variants.is_empty());
        Ok(())
    }

    #[test]
    fn parameters_are_sorted_unique_and_read_leniently() -> Result<(), serde_json::Error> {
        let parameters: Parameters =
            serde_json::from_str(r#"{"rollout":50,"groupId":"g","on":true,"gone":null}"#)?;
        assert_eq!(
            parameters.iter().collect::<Vec<_>>(),
            [("groupId", "g"), ("on", "true"), ("rollout", "50")]
        );
        assert_eq!(
            serde_json::to_string(&parameters)?,
            r#"{"groupId":"g","on":"true","rollout":"50"}"#
        );
        assert_eq!(serde_json::from_str::<Parameters>("null")?, Parameters::default());
        // A name given twice keeps its last value, and a last `null` removes it, as in a map.
        let repeated: Parameters = serde_json::from_str(r#"{"a":"x","b":"1","a":"y","b":null}"#)?;
        assert_eq!(repeated.iter().collect::<Vec<_>>(), [("a", "y")]);
        assert!(serde_json::from_str::<Parameters>("[1]").is_err());
        let later_wins: Parameters = [("b", "1"), ("a", "2"), ("b", "3")]
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect();
        assert_eq!(later_wins.iter().collect::<Vec<_>>(), [("a", "2"), ("b", "3")]);
        assert_eq!(later_wins.get("c"), None);
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
