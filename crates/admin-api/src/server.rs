//! The HTTP server: actix-server accepts TCP connections, actix-http speaks HTTP/1.1 on them, and
//! [`build_app`] answers the requests.
//!
//! actix-web's `HttpServer` does all of this in one call, but its HTTP/1 dispatcher answers some
//! requests below the router, with no hook to change the answer: a URL longer than 65,534 bytes or
//! a malformed head gets `400`, a head over 128 KiB gets `431`, and a head that never arrives gets
//! `408`, each with an empty body. Every other error this server sends carries Unleash's envelope
//! `{id, name, message}`, so the server is assembled here from the same parts, with an
//! [`EnvelopeIo`] between each TCP stream and the dispatcher that swaps those bodiless answers for
//! envelopes as they are written.
//!
//! Under the [`EnvelopeIo`], a [`HandoffIo`] lets an SDK stream leave the dispatcher once its
//! response head is written (`crate::handoff`).

use flag_admin::app::edge::Edge;
use std::io::{self, Write as _};
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use actix_codec::{AsyncRead, AsyncWrite, ReadBuf};
use actix_http::error::DispatchError;
use actix_http::{HttpService, KeepAlive, Protocol};
use actix_server::{Server, ServerHandle};
use actix_service::{ServiceFactoryExt as _, fn_service, map_config};
use actix_web::dev::AppConfig;
use actix_web::http::StatusCode;
use actix_web::rt::net::TcpStream;
use actix_web::web;

use flag_admin::delivery::usage::Usage;

use crate::app::build_app;
use crate::handoff::HandoffIo;
use crate::state::AppState;

/// How long a new connection may take to send its first request head; actix-web's default.
const CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a closing connection waits for the client to disconnect; actix-web's default.
const CLIENT_DISCONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a stopping server waits for webhook deliveries already queued.
const WEBHOOK_GRACE: Duration = Duration::from_secs(5);

/// How long a stopping server waits for SDK streams to write their last chunk.
const STREAMS_GRACE: Duration = Duration::from_secs(5);

/// Pending connections the listener queues; actix-web's default.
const BACKLOG: i32 = 1024;

/// Binds `address` and starts serving [`build_app`] on it.
///
/// The server does not react to signals itself; [`run`] stops it gracefully on SIGTERM or SIGINT.
pub fn start(state: web::Data<AppState>, address: impl ToSocketAddrs) -> io::Result<Server> {
    let mut builder = Server::build()
        // Database work runs on the blocking pool; more threads than pooled connections only
        // queue for a connection while each holds its own allocator arena.
        .worker_max_blocking_threads(4)
        .shutdown_timeout(30)
        .disable_signals();
    for listener in listeners(address)? {
        let local = listener.local_addr()?;
        let state = state.clone();
        let shutdown = builder.graceful_shutdown_signal();
        builder = builder.listen(format!("admin-api-{local}"), listener, move || {
            let shutdown = shutdown.clone();
            // The same settings actix-web's `HttpServer::listen` gives the dispatcher.
            let http = HttpService::build()
                .keep_alive(KeepAlive::default())
                .client_request_timeout(CLIENT_REQUEST_TIMEOUT)
                .client_disconnect_timeout(CLIENT_DISCONNECT_TIMEOUT)
                .h1_allow_half_closed(true)
                .local_addr(local)
                // A request reaches its connection's handoff, for a stream to leave by.
                .on_connect_ext(|io: &EnvelopeIo<HandoffIo>, data| {
                    data.insert(io.get_ref().handoff());
                })
                // Idle keep-alive connections close as soon as a graceful stop begins, as with
                // `HttpServer`, instead of holding the stop up until their timer runs out.
                .graceful_shutdown_signal(move || {
                    let shutdown = shutdown.clone();
                    async move { shutdown.notified().await }
                })
                // The app reads neither the host nor the address `AppConfig` carries (requests
                // carry their own), so the default stands in for actix-web's private constructor.
                .finish(map_config(build_app(state.clone()), |()| AppConfig::default()));
            fn_service(|stream: TcpStream| async move {
                // Each write goes out at once: with Nagle's algorithm, the few bytes that end a
                // streamed answer wait for the client's delayed acknowledgement, 40 ms on Linux.
                let _ = stream.set_nodelay(true);
                // The peer address travels beside the stream, so `HttpRequest::peer_addr` works.
                let peer = stream.peer_addr().ok();
                Ok::<_, DispatchError>((EnvelopeIo::new(HandoffIo::new(stream)), Protocol::Http1, peer))
            })
            .and_then(http)
        })?;
    }
    Ok(builder.run())
}

