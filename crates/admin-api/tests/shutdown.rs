//! The real binary: first start, graceful shutdown on SIGTERM, and the error envelope on errors
//! the HTTP parser answers before the application sees the request.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// A minimal HTTP GET over a raw socket; returns the status line.
fn get_status(port: u16, path: &str) -> Option<String> {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    response.lines().next().map(str::to_owned)
}

/// Starts the binary on a free port with a database in `dir` and waits until it is ready.
fn start_server(dir: &Path) -> Result<(Child, u16), Box<dyn std::error::Error>> {
    let port = free_port()?;
    let server = Command::new(env!("CARGO_BIN_EXE_admin-api"))
        .args(["--port", &port.to_string(), "--log-format", "json"])
        .env("DATABASE_URL", dir.join("flags.db"))
        .env_remove("INIT_ADMIN_API_TOKENS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let started = Instant::now();
    while get_status(port, "/ready").is_none_or(|status| !status.contains("200")) {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the server did not become ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((server, port))
}

/// A response read off a raw socket.
#[derive(Debug)]
struct RawResponse {
    status: u16,
    /// Header names lower-cased, values trimmed.
    headers: Vec<(String, String)>,
    body: String,
}

impl RawResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Sends `request` on a new connection and reads one response, framed by its content-length.
///
/// A write error is ignored: the server may answer and close before it has read a request it
/// rejects, and the answer is what the test is about. Reading stops at the end of the body, at
/// the end of the stream, or at an error such as a reset that follows the server's close.
fn exchange(port: u16, request: &[u8]) -> Result<RawResponse, Box<dyn std::error::Error>> {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let _ = stream.write_all(request);
    let mut received = Vec::new();
    let mut buffer = [0; 8192];
    let (head_len, headers, status, body_len) = loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return Err(format!("no whole response in {received:?}").into()),
            Ok(n) => received.extend_from_slice(&buffer[..n]),
        }
        let Some(end) = received.windows(4).position(|window| window == b"\r\n\r\n") else {
            continue;
        };
        let head = std::str::from_utf8(&received[..end])?;
        let mut lines = head.split("\r\n");
        let status_line = lines.next().ok_or("no status line")?;
        let status: u16 = status_line.split(' ').nth(1).ok_or("no status")?.parse()?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        let body_len: usize = headers
            .iter()
            .find(|(name, _)| name == "content-length")
            .ok_or("no content-length")?
            .1
            .parse()?;
        break (end + 4, headers, status, body_len);
    };
    while received.len() < head_len + body_len {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return Err(format!("a short body in {received:?}").into()),
            Ok(n) => received.extend_from_slice(&buffer[..n]),
        }
    }
    Ok(RawResponse {
        status,
        headers,
        body: String::from_utf8(received[head_len..head_len + body_len].to_vec())?,
    })
}

/// Asserts that `response` is a JSON error envelope named `name`, with a UUID v4 for its id.
fn assert_envelope(
    response: &RawResponse,
    name: &str,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    assert_eq!(
        response.header("content-type"),
        Some("application/json"),
        "{response:?}"
    );
    let envelope: serde_json::Value = serde_json::from_str(&response.body)?;
    assert_eq!(envelope["name"], name, "{response:?}");
    let id = uuid::Uuid::parse_str(envelope["id"].as_str().ok_or("no id")?)?;
    assert_eq!(id.get_version_num(), 4, "{response:?}");
    let message = envelope["message"].as_str().ok_or("no message")?;
    assert!(
        message.starts_with(|first: char| first.is_lowercase()) && !message.ends_with('.'),
        "{response:?}"
    );
    Ok(envelope)
}

/// Stops the child when the test ends, passed or failed.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn errors_from_the_http_parser_carry_the_envelope() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (server, port) = start_server(dir.path())?;
    let _server = Running(server);

    // http::Uri refuses a URI over 65,534 bytes, so actix-http answers 400 before the router.
    let long_url = format!(
        "GET /{} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        "a".repeat(100_000)
    );
    let response = exchange(port, long_url.as_bytes())?;
    assert_eq!(response.status, 400, "{response:?}");
    assert_envelope(&response, "ValidationError")?;
    assert_eq!(response.header("connection"), Some("close"), "{response:?}");

    // A request head over 128 KiB gets 431.
    let large_head = format!(
        "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Large: {}\r\nConnection: close\r\n\r\n",
        "b".repeat(200_000)
    );
    let response = exchange(port, large_head.as_bytes())?;
    assert_eq!(response.status, 431, "{response:?}");
    let envelope = assert_envelope(&response, "RequestHeaderFieldsTooLarge")?;
    assert!(
        envelope["message"]
            .as_str()
            .is_some_and(|message| message.contains("128 KiB")),
        "{envelope}"
    );

    // The server still answers, and the application's own answers pass through untouched.
    let response = exchange(
        port,
        b"GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )?;
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&response.body)?,
        serde_json::json!({"health": "GOOD"})
    );
    let response = exchange(
        port,
        b"GET /api/admin/projects HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    )?;
    assert_eq!(response.status, 401, "{response:?}");
    let envelope = assert_envelope(&response, "AuthenticationRequired")?;
    assert_eq!(
        envelope["message"],
        "you must log in or give an API token in the Authorization header"
    );
    Ok(())
}

#[test]
fn first_start_writes_a_private_token_and_sigterm_stops_cleanly() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (mut server, _) = start_server(dir.path())?;

    let token_file = dir.path().join("admin-token");
    let token = std::fs::read_to_string(&token_file)?;
    assert!(token.starts_with("*:*."), "{token}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&token_file)?.permissions().mode() & 0o777,
            0o600
        );
    }

    let status = Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()?;
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = server.try_wait()? {
            break exit;
        }
        assert!(Instant::now() < deadline, "the server did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(exit.success(), "exit status {exit}");

    let mut logs = String::new();
    server.stdout.take().ok_or("stdout")?.read_to_string(&mut logs)?;
    let mut errors = String::new();
    server
        .stderr
        .take()
        .ok_or("stderr")?
        .read_to_string(&mut errors)?;
    logs.push_str(&errors);
    assert!(logs.contains("admin-token"), "the token file's path is logged");
    let secret = token.trim().trim_start_matches("*:*.");
    assert!(!logs.contains(secret), "the token itself is never logged");
    assert!(logs.contains("shutting down"), "{logs}");
    Ok(())
}
