//! Segments: list and create.

use actix_web::web;
use flag_admin::catalogue::segments;
use flag_admin::catalogue::segments::types::{
    CreateSegment, CreatedSegmentOut, NameIn, SegmentDetailOut, SegmentStrategiesOut, SegmentsOut,
    StrategySegmentsOut,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, NoContent};
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
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateSegment>,
) -> Result<Created<CreatedSegmentOut>, ApiError> {
    let segment = segments::create(&state.app, &caller, request).await?;
    Ok(Created::at(format!("segments/{}", segment.id), segment))
}

/// One segment.
#[utoipa::path(
    get,
    path = "/api/admin/segments/{id}",
    tag = "Segments",
    operation_id = "getSegment",
    params(
        ("id" = i32, Path, description = "The segment"),
    ),
    responses(
        (status = 200, description = "The segment", body = SegmentDetailOut),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such segment", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<SegmentDetailOut>, ApiError> {
    Ok(web::Json(segments::get(&state.app, path.into_inner()).await?))
}

/// Replaces a segment's name, description, project and constraints.
#[utoipa::path(
    put,
    path = "/api/admin/segments/{id}",
    tag = "Segments",
    operation_id = "updateSegment",
    params(
        ("id" = i32, Path, description = "The segment"),
    ),
    request_body = CreateSegment,
    responses(
        (status = 204, description = "Replaced; no body"),
        (status = 400, description = "The body breaks the schema, a constraint is not valid, or strategies of other projects use it", body = ErrorBody),
        (status = 404, description = "No such segment", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<CreateSegment>,
) -> Result<NoContent, ApiError> {
    segments::update(&state.app, &caller, path.into_inner(), request).await?;
    Ok(NoContent)
}

/// Deletes a segment that no strategy of a live flag uses.
#[utoipa::path(
    delete,
    path = "/api/admin/segments/{id}",
    tag = "Segments",
    operation_id = "removeSegment",
    params(
        ("id" = i32, Path, description = "The segment"),
    ),
    responses(
        (status = 204, description = "Deleted; no body"),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such segment", body = ErrorBody),
        (status = 409, description = "Strategies use it", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
) -> Result<NoContent, ApiError> {
    segments::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(NoContent)
}

/// The strategies of live flags that use a segment.
#[utoipa::path(
    get,
    path = "/api/admin/segments/{id}/strategies",
    tag = "Segments",
    operation_id = "getStrategiesBySegmentId",
    params(
        ("id" = i32, Path, description = "The segment"),
    ),
    responses(
        (status = 200, description = "The strategies", body = SegmentStrategiesOut),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such segment", body = ErrorBody),
    ),
)]
pub async fn strategies(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<SegmentStrategiesOut>, ApiError> {
    Ok(web::Json(
        segments::strategies(&state.app, path.into_inner()).await?,
    ))
}

/// The segments a strategy uses.
#[utoipa::path(
    get,
    path = "/api/admin/segments/strategies/{strategyId}",
    tag = "Segments",
    operation_id = "getSegmentsByStrategyId",
    params(
        ("strategyId" = String, Path, description = "The strategy"),
    ),
    responses(
        (status = 200, description = "The segments; none for an unknown strategy", body = StrategySegmentsOut),
    ),
)]
pub async fn of_strategy(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<StrategySegmentsOut>, ApiError> {
    Ok(web::Json(
        segments::of_strategy(&state.app, path.into_inner()).await?,
    ))
}

/// Checks that a segment could have this name.
#[utoipa::path(
    post,
    path = "/api/admin/segments/validate",
    tag = "Segments",
    operation_id = "validateSegment",
    request_body = NameIn,
    responses(
        (status = 204, description = "It could; no body"),
        (status = 400, description = "The name is empty", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn validate(
    state: web::Data<AppState>,
    _caller: Admitted,
    ObjectBody(request): ObjectBody<NameIn>,
) -> Result<NoContent, ApiError> {
    segments::validate_name(&state.app, request).await?;
    Ok(NoContent)
}
