//! Delivering audit events to webhooks, after the writes that recorded them have committed.
//!
//! One thread tails the audit log: every [`POLL`] it takes the events no webhook has been handed
//! yet ([`queries::addons::take_unannounced`], which marks them in the same statement, so of
//! several replicas on one database each event goes to exactly one), matches them against the
//! enabled webhooks, and queues a delivery for each match. [`SENDERS`] threads post the queued
//! deliveries, each attempt bounded by [`TIMEOUT`], with one retry, and record what happened.
//! Writes never wait for any of it: a slow or failing receiver holds up only its own sender.
//!
//! Delivery is at most once: a process that stops with deliveries queued loses them (a
//! graceful stop first lets the queue drain for a while).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chrono::NaiveDateTime;
use flag_store::models::{Addon, EventRow, NewIntegrationEvent};
use flag_store::{Store, StoreError, queries};
use handlebars::Handlebars;
use serde_json::{Value, json};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use crate::catalogue::addons::text;
use crate::catalogue::events::EventFormatter;
use crate::catalogue::events::types::EventOut;
use crate::runtime::clock::Clock;
use crate::runtime::url_policy::UrlPolicy;

/// How often the log is read for new events.
pub const POLL: Duration = Duration::from_millis(250);
/// Events taken at once.
const BATCH: i64 = 100;
/// Threads posting deliveries.
pub const SENDERS: usize = 4;
/// Deliveries queued for the senders; when full, the tail waits before taking more.
const QUEUE: usize = 1024;
/// The longest one attempt may take, connection and answer included.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The wait before the one retry.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Stands in for the event's Markdown while a template renders, so that it can be written
/// escaped inside a JSON string and as it is elsewhere.
const MARKDOWN_PLACEHOLDER: &str = "\u{0}HALYARD_EVENT_MARKDOWN\u{0}";

/// Mustache's HTML escaping, which Unleash's templates get: `& < > " ' / ` =`.
fn mustache_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '/' => escaped.push_str("&#x2F;"),
            '`' => escaped.push_str("&#x60;"),
            '=' => escaped.push_str("&#x3D;"),
            other => escaped.push(other),
        }
    }
    escaped
}

fn templates() -> Handlebars<'static> {
    let mut templates = Handlebars::new();
    templates.register_escape_fn(mustache_escape);
    templates
}

/// Whether a body template compiles.
pub fn check_template(template: &str) -> Result<(), String> {
    handlebars::Template::compile(template)
        .map(drop)
        .map_err(|error| format!("the body template does not compile: {error}"))
}

/// Extra headers: a JSON object whose values are strings, numbers or booleans (sent as text).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    const MESSAGE: &str = "Could not parse the JSON in the customHeaders parameter.";
    let Ok(Value::Object(headers)) = serde_json::from_str::<Value>(text) else {
        return Err(MESSAGE.into());
    };
    headers
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(value) => Ok((name, value)),
            Value::Number(_) | Value::Bool(_) => Ok((name, value.to_string())),
            _ => Err(MESSAGE.into()),
        })
        .collect()
}

/// Whether `addon` takes `event`: an event type it chose, and a project and environment it
/// listens to (an empty list, or `*` first, is every one), as Unleash matches them.
pub fn matches(addon: &Addon, event: &EventRow) -> bool {
    let listens = |chosen: &[String], value: &Option<String>| match value {
        None => true,
        Some(value) => chosen.is_empty() || chosen[0] == "*" || chosen.contains(value),
    };
    addon.config.enabled
        && addon.config.events.contains(&event.event_type)
        && listens(&addon.config.projects, &event.project)
        && listens(&addon.config.environments, &event.environment)
}

/// One event for one webhook: the request to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The webhook.
    pub addon_id: i32,
    /// Where to.
    pub url: String,
    /// The `Content-Type` the webhook chose, as its delivery record shows it.
    pub content_type: String,
    /// Every header sent, `Content-Type` included.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
    /// The event, as Unleash shows it.
    pub event: Value,
    /// Whether the body is the event itself (no template).
    pub plain: bool,
    /// What went wrong while building it, without stopping it.
    pub warnings: Vec<String>,
}

