//! Several server processes on one database behave as one server: writes through either are
//! seen by the other, read-modify-write operations stay correct across them, start-up seeding
//! is idempotent, and sessions work on any replica. Also: a server killed with SIGKILL in the
//! middle of writes keeps every write it acknowledged, and `copy-database` moves everything.
//!
//! These run on the backend under test like every other test (two processes on one SQLite file
//! share it through WAL), so with `HALYARD_TEST_DATABASE=postgres` they are the two-replica tests
//! on PostgreSQL.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use flag_store::scratch::Scratch;
use flag_store::{Backend, queries};
use serde_json::{Value, json};

use crate::common::process::{Running, agent, start_server_with};

const ADMIN: &str = "*:*.replica-admin-secret";
const BACKEND: &str = "*:development.replica-backend-secret";
const PASSWORD: &str = "Corr3ct-Horse!";

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One running replica.
struct Replica {
    base: String,
    running: Running,
}

impl Replica {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// Starts `count` replicas on the scratch database at the same moment, each seeding the same
/// tokens, and waits until all are ready.
fn start_replicas(scratch: &Scratch, count: usize) -> Result<Vec<Replica>, Box<dyn std::error::Error>> {
    let barrier = Arc::new(Barrier::new(count));
    let started: Vec<_> = std::thread::scope(|scope| {
        let spawned: Vec<_> = (0..count)
            .map(|_| {
                let barrier = Arc::clone(&barrier);
                scope.spawn(move || {
                    barrier.wait();
                    start_server_with(
                        scratch,
                        &["--log-level", "warn"],
                        &[
                            ("INIT_ADMIN_API_TOKENS", ADMIN),
                            ("INIT_BACKEND_API_TOKENS", BACKEND),
                            ("HALYARD_SIGNUP_RATE_PER_MINUTE", "1000"),
                            ("HALYARD_LOGIN_RATE_PER_MINUTE", "1000"),
                            ("UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION", "true"),
                        ],
                    )
                    .map_err(|error| error.to_string())
                })
            })
            .collect();
        spawned
            .into_iter()
            .map(std::thread::ScopedJoinHandle::join)
            .collect()
    });
    let mut replicas = Vec::with_capacity(count);
    for result in started {
        let (child, port) = result.map_err(|_| "a replica's starter panicked")??;
        replicas.push(Replica {
            base: format!("http://127.0.0.1:{port}"),
            running: Running(child),
        });
    }
    Ok(replicas)
}

/// Sends `body` (or nothing) with `method` and the admin token; returns the status and JSON body.
fn call(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    body: Option<&Value>,
) -> Result<(u16, Value), ureq::Error> {
    let mut response = match (method, body) {
        ("GET", _) => agent.get(url).header("Authorization", ADMIN).call()?,
        ("POST", Some(body)) => agent.post(url).header("Authorization", ADMIN).send_json(body)?,
        ("PUT", Some(body)) => agent.put(url).header("Authorization", ADMIN).send_json(body)?,
        _ => unreachable!("{method} without a body"),
    };
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string()?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
}

/// Whether `feature` is on in `development` for the playground of `replica`.
fn played(agent: &ureq::Agent, replica: &Replica, feature: &str) -> Result<Option<bool>, ureq::Error> {
    let (_, body) = call(
        agent,
        "POST",
        &replica.url("/api/admin/playground"),
        Some(&json!({"environment": "development", "context": {"appName": "replicas"}})),
    )?;
    Ok(body["features"].as_array().and_then(|features| {
        features
            .iter()
            .find(|entry| entry["name"] == feature)
            .and_then(|entry| entry["isEnabled"].as_bool())
    }))
}

/// The client API's answer on `replica` for the backend token: status, ETag and feature names.
fn client_features(
    agent: &ureq::Agent,
    replica: &Replica,
) -> Result<(u16, String, Vec<String>), ureq::Error> {
    let mut response = agent
        .get(replica.url("/api/client/features"))
        .header("Authorization", BACKEND)
        .call()?;
    let etag = response
        .headers()
        .get("etag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body: Value = serde_json::from_str(&response.body_mut().read_to_string()?).unwrap_or_default();
    let names = body["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|feature| feature["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Ok((response.status().as_u16(), etag, names))
}

/// Logs in on `replica` with the test password; returns the `Cookie` header value.
fn log_in(
    agent: &ureq::Agent,
    replica: &Replica,
    username: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let login = agent
        .post(replica.url("/auth/simple/login"))
        .send_json(json!({"username": username, "password": PASSWORD}))?;
    assert_eq!(login.status().as_u16(), 200, "login as {username}");
    Ok(login
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.starts_with(admin_api::auth::SESSION_COOKIE))
        .and_then(|value| value.split(';').next())
        .ok_or("no session cookie")?
        .to_owned())
}

/// The `DATABASE_URL` a server on `scratch` is given.
fn database_url(scratch: &Scratch) -> Result<String, Box<dyn std::error::Error>> {
    Ok(scratch
        .server_environment()
        .into_iter()
        .find(|(name, _)| *name == "DATABASE_URL")
        .map(|(_, value)| value)
        .ok_or("no DATABASE_URL")?)
}

/// Polls `check` until it holds, for at most one second.
fn within_a_second(
    mut check: impl FnMut() -> Result<bool, Box<dyn std::error::Error>>,
) -> Result<bool, Box<dyn std::error::Error>> {
    let deadline = Instant::now() + Duration::from_secs(1);
    loop {
        if check()? {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_write_on_one_replica_is_seen_by_the_other_within_a_second() -> TestResult {
    let scratch = Scratch::new()?;
    let replicas = start_replicas(&scratch, 2)?;
    let (a, b) = (&replicas[0], &replicas[1]);
    let agent = agent();

    // Both replicas compiled and tagged the empty state before the write.
    assert_eq!(played(&agent, b, "shared")?, None);
    let (status, etag_before, names) = client_features(&agent, b)?;
    assert_eq!((status, names.len()), (200, 0));

    let base = "/api/admin/projects/default/features";
    let (status, body) = call(&agent, "POST", &a.url(base), Some(&json!({"name": "shared"})))?;
    assert_eq!(status, 201, "{body}");
    let environment = format!("{base}/shared/environments/development");
    let (status, body) = call(
        &agent,
        "POST",
        &a.url(&format!("{environment}/strategies")),
        Some(&json!({"name": "default"})),
    )?;
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(
        &agent,
        "POST",
        &a.url(&format!("{environment}/on")),
        Some(&json!({})),
    )?;
    assert_eq!(status, 200, "{body}");

    assert!(
        within_a_second(|| Ok(played(&agent, b, "shared")? == Some(true)))?,
        "the other replica's playground did not see the write within a second"
    );
    assert!(
        within_a_second(|| {
            let (_, etag, names) = client_features(&agent, b)?;
            Ok(etag != etag_before && names == ["shared"])
        })?,
        "the other replica's client API did not see the write within a second"
    );

    // Seeding the same tokens from both replicas at once stored each token once.
    let (status, body) = call(&agent, "GET", &b.url("/api/admin/api-tokens"), None)?;
    assert_eq!(status, 200, "{body}");
    let mut types: Vec<&str> = body["tokens"]
        .as_array()
        .map(|tokens| tokens.iter().filter_map(|token| token["type"].as_str()).collect())
        .unwrap_or_default();
    types.sort_unstable();
    // The seeded backend token is listed as a client token, as Unleash lists it.
    assert_eq!(types, ["admin", "client"], "{body}");
    Ok(())
}

#[test]
fn a_signup_race_split_over_two_replicas_makes_one_user_whose_session_works_on_both() -> TestResult {
    let scratch = Scratch::new()?;
    let replicas = start_replicas(&scratch, 2)?;
    let agent = agent();
    let expires_at = (chrono::Utc::now() + chrono::Duration::days(7)).to_rfc3339();
    let (status, token) = call(
        &agent,
        "POST",
        &replicas[0].url("/api/admin/invite-link/tokens"),
        Some(&json!({"name": "team", "expiresAt": expires_at})),
    )?;
    assert_eq!(status, 201, "{token}");
    let secret = token["secret"].as_str().ok_or("no secret")?.to_owned();

    let racers = 20;
    let barrier = Barrier::new(racers);
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..racers)
            .map(|index| {
                let (replica, barrier, agent, secret) = (&replicas[index % 2], &barrier, &agent, &secret);
                scope.spawn(move || {
                    let email = if index % 4 < 2 {
                        "race@example.com"
                    } else {
                        "RACE@Example.com"
                    };
                    barrier.wait();
                    agent
                        .post(replica.url(&format!("/invite/{secret}/signup")))
                        .send_json(json!({"email": email, "name": "Racer", "password": PASSWORD}))
                        .map_or(0, |response| response.status().as_u16())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or(0))
            .collect()
    });
    let created = statuses.iter().filter(|status| **status == 200).count();
    let conflicts = statuses.iter().filter(|status| **status == 409).count();
    assert_eq!((created, conflicts), (1, racers - 1), "{statuses:?}");
    let (_, users) = call(&agent, "GET", &replicas[1].url("/api/admin/user-admin"), None)?;
    let racers_stored = users["users"]
        .as_array()
        .map(|users| {
            users
                .iter()
                .filter(|user| user["email"] == "race@example.com")
                .count()
        })
        .unwrap_or_default();
    assert_eq!(racers_stored, 1, "{users}");

    // A session made on one replica is a session on the other.
    let cookie = log_in(&agent, &replicas[0], "race@example.com")?;
    let played = agent
        .post(replicas[1].url("/api/admin/playground"))
        .header("Cookie", &cookie)
        .send_json(json!({"environment": "development", "context": {"appName": "a"}}))?;
    assert_eq!(played.status().as_u16(), 200);
    let logout = agent
        .post(replicas[1].url("/logout"))
        .header("Cookie", &cookie)
        .config()
        .max_redirects(0)
        .build()
        .send_empty()?;
    assert_eq!(logout.status().as_u16(), 302);
    let after = agent
        .post(replicas[0].url("/api/admin/playground"))
        .header("Cookie", &cookie)
        .send_json(json!({"environment": "development", "context": {"appName": "a"}}))?;
    assert_eq!(
        after.status().as_u16(),
        401,
        "a session ended on one replica still works on the other"
    );
    Ok(())
}

#[test]
fn variants_batches_from_two_replicas_lose_nothing_and_keep_the_audit_chain() -> TestResult {
    const THREADS_PER_REPLICA: usize = 4;
    const WRITES: usize = 10;
    let scratch = Scratch::new()?;
    let replicas = start_replicas(&scratch, 2)?;
    let agent = agent();
    let (status, body) = call(
        &agent,
        "POST",
        &replicas[0].url("/api/admin/projects/default/features"),
        Some(&json!({"name": "contended"})),
    )?;
    assert_eq!(status, 201, "{body}");

    let threads = 2 * THREADS_PER_REPLICA;
    let barrier = Barrier::new(threads);
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let (replica, barrier, agent) = (&replicas[thread % 2], &barrier, &agent);
                scope.spawn(move || {
                    barrier.wait();
                    let mut failures = Vec::new();
                    for write in 0..WRITES {
                        let variants = json!({
                            "environments": ["development", "production"],
                            "variants": [
                                {"name": format!("t{thread}-w{write}-a"), "weight": 500, "weightType": "variable"},
                                {"name": format!("t{thread}-w{write}-b"), "weight": 500, "weightType": "variable"},
                            ],
                        });
                        match call(
                            agent,
                            "PUT",
                            &replica.url("/api/admin/projects/default/features/contended/variants-batch"),
                            Some(&variants),
                        ) {
                            Ok((200, _)) => {}
                            Ok((status, body)) => failures.push(format!("{status} {body}")),
                            Err(error) => failures.push(error.to_string()),
                        }
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_else(|_| vec!["panicked".into()]))
            .collect()
    });
    assert!(failures.is_empty(), "{failures:?}");

    let store = scratch.open()?;
    let mut conn = store.connection()?;
    for environment in ["development", "production"] {
        let events = queries::events::for_feature(&mut conn, "contended", environment)?;
        assert_eq!(
            events.len(),
            threads * WRITES,
            "{environment}: one event per write"
        );
        for pair in events.windows(2) {
            assert_eq!(
                pair[1].pre_data, pair[0].data,
                "{environment}: a gap in the audit chain"
            );
        }
        let stored = queries::variants::get(&mut conn, "default", "contended", environment)?;
        let last = events
            .last()
            .and_then(|event| event.data.clone())
            .unwrap_or_default();
        assert_eq!(
            serde_json::to_value(&stored)?,
            serde_json::from_str::<Value>(&last)?["variants"]
        );
    }
    let development = queries::variants::get(&mut conn, "default", "contended", "development")?;
    let production = queries::variants::get(&mut conn, "default", "contended", "production")?;
    assert_eq!(development, production, "a batch was mixed between environments");
    Ok(())
}

#[test]
fn each_event_reaches_a_webhook_once_whichever_replica_wrote_it() -> TestResult {
    let scratch = Scratch::new()?;
    let replicas = start_replicas(&scratch, 2)?;
    let agent = agent();
    let hook = crate::catalogue::webhooks::receiver(crate::catalogue::webhooks::Answer::Status(204))?;
    let (status, body) = call(
        &agent,
        "POST",
        &replicas[0].url("/api/admin/addons"),
        Some(
            &json!({"provider": "webhook", "enabled": true, "parameters": {"url": hook.url("/r")}, "events": ["feature-created"]}),
        ),
    )?;
    assert_eq!(status, 201, "{body}");
    let names: Vec<String> = (0..20).map(|index| format!("replicated-{index}")).collect();
    for (index, name) in names.iter().enumerate() {
        let (status, body) = call(
            &agent,
            "POST",
            &replicas[index % 2].url("/api/admin/projects/default/features"),
            Some(&json!({"name": name})),
        )?;
        assert_eq!(status, 201, "{body}");
    }
    let mut delivered = Vec::new();
    for _ in &names {
        let event: Value = serde_json::from_str(&hook.next()?.body)?;
        delivered.push(event["featureName"].as_str().unwrap_or_default().to_owned());
    }
    delivered.sort();
    let mut expected = names.clone();
    expected.sort();
    assert_eq!(delivered, expected);
    assert!(
        hook.received.recv_timeout(Duration::from_secs(2)).is_err(),
        "an event was delivered twice"
    );
    Ok(())
}

#[test]
fn sigkill_in_the_middle_of_writes_keeps_every_acknowledged_write() -> TestResult {
    let scratch = Scratch::new()?;
    let mut replicas = start_replicas(&scratch, 1)?;
    let replica = replicas.pop().ok_or("no replica")?;
    let agent = agent();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let acknowledged: Vec<String> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..4)
            .map(|thread| {
                let (replica, agent, stop) = (&replica, &agent, &stop);
                scope.spawn(move || {
                    let mut acknowledged = Vec::new();
                    for write in 0.. {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let name = format!("crash-{thread}-{write}");
                        match call(
                            agent,
                            "POST",
                            &replica.url("/api/admin/projects/default/features"),
                            Some(&json!({"name": name})),
                        ) {
                            Ok((201, _)) => acknowledged.push(name),
                            // The kill: connections are refused or reset from here on.
                            _ => break,
                        }
                    }
                    acknowledged
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(700));
        // SIGKILL, in the middle of the writers' requests.
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &replica.running.0.id().to_string()])
            .status();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writers
            .into_iter()
            .flat_map(|writer| writer.join().unwrap_or_default())
            .collect()
    });
    drop(replica);
    assert!(
        acknowledged.len() > 4,
        "too few writes before the kill: {}",
        acknowledged.len()
    );

    let store = scratch.open()?;
    let mut conn = store.connection()?;
    let stored: std::collections::HashSet<String> = queries::features::list(&mut conn, "default")?
        .into_iter()
        .map(|feature| feature.name)
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|name| !stored.contains(*name))
        .collect();
    assert!(lost.is_empty(), "acknowledged but lost after SIGKILL: {lost:?}");
    Ok(())
}

#[test]
fn copy_database_moves_everything_and_refuses_a_written_target() -> TestResult {
    // The source is always SQLite, the target the backend under test.
    let source = Scratch::on(Backend::Sqlite)?;
    let (session_cookie, events) = {
        let mut replicas = start_replicas(&source, 1)?;
        let replica = replicas.pop().ok_or("no replica")?;
        let agent = agent();
        let base = "/api/admin/projects/default/features";
        let (status, body) = call(
            &agent,
            "POST",
            &replica.url(base),
            Some(&json!({"name": "moved"})),
        )?;
        assert_eq!(status, 201, "{body}");
        let (status, body) = call(
            &agent,
            "PUT",
            &replica.url(&format!("{base}/moved/variants-batch")),
            Some(
                &json!({"environments": ["production"], "variants": [{"name": "blue", "weight": 1000, "weightType": "variable"}]}),
            ),
        )?;
        assert_eq!(status, 200, "{body}");
        let expires_at = (chrono::Utc::now() + chrono::Duration::days(7)).to_rfc3339();
        let (_, token) = call(
            &agent,
            "POST",
            &replica.url("/api/admin/invite-link/tokens"),
            Some(&json!({"name": "team", "expiresAt": expires_at})),
        )?;
        let secret = token["secret"].as_str().ok_or("no secret")?;
        let signup = agent
            .post(replica.url(&format!("/invite/{secret}/signup")))
            .send_json(json!({"email": "moved@example.com", "name": "Moved", "password": PASSWORD}))?;
        assert_eq!(signup.status().as_u16(), 200);
        let cookie = log_in(&agent, &replica, "moved@example.com")?;
        let store = source.open()?;
        let events =
            queries::events::of_type(&mut *store.connection()?, "feature-environment-variants-updated")?;
        (cookie, events)
    };

    let target = Scratch::new()?;
    let (from, to) = (database_url(&source)?, database_url(&target)?);
    let copy = || {
        crate::common::process::server_command(&target)
            .args([
                "--log-level",
                "info",
                "copy-database",
                "--from",
                &from,
                "--to",
                &to,
            ])
            .output()
    };
    let first = copy()?;
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let logged = String::from_utf8_lossy(&first.stdout);
    assert!(logged.contains("row counts match"), "{logged}");

    // The copy answers as the source did: flags, variants, tokens, sessions, the audit log.
    let mut replicas = start_replicas(&target, 1)?;
    let replica = replicas.pop().ok_or("no replica")?;
    let agent = agent();
    let (status, feature) = call(
        &agent,
        "GET",
        &replica.url("/api/admin/projects/default/features/moved?variantEnvironments=true"),
        None,
    )?;
    assert_eq!(status, 200, "{feature}");
    let production = feature["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|environment| environment["name"] == "production")
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(production["variants"][0]["name"], "blue", "{feature}");
    let session = agent
        .post(replica.url("/api/admin/playground"))
        .header("Cookie", &session_cookie)
        .send_json(json!({"environment": "development", "context": {"appName": "a"}}))?;
    assert_eq!(
        session.status().as_u16(),
        200,
        "the session did not survive the copy"
    );
    let store = target.open()?;
    let mut conn = store.connection()?;
    let copied = queries::events::of_type(&mut conn, "feature-environment-variants-updated")?;
    assert_eq!(copied, events);
    // New rows continue after the copied ids.
    let (status, body) = call(
        &agent,
        "POST",
        &replica.url("/api/admin/projects/default/features"),
        Some(&json!({"name": "after-the-copy"})),
    )?;
    assert_eq!(status, 201, "{body}");

    let missing = crate::common::process::server_command(&target)
        .args(["copy-database", "--from", "/nonexistent/flags.db", "--to", &to])
        .output()?;
    assert!(!missing.status.success(), "a copy from a missing file succeeded");
    let message = String::from_utf8_lossy(&missing.stderr);
    assert!(
        message.contains("--from must name an existing SQLite database file"),
        "{message}"
    );

    let again = copy()?;
    assert!(
        !again.status.success(),
        "a second copy into a written database succeeded"
    );
    let message = String::from_utf8_lossy(&again.stderr);
    assert!(message.contains("not empty"), "{message}");
    Ok(())
}

/// Sends `body` (or nothing) with `method` as the person whose session `cookie` is.
fn call_as(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    cookie: &str,
    body: &Value,
) -> Result<(u16, Value), ureq::Error> {
    let mut response = match method {
        "POST" => agent.post(url).header("Cookie", cookie).send_json(body)?,
        "PUT" => agent.put(url).header("Cookie", cookie).send_json(body)?,
        _ => agent.get(url).header("Cookie", cookie).call()?,
    };
    let status = response.status().as_u16();
    let text = response.body_mut().read_to_string()?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
}

/// `count` flags on in production, which then takes changes only through requests; an author
/// and a reviewer signed in on `replica`.
fn protected_flags(
    agent: &ureq::Agent,
    replica: &Replica,
    count: usize,
) -> Result<(Vec<String>, String, String), Box<dyn std::error::Error>> {
    let mut flags = Vec::with_capacity(count);
    for index in 0..count {
        let name = format!("scheduled-{index}");
        let (status, body) = call(
            agent,
            "POST",
            &replica.url("/api/admin/projects/default/features"),
            Some(&json!({"name": name})),
        )?;
        assert_eq!(status, 201, "{body}");
        let on = format!("/api/admin/projects/default/features/{name}/environments/production/on");
        assert_eq!(call(agent, "POST", &replica.url(&on), Some(&json!({})))?.0, 200);
        flags.push(name);
    }
    for (email, role) in [("author@example.com", 2), ("reviewer@example.com", 1)] {
        let (status, body) = call(
            agent,
            "POST",
            &replica.url("/api/admin/user-admin"),
            Some(&json!({"email": email, "rootRole": role, "password": PASSWORD})),
        )?;
        assert_eq!(status, 201, "{body}");
    }
    let (status, _) = call(
        agent,
        "PUT",
        &replica.url("/api/admin/projects/default/environments/production/change-requests/config"),
        Some(&json!({"changeRequestsEnabled": true, "requiredApprovals": 1})),
    )?;
    assert_eq!(status, 204);
    let author = log_in(agent, replica, "author@example.com")?;
    let reviewer = log_in(agent, replica, "reviewer@example.com")?;
    Ok((flags, author, reviewer))
}

/// For each flag, a request switching it off in production, sent for review and approved; their
/// ids.
fn approve_switching_off(
    agent: &ureq::Agent,
    replica: &Replica,
    (author, reviewer): (&str, &str),
    flags: &[String],
) -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    let mut ids = Vec::with_capacity(flags.len());
    for flag in flags {
        let (status, draft) = call_as(
            agent,
            "POST",
            &replica.url("/api/admin/projects/default/environments/production/change-requests"),
            author,
            &json!({"feature": flag, "action": "updateEnabled", "payload": {"enabled": false}}),
        )?;
        assert_eq!(status, 200, "{draft}");
        let id = draft["id"].as_i64().ok_or("no id")?;
        let state = replica.url(&format!("/api/admin/projects/default/change-requests/{id}/state"));
        for (who, body) in [
            (author, json!({"state": "In review"})),
            (reviewer, json!({"state": "Approved"})),
        ] {
            let (status, answer) = call_as(agent, "PUT", &state, who, &body)?;
            assert_eq!(status, 200, "{body}: {answer}");
        }
        ids.push(id);
    }
    Ok(ids)
}

/// Approves a request for each flag (as [`approve_switching_off`]) and schedules them all for
/// the same moment, far enough ahead that scheduling them cannot outlast it however loaded the
/// machine: two seconds, plus as long as approving them took (three calls each, against
/// scheduling's one). Their ids and that moment.
fn schedule_switching_off(
    agent: &ureq::Agent,
    replica: &Replica,
    (author, reviewer): (&str, &str),
    flags: &[String],
) -> Result<(Vec<i64>, chrono::DateTime<chrono::Utc>), Box<dyn std::error::Error>> {
    let began = Instant::now();
    let ids = approve_switching_off(agent, replica, (author, reviewer), flags)?;
    let due =
        chrono::Utc::now() + chrono::Duration::seconds(2) + chrono::Duration::from_std(began.elapsed())?;
    let at = due.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    for id in &ids {
        let state = replica.url(&format!("/api/admin/projects/default/change-requests/{id}/state"));
        let body = json!({"state": "Scheduled", "scheduledAt": at});
        let (status, answer) = call_as(agent, "PUT", &state, reviewer, &body)?;
        assert_eq!(status, 200, "{body}: {answer}");
    }
    Ok((ids, due))
}

/// How many events of `event_type` the database holds.
fn events_of(scratch: &Scratch, event_type: &str) -> Result<usize, Box<dyn std::error::Error>> {
    let store = scratch.open()?;
    let mut conn = store.connection()?;
    Ok(queries::events::of_type(&mut conn, event_type)?.len())
}

#[test]
fn scheduled_change_requests_apply_once_across_two_replicas() -> TestResult {
    let scratch = Scratch::new()?;
    let replicas = start_replicas(&scratch, 2)?;
    let agent = agent();
    let (flags, author, reviewer) = protected_flags(&agent, &replicas[0], 20)?;
    let (ids, due) = schedule_switching_off(&agent, &replicas[0], (&author, &reviewer), &flags)?;
    let wait = (due - chrono::Utc::now()).to_std().unwrap_or_default();
    std::thread::sleep(wait);
    // Within a second of their time, on both replicas.
    let mut all_applied = false;
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline && !all_applied {
        let mut applied = 0;
        for id in &ids {
            let url = replicas[1].url(&format!("/api/admin/projects/default/change-requests/{id}"));
            let (_, read) = call_as(&agent, "GET", &url, &reviewer, &Value::Null)?;
            applied += usize::from(read["state"] == "Applied");
        }
        all_applied = applied == ids.len();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        all_applied,
        "not every request was applied within a second of its time"
    );
    for replica in &replicas {
        for flag in &flags {
            let url = replica.url(&format!("/api/admin/projects/default/features/{flag}"));
            let (_, read) = call(&agent, "GET", &url, None)?;
            let production = read["environments"]
                .as_array()
                .and_then(|environments| environments.iter().find(|env| env["name"] == "production"))
                .cloned()
                .unwrap_or_default();
            assert_eq!(production["enabled"], json!(false), "{flag}");
        }
    }
    // Exactly once: one application and one switch each, though both replicas were looking.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(events_of(&scratch, "change-request-applied")?, ids.len());
    assert_eq!(
        events_of(&scratch, "change-request-scheduled-application-success")?,
        ids.len()
    );
    assert_eq!(events_of(&scratch, "feature-environment-disabled")?, ids.len());
    Ok(())
}

#[test]
fn scheduled_change_requests_survive_a_sigkill_of_the_replica_that_held_them() -> TestResult {
    let scratch = Scratch::new()?;
    let mut replicas = start_replicas(&scratch, 1)?;
    let first = replicas.pop().ok_or("no replica")?;
    let agent = agent();
    let (flags, author, reviewer) = protected_flags(&agent, &first, 30)?;
    let (ids, due) = schedule_switching_off(&agent, &first, (&author, &reviewer), &flags)?;
    // SIGKILL just as they fall due: some may be applied, the rest are not, none is half-applied.
    let wait = (due - chrono::Utc::now()).to_std().unwrap_or_default();
    std::thread::sleep(wait + Duration::from_millis(5));
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &first.running.0.id().to_string()])
        .status();
    drop(first);
    let applied_before = events_of(&scratch, "change-request-applied")?;
    assert_eq!(
        events_of(&scratch, "feature-environment-disabled")?,
        applied_before
    );

    let mut replicas = start_replicas(&scratch, 1)?;
    let second = replicas.pop().ok_or("no replica")?;
    let reviewer = log_in(&agent, &second, "reviewer@example.com")?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut applied = 0;
        for id in &ids {
            let url = second.url(&format!("/api/admin/projects/default/change-requests/{id}"));
            let (_, read) = call_as(&agent, "GET", &url, &reviewer, &Value::Null)?;
            applied += usize::from(read["state"] == "Applied");
        }
        if applied == ids.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{applied} of {} applied after the restart",
            ids.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(events_of(&scratch, "change-request-applied")?, ids.len());
    assert_eq!(events_of(&scratch, "feature-environment-disabled")?, ids.len());
    Ok(())
}
