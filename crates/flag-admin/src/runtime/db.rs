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

/// [`run`] for work that reads and then computes at length on what it read: `work` runs with a
/// pooled connection and gives its answer to the caller as soon as it returns, with the
/// connection back in the pool; `then` goes on with what `work` left for it on the same blocking
/// thread, without a connection.
pub async fn run_then<T, U, F, G>(store: &Store, work: F, then: G) -> Result<T, AdminError>
where
    T: Send + 'static,
    U: Send + 'static,
    F: FnOnce(&mut DbConnection) -> Result<(T, U), StoreError> + Send + 'static,
    G: FnOnce(U) + Send + 'static,
{
    let store = store.clone();
    let (answer, answered) = tokio::sync::oneshot::channel();
    tokio::task::spawn_blocking(move || {
        let read = store
            .connection()
            .and_then(|mut connection| work(&mut connection));
        match read {
            Ok((result, rest)) => {
                // The caller is gone when the receiver is: nothing waits for the rest.
                if answer.send(Ok(result)).is_ok() {
                    then(rest);
                }
            }
            Err(error) => {
                let _ = answer.send(Err(error));
            }
        }
    });
    answered
        .await
        .map_err(|_| AdminError::Internal("a blocking task ended without a result".into()))?
        .map_err(AdminError::from)
}
