//! Attacks replayed against the real server: an optimised binary on a seeded database, driven
//! over loopback. `./scripts/test` runs this in the `hostile` profile (`--release` works too).
//!
//! Each attack asserts its status and that it was answered at all within 10 seconds (the only
//! timing assertion; speed belongs in benchmarks). While the heaviest accepted requests stream,
//! `/health` must keep answering 200, and the server's peak resident memory, read from
//! `/proc/<pid>/status`, must stay under [`MEMORY_CEILING_MIB`], the ceiling the README states.

#[path = "it/common/process.rs"]
#[allow(
    dead_code,
    reason = "shared with the integration tests, which start the server other ways too"
)]
mod process;

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use process::{Running, assert_envelope, exchange, peak_memory_kib, start_server_with};
use serde_json::{Map, Value, json};

/// The documented ceiling on the server's peak resident memory while it serves [`CONCURRENT`]
/// of the largest accepted advanced playground requests at once, on 20 flags. It counts the
/// pages of the executable the server has run (clean, shared with the page cache): about 24 MiB
/// once started, 29 MiB after these attacks, of peaks of 43 to 49 MiB in the release profile.
const MEMORY_CEILING_MIB: u64 = 64;

/// How many of the largest requests run at once, half of each shape.
const CONCURRENT: usize = 4;

/// Flags in the seeded database.
const FLAGS: usize = 20;

const TOKEN: &str = "*:*.hostile-suite-admin-token-0123456789";
const PRODUCTION_TOKEN: &str = "*:production.hostile-suite-production-token";
const BACKEND_TOKEN: &str = "*:development.hostile-suite-backend-token";
const FRONTEND_TOKEN: &str = "*:development.hostile-suite-frontend-token";

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// 20 flags with the shapes that cost the most to explain: constraints with long value lists,
/// a segment, variants, several strategies.
fn flags() -> Value {
    let values: Vec<String> = (0..50).map(|index| format!("user-{index}")).collect();
    let features: Vec<Value> = (0..FLAGS)
        .map(|index| {
            json!({
                "name": format!("flag-{index:02}"),
                "enabled": true,
                "strategies": [
                    {"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "g"},
                     "constraints": [
                        {"contextName": "userId", "operator": "IN", "values": values},
                        {"contextName": "plan", "operator": "STR_CONTAINS", "values": ["pro", "enterprise"], "caseInsensitive": true}
                     ],
                     "segments": [1]},
                    {"name": "default", "constraints": [{"contextName": "score", "operator": "NUM_GT", "value": "10"}]}
                ],
                "variants": [
                    {"name": "blue", "weight": 500, "stickiness": "default"},
                    {"name": "green", "weight": 500, "stickiness": "default"}
                ]
            })
        })
        .collect();
    json!({
        "version": 2,
        "features": features,
        "segments": [{"id": 1, "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu", "us"]}]}]
    })
}

struct Server {
    running: Running,
    base: String,
    port: u16,
    _scratch: flag_store::scratch::Scratch,
}

fn start() -> Result<Server, Box<dyn std::error::Error>> {
    let scratch = flag_store::scratch::Scratch::new()?;
    let document = scratch.directory().join("flags.json");
    std::fs::write(&document, serde_json::to_vec(&flags())?)?;
    for environment in ["development", "production"] {
        let status = process::server_command(&scratch)
            .args(["--log-level", "warn", "import"])
            .arg(&document)
            .args(["--environment", environment])
            .status()?;
        assert!(status.success(), "importing the flags failed");
    }
    let tokens = format!("{TOKEN},{PRODUCTION_TOKEN}");
    let (child, port) = start_server_with(
        &scratch,
        &["--log-level", "error"],
        &[
            ("INIT_ADMIN_API_TOKENS", &tokens),
            ("INIT_BACKEND_API_TOKENS", BACKEND_TOKEN),
            ("INIT_FRONTEND_API_TOKENS", FRONTEND_TOKEN),
        ],
    )?;
    Ok(Server {
        running: Running(child),
        base: format!("http://127.0.0.1:{port}"),
        port,
        _scratch: scratch,
    })
}

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(timeout))
        .build()
        .into()
}

/// Sends `body` and returns the status and the answer as JSON; fails if no answer came within
/// 10 seconds.
fn post(
    server: &Server,
    path: &str,
    token: &str,
    body: &Value,
) -> Result<(u16, Value), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let mut response = agent(Duration::from_secs(10))
        .post(format!("{}{path}", server.base))
        .header("Authorization", token)
        .send_json(body)?;
    let status = response.status().as_u16();
    let answer: Value = response
        .body_mut()
        .with_config()
        .limit(64 << 20)
        .read_json()
        .unwrap_or(Value::Null);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{path} took {:?}",
        started.elapsed()
    );
    Ok((status, answer))
}

