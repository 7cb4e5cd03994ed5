//! Segments: list and create.

pub mod types;

use flag_store::models::NewSegment;
use flag_store::queries;

use crate::catalogue::segments::types::{
    CreateSegment, CreatedSegmentOut, NameIn, SegmentDetailOut, SegmentOut, SegmentStrategiesOut,
    SegmentsOut, StrategySegmentsOut, StrategyUseOut,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may list the segments.
pub const LIST: Access = Access::Read;

/// Every segment.
pub async fn list(ctx: &Runtime) -> Result<SegmentsOut, AdminError> {
    let rows = db::run(&ctx.store, queries::segments::list_with_usage).await?;
    let segments = rows
        .into_iter()
        .map(SegmentOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(SegmentsOut { segments })
}

/// Who may create a segment.
pub const CREATE: Access = Access::Write(Permission::CreateSegment);

/// Creates a segment; its constraints are checked as strategy constraints are.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateSegment,
) -> Result<CreatedSegmentOut, AdminError> {
    check(&request)?;
    let constraints = request.constraints.clone();
    let creator = caller.actor().name;
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::segments::create(conn, &new_segment(request, creator, now)?, actor)
        })
        .await?;
    Ok(CreatedSegmentOut {
        id: row.id,
        name: row.name,
        description: row.description,
        constraints,
        created_at: crate::runtime::input::iso(row.created_at),
        created_by: row.created_by,
        project: row.project_id,
    })
}

/// Who may read a segment.
pub const GET: Access = Access::Read;

/// One segment.
pub async fn get(ctx: &Runtime, id: i32) -> Result<SegmentDetailOut, AdminError> {
    let row = db::run(&ctx.store, move |conn| queries::segments::get(conn, id)).await?;
    Ok(SegmentDetailOut::try_from(row)?)
}

/// Who may change a segment.
pub const UPDATE: Access = Access::Write(Permission::UpdateSegment);

/// Replaces a segment's name, description, project and constraints.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: CreateSegment,
) -> Result<(), AdminError> {
    check(&request)?;
    let editor = caller.actor().name;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::segments::update(conn, id, &new_segment(request, editor, now)?, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may delete a segment.
pub const DELETE: Access = Access::Write(Permission::DeleteSegment);

/// Deletes a segment that no strategy of a live flag uses.
pub async fn delete(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::segments::delete(conn, id, actor, now)
        })
        .await
}

/// Who may list the strategies that use a segment.
pub const STRATEGIES: Access = Access::Read;

/// The strategies of live flags that use a segment.
pub async fn strategies(ctx: &Runtime, id: i32) -> Result<SegmentStrategiesOut, AdminError> {
    let uses = db::run(&ctx.store, move |conn| {
        queries::segments::get(conn, id)?;
        queries::segments::strategies_using(conn, id)
    })
    .await?;
    Ok(SegmentStrategiesOut {
        strategies: uses.into_iter().map(StrategyUseOut::from).collect(),
        change_request_strategies: Vec::new(),
    })
}

/// Who may list a strategy's segments.
pub const OF_STRATEGY: Access = Access::Read;

/// The segments a strategy uses.
pub async fn of_strategy(ctx: &Runtime, strategy_id: String) -> Result<StrategySegmentsOut, AdminError> {
    let rows = db::run(&ctx.store, move |conn| {
        queries::segments::of_strategy(conn, &strategy_id)
    })
    .await?;
    Ok(StrategySegmentsOut {
        segments: rows
            .into_iter()
            .map(SegmentDetailOut::try_from)
            .collect::<Result<_, _>>()?,
    })
}

/// Who may check a new segment's name.
pub const VALIDATE_NAME: Access = Access::Read;

/// Checks that a segment could have this name: not empty, not taken.
pub async fn validate_name(ctx: &Runtime, request: NameIn) -> Result<(), AdminError> {
    let name = request.name.trim().to_owned();
    if name.is_empty() {
        return Err(AdminError::invalid("/name", "Segment name cannot be empty"));
    }
    let taken = db::run(&ctx.store, move |conn| queries::segments::name_taken(conn, &name)).await?;
    if taken {
        return Err(AdminError::NameExists("Segment name already exists".into()));
    }
    Ok(())
}

/// The rules a segment's body keeps, wherever it is written from: a name, and constraints as
/// strategies' constraints.
pub fn check(request: &CreateSegment) -> Result<(), AdminError> {
    if request.name.trim().is_empty() {
        return Err(AdminError::invalid("/name", "/name must not be empty"));
    }
    crate::runtime::input::check_constraints(&request.constraints)
}

/// The segment a create or update request describes (checked by [`check`]), as `created_by`
/// writes it `at`.
fn new_segment(
    request: CreateSegment,
    created_by: String,
    at: chrono::NaiveDateTime,
) -> Result<NewSegment, flag_store::StoreError> {
    NewSegment::new(
        request.name,
        request.description,
        request.project,
        &request.constraints,
        Some(created_by),
        at,
    )
}
