//! Server-sent events for `/api/client/streaming`: a stream's opening, its changes, heartbeats,
//! and its end, written as Unleash's SDKs read them.
//!
//! - `unleash-connected`, first: a hydration, or the changes since `Last-Event-ID`;
//! - `unleash-updated`, for each change of the question the stream follows;
//! - a comment every [`HEARTBEAT`], well within the SDKs' read timeouts (the Node SDK's 60 s,
//!   the Python SDK's 30 s);
//! - `fetch-mode` with `polling`, when the stream fell so far behind that the changes it missed
//!   are gone: its SDK then polls instead (the Node SDK does; others reconnect and hydrate);
//! - the end of the body, when the server stops.
//!
//! Every event carries `id:`, the revision its SDK holds after it, which the SDK sends back as
//! `Last-Event-ID` when it reconnects. The events themselves are made once per change by
//! `flag_admin::delivery::delta` and shared by every stream: a stream only frames them.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::{self, IoSlice};
use std::rc::Rc;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use actix_codec::{AsyncRead, AsyncWrite};
use actix_web::web::{self, Bytes};
use flag_admin::delivery::delta::{Opening, Stream};
use futures_util::Stream as FuturesStream;
use futures_util::future::Either;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use crate::handoff::{Handoff, LAST_CHUNK};
use crate::state::AppState;

/// How often an idle stream sends a comment, so SDKs and proxies see it alive.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// The most of one event handed to the dispatcher at once, for a stream it writes itself (an
/// HTTP/1.0 one). A hydration is shared by every stream and handed over a slice at a time,
/// yielding between slices so that the connection writes each out first: its write buffer then
/// stays at its first 8 KiB, where it would otherwise grow to 48 KiB and keep that size for the
/// life of the stream (actix-http keeps a buffer of up to 128 KiB).
const SLICE: usize = 4 * 1024;

/// The comment sent as a heartbeat.
const KEEP_ALIVE: &[u8] = b":keep-alive\n\n";

/// `text` as a body, shared rather than copied.
pub fn shared(text: Arc<str>) -> Bytes {
    Bytes::from_owner(Shared(text))
}

#[derive(Debug)]
struct Shared(Arc<str>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// The body of a stream: its opening, then its changes and heartbeats until `stopping` turns
/// true, the client goes, or its token no longer admits it (checked at each heartbeat).
///
/// Given its connection's [`Handoff`], the body ends at once and leaves the stream to a task
/// that writes it straight to the socket (`write_detached`); otherwise the dispatcher writes
/// it.
pub fn body(
    state: web::Data<AppState>,
    mut stream: Stream,
    stopping: watch::Receiver<bool>,
    handoff: Option<Rc<Handoff>>,
) -> impl FuturesStream<Item = Result<Bytes, Infallible>> {
    let opening = std::mem::replace(
        &mut stream.subscription.opening,
        Opening::Resumed {
            revision: 0,
            changes: Vec::new(),
        },
    );
    let (revision, data) = match opening {
        Opening::Hydration(snapshot) => (snapshot.revision(), snapshot.hydration()),
        Opening::Resumed { revision, changes } => {
            (revision, flag_admin::delivery::delta::joined(&changes).into())
        }
    };
    let mut follow = Follow {
        queue: VecDeque::new(),
        revision,
        stream,
        state,
        heartbeat: {
            let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
            // A connection that was slow to take the last write gets one heartbeat, not a burst.
            heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            heartbeat
        },
        stopping,
        done: false,
    };
    follow.event("unleash-connected", revision, data);
    match handoff {
        Some(handoff) => {
            let mut follow = Some(follow);
            Either::Left(futures_util::stream::poll_fn(move |_| {
                if let Some(follow) = follow.take() {
                    let detached = follow.state.detached.clone();
                    handoff
                        .leave(move |socket| Box::pin(detached.track_future(write_detached(socket, follow))));
                }
                Poll::Ready(None)
            }))
        }
        None => Either::Right(futures_util::stream::unfold(follow, |mut follow| async move {
            follow.next().await.map(|chunk| (Ok(chunk), follow))
        })),
    }
}

/// Writes a stream on its own socket, out of the HTTP dispatcher: whatever is queued goes out as
/// one chunk of the response's chunked body, and the last chunk when the stream ends. The
/// stream ends as soon as the client closes its side or a write fails.
async fn write_detached<S: AsyncRead + AsyncWrite + Unpin>(mut socket: S, mut follow: Follow) {
    let mut unread = [0; 64];
    loop {
        let more = {
            // Bytes the client sends are read and dropped (SDKs send none), without interrupting
            // the wait for what to write: a heartbeat's token check runs to its end however
            // much a client sends.
            let fill = follow.fill();
            tokio::pin!(fill);
            loop {
                tokio::select! {
                    read = socket.read(&mut unread) => match read {
                        Ok(0) | Err(_) => return,
                        Ok(_) => {}
                    },
                    more = &mut fill => break more,
                }
            }
        };
        let written = if more {
            write_chunk(&mut socket, follow.queue.make_contiguous()).await
        } else {
            socket.write_all(LAST_CHUNK).await
        };
        follow.queue.clear();
        // A hydration of many flags is queued in many slices; the queue does not keep their room.
        follow.queue.shrink_to(QUEUE_KEPT);
        if written.is_err() || !more {
            let _ = socket.shutdown().await;
            return;
        }
    }
}

/// The most queue entries a detached stream keeps room for between writes: a heartbeat takes
/// one, a change of under 4 KiB three.
const QUEUE_KEPT: usize = 8;

/// Writes `parts` as one chunk of a chunked body, in as few writes as the socket allows.
async fn write_chunk<S: AsyncWrite + Unpin>(socket: &mut S, parts: &[Bytes]) -> io::Result<()> {
    let size = format!("{:x}\r\n", parts.iter().map(Bytes::len).sum::<usize>());
    let mut slices: Vec<IoSlice<'_>> = std::iter::once(size.as_bytes())
        .chain(parts.iter().map(|part| &part[..]))
        .chain(std::iter::once(&b"\r\n"[..]))
        .map(IoSlice::new)
        .collect();
    let mut unwritten = &mut slices[..];
    while !unwritten.is_empty() {
        let written = socket.write_vectored(unwritten).await?;
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut unwritten, written);
    }
    socket.flush().await
}

