//! Segments: list and create.

use flag_store::models::NewSegment;
use flag_store::queries;

use crate::auth::Caller;
use crate::dto::segments::{CreateSegment, CreatedSegmentOut, SegmentOut, SegmentsOut};
use crate::{AdminError, Ctx, db};

/// Every segment.
pub async fn list(ctx: &Ctx) -> Result<SegmentsOut, AdminError> {
    let rows = db::run(&ctx.store, queries::segments::list).await?;
    let segments = rows
        .into_iter()
        .map(SegmentOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(SegmentsOut { segments })
}

/// Creates a segment; its constraints are checked as strategy constraints are.
pub async fn create(
    ctx: &Ctx,
    caller: &Caller,
    request: CreateSegment,
) -> Result<CreatedSegmentOut, AdminError> {
    if request.name.trim().is_empty() {
        return Err(AdminError::invalid("/name", "/name must not be empty"));
    }
    crate::dto::check_constraints(&request.constraints)?;
    let segment = NewSegment::new(
        request.name,
        request.description,
        request.project,
        &request.constraints,
        Some(caller.actor().name),
        crate::now(),
    )?;
    let row = db::write_as(&ctx.store, caller, segment, queries::segments::create).await?;
    Ok(CreatedSegmentOut {
        id: row.id,
        name: row.name,
        description: row.description,
        constraints: request.constraints,
        created_at: crate::dto::iso(row.created_at),
        created_by: row.created_by,
        project: row.project_id,
    })
}
