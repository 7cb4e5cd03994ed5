//! A connection that a long response can take out of the HTTP dispatcher once its head is
//! written.
//!
//! actix-http gives every connection an 8 KiB read buffer and an 8 KiB write buffer, kept for as
//! long as the connection lives. An SDK stream lives for hours and writes a few bytes a second,
//! so those buffers were nearly all of its memory: 16 KiB a stream, 1.6 GiB at 100,000 streams.
//! A stream therefore leaves the dispatcher as soon as its response head is on its way, and
//! goes on as a small task that owns the socket and writes its events straight to it:
//!
//! 1. the handler's body, polled for the first time, leaves in the connection's [`Handoff`] what
//!    is to run on the socket, and ends;
//! 2. the dispatcher writes the head and the chunked body's last chunk; [`HandoffIo`] writes the
//!    head and keeps the last chunk back, so the body stays open for the client;
//! 3. it then tells the dispatcher that the client has finished sending, and the dispatcher,
//!    with no request left to answer, shuts the connection down; [`HandoffIo`] hands the socket
//!    to what was left in the [`Handoff`] instead, spawned on the same worker, and the dispatcher
//!    and its buffers are dropped.
//!
//! Only an HTTP/1.1 `GET` takes this path: its body is chunked, and the task goes on writing
//! chunks. A request the client sent behind the stream on the same connection ends the stream
//! there instead, as an empty body, and the dispatcher answers it as usual. Everything before the handoff, from the request head to the response head, went
//! through the dispatcher, the router, the middleware and the handler as for any request.

use std::cell::{Cell, RefCell};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use actix_codec::{AsyncRead, AsyncWrite, ReadBuf};
use actix_web::rt::net::TcpStream;
use futures_util::future::LocalBoxFuture;

/// What a chunked body ends with: the empty last chunk and no trailers.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

/// What runs on the socket once the dispatcher has let it go.
type Rest<T> = Box<dyn FnOnce(T) -> LocalBoxFuture<'static, ()>>;

/// A connection's slot for the rest of its response; shared between the connection's
/// [`HandoffIo`] and its requests, which reach it as connection data.
pub struct Handoff<T = TcpStream> {
    stage: Cell<Stage>,
    rest: RefCell<Option<Rest<T>>>,
}

/// Where a connection is in leaving the dispatcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// An ordinary connection.
    Served,
    /// A body has ended to leave; its last chunk is still to be kept back.
    Leaving,
    /// The last chunk is kept back; the dispatcher is told the client has finished.
    Left,
    /// The dispatcher answers a request the client sent behind the stream, which therefore ends
    /// with its last chunk, of which this much is written; the connection stays with the
    /// dispatcher.
    Ending(usize),
    /// The socket has gone to the rest of its response.
    Gone,
}

impl<T> std::fmt::Debug for Handoff<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handoff")
            .field("stage", &self.stage.get())
            .finish_non_exhaustive()
    }
}

impl<T> Handoff<T> {
    fn new() -> Self {
        Self {
            stage: Cell::new(Stage::Served),
            rest: RefCell::new(None),
        }
    }

    /// Called by a chunked body as it ends: `rest` goes on writing the body on the socket once
    /// the dispatcher has written the response's head and let the connection go.
    pub fn leave(&self, rest: impl FnOnce(T) -> LocalBoxFuture<'static, ()> + 'static) {
        *self.rest.borrow_mut() = Some(Box::new(rest));
        self.stage.set(Stage::Leaving);
    }
}

/// A connection's socket, with its [`Handoff`].
#[derive(Debug)]
pub struct HandoffIo<T = TcpStream> {
    /// `None` once the socket has gone to the rest of its response.
    inner: Option<T>,
    handoff: Rc<Handoff<T>>,
}