impl Delivery {
    /// The request `addon` sends for `event`, built as Unleash's webhook builds it: the event as
    /// JSON, or the body template rendered with `event`, `eventJson` and `eventMarkdown`, the
    /// event told by `formatter`.
    pub fn build(addon: &Addon, event: EventRow, formatter: &EventFormatter) -> Result<Self, String> {
        let parameters = &addon.config.parameters;
        let url = text(parameters, "url").ok_or("the webhook has no URL")?;
        let content_type = text(parameters, "contentType").unwrap_or_else(|| "application/json".into());
        let event = EventOut::of(event);
        let (_, markdown) = formatter.format(&event);
        let event = serde_json::to_value(event).map_err(|error| error.to_string())?;
        let mut warnings = Vec::new();
        let (body, plain) = match text(parameters, "bodyTemplate").filter(|template| template.len() > 1) {
            Some(template) => {
                let serialized = serde_json::to_string(&event).map_err(|error| error.to_string())?;
                let context = json!({
                    "event": event,
                    "eventJson": serde_json::to_string(&serialized).map_err(|error| error.to_string())?,
                    "eventMarkdown": MARKDOWN_PLACEHOLDER,
                });
                let rendered = templates()
                    .render_template(&template, &context)
                    .map_err(|error| format!("the body template did not render: {error}"))?;
                (with_markdown(&rendered, &markdown), false)
            }
            None => (
                serde_json::to_string(&event).map_err(|error| error.to_string())?,
                true,
            ),
        };
        let mut headers = vec![("Content-Type".to_owned(), content_type.clone())];
        if let Some(authorization) = text(parameters, "authorization").filter(|text| !text.is_empty()) {
            headers.push(("Authorization".to_owned(), authorization));
        }
        if let Some(custom) = text(parameters, "customHeaders").filter(|text| text.len() > 1) {
            match parse_headers(&custom) {
                // As in Unleash, an extra header replaces `Content-Type` or `Authorization`.
                Ok(custom) => {
                    for (name, value) in custom {
                        headers.retain(|(existing, _)| !existing.eq_ignore_ascii_case(&name));
                        headers.push((name, value));
                    }
                }
                Err(message) => warnings.push(message),
            }
        }
        Ok(Self {
            addon_id: addon.id,
            url,
            content_type,
            headers,
            body,
            event,
            plain,
            warnings,
        })
    }
}

/// `rendered` with each Markdown placeholder replaced: escaped for JSON inside a double-quoted
/// string, as it is elsewhere.
fn with_markdown(rendered: &str, markdown: &str) -> String {
    if !rendered.contains(MARKDOWN_PLACEHOLDER) {
        return rendered.to_owned();
    }
    let escaped = serde_json::to_string(markdown).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|text| text.strip_suffix('"'))
        .unwrap_or_default();
    let mut out = String::with_capacity(rendered.len());
    let mut in_string = false;
    let mut escape = false;
    let mut rest = rendered;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix(MARKDOWN_PLACEHOLDER) {
            out.push_str(if in_string { escaped } else { markdown });
            rest = after;
            continue;
        }
        let Some(c) = rest.chars().next() else { break };
        if escape {
            escape = false;
        } else if c == '\\' {
            escape = true;
        } else if c == '"' {
            in_string = !in_string;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A resolver that gives only the addresses the policy permits, so that the address checked is
/// the address connected to: a name that resolves to a public address when a webhook is saved
/// cannot lead to a private one later, nor can a redirect.
#[derive(Debug)]
struct PermittedOnly {
    policy: UrlPolicy,
    inner: DefaultResolver,
}

impl Resolver for PermittedOnly {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let resolved = self.inner.resolve(uri, config, timeout)?;
        let host = uri.host().unwrap_or_default().trim_matches(['[', ']']);
        let mut permitted = self.empty();
        for address in resolved
            .iter()
            .filter(|address: &&SocketAddr| self.policy.permits(host, address.ip()))
        {
            if permitted.try_push(*address).is_err() {
                break;
            }
        }
        if permitted.is_empty() {
            return Err(ureq::Error::Other(
                format!("{host} resolves only to non-public addresses").into(),
            ));
        }
        Ok(permitted)
    }
}

/// The HTTP client deliveries use: no redirects followed, every status an answer, each
/// attempt bounded by [`TIMEOUT`], only permitted addresses.
pub fn agent(policy: UrlPolicy) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(TIMEOUT))
        .user_agent("Halyard webhook")
        .build();
    ureq::Agent::with_parts(
        config,
        DefaultConnector::new(),
        PermittedOnly {
            policy,
            inner: DefaultResolver::default(),
        },
    )
}

