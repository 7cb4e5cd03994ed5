//! The advanced playground's context expansion, and reading a playground context from JSON.
//!
//! Unleash's advanced playground accepts comma-separated values in context fields and evaluates
//! every combination. Expansion works on the JSON object as the client sent it:
//!
//! 1. top-level keys other than `appName` and `properties` whose value is not a string are
//!    left out (the caller reports them as invalid);
//! 2. `properties`, when it is an object, is flattened into top-level keys (a later key of the
//!    same name replaces the value but keeps the first position);
//! 3. `appName` moves to the end;
//! 4. every string is split on `,` (no trimming, empty parts kept), and the combinations are the
//!    cartesian product with the first key varying slowest.
//!
//! Combinations are never built as a list: one can be thousands of times the size of the request
//! that asked for it. [`ContextCursor`] moves one evaluation context from combination to
//! combination, changing only the fields that differ, and [`Combination`] serialises one
//! combination straight from the expansion.

use chrono::{DateTime, Utc};
use rustc_hash::FxHashMap;
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::context::{Context, CurrentTime};

/// The advanced playground's default limit on environments × features × context combinations.
pub const DEFAULT_COMBINATION_LIMIT: u64 = 15_000;

/// The advanced playground's default limit on the context it echoes: environments × features ×
/// the JSON size of all combinations together, in bytes.
pub const DEFAULT_CONTEXT_BYTES_LIMIT: u64 = 64 << 20;

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

/// An advanced playground answer would echo more context than allowed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "rejecting evaluation as its answer would repeat {total} bytes of context exceeding the {limit} byte \
     limit; reduce the number of selected environments ({environments}), features ({features}), context \
     field combinations ({contexts}) or the size of the context ({bytes} bytes for all combinations)"
)]
pub struct ContextBytesExceeded {
    /// environments × features × `bytes`, saturating.
    pub total: u64,
    /// The limit.
    pub limit: u64,
    /// Environments requested.
    pub environments: u64,
    /// Features in the first environment.
    pub features: u64,
    /// Context combinations.
    pub contexts: u64,
    /// The JSON size of all combinations together.
    pub bytes: u64,
}

/// The expansion of one context: the keys, each with its comma-separated candidate values.
///
/// Values are kept whole: counting the combinations and their size needs only the number of
/// commas and the length of each value, so a request is measured against the limits before any
/// value is split. [`ContextCursor`] finds the parts when the answer is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCombinations {
    keys: Vec<String>,
    values: Vec<String>,
    /// The number of comma-separated parts of each value.
    parts: Vec<u64>,
}

impl ContextCombinations {
    /// Expands a playground context object, in time linear in its size.
    pub fn expand(context: &Map<String, Value>) -> Self {
        let mut builder = Builder::default();
        let mut app_name = None;
        for (key, value) in context {
            match (key.as_str(), value) {
                ("appName", value) => app_name = Some(value),
                ("properties", Value::Object(properties)) => {
                    for (name, value) in properties {
                        builder.set(name, text(value));
                    }
                }
                ("properties", value) => builder.set(key, text(value)),
                (_, Value::String(_)) => builder.set(key, text(value)),
                _ => {}
            }
        }
        let mut pairs = builder.finish();
        if let Some(value) = app_name {
            pairs.retain(|(key, _)| key != "appName");
            pairs.push(("appName".to_owned(), text(value)));
        }
        let parts = pairs
            .iter()
            .map(|(_, value)| value.bytes().filter(|byte| *byte == b',').count() as u64 + 1)
            .collect();
        let (keys, values) = pairs.into_iter().unzip();
        Self { keys, values, parts }
    }

    /// How many combinations there are, saturating at `u64::MAX`.
    pub fn count(&self) -> u64 {
        self.parts
            .iter()
            .fold(1u64, |count, parts| count.saturating_mul(*parts))
    }