fn assert_rejected(status: u16, answer: &Value, expected: u16, name: &str) {
    assert_eq!(status, expected, "{answer}");
    assert_eq!(answer["name"], json!(name), "{answer}");
}

/// The largest advanced request the default limits accept on 20 flags: 750 context combinations
/// (20 × 750 = 15,000, the combination limit), each about 4.4 KB, so the answer repeats close to
/// the 64 MiB context limit.
fn largest_accepted() -> Value {
    let user_ids: Vec<String> = (0..750).map(|index| format!("user-{index}")).collect();
    json!({
        "environments": ["production"],
        "context": {
            "appName": "web",
            "userId": user_ids.join(","),
            "properties": {"plan": "pro", "region": "eu", "note": "n".repeat(4_200)}
        }
    })
}

/// The largest advanced body the default limits accept: 240 properties of 4,000 bytes, close to
/// the 1 MiB body limit and within the 256-field limit; on 20 flags its answer repeats about
/// 19 MB of context.
fn largest_body() -> Value {
    let properties: Map<String, Value> = (0..240)
        .map(|index| (format!("p{index:03}"), json!("v".repeat(4_000))))
        .collect();
    json!({
        "environments": ["production"],
        "context": {"appName": "web", "userId": "u1", "properties": properties}
    })
}

/// Streams one advanced answer to its end; returns the status and the bytes read.
fn stream_advanced(server: &Server, body: &Value) -> Result<(u16, u64), Box<dyn std::error::Error>> {
    let mut response = agent(Duration::from_secs(120))
        .post(format!("{}/api/admin/playground/advanced", server.base))
        .header("Authorization", TOKEN)
        .send_json(body)?;
    let status = response.status().as_u16();
    if status != 200 {
        let answer = response.body_mut().read_to_string().unwrap_or_default();
        return Err(format!("{status}: {answer}").into());
    }
    let mut reader = response.body_mut().as_reader();
    let mut buffer = vec![0; 64 * 1024];
    let mut total = 0u64;
    let mut tail = Vec::new();
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        total += read as u64;
        tail = buffer[..read].to_vec();
    }
    let tail = String::from_utf8_lossy(&tail);
    assert!(
        tail.ends_with("}}"),
        "the answer is complete: ...{}",
        &tail[tail.len().saturating_sub(200)..]
    );
    Ok((status, total))
}

