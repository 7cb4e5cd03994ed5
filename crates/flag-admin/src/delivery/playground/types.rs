//! The playground's requests, read by hand as Unleash coerces them, and its answers.

use chrono::{DateTime, Utc};
use flag_eval::{
    Combination, ConstraintResult, Context, Explanation, PlaygroundVariant, SegmentResult,
    StrategyExplanation, StrategyResult, Tristate, Variant,
};
use flag_store::queries::evaluation::ProjectScope;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::runtime::error::AdminError;

/// Most fields a playground context may carry, counting top-level fields and `properties`
/// entries: far more than any application sets, few enough that no request can make a context
/// expensive to copy or compare.
pub const MAX_CONTEXT_FIELDS: usize = 256;

/// Longest context value in bytes (a comma-separated list of an advanced request included).
pub const MAX_CONTEXT_VALUE_BYTES: usize = 64 * 1024;

/// Context fields Unleash's schema types as strings.
const STRING_FIELDS: [&str; 5] = ["appName", "userId", "sessionId", "remoteAddress", "environment"];

/// Turns a scalar into the string Unleash's validator coerces it to.
fn coerce_scalar(value: &mut Value) -> bool {
    let text = match value {
        Value::String(_) => return true,
        Value::Null => String::new(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::Array(_) | Value::Object(_) => return false,
    };
    *value = Value::String(text);
    true
}

/// Validates and coerces a playground context in place.
pub fn validate_context(context: Option<&mut Value>, path: &str) -> Result<(), AdminError> {
    let Some(context) = context else {
        return Err(AdminError::invalid(path, format!("{path} is required")));
    };
    let Value::Object(map) = context else {
        return Err(AdminError::invalid(path, format!("{path} must be an object")));
    };
    check_size(map, path)?;
    for field in STRING_FIELDS {
        if let Some(value) = map.get_mut(field)
            && !coerce_scalar(value)
        {
            return Err(AdminError::invalid(
                format!("{path}/{field}"),
                format!("{path}/{field} must be a string"),
            ));
        }
    }
    match map.get("appName") {
        Some(Value::String(name)) if !name.is_empty() => {}
        Some(_) => {
            return Err(AdminError::invalid(
                format!("{path}/appName"),
                format!("{path}/appName must not be empty"),
            ));
        }
        None => {
            return Err(AdminError::invalid(
                format!("{path}/appName"),
                format!("{path}/appName is required"),
            ));
        }
    }
    check_time(map.get("currentTime"), &format!("{path}/currentTime"), false)?;
    if let Some(properties) = map.get_mut("properties") {
        let Value::Object(properties) = properties else {
            return Err(AdminError::invalid(
                format!("{path}/properties"),
                format!("{path}/properties must be an object"),
            ));
        };
        for (name, value) in properties.iter_mut() {
            if !coerce_scalar(value) {
                return Err(AdminError::invalid(
                    format!("{path}/properties/{name}"),
                    format!("{path}/properties/{name} must be a string"),
                ));
            }
        }
        // The advanced playground lifts properties beside the top-level fields, so this one sets
        // the evaluation time there, one combination per comma-separated date.
        check_time(
            properties.get("currentTime"),
            &format!("{path}/properties/currentTime"),
            true,
        )?;
    }
    Ok(())
}

/// Checks a `currentTime` at `path`: absent, or a date JavaScript reads as the same instant, or
/// with `list`, several such dates separated by commas.
fn check_time(time: Option<&Value>, path: &str, list: bool) -> Result<(), AdminError> {
    let Some(time) = time else {
        return Ok(());
    };
    let readable = |date: &str| flag_eval::parse_time_strict(date).is_some();
    let valid = time.as_str().is_some_and(|text| {
        if list {
            text.split(',').all(readable)
        } else {
            readable(text)
        }
    });
    if valid {
        return Ok(());
    }
    Err(AdminError::invalid(
        path,
        format!(
            "{path} must be an RFC 3339 date-time with a time zone, a four-digit year and no leap second"
        ),
    ))
}

/// Checks the context against [`MAX_CONTEXT_FIELDS`] and [`MAX_CONTEXT_VALUE_BYTES`] before
/// anything else reads it.
fn check_size(map: &Map<String, Value>, path: &str) -> Result<(), AdminError> {
    let properties = match map.get("properties") {
        Some(Value::Object(properties)) => Some(properties),
        _ => None,
    };
    let fields = map.len() + properties.map_or(0, Map::len);
    if fields > MAX_CONTEXT_FIELDS {
        return Err(AdminError::invalid(
            path,
            format!("{path} has {fields} fields and properties; at most {MAX_CONTEXT_FIELDS} are accepted"),
        ));
    }
    // The path of the field at fault is written only when there is one.
    let values = map.iter().map(|(key, value)| ("", key, value)).chain(
        properties
            .into_iter()
            .flatten()
            .map(|(key, value)| ("/properties", key, value)),
    );
    for (parent, key, value) in values {
        if value
            .as_str()
            .is_some_and(|text| text.len() > MAX_CONTEXT_VALUE_BYTES)
        {
            let field = format!("{path}{parent}/{key}");
            return Err(AdminError::invalid(
                &field,
                format!("{field} is longer than the limit of {MAX_CONTEXT_VALUE_BYTES} bytes"),
            ));
        }
    }
    Ok(())
}

/// Reads `projects`: absent or `"*"` is every project, an array of strings is those.
pub fn projects(value: Option<&Value>) -> Result<ProjectScope, AdminError> {
    match value {
        None => Ok(ProjectScope::All),
        Some(Value::String(star)) if star == "*" => Ok(ProjectScope::All),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .map(ProjectScope::Only)
            .ok_or_else(|| AdminError::invalid("/projects", "/projects must contain strings only")),
        Some(_) => Err(AdminError::invalid(
            "/projects",
            "/projects must be an array of project ids or \"*\"",
        )),
    }
}

/// What both playground operations read from a request besides the environments.
#[derive(Debug)]
pub struct PlaygroundScope {
    /// The projects to evaluate.
    pub projects: ProjectScope,
    /// The context without non-string custom fields.
    pub context: Map<String, Value>,
    /// The custom fields dropped, in input order.
    pub invalid: Vec<String>,
    /// The past moment to answer for (`at`, our extension), when asked.
    pub at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Validates and coerces `context` in place, reads `projects`, and copies the context without
/// non-string custom fields.
pub fn playground_scope(fields: &mut Map<String, Value>) -> Result<PlaygroundScope, AdminError> {
    validate_context(fields.get_mut("context"), "/context")?;
    let projects = projects(fields.get("projects"))?;
    let mut context = fields
        .get("context")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let invalid = drop_invalid_properties(&mut context);
    let at = match fields.get("at") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(
            crate::runtime::domain::Timestamp::read(text)
                .map_err(|message| AdminError::invalid("/at", format!("/at: {message}")))?
                .0,
        ),
        Some(_) => return Err(AdminError::invalid("/at", "/at must be a string")),
    };
    Ok(PlaygroundScope {
        projects,
        context,
        invalid,
        at,
    })
}

/// A required environment name of the advanced playground: a [`ResourceName`].
///
/// [`ResourceName`]: crate::runtime::domain::ResourceName
pub fn environment_name(value: &Value, path: &str) -> Result<String, AdminError> {
    let name = value
        .as_str()
        .ok_or_else(|| AdminError::invalid(path, format!("{path} must be a string")))?;
    crate::runtime::domain::ResourceName::try_from(name)
        .map(crate::runtime::domain::ResourceName::into_string)
        .map_err(|problem| AdminError::invalid(path, format!("{path}: {problem}")))
}

/// The context a playground evaluates: empty strings count as missing, as in Unleash's
/// evaluator; `currentTime` defaults to the request's `now`; `environment` to `default`.
pub fn evaluation_context(context: &Map<String, Value>, now: DateTime<Utc>, seed: u64) -> Context {
    let mut cleaned = context.clone();
    cleaned.retain(|_, value| value.as_str() != Some(""));
    if let Some(Value::Object(properties)) = cleaned.get_mut("properties") {
        properties.retain(|_, value| value.as_str() != Some(""));
    }
    let mut evaluation = flag_eval::context_from_json(&cleaned);
    evaluation.current_time = evaluation.current_time.or_at(now);
    evaluation.environment = evaluation.environment.or_else(|| Some("default".into()));
    evaluation.with_random_seed(seed)
}

/// Drops top-level custom fields whose value is not a string, returning their names in order.
/// One pass, whatever the number of fields.
pub fn drop_invalid_properties(context: &mut Map<String, Value>) -> Vec<String> {
    let mut invalid = Vec::new();
    context.retain(|key, value| {
        let keep = key == "appName" || key == "properties" || value.is_string();
        if !keep {
            invalid.push(key.clone());
        }
        keep
    });
    invalid
}

/// One evaluated feature, in Unleash's key order. The advanced playground adds `context` and
/// `environment`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluatedFeature<'a> {
    is_enabled: bool,
    is_enabled_in_current_environment: bool,
    has_unsatisfied_dependency: bool,
    variant: PlaygroundVariant<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<Combination<'a>>,
    variants: &'a [Variant],
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    environment: Option<&'a str>,
    project_id: &'a str,
    strategies: Strategies<'a>,
}

