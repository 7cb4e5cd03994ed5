//! The admin API around the documented operations: environments, projects, features, their
//! switches, strategies and segments, at Unleash's paths.

use std::collections::BTreeMap;

use actix_web::{HttpResponse, web};
use chrono::Utc;
use flag_eval::{Constraint, Variant};
use flag_store::models::{FeatureRow, NewSegment};
use flag_store::queries::{self, strategies::StrategyInput};
use serde::Deserialize;
use serde_json::json;

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{self, iso};
use crate::error::ApiError;
use crate::extract::Body;

const FEATURE_TYPES: [&str; 6] = [
    "release",
    "experiment",
    "operational",
    "kill-switch",
    "permission",
    "sunset",
];

/// `GET /api/admin/environments`.
pub async fn environments(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<HttpResponse, ApiError> {
    let rows = crate::db::run(&state.store, queries::environments::list).await?;
    let environments: Vec<_> = rows
        .iter()
        .map(|row| json!({"name": row.name, "type": row.environment_type, "enabled": row.enabled, "sortOrder": row.sort_order, "protected": false}))
        .collect();
    Ok(HttpResponse::Ok().json(json!({"version": 1, "environments": environments})))
}

/// `GET /api/admin/projects`.
pub async fn projects(state: web::Data<AppState>, _principal: Principal) -> Result<HttpResponse, ApiError> {
    let rows = crate::db::run(&state.store, queries::projects::list).await?;
    let projects: Vec<_> = rows
        .iter()
        .map(|row| json!({"id": row.id, "name": row.name, "description": row.description, "createdAt": iso(row.created_at)}))
        .collect();
    Ok(HttpResponse::Ok().json(json!({"version": 1, "projects": projects})))
}

/// Body of `POST /api/admin/projects/{projectId}/features`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateFeatureRequest {
    name: String,
    #[serde(default, rename = "type")]
    feature_type: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    impression_data: bool,
}

fn feature_json(row: &FeatureRow) -> serde_json::Value {
    json!({
        "name": row.name,
        "type": row.feature_type,
        "description": row.description,
        "project": row.project_id,
        "stale": row.stale,
        "impressionData": row.impression_data,
        "archived": row.archived_at.is_some(),
        "createdAt": iso(row.created_at),
    })
}

/// `POST /api/admin/projects/{projectId}/features`: 201 with the feature.
pub async fn create_feature(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
    Body(request): Body<CreateFeatureRequest>,
) -> Result<HttpResponse, ApiError> {
    principal.require_write("CREATE_FEATURE", None)?;
    let name = request.name.trim().to_owned();
    let url_friendly = !name.is_empty()
        && name.chars().count() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
        && name != "."
        && name != "..";
    if !url_friendly {
        return Err(ApiError::invalid(
            "/name",
            "/name must be 1 to 100 URL-friendly characters",
        ));
    }
    let feature_type = request.feature_type.unwrap_or_else(|| "release".into());
    if !FEATURE_TYPES.contains(&feature_type.as_str()) {
        return Err(ApiError::invalid(
            "/type",
            format!("/type must be one of {}", FEATURE_TYPES.join(", ")),
        ));
    }
    let row = FeatureRow {
        name,
        project_id: path.into_inner(),
        feature_type,
        description: request.description,
        impression_data: request.impression_data,
        stale: false,
        archived_at: None,
        created_at: Utc::now().naive_utc(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::features::create(conn, &row, &actor)
    })
    .await?;
    Ok(HttpResponse::Created().json(feature_json(&row)))
}

/// `GET /api/admin/projects/{projectId}/features`.
pub async fn list_features(
    state: web::Data<AppState>,
    _principal: Principal,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let project = path.into_inner();
    let rows = crate::db::run(&state.store, move |conn| {
        queries::projects::get(conn, &project)?;
        queries::features::list(conn, &project)
    })
    .await?;
    let features: Vec<_> = rows.iter().map(feature_json).collect();
    Ok(HttpResponse::Ok().json(json!({"version": 1, "features": features})))
}

/// `GET /api/admin/projects/{projectId}/features/{featureName}`: the feature with its state,
/// strategies and variants in each environment of its project that the caller may read.
pub async fn get_feature(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (project, name) = path.into_inner();
    let (row, environments) = crate::db::run(&state.store, move |conn| {
        let row = queries::features::get(conn, &project, &name)?;
        let mut environments = Vec::new();
        let readable = queries::features::environments_of(conn, &name)?
            .into_iter()
            .filter(|state| principal.may_read(&state.environment_name));
        for state in readable {
            let strategies = queries::strategies::list(conn, &name, &state.environment_name)?;
            let variants = state.variants()?;
            environments.push(json!({
                "name": state.environment_name,
                "enabled": state.enabled,
                "strategies": strategies,
                "variants": variants,
            }));
        }
        Ok((row, environments))
    })
    .await?;
    let mut out = feature_json(&row);
    out["environments"] = json!(environments);
    Ok(HttpResponse::Ok().json(out))
}

/// `POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on`
/// and `/off`: 200 with an empty body.
pub async fn switch(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (project, feature, environment, state_name) = path.into_inner();
    let enabled = match state_name.as_str() {
        "on" => true,
        "off" => false,
        _ => return Err(ApiError::NotFound(format!("no route for {state_name}"))),
    };
    principal.require_write("UPDATE_FEATURE_ENVIRONMENT", Some(&environment))?;
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    crate::db::run(&state.store, move |conn| {
        queries::features::set_enabled(conn, &project, &feature, &environment, enabled, &actor, now)
    })
    .await?;
    Ok(HttpResponse::Ok().finish())
}