#[test]
fn attacks_are_refused_and_the_largest_requests_stay_within_the_memory_ceiling() -> TestResult {
    let server = start()?;

    // 30,000 properties and 2,000 user ids: 2,000 combinations each copying the whole context.
    let properties: Map<String, Value> = (0..30_000)
        .map(|index| (format!("p{index}"), json!("v")))
        .collect();
    let user_ids = (0..2_000).map(|id| id.to_string()).collect::<Vec<_>>().join(",");
    let attack = json!({
        "environments": ["development"],
        "context": {"appName": "a", "userId": user_ids, "properties": properties}
    });
    let (status, answer) = post(&server, "/api/admin/playground/advanced", TOKEN, &attack)?;
    assert_rejected(status, &answer, 400, "ValidationError");

    // 40,000 top-level keys on the deprecated operation.
    let mut context: Map<String, Value> = (0..40_000)
        .map(|index| (format!("k{index}"), json!(index)))
        .collect();
    context.insert("appName".into(), json!("a"));
    let (status, answer) = post(
        &server,
        "/api/admin/playground",
        TOKEN,
        &json!({"environment": "development", "context": context}),
    )?;
    assert_rejected(status, &answer, 400, "ValidationError");

    // 3,000 distinct environments.
    let environments: Vec<String> = (0..3_000).map(|index| format!("env-{index}")).collect();
    let (status, answer) = post(
        &server,
        "/api/admin/playground/advanced",
        TOKEN,
        &json!({"environments": environments, "context": {"appName": "a"}}),
    )?;
    assert_rejected(status, &answer, 400, "ValidationError");

    // A small request asking for an answer of hundreds of megabytes.
    let long_ids = (0..700)
        .map(|id| format!("{id:04}"))
        .collect::<Vec<_>>()
        .join(",");
    let (status, answer) = post(
        &server,
        "/api/admin/playground/advanced",
        TOKEN,
        &json!({"environments": ["development"], "context": {"appName": "a", "userId": long_ids, "n": "x".repeat(60_000)}}),
    )?;
    assert_rejected(status, &answer, 400, "ValidationError");
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|m| m.contains("byte limit")),
        "{answer}"
    );

    // The largest accepted requests, several at once, while /health is asked every 50 ms.
    let done = AtomicBool::new(false);
    let shapes = [largest_accepted(), largest_body()];
    let (results, health) = std::thread::scope(|scope| {
        let health = scope.spawn(|| -> Result<u32, String> {
            let mut answered = 0;
            while !done.load(Ordering::SeqCst) {
                let response = agent(Duration::from_secs(10))
                    .get(format!("{}/health", server.base))
                    .call()
                    .map_err(|error| format!("/health did not answer: {error}"))?;
                if response.status().as_u16() != 200 {
                    return Err(format!("/health answered {}", response.status()));
                }
                answered += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(answered)
        });
        let streams: Vec<_> = shapes
            .iter()
            .cycle()
            .take(CONCURRENT)
            .map(|body| scope.spawn(|| stream_advanced(&server, body).map_err(|error| error.to_string())))
            .collect();
        let results: Vec<_> = streams
            .into_iter()
            .map(|stream| stream.join().unwrap_or_else(|_| Err("a stream panicked".into())))
            .collect();
        done.store(true, Ordering::SeqCst);
        (
            results,
            health.join().unwrap_or_else(|_| Err("health panicked".into())),
        )
    });
    let health_answers = health?;
    assert!(
        health_answers > 0,
        "/health was asked during the largest requests"
    );
    let mut answer_bytes = Vec::new();
    for result in results {
        let (status, bytes) = result?;
        assert_eq!(status, 200);
        answer_bytes.push(bytes);
    }
    assert!(
        answer_bytes[0] > 60_000_000,
        "the answer of 15,000 combinations: {answer_bytes:?}"
    );
    assert!(
        answer_bytes[1] > 19_000_000,
        "the answer to a 1 MiB body: {answer_bytes:?}"
    );

    let peak_mib = peak_memory_kib(server.running.0.id())? / 1024;
    eprintln!(
        "largest accepted requests: {} and {} bytes, answers {answer_bytes:?} bytes; {CONCURRENT} at once: \
         peak RSS {peak_mib} MiB; /health answered {health_answers} times meanwhile",
        serde_json::to_vec(&shapes[0])?.len(),
        serde_json::to_vec(&shapes[1])?.len()
    );
    assert!(
        peak_mib <= MEMORY_CEILING_MIB,
        "peak RSS {peak_mib} MiB is over the {MEMORY_CEILING_MIB} MiB ceiling"
    );
    Ok(())
}