/// Runs `server` until SIGTERM or SIGINT, then lets the requests in flight finish.
pub async fn run(server: Server, state: web::Data<AppState>) -> io::Result<()> {
    let handle = server.handle();
    actix_web::rt::spawn(stop_on_signal(handle, state.clone()));
    let follower = actix_web::rt::spawn(follow_changes(state.clone()));
    if let Some(edge) = state.edge.clone() {
        // An edge writes nothing of its own: its SDKs' usage goes upstream, and its tokens are
        // validated there again at an interval.
        let forwarder = actix_web::rt::spawn(forward_periodically(state.clone(), Arc::clone(&edge)));
        let revalidator = actix_web::rt::spawn(revalidate_periodically(Arc::clone(&edge)));
        let stopped = server.await;
        forwarder.abort();
        revalidator.abort();
        follower.abort();
        if let Err(error) = edge.forward_usage(state.app.delivery().usage()).await {
            tracing::error!(%error, "sending SDK usage upstream at shutdown failed");
        }
        return stopped;
    }
    let flusher = actix_web::rt::spawn(flush_periodically(state.clone()));
    let scheduler = actix_web::rt::spawn(apply_scheduled_periodically(state.clone()));
    let webhooks = state.app.start_webhooks()?;
    let stopped = server.await;
    flusher.abort();
    scheduler.abort();
    follower.abort();
    // Deliveries already queued get a few seconds to finish; new events wait for the next start.
    let _ = actix_web::rt::task::spawn_blocking(move || webhooks.stop(WEBHOOK_GRACE)).await;
    // What SDKs reported since the last flush is written before the process ends.
    if let Err(error) = state.app.flush_usage().await {
        tracing::error!(%error, "writing SDK usage at shutdown failed");
    }
    stopped
}

/// Sends SDK usage upstream every metrics interval, and at once whenever the aggregate passes
/// half of a bound.
async fn forward_periodically(state: web::Data<AppState>, edge: Arc<Edge>) {
    let mut interval = actix_web::rt::time::interval(edge.settings().metrics_interval);
    interval.tick().await;
    loop {
        {
            let tick = std::pin::pin!(interval.tick());
            let half_full = std::pin::pin!(state.app.delivery().usage().half_full());
            futures_util::future::select(tick, half_full).await;
        }
        // A failure is logged and counted by the edge; what was not sent is kept.
        let _ = edge.forward_usage(state.app.delivery().usage()).await;
    }
}

/// Validates every token upstream again at the revalidation interval.
async fn revalidate_periodically(edge: Arc<Edge>) {
    let mut interval = actix_web::rt::time::interval(edge.settings().revalidation_interval);
    interval.tick().await;
    loop {
        interval.tick().await;
        if let Err(error) = edge.revalidate().await {
            tracing::warn!(%error, "revalidating tokens upstream failed; every token is kept until the next attempt");
        }
    }
}

