//! The OpenFeature Remote OfrepEvaluation Protocol (OFREP): every OpenFeature SDK's OFREP provider
//! can evaluate flags here without an Unleash SDK. Same engine, tokens and scope as the
//! frontend API; the context's `targetingKey`, when there is one, is the `userId`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_eval::{Context, Feature, ResolvedVariant};
use flag_store::queries::evaluation::ProjectScope;
use sha2::{Digest as _, Sha256};

use crate::AppState;
use crate::auth::FrontendAccess;
use crate::dto::ofrep::{
    OfrepBulkEvaluation, OfrepErrorCode, OfrepEvaluation, OfrepFailure, OfrepMetadata, OfrepReason,
    OfrepRequest,
};
use crate::error::{ApiError, ErrorBody};
use crate::extract::JsonBytes;
use crate::respond::Tagged;

/// OFREP's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(evaluate_flag, evaluate_flags))]
pub struct Api;

/// An OFREP failure with its status.
fn failure(
    status: StatusCode,
    key: Option<&str>,
    code: OfrepErrorCode,
    details: impl Into<String>,
) -> (StatusCode, OfrepFailure) {
    (
        status,
        OfrepFailure {
            key: key.map(str::to_owned),
            error_code: code,
            error_details: details.into(),
        },
    )
}

/// The answer to a failure.
fn respond((status, failure): (StatusCode, OfrepFailure)) -> HttpResponse {
    HttpResponse::build(status).json(failure)
}

/// The context of an OFREP request body, or the failure to answer.
fn context_of(
    body: &[u8],
    key: Option<&str>,
    request: &HttpRequest,
) -> Result<Context, (StatusCode, OfrepFailure)> {
    let parsed: serde_json::Value = serde_json::from_slice(body).map_err(|error| {
        failure(
            StatusCode::BAD_REQUEST,
            key,
            OfrepErrorCode::ParseError,
            format!("the body is not JSON: {error}"),
        )
    })?;
    let serde_json::Value::Object(mut fields) =
        parsed.get("context").cloned().unwrap_or(serde_json::Value::Null)
    else {
        return Err(failure(
            StatusCode::BAD_REQUEST,
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
                StatusCode::BAD_REQUEST,
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
                    StatusCode::BAD_REQUEST,
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
    crate::handlers::frontend::context_from(pairs, request).map_err(|error| {
        failure(
            StatusCode::INTERNAL_SERVER_ERROR,
            key,
            OfrepErrorCode::ParseError,
            error.to_string(),
        )
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
    state: &AppState,
    access: &FrontendAccess,
) -> Result<std::sync::Arc<crate::engines::Compiled>, ApiError> {
    let scope = access
        .projects
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    crate::engines::compile(state, &scope, std::slice::from_ref(&access.environment))
        .await?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::Internal("no compiled environment".into()))
}

/// Evaluates one flag for the context.
#[utoipa::path(
    post,
    path = "/ofrep/v1/evaluate/flags/{key}",
    tag = "OpenFeature",
    operation_id = "evaluateFlag",
    params(("key" = String, Path, description = "The flag")),
    request_body = OfrepRequest,
    responses(
        (status = 200, description = "The flag's value for the context", body = OfrepEvaluation),
        (status = 400, description = "`PARSE_ERROR` or `INVALID_CONTEXT`", body = OfrepFailure),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "Not a frontend token", body = ErrorBody),
        (status = 404, description = "`FLAG_NOT_FOUND`: no such flag in the token's environment and projects", body = OfrepFailure),
    ),
    security(("apiKey" = []))
)]
pub async fn evaluate_flag(
    state: web::Data<AppState>,
    access: FrontendAccess,
    request: HttpRequest,
    path: web::Path<String>,
    JsonBytes(body): JsonBytes,
) -> Result<HttpResponse, ApiError> {
    let key = path.into_inner();
    let context = match context_of(&body, Some(&key), &request) {
        Ok(context) => context,
        Err(failed) => return Ok(respond(failed)),
    };
    let compiled = compiled(&state, &access).await?;
    let Some(feature) = compiled.engine.feature(&key) else {
        return Ok(respond(failure(
            StatusCode::NOT_FOUND,
            Some(&key),
            OfrepErrorCode::FlagNotFound,
            format!("flag {key} was not found"),
        )));
    };
    let variant = compiled.engine.variant(&feature.name, &context);
    Ok(HttpResponse::Ok().json(evaluation(feature, &variant)))
}

/// Evaluates every flag of the token's environment and projects for the context, with an
/// `ETag`; `If-None-Match` naming it answers 304.
#[utoipa::path(
    post,
    path = "/ofrep/v1/evaluate/flags",
    tag = "OpenFeature",
    operation_id = "evaluateFlagsBulk",
    params(("If-None-Match" = Option<String>, Header, description = "An `ETag` from an earlier answer")),
    request_body = OfrepRequest,
    responses(
        (status = 200, description = "Every flag's value for the context", body = OfrepBulkEvaluation,
            headers(("ETag" = String, description = "Changes with the answer"))),
        (status = 304, description = "The answer has the `ETag` in `If-None-Match`"),
        (status = 400, description = "`PARSE_ERROR` or `INVALID_CONTEXT`", body = OfrepFailure),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "Not a frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn evaluate_flags(
    state: web::Data<AppState>,
    access: FrontendAccess,
    request: HttpRequest,
    JsonBytes(body): JsonBytes,
) -> Result<HttpResponse, ApiError> {
    let context = match context_of(&body, None, &request) {
        Ok(context) => context,
        Err(failed) => return Ok(respond(failed)),
    };
    let compiled = compiled(&state, &access).await?;
    let flags = compiled
        .features()
        .map(|feature| evaluation(feature, &compiled.engine.variant(&feature.name, &context)))
        .collect();
    let body = serde_json::to_vec(&OfrepBulkEvaluation { flags })
        .map_err(|error| ApiError::Internal(format!("cannot serialise evaluations: {error}")))?;
    let etag = format!("\"{}\"", hex::encode(&Sha256::digest(&body)[..12]));
    if Tagged::<()>::is_current(&request, &etag) {
        return Ok(HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .finish());
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::ETAG, etag))
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .body(body))
}
