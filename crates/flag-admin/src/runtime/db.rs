//! The one place an operation reaches the database: a pooled connection on the blocking pool.

use flag_store::{DbConnection, Store, StoreError};

use crate::runtime::error::AdminError;

/// Runs `work` with a pooled connection on the runtime's blocking thread pool. A checkout that
/// times out, or a busy database, is [`AdminError::Unavailable`].
pub async fn run<T, F>(store: &Store, work: F) -> Result<T, AdminError>
where
    T: Send + 'static,
    F: FnOnce(&mut DbConnection) -> Result<T, StoreError> + Send + 'static,
{
    let store = store.clone();
    let result = tokio::task::spawn_blocking(move || {
        let mut connection = store.connection()?;
        work(&mut connection)
    })
    .await
    .map_err(|error| AdminError::Internal(format!("blocking task failed: {error}")))?;
    result.map_err(AdminError::from)
}
