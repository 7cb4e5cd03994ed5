//! Request validation and response shapes.
//!
//! Playground bodies are validated by hand rather than by derive, because Unleash coerces as it
//! validates (numbers and booleans in string fields become strings, `null` becomes `""`) and
//! echoes the coerced body back as `input`.

pub mod addons;
pub mod context;
pub mod dependencies;
pub mod edge;
pub mod environments;
pub mod events;
pub mod export;
pub mod features;
pub mod frontend;
pub mod lifecycle;
pub mod me;
pub mod model;
pub mod ofrep;
pub mod overview;
pub mod projects;
pub mod search;
pub mod segments;
pub mod sso;
pub mod strategies;
pub mod strategy_types;
pub mod tags;
pub mod tokens;
pub mod usage;

use chrono::{DateTime, NaiveDateTime, Utc};
use flag_eval::{
    Combination, ConstraintResult, Context, Explanation, PlaygroundVariant, SegmentResult,
    StrategyExplanation, StrategyResult, Tristate, Variant,
};
use flag_store::models::UserRow;
use flag_store::queries::evaluation::ProjectScope;
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::error::{AdminError, Detail};

pub mod client;
pub mod health;
pub mod invite;
pub mod session;
pub mod users;
pub mod variants;

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
    Ok(PlaygroundScope {
        projects,
        context,
        invalid,
    })
}

/// A required environment name of the advanced playground: a [`ResourceName`].
///
/// [`ResourceName`]: crate::domain::ResourceName
pub fn environment_name(value: &Value, path: &str) -> Result<String, AdminError> {
    let name = value
        .as_str()
        .ok_or_else(|| AdminError::invalid(path, format!("{path} must be a string")))?;
    crate::domain::ResourceName::try_from(name)
        .map(crate::domain::ResourceName::into_string)
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

/// Longest name, email or username accepted, in characters, as Unleash caps them.
pub const MAX_TEXT_CHARS: usize = 255;

/// The JSON Pointer (RFC 6901) of where deserialising failed: `/variants/0/weight`.
pub fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path {
        pointer.push('/');
        match segment {
            Segment::Seq { index } => pointer.push_str(&index.to_string()),
            Segment::Map { key } => pointer.push_str(&pointer_segment(key)),
            Segment::Enum { variant } => pointer.push_str(&pointer_segment(variant)),
            Segment::Unknown => pointer.push('?'),
        }
    }
    if pointer.is_empty() {
        pointer.push('/');
    }
    pointer
}

/// Most `copy` operations one JSON Patch may hold: each can double the document.
pub const PATCH_COPIES: usize = 64;

/// Most bytes a patched document may reach: the request body's own limit.
pub const PATCHED_BYTES: usize = 1 << 20;

/// Applies a JSON Patch to `document`, every patch operation of the API going through here. A
/// patch is refused (with the reason, for a 400) when it does not apply, or when its `copy`
/// operations, which can double the document each time, are more than [`PATCH_COPIES`] or grow
/// it past [`PATCHED_BYTES`]: a small body must not make the server build a huge document.
pub fn apply_patch(document: &mut Value, operations: &json_patch::Patch) -> Result<(), String> {
    let copies = operations
        .iter()
        .filter(|operation| matches!(operation, json_patch::PatchOperation::Copy(_)))
        .count();
    if copies > PATCH_COPIES {
        return Err(format!(
            "the patch has {copies} copy operations; at most {PATCH_COPIES} are taken"
        ));
    }
    if copies == 0 {
        return json_patch::patch(document, operations).map_err(|error| error.to_string());
    }
    for operation in operations.iter() {
        json_patch::patch(document, std::slice::from_ref(operation)).map_err(|error| error.to_string())?;
        if matches!(operation, json_patch::PatchOperation::Copy(_)) {
            let size = serde_json::to_vec(document).map_or(usize::MAX, |bytes| bytes.len());
            if size > PATCHED_BYTES {
                return Err(format!(
                    "the patched document would be over {PATCHED_BYTES} bytes"
                ));
            }
        }
    }
    Ok(())
}

/// Reads a request type out of a JSON document built by an operation (a patched document), a
/// mismatch being a 400 that names the field.
pub fn parse_value<T: serde::de::DeserializeOwned>(document: serde_json::Value) -> Result<T, AdminError> {
    serde_path_to_error::deserialize(document).map_err(|error| {
        let path = pointer(error.path());
        let inner = error.into_inner();
        AdminError::Validation {
            message: format!("the patched document does not match the schema: {path}: {inner}"),
            details: vec![Detail::at(path, inner.to_string())],
        }
    })
}

