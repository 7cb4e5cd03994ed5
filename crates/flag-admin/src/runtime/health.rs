//! Whether the application can serve.

use flag_store::queries;

use crate::{AdminError, Ctx, db};

/// Whether the database answers.
pub async fn ready(ctx: &Ctx) -> Result<(), AdminError> {
    db::run(&ctx.store, |conn| queries::environments::list(conn).map(drop)).await
}
