//! The fetching thread: follows the server's stream, or polls the whole document or the delta
//! API, applies what arrives to a master engine and document, publishes a copy, and writes the
//! backup.

use std::io::BufReader;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flag_eval::{ClientFeatures, Delta, DeltaEvent, Engine, State};

use crate::builder::Mode;
use crate::sse::{self, Item};
use crate::state::{Config, Shared};
use crate::{Error, Source};

/// What the client calls itself in `unleash-sdk` and its registration.
pub(crate) const SDK_VERSION: &str = concat!("flag-client:", env!("CARGO_PKG_VERSION"));

/// The client specification it follows: segments apart from strategies, and the delta API.
const CLIENT_SPEC: &str = "5.2.0";

/// Most bytes of one answer, unless the builder sets another bound.
pub(crate) const BODY_LIMIT: u64 = 256 << 20;

/// How long a stream may be silent: the server sends a heartbeat every 15 seconds.
const STREAM_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the client polls after the server shed its stream, before trying it again.
const SHED_FOR: Duration = Duration::from_secs(300);

/// How long the client polls when the server has no stream, before asking again.
const NO_STREAM_FOR: Duration = Duration::from_secs(3600);

/// Stream attempts that fail in a row before the client polls instead for [`SHED_FOR`].
const STREAM_FAILURES: u32 = 3;

/// Why a fetch did not leave the client current.
enum Step {
    /// The server has no such route (404, 405, 501): use another way.
    Unsupported,
    /// The server asked the client to poll instead (`fetch-mode: polling`, 429, 503).
    Shed,
    /// It failed.
    Failed(Error),
}

/// The state the fetching thread keeps.
#[derive(Default)]
struct Sync {
    /// The master copy: every change is applied here, then a clone is published.
    engine: Engine,
    /// The same state as a document, for the backup.
    document: Option<ClientFeatures>,
    /// The document as JSON, held instead of `document` between changes by a client that only
    /// hands its documents on: a fraction of the memory of the parsed document.
    packed: Option<Vec<u8>>,
    /// The `ETag` of the last full document.
    etag: Option<String>,
    /// The `ETag` of the last delta answer.
    delta_etag: Option<String>,
    /// The id of the last stream event, sent as `Last-Event-ID` on reconnecting.
    last_event_id: Option<String>,
    /// Set once the server answered that it has no delta API.
    no_delta: bool,
}

fn agent(read_timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(10)))
        .timeout_recv_response(Some(Duration::from_secs(30)))
        .timeout_per_read(Some(read_timeout))
        .build()
        .into()
}

fn with_headers<B>(mut request: ureq::RequestBuilder<B>, config: &Config) -> ureq::RequestBuilder<B> {
    for (name, value) in &config.headers {
        request = request.header(name, value);
    }
    request
        .header("Authorization", &config.token)
        .header("Unleash-Client-Spec", CLIENT_SPEC)
        .header("unleash-appname", &config.app_name)
        .header("unleash-instanceid", &config.instance_id)
        .header("unleash-connection-id", &config.connection_id)
        .header("unleash-sdk", SDK_VERSION)
        .header("User-Agent", &config.app_name)
}

/// The error for a status that is not a success.
fn refused(path: &str, status: u16) -> Error {
    match status {
        401 | 403 => Error::Unauthorized { status },
        _ => Error::Status {
            path: path.to_owned(),
            status,
        },
    }
}

fn transport(error: impl std::fmt::Display) -> Step {
    Step::Failed(Error::Transport(error.to_string()))
}

/// Posts `body` to `path` (usage and registration).
pub(crate) fn post_json(shared: &Shared, path: &str, body: &serde_json::Value) -> Result<(), Error> {
    let config = &shared.config;
    let response = with_headers(
        agent(Duration::from_secs(30)).post(format!("{}{path}", config.url)),
        config,
    )
    .send_json(body)
    .map_err(|error| Error::Transport(error.to_string()))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(refused(path, status))
    }
}

