//! Context fields: list and create.

use flag_store::models::ContextFieldRow;
use flag_store::queries;

use crate::auth::Caller;
use crate::dto::context::{ContextFieldOut, CreateContextField, CreatedContextFieldOut};
use crate::{AdminError, Ctx, db};

/// Every context field.
pub async fn list(ctx: &Ctx) -> Result<Vec<ContextFieldOut>, AdminError> {
    let rows = db::run(&ctx.store, queries::context_fields::list).await?;
    Ok(rows
        .into_iter()
        .map(ContextFieldOut::try_from)
        .collect::<Result<_, _>>()?)
}

/// Creates a context field; it sorts at 10 unless the request says otherwise.
pub async fn create(
    ctx: &Ctx,
    caller: &Caller,
    request: CreateContextField,
) -> Result<CreatedContextFieldOut, AdminError> {
    let row = ContextFieldRow::new(
        request.name.into_string(),
        request.description,
        request.stickiness,
        request.sort_order.unwrap_or(10),
        &request.legal_values,
        crate::now(),
    )?;
    let row = db::write_as(&ctx.store, caller, row, queries::context_fields::create).await?;
    Ok(CreatedContextFieldOut {
        name: row.name,
        description: row.description,
        stickiness: row.stickiness,
    })
}