/// `key` as one segment of a JSON Pointer (RFC 6901): `~` as `~0` and `/` as `~1`, so a name
/// with slashes or dots stays one segment.
pub fn pointer_segment(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// What is wrong with a name, email or username at `path`, if anything: empty once trimmed,
/// longer than [`MAX_TEXT_CHARS`] characters, or holding a control character.
pub fn text_problem(path: &str, text: &str) -> Option<Detail> {
    if text.trim().is_empty() {
        return Some(Detail::at(path, format!("{path} must not be empty")));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Some(Detail::at(
            path,
            format!("{path} must be at most {MAX_TEXT_CHARS} characters long"),
        ));
    }
    if text.chars().any(char::is_control) {
        return Some(Detail::at(
            path,
            format!("{path} must not contain control characters"),
        ));
    }
    None
}

/// What is wrong with an email at `path`, if anything: the text rules, and the shape of an
/// address.
pub fn email_problem(path: &str, email: &str) -> Option<Detail> {
    text_problem(path, email).or_else(|| {
        let email = email.trim();
        let plausible = email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !domain.ends_with('.')
        }) && !email.contains(char::is_whitespace);
        (!plausible).then(|| Detail::at(path, format!("{path} must be a valid email address")))
    })
}

/// What is wrong with a username at `path`, if anything: the text rules, and no `@`, so that a
/// username can never be someone's email.
pub fn username_problem(path: &str, username: &str) -> Option<Detail> {
    text_problem(path, username).or_else(|| {
        username
            .contains('@')
            .then(|| Detail::at(path, format!("{path} must not contain @")))
    })
}

/// Checks strategy or segment constraints with the engine's strict validation; 400 naming the
/// first bad one (`/constraints/2`).
pub fn check_constraints(constraints: &[flag_eval::Constraint]) -> Result<(), AdminError> {
    flag_eval::validate_constraints(constraints)
        .map_err(|(index, error)| AdminError::invalid(format!("/constraints/{index}"), error.to_string()))
}

/// Everything wrong with the fields of a user that are given, each checked by its rule.
pub fn person_problems(email: Option<&str>, username: Option<&str>, name: Option<&str>) -> Vec<Detail> {
    [
        email.and_then(|email| email_problem("/email", email)),
        username.and_then(|username| username_problem("/username", username)),
        name.and_then(|name| text_problem("/name", name)),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// An optional field that may be left out but not sent as `null`: `null` is neither a value of
/// the type nor "no change". Use with `#[serde(default)]`, so that an absent field is `None`.
pub fn not_null<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    match <Option<T> as serde::Deserialize>::deserialize(deserializer)? {
        Some(value) => Ok(Some(value)),
        None => Err(serde::de::Error::custom(
            "must not be null; leave the field out to keep it",
        )),
    }
}

/// Unleash's date format: ISO 8601 with milliseconds and `Z`.
pub fn iso(time: NaiveDateTime) -> String {
    flag_store::time::iso(time)
}

/// The user as Unleash returns it (Unleash's `userSchema`), never with a password or its hash.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserOut {
    /// The user's id.
    id: i32,
    /// Display name.
    name: Option<String>,
    /// Login name; absent when the user has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String)]
    username: Option<String>,
    /// Email, lower-cased.
    email: Option<String>,
    /// A Gravatar address made from the email or username.
    image_url: String,
    /// Last login.
    #[schema(format = DateTime)]
    seen_at: Option<String>,
    /// Failed logins since the last success.
    login_attempts: i32,
    #[schema(format = DateTime)]
    created_at: String,
    /// Always `User`.
    #[schema(example = "User")]
    account_type: &'static str,
    /// Always null: there is no SCIM.
    scim_id: Option<String>,
    /// Always null: there are no paid seats.
    seat_type: Option<String>,
    /// Always null: not asked at signup.
    company_role: Option<String>,
    /// Always null: not asked at signup.
    product_updates_email_consent: Option<bool>,
    /// 1 (Admin), 2 (Editor) or 3 (Viewer), written as its id.
    root_role: crate::domain::RootRole,
}

/// The Gravatar address Unleash makes for a user: the SHA-256 of their email, else username,
/// else id, an address (anything with `@`) lower-cased and trimmed first, as Gravatar asks.
pub fn image_url(email: Option<&str>, username: Option<&str>, id: i32) -> String {
    let key = email
        .filter(|email| !email.is_empty())
        .or(username.filter(|username| !username.is_empty()))
        .map_or_else(
            || id.to_string(),
            |key| {
                if key.contains('@') {
                    key.trim().to_lowercase()
                } else {
                    key.to_owned()
                }
            },
        );
    format!(
        "https://gravatar.com/avatar/{}?s=42&d=retro&r=g",
        hex::encode(Sha256::digest(key))
    )
}

