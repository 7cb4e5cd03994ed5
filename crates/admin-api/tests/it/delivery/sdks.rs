//! The official SDKs against the real server: Unleash's Node SDK (`unleash-client`) in its
//! default configuration, in streaming mode and polling the delta API; the Python SDK
//! (`UnleashClient`) in streaming mode; and the browser SDK (`unleash-proxy-client`) run in Node.
//! The Node packages are pinned in `tests/sdk/package.json` and installed from the npm registry on
//! first use, the Python ones in `tests/sdk/requirements.txt`, from PyPI into `tests/sdk/.venv`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use flag_store::scratch::Scratch;
use serde_json::{Value, json};

use crate::common::process::{Running, free_port, start_server_on, start_server_with};

const ADMIN: &str = "*:*.sdk-test-admin-secret";
const BACKEND: &str = "*:development.sdk-test-backend-secret";
const FRONTEND: &str = "*:development.sdk-test-frontend-secret";
const FLAGS: [&str; 4] = ["everyone", "pro-only", "switched-off", "no-such-flag"];

/// Serialises the first `npm ci` between tests.
static INSTALL: Mutex<()> = Mutex::new(());

/// The SDK directory, with its packages installed.
fn sdk_directory() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk");
    let _guard = INSTALL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !directory.join("node_modules/unleash-client").exists()
        || !directory.join("node_modules/unleash-proxy-client").exists()
    {
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&directory)
            .status()
            .map_err(|error| {
                format!("the SDK tests need Node.js and npm (scripts/test installs them): npm: {error}")
            })?;
        if !status.success() {
            return Err(format!("npm ci in {} failed: {status}", directory.display()).into());
        }
    }
    Ok(directory)
}

/// The Python of the SDK directory's virtual environment, with the Python SDK installed from
/// `requirements.txt`.
fn python() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk");
    let venv = directory.join(".venv");
    let python = venv.join("bin/python");
    let _guard = INSTALL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !venv.join("installed").exists() {
        let status = Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv)
            .status()
            .map_err(|error| {
                format!("the Python SDK test needs python3 with venv (scripts/test installs it): {error}")
            })?;
        if !status.success() {
            return Err(format!("python3 -m venv {} failed: {status}", venv.display()).into());
        }
        let status = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(directory.join("requirements.txt"))
            .status()?;
        if !status.success() {
            return Err(format!(
                "installing the Python SDK into {} failed: {status}",
                venv.display()
            )
            .into());
        }
        std::fs::write(venv.join("installed"), "")?;
    }
    Ok(python)
}

/// Runs `script` with Node and the given environment; returns its JSON line.
fn run_node(script: &str, env: &[(&str, String)]) -> Result<Value, Box<dyn std::error::Error>> {
    let directory = sdk_directory()?;
    let mut command = Command::new("node");
    command.arg(script);
    run_script(command, &directory, script, env)
        .map_err(|error| format!("the SDK tests need Node.js (scripts/test installs it): {error}").into())
}

/// Runs `script` with the Python SDK's virtual environment; returns its JSON line.
fn run_python(script: &str, env: &[(&str, String)]) -> Result<Value, Box<dyn std::error::Error>> {
    let mut command = Command::new(python()?);
    command.arg(script);
    run_script(
        command,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk"),
        script,
        env,
    )
}

/// Runs `command` (naming `script`) in `directory` with the given environment; returns its last
/// line of output as JSON.
fn run_script(
    mut command: Command,
    directory: &Path,
    script: &str,
    env: &[(&str, String)],
) -> Result<Value, Box<dyn std::error::Error>> {
    let output = command
        .current_dir(directory)
        .envs(env.iter().map(|(name, value)| (*name, value.as_str())))
        .output()
        .map_err(|error| format!("{script}: {error}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{script} failed ({}): {stderr}{stdout}", output.status).into());
    }
    let line = stdout
        .lines()
        .last()
        .ok_or_else(|| format!("{script} printed nothing: {stderr}"))?;
    Ok(serde_json::from_str(line)?)
}

