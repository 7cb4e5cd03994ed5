//! One log line and one metrics observation per request, by route pattern.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::web;

use crate::state::AppState;

/// Logs one line per request: method, route pattern, status and duration. Never the path or the
/// query string, which can carry secrets (an invite token in `/invite/{token}/signup`).
pub async fn log_request(
    request: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = request.method().clone();
    let response = next.call(request).await?;
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "(unmatched)".into());
    let status = response.status().as_u16();
    let elapsed = started.elapsed().as_secs_f64();
    if let Some(state) = response.request().app_data::<web::Data<AppState>>() {
        state.metrics.observe(method.as_str(), &route, status, elapsed);
    }
    let elapsed_ms = elapsed * 1000.0;
    tracing::info!(%method, %route, status, elapsed_ms, "{method} {route} {status} in {elapsed_ms:.1} ms");
    Ok(response)
}