#[test]
fn logins_signups_and_writes_are_refused_as_documented() -> TestResult {
    let server = start()?;

    // Brute force: ten attempts a minute from one address, then 429 with Retry-After.
    for _ in 0..10 {
        let (status, answer) = post(
            &server,
            "/auth/simple/login",
            "",
            &json!({"username": "admin@example.com", "password": "Gu3ss-Passw0rd!"}),
        )?;
        assert_rejected(status, &answer, 401, "PasswordMismatch");
    }
    let response = agent(Duration::from_secs(10))
        .post(format!("{}/auth/simple/login", server.base))
        .send_json(json!({"username": "admin@example.com", "password": "Gu3ss-Passw0rd!"}))?;
    assert_eq!(response.status().as_u16(), 429);
    assert!(response.headers().get("retry-after").is_some());

    // A 100,000-character name on an invite link.
    let (status, token) = post(
        &server,
        "/api/admin/invite-link/tokens",
        TOKEN,
        &json!({"name": "team", "expiresAt": (chrono::Utc::now() + chrono::TimeDelta::days(365)).to_rfc3339()}),
    )?;
    assert_eq!(status, 201, "{token}");
    let signup = format!("/invite/{}/signup", token["secret"].as_str().unwrap_or_default());
    let (status, answer) = post(
        &server,
        &signup,
        "",
        &json!({"name": "n".repeat(100_000), "email": "a@example.com", "password": "Str0ng!Passw0rd"}),
    )?;
    assert_rejected(status, &answer, 400, "ValidationError");

    // A segment the SDKs could not evaluate, and a date JavaScript cannot read.
    let (status, answer) = post(
        &server,
        "/api/admin/segments",
        TOKEN,
        &json!({"name": "s", "constraints": [{"contextName": "userId", "operator": "EVAL", "values": ["1"]}]}),
    )?;
    assert_rejected(status, &answer, 400, "ValidationError");
    let (status, answer) = post(
        &server,
        "/api/admin/api-tokens",
        TOKEN,
        &json!({"tokenName": "t", "type": "client", "expiresAt": "+10000-01-01T00:00:00Z"}),
    )?;
    assert_rejected(status, &answer, 400, "ValidationError");

    // A production-only token adding a dependency that changes development's answers.
    let (status, answer) = post(
        &server,
        "/api/admin/projects/default/features/flag-01/dependencies",
        PRODUCTION_TOKEN,
        &json!({"feature": "flag-00"}),
    )?;
    assert_rejected(status, &answer, 403, "NoAccessError");

    // A body over the 1 MiB limit.
    let (status, answer) = post(
        &server,
        "/api/admin/playground",
        TOKEN,
        &json!({"environment": "development", "context": {"appName": "x".repeat(1 << 20)}}),
    )?;
    assert_rejected(status, &answer, 413, "PayloadTooLarge");

    // Errors below the router, and HEAD, over a raw socket.
    let long_url = format!(
        "GET /{} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        "a".repeat(100_000)
    );
    let response = exchange(server.port, long_url.as_bytes())?;
    assert_eq!(response.status, 400, "{response:?}");
    assert_envelope(&response, "ValidationError")?;
    let head = exchange(
        server.port,
        b"HEAD /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    let head = head?;
    assert_eq!(head.status, 200, "{head:?}");
    assert!(head.body.is_empty(), "HEAD has no body: {head:?}");
    Ok(())
}

/// Now, as SDKs write times.
fn sdk_now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What anyone holding a client token, or the public frontend token, can send: reports no
/// database could key, reports that multiply memory, far-future buckets, and floods of
/// instances. Every bad report is a 400 with the envelope, `/health` answers throughout, memory
/// stays under the ceiling, the views stay fast, and a good report sent among the attacks is
/// counted exactly.
#[test]
fn the_sdk_surface_refuses_bad_reports_and_keeps_usage_exact() -> TestResult {
    let server = start()?;
    let healthy = AtomicBool::new(true);
    let running = AtomicBool::new(true);
    /// Stops the health thread however the attacks end, a failed assertion included, so a
    /// failure is reported instead of hanging.
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(false, Ordering::Relaxed);
        }
    }
    std::thread::scope(|scope| -> TestResult {
        let health = scope.spawn(|| -> Result<u32, String> {
            let mut answers = 0;
            while running.load(Ordering::Relaxed) {
                let status = agent(Duration::from_secs(10))
                    .get(format!("{}/health", server.base))
                    .call()
                    .map_err(|error| error.to_string())?
                    .status()
                    .as_u16();
                if status != 200 {
                    healthy.store(false, Ordering::Relaxed);
                }
                answers += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(answers)
        });

        let stop = Stop(&running);
        let attacks = (|| -> TestResult {
            // Edge reports no database could key: a NUL, a 20,000-character identifier, a
            // 400,000-character application.
            for (identifier, app_name) in [
                ("a\u{0}b".to_owned(), "edge".to_owned()),
                ("i".repeat(20_000), "edge".to_owned()),
                ("edge-1".to_owned(), "a".repeat(400_000)),
            ] {
                let (status, answer) = post(
                    &server,
                    "/api/client/metrics/edge",
                    BACKEND_TOKEN,
                    &json!({"identifier": identifier, "appName": app_name}),
                )?;
                assert_rejected(status, &answer, 400, "ValidationError");
            }
            // A 100 KB `Unleash-Sdk` header, with the public frontend token.
            let mut response = agent(Duration::from_secs(10))
                .post(format!("{}/api/frontend/client/metrics", server.base))
                .header("Authorization", FRONTEND_TOKEN)
                .header("Unleash-Sdk", "x".repeat(100_000))
                .send_json(json!({"appName": "browser", "instanceId": "i", "bucket":
                    {"start": sdk_now(), "stop": sdk_now(), "toggles": {}}}))?;
            let answer: Value = response.body_mut().read_json().unwrap_or(Value::Null);
            assert_rejected(response.status().as_u16(), &answer, 400, "ValidationError");
            // Registrations of 110,000 strategies each.
            let strategies = vec!["x"; 110_000];
            for n in 0..10 {
                let (status, answer) = post(
                    &server,
                    "/api/client/register",
                    BACKEND_TOKEN,
                    &json!({"appName": format!("many-{n}"), "strategies": strategies, "started": sdk_now(), "interval": 1}),
                )?;
                assert_rejected(status, &answer, 400, "ValidationError");
            }
            // Buckets in the year 9999 are a clock gone wrong: taken and counted when they arrive,
            // never kept as a future that stays recent.
            let (status, answer) = post(
                &server,
                "/api/client/metrics",
                BACKEND_TOKEN,
                &json!({"appName": "web", "bucket": {"start": sdk_now(), "stop": "9999-12-31T23:59:59Z",
                    "toggles": {"flag-00": {"yes": 1}}}}),
            )?;
            assert_eq!(status, 202, "{answer}");
            let (status, answer) = post(
                &server,
                "/api/client/metrics/bulk",
                BACKEND_TOKEN,
                &json!({"applications": [], "metrics": [{"featureName": "flag-00", "appName": "a",
                    "environment": "development", "timestamp": "9999-06-01T00:00:00Z", "yes": 1, "no": 0}]}),
            )?;
            assert_eq!(status, 202, "{answer}");
            // A good report among the attacks, before the flood, is counted exactly.
            let (status, answer) = post(
                &server,
                "/api/client/metrics",
                BACKEND_TOKEN,
                &json!({"appName": "web", "instanceId": "i-1", "bucket": {"start": sdk_now(), "stop": sdk_now(),
                    "toggles": {"flag-00": {"yes": 7, "no": 2}}}}),
            )?;
            assert_eq!(status, 202, "{answer}");
            // A flood of instances and unknown names, as large as reports may be.
            for n in 0..20 {
                let applications: Vec<Value> = (0..1_000)
                    .map(|i| json!({"appName": format!("flood-{n}-{i}"), "instanceId": "i", "environment": "development"}))
                    .collect();
                let metrics: Vec<Value> = (0..1_000)
                    .map(|i| json!({"featureName": format!("unknown-{n}-{i}"), "appName": "flood", "environment": "development",
                        "timestamp": sdk_now(), "yes": 1, "no": 0}))
                    .collect();
                let (status, answer) = post(
                    &server,
                    "/api/client/metrics/bulk",
                    BACKEND_TOKEN,
                    &json!({"applications": applications, "metrics": metrics}),
                )?;
                assert_eq!(status, 202, "{answer}");
            }
            // The views answer what they show, paged in the database.
            let started = Instant::now();
            let mut response = agent(Duration::from_secs(10))
                .get(format!("{}/api/admin/metrics/applications?limit=10", server.base))
                .header("Authorization", TOKEN)
                .call()?;
            let list: Value = response.body_mut().with_config().limit(64 << 20).read_json()?;
            eprintln!(
                "applications view: {:?}, total {}",
                started.elapsed(),
                list["total"]
            );
            assert_eq!(list["applications"].as_array().map(Vec::len), Some(10), "{list}");
            assert!(
                list["total"].as_i64().unwrap_or_default() >= 1_000,
                "{}",
                list["total"]
            );
            let mut response = agent(Duration::from_secs(10))
                .get(format!("{}/api/admin/metrics/unknown-flags", server.base))
                .header("Authorization", TOKEN)
                .call()?;
            let unknown: Value = response.body_mut().with_config().limit(64 << 20).read_json()?;
            assert!(
                unknown["unknownFlags"]
                    .as_array()
                    .is_some_and(|flags| !flags.is_empty()),
                "{unknown}"
            );
            let mut response = agent(Duration::from_secs(10))
                .get(format!(
                    "{}/api/admin/client-metrics/features/flag-00/raw",
                    server.base
                ))
                .header("Authorization", TOKEN)
                .call()?;
            let raw: Value = response.body_mut().read_json()?;
            let counted = raw["data"]
                .as_array()
                .into_iter()
                .flatten()
                .fold((0, 0), |(yes, no), hour| {
                    (
                        yes + hour["yes"].as_i64().unwrap_or_default(),
                        no + hour["no"].as_i64().unwrap_or_default(),
                    )
                });
            // The good report's 7 and 2, and the two skewed reports' 1 each, in the hours shown.
            assert_eq!(counted, (9, 2), "{raw}");
            Ok(())
        })();
        drop(stop);
        let answers = health.join().map_err(|_| "the health thread panicked")??;
        // The attacks' own failures count, not only their panics.
        attacks?;
        assert!(
            answers > 0 && healthy.load(Ordering::Relaxed),
            "/health answered throughout"
        );
        Ok(())
    })?;
    let peak_mib = peak_memory_kib(server.running.0.id())? / 1024;
    eprintln!("SDK surface attacks: peak RSS {peak_mib} MiB");
    assert!(
        peak_mib <= MEMORY_CEILING_MIB,
        "peak RSS {peak_mib} MiB is over the {MEMORY_CEILING_MIB} MiB ceiling"
    );
    Ok(())
}
