//! Rules every operation applies to its input: text, emails, JSON Pointers, JSON Patch, dates.

use chrono::NaiveDateTime;
use serde_json::Value;

use crate::runtime::error::{AdminError, Detail};

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

/// A field that, when given, must be a JSON object (serde would read a struct from an array
/// too, by position): `#[serde(default, deserialize_with = "input::optional_object")]`.
pub fn optional_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::Deserialize as _;
    match Option::<serde_json::Map<String, Value>>::deserialize(deserializer)? {
        Some(object) => T::deserialize(Value::Object(object))
            .map(Some)
            .map_err(serde::de::Error::custom),
        None => Ok(None),
    }
}

/// A field that, when given, must be an array of JSON objects:
/// `#[serde(default, deserialize_with = "input::optional_objects")]`.
pub fn optional_objects<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::Deserialize as _;
    match Option::<Vec<serde_json::Map<String, Value>>>::deserialize(deserializer)? {
        Some(objects) => objects
            .into_iter()
            .map(|object| T::deserialize(Value::Object(object)).map_err(serde::de::Error::custom))
            .collect::<Result<Vec<T>, D::Error>>()
            .map(Some),
        None => Ok(None),
    }
}

/// A field that must be a JSON object: `#[serde(deserialize_with = "input::object")]`.
pub fn object<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::Deserialize as _;
    let object = serde_json::Map::<String, Value>::deserialize(deserializer)?;
    T::deserialize(Value::Object(object)).map_err(serde::de::Error::custom)
}

/// A field that must be an array of JSON objects:
/// `#[serde(deserialize_with = "input::objects")]`.
pub fn objects<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::Deserialize as _;
    Vec::<serde_json::Map<String, Value>>::deserialize(deserializer)?
        .into_iter()
        .map(|object| T::deserialize(Value::Object(object)).map_err(serde::de::Error::custom))
        .collect()
}

/// Unleash's date format: ISO 8601 with milliseconds and `Z`.
pub fn iso(time: NaiveDateTime) -> String {
    flag_store::time::iso(time)
}