struct Server {
    base: String,
    agent: ureq::Agent,
    /// The server process, when this value started it.
    _running: Option<Running>,
    _scratch: Option<Scratch>,
}

impl Server {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let scratch = Scratch::new()?;
        let (child, port) = start_server_with(
            &scratch,
            &["--log-format", "json"],
            &[
                ("INIT_ADMIN_API_TOKENS", ADMIN),
                ("INIT_BACKEND_API_TOKENS", BACKEND),
                ("INIT_FRONTEND_API_TOKENS", FRONTEND),
            ],
        )?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Ok(Self {
            base: format!("http://127.0.0.1:{port}"),
            agent,
            _running: Some(Running(child)),
            _scratch: Some(scratch),
        })
    }

    /// A client of the server at `base`, started by the caller.
    fn at(base: String) -> Self {
        Self {
            base,
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .into(),
            _running: None,
            _scratch: None,
        }
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), Box<dyn std::error::Error>> {
        let url = format!("{}{path}", self.base);
        let mut response = match body {
            None => self.agent.get(&url).header("Authorization", ADMIN).call()?,
            Some(body) if method == "PUT" => self
                .agent
                .put(&url)
                .header("Authorization", ADMIN)
                .send_json(&body)?,
            Some(body) => self
                .agent
                .post(&url)
                .header("Authorization", ADMIN)
                .send_json(&body)?,
        };
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string()?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    fn expect(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        status: u16,
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let (got, answer) = self.call(method, path, body)?;
        if got != status {
            return Err(format!("{method} {path}: {got} {answer}").into());
        }
        Ok(answer)
    }

    /// `everyone` on for all, `pro-only` on for `plan=pro` with the variant `gold`, and
    /// `switched-off` off, in development.
    fn demo_flags(&self) -> Result<(), Box<dyn std::error::Error>> {
        let base = "/api/admin/projects/default/features";
        for name in ["everyone", "pro-only", "switched-off"] {
            self.expect("POST", base, Some(json!({"name": name})), 201)?;
        }
        let environment = |name: &str| format!("{base}/{name}/environments/development");
        self.expect(
            "POST",
            &format!("{}/strategies", environment("everyone")),
            Some(json!({"name": "default"})),
            200,
        )?;
        let pro = json!({"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "default", "groupId": "pro-only"},
            "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
            "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default",
                          "payload": {"type": "json", "value": "{\"tier\":1}"}}]});
        self.expect(
            "POST",
            &format!("{}/strategies", environment("pro-only")),
            Some(pro),
            200,
        )?;
        self.expect(
            "POST",
            &format!("{}/strategies", environment("switched-off")),
            Some(json!({"name": "default"})),
            200,
        )?;
        for name in ["everyone", "pro-only"] {
            self.expect("POST", &format!("{}/on", environment(name)), Some(json!({})), 200)?;
        }
        Ok(())
    }

    /// What the playground says of `flag` for `context` in development: (enabled, variant).
    fn played(&self, flag: &str, context: &Value) -> Result<(bool, String), Box<dyn std::error::Error>> {
        let answer = self.expect(
            "POST",
            "/api/admin/playground",
            Some(json!({"environment": "development", "context": context})),
            200,
        )?;
        let feature = answer["features"]
            .as_array()
            .and_then(|features| features.iter().find(|feature| feature["name"] == flag))
            .cloned()
            .unwrap_or(Value::Null);
        Ok((
            feature["isEnabled"].as_bool().unwrap_or(false),
            feature["variant"]["name"]
                .as_str()
                .unwrap_or("disabled")
                .to_owned(),
        ))
    }
}