#[derive(Debug, Serialize)]
struct Strategies<'a> {
    result: Tristate,
    data: Vec<StrategyOut<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct StrategyOut<'a> {
    name: &'a str,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    disabled: bool,
    parameters: &'a flag_eval::Parameters,
    result: &'a StrategyResult<'a>,
    constraints: Vec<ConstraintOut<'a>>,
    segments: Vec<SegmentOut<'a>>,
    links: Links,
}

#[derive(Debug, Serialize)]
struct Links {
    edit: String,
}

/// A strategy constraint: Unleash puts the defaults `inverted` and `values` first, then the
/// stored keys; `caseInsensitive` only when it was stored.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConstraintOut<'a> {
    inverted: bool,
    values: &'a [String],
    context_name: &'a str,
    operator: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    case_insensitive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    result: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SegmentConstraintOut<'a> {
    context_name: &'a str,
    operator: &'a str,
    values: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    case_insensitive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inverted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    result: bool,
}

#[derive(Debug, Serialize)]
struct SegmentOut<'a> {
    name: &'a str,
    id: i64,
    result: bool,
    constraints: Vec<SegmentConstraintOut<'a>>,
}

impl<'a> EvaluatedFeature<'a> {
    /// Renders an explanation. `links_environment` is the environment strategy links point to;
    /// `advanced` carries the evaluated context and environment for the advanced playground.
    pub fn new(
        explanation: &'a Explanation<'a>,
        links_environment: &str,
        advanced: Option<(Combination<'a>, &'a str)>,
    ) -> Self {
        let project = explanation.project.unwrap_or("default");
        Self {
            is_enabled: explanation.is_enabled,
            is_enabled_in_current_environment: explanation.is_enabled_in_current_environment,
            has_unsatisfied_dependency: explanation.has_unsatisfied_dependency,
            variant: explanation.variant,
            context: advanced.map(|(context, _)| context),
            variants: explanation.variants,
            name: explanation.name,
            environment: advanced.map(|(_, environment)| environment),
            project_id: project,
            strategies: Strategies {
                result: explanation.result,
                data: explanation
                    .strategies
                    .iter()
                    .map(|strategy| strategy_out(strategy, project, explanation.name, links_environment))
                    .collect(),
            },
        }
    }
}

