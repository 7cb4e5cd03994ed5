//! The one place a handler reaches the database: a pooled connection on the blocking pool.

use actix_web::web;
use flag_store::{DbConnection, Store, StoreError};

use crate::error::ApiError;

/// Runs `work` with a pooled connection on actix's blocking thread pool. A checkout that times
/// out, or a busy database, answers 503.
pub async fn run<T, F>(store: &Store, work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(&mut DbConnection) -> Result<T, StoreError> + Send + 'static,
{
    let store = store.clone();
    let result = web::block(move || {
        let mut connection = store.connection()?;
        work(&mut connection)
    })
    .await?;
    result.map_err(ApiError::from)
}
