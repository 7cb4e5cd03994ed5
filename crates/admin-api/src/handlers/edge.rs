//! What Unleash Edge asks of its upstream beyond the client API: token validation and its own
//! instance report. Edge's usage reports arrive at `/api/client/metrics/bulk`
//! ([`super::usage::bulk`]).

use actix_web::web;
use serde::Deserialize;

use crate::AppState;
use crate::auth::{ClientAccess, ValidToken};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Accepted;
use crate::usage::InstanceReport;

/// Edge's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(validate, instance_data))]
pub struct Api;

/// `POST /edge/validate`'s body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ValidateRequest {
    /// Tokens to check.
    pub tokens: Vec<String>,
}

/// `POST /edge/validate`'s answer.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct ValidTokens {
    /// The valid tokens among those asked about, with what they grant.
    pub tokens: Vec<ValidToken>,
}

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
    security(())
)]
pub async fn validate(
    state: web::Data<AppState>,
    Body(request): Body<ValidateRequest>,
) -> Result<web::Json<ValidTokens>, ApiError> {
    Ok(web::Json(ValidTokens {
        tokens: crate::auth::validate_tokens(&state, request.tokens).await?,
    }))
}

/// The part of Edge's instance report this server keeps.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EdgeInstance {
    /// The Edge instance.
    pub identifier: String,
    /// Its application name (`unleash-edge`).
    pub app_name: String,
    /// Its version.
    #[serde(default)]
    pub edge_version: Option<String>,
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
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "An admin or frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn instance_data(
    state: web::Data<AppState>,
    access: ClientAccess,
    Body(instance): Body<EdgeInstance>,
) -> Result<Accepted, ApiError> {
    if instance.identifier.trim().is_empty() || instance.app_name.trim().is_empty() {
        return Err(ApiError::invalid(
            "/identifier",
            "/identifier and /appName must not be empty",
        ));
    }
    state.usage.instance(
        InstanceReport {
            sdk_version: instance
                .edge_version
                .map(|version| format!("unleash-edge:{version}")),
            ..InstanceReport::new(
                instance.app_name,
                instance.identifier,
                access.environment.unwrap_or_else(|| "default".into()),
                access.projects,
                "backend",
            )
        },
        crate::now(),
    )?;
    Ok(Accepted)
}