fn strategy_out<'a>(
    strategy: &'a StrategyExplanation<'a>,
    project: &str,
    feature: &str,
    environment: &str,
) -> StrategyOut<'a> {
    let id = strategy.id.unwrap_or_default();
    StrategyOut {
        name: strategy.name,
        id,
        title: strategy.title,
        disabled: strategy.disabled,
        parameters: &strategy.strategy.parameters,
        result: &strategy.result,
        constraints: strategy.constraints.iter().map(constraint_out).collect(),
        segments: strategy.segments.iter().map(segment_out).collect(),
        links: Links {
            edit: format!(
                "/projects/{project}/features/{feature}/strategies/edit?environmentId={environment}&strategyId={id}"
            ),
        },
    }
}

fn constraint_out<'a>(result: &ConstraintResult<'a>) -> ConstraintOut<'a> {
    let constraint = result.constraint;
    ConstraintOut {
        inverted: constraint.is_inverted(),
        values: &constraint.values,
        context_name: &constraint.context_name,
        operator: &constraint.operator,
        case_insensitive: constraint.case_insensitive,
        value: constraint.value.as_deref(),
        result: result.result,
    }
}

fn segment_out<'a>(segment: &SegmentResult<'a>) -> SegmentOut<'a> {
    SegmentOut {
        name: segment.name,
        id: segment.id,
        result: segment.result,
        constraints: segment
            .constraints
            .iter()
            .map(|result| SegmentConstraintOut {
                context_name: &result.constraint.context_name,
                operator: &result.constraint.operator,
                values: &result.constraint.values,
                case_insensitive: result.constraint.case_insensitive,
                inverted: result.constraint.inverted,
                value: result.constraint.value.as_deref(),
                result: result.result,
            })
            .collect(),
    }
}

