//! Segments: list and create.

use actix_web::web;
use flag_store::models::NewSegment;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::Permission;
use crate::dto::segments::{CreateSegment, CreatedSegmentOut, SegmentOut, SegmentsOut};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Created;

/// The segments' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create))]
pub struct Api;

/// Every segment.
#[utoipa::path(
    get,
    path = "/api/admin/segments",
    tag = "Segments",
    operation_id = "getSegments",
    responses(
        (status = 200, description = "The segments", body = SegmentsOut),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<web::Json<SegmentsOut>, ApiError> {
    let rows = crate::db::run(&state.store, queries::segments::list).await?;
    let segments = rows
        .into_iter()
        .map(SegmentOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(web::Json(SegmentsOut { segments }))
}

/// Creates a segment; its constraints are checked as strategy constraints are.
#[utoipa::path(
    post,
    path = "/api/admin/segments",
    tag = "Segments",
    operation_id = "createSegment",
    request_body = CreateSegment,
    responses(
        (status = 201, description = "The segment", body = CreatedSegmentOut, headers(("Location" = String, description = "segments/{id}"))),
        (status = 400, description = "The body breaks the schema, a constraint is not valid, or a value is not a legal value of its context field", body = ErrorBody),
        (status = 403, description = "Not allowed, or a token limited to some environments", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateSegment>,
) -> Result<Created<CreatedSegmentOut>, ApiError> {
    principal.require_write(Permission::CreateSegment, None)?;
    if request.name.trim().is_empty() {
        return Err(ApiError::invalid("/name", "/name must not be empty"));
    }
    crate::dto::check_constraints(&request.constraints)?;
    let segment = NewSegment {
        name: request.name,
        description: request.description,
        project_id: request.project,
        constraints: serde_json::to_string(&request.constraints)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        created_by: Some(principal.actor().to_owned()),
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::segments::create(conn, &segment, &actor)
    })
    .await?;
    Ok(Created::at(
        format!("segments/{}", row.id),
        CreatedSegmentOut {
            id: row.id,
            name: row.name,
            description: row.description,
            constraints: request.constraints,
            created_at: crate::dto::iso(row.created_at),
            created_by: row.created_by,
            project: row.project_id,
        },
    ))
}