/// Sends `delivery`, retrying once after a transport failure, a timeout, 408, 429 or a 5xx, and
/// answers what to record.
pub fn send(agent: &ureq::Agent, delivery: &Delivery, clock: &Clock) -> NewIntegrationEvent {
    let attempt = || {
        let mut request = agent.post(&delivery.url);
        for (name, value) in &delivery.headers {
            request = request.header(name, value);
        }
        request
            .send(delivery.body.as_bytes())
            .map(|response| response.status().as_u16())
    };
    let retried = |result: &Result<u16, ureq::Error>| match result {
        Ok(status) => matches!(status, 408 | 429) || *status >= 500,
        Err(_) => true,
    };
    let mut result = attempt();
    if retried(&result) {
        std::thread::sleep(RETRY_AFTER);
        result = attempt();
    }
    let mut details: Vec<String> = delivery.warnings.clone();
    let state = match result {
        Ok(status) if (200..300).contains(&status) => {
            details.push(format!(
                "Webhook request was successful with status code: {status}."
            ));
            if delivery.warnings.is_empty() {
                "success"
            } else {
                "successWithErrors"
            }
        }
        Ok(status) => {
            details.push(format!("Webhook request failed with status code: {status}."));
            "failed"
        }
        Err(error) => {
            details.push(format!("Webhook request failed: {error}."));
            "failed"
        }
    };
    let body = if delivery.plain {
        delivery.event.clone()
    } else {
        Value::String(delivery.body.clone())
    };
    NewIntegrationEvent {
        integration_id: delivery.addon_id,
        created_at: clock.now(),
        state: state.into(),
        state_details: details.join("\n"),
        event: delivery.event.to_string(),
        details: json!({
            "url": delivery.url,
            "contentType": delivery.content_type,
            "body": body,
        })
        .to_string(),
    }
}

/// What could not be built is recorded as a failed delivery, so it shows in the webhook's list.
fn unbuildable(addon: &Addon, event: &EventRow, message: String, now: NaiveDateTime) -> NewIntegrationEvent {
    let event = serde_json::to_value(EventOut::of(event.clone())).unwrap_or(Value::Null);
    NewIntegrationEvent {
        integration_id: addon.id,
        created_at: now,
        state: "failed".into(),
        state_details: message,
        event: event.to_string(),
        details: json!({}).to_string(),
    }
}

/// The running deliveries: the tail and its senders. [`Webhooks::stop`] ends them.
#[derive(Debug)]
pub struct Webhooks {
    stopping: Arc<AtomicBool>,
    tail: Option<JoinHandle<()>>,
    senders: Vec<JoinHandle<()>>,
}

/// What the tail hands a sender.
enum Job {
    Send(Box<Delivery>),
    Record(Box<NewIntegrationEvent>),
}

impl Webhooks {
    /// Starts tailing `store`'s audit log, posting only where `policy` permits, each event told
    /// by `formatter` for templates' `eventMarkdown`, each delivery recorded at `clock`'s time.
    pub fn start(
        store: Store,
        policy: UrlPolicy,
        formatter: EventFormatter,
        clock: Clock,
    ) -> std::io::Result<Self> {
        let stopping = Arc::new(AtomicBool::new(false));
        let (queue, jobs) = sync_channel::<Job>(QUEUE);
        let jobs = Arc::new(Mutex::new(jobs));
        let agent = agent(policy);
        let mut senders = Vec::with_capacity(SENDERS);
        for index in 0..SENDERS {
            let jobs = Arc::clone(&jobs);
            let agent = agent.clone();
            let store = store.clone();
            let clock = clock.clone();
            senders.push(
                std::thread::Builder::new()
                    .name(format!("webhook-sender-{index}"))
                    .spawn(move || send_queued(&jobs, &agent, &store, &clock))?,
            );
        }
        let tail = {
            let stopping = Arc::clone(&stopping);
            std::thread::Builder::new()
                .name("webhook-tail".into())
                .spawn(move || tail(&store, &queue, &stopping, &formatter, &clock))?
        };
        Ok(Self {
            stopping,
            tail: Some(tail),
            senders,
        })
    }