/// Writes SDK usage every [`Usage::FLUSH_INTERVAL`], and at once whenever the aggregate passes
/// half of a bound, for as long as the server runs.
async fn flush_periodically(state: web::Data<AppState>) {
    let mut interval = actix_web::rt::time::interval(Usage::FLUSH_INTERVAL);
    loop {
        {
            let tick = std::pin::pin!(interval.tick());
            let half_full = std::pin::pin!(state.app.delivery().usage().half_full());
            futures_util::future::select(tick, half_full).await;
        }
        if let Err(error) = state.app.flush_usage().await {
            tracing::warn!(%error, "writing SDK usage failed; it is kept for the next flush");
        }
    }
}

/// How often scheduled change requests are looked for: each is applied within this of its time,
/// by whichever replica finds it first (the store applies each once).
const SCHEDULE_INTERVAL: Duration = Duration::from_millis(200);

/// Applies the scheduled change requests as they fall due, for as long as the server runs: it
/// looks every [`SCHEDULE_INTERVAL`], and wakes at the next one's time when that is sooner.
async fn apply_scheduled_periodically(state: web::Data<AppState>) {
    loop {
        let wait = match flag_admin::catalogue::change_requests::apply_due(&state.app).await {
            Ok(due) => {
                if due.applied + due.failed > 0 {
                    tracing::info!(
                        applied = due.applied,
                        failed = due.failed,
                        "applied scheduled change requests"
                    );
                }
                due.next
                    .and_then(|next| (next - state.app.now()).to_std().ok())
                    .map_or(SCHEDULE_INTERVAL, |until| until.min(SCHEDULE_INTERVAL))
            }
            Err(error) => {
                // Once a second while the database cannot answer, not at every look.
                tracing::warn!(%error, "applying scheduled change requests failed; trying again in a second");
                Duration::from_secs(1)
            }
        };
        actix_web::rt::time::sleep(wait.max(Duration::from_millis(1))).await;
    }
}

/// How often the revision is checked for SDK streams: this process's own writes are seen within
/// this, other replicas' within `RevisionWatch::POLL` more.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(50);

