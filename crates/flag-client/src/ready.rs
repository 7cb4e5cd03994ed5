//! Waiting for the first flags: blocking, or as a future that needs no particular runtime.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::Error;
use crate::state::Shared;

#[derive(Debug, Default)]
struct Readiness {
    ready: bool,
    /// Why no flags will come, when the server refused the token before any did.
    failed: Option<Error>,
    wakers: Vec<Waker>,
}

/// Whether the client has flags yet.
#[derive(Debug, Default)]
pub(crate) struct ReadyState {
    readiness: Mutex<Readiness>,
    changed: Condvar,
}

impl ReadyState {
    fn lock(&self) -> MutexGuard<'_, Readiness> {
        self.readiness.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks the client ready and wakes those waiting; the `Ready` event was delivered before.
    pub fn set_ready(&self) {
        let mut readiness = self.lock();
        readiness.ready = true;
        readiness.failed = None;
        for waker in readiness.wakers.drain(..) {
            waker.wake();
        }
        self.changed.notify_all();
    }

    /// Records that no flags will come, unless some already did.
    pub fn set_failed(&self, error: Error) {
        let mut readiness = self.lock();
        if !readiness.ready {
            readiness.failed = Some(error);
            for waker in readiness.wakers.drain(..) {
                waker.wake();
            }
            self.changed.notify_all();
        }
    }

    pub fn is_ready(&self) -> bool {
        self.lock().ready
    }

    pub fn wait(&self, timeout: Duration) -> Result<(), Error> {
        let deadline = Instant::now().checked_add(timeout);
        let mut readiness = self.lock();
        loop {
            if readiness.ready {
                return Ok(());
            }
            if let Some(error) = &readiness.failed {
                return Err(error.clone());
            }
            readiness = match deadline {
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Error::Timeout(timeout));
                    }
                    self.changed
                        .wait_timeout(readiness, left)
                        .unwrap_or_else(PoisonError::into_inner)
                        .0
                }
                // Longer than the clock can count: wait as long as it takes.
                None => self
                    .changed
                    .wait(readiness)
                    .unwrap_or_else(PoisonError::into_inner),
            };
        }
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<Result<(), Error>> {
        let mut readiness = self.lock();
        if readiness.ready {
            return Poll::Ready(Ok(()));
        }
        if let Some(error) = &readiness.failed {
            return Poll::Ready(Err(error.clone()));
        }
        if !readiness.wakers.iter().any(|waker| waker.will_wake(cx.waker())) {
            readiness.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Resolves when the client has flags, or with [`Error::Unauthorized`] when the server refused
/// the token before any came. Made by [`crate::Client::ready`].
pub struct Ready {
    shared: Arc<Shared>,
}

impl Ready {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

impl std::fmt::Debug for Ready {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Ready").finish_non_exhaustive()
    }
}

impl Future for Ready {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.shared.ready.poll(cx)
    }
}
