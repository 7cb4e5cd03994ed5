//! Flag changes pushed to SDKs: the delta API (`/api/client/delta`) and the event stream
//! (`/api/client/streaming`). The delta API is driven in-process; streams run against the real
//! binary, whose follower loads each new revision, on the backend under test.

use std::io::{BufRead, Write as _};
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::test as actix_test;
use flag_store::scratch::Scratch;
use serde_json::{Value, json};

use crate::common::process::{Running, start_server_with};
use crate::common::sse::{Event, Item, Sse};
use crate::common::{ADMIN, SDK, TestApp, assert_error, delete, get, post, send};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A backend token for `development` limited to project `default`.
const DEFAULT_ONLY: &str = "default:development.default-only-secret";

/// Answers `GET /api/client/delta` with `If-None-Match: known`: status, ETag, body.
async fn delta<S, B>(
    service: &S,
    token: &str,
    query: &str,
    known: Option<&str>,
) -> (StatusCode, String, Value)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut request = get(&format!("/api/client/delta{query}"), token);
    if let Some(known) = known {
        request = request.insert_header(("If-None-Match", known));
    }
    let response = actix_test::call_service(service, request.to_request()).await;
    let status = response.status();
    let etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = actix_test::read_body(response).await;
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, etag, body)
}

/// The event types of a delta document, with the flag or segment each names.
fn summary(body: &Value) -> Vec<String> {
    body["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .map(|event| {
                    let what = match event["type"].as_str().unwrap_or_default() {
                        "hydration" => format!(
                            "{}+{}",
                            event["features"].as_array().map_or(0, Vec::len),
                            event["segments"].as_array().map_or(0, Vec::len)
                        ),
                        "feature-updated" => event["feature"]["name"].as_str().unwrap_or_default().to_owned(),
                        "feature-removed" => format!(
                            "{}@{}",
                            event["featureName"].as_str().unwrap_or_default(),
                            event["project"].as_str().unwrap_or_default()
                        ),
                        "segment-updated" => event["segment"]["name"].as_str().unwrap_or_default().to_owned(),
                        "segment-removed" => event["segmentId"].to_string(),
                        other => format!("unknown {other}"),
                    };
                    format!("{} {what}", event["type"].as_str().unwrap_or_default())
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The revision in an `ETag` or SSE id.
fn revision(tag: &str) -> Result<i64, std::num::ParseIntError> {
    tag.trim_matches('"').parse()
}

#[actix_web::test]
async fn the_delta_api_hydrates_then_sends_only_what_changed() -> TestResult {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "beta", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let segment = body["id"].as_i64().ok_or("no segment id")?;
    for name in ["alpha", "beta-flag"] {
        let (status, body) = send(
            &service,
            post(
                "/api/admin/projects/default/features",
                ADMIN,
                json!({"name": name}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    // No revision held: one hydration, tagged with the revision it reflects.
    let (status, etag, body) = delta(&service, SDK, "", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(summary(&body), ["hydration 2+1"]);
    assert_eq!(
        revision(&etag)?,
        body["events"][0]["eventId"].as_i64().unwrap_or(-1)
    );
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let hydrated = &body["events"][0];
    assert_eq!(hydrated["features"][0]["name"], "alpha");
    assert_eq!(hydrated["segments"][0]["name"], "beta");

    // Nothing changed: 304 with the same tag.
    let (status, same, _) = delta(&service, SDK, "", Some(&etag)).await;
    assert_eq!((status, same.as_str()), (StatusCode::NOT_MODIFIED, etag.as_str()));

    // A strategy naming the segment, and a switch: only alpha is sent, the segment apart.
    let base = "/api/admin/projects/default/features/alpha/environments/development";
    let (status, body) = send(
        &service,
        post(
            &format!("{base}/strategies"),
            ADMIN,
            json!({"name": "default", "segments": [segment]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let strategy = body["id"].as_str().ok_or("no strategy id")?.to_owned();
    let (status, _) = send(&service, post(&format!("{base}/on"), ADMIN, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, next, body) = delta(&service, SDK, "", Some(&etag)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The segment goes with the flag that now names it, first.
    assert_eq!(summary(&body), ["segment-updated beta", "feature-updated alpha"]);
    let alpha = &body["events"][1]["feature"];
    assert_eq!(alpha["enabled"], true);
    assert_eq!(alpha["strategies"][0]["segments"], json!([segment]));
    assert_eq!(
        alpha["strategies"][0]["constraints"],
        json!([]),
        "segments travel apart"
    );
    assert!(revision(&next)? > revision(&etag)?);

    // The segment changes, a flag is archived, the segment goes once nothing names it.
    let (status, body) = send(
        &service,
        actix_test::TestRequest::put()
            .uri(&format!("/api/admin/segments/{segment}"))
            .insert_header(("Authorization", ADMIN))
            .set_json(json!({"name": "beta", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro", "team"]}]})),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    let (status, body) = send(
        &service,
        delete("/api/admin/projects/default/features/beta-flag", ADMIN),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    let (status, body) = send(&service, delete(&format!("{base}/strategies/{strategy}"), ADMIN)).await;
    assert!(status.is_success(), "{status} {body}");
    let (status, body) = send(&service, delete(&format!("/api/admin/segments/{segment}"), ADMIN)).await;
    assert!(status.is_success(), "{status} {body}");
    let (status, latest, body) = delta(&service, SDK, "", Some(&next)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        summary(&body),
        [
            "feature-updated alpha",
            "feature-removed beta-flag@default",
            format!("segment-removed {segment}").as_str()
        ]
    );

    // From the first tag: every change since, oldest first, each with the revision it leads to.
    let (status, from_first, body) = delta(&service, SDK, "", Some(&etag)).await;
    assert_eq!((status, from_first.as_str()), (StatusCode::OK, latest.as_str()));
    assert_eq!(
        summary(&body),
        [
            "segment-updated beta",
            "feature-updated alpha",
            "feature-updated alpha",
            "feature-removed beta-flag@default",
            format!("segment-removed {segment}").as_str()
        ]
    );
    let ids: Vec<i64> = body["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter_map(|event| event["eventId"].as_i64())
                .collect()
        })
        .unwrap_or_default();
    assert!(ids.windows(2).all(|pair| pair[0] <= pair[1]), "{ids:?}");
    assert_eq!(ids.last().copied(), Some(revision(&latest)?));

    // A revision this server never loaded, one in the future, or a tag that is no revision:
    // a hydration, which is always right.
    for known in ["\"1\"", "\"999999\"", "W/\"abc\"", "*"] {
        let (status, tag, body) = delta(&service, SDK, "", Some(known)).await;
        assert_eq!(status, StatusCode::OK, "{known}: {body}");
        assert_eq!(summary(&body), ["hydration 1+0"], "{known}");
        assert_eq!(tag, latest, "{known}");
    }

    // A name prefix narrows what is sent.
    let (status, _, body) = delta(&service, SDK, "?namePrefix=zzz", None).await;
    assert_eq!(
        (status, summary(&body)),
        (StatusCode::OK, vec!["hydration 0+0".to_owned()])
    );
    Ok(())
}

#[actix_web::test]
async fn the_delta_api_keeps_to_the_tokens_projects_and_environment() -> TestResult {
    let app = TestApp::new();
    app.store_token(DEFAULT_ONLY, "backend", "development", &["default"])?;
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects",
            ADMIN,
            json!({"id": "other", "name": "Other"}),
        ),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    for (project, name) in [("default", "mine"), ("other", "theirs")] {
        let (status, body) = send(
            &service,
            post(
                &format!("/api/admin/projects/{project}/features"),
                ADMIN,
                json!({"name": name}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, etag, body) = delta(&service, DEFAULT_ONLY, "?project=other", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        summary(&body),
        ["hydration 1+0"],
        "the token's projects win over the query's"
    );
    assert_eq!(body["events"][0]["features"][0]["name"], "mine");

    // Writes elsewhere, in another project or environment, are nothing to this token.
    let switch = "/api/admin/projects/other/features/theirs/environments/development/on";
    let (status, _) = send(&service, post(switch, ADMIN, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let production = "/api/admin/projects/default/features/mine/environments/production/on";
    let (status, _) = send(&service, post(production, ADMIN, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, same, _) = delta(&service, DEFAULT_ONLY, "", Some(&etag)).await;
    assert_eq!((status, same.as_str()), (StatusCode::NOT_MODIFIED, etag.as_str()));

    // The token for every project saw the switch in `other`.
    let (_, all_etag, _) = delta(&service, SDK, "", None).await;
    let development = "/api/admin/projects/default/features/mine/environments/development/on";
    let (status, _) = send(&service, post(development, ADMIN, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _, body) = delta(&service, DEFAULT_ONLY, "", Some(&etag)).await;
    assert_eq!(
        (status, summary(&body)),
        (StatusCode::OK, vec!["feature-updated mine".to_owned()])
    );
    let (status, _, body) = delta(&service, SDK, "", Some(&all_etag)).await;
    assert_eq!(
        (status, summary(&body)),
        (StatusCode::OK, vec!["feature-updated mine".to_owned()])
    );

    // A segment only `theirs` names: its edits are nothing to a token that cannot see `theirs`.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "theirs-only", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["a"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let segment = body["id"].as_i64().ok_or("no segment id")?;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/other/features/theirs/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "segments": [segment]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, mine_etag, _) = delta(&service, DEFAULT_ONLY, "", None).await;
    let (_, all_etag, _) = delta(&service, SDK, "", None).await;
    let (status, body) = send(
        &service,
        actix_test::TestRequest::put()
            .uri(&format!("/api/admin/segments/{segment}"))
            .insert_header(("Authorization", ADMIN))
            .set_json(json!({"name": "theirs-only", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["b"]}]})),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    let (status, _, _) = delta(&service, DEFAULT_ONLY, "", Some(&mine_etag)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    let (status, _, body) = delta(&service, SDK, "", Some(&all_etag)).await;
    assert_eq!(
        (status, summary(&body)),
        (StatusCode::OK, vec!["segment-updated theirs-only".to_owned()])
    );

    // Admin and frontend tokens are refused, as on the rest of the client API.
    let (status, body) = send(&service, get("/api/client/delta", ADMIN)).await;
    assert_error(status, &body, 403, "NoAccessError");
    let (status, body) = send(&service, get("/api/client/delta", "nonsense")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    let (status, body) = send(&service, get("/api/client/streaming", "nonsense")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    Ok(())
}

const STREAM_ADMIN: &str = "*:*.stream-admin-secret";
const STREAM_SDK: &str = "*:development.stream-sdk-secret";
const OTHER_SDK: &str = "*:development.stream-other-sdk-secret";

/// The real binary on a scratch database, with the tokens above and `env`.
struct Server {
    port: u16,
    agent: ureq::Agent,
    running: Running,
}

impl Server {
    fn start(scratch: &Scratch, env: &[(&str, &str)]) -> Result<Self, Box<dyn std::error::Error>> {
        let tokens = format!("{STREAM_SDK},{OTHER_SDK}");
        let mut all = vec![
            ("INIT_ADMIN_API_TOKENS", STREAM_ADMIN),
            ("INIT_BACKEND_API_TOKENS", tokens.as_str()),
        ];
        all.extend_from_slice(env);
        let (child, port) = start_server_with(scratch, &["--log-level", "warn"], &all)?;
        Ok(Self {
            port,
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .into(),
            running: Running(child),
        })
    }

    /// Posts `body` to `path` with the admin token; fails unless the answer is a success.
    fn post(&self, path: &str, body: Value) -> Result<Value, Box<dyn std::error::Error>> {
        let mut response = self
            .agent
            .post(&format!("http://127.0.0.1:{}{path}", self.port))
            .header("Authorization", STREAM_ADMIN)
            .send_json(&body)?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string()?;
        if !(200..300).contains(&status) {
            return Err(format!("POST {path}: {status} {text}").into());
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn delete(&self, path: &str) -> Result<(), Box<dyn std::error::Error>> {
        let response = self
            .agent
            .delete(&format!("http://127.0.0.1:{}{path}", self.port))
            .header("Authorization", STREAM_ADMIN)
            .call()?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(format!("DELETE {path}: {status}").into());
        }
        Ok(())
    }

    fn create(&self, name: &str) -> Result<(), Box<dyn std::error::Error>> {
        self.post("/api/admin/projects/default/features", json!({"name": name}))?;
        Ok(())
    }

    fn switch(&self, name: &str, on: bool) -> Result<(), Box<dyn std::error::Error>> {
        let state = if on { "on" } else { "off" };
        self.post(
            &format!("/api/admin/projects/default/features/{name}/environments/development/{state}"),
            json!({}),
        )?;
        Ok(())
    }

    fn stream(&self, token: &str, last: Option<&str>) -> Result<Sse, Box<dyn std::error::Error>> {
        let mut headers = vec![("Authorization", token)];
        if let Some(last) = last {
            headers.push(("Last-Event-ID", last));
        }
        Sse::open(self.port, "/api/client/streaming", &headers)
    }
}

/// The flag names and states an event's delta document sets.
fn flags_of(event: &Event) -> Result<Vec<(String, bool)>, Box<dyn std::error::Error>> {
    let body = event.json()?;
    let mut flags = Vec::new();
    for event in body["events"].as_array().ok_or("no events")? {
        let features = match event["type"].as_str() {
            Some("hydration") => event["features"].as_array().cloned().unwrap_or_default(),
            Some("feature-updated") => vec![event["feature"].clone()],
            _ => Vec::new(),
        };
        for feature in features {
            flags.push((
                feature["name"].as_str().unwrap_or_default().to_owned(),
                feature["enabled"].as_bool().unwrap_or_default(),
            ));
        }
    }
    Ok(flags)
}

#[test]
fn streams_open_with_a_hydration_carry_every_change_once_and_resume() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(&scratch, &[])?;
    server.create("live")?;
    let mut stream = server.stream(STREAM_SDK, None)?;
    assert_eq!(stream.status, 200, "{}", stream.body);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    assert_eq!(stream.header("cache-control"), Some("no-cache"));
    let connected = stream.event(Duration::from_secs(5))?;
    assert_eq!(connected.name, "unleash-connected");
    assert_eq!(flags_of(&connected)?, [("live".to_owned(), false)]);
    let first = connected.id.clone().ok_or("no id")?;

    // Each write arrives once, in order, as unleash-updated with a growing id.
    let mut ids = vec![revision(&first)?];
    let mut middle = String::new();
    for round in 0..6 {
        let on = round % 2 == 0;
        let written = Instant::now();
        server.switch("live", on)?;
        let updated = stream.event(Duration::from_secs(5))?;
        assert!(
            written.elapsed() < Duration::from_secs(1),
            "{:?}",
            written.elapsed()
        );
        assert_eq!(updated.name, "unleash-updated");
        assert_eq!(flags_of(&updated)?, [("live".to_owned(), on)], "round {round}");
        let id = updated.id.clone().ok_or("no id")?;
        ids.push(revision(&id)?);
        if round == 2 {
            middle = id;
        }
    }
    assert!(ids.windows(2).all(|pair| pair[0] < pair[1]), "{ids:?}");
    // A write that changes nothing SDKs see sends nothing.
    server.post(
        "/api/admin/tag-types",
        json!({"name": "team", "description": "owners"}),
    )?;
    server.create("second")?;
    let updated = stream.event(Duration::from_secs(5))?;
    assert_eq!(flags_of(&updated)?, [("second".to_owned(), false)]);

    // Resuming from the middle: only the missed changes, in one opening.
    let mut resumed = server.stream(STREAM_SDK, Some(&middle))?;
    let opening = resumed.event(Duration::from_secs(5))?;
    assert_eq!(opening.name, "unleash-connected");
    assert_eq!(
        flags_of(&opening)?,
        [
            ("live".to_owned(), false),
            ("live".to_owned(), true),
            ("live".to_owned(), false),
            ("second".to_owned(), false)
        ]
    );
    assert_eq!(opening.id, updated.id);
    // Up to date: an empty opening; unknown or malformed: a hydration.
    let last = updated.id.clone().ok_or("no id")?;
    let opening = server
        .stream(STREAM_SDK, Some(&last))?
        .event(Duration::from_secs(5))?;
    assert_eq!(opening.json()?, json!({"events": []}));
    for unknown in ["2", "abc"] {
        let opening = server
            .stream(STREAM_SDK, Some(unknown))?
            .event(Duration::from_secs(5))?;
        assert_eq!(opening.json()?["events"][0]["type"], "hydration", "{unknown}");
        assert_eq!(opening.id.as_deref(), Some(last.as_str()));
    }

    // An idle stream says it is alive well within the SDKs' 30- and 60-second read timeouts.
    let waited = Instant::now();
    match stream.next(Duration::from_secs(20))? {
        Item::Comment(comment) => assert_eq!(comment, "keep-alive"),
        other => return Err(format!("expected a heartbeat, got {other:?}").into()),
    }
    assert!(
        waited.elapsed() < Duration::from_secs(16),
        "{:?}",
        waited.elapsed()
    );
    drop(server);
    Ok(())
}

#[test]
fn stream_limits_answer_429_and_503_with_retry_after() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(
        &scratch,
        &[
            ("HALYARD_STREAMING_MAX_CONNECTIONS", "3"),
            ("HALYARD_STREAMING_MAX_CONNECTIONS_PER_TOKEN", "2"),
        ],
    )?;
    let mut first = server.stream(STREAM_SDK, None)?;
    let second = server.stream(STREAM_SDK, None)?;
    assert_eq!((first.status, second.status), (200, 200));
    first.event(Duration::from_secs(5))?;

    let refused = server.stream(STREAM_SDK, None)?;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("30"));
    let body: Value = serde_json::from_str(&refused.body)?;
    assert_eq!(body["name"], "TooManyRequestsError", "{body}");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("token")),
        "{body}"
    );

    let other = server.stream(OTHER_SDK, None)?;
    assert_eq!(other.status, 200);
    let full = server.stream(OTHER_SDK, None)?;
    assert_eq!(full.status, 503, "{}", full.body);
    assert_eq!(full.header("retry-after"), Some("30"));
    let body: Value = serde_json::from_str(&full.body)?;
    assert_eq!(body["name"], "ServiceUnavailableError", "{body}");

    // A closed stream gives its place back as soon as its client goes, with nothing written.
    drop(first);
    let started = Instant::now();
    loop {
        let again = server.stream(STREAM_SDK, None)?;
        if again.status == 200 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the place was not given back at once"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(server);
    Ok(())
}

#[test]
fn an_http_1_0_stream_is_written_until_the_connection_closes() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(&scratch, &[])?;
    server.create("old")?;
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", server.port))?;
    socket.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        socket,
        "GET /api/client/streaming HTTP/1.0\r\nAuthorization: {STREAM_SDK}\r\n\r\n"
    )?;
    let mut reader = std::io::BufReader::new(socket);
    let mut head = String::new();
    while !head.ends_with("\r\n\r\n") {
        if reader.read_line(&mut head)? == 0 {
            return Err(format!("the head ended early: {head:?}").into());
        }
    }
    assert!(head.starts_with("HTTP/1.0 200"), "{head}");
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding"),
        "HTTP/1.0 has no chunked bodies: {head}"
    );
    // The body is the events themselves, unframed.
    let mut events = Vec::new();
    let mut line = String::new();
    while events.len() < 2 {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Err(format!("the stream ended after {events:?}").into());
        }
        if let Some(name) = line.strip_prefix("event: ") {
            events.push(name.trim_end().to_owned());
            if events.len() == 1 {
                server.switch("old", true)?;
            }
        }
    }
    assert_eq!(events, ["unleash-connected", "unleash-updated"]);
    Ok(())
}

/// Reads one response's head from `reader`, with its status line first.
fn read_head(reader: &mut impl BufRead) -> Result<String, Box<dyn std::error::Error>> {
    let mut head = String::new();
    while !head.ends_with("\r\n\r\n") {
        if reader.read_line(&mut head)? == 0 {
            return Err(format!("the head ended early: {head:?}").into());
        }
    }
    Ok(head)
}

/// Reads a chunked body to its last chunk.
fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size)?;
        let size = usize::from_str_radix(size.trim_end(), 16)?;
        let mut chunk = vec![0; size + 2];
        std::io::Read::read_exact(reader, &mut chunk)?;
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

#[test]
fn a_head_request_or_one_sent_behind_a_stream_takes_no_place_and_splices_nothing() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(&scratch, &[("HALYARD_STREAMING_MAX_CONNECTIONS_PER_TOKEN", "1")])?;
    server.create("kept")?;
    let connect = || -> Result<_, Box<dyn std::error::Error>> {
        let socket = std::net::TcpStream::connect(("127.0.0.1", server.port))?;
        socket.set_read_timeout(Some(Duration::from_secs(5)))?;
        Ok(socket)
    };
    let stream_request = |token: &str| {
        format!("GET /api/client/streaming HTTP/1.1\r\nHost: halyard\r\nAuthorization: {token}\r\n\r\n")
    };
    // A chunked answer on the same connection (compressed as it is written): the stream's events
    // must not end up in it.
    let chunked_request = format!(
        "POST /api/admin/playground/advanced HTTP/1.1\r\nHost: halyard\r\nAuthorization: {STREAM_ADMIN}\r\n\
         Accept-Encoding: gzip\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        PLAYGROUND.len(),
        PLAYGROUND
    );

    // A HEAD answers the stream's head alone and keeps no place.
    let mut socket = connect()?;
    write!(
        socket,
        "{}",
        stream_request(STREAM_SDK).replacen("GET", "HEAD", 1)
    )?;
    let mut reader = std::io::BufReader::new(socket.try_clone()?);
    let head = read_head(&mut reader)?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    write!(socket, "{chunked_request}")?;
    let head = read_head(&mut reader)?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    let body: Value = serde_json::from_reader(flate2::read::GzDecoder::new(&read_chunked(&mut reader)?[..]))?;
    assert!(body["features"].is_array(), "{body}");
    let open = server.stream(STREAM_SDK, None)?;
    assert_eq!(
        open.status, 200,
        "the HEAD kept the token's one place: {}",
        open.body
    );
    drop(open);

    // A request sent behind a stream on its connection is answered after the stream, which ends
    // there; the place comes back. (Another token: the one above gives its place back once its
    // stream's task sees the client go.)
    let mut socket = connect()?;
    write!(socket, "{}{chunked_request}", stream_request(OTHER_SDK))?;
    let mut reader = std::io::BufReader::new(socket.try_clone()?);
    let head = read_head(&mut reader)?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    read_chunked(&mut reader)?;
    let head = read_head(&mut reader)?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let body: Value = serde_json::from_reader(flate2::read::GzDecoder::new(&read_chunked(&mut reader)?[..]))?;
    assert!(body["features"].is_array(), "{body}");
    let started = Instant::now();
    while server.stream(OTHER_SDK, None)?.status != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the stream kept its place"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// An advanced playground question, answered with a chunked body.
const PLAYGROUND: &str = r#"{"environments":["development"],"projects":"*","context":{"appName":"test"}}"#;

#[test]
fn streams_end_at_shutdown_and_resume_on_the_restarted_server() -> TestResult {
    let scratch = Scratch::new()?;
    let mut server = Server::start(&scratch, &[])?;
    server.create("kept")?;
    let mut stream = server.stream(STREAM_SDK, None)?;
    let connected = stream.event(Duration::from_secs(5))?;
    let last = connected.id.clone().ok_or("no id")?;

    let child = &mut server.running.0;
    let stopping = Instant::now();
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()?;
    assert!(signalled.success(), "SIGTERM could not be sent");
    assert_eq!(
        stream.next(Duration::from_secs(5))?,
        Item::End,
        "the stream ends cleanly"
    );
    let status = child.wait()?;
    assert!(status.success(), "{status}");
    assert!(
        stopping.elapsed() < Duration::from_secs(10),
        "{:?}",
        stopping.elapsed()
    );

    // The restarted server resumes the SDK where it was, then carries on.
    let server = Server::start(&scratch, &[])?;
    let mut stream = server.stream(STREAM_SDK, Some(&last))?;
    let opening = stream.event(Duration::from_secs(5))?;
    assert_eq!(opening.name, "unleash-connected");
    let events = opening.json()?;
    let resumed = events == json!({"events": []});
    let rehydrated = events["events"][0]["type"] == "hydration";
    assert!(resumed || rehydrated, "{events}");
    server.switch("kept", true)?;
    let updated = stream.event(Duration::from_secs(5))?;
    assert_eq!(flags_of(&updated)?, [("kept".to_owned(), true)]);
    Ok(())
}

#[test]
fn a_write_on_one_replica_reaches_streams_on_another_within_a_second() -> TestResult {
    let scratch = Scratch::new()?;
    let writer = Server::start(&scratch, &[])?;
    let reader = Server::start(&scratch, &[])?;
    writer.create("shared")?;
    let mut stream = reader.stream(STREAM_SDK, None)?;
    stream.event(Duration::from_secs(5))?;
    let mut delays = Vec::new();
    for round in 0..10 {
        let on = round % 2 == 0;
        let written = Instant::now();
        writer.switch("shared", on)?;
        let updated = stream.event(Duration::from_secs(5))?;
        delays.push(written.elapsed());
        assert_eq!(flags_of(&updated)?, [("shared".to_owned(), on)], "round {round}");
    }
    assert!(
        delays.iter().all(|delay| *delay < Duration::from_secs(1)),
        "{delays:?}"
    );
    Ok(())
}

#[test]
fn a_stream_ends_once_its_token_is_deleted() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(&scratch, &[])?;
    let created = server.post(
        "/api/admin/api-tokens",
        json!({"tokenName": "short-lived", "type": "backend", "environment": "development", "projects": ["*"]}),
    )?;
    let secret = created["secret"].as_str().ok_or("no secret")?.to_owned();
    let mut stream = server.stream(&secret, None)?;
    stream.event(Duration::from_secs(5))?;
    let mut kept = server.stream(STREAM_SDK, None)?;
    kept.event(Duration::from_secs(5))?;
    server.delete(&format!("/api/admin/api-tokens/{secret}"))?;
    let deleted = Instant::now();
    // The token is checked at each heartbeat: the stream ends at the next one.
    loop {
        match stream.next(Duration::from_secs(20))? {
            Item::End => break,
            Item::Comment(_) | Item::Event(_) => {}
        }
        assert!(
            deleted.elapsed() < Duration::from_secs(20),
            "the stream outlived its token"
        );
    }
    assert!(
        deleted.elapsed() < Duration::from_secs(17),
        "{:?}",
        deleted.elapsed()
    );
    // Another token's stream goes on.
    assert_eq!(
        kept.next(Duration::from_secs(20))?,
        Item::Comment("keep-alive".into())
    );
    let refused = server.stream(&secret, None)?;
    assert_eq!(refused.status, 401, "{}", refused.body);
    Ok(())
}

#[test]
fn a_client_that_keeps_sending_bytes_does_not_keep_a_deleted_tokens_stream() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(&scratch, &[])?;
    let created = server.post(
        "/api/admin/api-tokens",
        json!({"tokenName": "chatty", "type": "backend", "environment": "development", "projects": ["*"]}),
    )?;
    let secret = created["secret"].as_str().ok_or("no secret")?.to_owned();
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", server.port))?;
    socket.set_read_timeout(Some(Duration::from_secs(20)))?;
    write!(
        socket,
        "GET /api/client/streaming HTTP/1.1\r\nHost: halyard\r\nAuthorization: {secret}\r\n\r\n"
    )?;
    let mut reader = std::io::BufReader::new(socket.try_clone()?);
    let head = read_head(&mut reader)?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    server.delete(&format!("/api/admin/api-tokens/{secret}"))?;
    let deleted = Instant::now();
    // A byte every millisecond, as long as the connection takes them.
    let mut sender = socket.try_clone()?;
    let chatter = std::thread::spawn(move || {
        while sender.write_all(b" ").is_ok() {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
    // The token is still checked at each heartbeat: the stream ends at the next one.
    let body = read_chunked(&mut reader)?;
    assert!(
        deleted.elapsed() < Duration::from_secs(17),
        "the stream outlived its token by {:?}",
        deleted.elapsed()
    );
    assert!(
        String::from_utf8_lossy(&body).contains("event: unleash-connected"),
        "the stream opened as usual"
    );
    // The server has closed the connection; this only stops the sending thread.
    let _ = socket.shutdown(std::net::Shutdown::Both);
    chatter.join().map_err(|_| "the sending thread panicked")?;
    Ok(())
}

/// The evaluations of `engine` for every flag of `names` and a few contexts.
fn evaluations(engine: &flag_eval::Engine, names: &[String]) -> Vec<(String, String, bool, String)> {
    let mut out = Vec::new();
    for user in ["1", "2", "3", "42"] {
        for plan in ["free", "pro"] {
            let mut context = flag_eval::Context {
                user_id: Some(user.into()),
                ..flag_eval::Context::default()
            };
            context.properties.set("plan", plan);
            for name in names {
                let variant = engine.variant(name, &context);
                out.push((
                    name.clone(),
                    format!("{user}/{plan}"),
                    engine.is_enabled(name, &context),
                    variant.name.to_string(),
                ));
            }
        }
    }
    out
}

#[actix_web::test]
async fn the_engine_following_deltas_answers_as_one_compiled_from_the_whole_document() -> TestResult {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "pros", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let segment = body["id"].as_i64().ok_or("no segment id")?;
    let (_, etag, hydration) = delta(&service, SDK, "", None).await;
    let first: flag_eval::Delta = serde_json::from_value(hydration)?;
    let (mut engine, warnings) = flag_eval::Engine::compile_state(
        &flag_eval::State::Delta(first),
        flag_eval::CompileOptions::default(),
    );
    assert!(warnings.is_empty(), "{warnings:?}");

    // A run of writes, each followed by a delta applied to the engine.
    let mut held = etag;
    let base = "/api/admin/projects/default/features";
    let writes: Vec<(&str, String, Value)> = vec![
        ("POST", base.to_owned(), json!({"name": "a"})),
        ("POST", base.to_owned(), json!({"name": "b"})),
        (
            "POST",
            format!("{base}/a/environments/development/strategies"),
            json!({"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "a"}, "segments": [segment]}),
        ),
        ("POST", format!("{base}/a/environments/development/on"), json!({})),
        (
            "POST",
            format!("{base}/b/environments/development/strategies"),
            json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "42"]}]}),
        ),
        ("POST", format!("{base}/b/environments/development/on"), json!({})),
        (
            "PUT",
            format!("{base}/a/variants-batch"),
            json!({"variants": [{"name": "x", "weight": 1}, {"name": "y", "weight": 1}], "environments": ["development"]}),
        ),
        (
            "PUT",
            format!("/api/admin/segments/{segment}"),
            json!({"name": "pros", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["free"]}]}),
        ),
        ("DELETE", format!("{base}/b"), Value::Null),
    ];
    for (method, path, body) in writes {
        let request = match method {
            "POST" => post(&path, ADMIN, body),
            "PUT" => actix_test::TestRequest::put()
                .uri(&path)
                .insert_header(("Authorization", ADMIN))
                .set_json(body),
            _ => delete(&path, ADMIN),
        };
        let (status, answer) = send(&service, request).await;
        assert!(status.is_success(), "{method} {path}: {status} {answer}");
        let (status, tag, events) = delta(&service, SDK, "", Some(&held)).await;
        assert_eq!(status, StatusCode::OK, "{method} {path} changes what SDKs see");
        let applied: flag_eval::Delta = serde_json::from_value(events)?;
        assert!(engine.apply_delta(&applied).is_empty());
        held = tag;

        // The whole document, compiled afresh, answers the same.
        let (status, full) = send(
            &service,
            get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "5.2.0")),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let document: flag_eval::ClientFeatures = serde_json::from_value(full)?;
        let names: Vec<String> = document
            .features
            .iter()
            .map(|feature| feature.name.clone())
            .collect();
        let (fresh, _) = flag_eval::Engine::compile(&document);
        let mut all = names.clone();
        all.extend(["a".to_owned(), "b".to_owned()]);
        assert_eq!(
            evaluations(&engine, &all),
            evaluations(&fresh, &all),
            "after {method} {path}"
        );
    }
    Ok(())
}

#[test]
fn one_token_cannot_take_every_question_and_the_delta_api_never_refuses_one() -> TestResult {
    let scratch = Scratch::new()?;
    let server = Server::start(&scratch, &[])?;
    let path = |prefix: &str| format!("/api/client/streaming?namePrefix={prefix}");
    let mut open = Vec::new();
    for question in 0..8 {
        let stream = Sse::open(
            server.port,
            &path(&format!("p{question}")),
            &[("Authorization", STREAM_SDK)],
        )?;
        assert_eq!(stream.status, 200, "{}", stream.body);
        open.push(stream);
    }
    let refused = Sse::open(server.port, &path("p8"), &[("Authorization", STREAM_SDK)])?;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.header("retry-after"), Some("30"));
    let body: Value = serde_json::from_str(&refused.body)?;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("8 different")),
        "{body}"
    );
    // The same questions again are no new questions, and another token has its own.
    let again = Sse::open(server.port, &path("p0"), &[("Authorization", STREAM_SDK)])?;
    assert_eq!(again.status, 200);
    let other = Sse::open(server.port, &path("p8"), &[("Authorization", OTHER_SDK)])?;
    assert_eq!(other.status, 200);

    // Delta requests with a hundred different prefixes: each answered, none refused.
    for question in 0..100 {
        let mut response = server
            .agent
            .get(&format!(
                "http://127.0.0.1:{}/api/client/delta?namePrefix=d{question}",
                server.port
            ))
            .header("Authorization", STREAM_SDK)
            .call()?;
        assert_eq!(
            response.status().as_u16(),
            200,
            "{}",
            response.body_mut().read_to_string()?
        );
    }
    drop(open);
    Ok(())
}
