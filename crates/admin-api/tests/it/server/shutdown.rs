//! The real binary: first start, graceful shutdown on SIGTERM, and the error envelope on errors
//! the HTTP parser answers before the application sees the request.

use std::io::Read;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::process::{Running, assert_envelope, exchange, start_server, start_server_with};

#[test]
fn errors_from_the_http_parser_carry_the_envelope() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = flag_store::scratch::Scratch::new()?;
    let (server, port) = start_server(&scratch)?;
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
    let scratch = flag_store::scratch::Scratch::new()?;
    let (mut server, port) = start_server(&scratch)?;

    // The first admin user's generated password, beside the token, private, and it signs in.
    let password_file = scratch
        .directory()
        .join(scratch.config.database.local_directory())
        .join("admin-password");
    let password = std::fs::read_to_string(&password_file)?.trim().to_owned();
    assert!(
        flag_admin::identity::password::broken_rules(&password).is_empty(),
        "{password}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&password_file)?.permissions().mode() & 0o777,
            0o600
        );
    }
    let login = format!(r#"{{"username":"admin","password":"{password}"}}"#);
    let response = exchange(
        port,
        format!(
            "POST /auth/simple/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{login}",
            login.len()
        )
        .as_bytes(),
    )?;
    assert_eq!(response.status, 200, "{response:?}");

    // Next to an SQLite file; in ./data, under the server's working directory, on PostgreSQL.
    let token_file = scratch
        .directory()
        .join(scratch.config.database.local_directory())
        .join("admin-token");
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
    assert!(
        logs.contains("admin-password"),
        "the password file's path is logged"
    );
    assert!(!logs.contains(&password), "the password itself is never logged");
    // Once it listens, the log tells a person where to go.
    assert!(
        logs.contains(&format!(
            "open http://127.0.0.1:{port}/ and sign in as admin; the password is in "
        )),
        "{logs}"
    );
    assert!(logs.contains("shutting down"), "{logs}");
    Ok(())
}

/// `UNLEASH_DEFAULT_ADMIN_USERNAME` and `UNLEASH_DEFAULT_ADMIN_PASSWORD` make the first admin, no
/// password file is written, and a later start with other values changes nothing.
#[test]
fn the_first_admin_takes_unleash_s_settings_once() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = flag_store::scratch::Scratch::new()?;
    let login = |port: u16, username: &str, password: &str| -> Result<u16, Box<dyn std::error::Error>> {
        let body = format!(r#"{{"username":"{username}","password":"{password}"}}"#);
        let request = format!(
            "POST /auth/simple/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        Ok(exchange(port, request.as_bytes())?.status)
    };
    {
        let (server, port) = start_server_with(
            &scratch,
            &[],
            &[
                ("UNLEASH_DEFAULT_ADMIN_USERNAME", "root"),
                ("UNLEASH_DEFAULT_ADMIN_PASSWORD", "Chosen-Passw0rd"),
            ],
        )?;
        let _server = Running(server);
        assert_eq!(login(port, "root", "Chosen-Passw0rd")?, 200);
    }
    let password_file = scratch
        .directory()
        .join(scratch.config.database.local_directory())
        .join("admin-password");
    assert!(
        !password_file.exists(),
        "a password file was written for a given password"
    );
    let (server, port) = start_server_with(
        &scratch,
        &[],
        &[
            ("UNLEASH_DEFAULT_ADMIN_USERNAME", "other"),
            ("UNLEASH_DEFAULT_ADMIN_PASSWORD", "Other-Passw0rd"),
        ],
    )?;
    let _server = Running(server);
    assert_eq!(
        login(port, "other", "Other-Passw0rd")?,
        401,
        "a second admin was made"
    );
    assert_eq!(login(port, "root", "Chosen-Passw0rd")?, 200);
    Ok(())
}

/// A `DATABASE_URL` naming neither backend stops the start with the accepted forms, instead of
/// becoming an SQLite file; an unreachable PostgreSQL stops it with libpq's reason, and the
/// password appears nowhere in what the server prints.
#[test]
fn bad_database_urls_stop_the_start_with_a_clear_message_and_no_password()
-> Result<(), Box<dyn std::error::Error>> {
    let scratch = flag_store::scratch::Scratch::new()?;
    let run = |url: &str| {
        crate::common::process::server_command(&scratch)
            .env("DATABASE_URL", url)
            .env_remove("DATABASE_SCHEMA")
            .args(["--port", "1"])
            .output()
    };
    let refused = run("mysql://root:hunter2-secret@db/unleash")?;
    assert!(!refused.status.success());
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.contains("unsupported database URL scheme `mysql`")
            && message.contains("postgres://")
            && message.contains("sqlite://"),
        "{message}"
    );
    assert!(
        !scratch.directory().join("mysql:").exists(),
        "a file database was made from the URL"
    );

    let unreachable = run("postgres://halyard:hunter2-secret@127.0.0.1:1/unleash?connect_timeout=5")?;
    assert!(!unreachable.status.success());
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&unreachable.stdout),
        String::from_utf8_lossy(&unreachable.stderr)
    );
    assert!(
        printed.contains("postgres://halyard:***@127.0.0.1:1/unleash"),
        "{printed}"
    );
    assert!(printed.contains("Connection refused"), "{printed}");
    for output in [&refused, &unreachable] {
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(!all.contains("hunter2"), "the password was printed: {all}");
    }
    Ok(())
}
