//! The real binary: first start, and graceful shutdown on SIGTERM.

use std::io::Read;
use std::net::TcpListener;
use std::process::{Command, Stdio};
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

#[test]
fn first_start_writes_a_private_token_and_sigterm_stops_cleanly() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let port = free_port()?;
    let mut server = Command::new(env!("CARGO_BIN_EXE_admin-api"))
        .args(["--port", &port.to_string(), "--log-format", "json"])
        .env("DATABASE_URL", dir.path().join("flags.db"))
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
