//! Segments: list and create.

use actix_web::web;
use flag_admin::dto::segments::{CreateSegment, CreatedSegmentOut, SegmentsOut};
use flag_admin::segments;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Created;
use crate::state::AppState;

/// Every segment.
#[utoipa::path(
    get,
    path = "/api/admin/segments",
    tag = "Segments",
    operation_id = "getSegments",
    responses(
        (status = 200, description = "The segments", body = SegmentsOut),
    ),
)]
pub async fn list(state: web::Data<AppState>, _caller: Admitted) -> Result<web::Json<SegmentsOut>, ApiError> {
    Ok(web::Json(segments::list(&state.app).await?))
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
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(request): Body<CreateSegment>,
) -> Result<Created<CreatedSegmentOut>, ApiError> {
    let segment = segments::create(&state.app, &caller, request).await?;
    Ok(Created::at(format!("segments/{}", segment.id), segment))
}
