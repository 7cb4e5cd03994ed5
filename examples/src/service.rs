//! A small service that holds a live flag client: it answers `GET /checkout?user=ID&plan=PLAN`
//! with whether `checkout.new` is on for that user and which variant they get, from flags the
//! client keeps current (streaming when the server offers it, else polling).
//!
//! ```text
//! cargo run -p examples --bin service -- http://localhost:4242/api "$BACKEND_TOKEN" [PORT]
//! ```
//!
//! With `FLAGS_BOOTSTRAP=examples/data/flags.json` it answers from that file until the server
//! first answers, so it serves even when the flag server is down.
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::Duration;

use anyhow::{Context as _, bail};
use flag_client::{Client, Event};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, token, rest @ ..] = args.as_slice() else {
        bail!("usage: service URL TOKEN [PORT]");
    };
    let port: u16 = rest.first().map_or(Ok(8080), |port| port.parse())?;

    let mut builder =
        Client::builder(url, token)
            .app_name("checkout-service")
            .on_event(|event| match event {
                Event::Ready(source) => eprintln!("flags ready (from {source:?})"),
                Event::Updated(_) => eprintln!("flags updated"),
                Event::Error(error) => eprintln!("flag client: {error}"),
                Event::Impression(_) => {}
            });
    if let Ok(path) = std::env::var("FLAGS_BOOTSTRAP") {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        builder = builder.bootstrap(serde_json::from_str(&text).context("parsing the bootstrap flags")?);
    }
    let client = builder.build()?;
    if let Err(error) = client.wait_until_ready(Duration::from_secs(10)) {
        eprintln!("serving without flags for now: {error}");
    }

    let listener = TcpListener::bind(("127.0.0.1", port))?;
    eprintln!("listening on http://127.0.0.1:{port}/checkout?user=42&plan=pro");
    for stream in listener.incoming() {
        // One bad connection costs only itself.
        let Ok(stream) = stream else { continue };
        if let Err(error) = answer(&client, stream) {
            eprintln!("a request failed: {error}");
        }
    }
    Ok(())
}

/// Reads one request line and answers it.
fn answer(client: &Client, mut stream: std::net::TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut request_line = String::new();
    BufReader::new(&stream).read_line(&mut request_line)?;
    let target = request_line.split_whitespace().nth(1).unwrap_or("/");
    let query = target.split_once('?').map_or("", |(_, query)| query);
    // This client's appName and environment, the time and a random seed; then the request's.
    let mut context = client.context();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        match name {
            "user" => context.user_id = Some(value.to_owned()),
            _ => context.properties.set(name, value),
        }
    }
    // One atomic load and an evaluation: no lock, no network on the request path.
    let variant = client.variant("checkout.new", &context);
    let body = serde_json::json!({"enabled": variant.feature_enabled, "variant": variant}).to_string();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
