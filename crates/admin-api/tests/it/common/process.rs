//! The real binary, started on a free port: raw exchanges for what only a real socket shows.

use flag_store::scratch::Scratch;
use serde_json::Value;
use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A port nothing listens on, never one handed out before in this test binary: servers are
/// started on ports found this way after the probe closes, and two tests given the same port would
/// each find the other's server ready.
pub fn free_port() -> std::io::Result<u16> {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let mut given = GIVEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !given.contains(&port) {
            given.push(port);
            return Ok(port);
        }
    }
}

/// A minimal HTTP GET over a raw socket; returns the status line.
pub fn get_status(port: u16, path: &str) -> Option<String> {
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

/// `method` `url` with `token`, and `body` as JSON; the status and the JSON answer (a string when
/// it is not JSON).
pub fn call(
    method: &str,
    url: &str,
    token: &str,
    body: Option<Value>,
) -> Result<(u16, Value), Box<dyn std::error::Error>> {
    let agent = agent();
    let mut response = match (method, body) {
        ("GET", _) => agent.get(url).header("Authorization", token).call()?,
        ("DELETE", _) => agent.delete(url).header("Authorization", token).call()?,
        ("PATCH", body) => agent
            .patch(url)
            .header("Authorization", token)
            .send_json(body.unwrap_or(Value::Null))?,
        ("PUT", body) => agent
            .put(url)
            .header("Authorization", token)
            .send_json(body.unwrap_or(Value::Null))?,
        (_, Some(body)) => agent.post(url).header("Authorization", token).send_json(&body)?,
        (_, None) => agent.post(url).header("Authorization", token).send_empty()?,
    };
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string()?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
}

/// As [`call`], failing unless the answer's status is `status`; the JSON answer.
pub fn expect(
    method: &str,
    url: &str,
    token: &str,
    body: Option<Value>,
    status: u16,
) -> Result<Value, Box<dyn std::error::Error>> {
    let (got, answer) = call(method, url, token, body)?;
    if got != status {
        return Err(format!("{method} {url}: {got} {answer}").into());
    }
    Ok(answer)
}

/// Starts the binary on a free port on the scratch database and waits until it is ready.
pub fn start_server(scratch: &Scratch) -> Result<(Child, u16), Box<dyn std::error::Error>> {
    start_server_with(scratch, &["--log-format", "json"], &[])
}

/// An HTTP client for the real binary: statuses are answers, not errors; 30 s at most.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// The binary, with no `DATABASE_*` or `INIT_*` variables of the caller's.
pub fn binary_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_halyard"));
    for (name, _) in std::env::vars_os() {
        if name
            .to_str()
            .is_some_and(|name| name.starts_with("DATABASE_") || name.starts_with("INIT_"))
        {
            command.env_remove(name);
        }
    }
    command
}

/// The binary as the tests run it: on the scratch database, in the scratch directory (where it
/// writes local files such as the generated admin token), with no `DATABASE_*` or `INIT_*`
/// variables of the caller's.
pub fn server_command(scratch: &Scratch) -> Command {
    let mut command = binary_command();
    command
        .current_dir(scratch.directory())
        .envs(scratch.server_environment());
    command
}

/// As [`start_server`], with more options and environment variables.
pub fn start_server_with(
    scratch: &Scratch,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(Child, u16), Box<dyn std::error::Error>> {
    start_server_on(free_port()?, scratch, args, env)
}

/// As [`start_server_with`], on `port`, for a server whose configuration names its own URL.
pub fn start_server_on(
    port: u16,
    scratch: &Scratch,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<(Child, u16), Box<dyn std::error::Error>> {
    let server = server_command(scratch)
        .args(["--port", &port.to_string()])
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut server = server;
    let started = Instant::now();
    while get_status(port, "/ready").is_none_or(|status| !status.contains("200")) {
        let exited = server.try_wait()?;
        if exited.is_some() || started.elapsed() > Duration::from_secs(30) {
            let _ = server.kill();
            let mut errors = String::new();
            if let Some(mut stderr) = server.stderr.take() {
                let _ = stderr.read_to_string(&mut errors);
            }
            return Err(format!("the server did not become ready ({exited:?}): {errors}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok((server, port))
}

/// The peak resident memory of process `pid` so far (`VmHWM`), in KiB.
pub fn peak_memory_kib(pid: u32) -> Result<u64, Box<dyn std::error::Error>> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .ok_or("no VmHWM in /proc status")?;
    Ok(line.split_whitespace().nth(1).ok_or("no VmHWM value")?.parse()?)
}

/// A response read off a raw socket.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    /// Header names lower-cased, values trimmed.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
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
pub fn exchange(port: u16, request: &[u8]) -> Result<RawResponse, Box<dyn std::error::Error>> {
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
    // A HEAD answer states the length of the body it leaves out: whatever arrives before the
    // server closes the connection is the body, and must be nothing.
    if request.starts_with(b"HEAD ") {
        while let Ok(read @ 1..) = stream.read(&mut buffer) {
            received.extend_from_slice(&buffer[..read]);
        }
        return Ok(RawResponse {
            status,
            headers,
            body: String::from_utf8(received[head_len..].to_vec())?,
        });
    }
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
pub fn assert_envelope(
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
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A real OpenID provider (`tests/sdk/oidc-provider.mjs`, the `oidc-provider` package under
/// Node) on a free loopback port, with client `halyard` registered for the server at `base`.
pub struct OidcProvider {
    /// Its issuer URL.
    pub issuer: String,
    _process: Running,
}

impl OidcProvider {
    /// Starts it; fails, saying what to run, when Node or the package is missing.
    pub fn start(base: &str) -> Result<Self, Box<dyn std::error::Error>> {
        use std::io::BufRead;
        let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk");
        if !directory.join("node_modules/oidc-provider").exists() {
            return Err(format!(
                "oidc-provider is not installed: run `npm ci` in {} (./scripts/test does)",
                directory.display()
            )
            .into());
        }
        let mut child = Command::new("node")
            .arg("oidc-provider.mjs")
            .current_dir(&directory)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| format!("node could not start the OpenID provider: {error}"))?;
        let stdout = child.stdout.take().ok_or("the provider has no stdout")?;
        let process = Running(child);
        let mut line = String::new();
        let mut reader = std::io::BufReader::new(stdout);
        reader.read_line(&mut line)?;
        // Whatever it prints later is read and dropped, so that it never writes to a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let issuer = line
            .trim()
            .strip_prefix("issuer ")
            .ok_or_else(|| format!("the OpenID provider did not start: {line:?}"))?
            .to_owned();
        let provider = Self {
            issuer,
            _process: process,
        };
        provider.control(&format!("/__test/client?base={base}"))?;
        Ok(provider)
    }

    /// Calls one of its test controls (see the script).
    pub fn control(&self, path_and_query: &str) -> Result<(), Box<dyn std::error::Error>> {
        let status = ureq::post(format!("{}{path_and_query}", self.issuer))
            .send_empty()?
            .status()
            .as_u16();
        if status != 204 {
            return Err(format!("the provider's control {path_and_query} answered {status}").into());
        }
        Ok(())
    }
}
