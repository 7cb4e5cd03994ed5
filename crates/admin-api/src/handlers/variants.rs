//! `PUT /api/admin/projects/{projectId}/features/{featureName}/variants-batch` and reading
//! variants back.

use actix_web::{HttpResponse, web};
use flag_eval::model::Override;
use flag_eval::{Payload, Variant, fix_variant_weights};
use flag_store::queries;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::auth::{Principal, READ_VARIANTS, UPDATE_VARIANTS};
use crate::error::{ApiError, Detail};
use crate::extract::Body;

const VARIANT_KEYS: [&str; 6] = [
    "name",
    "weight",
    "weightType",
    "stickiness",
    "payload",
    "overrides",
];
const PAYLOAD_TYPES: [&str; 4] = ["json", "csv", "string", "number"];

/// `PUT .../variants-batch`: replaces the feature's variants in every listed environment, all or
/// none, and answers with the variants as sent, defaults filled in and weights normalised.
pub async fn variants_batch(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
    Body(body): Body<Value>,
) -> Result<HttpResponse, ApiError> {
    let (project, feature) = path.into_inner();
    let Value::Object(fields) = &body else {
        return Err(ApiError::invalid("/", "the body must be an object"));
    };
    let raw_variants: Vec<Map<String, Value>> = match fields.get("variants") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                item.as_object().cloned().ok_or_else(|| {
                    ApiError::invalid(format!("/variants/{index}"), "a variant must be an object")
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(ApiError::invalid("/variants", "/variants must be an array")),
    };
    let mut variants: Vec<Variant> = raw_variants
        .iter()
        .enumerate()
        .map(|(index, raw)| parse_variant(raw, &format!("/variants/{index}")))
        .collect::<Result<_, _>>()?;
    let environments: Vec<String> = match fields.get("environments") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(index, item)| {
                item.as_str().map(str::to_owned).ok_or_else(|| {
                    ApiError::invalid(
                        format!("/environments/{index}"),
                        "an environment must be a string",
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ApiError::invalid(
                "/environments",
                "/environments must be an array",
            ));
        }
    };
    if environments.is_empty() {
        return Err(ApiError::invalid("/environments", "no environments provided"));
    }
    for environment in &environments {
        principal.require_write(UPDATE_VARIANTS, Some(environment))?;
    }
    check_rules(&variants)?;
    fix_variant_weights(&mut variants).map_err(|error| ApiError::invalid("/variants", error.to_string()))?;

    let actor = principal.actor().to_owned();
    let now = chrono::Utc::now().naive_utc();
    let stored = variants.clone();
    crate::db::run(&state.store, move |conn| {
        queries::variants::set_variants_batch(conn, &project, &feature, &environments, &stored, &actor, now)
    })
    .await?;

    let echoed: Vec<Value> = raw_variants
        .into_iter()
        .zip(&variants)
        .map(|(raw, variant)| {
            let mut out = Map::new();
            out.insert(
                "weightType".into(),
                json!(variant.weight_type.as_deref().unwrap_or("variable")),
            );
            out.insert(
                "stickiness".into(),
                json!(variant.stickiness.as_deref().unwrap_or("default")),
            );
            for (key, value) in raw {
                match key.as_str() {
                    "weightType" | "stickiness" => {}
                    "weight" => {
                        out.insert(key, json!(variant.weight));
                    }
                    _ => {
                        out.insert(key, value);
                    }
                }
            }
            Value::Object(out)
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"version": 1, "variants": echoed})))
}

