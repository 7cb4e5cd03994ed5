//! Whether the application can serve.

pub mod types;

use flag_store::queries;

use crate::{AdminError, runtime::Runtime, runtime::db};

/// Whether the database answers.
pub async fn ready(ctx: &Runtime) -> Result<(), AdminError> {
    db::run(&ctx.store, |conn| queries::environments::list(conn).map(drop)).await
}
