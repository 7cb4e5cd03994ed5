//! OpenFeature's Remote Evaluation Protocol (OFREP) over HTTP: OFREP's own failure shapes and
//! statuses, and the bulk evaluation's `ETag`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::delivery::ofrep::types::{OfrepBulkEvaluation, OfrepEvaluation, OfrepFailure, OfrepRequest};
use flag_admin::delivery::ofrep::{self, Failure};

use crate::auth::FrontendToken;
use crate::error::ApiError;
use crate::extract::{JsonBytes, client_address};
use crate::respond::{Tagged, strong_etag};
use crate::state::AppState;

/// The answer to a failure: OFREP's shape and status, or the error envelope for a fault.
fn refuse(failure: Failure) -> Result<HttpResponse, ApiError> {
    match failure {
        Failure::Invalid(failure) => Ok(HttpResponse::BadRequest().json(failure)),
        Failure::NotFound(failure) => Ok(HttpResponse::build(StatusCode::NOT_FOUND).json(failure)),
        Failure::Internal(error) => Err(error.into()),
    }
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
        (status = 404, description = "`FLAG_NOT_FOUND`: no such flag in the token's environment and projects", body = OfrepFailure),
    ),
)]
pub async fn evaluate_flag(
    state: web::Data<AppState>,
    FrontendToken(access): FrontendToken,
    request: HttpRequest,
    path: web::Path<String>,
    JsonBytes(body): JsonBytes,
) -> Result<HttpResponse, ApiError> {
    let key = path.into_inner();
    match ofrep::evaluate_flag(
        &state.app,
        state.app.delivery(),
        &access,
        &key,
        &body,
        client_address(&request),
    )
    .await
    {
        Ok(evaluation) => Ok(HttpResponse::Ok().json(evaluation)),
        Err(failure) => refuse(failure),
    }
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
    ),
)]
pub async fn evaluate_flags(
    state: web::Data<AppState>,
    FrontendToken(access): FrontendToken,
    request: HttpRequest,
    JsonBytes(body): JsonBytes,
) -> Result<HttpResponse, ApiError> {
    let body = match ofrep::evaluate_flags(
        &state.app,
        state.app.delivery(),
        &access,
        &body,
        client_address(&request),
    )
    .await
    {
        Ok(answer) => answer,
        Err(failure) => return refuse(failure),
    };
    let etag = strong_etag(&body);
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