/// Loads each new revision into every question an SDK streams, so its change reaches the
/// streams, for as long as the server runs. While no SDK streams, it reads nothing.
async fn follow_changes(state: web::Data<AppState>) {
    let mut interval = actix_web::rt::time::interval(FOLLOW_INTERVAL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        if !state.app.delivery().feeds().any_followed() {
            continue;
        }
        let advanced = match state.app.revision().await {
            Ok(revision) => {
                state
                    .app
                    .delivery()
                    .feeds()
                    .advance_followed(&state.app, revision)
                    .await
            }
            Err(error) => Err(error),
        };
        if let Err(error) = advanced {
            // Once a second while the database cannot answer, not at every tick.
            tracing::warn!(%error, "loading changes for SDK streams failed; trying again in a second");
            actix_web::rt::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn stop_on_signal(handle: ServerHandle, state: web::Data<AppState>) {
    shutdown_signal().await;
    // Readiness goes first, so a load balancer stops sending traffic while requests drain.
    state
        .shutting_down
        .store(true, std::sync::atomic::Ordering::SeqCst);
    // No connection is accepted from here on: one made now waits in the listen queue and is
    // refused when the listener closes, so an SDK whose stream ends reconnects elsewhere.
    handle.pause().await;
    // SDK streams end at once, so their SDKs reconnect elsewhere instead of holding the stop up.
    state.stopping.send_replace(true);
    // Those out of the dispatcher are not among the connections the server waits for.
    state.detached.close();
    let _ = actix_web::rt::time::timeout(STREAMS_GRACE, state.detached.wait()).await;
    tracing::info!("shutting down: finishing requests in flight");
    handle.stop(true).await;
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use actix_web::rt::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                futures_util::future::select(Box::pin(terminate.recv()), Box::pin(interrupt.recv())).await;
            }
            _ => {
                let _ = actix_web::rt::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = actix_web::rt::signal::ctrl_c().await;
    }
}

/// One listener per address `address` resolves to, bound as actix-web's `HttpServer::bind` binds
/// them; fails only when none can be bound.
fn listeners(address: impl ToSocketAddrs) -> io::Result<Vec<TcpListener>> {
    let mut listeners = Vec::new();
    let mut last_error = None;
    for address in address.to_socket_addrs()? {
        match listener(address) {
            Ok(listener) => listeners.push(listener),
            Err(error) => last_error = Some(error),
        }
    }
    match last_error {
        Some(error) if listeners.is_empty() => Err(error),
        None if listeners.is_empty() => Err(io::Error::other("the address resolved to nothing")),
        _ => Ok(listeners),
    }
}

fn listener(address: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(address), Type::STREAM, Some(Protocol::TCP))?;
    // A restarted server can bind again while the old connections linger in TIME_WAIT.
    #[cfg(not(windows))]
    socket.set_reuse_address(true)?;
    // On Windows an IPv6 socket would otherwise refuse IPv4 clients.
    #[cfg(windows)]
    if address.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    socket.bind(&address.into())?;
    socket.listen(BACKLOG)?;
    Ok(TcpListener::from(socket))
}

/// A connection that gives the HTTP/1 dispatcher's own error responses the error envelope.
///
/// actix-http answers a request it cannot parse, or whose head does not arrive in time, with a
/// 4xx or 5xx response and `content-length: 0`, from below the router. The application never
/// sends an empty 4xx or 5xx; it always sends the envelope. So a write that begins such a
/// response is swapped for the same status with `content-type: application/json`,
/// `connection: close` and an envelope body. Reads and every other write pass through untouched
/// and unbuffered.
#[derive(Debug)]
pub struct EnvelopeIo<T> {
    inner: T,
    /// The replacement response not yet accepted by `inner`; empty, and unallocated, otherwise.
    pending: Vec<u8>,
    /// How much of `pending` `inner` has accepted.
    sent: usize,
    /// Whether the next write starts a response, rather than continuing one that `inner` took
    /// only part of.
    at_response_start: bool,
}

impl<T> EnvelopeIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            pending: Vec::new(),
            sent: 0,
            at_response_start: true,
        }
    }

    /// The connection wrapped.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }
}