/// An advanced playground request as typed values: what an interface builds from its own form,
/// and [`body`](Self::body) turns into the body the operation reads, coerces and echoes.
#[derive(Debug, Clone, Default)]
pub struct PlaygroundQuery {
    /// The environments to evaluate in, at least one.
    pub environments: Vec<String>,
    /// The projects to evaluate; every project when `None`.
    pub projects: Option<Vec<String>>,
    /// The context; a value with commas is tried one part at a time.
    pub context: PlaygroundContext,
    /// A past moment to answer for, instead of now.
    pub at: Option<crate::runtime::domain::Timestamp>,
}

impl PlaygroundQuery {
    /// The body of `POST /api/admin/playground/advanced` that asks the same, in the key order
    /// the answer echoes it: `environments`, `projects` (`"*"` for every project), `context`.
    pub fn body(&self) -> Value {
        let mut body = Map::new();
        body.insert("environments".into(), Value::from(self.environments.clone()));
        body.insert(
            "projects".into(),
            match &self.projects {
                Some(projects) => Value::from(projects.clone()),
                None => Value::from("*"),
            },
        );
        body.insert("context".into(), self.context.body());
        if let Some(at) = &self.at {
            body.insert(
                "at".into(),
                Value::from(at.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
            );
        }
        Value::Object(body)
    }
}

/// A playground context as typed values: its `appName`, the fields with a place of their own,
/// and the custom properties, each in the order set.
#[derive(Debug, Clone, Default)]
pub struct PlaygroundContext {
    app_name: String,
    fields: Vec<(String, String)>,
    properties: Vec<(String, String)>,
}

impl PlaygroundContext {
    /// The fields with a place of their own in Unleash's context, besides `appName` and the
    /// `environment` each evaluation sets.
    pub const OWN_FIELDS: [&str; 4] = ["userId", "sessionId", "remoteAddress", "currentTime"];

    /// A context for the application `app_name`, with no other field.
    pub fn new(app_name: impl Into<String>) -> Self {
        Self {
            app_name: app_name.into(),
            ..Self::default()
        }
    }

    /// Sets the context field `name`: in its own place when it is one of
    /// [`OWN_FIELDS`](Self::OWN_FIELDS), else as a custom property. Set again, the later value
    /// wins.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        if Self::OWN_FIELDS.contains(&name.as_str()) {
            self.fields.push((name, value.into()));
        } else {
            self.properties.push((name, value.into()));
        }
    }

    /// Sets the custom property `name`, whatever its name. Set again, the later value wins.
    pub fn set_property(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.properties.push((name.into(), value.into()));
    }

    /// The context as a body gives it: `appName`, the fields, then `properties` when there are
    /// any.
    fn body(&self) -> Value {
        let mut context = Map::new();
        context.insert("appName".into(), Value::from(self.app_name.clone()));
        for (name, value) in &self.fields {
            context.insert(name.clone(), Value::from(value.clone()));
        }
        if !self.properties.is_empty() {
            let properties = self
                .properties
                .iter()
                .map(|(name, value)| (name.clone(), Value::from(value.clone())))
                .collect();
            context.insert("properties".into(), Value::Object(properties));
        }
        Value::Object(context)
    }
}

/// The advanced playground's answer read back whole, for an interface that shows it rather than
/// passing it on: the parts it shows, typed. It is read from the very answer the API gives, so
/// the two cannot disagree.
pub mod shown {
    use std::collections::BTreeMap;
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

    /// The answer.
    #[derive(Debug, Deserialize)]
    pub struct Answer {
        /// Each flag of the projects asked for.
        pub features: Vec<Flag>,
        /// When asked about a past moment: it, and the revision that answered.
        #[serde(rename = "asOf")]
        pub as_of: Option<AsOf>,
    }

