//! The fan-out benchmark's client (run by `scripts/stream-bench`): opens `--streams` SSE streams
//! on `/api/client/streaming`, then switches `--flag` once per `--interval-ms`, `--writes` times,
//! through the admin API, and measures the time from each write to its delivery on every
//! stream. It prints one JSON document: the delays (p50, p99, max), and every stream that lost,
//! repeated or reordered an event, or failed; it exits non-zero when any did.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, watch};

type Error = Box<dyn std::error::Error + Send + Sync>;

struct Options {
    address: String,
    /// Where the writes go: the server, or the upstream of the edge the streams read.
    admin_address: Option<String>,
    /// Loopback source addresses the streams are spread over (127.0.0.1 up), each giving
    /// its own range of source ports, for more streams than one address has ports.
    sources: u8,
    token: String,
    admin: String,
    flag: String,
    streams: usize,
    writes: usize,
    interval: Duration,
}

fn options() -> Result<Options, Error> {
    let mut options = Options {
        address: "127.0.0.1:4242".into(),
        admin_address: None,
        sources: 1,
        token: String::new(),
        admin: String::new(),
        flag: String::new(),
        streams: 10_000,
        writes: 60,
        interval: Duration::from_secs(1),
    };
    let mut args = std::env::args().skip(1);
    while let Some(name) = args.next() {
        let value = args.next().ok_or_else(|| format!("{name} needs a value"))?;
        match name.as_str() {
            "--address" => options.address = value,
            "--admin-address" => options.admin_address = Some(value),
            "--sources" => options.sources = value.parse::<u8>()?.max(1),
            "--token" => options.token = value,
            "--admin" => options.admin = value,
            "--flag" => options.flag = value,
            "--streams" => options.streams = value.parse()?,
            "--writes" => options.writes = value.parse()?,
            "--interval-ms" => options.interval = Duration::from_millis(value.parse()?),
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    if options.token.is_empty() || options.admin.is_empty() || options.flag.is_empty() {
        return Err("usage: stream-fanout --address HOST:PORT --token T --admin A --flag F [--streams N] [--writes N] [--interval-ms MS] [--admin-address HOST:PORT] [--sources N]".into());
    }
    Ok(options)
}

/// What one stream received: the id and arrival of each `unleash-updated` event.
#[derive(Debug, Default)]
struct Received {
    updates: Vec<(i64, Instant)>,
    failure: Option<String>,
}

/// An HTTP/1.1 chunked body decoded as it arrives, split into SSE events.
#[derive(Default)]
struct Decoder {
    raw: Vec<u8>,
    text: Vec<u8>,
    chunk_left: usize,
    crlf_due: bool,
    ended: bool,
}

impl Decoder {
    fn decode(&mut self) -> Result<(), Error> {
        loop {
            if self.chunk_left > 0 {
                let take = self.chunk_left.min(self.raw.len());
                self.text.extend_from_slice(&self.raw[..take]);
                self.raw.drain(..take);
                self.chunk_left -= take;
                if self.chunk_left > 0 {
                    return Ok(());
                }
                self.crlf_due = true;
            }
            if self.crlf_due {
                if self.raw.len() < 2 {
                    return Ok(());
                }
                self.raw.drain(..2);
                self.crlf_due = false;
            }
            let Some(end) = self.raw.windows(2).position(|pair| pair == b"\r\n") else {
                return Ok(());
            };
            let size = usize::from_str_radix(std::str::from_utf8(&self.raw[..end])?.trim(), 16)?;
            self.raw.drain(..end + 2);
            if size == 0 {
                self.ended = true;
                return Ok(());
            }
            self.chunk_left = size;
        }
    }

    /// The next complete event, its name and id, skipping comments (heartbeats).
    fn event(&mut self) -> Option<(String, Option<i64>)> {
        let mut block: Vec<u8>;
        loop {
            let end = self.text.windows(2).position(|pair| pair == b"\n\n")?;
            block = self.text.drain(..end + 2).collect();
            if !block.starts_with(b":") {
                break;
            }
        }
        let mut name = String::from("message");
        let mut id = None;
        for line in block.split(|&byte| byte == b'\n') {
            if let Some(value) = line.strip_prefix(b"event: ") {
                name = String::from_utf8_lossy(value).into_owned();
            } else if let Some(value) = line.strip_prefix(b"id: ") {
                id = std::str::from_utf8(value)
                    .ok()
                    .and_then(|value| value.parse().ok());
            }
        }
        Some((name, id))
    }
}

/// One stream: connects, reads the opening, reports it, then records every update until `stop`.
async fn follow(
    index: usize,
    options: Arc<Options>,
    opening: Arc<Semaphore>,
    connected: Arc<AtomicUsize>,
    mut stop: watch::Receiver<bool>,
) -> Received {
    let mut received = Received::default();
    if let Err(error) = follow_inner(index, &options, &opening, &connected, &mut stop, &mut received).await {
        received.failure = Some(error.to_string());
    }
    received
}

async fn follow_inner(
    index: usize,
    options: &Options,
    opening: &Semaphore,
    connected: &AtomicUsize,
    stop: &mut watch::Receiver<bool>,
    received: &mut Received,
) -> Result<(), Error> {
    let permit = opening.acquire().await?;
    let source = u8::try_from(index % usize::from(options.sources)).unwrap_or(0);
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1 + source], 0)))?;
    let address = tokio::net::lookup_host(&options.address)
        .await?
        .next()
        .ok_or("the address names no host")?;
    let mut stream = socket.connect(address).await?;
    let request = format!(
        "GET /api/client/streaming HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nAccept: text/event-stream\r\nUnleash-Client-Spec: 5.2.0\r\n\r\n",
        options.address, options.token
    );
    stream.write_all(request.as_bytes()).await?;
    let mut decoder = Decoder::default();
    let mut buffer = vec![0; 16 * 1024];
    // The head.
    loop {
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Err("closed before the head".into());
        }
        decoder.raw.extend_from_slice(&buffer[..read]);
        if let Some(end) = decoder.raw.windows(4).position(|four| four == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&decoder.raw[..end]).into_owned();
            if !head.starts_with("HTTP/1.1 200") {
                return Err(format!("refused: {}", head.lines().next().unwrap_or_default()).into());
            }
            decoder.raw.drain(..end + 4);
            break;
        }
    }
    // The opening, while holding an opening slot: at most 256 streams are opening at once.
    loop {
        decoder.decode()?;
        if let Some((name, _)) = decoder.event() {
            if name != "unleash-connected" {
                return Err(format!("opened with {name}").into());
            }
            break;
        }
        if decoder.ended {
            return Err("the stream ended".into());
        }
        let read = stream.read(&mut buffer).await?;
        if read == 0 {
            return Err("the server closed the stream".into());
        }
        decoder.raw.extend_from_slice(&buffer[..read]);
    }
    drop(permit);
    connected.fetch_add(1, Ordering::Relaxed);
    // An open stream idles with small buffers.
    buffer.truncate(4096);
    buffer.shrink_to_fit();
    follow_open(stream, decoder, buffer, stop, received).await
}