/// Body of the strategy routes.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StrategyRequest {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    disabled: Option<bool>,
    #[serde(default)]
    sort_order: Option<i32>,
    #[serde(default)]
    parameters: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    constraints: Vec<Constraint>,
    #[serde(default)]
    segments: Vec<i32>,
    #[serde(default)]
    variants: Vec<Variant>,
}

impl StrategyRequest {
    /// Checks the definition with flag-eval's strict validation and fills Unleash's defaults.
    fn into_input(self, feature: &str) -> Result<StrategyInput, ApiError> {
        dto::check_constraints(&self.constraints)?;
        let mut parameters: BTreeMap<String, String> = self
            .parameters
            .into_iter()
            .map(|(key, value)| {
                let text = match value {
                    serde_json::Value::String(text) => text,
                    other => other.to_string(),
                };
                (key, text)
            })
            .collect();
        if self.name == "flexibleRollout" {
            parameters.entry("rollout".into()).or_insert_with(|| "100".into());
            parameters
                .entry("stickiness".into())
                .or_insert_with(|| "default".into());
            parameters
                .entry("groupId".into())
                .or_insert_with(|| feature.to_owned());
        }
        let mut variants = self.variants;
        flag_eval::fix_variant_weights(&mut variants)
            .map_err(|error| ApiError::invalid("/variants", error.to_string()))?;
        let strategy = flag_eval::Strategy {
            name: self.name.clone(),
            parameters: parameters.clone(),
            constraints: self.constraints.clone(),
            variants: variants.clone(),
            ..flag_eval::Strategy::default()
        };
        let probe = flag_eval::Feature {
            name: feature.to_owned(),
            strategies: vec![strategy],
            ..flag_eval::Feature::default()
        };
        flag_eval::validate(&probe, &[]).or_else(|error| match error {
            // Segments are checked by the store, which knows them.
            flag_eval::ValidationError::UnknownSegment { .. } => Ok(()),
            other => Err(ApiError::invalid("/", other.to_string())),
        })?;
        Ok(StrategyInput {
            name: self.name,
            title: self.title,
            disabled: self.disabled.unwrap_or(false),
            sort_order: self.sort_order,
            parameters,
            constraints: self.constraints,
            segments: self.segments,
            variants,
        })
    }
}

/// `POST .../features/{featureName}/environments/{environment}/strategies`.
pub async fn add_strategy(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
    Body(request): Body<StrategyRequest>,
) -> Result<HttpResponse, ApiError> {
    let (project, feature, environment) = path.into_inner();
    principal.require_write("CREATE_FEATURE_STRATEGY", Some(&environment))?;
    let input = request.into_input(&feature)?;
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    let strategy = crate::db::run(&state.store, move |conn| {
        queries::strategies::add(conn, &project, &feature, &environment, &input, &actor, now)
    })
    .await?;
    Ok(HttpResponse::Ok().json(strategy))
}

/// `PUT .../strategies/{strategyId}`.
pub async fn update_strategy(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String, String)>,
    Body(request): Body<StrategyRequest>,
) -> Result<HttpResponse, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    principal.require_write("UPDATE_FEATURE_STRATEGY", Some(&environment))?;
    let input = request.into_input(&feature)?;
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    let strategy = crate::db::run(&state.store, move |conn| {
        queries::strategies::update(conn, &project, &feature, &environment, &id, &input, &actor, now)
    })
    .await?;
    Ok(HttpResponse::Ok().json(strategy))
}

/// `DELETE .../strategies/{strategyId}`.
pub async fn delete_strategy(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (project, feature, environment, id) = path.into_inner();
    principal.require_write("DELETE_FEATURE_STRATEGY", Some(&environment))?;
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    crate::db::run(&state.store, move |conn| {
        queries::strategies::delete(conn, &project, &feature, &environment, &id, &actor, now)
    })
    .await?;
    Ok(HttpResponse::Ok().finish())
}

/// Body of `POST /api/admin/segments`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SegmentRequest {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    constraints: Vec<Constraint>,
}

/// `POST /api/admin/segments`: 201 with the segment.
pub async fn create_segment(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<SegmentRequest>,
) -> Result<HttpResponse, ApiError> {
    principal.require_write("CREATE_SEGMENT", None)?;
    if request.name.trim().is_empty() {
        return Err(ApiError::invalid("/name", "/name must not be empty"));
    }
    dto::check_constraints(&request.constraints)?;
    let segment = NewSegment {
        name: request.name,
        description: request.description,
        project_id: request.project,
        constraints: serde_json::to_string(&request.constraints)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        created_by: Some(principal.actor().to_owned()),
        created_at: Utc::now().naive_utc(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::segments::create(conn, &segment, &actor)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header((actix_web::http::header::LOCATION, format!("segments/{}", row.id)))
        .json(json!({
            "id": row.id,
            "name": row.name,
            "description": row.description,
            "constraints": request.constraints,
            "createdAt": iso(row.created_at),
            "createdBy": row.created_by,
            "project": row.project_id,
        })))
}