impl<T> HandoffIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T) -> Self {
        Self {
            inner: Some(inner),
            handoff: Rc::new(Handoff::new()),
        }
    }

    /// The connection's slot, for its requests.
    pub fn handoff(&self) -> Rc<Handoff<T>> {
        Rc::clone(&self.handoff)
    }

    fn inner(&mut self) -> io::Result<Pin<&mut T>>
    where
        T: Unpin,
    {
        match self.inner.as_mut() {
            Some(inner) => Ok(Pin::new(inner)),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for HandoffIo<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.handoff.stage.get() {
            Stage::Served | Stage::Leaving | Stage::Ending(_) => this.inner()?.poll_read(cx, buf),
            // The end of the client's requests, as the dispatcher sees it: with none left to
            // answer, it shuts the connection down.
            Stage::Left | Stage::Gone => Poll::Ready(Ok(())),
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for HandoffIo<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match this.handoff.stage.get() {
            Stage::Served => this.inner()?.poll_write(cx, buf),
            // The dispatcher writes what it holds from its buffer's start, so the write that
            // holds the last chunk ends with it, however much of the head comes before. Anything
            // else is not the leaving response alone: the answer to a request the client sent
            // behind it. The stream then ends there, as an empty body, and the connection stays
            // with the dispatcher.
            Stage::Leaving => match buf.strip_suffix(LAST_CHUNK).filter(|head| one_head(head)) {
                None => {
                    this.handoff.rest.borrow_mut().take();
                    this.handoff.stage.set(Stage::Served);
                    this.inner()?.poll_write(cx, buf)
                }
                Some(head) => {
                    let written = if head.is_empty() {
                        0
                    } else {
                        ready!(this.inner()?.poll_write(cx, head))?
                    };
                    if written < head.len() {
                        return Poll::Ready(Ok(written));
                    }
                    this.handoff.stage.set(Stage::Left);
                    // The dispatcher waits on the socket; it is woken to read the end.
                    cx.waker().wake_by_ref();
                    Poll::Ready(Ok(buf.len()))
                }
            },
            Stage::Left => {
                this.handoff.rest.borrow_mut().take();
                this.handoff.stage.set(Stage::Ending(0));
                Pin::new(this).poll_write(cx, buf)
            }
            Stage::Ending(mut sent) => {
                while sent < LAST_CHUNK.len() {
                    sent += ready!(this.inner()?.poll_write(cx, &LAST_CHUNK[sent..]))?;
                    this.handoff.stage.set(Stage::Ending(sent));
                }
                this.handoff.stage.set(Stage::Served);
                this.inner()?.poll_write(cx, buf)
            }
            Stage::Gone => Poll::Ready(Err(io::ErrorKind::NotConnected.into())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.handoff.stage.get() {
            Stage::Served | Stage::Leaving | Stage::Ending(_) => this.inner()?.poll_flush(cx),
            Stage::Left | Stage::Gone => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.handoff.stage.get() {
            Stage::Served | Stage::Leaving | Stage::Ending(_) => this.inner()?.poll_shutdown(cx),
            Stage::Left => {
                this.handoff.stage.set(Stage::Gone);
                let rest = this.handoff.rest.borrow_mut().take();
                if let (Some(socket), Some(rest)) = (this.inner.take(), rest) {
                    actix_web::rt::spawn(rest(socket));
                }
                Poll::Ready(Ok(()))
            }
            Stage::Gone => Poll::Ready(Ok(())),
        }
    }
}

/// Whether `bytes`, what is left to write of a response's head before its last chunk, is that
/// alone: a head's lines end with one blank line, at its end, and nothing follows it.
fn one_head(bytes: &[u8]) -> bool {
    bytes
        .windows(4)
        .position(|window| window == b"\r\n\r\n")
        .is_none_or(|end| end + 4 == bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error;
    use std::future::poll_fn;

    /// A socket that records what is written to it, and has nothing to read.
    #[derive(Default)]
    struct Recorder {
        written: Rc<RefCell<Vec<u8>>>,
    }

    impl AsyncRead for Recorder {
        fn poll_read(self: Pin<&mut Self>, _: &mut Context<'_>, _: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
            Poll::Pending
        }
    }

    impl AsyncWrite for Recorder {
        fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
            // At most 7 bytes at a time, as a full socket takes part of a write.
            let taken = buf.len().min(7);
            self.written.borrow_mut().extend_from_slice(&buf[..taken]);
            Poll::Ready(Ok(taken))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Writes `bytes` whole, as the dispatcher does: the rest of its buffer after each write.
    async fn write(io: &mut HandoffIo<Recorder>, bytes: &[u8]) -> io::Result<()> {
        let mut start = 0;
        while start < bytes.len() {
            start += poll_fn(|cx| Pin::new(&mut *io).poll_write(cx, &bytes[start..])).await?;
        }
        Ok(())
    }

    async fn read(io: &mut HandoffIo<Recorder>) -> io::Result<usize> {
        let mut space = [0; 16];
        let mut buf = ReadBuf::new(&mut space);
        poll_fn(|cx| Pin::new(&mut *io).poll_read(cx, &mut buf)).await?;
        Ok(buf.filled().len())
    }

    #[actix_web::test]
    async fn a_leaving_body_keeps_its_last_chunk_back_and_its_socket_goes_to_the_rest()
    -> Result<(), Box<dyn Error>> {
        let recorder = Recorder::default();
        let written = Rc::clone(&recorder.written);
        let mut io = HandoffIo::new(recorder);
        let handoff = io.handoff();
        write(&mut io, b"HTTP/1.1 200 OK\r\n\r\n5\r\nfirst\r\n0\r\n\r\n").await?;
        assert_eq!(
            &written.borrow()[..],
            b"HTTP/1.1 200 OK\r\n\r\n5\r\nfirst\r\n0\r\n\r\n"
        );

        let (sent, received) = tokio::sync::oneshot::channel();
        handoff.leave(move |mut socket: Recorder| {
            Box::pin(async move {
                let _ = write_all(&mut socket, b"4\r\nrest\r\n").await;
                let _ = sent.send(());
            })
        });
        // The head is written; the last chunk, whatever part of a write it ends, is not.
        write(&mut io, b"HTTP/1.1 200 OK\r\nx-count: 0\r\n\r\n0\r\n\r\n").await?;
        assert_eq!(
            read(&mut io).await?,
            0,
            "the dispatcher reads the end of the requests"
        );
        poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx)).await?;
        drop(io);
        received.await?;
        let expected: &[u8] =
            b"HTTP/1.1 200 OK\r\n\r\n5\r\nfirst\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nx-count: 0\r\n\r\n4\r\nrest\r\n";
        assert_eq!(&written.borrow()[..], expected);
        Ok(())
    }

    #[actix_web::test]
    async fn an_answer_behind_a_leaving_body_ends_the_stream_there_and_keeps_the_connection()
    -> Result<(), Box<dyn Error>> {
        let head = b"HTTP/1.1 200 OK\r\nx-count: 0\r\n\r\n";
        let behind = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
        let whole: Vec<u8> = [&head[..], LAST_CHUNK].concat();
        let expected: Vec<u8> = [&whole[..], &behind[..]].concat();
        let left = |calls: Rc<Cell<u32>>| {
            move |_: Recorder| -> LocalBoxFuture<'static, ()> {
                calls.set(calls.get() + 1);
                Box::pin(async {})
            }
        };

        // The answer behind comes in the same write as the stream's head and last chunk.
        let recorder = Recorder::default();
        let written = Rc::clone(&recorder.written);
        let mut io = HandoffIo::new(recorder);
        let calls = Rc::new(Cell::new(0));
        io.handoff().leave(left(Rc::clone(&calls)));
        write(&mut io, &expected).await?;
        assert_eq!(&written.borrow()[..], &expected[..]);
        assert_eq!(io.handoff.stage.get(), Stage::Served);

        // The answer behind comes once the head is written and the last chunk kept back.
        let recorder = Recorder::default();
        let written = Rc::clone(&recorder.written);
        let mut io = HandoffIo::new(recorder);
        io.handoff().leave(left(Rc::clone(&calls)));
        write(&mut io, &whole).await?;
        assert_eq!(&written.borrow()[..], &head[..]);
        write(&mut io, behind).await?;
        assert_eq!(&written.borrow()[..], &expected[..]);
        poll_fn(|cx| Pin::new(&mut io).poll_shutdown(cx)).await?;
        assert_eq!(calls.get(), 0, "the socket never went to the stream");
        assert!(io.handoff.rest.borrow().is_none(), "the stream was let go");
        Ok(())
    }

    async fn write_all(socket: &mut Recorder, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let taken = poll_fn(|cx| Pin::new(&mut *socket).poll_write(cx, bytes)).await?;
            bytes = &bytes[taken..];
        }
        Ok(())
    }
}