/// A wait of about `base × 2^(failures - 1)`, at most ten times `base` (and at least 30 s
/// allowed), with up to half of it taken off at random, so clients that failed together do not
/// retry together.
fn backoff(base: Duration, failures: u32) -> Duration {
    let ceiling = base.saturating_mul(10).max(Duration::from_secs(30));
    let wait = base
        .saturating_mul(1 << failures.saturating_sub(1).min(16))
        .min(ceiling);
    let jitter = getrandom::u32().unwrap_or(0) % 1000;
    wait.mul_f64(1.0 - f64::from(jitter) / 2000.0)
}

/// Runs until the client stops, or until the server refuses the token.
pub(crate) fn run(shared: Arc<Shared>) {
    let config = &shared.config;
    let poller = agent(Duration::from_secs(30));
    let streamer = agent(STREAM_READ_TIMEOUT);
    let mut sync = Sync::default();
    let mut stream_again_at = match config.mode {
        Mode::Auto | Mode::Streaming => Some(Instant::now()),
        Mode::Delta | Mode::Polling => None,
    };
    let mut failures = 0u32;
    let mut stream_failures = 0u32;
    while !shared.stopped() {
        let streaming = stream_again_at.is_some_and(|at| Instant::now() >= at);
        let result = if streaming {
            stream(&shared, &streamer, &mut sync)
        } else if config.mode == Mode::Delta && !sync.no_delta {
            poll_delta(&shared, &poller, &mut sync)
        } else {
            poll_features(&shared, &poller, &mut sync)
        };
        let wait = match result {
            Ok(()) => {
                failures = failures.saturating_sub(1);
                if streaming {
                    stream_failures = 0;
                }
                // A stream that ended after events is opened again at once; a poll waits.
                if streaming {
                    Duration::ZERO
                } else {
                    config.refresh_interval
                }
            }
            Err(Step::Unsupported) if streaming => {
                stream_again_at = Some(Instant::now() + NO_STREAM_FOR);
                Duration::ZERO
            }
            Err(Step::Unsupported) => {
                sync.no_delta = true;
                Duration::ZERO
            }
            Err(Step::Shed) => {
                stream_again_at = Some(Instant::now() + SHED_FOR);
                Duration::ZERO
            }
            Err(Step::Failed(error)) => {
                let unauthorized = matches!(error, Error::Unauthorized { .. });
                shared.failure(error);
                if unauthorized {
                    return;
                }
                failures += 1;
                if streaming {
                    stream_failures += 1;
                    if stream_failures >= STREAM_FAILURES {
                        // The stream keeps failing: poll for a while, then try it again.
                        stream_failures = 0;
                        stream_again_at = Some(Instant::now() + SHED_FOR);
                    }
                }
                let base = if streaming {
                    Duration::from_secs(1)
                } else {
                    config.refresh_interval
                };
                backoff(base, failures)
            }
        };
        if !wait.is_zero() && shared.sleep(wait) {
            return;
        }
    }
}

/// Replaces the state with `document`.
fn hydrate(shared: &Shared, sync: &mut Sync, document: ClientFeatures) {
    shared.write_backup(&document);
    shared.document_changed(&document, Source::Server);
    if !shared.config.evaluates {
        sync.packed = serde_json::to_vec(&document).ok();
        sync.document = None;
        drop(document);
        shared.succeeded(true);
        shared.announce(Source::Server);
        return;
    }
    let (engine, _warnings) = Engine::compile_with(&document, crate::state::compile_options());
    sync.engine = engine;
    sync.document = Some(document);
    shared.succeeded(true);
    shared.install(sync.engine.clone(), Source::Server);
}

