//! `halyard edge` in front of the real server (on the backend under test), both real processes:
//! answers equal to the upstream's, writes seen within a second, tokens validated on first use
//! and refused once deleted upstream, usage arriving upstream, the upstream stopped and started
//! again under a connected stream, a start from the backup folder, and a chain of two edges.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use flag_store::scratch::Scratch;
use serde_json::{Value, json};

use crate::common::flag_names;
use crate::common::process::{Running, call, expect, free_port, get_status, start_server_on};
use crate::common::sse::{Item, Sse};

type Outcome = Result<(), Box<dyn std::error::Error>>;

const ADMIN: &str = "*:*.edge-test-admin-secret";
const BACKEND: &str = "*:development.edge-test-backend-secret";
const FRONTEND: &str = "*:development.edge-test-frontend-secret";

/// The upstream: the real server on a scratch database, which can be stopped and started again
/// on the same port and database.
struct Upstream {
    scratch: Scratch,
    port: u16,
    running: Option<Running>,
}

impl Upstream {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let mut upstream = Self {
            scratch: Scratch::new()?,
            port: free_port()?,
            running: None,
        };
        upstream.resume()?;
        Ok(upstream)
    }

    fn resume(&mut self) -> Outcome {
        let (child, _) = start_server_on(
            self.port,
            &self.scratch,
            &["--log-format", "json"],
            &[
                ("INIT_ADMIN_API_TOKENS", ADMIN),
                ("INIT_BACKEND_API_TOKENS", BACKEND),
                ("INIT_FRONTEND_API_TOKENS", FRONTEND),
            ],
        )?;
        self.running = Some(Running(child));
        Ok(())
    }

    fn stop(&mut self) {
        self.running = None;
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn admin(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let (status, answer) = call(method, &format!("{}{path}", self.base()), ADMIN, body)?;
        if !(200..300).contains(&status) {
            return Err(format!("{method} {path}: {status} {answer}").into());
        }
        Ok(answer)
    }

    /// Flags of every kind an SDK reads: a segment, constraints, strategy and flag variants with
    /// a payload, a dependency, and a flag that is off; and one in a second project.
    fn flags(&self) -> Outcome {
        let segment = self.admin(
            "POST",
            "/api/admin/segments",
            Some(json!({"name": "beta", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["1", "2"]}]})),
        )?;
        let segment = segment["id"].as_i64().ok_or("no segment id")?;
        let features = "/api/admin/projects/default/features";
        for name in [
            "everyone",
            "pro-only",
            "rollout",
            "variants",
            "child",
            "switched-off",
        ] {
            self.admin("POST", features, Some(json!({"name": name})))?;
        }
        let strategy = |flag: &str, body: Value| -> Outcome {
            self.admin(
                "POST",
                &format!("{features}/{flag}/environments/development/strategies"),
                Some(body),
            )?;
            Ok(())
        };
        strategy("everyone", json!({"name": "default"}))?;
        strategy(
            "pro-only",
            json!({"name": "default",
                   "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
                   "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default"}]}),
        )?;
        strategy(
            "rollout",
            json!({"name": "flexibleRollout",
                   "parameters": {"rollout": "50", "stickiness": "userId", "groupId": "rollout"},
                   "segments": [segment]}),
        )?;
        strategy("variants", json!({"name": "default"}))?;
        strategy("child", json!({"name": "default"}))?;
        strategy("switched-off", json!({"name": "default"}))?;
        self.admin(
            "PUT",
            &format!("{features}/variants/variants-batch"),
            Some(json!({"environments": ["development"], "variants": [
                {"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default",
                 "payload": {"type": "string", "value": "first"}},
                {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default"}]})),
        )?;
        self.admin(
            "POST",
            &format!("{features}/child/dependencies"),
            Some(json!({"feature": "everyone", "enabled": true})),
        )?;
        for name in ["everyone", "pro-only", "rollout", "variants", "child"] {
            self.admin(
                "POST",
                &format!("{features}/{name}/environments/development/on"),
                None,
            )?;
        }
        self.admin(
            "POST",
            "/api/admin/projects",
            Some(json!({"id": "apps", "name": "Apps"})),
        )?;
        self.admin(
            "POST",
            "/api/admin/projects/apps/features",
            Some(json!({"name": "mobile"})),
        )?;
        Ok(())
    }

    fn switch(&self, flag: &str, on: bool) -> Outcome {
        let state = if on { "on" } else { "off" };
        self.admin(
            "POST",
            &format!("/api/admin/projects/default/features/{flag}/environments/development/{state}"),
            None,
        )?;
        Ok(())
    }
}

/// A `halyard edge` process and its port.
pub(crate) struct Edge {
    pub(crate) port: u16,
    _running: Running,
    _directory: tempfile::TempDir,
}

impl Edge {
    /// Starts an edge in front of `upstream` with `args` after `edge`; with `ready`, waits until
    /// its readiness answers 200, else until it listens.
    pub(crate) fn start(
        upstream: &str,
        args: &[&str],
        ready: bool,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let directory = tempfile::tempdir()?;
        let port = free_port()?;
        Self::start_on(port, upstream, args, ready, directory)
    }

    fn start_on(
        port: u16,
        upstream: &str,
        args: &[&str],
        ready: bool,
        directory: tempfile::TempDir,
    ) -> Result<Self, Box<dyn std::error::Error>> {
        let mut command = crate::common::process::binary_command();
        let port_text = port.to_string();
        // Edge's own order: the listener's options before the subcommand.
        let mut child = command
            .current_dir(directory.path())
            .args([
                "-p",
                &port_text,
                "-i",
                "127.0.0.1",
                "--log-format",
                "json",
                "edge",
                "-u",
                upstream,
            ])
            .args([
                "--features-refresh-interval-seconds",
                "1",
                "--metrics-interval-seconds",
                "1",
            ])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let started = Instant::now();
        let base = args
            .iter()
            .position(|arg| *arg == "--base-path")
            .and_then(|at| args.get(at + 1))
            .copied()
            .unwrap_or("");
        let probe = if ready {
            "/internal-backstage/ready"
        } else {
            "/internal-backstage/health"
        };
        let path = format!("{base}{probe}");
        let path = path.as_str();
        while get_status(port, path).is_none_or(|status| !status.contains("200")) {
            if let Some(status) = child.try_wait()? {
                return Err(format!("the edge exited: {status}").into());
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                return Err(format!("the edge did not answer 200 at {path} within 30 s").into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Self {
            port,
            _running: Running(child),
            _directory: directory,
        })
    }

    pub(crate) fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// A client document without its `meta`, which names the server's own revision.
fn document(base: &str, token: &str) -> Result<Value, Box<dyn std::error::Error>> {
    let mut document = expect("GET", &format!("{base}/api/client/features"), token, None, 200)?;
    if let Some(object) = document.as_object_mut() {
        object.remove("meta");
    }
    Ok(document)
}

/// Polls `check` every 10 ms for up to `within`; the time it took.
fn until(
    within: Duration,
    mut check: impl FnMut() -> Result<bool, Box<dyn std::error::Error>>,
) -> Result<Duration, Box<dyn std::error::Error>> {
    let started = Instant::now();
    loop {
        if check()? {
            return Ok(started.elapsed());
        }
        if started.elapsed() > within {
            return Err(format!("not within {within:?}").into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn enabled(base: &str, flag: &str) -> Result<bool, Box<dyn std::error::Error>> {
    let document = expect("GET", &format!("{base}/api/client/features"), BACKEND, None, 200)?;
    Ok(document["features"]
        .as_array()
        .and_then(|features| features.iter().find(|feature| feature["name"] == flag))
        .is_some_and(|feature| feature["enabled"] == true))
}

#[test]
fn an_edge_answers_as_its_upstream_and_follows_its_writes_within_a_second() -> Outcome {
    let upstream = Upstream::start()?;
    upstream.flags()?;
    let edge = Edge::start(&upstream.base(), &["-t", BACKEND], true)?;
    assert_eq!(
        document(&edge.base(), BACKEND)?,
        document(&upstream.base(), BACKEND)?
    );
    for query in [
        "?project=apps",
        "?namePrefix=pro",
        "?project=default&namePrefix=r",
    ] {
        let path = format!("/api/client/features{query}");
        let at = |base: &str| -> Result<Value, Box<dyn std::error::Error>> {
            let mut answer = expect("GET", &format!("{base}{path}"), BACKEND, None, 200)?;
            answer.as_object_mut().map(|object| object.remove("meta"));
            Ok(answer)
        };
        assert_eq!(at(&edge.base())?, at(&upstream.base())?, "{query}");
    }
    // The upstream's documents carry no tags: asked for one, the edge answers every flag.
    let tagged = expect(
        "GET",
        &format!("{}/api/client/features?tag=simple:web", edge.base()),
        BACKEND,
        None,
        200,
    )?;
    assert_eq!(tagged["features"].as_array().map(Vec::len), Some(7), "{tagged}");
    // The delta API's hydration holds the same flags and segments.
    let hydration = |base: &str| -> Result<Value, Box<dyn std::error::Error>> {
        let mut answer = expect("GET", &format!("{base}/api/client/delta"), BACKEND, None, 200)?;
        answer["events"][0]
            .as_object_mut()
            .map(|event| event.remove("eventId"));
        Ok(answer)
    };
    assert_eq!(hydration(&edge.base())?, hydration(&upstream.base())?);
    // The frontend API and OFREP evaluate alike; the frontend token is validated on first use.
    for user in ["1", "2", "3", "4"] {
        for plan in ["free", "pro"] {
            let path = format!("/api/frontend?userId={user}&properties%5Bplan%5D={plan}");
            assert_eq!(
                expect("GET", &format!("{}{path}", edge.base()), FRONTEND, None, 200)?,
                expect("GET", &format!("{}{path}", upstream.base()), FRONTEND, None, 200)?,
                "{path}"
            );
            let body = json!({"context": {"targetingKey": user, "plan": plan}});
            assert_eq!(
                expect(
                    "POST",
                    &format!("{}/ofrep/v1/evaluate/flags", edge.base()),
                    FRONTEND,
                    Some(body.clone()),
                    200
                )?,
                expect(
                    "POST",
                    &format!("{}/ofrep/v1/evaluate/flags", upstream.base()),
                    FRONTEND,
                    Some(body),
                    200
                )?,
            );
        }
    }

    // A stream at the edge gets each write, and polls see it, within a second.
    let mut stream = Sse::open(edge.port, "/api/client/streaming", &[("Authorization", BACKEND)])?;
    assert_eq!(stream.status, 200);
    let connected = stream.event(Duration::from_secs(5))?;
    assert_eq!(connected.name, "unleash-connected");
    for (write, on) in [true, false, true].into_iter().enumerate() {
        upstream.switch("switched-off", on)?;
        let took = until(Duration::from_secs(1), || {
            Ok(enabled(&edge.base(), "switched-off")? == on)
        })
        .map_err(|error| format!("write {write}: {error}"))?;
        let event = stream.event(Duration::from_secs(1))?;
        assert_eq!(event.name, "unleash-updated", "write {write}");
        assert!(event.data.contains("switched-off"), "{}", event.data);
        eprintln!("edge: write {write} seen by a poll after {took:?}");
    }
    // The admin API is the upstream's, not the edge's.
    let (status, _) = call("GET", &format!("{}/api/admin/projects", edge.base()), ADMIN, None)?;
    assert_eq!(status, 404);
    Ok(())
}

#[test]
fn tokens_are_validated_on_first_use_and_refused_once_deleted_upstream() -> Outcome {
    let upstream = Upstream::start()?;
    upstream.flags()?;
    let edge = Edge::start(
        &upstream.base(),
        &["-t", BACKEND, "--token-revalidation-interval-seconds", "1"],
        true,
    )?;
    // A token the upstream made after the edge started, for one project.
    let made = upstream.admin(
        "POST",
        "/api/admin/api-tokens",
        Some(json!({"tokenName": "late", "type": "client", "environment": "development", "projects": ["apps"]})),
    )?;
    let late = made["secret"].as_str().ok_or("no secret")?.to_owned();
    let at_edge = document(&edge.base(), &late)?;
    assert_eq!(at_edge, document(&upstream.base(), &late)?);
    assert_eq!(
        flag_names(&at_edge),
        ["mobile"],
        "a project token sees its project"
    );
    // A token the upstream does not know is refused, as the upstream refuses it.
    let (status, body) = call(
        "GET",
        &format!("{}/api/client/features", edge.base()),
        "*:development.unknown",
        None,
    )?;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["name"], "AuthenticationRequired");
    // Deleted upstream, refused at the edge within the revalidation interval.
    upstream.admin("DELETE", &format!("/api/admin/api-tokens/{late}"), None)?;
    let took = until(Duration::from_secs(5), || {
        let (status, _) = call(
            "GET",
            &format!("{}/api/client/features", edge.base()),
            &late,
            None,
        )?;
        Ok(status == 401)
    })?;
    eprintln!("edge: a token deleted upstream refused after {took:?}");
    // The token the edge started with is still served.
    expect(
        "GET",
        &format!("{}/api/client/features", edge.base()),
        BACKEND,
        None,
        200,
    )?;
    Ok(())
}

/// Registers an application and reports counts of `flag` at `base`.
fn report(base: &str, app: &str, flag: &str) -> Outcome {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    expect(
        "POST",
        &format!("{base}/api/client/register"),
        BACKEND,
        Some(
            json!({"appName": app, "instanceId": format!("{app}-1"), "strategies": ["default"],
                    "started": now, "interval": 10000, "sdkVersion": "unleash-node-sdk:6.12.1"}),
        ),
        202,
    )?;
    expect(
        "POST",
        &format!("{base}/api/client/metrics"),
        BACKEND,
        Some(json!({"appName": app, "instanceId": format!("{app}-1"),
                    "bucket": {"start": now, "stop": now,
                               "toggles": {flag: {"yes": 3, "no": 1, "variants": {"a": 2}}}}})),
        202,
    )?;
    Ok(())
}

/// Waits until the upstream has `app`'s counts of `flag`.
fn arrived(upstream: &Upstream, app: &str, flag: &str) -> Outcome {
    until(Duration::from_secs(15), || {
        let raw = upstream.admin(
            "GET",
            &format!("/api/admin/client-metrics/features/{flag}/raw"),
            None,
        )?;
        let counted: i64 = raw["data"].as_array().map_or(0, |rows| {
            rows.iter()
                .filter(|row| row["appName"] == app)
                .filter_map(|row| row["yes"].as_i64())
                .sum()
        });
        Ok(counted == 3)
    })?;
    let application = upstream.admin("GET", &format!("/api/admin/metrics/applications/{app}"), None)?;
    assert_eq!(
        application["instances"][0]["instanceId"],
        format!("{app}-1"),
        "{application}"
    );
    assert_eq!(
        application["instances"][0]["sdkVersion"],
        "unleash-node-sdk:6.12.1"
    );
    Ok(())
}

#[test]
fn usage_goes_upstream_and_through_a_chain_of_two_edges() -> Outcome {
    let upstream = Upstream::start()?;
    upstream.flags()?;
    let first = Edge::start(&upstream.base(), &["-t", BACKEND], true)?;
    let second = Edge::start(&first.base(), &["-t", BACKEND], true)?;
    assert_eq!(
        document(&second.base(), BACKEND)?,
        document(&upstream.base(), BACKEND)?
    );
    report(&first.base(), "via-one-edge", "everyone")?;
    arrived(&upstream, "via-one-edge", "everyone")?;
    report(&second.base(), "via-two-edges", "rollout")?;
    arrived(&upstream, "via-two-edges", "rollout")?;
    // A write reaches the end of the chain within a second.
    upstream.switch("switched-off", true)?;
    let took = until(Duration::from_secs(1), || enabled(&second.base(), "switched-off"))?;
    eprintln!("edge chain: a write seen two edges down after {took:?}");
    // The first edge learns of the second's frontend token through its own upstream.
    let path = "/api/frontend?userId=1";
    assert_eq!(
        expect("GET", &format!("{}{path}", second.base()), FRONTEND, None, 200)?,
        expect("GET", &format!("{}{path}", upstream.base()), FRONTEND, None, 200)?,
    );
    Ok(())
}

#[test]
fn an_edge_answers_through_an_upstream_outage_and_follows_it_again() -> Outcome {
    let mut upstream = Upstream::start()?;
    upstream.flags()?;
    let edge = Edge::start(&upstream.base(), &["-t", BACKEND], true)?;
    let before = document(&edge.base(), BACKEND)?;
    let frontend = expect(
        "GET",
        &format!("{}/api/frontend?userId=1", edge.base()),
        FRONTEND,
        None,
        200,
    )?;
    let mut stream = Sse::open(edge.port, "/api/client/streaming", &[("Authorization", BACKEND)])?;
    assert_eq!(stream.event(Duration::from_secs(5))?.name, "unleash-connected");
    upstream.stop();
    // Every SDK request is answered from memory while the upstream is away.
    for _ in 0..20 {
        assert_eq!(document(&edge.base(), BACKEND)?, before);
        assert_eq!(
            expect(
                "GET",
                &format!("{}/api/frontend?userId=1", edge.base()),
                FRONTEND,
                None,
                200
            )?,
            frontend
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = expect(
        "GET",
        &format!("{}/internal-backstage/ready", edge.base()),
        "",
        None,
        200,
    )?;
    assert!(
        status["scopes"][0]["lastFailure"].is_string(),
        "the failure is reported: {status}"
    );
    upstream.resume()?;
    upstream.switch("switched-off", true)?;
    // The follower reconnects with a backoff of at most a few seconds.
    let took = until(Duration::from_secs(20), || enabled(&edge.base(), "switched-off"))?;
    eprintln!("edge: the first write after the upstream came back seen after {took:?}");
    let event = loop {
        match stream.next(Duration::from_secs(5))? {
            Item::Event(event) => break event,
            Item::Comment(_) => {}
            Item::End => return Err("the stream ended".into()),
        }
    };
    assert_eq!(event.name, "unleash-updated");
    assert!(event.data.contains("switched-off"), "{}", event.data);
    Ok(())
}

#[test]
fn an_edge_started_while_the_upstream_is_away_serves_its_backup() -> Outcome {
    let mut upstream = Upstream::start()?;
    upstream.flags()?;
    let backups = tempfile::tempdir()?;
    let folder = backups.path().display().to_string();
    let expected = document(&upstream.base(), BACKEND)?;
    {
        let edge = Edge::start(
            &upstream.base(),
            &["-t", BACKEND, "--backup-folder", &folder],
            true,
        )?;
        assert_eq!(document(&edge.base(), BACKEND)?, expected);
    }
    upstream.stop();
    let edge = Edge::start(
        &upstream.base(),
        &["-t", BACKEND, "--backup-folder", &folder],
        true,
    )?;
    assert_eq!(document(&edge.base(), BACKEND)?, expected);
    let ready = expect(
        "GET",
        &format!("{}/internal-backstage/ready", edge.base()),
        "",
        None,
        200,
    )?;
    assert_eq!(ready["scopes"][0]["source"], "backup", "{ready}");
    assert!(ready["scopes"][0]["since"].is_string(), "{ready}");
    // The backup holds no secret in the clear but the tokens the edge validated, readable by
    // its owner only.
    let tokens = backups.path().join("tokens.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(std::fs::metadata(&tokens)?.permissions().mode() & 0o077, 0);
    }
    assert!(Path::new(&tokens).exists());
    Ok(())
}

#[test]
fn the_backstage_shows_tokens_masked_and_the_flags_held() -> Outcome {
    let upstream = Upstream::start()?;
    upstream.flags()?;
    let edge = Edge::start(&upstream.base(), &["-t", BACKEND], true)?;
    let health = expect(
        "GET",
        &format!("{}/internal-backstage/health", edge.base()),
        "",
        None,
        200,
    )?;
    assert_eq!(health, json!({"status": "OK"}));
    let tokens = expect(
        "GET",
        &format!("{}/internal-backstage/tokens", edge.base()),
        "",
        None,
        200,
    )?;
    let text = tokens.to_string();
    assert!(!text.contains("edge-test-backend-secret"), "{text}");
    assert_eq!(
        tokens["tokenValidationStatus"][0]["token"],
        "*:development.edge-t****"
    );
    let features = expect(
        "GET",
        &format!("{}/internal-backstage/features", edge.base()),
        "",
        None,
        200,
    )?;
    assert_eq!(
        features["development"]["features"].as_array().map(Vec::len),
        Some(7),
        "{features}"
    );
    let metrics = call(
        "GET",
        &format!("{}/internal-backstage/metrics", edge.base()),
        "",
        None,
    )?;
    assert_eq!(metrics.0, 200);
    // Edge's `health` and `ready` subcommands, for container health checks.
    for probe in ["health", "ready"] {
        let status = crate::common::process::binary_command()
            .args([probe, "--edge-url", &edge.base()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        assert!(status.success(), "{probe}: {status}");
        let refused = crate::common::process::binary_command()
            .args([probe, "-e", &format!("http://127.0.0.1:{}", free_port()?)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        assert!(!refused.success(), "{probe} of nothing: {refused}");
    }
    Ok(())
}

#[test]
fn an_edge_command_line_is_refused_with_a_clear_message() -> Outcome {
    let output = Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args(["edge", "-t", BACKEND])
        .env_remove("UPSTREAM_URL")
        .output()?;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--upstream-url"), "{stderr}");
    // A header or a pretrusted token may hold a secret: the message names the entry's place.
    let output = Command::new(env!("CARGO_BIN_EXE_halyard"))
        .args([
            "edge",
            "-u",
            "http://127.0.0.1:9",
            "-H",
            "X-Ok: 1,Authorization secret-header-value",
        ])
        .output()?;
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("entry 2 is not `Name: value`"), "{stderr}");
    assert!(!stderr.contains("secret-header-value"), "{stderr}");
    for entry in ["secret-frontend-value", "secret-frontend-value@", "@development"] {
        let output = Command::new(env!("CARGO_BIN_EXE_halyard"))
            .args(["edge", "-u", "http://127.0.0.1:9", "--pretrusted-tokens"])
            .arg(format!("ok@development,{entry}"))
            .output()?;
        assert!(!output.status.success(), "{entry}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(
                "--pretrusted-tokens: entry 2: a pretrusted token is written `<token>@<environment>`"
            ),
            "{entry}: {stderr}"
        );
        assert!(!stderr.contains("secret-frontend-value"), "{stderr}");
    }
    Ok(())
}

/// A pretrusted frontend token is served for its environment without the upstream knowing it,
/// stays through revalidation, and is only a frontend token.
#[test]
fn a_pretrusted_frontend_token_is_served_without_asking_the_upstream() -> Outcome {
    const TRUSTED: &str = "edge-test-trusted-frontend-secret";
    let upstream = Upstream::start()?;
    upstream.flags()?;
    let edge = Edge::start(
        &upstream.base(),
        &[
            "-t",
            BACKEND,
            "--pretrusted-tokens",
            &format!("{TRUSTED}@development"),
            "--token-revalidation-interval-seconds",
            "1",
        ],
        true,
    )?;
    let (status, _) = call("GET", &format!("{}/api/frontend", upstream.base()), TRUSTED, None)?;
    assert_eq!(status, 401, "the upstream does not know the token");
    let path = "/api/frontend?userId=7";
    let expected = expect("GET", &format!("{}{path}", upstream.base()), FRONTEND, None, 200)?;
    assert_eq!(
        expect("GET", &format!("{}{path}", edge.base()), TRUSTED, None, 200)?,
        expected
    );
    // Two revalidations later it is still served, and it is no client token.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        expect("GET", &format!("{}{path}", edge.base()), TRUSTED, None, 200)?,
        expected
    );
    let (status, body) = call(
        "GET",
        &format!("{}/api/client/features", edge.base()),
        TRUSTED,
        None,
    )?;
    assert_eq!(status, 403, "{body}");
    Ok(())
}

/// The head of the answer to `request`, lower-cased.
fn head(port: u16, request: &[u8]) -> Result<String, Box<dyn std::error::Error>> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    stream.write_all(request)?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    Ok(answer.split("\r\n\r\n").next().unwrap_or_default().to_lowercase())
}

#[test]
fn an_edge_under_a_base_path_serves_only_there_and_lets_the_configured_origins_in() -> Outcome {
    let upstream = Upstream::start()?;
    upstream.flags()?;
    let edge = Edge::start(
        &upstream.base(),
        &[
            "-t",
            BACKEND,
            "--base-path",
            "/flags",
            "--cors-origin",
            "https://app.example",
        ],
        true,
    )?;
    let under = document(&format!("{}/flags", edge.base()), BACKEND)?;
    assert_eq!(under, document(&upstream.base(), BACKEND)?);
    let (status, body) = call(
        "GET",
        &format!("{}/api/client/features", edge.base()),
        BACKEND,
        None,
    )?;
    assert_eq!(status, 404, "outside the base path: {body}");
    assert_eq!(body["name"], "NotFoundError");
    let (status, _) = call(
        "GET",
        &format!("{}/flagsx/api/client/features", edge.base()),
        BACKEND,
        None,
    )?;
    assert_eq!(status, 404);
    let preflight = head(
        edge.port,
        b"OPTIONS /flags/api/frontend HTTP/1.1\r\nHost: localhost\r\nOrigin: https://app.example\r\n\
          Access-Control-Request-Method: GET\r\nAccess-Control-Request-Headers: authorization\r\nConnection: close\r\n\r\n",
    )?;
    assert!(
        preflight.contains("access-control-allow-origin: https://app.example"),
        "{preflight}"
    );
    let other = head(
        edge.port,
        b"OPTIONS /flags/api/frontend HTTP/1.1\r\nHost: localhost\r\nOrigin: https://elsewhere.example\r\n\
          Access-Control-Request-Method: GET\r\nConnection: close\r\n\r\n",
    )?;
    assert!(!other.contains("access-control-allow-origin"), "{other}");
    Ok(())
}

#[test]
fn offline_serves_a_file_of_flags_to_the_tokens_it_is_given() -> Outcome {
    let directory = tempfile::tempdir()?;
    let file = directory.path().join("flags.json");
    std::fs::write(
        &file,
        serde_json::to_vec(&json!({"version": 2, "segments": [], "features": [
            {"name": "offline-on", "project": "default", "enabled": true,
             "strategies": [{"name": "default", "parameters": {}, "constraints": []}], "variants": []},
            {"name": "offline-off", "project": "default", "enabled": false, "strategies": [], "variants": []}]}))?,
    )?;
    let port = free_port()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_halyard"))
        .current_dir(directory.path())
        .args([
            "offline",
            "--port",
            &port.to_string(),
            "-i",
            "127.0.0.1",
            "--bootstrap-file",
        ])
        .arg(&file)
        .args(["--client-tokens", BACKEND, "--frontend-tokens", FRONTEND])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let started = Instant::now();
    while get_status(port, "/internal-backstage/ready").is_none_or(|status| !status.contains("200")) {
        if child.try_wait()?.is_some() || started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            return Err("offline mode did not become ready".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _running = Running(child);
    let base = format!("http://127.0.0.1:{port}");
    let served = document(&base, BACKEND)?;
    assert_eq!(flag_names(&served), ["offline-off", "offline-on"]);
    let frontend = expect(
        "GET",
        &format!("{base}/api/frontend?userId=1"),
        FRONTEND,
        None,
        200,
    )?;
    assert_eq!(frontend["toggles"][0]["name"], "offline-on", "{frontend}");
    let (status, _) = call(
        "GET",
        &format!("{base}/api/client/features"),
        "*:development.other",
        None,
    )?;
    assert_eq!(status, 401);
    Ok(())
}

/// An upstream that answers as the test says: the client document well, then garbage, a 5xx, a
/// document without end, or nothing at all.
struct HostileUpstream {
    port: u16,
    mode: std::sync::Arc<std::sync::atomic::AtomicU8>,
}

impl HostileUpstream {
    const GOOD: u8 = 0;
    const GARBAGE: u8 = 1;
    const FAILING: u8 = 2;
    const ENDLESS: u8 = 3;
    const HANGING: u8 = 4;

    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let mode = std::sync::Arc::new(std::sync::atomic::AtomicU8::new(Self::GOOD));
        let shared = std::sync::Arc::clone(&mode);
        std::thread::spawn(move || {
            for connection in listener.incoming().flatten() {
                let mode = std::sync::Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = Self::answer(connection, &mode);
                });
            }
        });
        Ok(Self { port, mode })
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, std::sync::atomic::Ordering::SeqCst);
    }

    fn answer(
        mut connection: std::net::TcpStream,
        mode: &std::sync::atomic::AtomicU8,
    ) -> std::io::Result<()> {
        use std::io::{BufRead as _, Read as _, Write as _};
        let mut reader = std::io::BufReader::new(connection.try_clone()?);
        let mut request_line = String::new();
        reader.read_line(&mut request_line)?;
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            if line.trim().is_empty() {
                break;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let reply = |connection: &mut std::net::TcpStream, status: &str, body: &str| {
            write!(
                connection,
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        };
        if request_line.starts_with("POST /edge/validate") {
            let tokens = json!({"tokens": [{"token": BACKEND, "type": "client", "environment": "development", "projects": ["*"]}]});
            return reply(&mut connection, "200 OK", &tokens.to_string());
        }
        if request_line.starts_with("POST ") {
            return reply(&mut connection, "202 Accepted", "");
        }
        if !request_line.starts_with("GET /api/client/features") {
            return reply(&mut connection, "404 Not Found", "{}");
        }
        match mode.load(std::sync::atomic::Ordering::SeqCst) {
            Self::GOOD => {
                let document = json!({"version": 2, "segments": [], "features": [
                    {"name": "steady", "project": "default", "enabled": true,
                     "strategies": [{"name": "default", "parameters": {}, "constraints": []}], "variants": []}]});
                reply(&mut connection, "200 OK", &document.to_string())
            }
            Self::GARBAGE => reply(
                &mut connection,
                "200 OK",
                "{\"features\": [{\"name\": 12}, not json",
            ),
            Self::FAILING => reply(&mut connection, "503 Service Unavailable", "{}"),
            Self::ENDLESS => {
                // A document that never ends: a list of features, one after another.
                write!(
                    connection,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{{\"version\":2,\"features\":["
                )?;
                let feature = b"{\"name\":\"endless\",\"enabled\":true,\"strategies\":[]},";
                let chunk: Vec<u8> = feature
                    .iter()
                    .copied()
                    .cycle()
                    .take(feature.len() * 4096)
                    .collect();
                loop {
                    connection.write_all(&chunk)?;
                }
            }
            _ => {
                std::thread::sleep(Duration::from_secs(120));
                Ok(())
            }
        }
    }
}

#[test]
fn a_hostile_upstream_never_empties_the_edge_nor_grows_it_past_its_bound() -> Outcome {
    let upstream = HostileUpstream::start()?;
    let edge = Edge::start(
        &format!("http://127.0.0.1:{}", upstream.port),
        &["-t", BACKEND],
        true,
    )?;
    let held = document(&edge.base(), BACKEND)?;
    assert_eq!(held["features"][0]["name"], "steady", "{held}");
    for (mode, name) in [
        (HostileUpstream::GARBAGE, "garbage"),
        (HostileUpstream::FAILING, "a 503 storm"),
        (HostileUpstream::ENDLESS, "a document without end"),
        (HostileUpstream::HANGING, "a hang"),
    ] {
        upstream.set(mode);
        // Several refresh intervals, each asked of the edge's SDKs all along.
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(4) {
            let (status, answer) = call(
                "GET",
                &format!("{}/api/client/features", edge.base()),
                BACKEND,
                None,
            )?;
            assert_eq!(status, 200, "{name}: {answer}");
            let mut answer = answer;
            answer.as_object_mut().map(|object| object.remove("meta"));
            assert_eq!(answer, held, "{name}: the last good flags stand");
            std::thread::sleep(Duration::from_millis(100));
        }
        let ready = expect(
            "GET",
            &format!("{}/internal-backstage/ready", edge.base()),
            "",
            None,
            200,
        )?;
        if mode != HostileUpstream::HANGING {
            assert!(
                ready["scopes"][0]["lastFailure"].is_string(),
                "{name}: the failure is reported: {ready}"
            );
        }
    }
    // The document without end was refused at the edge's bound (64 MiB), not held whole.
    let peak = crate::common::process::peak_memory_kib(edge._running.0.id())?;
    assert!(peak < 200 * 1024, "peak memory {} MiB", peak / 1024);
    Ok(())
}
