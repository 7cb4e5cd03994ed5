//! A feature's read with its environments, and segment creation, until they move to their own
//! resource modules.

use actix_web::{HttpResponse, web};
use chrono::Utc;
use flag_eval::Constraint;
use flag_store::models::NewSegment;
use flag_store::queries;
use serde::Deserialize;
use serde_json::json;

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{self, iso};
use crate::error::ApiError;
use crate::extract::Body;

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
    let mut out = serde_json::to_value(crate::dto::features::FeatureOut::from(row))
        .map_err(|error| ApiError::Internal(error.to_string()))?;
    out["environments"] = json!(environments);
    Ok(HttpResponse::Ok().json(out))
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
