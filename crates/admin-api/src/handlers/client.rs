//! `GET /api/client/features` and `/api/client/features/{name}`: what Unleash SDKs poll.

use actix_web::http::header::{ETAG, IF_NONE_MATCH};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_eval::{ClientFeatures, Feature, Strategy};
use flag_store::queries::{self, evaluation::ProjectScope};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::auth::ClientAccess;
use crate::error::ApiError;

/// Query string of the client API.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientQuery {
    #[serde(default)]
    environment: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    name_prefix: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StrategyOut<'a> {
    name: &'a str,
    constraints: Value,
    parameters: &'a std::collections::BTreeMap<String, String>,
    variants: &'a [flag_eval::Variant],
    #[serde(skip_serializing_if = "Option::is_none")]
    segments: Option<&'a [i64]>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FeatureOut<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    feature_type: &'a str,
    enabled: bool,
    project: &'a str,
    stale: bool,
    strategies: Vec<StrategyOut<'a>>,
    variants: &'a [flag_eval::Variant],
    description: Option<&'a str>,
    impression_data: bool,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    dependencies: &'a [flag_eval::Dependency],
}

/// Whether the `Unleash-Client-Spec` header asks for segments sent separately (4.2.0 or later).
fn separate_segments(request: &HttpRequest) -> Result<bool, ApiError> {
    let Some(header) = request.headers().get("Unleash-Client-Spec") else {
        return Ok(false);
    };
    let text = header.to_str().unwrap_or_default().trim();
    let version = semver::Version::parse(text.trim_start_matches('v')).map_err(|_| {
        ApiError::bad_request(format!("Unleash-Client-Spec {text:?} is not a semantic version"))
    })?;
    Ok(version >= semver::Version::new(4, 2, 0))
}

fn feature_out<'a>(feature: &'a Feature, document: &'a ClientFeatures, separate: bool) -> FeatureOut<'a> {
    let strategy_out = |strategy: &'a Strategy| {
        let mut constraints = serde_json::to_value(&strategy.constraints).unwrap_or_else(|_| json!([]));
        if !separate && let Value::Array(list) = &mut constraints {
            for id in &strategy.segments {
                if let Some(segment) = document.segments.iter().find(|segment| segment.id == *id) {
                    list.extend(
                        segment
                            .constraints
                            .iter()
                            .filter_map(|c| serde_json::to_value(c).ok()),
                    );
                }
            }
        }
        StrategyOut {
            name: &strategy.name,
            constraints,
            parameters: &strategy.parameters,
            variants: &strategy.variants,
            segments: separate.then_some(strategy.segments.as_slice()),
        }
    };
    FeatureOut {
        name: &feature.name,
        feature_type: feature.feature_type.as_deref().unwrap_or("release"),
        enabled: feature.enabled,
        project: feature.project.as_deref().unwrap_or("default"),
        stale: feature.stale.unwrap_or(false),
        strategies: feature.strategies.iter().map(strategy_out).collect(),
        variants: &feature.variants,
        description: feature.description.as_deref(),
        impression_data: feature.impression_data.unwrap_or(false),
        dependencies: &feature.dependencies,
    }
}

/// `GET /api/client/features`.
pub async fn features(
    state: web::Data<AppState>,
    access: ClientAccess,
    request: HttpRequest,
    query: web::Query<ClientQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let separate = separate_segments(&request)?;
    let environment = access
        .environment
        .clone()
        .or(query.environment.clone())
        .unwrap_or_else(|| "development".into());
    let projects: Option<Vec<String>> = access
        .projects
        .clone()
        .or_else(|| query.project.clone().map(|p| vec![p]));
    let query_json = json!({
        "environment": environment,
        "project": projects,
        "namePrefix": query.name_prefix,
        "inlineSegmentConstraints": !separate,
    });
    let query_hash = hex::encode(&Sha256::digest(query_json.to_string().as_bytes())[..8]);
    let scope_projects = projects.clone();
    let scope_environment = environment.clone();
    let (document, revision) = crate::db::run(&state.store, move |conn| {
        let revision = queries::events::latest_id(conn)?;
        let scope = match &scope_projects {
            Some(projects) => ProjectScope::Only(projects),
            None => ProjectScope::All,
        };
        Ok((
            queries::evaluation::client_features(conn, scope, &scope_environment)?,
            revision,
        ))
    })
    .await?;
    let etag = format!("\"{query_hash}:{revision}:v1\"");
    let matches = request
        .headers()
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|tag| tag.trim() == etag));
    if matches {
        return Ok(HttpResponse::NotModified().insert_header((ETAG, etag)).finish());
    }
    let prefix = query.name_prefix.unwrap_or_default();
    let features: Vec<FeatureOut<'_>> = document
        .features
        .iter()
        .filter(|feature| feature.name.starts_with(&prefix))
        .map(|feature| feature_out(feature, &document, separate))
        .collect();
    let mut body = json!({
        "version": 2,
        "features": features,
        "query": query_json,
        "meta": {"revisionId": revision, "etag": etag, "queryHash": query_hash},
    });
    if separate {
        body["segments"] = serde_json::to_value(&document.segments)
            .map_err(|error| ApiError::Internal(error.to_string()))?;
    }
    Ok(HttpResponse::Ok().insert_header((ETAG, etag)).json(body))
}

/// `GET /api/client/features/{featureName}`.
pub async fn feature(
    state: web::Data<AppState>,
    access: ClientAccess,
    request: HttpRequest,
    path: web::Path<String>,
    query: web::Query<ClientQuery>,
) -> Result<HttpResponse, ApiError> {
    let name = path.into_inner();
    let separate = separate_segments(&request)?;
    let environment = access
        .environment
        .clone()
        .or(query.into_inner().environment)
        .unwrap_or_else(|| "development".into());
    let projects = access.projects.clone();
    let document = crate::db::run(&state.store, move |conn| {
        let scope = match &projects {
            Some(projects) => ProjectScope::Only(projects),
            None => ProjectScope::All,
        };
        queries::evaluation::client_features(conn, scope, &environment)
    })
    .await?;
    let feature = document
        .features
        .iter()
        .find(|feature| feature.name == name)
        .ok_or_else(|| ApiError::NotFound(format!("could not find feature flag {name}")))?;
    Ok(HttpResponse::Ok().json(feature_out(feature, &document, separate)))
}
