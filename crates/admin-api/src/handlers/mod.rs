//! Request handlers, one module per resource.

pub mod client;
pub mod context;
pub mod dependencies;
pub mod environments;
pub mod flags;
pub mod invite;
pub mod playground;
pub mod projects;
pub mod segments;
pub mod session;
pub mod strategies;
pub mod strategy_types;
pub mod tokens;
pub mod users;
pub mod variants;

use actix_web::{HttpRequest, HttpResponse, web};

use crate::AppState;
use crate::error::ApiError;

/// Any path no route matches: 404 `NotFoundError`.
pub async fn not_found(request: HttpRequest) -> Result<HttpResponse, ApiError> {
    // The path is not echoed: it may carry a secret, such as an invite token.
    Err(ApiError::NotFound(format!(
        "no route matches this {} request",
        request.method()
    )))
}

/// A known path with a method it does not serve: 405.
pub async fn method_not_allowed() -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed)
}

/// `GET /health`: the process is up.
pub async fn health() -> HttpResponse {
    HttpResponse::Ok().json(serde_json::json!({"health": "GOOD"}))
}

/// `GET /ready`: the database answers and the server is not shutting down; 503 otherwise.
pub async fn ready(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    if state.shutting_down.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(ApiError::Unavailable);
    }
    crate::db::run(&state.store, |conn| {
        flag_store::queries::environments::list(conn).map(drop)
    })
    .await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({"health": "GOOD"})))
}

/// `GET /internal-backstage/prometheus`: request metrics in Prometheus's text format.
pub async fn prometheus(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(state.metrics.render())
}