impl<T: AsyncWrite + Unpin> EnvelopeIo<T> {
    /// Writes what is left of the replacement response; ready once all of it is written.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.pending.len() {
            let written = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.sent..]))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += written;
        }
        if !self.pending.is_empty() {
            self.pending = Vec::new();
            self.sent = 0;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for EnvelopeIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for EnvelopeIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // A replacement goes out whole before anything written after it.
        ready!(this.poll_pending(cx))?;
        if this.at_response_start
            && let Some((head_len, response)) = replacement(buf)
        {
            // The bodiless response counts as written once its replacement is queued; the
            // queue drains on the next write, flush or shutdown, and the dispatcher always
            // flushes after writing.
            this.pending = response;
            this.sent = 0;
            return Poll::Ready(Ok(head_len));
        }
        let written = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        this.at_response_start = written == buf.len();
        Poll::Ready(Ok(written))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// When `bytes` begins with a whole response head whose status is 4xx or 5xx and whose
/// `content-length` is 0: the head's length and the response to send instead.
fn replacement(bytes: &[u8]) -> Option<(usize, Vec<u8>)> {
    // `HTTP/1.1 400 Bad Request`: the first status digit is the tenth byte. Checking it first
    // keeps the cost of an ordinary write to two comparisons.
    if !matches!(bytes.get(9), Some(b'4' | b'5')) || !bytes.starts_with(b"HTTP/1.") {
        return None;
    }
    let status = StatusCode::from_bytes(bytes.get(9..12)?).ok()?;
    let head_len = bytes.windows(4).position(|window| window == b"\r\n\r\n")? + 4;
    let mut lines = bytes[..head_len - 4]
        .split(|&byte| byte == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    let status_line = lines.next()?;
    let mut kept = Vec::new();
    let mut empty = false;
    for line in lines {
        let (name, value) = line.split_at(line.iter().position(|&byte| byte == b':')?);
        let name = name.trim_ascii();
        if name.eq_ignore_ascii_case(b"content-length") {
            empty = value[1..].trim_ascii() == b"0";
        } else if !name.eq_ignore_ascii_case(b"content-type") && !name.eq_ignore_ascii_case(b"connection") {
            kept.push(line);
        }
    }
    if !empty {
        return None;
    }

    let id = uuid::Uuid::new_v4();
    let (name, message) = match status {
        StatusCode::BAD_REQUEST => (
            "ValidationError",
            "the request could not be read: its request line or headers are malformed, or its URL \
             is longer than 65534 bytes"
                .to_owned(),
        ),
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => (
            "RequestHeaderFieldsTooLarge",
            "the request head is larger than the limit of 128 KiB (131072 bytes) or has more than 96 \
             headers"
                .to_owned(),
        ),
        StatusCode::REQUEST_TIMEOUT => (
            "RequestTimeout",
            format!(
                "the request head did not arrive within {} seconds",
                CLIENT_REQUEST_TIMEOUT.as_secs()
            ),
        ),
        _ => ("InternalError", "internal error".to_owned()),
    };
    if status.is_server_error() {
        tracing::warn!(error_id = %id, status = status.as_u16(), "actix-http answered {status} below the router: {message}");
    } else {
        tracing::debug!(error_id = %id, status = status.as_u16(), "actix-http answered {status} below the router: {message}");
    }
    let body = serde_json::json!({"id": id.to_string(), "name": name, "message": message}).to_string();

    let mut response = Vec::with_capacity(head_len + body.len() + 96);
    for line in std::iter::once(status_line).chain(kept) {
        response.extend_from_slice(line);
        response.extend_from_slice(b"\r\n");
    }
    // Writing to a `Vec` cannot fail.
    let _ = write!(
        response,
        "content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    Some((head_len, response))
}

#[cfg(test)]
mod tests {
    use std::error::Error;

    use super::*;

    /// A connection that records what it is given, taking at most `chunk` bytes per write.
    struct Recorder {
        written: Vec<u8>,
        chunk: usize,
    }

    impl AsyncWrite for Recorder {
        fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            let this = self.get_mut();
            let taken = buf.len().min(this.chunk);
            this.written.extend_from_slice(&buf[..taken]);
            Poll::Ready(Ok(taken))
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Writes `response` through an [`EnvelopeIo`] the way the dispatcher does, then shuts it
    /// down; returns what reached the connection.
    fn send(response: &[u8], chunk: usize) -> Result<Vec<u8>, Box<dyn Error>> {
        let mut io = EnvelopeIo::new(Recorder {
            written: Vec::new(),
            chunk,
        });
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut done = 0;
        while done < response.len() {
            match Pin::new(&mut io).poll_write(&mut cx, &response[done..]) {
                Poll::Ready(written) => done += written?,
                Poll::Pending => return Err("the write was pending".into()),
            }
        }
        match Pin::new(&mut io).poll_shutdown(&mut cx) {
            Poll::Ready(result) => result?,
            Poll::Pending => return Err("the shutdown was pending".into()),
        }
        Ok(io.inner.written)
    }

    /// Splits a response into its head and its body.
    fn split(response: &[u8]) -> Result<(String, Vec<u8>), Box<dyn Error>> {
        let text = std::str::from_utf8(response)?;
        let (head, body) = text.split_once("\r\n\r\n").ok_or("no end of head")?;
        Ok((head.to_owned(), body.as_bytes().to_vec()))
    }

    #[test]
    fn a_bodiless_400_becomes_an_envelope() -> Result<(), Box<dyn Error>> {
        let original = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\
                         date: Mon, 04 May 2026 10:00:00 GMT\r\n\r\n";
        // Five bytes a write, so the replacement drains over many writes and the shutdown.
        let sent = send(original, 5)?;
        let (head, body) = split(&sent)?;
        let mut lines = head.lines();
        assert_eq!(lines.next(), Some("HTTP/1.1 400 Bad Request"));
        let headers: Vec<&str> = lines.collect();
        assert!(headers.contains(&"content-type: application/json"), "{head}");
        assert!(headers.contains(&"connection: close"), "{head}");
        assert!(headers.contains(&"date: Mon, 04 May 2026 10:00:00 GMT"), "{head}");
        assert!(
            headers.contains(&format!("content-length: {}", body.len()).as_str()),
            "{head}"
        );
        assert_eq!(
            headers
                .iter()
                .filter(|line| line.starts_with("content-length"))
                .count(),
            1
        );

        let envelope: serde_json::Value = serde_json::from_slice(&body)?;
        let id = uuid::Uuid::parse_str(envelope["id"].as_str().ok_or("no id")?)?;
        assert_eq!(id.get_version_num(), 4);
        assert_eq!(envelope["name"], "ValidationError");
        assert_eq!(
            envelope["message"],
            "the request could not be read: its request line or headers are malformed, or its URL is \
             longer than 65534 bytes"
        );
        Ok(())
    }

    #[test]
    fn a_timeout_and_a_too_large_head_are_named() -> Result<(), Box<dyn Error>> {
        for (status_line, name) in [
            ("HTTP/1.1 408 Request Timeout", "RequestTimeout"),
            (
                "HTTP/1.1 431 Request Header Fields Too Large",
                "RequestHeaderFieldsTooLarge",
            ),
            ("HTTP/1.1 500 Internal Server Error", "InternalError"),
        ] {
            let sent = send(
                format!("{status_line}\r\ncontent-length: 0\r\n\r\n").as_bytes(),
                1024,
            )?;
            let (head, body) = split(&sent)?;
            assert!(head.starts_with(status_line), "{head}");
            let envelope: serde_json::Value = serde_json::from_slice(&body)?;
            assert_eq!(envelope["name"], name);
        }
        Ok(())
    }

    #[test]
    fn a_200_passes_through() -> Result<(), Box<dyn Error>> {
        let original = b"HTTP/1.1 200 OK\r\ncontent-length: 18\r\ncontent-type: application/json\r\n\r\n\
                         {\"health\":\"GOOD\"}\n";
        assert_eq!(send(original, 7)?, original);
        Ok(())
    }

    #[test]
    fn a_400_with_a_body_passes_through() -> Result<(), Box<dyn Error>> {
        let body =
            r#"{"id":"7d3c4a1e-8a8e-4c1b-9a37-2f0d8c1e5b6a","name":"ValidationError","message":"bad"}"#;
        let original = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-length: {}\r\ncontent-type: application/json\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(send(original.as_bytes(), 1024)?, original.as_bytes());
        Ok(())
    }

    #[test]
    fn the_rest_of_a_partly_written_response_is_not_taken_for_a_new_one() -> Result<(), Box<dyn Error>> {
        // The connection takes only the head, so the next write starts the body, whose bytes
        // look like a bodiless 400.
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 39\r\n\r\n";
        let body = b"HTTP/1.1 400 Bad\r\ncontent-length: 0\r\n\r\n";
        let original = [&head[..], &body[..]].concat();
        let mut io = EnvelopeIo::new(Recorder {
            written: Vec::new(),
            chunk: head.len(),
        });
        let mut cx = Context::from_waker(std::task::Waker::noop());
        let mut done = 0;
        while done < original.len() {
            match Pin::new(&mut io).poll_write(&mut cx, &original[done..]) {
                Poll::Ready(written) => done += written?,
                Poll::Pending => return Err("the write was pending".into()),
            }
            io.inner.chunk = usize::MAX;
        }
        assert_eq!(io.inner.written, original);
        Ok(())
    }
}