/// The rest of a stream's life once open, without its opening slot.
async fn follow_open(
    mut stream: TcpStream,
    mut decoder: Decoder,
    mut buffer: Vec<u8>,
    stop: &mut watch::Receiver<bool>,
    received: &mut Received,
) -> Result<(), Error> {
    decoder.raw.shrink_to_fit();
    decoder.text.shrink_to_fit();
    loop {
        decoder.decode()?;
        while let Some((name, id)) = decoder.event() {
            match name.as_str() {
                "unleash-updated" => received
                    .updates
                    .push((id.ok_or("an update without an id")?, Instant::now())),
                other => return Err(format!("unexpected event {other}").into()),
            }
        }
        if decoder.ended {
            return Err("the stream ended".into());
        }
        tokio::select! {
            read = stream.read(&mut buffer) => {
                let read = read?;
                if read == 0 {
                    return Err("the server closed the stream".into());
                }
                decoder.raw.extend_from_slice(&buffer[..read]);
            }
            _ = stop.changed() => return Ok(()),
        }
    }
}

/// Switches the flag through the admin API; returns when the server has answered.
async fn switch(options: &Options, on: bool) -> Result<(), Error> {
    let address = options.admin_address.as_deref().unwrap_or(&options.address);
    let mut stream = TcpStream::connect(address).await?;
    let path = format!(
        "/api/admin/projects/default/features/{}/environments/development/{}",
        options.flag,
        if on { "on" } else { "off" }
    );
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: {}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        options.admin
    );
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    let answer = String::from_utf8_lossy(&answer);
    if !answer.starts_with("HTTP/1.1 200") {
        return Err(format!("switching {path}: {}", answer.lines().next().unwrap_or_default()).into());
    }
    Ok(())
}