    /// The JSON size of all combinations together, saturating: what one feature's answer in one
    /// environment repeats. Computed from the whole values, escapes included, without splitting
    /// one.
    pub fn bytes(&self) -> u64 {
        let count = self.count();
        let fields = self.keys.iter().zip(&self.values).zip(&self.parts);
        fields.fold(count.saturating_mul(2), |total, ((key, value), parts)| {
            // `"key":"part",` for every combination; each part stands in count / parts of them,
            // and the parts together are the value without its commas.
            let parts_bytes = json_len(value).saturating_sub(parts - 1);
            total
                .saturating_add(count.saturating_mul(json_len(key) + 6))
                .saturating_add((count / parts).saturating_mul(parts_bytes))
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

    /// Checks environments × features × [`ContextCombinations::bytes`] against `limit`: the
    /// context an answer repeats. Returns the total when it is within the limit.
    pub fn check_bytes(
        &self,
        environments: usize,
        features: usize,
        limit: u64,
    ) -> Result<u64, ContextBytesExceeded> {
        let environments = u64::try_from(environments).unwrap_or(u64::MAX);
        let features = u64::try_from(features).unwrap_or(u64::MAX);
        let bytes = self.bytes();
        let total = environments.saturating_mul(features).saturating_mul(bytes);
        if total > limit {
            return Err(ContextBytesExceeded {
                total,
                limit,
                environments,
                features,
                contexts: self.count(),
                bytes,
            });
        }
        Ok(total)
    }

    /// The part each key takes in combination `index` (first key varying slowest), written into
    /// `picks`.
    fn picks(&self, mut index: u64, picks: &mut [usize]) {
        for (slot, parts) in self.parts.iter().enumerate().rev() {
            let parts = (*parts).max(1);
            picks[slot] = usize::try_from(index % parts).unwrap_or(0);
            index /= parts;
        }
    }

    /// Combination `index` as a JSON object, built: for tests and small answers. The streaming
    /// path is [`ContextCursor`].
    pub fn get(&self, index: u64) -> Map<String, Value> {
        let mut picks = vec![0; self.keys.len()];
        self.picks(index, &mut picks);
        self.keys
            .iter()
            .zip(self.values.iter().zip(picks))
            .map(|(key, (value, pick))| {
                let part = value.split(',').nth(pick).unwrap_or_default();
                (key.clone(), Value::String(part.to_owned()))
            })
            .collect()
    }
}

/// The length of `text` as a JSON string's contents: quotes, backslashes and control characters
/// are escaped.
fn json_len(text: &str) -> u64 {
    text.bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

/// Collects keys with a hash index, so a repeated key is found in constant time.
#[derive(Default)]
struct Builder {
    positions: FxHashMap<String, usize>,
    pairs: Vec<(String, String)>,
}

impl Builder {
    fn set(&mut self, key: &str, value: String) {
        match self.positions.get(key) {
            Some(&index) => self.pairs[index].1 = value,
            None => {
                self.positions.insert(key.to_owned(), self.pairs.len());
                self.pairs.push((key.to_owned(), value));
            }
        }
    }

    fn finish(self) -> Vec<(String, String)> {
        self.pairs
    }
}

/// A value as the text it is split from.
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Where a key's value goes in the evaluation context.
#[derive(Debug, Clone, Copy)]
enum Slot {
    UserId,
    SessionId,
    Environment,
    AppName,
    RemoteAddress,
    CurrentTime,
    Property,
    Ignored,
}

impl Slot {
    fn of(key: &str) -> Self {
        match key {
            "userId" => Self::UserId,
            "sessionId" => Self::SessionId,
            "environment" => Self::Environment,
            "appName" => Self::AppName,
            "remoteAddress" => Self::RemoteAddress,
            "currentTime" => Self::CurrentTime,
            // A property named `properties` is not a context value, as in `context_from_json`.
            "properties" => Self::Ignored,
            _ => Self::Property,
        }
    }

    /// Sets the field `key` to `value` in `context`; empty means missing. A field that keeps
    /// being set reuses its buffer.
    fn apply(self, context: &mut Context, now: DateTime<Utc>, key: &str, value: &str) {
        let present = (!value.is_empty()).then_some(value);
        let field = match self {
            Self::UserId => &mut context.user_id,
            Self::SessionId => &mut context.session_id,
            Self::AppName => &mut context.app_name,
            Self::RemoteAddress => &mut context.remote_address,
            Self::Environment => {
                return set(&mut context.environment, Some(present.unwrap_or("default")));
            }
            Self::CurrentTime => {
                context.current_time = present.map_or(CurrentTime::Unset, CurrentTime::parse).or_at(now);
                return;
            }
            Self::Property => {
                match present {
                    Some(value) => context.properties.set(key, value),
                    None => {
                        context.properties.remove(key);
                    }
                }
                return;
            }
            Self::Ignored => return,
        };
        set(field, present);
    }
}

/// Sets an optional string field, reusing its buffer when it has one.
fn set(field: &mut Option<String>, value: Option<&str>) {
    match (field.as_mut(), value) {
        (Some(buffer), Some(value)) => {
            buffer.clear();
            buffer.push_str(value);
        }
        (_, value) => *field = value.map(str::to_owned),
    }
}

/// One evaluation context that walks the combinations of a [`ContextCombinations`], as the
/// playground evaluates them: an empty value is a missing one, `currentTime` defaults to `now`
/// and `environment` to `default`.
///
/// Make one only after the limits are checked: it records where each part of each value starts
/// (one offset per part). Moving to another combination rewrites only the fields whose value
/// changes, so walking all combinations in order costs about one field per step, whatever the
/// size of the context.
#[derive(Debug)]
pub struct ContextCursor {
    slots: Vec<Slot>,
    /// For each value, where each part starts, and one past its end.
    bounds: Vec<Vec<usize>>,
    picks: Vec<usize>,
    next: Vec<usize>,
    context: Context,
    now: DateTime<Utc>,
}

impl ContextCursor {
    /// A cursor on the first combination of `combinations`.
    pub fn new(combinations: &ContextCombinations, now: DateTime<Utc>) -> Self {
        let bounds: Vec<Vec<usize>> = combinations
            .values
            .iter()
            .map(|value| {
                let commas = value.bytes().enumerate().filter(|(_, byte)| *byte == b',');
                std::iter::once(0)
                    .chain(commas.map(|(position, _)| position + 1))
                    .chain(std::iter::once(value.len() + 1))
                    .collect()
            })
            .collect();
        let mut cursor = Self {
            slots: combinations.keys.iter().map(|key| Slot::of(key)).collect(),
            picks: vec![0; bounds.len()],
            next: vec![0; bounds.len()],
            bounds,
            context: Context {
                current_time: CurrentTime::At(now),
                environment: Some("default".into()),
                ..Context::default()
            },
            now,
        };
        for slot in 0..cursor.slots.len() {
            let value = cursor.part(combinations, slot, 0);
            cursor.slots[slot].apply(&mut cursor.context, now, &combinations.keys[slot], value);
        }
        cursor
    }

    /// Moves to combination `index` of `combinations` (the expansion this cursor was made for).
    pub fn seek(&mut self, combinations: &ContextCombinations, index: u64) {
        combinations.picks(index, &mut self.next);
        for slot in 0..self.slots.len() {
            let pick = self.next[slot];
            if self.picks[slot] != pick {
                self.picks[slot] = pick;
                let value = Self::slice(&self.bounds[slot], &combinations.values[slot], pick);
                self.slots[slot].apply(&mut self.context, self.now, &combinations.keys[slot], value);
            }
        }
    }

    /// The evaluation context of the current combination.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// The current combination, as the playground echoes it.
    pub fn combination<'a>(&'a self, combinations: &'a ContextCombinations) -> Combination<'a> {
        Combination {
            combinations,
            cursor: self,
        }
    }

    /// Part `pick` of value `slot`.
    fn part<'a>(&self, combinations: &'a ContextCombinations, slot: usize, pick: usize) -> &'a str {
        Self::slice(&self.bounds[slot], &combinations.values[slot], pick)
    }

    fn slice<'a>(bounds: &[usize], value: &'a str, pick: usize) -> &'a str {
        match (bounds.get(pick), bounds.get(pick + 1)) {
            (Some(&start), Some(&end)) => value.get(start..end - 1).unwrap_or_default(),
            _ => "",
        }
    }
}