struct Follow {
    /// Chunks written before waiting again.
    queue: VecDeque<Bytes>,
    /// The revision the SDK holds once the queue is written.
    revision: i32,
    /// The feed followed, the changes received, the place within the limits.
    stream: Stream,
    state: web::Data<AppState>,
    heartbeat: tokio::time::Interval,
    stopping: watch::Receiver<bool>,
    /// Set once the last chunk is queued.
    done: bool,
}

impl Follow {
    /// Queues one event: its name, its id and its data, the data in shared slices.
    fn event(&mut self, name: &str, id: i32, data: Arc<str>) {
        self.queue
            .push_back(Bytes::from(format!("event: {name}\nid: {id}\ndata: ")));
        let data = shared(data);
        let mut start = 0;
        while start < data.len() {
            let end = (start + SLICE).min(data.len());
            self.queue.push_back(data.slice(start..end));
            start = end;
        }
        self.queue.push_back(Bytes::from_static(b"\n\n"));
        self.revision = id;
    }

    /// The next chunk to write, or `None` when the stream ends.
    async fn next(&mut self) -> Option<Bytes> {
        if !self.fill().await {
            return None;
        }
        let chunk = self.queue.pop_front()?;
        if chunk.len() == SLICE {
            tokio::task::yield_now().await;
        }
        Some(chunk)
    }

    /// Waits until something is queued to write; false once the stream ends with nothing left.
    async fn fill(&mut self) -> bool {
        loop {
            if !self.queue.is_empty() {
                return true;
            }
            if self.done || *self.stopping.borrow() {
                return false;
            }
            tokio::select! {
                biased;
                _ = self.stopping.changed() => return false,
                received = self.stream.subscription.changes.recv() => match received {
                    Ok(change) => {
                        if change.revision() > self.revision {
                            self.event("unleash-updated", change.revision(), Arc::clone(change.body()));
                        }
                    }
                    Err(RecvError::Lagged(_)) => self.catch_up(),
                    Err(RecvError::Closed) => self.done = true,
                },
                _ = self.heartbeat.tick() => {
                    // A database that cannot answer now ends no stream; the next heartbeat asks again.
                    if let Ok(false) = self.stream.still_admitted(&self.state.app, self.state.app.identity()).await {
                        tracing::info!("a stream's token was deleted or expired; the stream ends");
                        self.done = true;
                        return false;
                    }
                    self.queue.push_back(Bytes::from_static(KEEP_ALIVE));
                }
            }
        }
    }

    /// After missing changes: sends them from the feed's memory, or, when they are gone, tells
    /// the SDK to poll and ends.
    fn catch_up(&mut self) {
        match self.stream.feed.since(self.revision) {
            Some(changes) => {
                if let Some(last) = changes.last().map(|change| change.revision()) {
                    self.event(
                        "unleash-updated",
                        last,
                        flag_admin::delivery::delta::joined(&changes).into(),
                    );
                }
            }
            None => {
                tracing::info!("a stream fell behind its changes; its SDK is told to poll");
                self.queue
                    .push_back(Bytes::from_static(b"event: fetch-mode\ndata: polling\n\n"));
                self.done = true;
            }
        }
    }
}