/// Schema checks of one variant, with coercion of a numeric-string weight as Unleash does.
fn parse_variant(raw: &Map<String, Value>, path: &str) -> Result<Variant, ApiError> {
    if let Some(key) = raw.keys().find(|key| !VARIANT_KEYS.contains(&key.as_str())) {
        return Err(ApiError::invalid(
            format!("{path}/{key}"),
            format!("{path} does not allow the property {key}"),
        ));
    }
    let name = match raw.get("name") {
        Some(Value::String(name)) => name.clone(),
        Some(_) => {
            return Err(ApiError::invalid(
                format!("{path}/name"),
                format!("{path}/name must be a string"),
            ));
        }
        None => {
            return Err(ApiError::invalid(
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
            return Err(ApiError::invalid(
                &weight_path,
                format!("{weight_path} is required"),
            ));
        }
    }
    .ok_or_else(|| ApiError::invalid(&weight_path, format!("{weight_path} must be a number")))?;
    if !(0.0..=1000.0).contains(&weight) {
        return Err(ApiError::invalid(
            &weight_path,
            format!("{weight_path} must be between 0 and 1000; you sent {weight}"),
        ));
    }
    if weight.fract() != 0.0 {
        return Err(ApiError::invalid(
            &weight_path,
            format!("{weight_path} must be a whole number; you sent {weight}"),
        ));
    }
    let weight_type = match raw.get("weightType") {
        None => None,
        Some(Value::String(kind)) if kind == "variable" || kind == "fix" => Some(kind.clone()),
        Some(other) => {
            return Err(ApiError::invalid(
                format!("{path}/weightType"),
                format!("{path}/weightType must be \"variable\" or \"fix\"; you sent {other}"),
            ));
        }
    };
    let stickiness = match raw.get("stickiness") {
        None => None,
        Some(Value::String(stickiness)) => Some(stickiness.clone()),
        Some(_) => {
            return Err(ApiError::invalid(
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
            return Err(ApiError::invalid(
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

fn parse_payload(value: &Value, path: &str) -> Result<Payload, ApiError> {
    let Value::Object(fields) = value else {
        return Err(ApiError::invalid(path, format!("{path} must be an object")));
    };
    if let Some(key) = fields.keys().find(|key| *key != "type" && *key != "value") {
        return Err(ApiError::invalid(
            format!("{path}/{key}"),
            format!("{path} does not allow the property {key}"),
        ));
    }
    let payload_type = match fields.get("type") {
        Some(Value::String(kind)) if PAYLOAD_TYPES.contains(&kind.as_str()) => kind.clone(),
        Some(_) => {
            return Err(ApiError::invalid(
                format!("{path}/type"),
                format!("{path}/type must be one of json, csv, string, number"),
            ));
        }
        None => {
            return Err(ApiError::invalid(
                format!("{path}/type"),
                format!("{path}/type is required"),
            ));
        }
    };
    let value = match fields.get("value") {
        Some(Value::String(text)) => text.clone(),
        Some(_) => {
            return Err(ApiError::invalid(
                format!("{path}/value"),
                format!("{path}/value must be a string"),
            ));
        }
        None => {
            return Err(ApiError::invalid(
                format!("{path}/value"),
                format!("{path}/value is required"),
            ));
        }
    };
    Ok(Payload { payload_type, value })
}

fn parse_override(value: &Value, path: &str) -> Result<Override, ApiError> {
    let Value::Object(fields) = value else {
        return Err(ApiError::invalid(path, format!("{path} must be an object")));
    };
    if let Some(key) = fields
        .keys()
        .find(|key| *key != "contextName" && *key != "values")
    {
        return Err(ApiError::invalid(
            format!("{path}/{key}"),
            format!("{path} does not allow the property {key}"),
        ));
    }
    let context_name = fields.get("contextName").and_then(Value::as_str).ok_or_else(|| {
        ApiError::invalid(
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
            ApiError::invalid(
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
fn check_rules(variants: &[Variant]) -> Result<(), ApiError> {
    let mut details = Vec::new();
    for (index, variant) in variants.iter().enumerate() {
        let path = format!("/variants/{index}");
        let name = &variant.name;
        let url_friendly = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
            && name != "."
            && name != "..";
        if name.is_empty() || name.chars().count() > 100 || !url_friendly {
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
    ApiError::check(details)
}

/// `GET /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants`.
pub async fn environment_variants(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (project, feature, environment) = path.into_inner();
    principal.require_read(READ_VARIANTS, &environment)?;
    let variants = crate::db::run(&state.store, move |conn| {
        queries::variants::get(conn, &project, &feature, &environment)
    })
    .await?;
    Ok(HttpResponse::Ok().json(json!({"version": 1, "variants": variants})))
}
