//! The CPU pool: threads of their own for CPU-heavy work, the playgrounds' evaluation and password
//! hashing.
//!
//! The HTTP workers must stay free to answer `/health`, `/ready` and the client API, and the
//! blocking pool is where database calls wait for a connection. Heavy work on either would let one
//! large playground request, or a flood of logins, delay both, so it runs here instead, and the
//! worker awaits its result.

use crate::runtime::error::AdminError;

/// A fixed set of threads for CPU-heavy work; work queues when all are busy.
#[derive(Debug)]
pub struct CpuPool {
    pool: rayon::ThreadPool,
}

impl CpuPool {
    /// A pool of `threads` threads; 0 means one per available core.
    pub fn new(threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|index| format!("cpu-{index}"))
            // Without a handler a panicking task would abort the process; with one, its caller
            // sees the channel close and answers 500.
            .panic_handler(|_| tracing::error!("a CPU-pool task panicked"))
            .build()?;
        Ok(Self { pool })
    }

    /// Runs `work` on the pool and waits for its result without holding an HTTP worker.
    pub async fn run<T, F>(&self, work: F) -> Result<T, AdminError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn(work).await
    }

    /// Drops `value` on the pool, off the caller's path: an environment compiled for one
    /// question about the past is 18 MB in some 200,000 allocations at 10,000 flags, and freeing
    /// them takes longer than writing the last part of the answer.
    pub fn release<T: Send + 'static>(&self, value: T) {
        self.pool.spawn(move || drop(value));
    }

    /// Starts `work` on the pool now; the returned future gives its result. Lets a caller keep
    /// the pool busy while it does something else, such as writing the previous result.
    pub fn spawn<T, F>(&self, work: F) -> impl Future<Output = Result<T, AdminError>> + use<T, F>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.pool.spawn(move || {
            // The receiver is gone when the client went away; the result is not needed then.
            let _ = sender.send(work());
        });
        async move {
            receiver
                .await
                .map_err(|_| AdminError::Internal("a CPU-pool task ended without a result".into()))
        }
    }
}