/// Applies `delta`: to the master engine through flag-eval's delta support, and to the document
/// the backup is written from.
fn apply(shared: &Shared, sync: &mut Sync, delta: &Delta) {
    if delta.events.is_empty() {
        shared.succeeded(false);
        return;
    }
    if shared.config.evaluates {
        sync.engine.apply_delta(delta);
    } else if sync.document.is_none() {
        sync.document = sync
            .packed
            .take()
            .and_then(|packed| serde_json::from_slice(&packed).ok());
    }
    let document = sync.document.get_or_insert_with(|| ClientFeatures {
        version: 2,
        features: Vec::new(),
        segments: Vec::new(),
    });
    for event in &delta.events {
        match event {
            DeltaEvent::Hydration {
                features, segments, ..
            } => {
                document.features.clone_from(features);
                document.segments.clone_from(segments);
            }
            DeltaEvent::FeatureUpdated { feature, .. } => {
                match document
                    .features
                    .iter_mut()
                    .find(|held| held.name == feature.name)
                {
                    Some(held) => held.clone_from(feature),
                    None => document.features.push(feature.clone()),
                }
            }
            DeltaEvent::FeatureRemoved { feature_name, .. } => {
                document.features.retain(|held| held.name != *feature_name);
            }
            DeltaEvent::SegmentUpdated { segment, .. } => {
                match document.segments.iter_mut().find(|held| held.id == segment.id) {
                    Some(held) => held.clone_from(segment),
                    None => document.segments.push(segment.clone()),
                }
            }
            DeltaEvent::SegmentRemoved { segment_id, .. } => {
                document.segments.retain(|held| held.id != *segment_id);
            }
        }
    }
    shared.write_backup(document);
    shared.document_changed(document, Source::Server);
    shared.succeeded(true);
    if shared.config.evaluates {
        shared.install(sync.engine.clone(), Source::Server);
    } else {
        sync.packed = sync
            .document
            .take()
            .and_then(|document| serde_json::to_vec(&document).ok());
        shared.announce(Source::Server);
    }
}

/// Reads an answer that is either form of state: a delta document (`events`) or a whole one
/// (`features`). Anything else, even JSON that would read as an empty document, is refused, so
/// an error page never empties the flags or the backup.
///
/// The form is told by a first pass that keeps nothing, and the answer is then read once into
/// its own type: a large document is never held as a generic JSON tree besides.
fn read_state(body: &[u8]) -> Result<State, Step> {
    let decode = |error: serde_json::Error| Step::Failed(Error::Decode(error.to_string()));
    let form: Form = serde_json::from_slice(body).map_err(decode)?;
    if form.events.0 {
        serde_json::from_slice(body).map(State::Delta).map_err(decode)
    } else if form.features.0 {
        serde_json::from_slice(body).map(State::Full).map_err(decode)
    } else {
        Err(Step::Failed(Error::Decode(
            "neither a list of features nor a list of events".into(),
        )))
    }
}

/// Which lists an answer's object holds, read without keeping any of it.
#[derive(serde::Deserialize)]
struct Form {
    #[serde(default)]
    events: IsList,
    #[serde(default)]
    features: IsList,
}

/// Whether a JSON value is a list; the value itself is skipped.
#[derive(Default)]
struct IsList(bool);