#[test]
fn the_node_sdk_runs_clean_and_its_counts_show_exactly() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::start()?;
    server.demo_flags()?;
    let result = run_node(
        "node-sdk.mjs",
        &[
            ("HALYARD_URL", server.base.clone()),
            ("HALYARD_TOKEN", BACKEND.to_owned()),
            ("HALYARD_FLAGS", FLAGS.join(",")),
            // Two polls after the first, each answered 304.
            ("HALYARD_SECONDS", "31".to_owned()),
        ],
    )?;
    assert_eq!(result["events"], json!([]), "no warn or error event: {result}");
    assert_eq!(result["registered"], true, "{result}");
    assert!(result["unchanged"].as_u64().is_some_and(|n| n >= 2), "{result}");

    // Every evaluation agrees with the playground.
    for (key, outcome) in result["evaluated"].as_object().cloned().unwrap_or_default() {
        let mut parts = key.split('/');
        let (Some(flag), Some(user), Some(plan)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("bad key {key}").into());
        };
        let context = json!({"appName": "node-sdk-test", "userId": user, "properties": {"plan": plan}});
        let (enabled, variant) = server.played(flag, &context)?;
        assert_eq!(outcome, json!({"enabled": enabled, "variant": variant}), "{key}");
    }

    // The views show exactly what the SDK counted.
    let counted = result["counted"].as_object().cloned().unwrap_or_default();
    for flag in ["everyone", "pro-only", "switched-off"] {
        let usage = server.expect(
            "GET",
            &format!("/api/admin/client-metrics/features/{flag}"),
            None,
            200,
        )?;
        let (yes, no) = usage["lastHourUsage"]
            .as_array()
            .map(|rows| {
                rows.iter().fold((0, 0), |(yes, no), row| {
                    (
                        yes + row["yes"].as_i64().unwrap_or(0),
                        no + row["no"].as_i64().unwrap_or(0),
                    )
                })
            })
            .unwrap_or_default();
        assert_eq!(
            json!({"yes": yes, "no": no}),
            json!({"yes": counted[flag]["yes"], "no": counted[flag]["no"]}),
            "{flag}: {usage}"
        );
        assert_eq!(usage["seenApplications"], json!(["node-sdk-test"]), "{flag}");
        let raw = server.expect(
            "GET",
            &format!("/api/admin/client-metrics/features/{flag}/raw?hoursBack=2"),
            None,
            200,
        )?;
        let mut variants = serde_json::Map::new();
        for row in raw["data"].as_array().cloned().unwrap_or_default() {
            for (name, n) in row["variants"].as_object().cloned().unwrap_or_default() {
                let total =
                    variants.get(&name).and_then(Value::as_i64).unwrap_or(0) + n.as_i64().unwrap_or(0);
                variants.insert(name, json!(total));
            }
        }
        assert_eq!(
            Value::Object(variants),
            counted[flag]["variants"],
            "{flag}: {raw}"
        );
    }
    let unknown = server.expect("GET", "/api/admin/metrics/unknown-flags", None, 200)?;
    assert_eq!(unknown["unknownFlags"][0]["name"], "no-such-flag", "{unknown}");

    let application = server.expect("GET", "/api/admin/metrics/applications/node-sdk-test", None, 200)?;
    assert_eq!(
        application["instances"][0]["sdkVersion"], "unleash-node-sdk:6.12.1",
        "{application}"
    );
    assert_eq!(application["instances"][0]["environment"], "development");
    let overview = server.expect(
        "GET",
        "/api/admin/metrics/applications/node-sdk-test/overview",
        None,
        200,
    )?;
    assert_eq!(overview["featureCount"], 3, "{overview}");
    assert_eq!(overview["environments"][0]["instanceCount"], 1, "{overview}");
    Ok(())
}