    /// The moment an answer is about, and the revision in force then.
    #[derive(Debug, Deserialize)]
    pub struct AsOf {
        /// The moment, RFC 3339.
        pub at: String,
        /// The revision: the newest audit event at or before it.
        pub revision: i32,
    }

    /// One flag in every environment asked for.
    #[derive(Debug, Deserialize)]
    pub struct Flag {
        /// Its name.
        pub name: String,
        /// Its entries by environment, in name order: one per context combination.
        pub environments: BTreeMap<String, Vec<Entry>>,
    }

    /// One flag for one context combination in one environment, and why.
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Entry {
        /// Whether it is on.
        pub is_enabled: bool,
        /// Whether it is switched on in the environment.
        pub is_enabled_in_current_environment: bool,
        /// Whether a parent flag's condition is not met.
        pub has_unsatisfied_dependency: bool,
        /// The variant given.
        pub variant: Variant,
        /// The combination evaluated: each field and its value, in the request's order.
        #[serde(default, deserialize_with = "pairs")]
        pub context: Vec<(String, String)>,
        /// Each strategy's result.
        pub strategies: Strategies,
    }

    /// The variant an entry gives.
    #[derive(Debug, Deserialize)]
    pub struct Variant {
        /// Its name; `disabled` when none is given.
        pub name: String,
        /// Whether one is given.
        pub enabled: bool,
    }

    /// The strategies of an entry.
    #[derive(Debug, Deserialize)]
    pub struct Strategies {
        /// Each strategy, in evaluation order.
        pub data: Vec<Strategy>,
    }

    /// One strategy with its result.
    #[derive(Debug, Deserialize)]
    pub struct Strategy {
        /// Its type.
        pub name: String,
        /// Its display title.
        #[serde(default)]
        pub title: Option<String>,
        /// Whether it is disabled, and so skipped.
        pub disabled: bool,
        /// Its result.
        pub result: StrategyOutcome,
        /// Its parameters, by name.
        #[serde(default)]
        pub parameters: BTreeMap<String, String>,
        /// Its constraints with their results.
        #[serde(default)]
        pub constraints: Vec<Constraint>,
        /// Its segments with their results.
        #[serde(default)]
        pub segments: Vec<Segment>,
    }

    /// A strategy's result.
    #[derive(Debug, Deserialize)]
    pub struct StrategyOutcome {
        /// Whether it enables the flag; `None` when it could not be evaluated (`"unknown"`).
        #[serde(deserialize_with = "known")]
        pub enabled: Option<bool>,
    }

    /// A constraint with its result.
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Constraint {
        /// The context field it reads.
        pub context_name: String,
        /// Its operator.
        pub operator: String,
        /// Values of a list operator.
        #[serde(default)]
        pub values: Vec<String>,
        /// Value of a single-value operator.
        #[serde(default)]
        pub value: Option<String>,
        /// Whether the result is negated.
        #[serde(default)]
        pub inverted: Option<bool>,
        /// Whether it holds.
        pub result: bool,
    }

    /// A segment with its result.
    #[derive(Debug, Deserialize)]
    pub struct Segment {
        /// Its name.
        pub name: String,
        /// Whether it holds.
        pub result: bool,
        /// Its constraints with their results.
        #[serde(default)]
        pub constraints: Vec<Constraint>,
    }

