//! The admin API around the documented operations: environments, projects, features, their
//! switches, strategies and segments, at Unleash's paths.

use actix_web::{HttpResponse, web};
use chrono::Utc;
use flag_eval::{Constraint, Variant};
use flag_store::models::{FeatureRow, NewSegment};
use flag_store::queries;
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
            let variants: Vec<Variant> = serde_json::from_str(&state.variants).unwrap_or_default();
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

/// `POST /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on`:
/// 200 with an empty body.
pub async fn switch_on(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
) -> Result<HttpResponse, ApiError> {
    switch(&state, &principal, path.into_inner(), true).await
}

/// `POST .../environments/{environment}/off`: 200 with an empty body.
pub async fn switch_off(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
) -> Result<HttpResponse, ApiError> {
    switch(&state, &principal, path.into_inner(), false).await
}

async fn switch(
    state: &AppState,
    principal: &Principal,
    (project, feature, environment): (String, String, String),
    enabled: bool,
) -> Result<HttpResponse, ApiError> {
    principal.require_write("UPDATE_FEATURE_ENVIRONMENT", Some(&environment))?;
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    crate::db::run(&state.store, move |conn| {
        queries::features::set_enabled(conn, &project, &feature, &environment, enabled, &actor, now)
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
