//! An edge's backstage, as Unleash Edge answers it: health, readiness with what the edge serves
//! and since when, the tokens it holds (masked) and the flags it holds, for operators and their
//! probes. Served only by `halyard edge` and `halyard offline`, without credentials, as Edge
//! serves it.

use actix_web::{HttpResponse, web};
use flag_admin::app::edge::types::EdgeStatus;
use serde::Serialize;

use crate::error::ApiError;
use crate::state::AppState;

/// `{"status": "OK"}` and the like, as Edge writes its statuses.
#[derive(Debug, Serialize)]
struct Status<'a> {
    status: &'a str,
}

/// Readiness with what the edge serves.
#[derive(Debug, Serialize)]
struct Readiness<'a> {
    status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(flatten)]
    edge: Option<EdgeStatus>,
}

/// `GET /internal-backstage/health`: the process answers.
pub async fn health() -> HttpResponse {
    HttpResponse::Ok().json(Status { status: "OK" })
}

/// `GET /internal-backstage/ready`: 200 `READY` once every scope it follows has flags (from the
/// upstream or its backup), else 503 `NOTREADY`; with the scopes, where their flags come from
/// and since when.
pub async fn ready(state: web::Data<AppState>) -> HttpResponse {
    let status = state.edge.as_ref().map(|edge| edge.status());
    let stopping = state.shutting_down.load(std::sync::atomic::Ordering::SeqCst);
    let ready = !stopping && status.as_ref().is_none_or(|status| status.ready);
    if ready {
        HttpResponse::Ok().json(Readiness {
            status: "READY",
            error: None,
            edge: status,
        })
    } else {
        HttpResponse::ServiceUnavailable().json(Readiness {
            status: "NOTREADY",
            error: Some("Edge is not ready to serve requests"),
            edge: status,
        })
    }
}

/// Edge's token listing.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TokensOut {
    token_validation_status: Vec<flag_admin::app::edge::types::BackstageToken>,
}

/// `GET /internal-backstage/tokens`: the tokens the edge serves, their secrets masked.
pub async fn tokens(state: web::Data<AppState>) -> HttpResponse {
    let tokens = state.edge.as_ref().map(|edge| edge.tokens()).unwrap_or_default();
    HttpResponse::Ok().json(TokensOut {
        token_validation_status: tokens,
    })
}

/// `GET /internal-backstage/features`: the flags the edge holds, by environment (and projects,
/// after a `/`, for a scope of some projects).
pub async fn features(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let mut documents = serde_json::Map::new();
    if let Some(edge) = &state.edge {
        for (scope, document) in edge.documents().await? {
            let key = match &scope.projects {
                None => scope.environment.clone(),
                Some(projects) => format!("{}/{}", scope.environment, projects.join(",")),
            };
            documents.insert(
                key,
                serde_json::to_value(document).unwrap_or(serde_json::Value::Null),
            );
        }
    }
    Ok(HttpResponse::Ok().json(documents))
}
