//! The advanced playground's context expansion, and reading a playground context from JSON.
//!
//! Unleash's advanced playground accepts comma-separated values in context fields and evaluates
//! every combination. Expansion works on the JSON object as the client sent it:
//!
//! 1. top-level keys other than `appName` and `properties` whose value is not a string are
//!    dropped and reported as invalid, in input order;
//! 2. `properties`, when it is an object, is flattened into top-level keys (a later key of the
//!    same name replaces the value but keeps the first position);
//! 3. `appName` moves to the end;
//! 4. every string is split on `,` (no trimming, empty parts kept), and the combinations are the
//!    cartesian product with the first key varying slowest.

use serde_json::{Map, Value};

use crate::context::{Context, parse_time};

/// The advanced playground's default limit on environments × features × context combinations.
pub const DEFAULT_COMBINATION_LIMIT: u64 = 15_000;

/// An advanced playground request would evaluate more combinations than allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "rejecting evaluation as it would generate {total} combinations exceeding {limit} limit; reduce the \
     number of selected environments ({environments}), features ({features}) or context field \
     combinations ({contexts})"
)]
pub struct CombinationLimitExceeded {
    /// environments × features × contexts, saturating.
    pub total: u64,
    /// The limit.
    pub limit: u64,
    /// Environments requested.
    pub environments: u64,
    /// Features in the first environment.
    pub features: u64,
    /// Context combinations.
    pub contexts: u64,
}

/// The expansion of one context: the keys, each with its candidate values.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextCombinations {
    keys: Vec<String>,
    values: Vec<Vec<Value>>,
    invalid_properties: Vec<String>,
}

impl ContextCombinations {
    /// Expands a playground context object.
    pub fn expand(context: &Map<String, Value>) -> Self {
        let mut expansion = Self {
            keys: Vec::new(),
            values: Vec::new(),
            invalid_properties: Vec::new(),
        };
        let mut app_name = None;
        for (key, value) in context {
            match (key.as_str(), value) {
                ("appName", value) => app_name = Some(value),
                ("properties", Value::Object(properties)) => {
                    for (name, value) in properties {
                        expansion.set(name, split(value));
                    }
                }
                ("properties", value) => expansion.set(key, vec![value.clone()]),
                (_, Value::String(_)) => expansion.set(key, split(value)),
                _ => expansion.invalid_properties.push(key.clone()),
            }
        }
        if let Some(value) = app_name {
            if let Some(index) = expansion.keys.iter().position(|key| key == "appName") {
                expansion.keys.remove(index);
                expansion.values.remove(index);
            }
            expansion.keys.push("appName".to_owned());
            expansion.values.push(split(value));
        }
        expansion
    }

    fn set(&mut self, key: &str, values: Vec<Value>) {
        match self.keys.iter().position(|existing| existing == key) {
            Some(index) => self.values[index] = values,
            None => {
                self.keys.push(key.to_owned());
                self.values.push(values);
            }
        }
    }

    /// Top-level properties that were dropped because their value is not a string.
    pub fn invalid_properties(&self) -> &[String] {
        &self.invalid_properties
    }

    /// How many combinations there are, saturating at `u64::MAX`.
    pub fn count(&self) -> u64 {
        self.values.iter().fold(1u64, |count, values| {
            count.saturating_mul(u64::try_from(values.len()).unwrap_or(u64::MAX))
        })
    }

    /// Checks environments × features × combinations against `limit`, as Unleash counts them
    /// (features of the first environment). Returns the total when it is within the limit.
    pub fn check_limit(
        &self,
        environments: usize,
        features: usize,
        limit: u64,
    ) -> Result<u64, CombinationLimitExceeded> {
        let environments = u64::try_from(environments).unwrap_or(u64::MAX);
        let features = u64::try_from(features).unwrap_or(u64::MAX);
        let contexts = self.count();
        let total = environments.saturating_mul(features).saturating_mul(contexts);
        if total > limit {
            return Err(CombinationLimitExceeded {
                total,
                limit,
                environments,
                features,
                contexts,
            });
        }
        Ok(total)
    }

    /// The combinations, first key varying slowest. Check [`ContextCombinations::count`] against
    /// a limit before iterating.
    pub fn iter(&self) -> impl Iterator<Item = Map<String, Value>> + '_ {
        let total = if self.values.iter().any(Vec::is_empty) {
            0
        } else {
            self.count()
        };
        (0..total).map(move |mut index| {
            let mut picks = vec![0usize; self.values.len()];
            for (slot, values) in self.values.iter().enumerate().rev() {
                let len = u64::try_from(values.len()).unwrap_or(1).max(1);
                picks[slot] = usize::try_from(index % len).unwrap_or(0);
                index /= len;
            }
            self.keys
                .iter()
                .zip(self.values.iter().zip(picks))
                .map(|(key, (values, pick))| (key.clone(), values[pick].clone()))
                .collect()
        })
    }
}