impl<'de> serde::Deserialize<'de> for IsList {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = IsList;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<IsList, A::Error> {
                while items.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(IsList(true))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut entries: A) -> Result<IsList, A::Error> {
                while entries
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(IsList(false))
            }
            fn visit_bool<E>(self, _: bool) -> Result<IsList, E> {
                Ok(IsList(false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<IsList, E> {
                Ok(IsList(false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<IsList, E> {
                Ok(IsList(false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<IsList, E> {
                Ok(IsList(false))
            }
            fn visit_str<E>(self, _: &str) -> Result<IsList, E> {
                Ok(IsList(false))
            }
            fn visit_unit<E>(self) -> Result<IsList, E> {
                Ok(IsList(false))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// Reads an answer that is either form of state, and applies it.
fn take_state(shared: &Shared, sync: &mut Sync, body: &[u8]) -> Result<(), Step> {
    match read_state(body)? {
        State::Full(document) => hydrate(shared, sync, document),
        State::Delta(delta) => apply(shared, sync, &delta),
    }
    Ok(())
}

/// A 200 answer: its `ETag` and its body.
type Answer = (Option<String>, Vec<u8>);

/// Asks `path` with `If-None-Match: etag`: `None` for a 304, else the new `ETag` and the body.
/// A server without the route (404, 405, 501) is [`Step::Unsupported`] when `optional`.
fn poll(
    shared: &Shared,
    agent: &ureq::Agent,
    path: &str,
    etag: Option<&str>,
    optional: bool,
) -> Result<Option<Answer>, Step> {
    let config = &shared.config;
    let mut request = with_headers(agent.get(format!("{}{path}", config.url)), config);
    if let Some(etag) = etag {
        request = request.header("If-None-Match", etag);
    }
    let mut response = request.call().map_err(transport)?;
    match response.status().as_u16() {
        304 => {
            shared.succeeded(false);
            Ok(None)
        }
        200 => {
            let etag = header(&response, "etag");
            let body = response
                .body_mut()
                .with_config()
                .limit(shared.config.body_limit)
                .read_to_vec()
                .map_err(transport)?;
            Ok(Some((etag, body)))
        }
        404 | 405 | 501 if optional => Err(Step::Unsupported),
        status => Err(Step::Failed(refused(path, status))),
    }
}

fn poll_features(shared: &Shared, agent: &ureq::Agent, sync: &mut Sync) -> Result<(), Step> {
    let Some((etag, body)) = poll(shared, agent, "/client/features", sync.etag.as_deref(), false)? else {
        return Ok(());
    };
    let State::Full(document) = read_state(&body)? else {
        return Err(Step::Failed(Error::Decode(
            "events where a list of features was expected".into(),
        )));
    };
    sync.etag = etag;
    hydrate(shared, sync, document);
    Ok(())
}

fn poll_delta(shared: &Shared, agent: &ureq::Agent, sync: &mut Sync) -> Result<(), Step> {
    let Some((etag, body)) = poll(shared, agent, "/client/delta", sync.delta_etag.as_deref(), true)? else {
        return Ok(());
    };
    take_state(shared, sync, &body)?;
    sync.delta_etag = etag;
    Ok(())
}

/// Follows the stream until it ends (`Ok`), the server sheds it, or it fails.
fn stream(shared: &Shared, agent: &ureq::Agent, sync: &mut Sync) -> Result<(), Step> {
    let config = &shared.config;
    let mut request = with_headers(agent.get(format!("{}/client/streaming", config.url)), config)
        .header("Accept", "text/event-stream")
        .header("Cache-Control", "no-cache");
    if let Some(id) = &sync.last_event_id {
        request = request.header("Last-Event-ID", id);
    }
    let response = request.call().map_err(transport)?;
    match response.status().as_u16() {
        // A server that answers 200 with something other than events (a web page, as Unleash
        // answers paths it does not know outside its API) has no stream.
        200 if !header(&response, "content-type")
            .is_some_and(|kind| kind.starts_with("text/event-stream")) =>
        {
            return Err(Step::Unsupported);
        }
        200 => {}
        404 | 405 | 501 => return Err(Step::Unsupported),
        429 | 503 => return Err(Step::Shed),
        status => return Err(Step::Failed(refused("/client/streaming", status))),
    }
    let body = response.into_body().into_with_config().limit(u64::MAX).reader();
    let mut events = sse::Reader::with_limit(
        BufReader::with_capacity(64 * 1024, body),
        shared.config.body_limit.min(sse::LINE_LIMIT),
    );
    let mut received = false;
    loop {
        if shared.stopped() {
            return Ok(());
        }
        match events.next().map_err(transport)? {
            // A stream that ends before any event is a failure, never a reason to reconnect at once.
            None if !received => {
                return Err(Step::Failed(Error::Transport(
                    "the stream ended before any event".into(),
                )));
            }
            None => return Ok(()),
            Some(Item::Comment) => {}
            Some(Item::Event { .. }) if shared.stopped() => return Ok(()),
            Some(Item::Event { name, id, data }) => match name.as_str() {
                "unleash-connected" | "unleash-updated" => {
                    received = true;
                    take_state(shared, sync, data.as_bytes())?;
                    if id.is_some() {
                        sync.last_event_id = id;
                    }
                }
                "fetch-mode" if data.trim() == "polling" => return Err(Step::Shed),
                _ => {}
            },
        }
    }
}

fn header<B>(response: &ureq::http::Response<B>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_list_of_features_or_of_events_is_a_state() {
        for refused in [
            &b"{}"[..],
            b"{\"error\":\"down\"}",
            b"[]",
            b"<html></html>",
            b"{\"features\":{}}",
            b"{\"features\":null,\"events\":\"none\"}",
            b"{\"features\":[{\"nameless\":true}]}",
            b"\"features\"",
        ] {
            assert!(
                read_state(refused).is_err(),
                "{}",
                String::from_utf8_lossy(refused)
            );
        }
        assert!(matches!(
            read_state(b"{\"version\":2,\"features\":[]}"),
            Ok(State::Full(_))
        ));
        assert!(matches!(read_state(b"{\"events\":[]}"), Ok(State::Delta(_))));
        // A list decides the form, whatever the other field holds.
        assert!(matches!(
            read_state(b"{\"events\":{\"a\":[1]},\"features\":[],\"extra\":[[1.5,true,null]]}"),
            Ok(State::Full(_))
        ));
    }

    /// A server that answers every request with `200` and `body`, as an error page might.
    fn answering(body: &'static str) -> std::io::Result<String> {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}/api", listener.local_addr()?);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut request = [0; 4096];
                let _ = stream.read(&mut request);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        Ok(url)
    }

    #[test]
    fn a_poll_answered_with_json_that_is_no_document_keeps_the_flags() -> std::io::Result<()> {
        let directory = std::env::temp_dir().join(format!("flag-client-poll-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&directory)?;
        let config = Config {
            url: answering("{}")?,
            token: "*:development.x".into(),
            app_name: "poll-test".into(),
            instance_id: "i".into(),
            connection_id: "c".into(),
            environment: "default".into(),
            mode: Mode::Polling,
            refresh_interval: Duration::from_secs(1),
            metrics_interval: None,
            backup: directory.join("backup.json"),
            headers: Vec::new(),
            evaluates: true,
            body_limit: BODY_LIMIT,
        };
        let shared = Shared::new(config, None, None);
        let held: ClientFeatures = serde_json::from_str(
            r#"{"version":2,"features":[{"name":"kept","enabled":true,"strategies":[{"name":"default"}]}]}"#,
        )?;
        shared.publish(held, Source::Bootstrap);
        let mut sync = Sync::default();
        let result = poll_features(&shared, &agent(Duration::from_secs(5)), &mut sync);
        assert!(matches!(result, Err(Step::Failed(Error::Decode(_)))));
        assert!(shared.state.load().engine.contains("kept"), "the flags are kept");
        assert!(!shared.config.backup.exists(), "no backup was written");
        std::fs::remove_dir_all(&directory)
    }

    #[test]
    fn backoff_grows_with_jitter_and_stays_bounded() {
        let base = Duration::from_secs(1);
        for failures in 1..40 {
            let wait = backoff(base, failures);
            let full = base
                .saturating_mul(1 << (failures - 1).min(16))
                .min(Duration::from_secs(30));
            assert!(
                wait <= full && wait >= full / 2,
                "{failures}: {wait:?} against {full:?}"
            );
        }
        assert!(backoff(Duration::MAX, 3) > Duration::ZERO, "no overflow");
    }
}