#[test]
fn the_browser_sdk_gets_what_the_playground_says() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::start()?;
    server.demo_flags()?;
    for context in [
        json!({"userId": "7", "properties": {"plan": "pro"}}),
        json!({"userId": "8"}),
    ] {
        let result = run_node(
            "proxy-client.mjs",
            &[
                ("HALYARD_URL", server.base.clone()),
                ("HALYARD_TOKEN", FRONTEND.to_owned()),
                ("HALYARD_FLAGS", FLAGS.join(",")),
                ("HALYARD_CONTEXT", context.to_string()),
            ],
        )?;
        assert_eq!(result["errors"], json!([]), "{result}");
        let mut played_context = context.clone();
        played_context["appName"] = json!("proxy-client-test");
        for flag in FLAGS {
            let (enabled, variant) = server.played(flag, &played_context)?;
            let evaluated = &result["evaluated"][flag];
            assert_eq!(
                (evaluated["enabled"].as_bool(), evaluated["variant"].as_str()),
                (Some(enabled), Some(variant.as_str())),
                "{flag} for {context}: {result}"
            );
        }
        if context["properties"]["plan"] == "pro" {
            assert_eq!(
                result["evaluated"]["pro-only"]["payload"],
                json!({"type": "json", "value": "{\"tier\":1}"})
            );
        }
    }
    // Its metrics arrived through the frontend API.
    let usage = server.expect("GET", "/api/admin/client-metrics/features/everyone", None, 200)?;
    assert_eq!(usage["seenApplications"], json!(["proxy-client-test"]), "{usage}");
    Ok(())
}

/// Runs the Node SDK following changes in `mode` (`streaming`, or `delta` or `polling` every
/// `interval` ms) against a server with the demo flags; checks that it answers as the
/// playground does and emits no warning, and returns the delays, in ms, from each write until
/// the SDK answered it: 20 writes streaming, 6 polling, where each write waits for a poll.
fn node_sdk_following(mode: &str, interval: u64) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    sdk_following("node", mode, interval)
}

/// Runs the `sdk` (`node` or `python`) following changes; see [`node_sdk_following`].
fn sdk_following(sdk: &str, mode: &str, interval: u64) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    sdk_following_at(sdk, mode, interval, false)
}

/// As [`sdk_following`], the SDK reading a `halyard edge` in front of the server when
/// `through_edge`, the writes going to the server.
fn sdk_following_at(
    sdk: &str,
    mode: &str,
    interval: u64,
    through_edge: bool,
) -> Result<Vec<u64>, Box<dyn std::error::Error>> {
    let server = Server::start()?;
    server.demo_flags()?;
    let edge = if through_edge {
        Some(super::edge_mode::Edge::start(
            &server.base,
            &["-t", BACKEND],
            true,
        )?)
    } else {
        None
    };
    let sdk_url = edge
        .as_ref()
        .map_or_else(|| server.base.clone(), super::edge_mode::Edge::base);
    let writes = if mode == "streaming" { 20 } else { 6 };
    let run = if sdk == "node" { run_node } else { run_python };
    let script = if sdk == "node" {
        "node-follow.mjs"
    } else {
        "python-follow.py"
    };
    let result = run(
        script,
        &[
            ("HALYARD_URL", sdk_url),
            ("HALYARD_ADMIN_URL", server.base.clone()),
            ("HALYARD_TOKEN", BACKEND.to_owned()),
            ("HALYARD_ADMIN", ADMIN.to_owned()),
            ("HALYARD_MODE", mode.to_owned()),
            ("HALYARD_INTERVAL", interval.to_string()),
            ("HALYARD_FLAGS", FLAGS.join(",")),
            ("HALYARD_FLAG", "switched-off".to_owned()),
            ("HALYARD_WRITES", writes.to_string()),
        ],
    )?;
    // The Python SDK logs a warning for every unknown flag asked of an initialised client, as it
    // does against Unleash; `no-such-flag` is asked on purpose. Nothing else may be logged.
    let unknown_flag =
        "UnleashClient: Attempted to get feature flag/variation no-such-flag, but client wasn't initialized!";
    let events: Vec<&Value> = result["events"]
        .as_array()
        .map(|events| events.iter().filter(|event| *event != unknown_flag).collect())
        .unwrap_or_default();
    assert!(events.is_empty(), "no warn or error event: {result}");
    let evaluated = result["evaluated"].as_object().cloned().unwrap_or_default();
    assert_eq!(evaluated.len(), 7 * 2 * FLAGS.len(), "{result}");
    for (key, outcome) in evaluated {
        let mut parts = key.split('/');
        let (Some(flag), Some(user), Some(plan)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("bad key {key}").into());
        };
        let context =
            json!({"appName": format!("{sdk}-{mode}-test"), "userId": user, "properties": {"plan": plan}});
        let (enabled, variant) = server.played(flag, &context)?;
        assert_eq!(
            outcome,
            json!({"enabled": enabled, "variant": variant}),
            "{mode} {key}"
        );
    }
    let delays: Vec<u64> = result["delays"]
        .as_array()
        .map(|delays| delays.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    assert_eq!(delays.len(), writes, "{result}");
    let through = if through_edge { " through an edge" } else { "" };
    eprintln!("{sdk} sdk, {mode}{through}: ms from each write until the SDK answered it: {delays:?}");
    Ok(delays)
}