    /// `true` or `false`, else (`"unknown"`) `None`.
    fn known<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<bool>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Outcome {
            Known(bool),
            Unknown(IgnoredAny),
        }
        Ok(match Outcome::deserialize(deserializer)? {
            Outcome::Known(known) => Some(known),
            Outcome::Unknown(_) => None,
        })
    }

    /// A JSON object of strings as its pairs, in its order.
    fn pairs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<(String, String)>, D::Error> {
        struct Pairs;

        impl<'de> Visitor<'de> for Pairs {
            type Value = Vec<(String, String)>;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an object of strings")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some(pair) = map.next_entry()? {
                    pairs.push(pair);
                }
                Ok(pairs)
            }
        }

        deserializer.deserialize_map(Pairs)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn an_entry_reads_back_with_its_context_in_order() -> Result<(), serde_json::Error> {
            let entry: Entry = serde_json::from_str(
                r#"{"isEnabled": false, "isEnabledInCurrentEnvironment": true,
                    "hasUnsatisfiedDependency": false, "variant": {"name": "disabled", "enabled": false},
                    "context": {"userId": "2", "appName": "web"},
                    "strategies": {"result": "unknown", "data": [{"name": "default", "id": "s",
                        "disabled": false, "result": {"enabled": "unknown", "evaluationStatus": "incomplete"},
                        "parameters": {}, "constraints": [], "segments": [], "links": {"edit": "/"}}]}}"#,
            )?;
            assert_eq!(
                entry.context,
                [("userId".into(), "2".into()), ("appName".into(), "web".into())]
            );
            assert_eq!(entry.strategies.data[0].result.enabled, None);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn context_is_coerced_like_unleash() -> Result<(), AdminError> {
        let mut context = json!({"appName": 7, "userId": true, "sessionId": null, "properties": {"n": 1}});
        validate_context(Some(&mut context), "/context")?;
        assert_eq!(
            context,
            json!({"appName": "7", "userId": "true", "sessionId": "", "properties": {"n": "1"}})
        );
        Ok(())
    }

    #[test]
    fn bad_contexts_are_rejected_with_a_path() {
        for (context, path) in [
            (json!({}), "/context/appName"),
            (json!({"appName": ""}), "/context/appName"),
            (json!({"appName": "a", "userId": {}}), "/context/userId"),
            (
                json!({"appName": "a", "currentTime": "2024-01-01"}),
                "/context/currentTime",
            ),
            (json!({"appName": "a", "properties": []}), "/context/properties"),
        ] {
            let mut context = context;
            match validate_context(Some(&mut context), "/context") {
                Err(AdminError::Validation { details, .. }) => {
                    assert_eq!(details[0].path.as_deref(), Some(path));
                }
                other => panic!("expected a validation error at {path}, got {other:?}"),
            }
        }
    }
}

/// The OpenAPI description of the playground's bodies. The handlers read the bodies as JSON
/// values, because Unleash coerces as it validates and echoes the coerced body as `input`; these
/// types only state the shape, and the API-fuzzing run checks real answers against them.
pub mod playground_schema {
    #![allow(dead_code, reason = "schema-only types: read by utoipa, never built")]

    use serde_json::{Map, Value};
    use utoipa::ToSchema;

