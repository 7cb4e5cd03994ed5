//! Request handlers, one module per resource.

pub mod addons;
pub mod applications;
pub mod archive;
pub mod backstage;
pub mod change_requests;
pub mod client;
pub mod context;
pub mod dependencies;
pub mod edge;
pub mod environments;
pub mod events;
pub mod export;
pub mod flags;
pub mod frontend;
pub mod invite;
pub mod lifecycle;
pub mod me;
pub mod ofrep;
pub mod playground;
pub mod projects;
pub mod search;
pub mod segments;
pub mod session;
pub mod sso;
pub mod strategies;
pub mod strategy_types;
pub mod tags;
pub mod teams;
pub mod tokens;
pub mod usage;
pub mod users;
pub mod variants;

use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::ApiError;
use crate::respond::Text;
use crate::state::AppState;
use flag_admin::runtime::health::types::HealthResponse;

/// Any path no route matches: 404 `NotFoundError`.
pub async fn not_found(request: HttpRequest) -> Result<HttpResponse, ApiError> {
    // The path is not echoed: it may carry a secret, such as an invite token.
    Err(
        flag_admin::AdminError::NotFound(format!("no route matches this {} request", request.method()))
            .into(),
    )
}

/// A known path with a method it does not serve: 405.
pub async fn method_not_allowed() -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed)
}

/// The process is up.
#[utoipa::path(
    get,
    path = "/health",
    tag = "Operations",
    operation_id = "getHealth",
    responses(
        (status = 200, description = "The process is up", body = HealthResponse),
    )
)]
pub async fn health() -> web::Json<HealthResponse> {
    web::Json(HealthResponse::GOOD)
}

/// The database answers.
///
/// 503 when it does not, or once shutdown has begun, so that traffic drains away.
#[utoipa::path(
    get,
    path = "/ready",
    tag = "Operations",
    operation_id = "getReady",
    responses(
        (status = 200, description = "The database answers and the server is not shutting down", body = HealthResponse),
    )
)]
pub async fn ready(state: web::Data<AppState>) -> Result<web::Json<HealthResponse>, ApiError> {
    if state.shutting_down.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(flag_admin::AdminError::Unavailable.into());
    }
    flag_admin::runtime::health::ready(&state.app).await?;
    Ok(web::Json(HealthResponse::GOOD))
}

/// Prometheus's text exposition format, version 0.0.4.
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4";

/// Request metrics in Prometheus's text format, by route pattern.
///
/// Labels never carry a raw path, so a secret in a path cannot reach them.
#[utoipa::path(
    get,
    path = "/internal-backstage/prometheus",
    tag = "Operations",
    operation_id = "getPrometheusMetrics",
    responses(
        (status = 200, description = "Request metrics in Prometheus's text format, by route pattern", body = String, content_type = "text/plain; version=0.0.4"),
    )
)]
pub async fn prometheus(state: web::Data<AppState>) -> Text {
    Text::new(PROMETHEUS_TEXT, state.metrics.render(&state.app))
}