fn percentile(sorted: &[Duration], fraction: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Error> {
    let options = Arc::new(options()?);
    // A known state first, so that every measured write changes what SDKs see.
    switch(&options, false).await?;
    if options.admin_address.is_some() {
        // The streams read an edge, which follows the write a moment later: they open after it,
        // so that every event they get is one of the measured writes.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    let opening = Arc::new(Semaphore::new(256));
    let connected = Arc::new(AtomicUsize::new(0));
    let (stop_sender, stop) = watch::channel(false);
    let began = Instant::now();
    let tasks: Vec<_> = (0..options.streams)
        .map(|index| {
            tokio::spawn(follow(
                index,
                Arc::clone(&options),
                Arc::clone(&opening),
                Arc::clone(&connected),
                stop.clone(),
            ))
        })
        .collect();
    while connected.load(Ordering::Relaxed) < options.streams {
        if began.elapsed() > Duration::from_secs(300) {
            return Err(format!(
                "only {} of {} streams opened in 300 s",
                connected.load(Ordering::Relaxed),
                options.streams
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let open_seconds = began.elapsed().as_secs_f64();
    eprintln!(
        "stream-fanout: {} streams open in {open_seconds:.1} s",
        options.streams
    );

    let mut written = Vec::with_capacity(options.writes);
    let mut ticker = tokio::time::interval(options.interval);
    for write in 0..options.writes {
        ticker.tick().await;
        written.push(Instant::now());
        switch(&options, write % 2 == 0).await?;
    }
    // The last write gets time to arrive everywhere.
    tokio::time::sleep(Duration::from_secs(5)).await;
    stop_sender.send_replace(true);

    let mut delays = Vec::with_capacity(options.streams * options.writes);
    let mut failures = Vec::new();
    let mut reference: Option<Vec<i64>> = None;
    let mut irregular = 0usize;
    for task in tasks {
        let received = task.await?;
        if let Some(failure) = received.failure {
            failures.push(failure);
            continue;
        }
        let ids: Vec<i64> = received.updates.iter().map(|(id, _)| *id).collect();
        let increasing = ids.windows(2).all(|pair| pair[0] < pair[1]);
        let same = reference.get_or_insert_with(|| ids.clone()) == &ids;
        if ids.len() != options.writes || !increasing || !same {
            irregular += 1;
            continue;
        }
        for ((_, at), sent) in received.updates.iter().zip(&written) {
            delays.push(at.saturating_duration_since(*sent));
        }
    }
    delays.sort_unstable();
    failures.sort();
    failures.dedup();
    let ok = failures.is_empty() && irregular == 0 && delays.len() == options.streams * options.writes;
    println!(
        "{}",
        serde_json::json!({
            "streams": options.streams,
            "writes": options.writes,
            "openSeconds": (open_seconds * 10.0).round() / 10.0,
            "deliveries": delays.len(),
            "delayMs": {
                "p50": percentile(&delays, 0.50),
                "p99": percentile(&delays, 0.99),
                "max": percentile(&delays, 1.0),
            },
            "streamsLostRepeatedOrReordered": irregular,
            "failures": failures,
            "ok": ok,
        })
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