/// The username Unleash stores for the users it writes as: `unleash_admin_token` for admin
/// tokens and `unleash_system_user` for the server itself; their avatars are made from it.
fn system_username(id: i32) -> Option<&'static str> {
    match id {
        flag_store::models::Actor::ADMIN_TOKEN => Some("unleash_admin_token"),
        flag_store::models::Actor::SYSTEM => Some("unleash_system_user"),
        _ => None,
    }
}

/// Someone who wrote: a user by their name, else username, else email; an admin token or the
/// server by the names Unleash gives them; anyone else by the name the audit log kept.
pub fn person(id: i32, user: Option<&UserRow>, written: &str) -> features::PersonOut {
    let name = match (id, user) {
        (_, Some(user)) => user
            .name
            .clone()
            .or_else(|| user.username.clone())
            .or_else(|| user.email.clone())
            .unwrap_or_else(|| "unknown".into()),
        (flag_store::models::Actor::ADMIN_TOKEN, None) => "Unleash Admin Token User".into(),
        (flag_store::models::Actor::SYSTEM, None) => "Unleash System".into(),
        (_, None) if !written.is_empty() => written.to_owned(),
        (_, None) => "unknown".into(),
    };
    features::PersonOut {
        id,
        image_url: image_url(
            user.and_then(|user| user.email.as_deref()),
            user.and_then(|user| user.username.as_deref())
                .or_else(|| system_username(id)),
            id,
        ),
        name,
    }
}

impl TryFrom<UserRow> for UserOut {
    type Error = crate::error::AdminError;

    /// A stored root role that is not one is an error, never a default role.
    fn try_from(user: UserRow) -> Result<Self, Self::Error> {
        let root_role = crate::domain::RootRole::stored(user.id, user.root_role)?;
        Ok(Self {
            image_url: image_url(user.email.as_deref(), user.username.as_deref(), user.id),
            id: user.id,
            name: user.name,
            username: user.username,
            email: user.email,
            seen_at: user.seen_at.map(iso),
            login_attempts: user.login_attempts,
            created_at: iso(user.created_at),
            account_type: "User",
            scim_id: None,
            seat_type: None,
            company_role: None,
            product_updates_email_consent: None,
            root_role,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn avatars_hash_what_unleash_hashes() {
        let avatar = |hash: &str| format!("https://gravatar.com/avatar/{hash}?s=42&d=retro&r=g");
        // sha256("ops@example.com"): the email, lower-cased, whatever the username and id.
        assert_eq!(
            image_url(Some(" Ops@Example.com"), Some("ops"), 7),
            avatar("af3c82544f648b38dc7d403473bb4b957cd04353afd9096fa871c1e469656c8c")
        );
        // The admin token's user, as Unleash's web UI knows it, and its own `admin`.
        assert_eq!(
            person(flag_store::models::Actor::ADMIN_TOKEN, None, "").image_url,
            avatar("989553ee532211da1dfc7513e22e544afde4a4b06e03355448c1b1059e6a7e6d")
        );
        assert_eq!(
            image_url(None, Some("admin"), 1),
            avatar("8c6976e5b5410415bde908bd4dee15dfb167a9c873fc4bb8a81f6f2ab448a918")
        );
        // Without email or username, the id.
        assert_eq!(
            image_url(None, None, 12),
            avatar(&hex::encode(Sha256::digest("12")))
        );
    }

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
        current_time: Option<crate::domain::Timestamp>,
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
    }

    /// `POST /api/admin/playground/advanced`.
    #[derive(Debug, ToSchema)]
    pub struct AdvancedPlaygroundRequest {
        /// The environments to evaluate in, at least one.
        #[schema(min_items = 1)]
        environments: Vec<crate::domain::ResourceName>,
        /// `"*"` or a list of project ids; all projects when absent.
        #[schema(value_type = Option<Value>)]
        projects: Option<Value>,
        /// Comma-separated values are expanded into every combination.
        context: PlaygroundContext,
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
    pub struct PlaygroundResponse {
        /// The request, as coerced.
        input: Map<String, Value>,
        features: Vec<EvaluatedFeature>,
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
    pub struct AdvancedPlaygroundResponse {
        features: Vec<AdvancedFeature>,
        /// The request, as coerced.
        input: Map<String, Value>,
        /// `invalidContextProperties`: top-level context fields dropped for not being strings.
        warnings: Option<Map<String, Value>>,
    }
}