#[test]
fn the_node_sdk_streaming_sees_every_write_within_a_second() -> Result<(), Box<dyn std::error::Error>> {
    let delays = node_sdk_following("streaming", 15_000)?;
    // With 20 writes, the p99 is the slowest.
    assert!(delays.iter().all(|&delay| delay < 1000), "{delays:?}");
    Ok(())
}

#[test]
fn the_node_sdk_polling_the_delta_api_sees_every_write_within_an_interval()
-> Result<(), Box<dyn std::error::Error>> {
    let delays = node_sdk_following("delta", 1000)?;
    // Within one interval, as a rule: the median is under it. The SDK's own timer and a busy
    // machine may make a poll late, so no single write may take more than two.
    let mut sorted = delays.clone();
    sorted.sort_unstable();
    assert!(sorted[sorted.len() / 2] < 1000, "{delays:?}");
    assert!(delays.iter().all(|&delay| delay < 2000), "{delays:?}");
    Ok(())
}

#[test]
fn the_python_sdk_streaming_sees_every_write_within_a_second() -> Result<(), Box<dyn std::error::Error>> {
    let delays = sdk_following("python", "streaming", 15_000)?;
    assert!(delays.iter().all(|&delay| delay < 1000), "{delays:?}");
    Ok(())
}

#[test]
fn the_node_sdk_streaming_follows_a_server_restart() -> Result<(), Box<dyn std::error::Error>> {
    use std::io::BufRead;
    let scratch = Scratch::new()?;
    let port = free_port()?;
    let env = [
        ("INIT_ADMIN_API_TOKENS", ADMIN),
        ("INIT_BACKEND_API_TOKENS", BACKEND),
    ];
    let (child, _) = start_server_on(port, &scratch, &["--log-level", "warn"], &env)?;
    let mut running = Running(child);
    let server = Server::at(format!("http://127.0.0.1:{port}"));
    server.demo_flags()?;

    let directory = sdk_directory()?;
    let mut node = Command::new("node")
        .arg("node-restart.mjs")
        .current_dir(&directory)
        .env("HALYARD_URL", &server.base)
        .env("HALYARD_TOKEN", BACKEND)
        .env("HALYARD_FLAG", "switched-off")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|error| format!("the SDK tests need Node.js (scripts/test installs it): {error}"))?;
    let stdout = node.stdout.take().ok_or("no stdout")?;
    // Killed if the test fails before it ends.
    let mut node = Running(node);
    let mut lines = std::io::BufReader::new(stdout).lines();
    let first = lines.next().ok_or("node printed nothing")??;
    assert_eq!(first, "READY false", "{first}");

    // The server stops (its stream ends) and starts again on the same port and database.
    let stopped = Command::new("kill")
        .args(["-TERM", &running.0.id().to_string()])
        .status()?;
    assert!(stopped.success());
    running.0.wait()?;
    std::thread::sleep(Duration::from_millis(500));
    let (child, _) = start_server_on(port, &scratch, &["--log-level", "warn"], &env)?;
    running = Running(child);
    server.expect(
        "POST",
        "/api/admin/projects/default/features/switched-off/environments/development/on",
        Some(json!({})),
        200,
    )?;
    let last = lines.next().ok_or("node printed no result")??;
    let status = node.0.wait()?;
    assert!(status.success(), "{status}: {last}");
    let result: Value = serde_json::from_str(&last)?;
    eprintln!("node sdk across a restart: {result}");
    let errors: Vec<&Value> = result["events"]
        .as_array()
        .map(|events| events.iter().filter(|event| event["kind"] == "error").collect())
        .unwrap_or_default();
    assert!(errors.is_empty(), "no error event: {result}");
    drop(running);
    Ok(())
}