fn split(value: &Value) -> Vec<Value> {
    match value {
        Value::String(text) => text
            .split(',')
            .map(|part| Value::String(part.to_owned()))
            .collect(),
        other => vec![other.clone()],
    }
}

/// Builds an evaluation context from a playground context object.
///
/// Known fields (`userId`, `sessionId`, `environment`, `appName`, `remoteAddress`, `currentTime`)
/// are read as themselves; entries of a `properties` object and any other top-level scalar become
/// properties, the top-level value winning. Numbers and booleans become strings, `null` is absent.
/// An unreadable `currentTime` leaves the time unset.
pub fn context_from_json(context: &Map<String, Value>) -> Context {
    let mut result = Context::default();
    if let Some(Value::Object(properties)) = context.get("properties") {
        for (name, value) in properties {
            if let Some(text) = scalar(value) {
                result.properties.insert(name.clone(), text);
            }
        }
    }
    for (key, value) in context {
        let Some(text) = scalar(value) else {
            continue;
        };
        match key.as_str() {
            "userId" => result.user_id = Some(text),
            "sessionId" => result.session_id = Some(text),
            "environment" => result.environment = Some(text),
            "appName" => result.app_name = Some(text),
            "remoteAddress" => result.remote_address = Some(text),
            "currentTime" => result.current_time = parse_time(&text),
            "properties" => {}
            _ => {
                result.properties.insert(key.clone(), text);
            }
        }
    }
    result
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn expands_in_unleash_order() {
        let context = object(json!({"appName": "a", "userId": "1,2", "channel": "web,mobile"}));
        let combinations: Vec<Value> = ContextCombinations::expand(&context)
            .iter()
            .map(Value::Object)
            .collect();
        assert_eq!(
            combinations,
            vec![
                json!({"userId": "1", "channel": "web", "appName": "a"}),
                json!({"userId": "1", "channel": "mobile", "appName": "a"}),
                json!({"userId": "2", "channel": "web", "appName": "a"}),
                json!({"userId": "2", "channel": "mobile", "appName": "a"}),
            ]
        );
        // Key order matters to clients reading the echoed context.
        assert_eq!(
            ContextCombinations::expand(&context).keys,
            ["userId", "channel", "appName"]
        );
    }

    #[test]
    fn flattens_properties_and_reports_invalid_values() {
        let context = object(json!({
            "userId": "u",
            "tenant": 7,
            "properties": {"plan": "a,b,", "userId": "v"},
            "nested": {"x": 1},
            "appName": "app"
        }));
        let expansion = ContextCombinations::expand(&context);
        assert_eq!(expansion.invalid_properties(), ["tenant", "nested"]);
        assert_eq!(expansion.count(), 3);
        let first = Value::Object(expansion.iter().next().unwrap_or_default());
        assert_eq!(first, json!({"userId": "v", "plan": "a", "appName": "app"}));
        let last = Value::Object(expansion.iter().last().unwrap_or_default());
        assert_eq!(last["plan"], json!(""));
    }

    #[test]
    fn limit_counts_environments_features_and_combinations() {
        let expansion = ContextCombinations::expand(&object(json!({"appName": "a", "userId": "1,2,3"})));
        assert_eq!(expansion.check_limit(2, 10, 60), Ok(60));
        let error = expansion.check_limit(2, 10, 59).err();
        assert_eq!(error.as_ref().map(|e| e.total), Some(60));
        let message = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            message.contains("60 combinations exceeding 59 limit"),
            "{message}"
        );
    }

    #[test]
    fn count_saturates_instead_of_overflowing() {
        let mut context = Map::new();
        for index in 0..40 {
            context.insert(format!("k{index}"), Value::String(",".repeat(1000)));
        }
        assert_eq!(ContextCombinations::expand(&context).count(), u64::MAX);
    }

    #[test]
    fn reads_top_level_custom_fields_as_properties() {
        let context = context_from_json(&object(json!({
            "appName": "a", "tenant": "t", "properties": {"tenant": "p", "plan": 3},
            "currentTime": "2024-01-01T00:00:00Z"
        })));
        assert_eq!(context.field("tenant"), Some("t"));
        assert_eq!(context.field("plan"), Some("3"));
        assert_eq!(context.app_name.as_deref(), Some("a"));
        assert!(context.current_time.is_some());
    }
}
