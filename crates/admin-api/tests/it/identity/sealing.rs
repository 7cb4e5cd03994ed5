//! The operator's key for readable secrets, on the real binary: a missing or malformed key
//! stops the start, a wrong one too, and `halyard rotate-secrets-key` moves every secret to a
//! new key, after which Terraform still finds its token by its secret.

use serde_json::json;

use crate::common::process::{expect, server_command, start_server_with};

const ADMIN: &str = "*:*.sealing-test-admin-secret";
const KEY: &str = "8f1e0c2d3b4a59687766554433221100ffeeddccbbaa99887766554433221100";
const NEW_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/// Runs the binary to its end with `env` and `args`; its success and what it printed.
fn run(
    scratch: &flag_store::scratch::Scratch,
    env: &[(&str, &str)],
    args: &[&str],
) -> std::io::Result<(bool, String)> {
    let output = server_command(scratch)
        .envs(env.iter().copied())
        .env("INIT_ADMIN_API_TOKENS", ADMIN)
        .args(args)
        .output()?;
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Ok((output.status.success(), printed))
}

#[test]
fn the_key_is_checked_at_start_and_rotated_by_a_command() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = flag_store::scratch::Scratch::new()?;
    let missing = scratch.directory().join("no-such-key");
    let missing = missing.to_string_lossy();
    let (started, printed) = run(
        &scratch,
        &[("HALYARD_SECRETS_KEY_FILE", &missing)],
        &["--port", "1"],
    )?;
    assert!(
        !started && printed.contains("HALYARD_SECRETS_KEY_FILE"),
        "{printed}"
    );
    let (started, printed) = run(&scratch, &[("HALYARD_SECRETS_KEY", "not-hex")], &["--port", "1"])?;
    assert!(!started && printed.contains("64 hex digits"), "{printed}");
    assert!(!printed.contains("not-hex"), "the key was printed: {printed}");

    let key_file = scratch.directory().join("secrets.key");
    std::fs::write(&key_file, format!("{KEY}\n"))?;
    let key_file = key_file.to_string_lossy().into_owned();
    let keyed = [
        ("HALYARD_SECRETS_KEY_FILE", key_file.as_str()),
        ("INIT_ADMIN_API_TOKENS", ADMIN),
    ];
    let (mut server, port) = start_server_with(&scratch, &[], &keyed)?;
    let base = format!("http://127.0.0.1:{port}");
    let created = expect(
        "POST",
        &format!("{base}/api/admin/api-tokens"),
        ADMIN,
        Some(json!({"tokenName": "terraform", "type": "client", "environment": "development"})),
        201,
    )?;
    let secret = created["secret"].as_str().ok_or("no secret")?.to_owned();
    let listed = expect("GET", &format!("{base}/api/admin/api-tokens"), ADMIN, None, 200)?;
    let found = listed["tokens"]
        .as_array()
        .is_some_and(|tokens| tokens.iter().any(|token| token["secret"] == secret.as_str()));
    assert!(found, "the token is not found by its secret: {listed}");
    server.kill()?;
    server.wait()?;

    // Another key is refused; the rotation needs the current one and moves every secret.
    let (started, printed) = run(&scratch, &[("HALYARD_SECRETS_KEY", NEW_KEY)], &["--port", "1"])?;
    assert!(!started && printed.contains("rotate-secrets-key"), "{printed}");
    let (rotated, printed) = run(
        &scratch,
        &[
            ("HALYARD_SECRETS_KEY_FILE", &key_file),
            ("HALYARD_NEW_SECRETS_KEY", NEW_KEY),
        ],
        &["rotate-secrets-key"],
    )?;
    assert!(rotated && printed.contains("sealed 1 secrets"), "{printed}");
    let (mut server, port) = start_server_with(
        &scratch,
        &[],
        &[("HALYARD_SECRETS_KEY", NEW_KEY), ("INIT_ADMIN_API_TOKENS", ADMIN)],
    )?;
    let listed = expect(
        "GET",
        &format!("http://127.0.0.1:{port}/api/admin/api-tokens"),
        ADMIN,
        None,
        200,
    )?;
    server.kill()?;
    server.wait()?;
    let found = listed["tokens"]
        .as_array()
        .is_some_and(|tokens| tokens.iter().any(|token| token["secret"] == secret.as_str()));
    assert!(
        found,
        "after the rotation the token is not found by its secret: {listed}"
    );
    Ok(())
}