/// One combination, serialised as a JSON object in the expansion's key order.
#[derive(Debug, Clone, Copy)]
pub struct Combination<'a> {
    combinations: &'a ContextCombinations,
    cursor: &'a ContextCursor,
}

impl Serialize for Combination<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.cursor.picks.len()))?;
        for (slot, (key, pick)) in self.combinations.keys.iter().zip(&self.cursor.picks).enumerate() {
            map.serialize_entry(key, self.cursor.part(self.combinations, slot, *pick))?;
        }
        map.end()
    }
}

/// Builds an evaluation context from a playground context object.
///
/// Known fields (`userId`, `sessionId`, `environment`, `appName`, `remoteAddress`, `currentTime`)
/// are read as themselves; entries of a `properties` object and any other top-level scalar become
/// properties, the top-level value winning. Numbers and booleans become strings, `null` is absent.
/// A `currentTime` that is not a date is [`CurrentTime::Unreadable`]: date constraints are false.
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
            "currentTime" => result.current_time = CurrentTime::parse(&text),
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

    fn all(expansion: &ContextCombinations) -> Vec<Value> {
        (0..expansion.count())
            .map(|index| Value::Object(expansion.get(index)))
            .collect()
    }

    #[test]
    fn expands_in_unleash_order() {
        let context = object(json!({"appName": "a", "userId": "1,2", "channel": "web,mobile"}));
        assert_eq!(
            all(&ContextCombinations::expand(&context)),
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
    fn flattens_properties_and_leaves_out_invalid_values() {
        let context = object(json!({
            "userId": "u",
            "tenant": 7,
            "properties": {"plan": "a,b,", "userId": "v"},
            "nested": {"x": 1},
            "appName": "app"
        }));
        let expansion = ContextCombinations::expand(&context);
        assert_eq!(expansion.keys, ["userId", "plan", "appName"]);
        assert_eq!(expansion.count(), 3);
        let combinations = all(&expansion);
        assert_eq!(
            combinations[0],
            json!({"userId": "v", "plan": "a", "appName": "app"})
        );
        assert_eq!(combinations[2]["plan"], json!(""));
    }

    #[test]
    fn bytes_is_the_json_size_of_every_combination() -> Result<(), serde_json::Error> {
        let context = object(json!({
            "appName": "web,ios", "userId": "1,22,333", "properties": {"plan": "pro,", "region": "eu"},
            "escaped": "a\"b,\u{1}c\\,tab\t"
        }));
        let expansion = ContextCombinations::expand(&context);
        let mut written = 0;
        let mut cursor = ContextCursor::new(&expansion, Utc::now());
        for index in 0..expansion.count() {
            cursor.seek(&expansion, index);
            written += serde_json::to_vec(&cursor.combination(&expansion))?.len() as u64;
        }
        // Every key but the last writes a comma; the estimate counts one for each.
        assert_eq!(expansion.bytes(), written + expansion.count());
        assert_eq!(
            expansion.check_bytes(2, 3, 6 * expansion.bytes()),
            Ok(6 * expansion.bytes())
        );
        let error = expansion.check_bytes(2, 3, 6 * expansion.bytes() - 1).err();
        assert!(
            error.is_some_and(|error| error.to_string().contains("byte limit")),
            "the byte limit is named"
        );
        Ok(())
    }

    #[test]
    fn the_cursor_agrees_with_a_context_built_from_scratch() -> Result<(), serde_json::Error> {
        let now = Utc::now();
        let context = object(json!({
            "userId": "1,,3", "environment": ",staging", "currentTime": "2024-01-01T00:00:00Z",
            "properties": {"plan": "pro,,free", "region": "eu,us"}, "appName": "web,"
        }));
        let expansion = ContextCombinations::expand(&context);
        let mut cursor = ContextCursor::new(&expansion, now);
        // Walk forwards, then jump around, as a stream over several features does.
        let order: Vec<u64> = (0..expansion.count()).chain([5, 0, 17, 3]).collect();
        for index in order {
            cursor.seek(&expansion, index);
            let mut expected_json = expansion.get(index);
            expected_json.retain(|_, value| value.as_str() != Some(""));
            let mut expected = context_from_json(&expected_json);
            expected.current_time = expected.current_time.or_at(now);
            expected.environment = expected.environment.or_else(|| Some("default".into()));
            assert_eq!(
                serde_json::to_value(cursor.context())?,
                serde_json::to_value(&expected)?,
                "combination {index}"
            );
            assert_eq!(
                serde_json::to_value(cursor.combination(&expansion))?,
                Value::Object(expansion.get(index))
            );
        }
        Ok(())
    }

    #[test]
    fn expands_forty_thousand_keys() {
        // Repeated keys are found through a hash index: linear look-ups made this take seconds.
        let properties: Map<String, Value> = (0..40_000)
            .map(|index| (format!("p{index}"), Value::String("v".into())))
            .collect();
        let context = object(json!({"appName": "a", "properties": properties}));
        let expansion = ContextCombinations::expand(&context);
        assert_eq!(expansion.keys.len(), 40_001);
        assert_eq!(expansion.count(), 1);
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
        assert!(context.current_time.instant().is_some());
    }
}