    /// Stops taking events, and gives the queued deliveries up to `grace` to finish.
    pub fn stop(mut self, grace: Duration) {
        self.stopping.store(true, Ordering::SeqCst);
        if let Some(tail) = self.tail.take() {
            let _ = tail.join();
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline && !self.senders.iter().all(JoinHandle::is_finished) {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !self.senders.iter().all(JoinHandle::is_finished) {
            tracing::warn!("webhook deliveries still in flight at shutdown were abandoned");
        }
    }
}

/// The tail: takes new events and queues their deliveries until told to stop.
fn tail(
    store: &Store,
    queue: &SyncSender<Job>,
    stopping: &AtomicBool,
    formatter: &EventFormatter,
    clock: &Clock,
) {
    while !stopping.load(Ordering::SeqCst) {
        match take(store) {
            Ok((events, addons)) if !events.is_empty() => {
                let jobs: Vec<Job> = events
                    .iter()
                    .flat_map(|event| {
                        addons.iter().filter(|addon| matches(addon, event)).map(
                            |addon| match Delivery::build(addon, event.clone(), formatter) {
                                Ok(delivery) => Job::Send(Box::new(delivery)),
                                Err(message) => {
                                    Job::Record(Box::new(unbuildable(addon, event, message, clock.now())))
                                }
                            },
                        )
                    })
                    .collect();
                let total = jobs.len();
                for (sent, job) in jobs.into_iter().enumerate() {
                    if !enqueue(queue, job, stopping) {
                        tracing::warn!(
                            dropped = total - sent,
                            "stopping with the webhook queue full: {} deliveries were not made",
                            total - sent
                        );
                        return;
                    }
                }
            }
            Ok(_) => std::thread::sleep(POLL),
            Err(error) => {
                tracing::warn!(%error, "reading the audit log for webhooks failed; trying again");
                std::thread::sleep(POLL * 4);
            }
        }
    }
}

/// Queues `job`, waiting while the queue is full; false when the senders are gone, or the
/// process is stopping with the queue still full.
fn enqueue(queue: &SyncSender<Job>, mut job: Job, stopping: &AtomicBool) -> bool {
    loop {
        match queue.try_send(job) {
            Ok(()) => return true,
            Err(TrySendError::Disconnected(_)) => return false,
            Err(TrySendError::Full(returned)) => {
                if stopping.load(Ordering::SeqCst) {
                    return false;
                }
                job = returned;
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Takes the next events and the webhooks to match them against. The webhooks are read first,
/// so that events are never taken by a poll that then fails; a poll that finds no event takes
/// no write lock.
fn take(store: &Store) -> Result<(Vec<EventRow>, Vec<Addon>), StoreError> {
    let mut conn = store.connection()?;
    if !queries::addons::any_unannounced(&mut conn)? {
        return Ok((Vec::new(), Vec::new()));
    }
    let addons = queries::addons::list(&mut conn)?
        .into_iter()
        .filter(|addon| addon.config.enabled)
        .collect();
    let events = queries::addons::take_unannounced(&mut conn, BATCH)?;
    Ok((events, addons))
}

/// A sender: posts queued deliveries and records each, until the queue closes.
fn send_queued(jobs: &Mutex<Receiver<Job>>, agent: &ureq::Agent, store: &Store, clock: &Clock) {
    loop {
        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let record = match job {
            Ok(Job::Send(delivery)) => send(agent, &delivery, clock),
            Ok(Job::Record(record)) => *record,
            Err(_) => return,
        };
        let written = store
            .connection()
            .and_then(|mut conn| queries::addons::record_delivery(&mut conn, &record));
        if let Err(error) = written {
            tracing::warn!(%error, addon = record.integration_id, "recording a webhook delivery failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_escaped_inside_json_strings_only() {
        let rendered = format!("{{\"text\": \"{MARKDOWN_PLACEHOLDER}\"}} {MARKDOWN_PLACEHOLDER}");
        assert_eq!(
            with_markdown(&rendered, "**a** \"b\""),
            "{\"text\": \"**a** \\\"b\\\"\"} **a** \"b\""
        );
    }

    #[test]
    fn templates_escape_as_mustache_does() -> Result<(), handlebars::RenderError> {
        let rendered =
            templates().render_template("{{value}} {{{value}}}", &json!({"value": "a/b=c&<'`>\""}))?;
        assert_eq!(
            rendered,
            "a&#x2F;b&#x3D;c&amp;&lt;&#39;&#x60;&gt;&quot; a/b=c&<'`>\""
        );
        Ok(())
    }

    #[test]
    fn custom_headers_must_be_an_object_of_strings() {
        assert_eq!(
            parse_headers("{\"X-A\": \"1\"}"),
            Ok(vec![("X-A".to_owned(), "1".to_owned())])
        );
        assert_eq!(
            parse_headers("{\"X-A\": 1, \"X-B\": true}"),
            Ok(vec![
                ("X-A".to_owned(), "1".to_owned()),
                ("X-B".to_owned(), "true".to_owned())
            ])
        );
        assert!(parse_headers("{\"X-A\": {}}").is_err());
        assert!(parse_headers("[]").is_err());
        assert!(parse_headers("{").is_err());
    }
}
