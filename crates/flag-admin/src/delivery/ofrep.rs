//! OpenFeature's Remote Evaluation Protocol (OFREP): every OpenFeature SDK's OFREP provider can
//! evaluate flags here without an Unleash SDK. Same engine, tokens and scope as the frontend
//! API; the context's `targetingKey`, when there is one, is the `userId`.

pub mod types;

use std::net::IpAddr;
use std::sync::Arc;

use flag_eval::{Context, Feature, ResolvedVariant};
use flag_store::queries::evaluation::ProjectScope;

use crate::delivery::Delivery;
use crate::delivery::engines::Compiled;
use crate::delivery::ofrep::types::{
    OfrepBulkEvaluation, OfrepErrorCode, OfrepEvaluation, OfrepFailure, OfrepMetadata, OfrepReason,
};
use crate::identity::auth::{Access, FrontendAccess};
use crate::{AdminError, runtime::Runtime};

/// Why an evaluation request failed, in OFREP's own terms.
#[derive(Debug)]
pub enum Failure {
    /// The body or its context is not of the protocol's shape (OFREP's 400).
    Invalid(OfrepFailure),
    /// No flag has the key in the token's environment and projects (OFREP's 404).
    NotFound(OfrepFailure),
    /// A fault of the server.
    Internal(AdminError),
}

impl From<AdminError> for Failure {
    fn from(error: AdminError) -> Self {
        Self::Internal(error)
    }
}

/// An invalid request's failure.
fn failure(key: Option<&str>, code: OfrepErrorCode, details: impl Into<String>) -> Failure {
    Failure::Invalid(OfrepFailure {
        key: key.map(str::to_owned),
        error_code: code,
        error_details: details.into(),
    })
}

/// The context of an OFREP request body, or the failure to answer.
fn context_of(
    body: &[u8],
    key: Option<&str>,
    caller_address: IpAddr,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Context, Failure> {
    let parsed: serde_json::Value = serde_json::from_slice(body).map_err(|error| {
        failure(
            key,
            OfrepErrorCode::ParseError,
            format!("the body is not JSON: {error}"),
        )
    })?;
    let serde_json::Value::Object(mut fields) =
        parsed.get("context").cloned().unwrap_or(serde_json::Value::Null)
    else {
        return Err(failure(
            key,
            OfrepErrorCode::ParseError,
            "the body needs a `context` object",
        ));
    };
    // An Unleash context needs no user: without a targeting key, the flags evaluate as the
    // frontend API evaluates a context without a `userId`.
    let mut pairs = Vec::with_capacity(fields.len());
    match fields.remove("targetingKey") {
        Some(serde_json::Value::String(text)) if !text.is_empty() => pairs.push(("userId".to_owned(), text)),
        Some(serde_json::Value::Number(number)) => pairs.push(("userId".to_owned(), number.to_string())),
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::String(_)) => {}
        Some(_) => {
            return Err(failure(
                key,
                OfrepErrorCode::InvalidContext,
                "`targetingKey` must be a string or a number",
            ));
        }
    }
    let keyed = !pairs.is_empty();
    for (name, value) in fields {
        let text = match value {
            serde_json::Value::String(text) => text,
            serde_json::Value::Number(number) => number.to_string(),
            serde_json::Value::Bool(flag) => flag.to_string(),
            serde_json::Value::Null => continue,
            _ => {
                return Err(failure(
                    key,
                    OfrepErrorCode::InvalidContext,
                    format!("context field {name:?} must be a string, number or boolean"),
                ));
            }
        };
        // The targeting key is the user; a `userId` field stands in only without one.
        if name != "userId" || !keyed {
            pairs.push((name, text));
        }
    }
    crate::delivery::frontend::context_from(pairs, caller_address, now).map_err(|error| match error {
        AdminError::Validation { message, .. } => failure(key, OfrepErrorCode::InvalidContext, message),
        other => Failure::Internal(other),
    })
}

/// One flag's evaluation in OFREP's terms.
fn evaluation(feature: &Feature, variant: &ResolvedVariant<'_>) -> OfrepEvaluation {
    let (value, reason, name) = if variant.enabled {
        let value = match variant.payload {
            Some(payload) if payload.payload_type == "json" => serde_json::from_str(&payload.value)
                .unwrap_or_else(|_| serde_json::Value::String(payload.value.clone())),
            Some(payload) if payload.payload_type == "number" => {
                payload.value.parse::<serde_json::Number>().map_or_else(
                    |_| serde_json::Value::String(payload.value.clone()),
                    serde_json::Value::Number,
                )
            }
            Some(payload) => serde_json::Value::String(payload.value.clone()),
            None => serde_json::Value::String(variant.name.to_owned()),
        };
        (value, OfrepReason::Split, variant.name.to_owned())
    } else {
        let reason = if feature.enabled {
            OfrepReason::TargetingMatch
        } else {
            OfrepReason::Disabled
        };
        let name = if variant.feature_enabled {
            "enabled"
        } else {
            "disabled"
        };
        (
            serde_json::Value::Bool(variant.feature_enabled),
            reason,
            name.to_owned(),
        )
    };
    OfrepEvaluation {
        key: feature.name.clone(),
        value,
        reason,
        variant: name,
        metadata: OfrepMetadata {
            feature_enabled: variant.feature_enabled,
        },
    }
}

/// The token's compiled flags.
async fn compiled(
    ctx: &Runtime,
    delivery: &Delivery,
    access: &FrontendAccess,
) -> Result<Arc<Compiled>, AdminError> {
    let scope = access
        .projects
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    crate::delivery::engines::compile(ctx, delivery, &scope, std::slice::from_ref(&access.environment))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| AdminError::Internal("no compiled environment".into()))
}

/// Who may evaluate one flag through OFREP: frontend tokens.
pub const EVALUATE_FLAG: Access = Access::Frontend;

/// Evaluates the flag `key` for the context in `body`, a request from `caller_address`.
pub async fn evaluate_flag(
    ctx: &Runtime,
    delivery: &Delivery,
    access: &FrontendAccess,
    key: &str,
    body: &[u8],
    caller_address: IpAddr,
) -> Result<OfrepEvaluation, Failure> {
    let context = context_of(body, Some(key), caller_address, ctx.now_utc())?;
    let compiled = compiled(ctx, delivery, access).await?;
    let Some(feature) = compiled.engine.feature(key) else {
        return Err(Failure::NotFound(OfrepFailure {
            key: Some(key.to_owned()),
            error_code: OfrepErrorCode::FlagNotFound,
            error_details: format!("flag {key} was not found"),
        }));
    };
    let variant = compiled.engine.variant(&feature.name, &context);
    Ok(evaluation(feature, &variant))
}

/// Who may evaluate every flag through OFREP: frontend tokens.
pub const EVALUATE_FLAGS: Access = Access::Frontend;

/// Evaluates every flag of the token's environment and projects for the context in `body`: the
/// answer as JSON.
pub async fn evaluate_flags(
    ctx: &Runtime,
    delivery: &Delivery,
    access: &FrontendAccess,
    body: &[u8],
    caller_address: IpAddr,
) -> Result<Vec<u8>, Failure> {
    let context = context_of(body, None, caller_address, ctx.now_utc())?;
    let compiled = compiled(ctx, delivery, access).await?;
    let flags = compiled
        .features()
        .map(|feature| evaluation(feature, &compiled.engine.variant(&feature.name, &context)))
        .collect();
    let body = serde_json::to_vec(&OfrepBulkEvaluation { flags })
        .map_err(|error| AdminError::Internal(format!("cannot serialise evaluations: {error}")))?;
    Ok(body)
}