#[test]
fn the_node_sdk_streaming_from_an_edge_sees_every_write_within_a_second()
-> Result<(), Box<dyn std::error::Error>> {
    let delays = sdk_following_at("node", "streaming", 15_000, true)?;
    assert!(delays.iter().all(|delay| *delay < 1000), "{delays:?}");
    Ok(())
}

#[test]
fn the_node_sdk_polling_an_edges_delta_api_sees_every_write_within_an_interval()
-> Result<(), Box<dyn std::error::Error>> {
    let delays = sdk_following_at("node", "delta", 1000, true)?;
    // An interval, and the edge's own second at most to hear of the write.
    assert!(delays.iter().all(|delay| *delay < 2500), "{delays:?}");
    Ok(())
}

#[test]
fn the_node_sdk_polling_an_edge_sees_every_write_within_an_interval() -> Result<(), Box<dyn std::error::Error>>
{
    let delays = sdk_following_at("node", "polling", 1000, true)?;
    assert!(delays.iter().all(|delay| *delay < 2500), "{delays:?}");
    Ok(())
}

#[test]
fn the_python_sdk_streaming_from_an_edge_sees_every_write_within_a_second()
-> Result<(), Box<dyn std::error::Error>> {
    let delays = sdk_following_at("python", "streaming", 15_000, true)?;
    assert!(delays.iter().all(|delay| *delay < 1000), "{delays:?}");
    Ok(())
}

#[test]
fn the_python_sdk_polling_an_edge_sees_every_write_within_an_interval()
-> Result<(), Box<dyn std::error::Error>> {
    let delays = sdk_following_at("python", "polling", 1000, true)?;
    // An interval, and the edge's own second at most to hear of the write.
    assert!(delays.iter().all(|delay| *delay < 2500), "{delays:?}");
    Ok(())
}

#[test]
fn the_browser_sdk_through_an_edge_gets_what_the_playground_says() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::start()?;
    server.demo_flags()?;
    let edge = super::edge_mode::Edge::start(&server.base, &["-t", BACKEND], true)?;
    let context = json!({"userId": "7", "properties": {"plan": "pro"}});
    let result = run_node(
        "proxy-client.mjs",
        &[
            ("HALYARD_URL", edge.base()),
            ("HALYARD_TOKEN", FRONTEND.to_owned()),
            ("HALYARD_FLAGS", FLAGS.join(",")),
            ("HALYARD_CONTEXT", context.to_string()),
        ],
    )?;
    assert_eq!(result["errors"], json!([]), "{result}");
    let mut played_context = context.clone();
    played_context["appName"] = json!("proxy-client-test");
    for flag in FLAGS {
        let (enabled, variant) = server.played(flag, &played_context)?;
        let evaluated = &result["evaluated"][flag];
        assert_eq!(
            (evaluated["enabled"].as_bool(), evaluated["variant"].as_str()),
            (Some(enabled), Some(variant.as_str())),
            "{flag}: {result}"
        );
    }
    // Its metrics reach the server through the edge (which sends every second in the tests).
    let started = std::time::Instant::now();
    loop {
        let usage = server.expect("GET", "/api/admin/client-metrics/features/everyone", None, 200)?;
        if usage["seenApplications"] == json!(["proxy-client-test"]) {
            break;
        }
        if started.elapsed() > Duration::from_secs(15) {
            return Err(format!("the browser SDK's usage did not arrive through the edge: {usage}").into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}
