//! What Unleash Edge asks of its upstream beyond the client API: token validation and its own
//! instance report. Edge's usage reports arrive at `/api/client/metrics/bulk`
//! ([`super::usage::bulk`]).

use actix_web::web;
use flag_admin::delivery::reports;
use flag_admin::delivery::reports::types::{EdgeInstance, ValidTokens, ValidateRequest};

use crate::auth::ClientToken;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
use crate::respond::Accepted;
use crate::state::AppState;

/// Which of the tokens are valid, with their type, environment and projects. Like Unleash,
/// it needs no credential of its own: Edge calls it to learn which tokens to trust.
#[utoipa::path(
    post,
    path = "/edge/validate",
    tag = "Edge",
    operation_id = "getValidTokens",
    request_body = ValidateRequest,
    responses(
        (status = 200, description = "The valid tokens; unknown and expired ones are left out", body = ValidTokens),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 413, description = "The body is larger than the limit", body = ErrorBody),
    ),
)]
pub async fn validate(
    state: web::Data<AppState>,
    ObjectBody(request): ObjectBody<ValidateRequest>,
) -> Result<web::Json<ValidTokens>, ApiError> {
    // An edge asked by another edge first learns of the tokens it does not hold from its own
    // upstream.
    if let Some(edge) = &state.edge {
        edge.admit_all(&request.tokens).await?;
    }
    Ok(web::Json(ValidTokens {
        tokens: flag_admin::identity::auth::validate_tokens(&state.app, state.app.identity(), request.tokens)
            .await?,
    }))
}

/// Edge's report about itself, sent every minute: recorded as an instance of its application
/// in the token's environment.
#[utoipa::path(
    post,
    path = "/api/client/metrics/edge",
    tag = "Edge",
    operation_id = "edgeInstanceData",
    request_body = EdgeInstance,
    responses(
        (status = 202, description = "Taken; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn instance_data(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    Body(instance): Body<EdgeInstance>,
) -> Result<Accepted, ApiError> {
    reports::edge_instance(state.app.delivery(), access, instance)?;
    Ok(Accepted)
}