    /// The context a flag is evaluated for. Numbers, booleans and null in the known string
    /// fields are coerced to strings, as Unleash does; other fields are custom context fields.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct PlaygroundContext {
        /// Required, not empty.
        #[schema(value_type = Value, min_length = 1)]
        app_name: String,
        #[schema(value_type = Option<Value>)]
        user_id: Option<String>,
        #[schema(value_type = Option<Value>)]
        session_id: Option<String>,
        #[schema(value_type = Option<Value>)]
        remote_address: Option<String>,
        #[schema(value_type = Option<Value>)]
        environment: Option<String>,
        /// RFC 3339 with a time zone, a four-digit year and no leap second.
        current_time: Option<crate::runtime::domain::Timestamp>,
        /// Custom fields; values are coerced to strings.
        properties: Option<Map<String, Value>>,
    }

    /// `POST /api/admin/playground` (deprecated).
    #[derive(Debug, ToSchema)]
    pub struct PlaygroundRequest {
        /// The environment to evaluate in.
        #[schema(value_type = Value)]
        environment: String,
        /// `"*"` or a list of project ids; all projects when absent.
        #[schema(value_type = Option<Value>)]
        projects: Option<Value>,
        context: PlaygroundContext,
        /// Our extension: evaluate against the configuration of this past moment (within the
        /// history, which begins when the database first ran this version), with the context's
        /// `currentTime` defaulting to it. The answer then says which revision answered
        /// (`asOf`). A time before the history or in the future is a 400 naming the range.
        at: Option<crate::runtime::domain::Timestamp>,
    }

    /// `POST /api/admin/playground/advanced`.
    #[derive(Debug, ToSchema)]
    pub struct AdvancedPlaygroundRequest {
        /// The environments to evaluate in, at least one.
        #[schema(min_items = 1)]
        environments: Vec<crate::runtime::domain::ResourceName>,
        /// `"*"` or a list of project ids; all projects when absent.
        #[schema(value_type = Option<Value>)]
        projects: Option<Value>,
        /// Comma-separated values are expanded into every combination.
        context: PlaygroundContext,
        /// Our extension, as on the deprecated operation: the configuration of this past moment.
        at: Option<crate::runtime::domain::Timestamp>,
    }

    /// The configuration an answer at a past moment was evaluated against (our extension).
    #[derive(Debug, ToSchema)]
    pub struct AsOf {
        /// The moment asked for.
        at: crate::runtime::domain::Timestamp,
        /// The revision in force then: the id of the newest audit event recorded at or before it
        /// (0 when none was).
        revision: i32,
    }

    /// One evaluated flag, in Unleash's key order.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct EvaluatedFeature {
        is_enabled: bool,
        is_enabled_in_current_environment: bool,
        has_unsatisfied_dependency: bool,
        /// `{name, enabled, payload?}` and, on the deprecated operation, `feature_enabled` and
        /// `featureEnabled`.
        variant: Option<Map<String, Value>>,
        /// The combination evaluated (advanced operation only).
        context: Option<Map<String, Value>>,
        variants: Vec<Map<String, Value>>,
        name: String,
        /// The environment of this entry (advanced operation only).
        environment: Option<String>,
        project_id: String,
        /// `result` (`true`, `false` or `"unknown"`) and `data`, one result per strategy.
        strategies: Map<String, Value>,
    }

    /// The deprecated operation's answer.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct PlaygroundResponse {
        /// The request, as coerced.
        input: Map<String, Value>,
        features: Vec<EvaluatedFeature>,
        /// Present when the request named `at`.
        as_of: Option<AsOf>,
    }

    /// One flag across the requested environments.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct AdvancedFeature {
        name: String,
        project_id: String,
        /// Entries by environment, one per combination.
        environments: std::collections::BTreeMap<String, Vec<EvaluatedFeature>>,
    }

    /// The advanced operation's answer.
    #[derive(Debug, ToSchema)]
    #[serde(rename_all = "camelCase")]
    pub struct AdvancedPlaygroundResponse {
        features: Vec<AdvancedFeature>,
        /// The request, as coerced.
        input: Map<String, Value>,
        /// `invalidContextProperties`: top-level context fields dropped for not being strings.
        warnings: Option<Map<String, Value>>,
        /// Present when the request named `at`.
        as_of: Option<AsOf>,
    }
}

/// A strategy tried before saving it: its answer and, per constraint and segment, whether it
/// held.
#[derive(Debug, Clone)]
pub struct PreviewOut {
    /// Whether the strategy turns the flag on for the context.
    pub enabled: bool,
    /// The strategy variant it picks, when it has variants and is on.
    pub variant: Option<String>,
    /// Whether the strategy is disabled, and so skipped.
    pub disabled: bool,
    /// Each constraint with whether it held.
    pub constraints: Vec<(flag_eval::Constraint, bool)>,
    /// Each segment by name, with whether all its constraints held.
    pub segments: Vec<(String, bool)>,
    /// Whether the result could not be decided (a field the context lacks is needed, or a
    /// strategy type this server does not know).
    pub unknown: bool,
}

impl PreviewOut {
    /// The answer an explanation of the one tried strategy gives.
    pub fn of(explanation: &flag_eval::Explanation<'_>) -> Self {
        let strategy = explanation.strategies.first();
        Self {
            enabled: explanation.is_enabled,
            variant: match explanation.variant {
                flag_eval::PlaygroundVariant::Strategy(variant)
                | flag_eval::PlaygroundVariant::Feature(variant) => Some(variant.name.clone()),
                _ => None,
            },
            disabled: strategy.is_some_and(|strategy| strategy.disabled),
            constraints: strategy
                .map(|strategy| {
                    strategy
                        .constraints
                        .iter()
                        .map(|result| (result.constraint.clone(), result.result))
                        .collect()
                })
                .unwrap_or_default(),
            segments: strategy
                .map(|strategy| {
                    strategy
                        .segments
                        .iter()
                        .map(|segment| (segment.name.to_owned(), segment.result))
                        .collect()
                })
                .unwrap_or_default(),
            unknown: strategy.is_some_and(|strategy| strategy.result.enabled == flag_eval::Tristate::Unknown),
        }
    }
}
