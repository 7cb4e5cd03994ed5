//! What SDKs register and report: each handler hands the report to the application
//! (`flag_admin::delivery::reports`), which checks it and adds it to the usage pipeline.

use actix_web::{HttpRequest, web};
use flag_admin::delivery::reports;
use flag_admin::delivery::usage::types::{BulkReport, MetricsReport, Registration};

use crate::auth::{ClientToken, FrontendToken};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, client_address};
use crate::respond::{Accepted, Text};
use crate::state::AppState;

/// Registers an SDK instance.
#[utoipa::path(
    post,
    path = "/api/client/register",
    tag = "Client",
    operation_id = "registerClientApplication",
    request_body = Registration,
    responses(
        (status = 202, description = "Registered; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn register(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    Body(registration): Body<Registration>,
) -> Result<Accepted, ApiError> {
    reports::register(
        state.app.delivery(),
        access,
        client_address(&request),
        registration,
    )?;
    Ok(Accepted)
}

/// Takes an SDK's usage counts, filed under the token's environment and the hour of the
/// bucket's end. Counts for flags outside the token's projects are dropped.
#[utoipa::path(
    post,
    path = "/api/client/metrics",
    tag = "Client",
    operation_id = "registerClientMetrics",
    request_body = MetricsReport,
    responses(
        (status = 202, description = "Taken; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn metrics(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    Body(report): Body<MetricsReport>,
) -> Result<Accepted, ApiError> {
    reports::metrics(state.app.delivery(), access, client_address(&request), report)?;
    Ok(Accepted)
}

/// Takes Unleash Edge's report: the applications behind it and their counts. Counts for
/// another environment than the token's, or for flags outside its projects, are dropped.
#[utoipa::path(
    post,
    path = "/api/client/metrics/bulk",
    tag = "Client",
    operation_id = "clientBulkMetrics",
    request_body = BulkReport,
    responses(
        (status = 202, description = "Taken; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 413, description = "The body is larger than the limit", body = ErrorBody),
    ),
)]
pub async fn bulk(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    Body(report): Body<BulkReport>,
) -> Result<Accepted, ApiError> {
    reports::bulk(state.app.delivery(), access, report)?;
    Ok(Accepted)
}

/// A frontend SDK's registration: checked and answered as Unleash answers it; frontend
/// instances are recorded from their metrics.
#[utoipa::path(
    post,
    path = "/api/frontend/client/register",
    tag = "Frontend API",
    operation_id = "registerFrontendClient",
    request_body = Registration,
    responses(
        (status = 200, description = "Taken; the body is `OK`", body = String, content_type = "text/plain"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn frontend_register(
    _access: FrontendToken,
    Body(registration): Body<Registration>,
) -> Result<Text, ApiError> {
    reports::frontend_register(&registration)?;
    Ok(Text::new("text/plain; charset=utf-8", "OK".into()))
}

/// A frontend SDK's usage counts, filed under the token's environment. The instance is
/// recorded when the report names it and the request carries an `Unleash-Sdk` header.
#[utoipa::path(
    post,
    path = "/api/frontend/client/metrics",
    tag = "Frontend API",
    operation_id = "registerFrontendClientMetrics",
    request_body = MetricsReport,
    responses(
        (status = 200, description = "Taken; the body is `OK`", body = String, content_type = "text/plain"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn frontend_metrics(
    state: web::Data<AppState>,
    FrontendToken(access): FrontendToken,
    request: HttpRequest,
    Body(report): Body<MetricsReport>,
) -> Result<Text, ApiError> {
    // A header that is not visible ASCII is refused as a name with control characters is.
    let sdk = match request.headers().get("Unleash-Sdk") {
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| ApiError::invalid("Unleash-Sdk", "Unleash-Sdk must be visible ASCII"))?,
        ),
        None => None,
    };
    reports::frontend_metrics(state.app.delivery(), access, sdk, report)?;
    Ok(Text::new("text/plain; charset=utf-8", "OK".into()))
}
