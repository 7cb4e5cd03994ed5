//! Webhooks (Unleash's addons): kept with their sensitive parameters masked on reads, checked
//! before they are stored; and the deliveries, built from each chosen event, posted to a real
//! receiver on loopback, retried once, and recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use flag_admin::AdminError;
use flag_admin::Settings;
use flag_admin::catalogue::addons::types::{AddonIn, DeliveriesQuery};
use flag_admin::catalogue::events::types::EventsQuery;
use flag_admin::catalogue::events::{Bold, EventFormatter};
use flag_admin::catalogue::webhooks::{self, Delivery, Webhooks};
use flag_admin::catalogue::{addons, events, features};
use flag_admin::runtime::clock::Clock;
use flag_admin::runtime::url_policy::UrlPolicy;
use flag_store::models::{Actor, Addon, AddonConfig, EventRow, NewIntegrationEvent};
use serde_json::{Map, Value, json};

use crate::catalogue_fixture::{administrator, body, writer};
use crate::common::{Outcome, World};

/// One request a receiver took.
#[derive(Debug)]
struct Received {
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// An HTTP receiver on loopback that answers every request with one status and reports it.
struct Hook {
    port: u16,
    received: Receiver<Received>,
}

impl Hook {
    fn answering(status: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let (report, received) = channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let Some(request) = read_request(&stream) else {
                    continue;
                };
                if report.send(request).is_err() {
                    return;
                }
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            }
        });
        Ok(Self { port, received })
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn next(&self) -> Result<Received, &'static str> {
        self.received
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| "nothing was delivered within 30 s")
    }
}

fn read_request(stream: &TcpStream) -> Option<Received> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Received {
        path,
        headers,
        body: String::from_utf8(body).ok()?,
    })
}

/// A port nothing listens on.
fn closed_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// Webhooks may post to loopback here.
fn loopback() -> UrlPolicy {
    UrlPolicy {
        allow_private: true,
        allow_list: Vec::new(),
    }
}

fn webhook(request: Value) -> Result<AddonIn, serde_json::Error> {
    body(request)
}

/// A webhook as stored, for the delivery functions that take one.
fn stored(parameters: Value, events: &[&str], projects: &[&str], environments: &[&str]) -> Addon {
    let owned = |list: &[&str]| list.iter().map(|item| (*item).to_owned()).collect();
    Addon {
        id: 1,
        config: AddonConfig {
            provider: "webhook".into(),
            description: None,
            enabled: true,
            parameters: parameters.as_object().cloned().unwrap_or_default(),
            events: owned(events),
            projects: owned(projects),
            environments: owned(environments),
        },
        created_at: flag_admin::now(),
    }
}

/// An event of `event_type` about flag `banner` of project `web` in `environment`.
fn event(event_type: &str, environment: Option<&str>) -> EventRow {
    EventRow {
        id: 9,
        event_type: event_type.into(),
        created_by: "ada".into(),
        created_at: flag_admin::now(),
        project: Some("web".into()),
        environment: environment.map(str::to_owned),
        feature_name: Some("banner".into()),
        data: Some(json!({"name": "banner"}).to_string()),
        pre_data: None,
        created_by_user_id: Some(3),
        tags: None,
        group_type: None,
        group_id: None,
    }
}

#[tokio::test]
async fn webhooks_are_created_read_masked_replaced_and_deleted() -> Outcome {
    let world = World::with(Settings {
        webhook_urls: loopback(),
        ..Settings::default()
    })?;
    let listed = addons::list(&world.ctx).await?;
    assert!(listed.addons.is_empty());
    assert_eq!(listed.providers.len(), 1);
    let provider = &addons::providers()[0];
    assert_eq!(provider.name, addons::WEBHOOK);
    let parameters: Vec<&str> = provider
        .parameters
        .iter()
        .filter_map(|parameter| parameter["name"].as_str())
        .collect();
    assert_eq!(
        parameters,
        [
            "url",
            "contentType",
            "authorization",
            "customHeaders",
            "bodyTemplate"
        ]
    );
    assert_eq!(provider.events, addons::EVENTS);

    let admin = administrator();
    let created = addons::create(
        &world.ctx,
        &admin,
        webhook(json!({
            "provider": "webhook",
            "description": "to the tracker",
            "enabled": true,
            "parameters": {"url": "http://127.0.0.1:9/hook", "authorization": "Bearer s3cret", "contentType": "application/json"},
            "events": ["feature-created"],
            "projects": ["default"]
        }))?,
    )
    .await?;
    // The answer to a create shows the parameters as given, without the creation time.
    assert_eq!(created.parameters["authorization"], "Bearer s3cret");
    assert!(created.created_at.is_none());
    assert_eq!(created.projects, ["default"]);
    let id = created.id;

    // Reads mask the URL and the headers, and give the parameters in stored order.
    let read = addons::get(&world.ctx, id).await?;
    assert_eq!(
        serde_json::to_string(&read.parameters)?,
        r#"{"url":"*****","contentType":"application/json","authorization":"*****"}"#
    );
    assert!(read.created_at.is_some());
    let listed = addons::list(&world.ctx).await?;
    assert_eq!(
        serde_json::to_value(&listed.addons[0])?,
        serde_json::to_value(&read)?
    );
    // The audit log records the webhook without its parameters.
    let logged = events::list(&world.ctx, EventsQuery::default()).await?;
    let first = &logged.events[0];
    assert_eq!(first.event_type, "addon-config-created");
    let data = first.data.as_ref().ok_or("no data")?;
    assert_eq!(data["id"], id);
    assert!(data.get("parameters").is_none(), "{data}");

    // An update that sends the masked values back keeps them.
    let mut replaced = serde_json::to_value(&read)?;
    replaced["description"] = json!("renamed");
    replaced["parameters"]["contentType"] = json!("text/plain");
    let updated = addons::update(&world.ctx, &admin, id, webhook(replaced)?).await?;
    assert_eq!(updated.description.as_deref(), Some("renamed"));
    assert_eq!(
        Value::Object(updated.parameters),
        json!({"url": "http://127.0.0.1:9/hook", "contentType": "text/plain", "authorization": "Bearer s3cret"})
    );
    // A masked value with nothing stored behind it is dropped.
    let updated = addons::update(
        &world.ctx,
        &admin,
        id,
        webhook(json!({"provider": "webhook", "enabled": false, "parameters": {"url": "*****", "customHeaders": "*****"}, "events": []}))?,
    )
    .await?;
    assert_eq!(
        Value::Object(updated.parameters),
        json!({"url": "http://127.0.0.1:9/hook"})
    );
    assert!(!updated.enabled);

    addons::delete(&world.ctx, &admin, id).await?;
    let gone = addons::get(&world.ctx, id).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    let gone = addons::update(
        &world.ctx,
        &admin,
        id,
        webhook(json!({"provider": "webhook", "enabled": true, "parameters": {"url": "http://127.0.0.1:9/"}, "events": []}))?,
    )
    .await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    let gone = addons::delete(&world.ctx, &admin, id).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    // As in Unleash, an unknown webhook has no deliveries rather than none found.
    let deliveries = addons::deliveries(&world.ctx, id, DeliveriesQuery::default()).await?;
    assert!(deliveries.integration_events.is_empty());
    Ok(())
}

#[tokio::test]
async fn bad_webhooks_are_refused_with_the_reason() -> Outcome {
    // The default policy: only public addresses.
    let world = World::new()?;
    let hook = |parameters: Value| json!({"provider": "webhook", "enabled": true, "parameters": parameters, "events": ["feature-created"]});
    let cases = [
        (
            json!({"provider": "slack", "enabled": true, "parameters": {"url": "https://93.184.216.34/"}, "events": []}),
            "Unknown addon provider slack",
        ),
        (
            json!({"provider": "", "enabled": true, "parameters": {}, "events": []}),
            "No addon provider supplied. The property was either missing or an empty value.",
        ),
        (hook(json!({})), "Missing required parameters: url "),
        (
            hook(json!({"url": "http://127.0.0.1:8080/hook"})),
            "URL resolves to a non-public address: 127.0.0.1",
        ),
        (
            hook(json!({"url": "http://169.254.169.254/latest/meta-data"})),
            "URL resolves to a non-public address: 169.254.169.254",
        ),
        (
            hook(json!({"url": "http://[::1]:8080/hook"})),
            "URL resolves to a non-public address: ::1",
        ),
        (
            hook(json!({"url": "file:///etc/passwd"})),
            "Invalid protocol: file:",
        ),
        (
            hook(json!({"url": "https://93.184.216.34/", "customHeaders": "{not json"})),
            "Could not parse the JSON in the customHeaders parameter.",
        ),
        (
            hook(json!({"url": "https://93.184.216.34/", "bodyTemplate": "{{#if}}"})),
            "the body template does not compile",
        ),
        (
            hook(json!({"url": "https://93.184.216.34/", "headers": {"a": "b"}})),
            "\"parameters.headers\" must be a string, a number or a boolean",
        ),
    ];
    for (request, message) in cases {
        let refused = addons::create(&world.ctx, &administrator(), webhook(request.clone())?).await;
        assert!(
            matches!(&refused, Err(AdminError::Validation { message: text, .. }) if text.starts_with(message)),
            "{request} gave {refused:?}"
        );
    }
    // A public address is taken.
    let created = addons::create(
        &world.ctx,
        &administrator(),
        webhook(hook(json!({"url": "https://93.184.216.34/"})))?,
    )
    .await?;
    let refused = addons::update(
        &world.ctx,
        &administrator(),
        created.id,
        webhook(hook(json!({"url": "http://10.0.0.1/"})))?,
    )
    .await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    assert_eq!(addons::list(&world.ctx).await?.addons.len(), 1);
    Ok(())
}

#[tokio::test]
async fn deliveries_are_listed_newest_first_and_paged() -> Outcome {
    let world = World::new()?;
    let created = addons::create(
        &world.ctx,
        &administrator(),
        webhook(json!({"provider": "webhook", "enabled": true, "parameters": {"url": "https://93.184.216.34/"}, "events": []}))?,
    )
    .await?;
    for state in ["success", "failed", "successWithErrors"] {
        flag_store::queries::addons::record_delivery(
            &mut *world.store().connection()?,
            &NewIntegrationEvent {
                integration_id: created.id,
                created_at: flag_admin::now(),
                state: state.into(),
                state_details: format!("it went {state}"),
                event: json!({"type": "feature-created"}).to_string(),
                details: json!({"url": "https://93.184.216.34/"}).to_string(),
            },
        )?;
    }
    let page = |limit: Option<&str>, offset: Option<&str>| DeliveriesQuery {
        limit: limit.map(str::to_owned),
        offset: offset.map(str::to_owned),
    };
    let states = |deliveries: &addons::types::DeliveriesOut| -> Vec<String> {
        deliveries
            .integration_events
            .iter()
            .map(|delivery| delivery.state.clone())
            .collect()
    };
    let all = addons::deliveries(&world.ctx, created.id, page(None, None)).await?;
    assert_eq!(states(&all), ["successWithErrors", "failed", "success"]);
    let first = &all.integration_events[0];
    assert_eq!(first.integration_id, created.id);
    assert_eq!(first.event["type"], "feature-created");
    assert_eq!(first.details["url"], "https://93.184.216.34/");
    let two = addons::deliveries(&world.ctx, created.id, page(Some("2"), None)).await?;
    assert_eq!(states(&two), ["successWithErrors", "failed"]);
    let rest = addons::deliveries(&world.ctx, created.id, page(Some("2"), Some("2"))).await?;
    assert_eq!(states(&rest), ["success"]);
    // Limits out of range, and offsets that do not read, fall back to the defaults.
    let fallback = addons::deliveries(&world.ctx, created.id, page(Some("500"), Some("-3"))).await?;
    assert_eq!(fallback.integration_events.len(), 3);
    Ok(())
}

#[test]
fn parameters_read_as_text_and_templates_and_headers_are_checked() {
    let parameters: Map<String, Value> = json!({"url": "https://x", "port": 8080, "on": true, "none": null})
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert_eq!(addons::text(&parameters, "url").as_deref(), Some("https://x"));
    assert_eq!(addons::text(&parameters, "port").as_deref(), Some("8080"));
    assert_eq!(addons::text(&parameters, "on").as_deref(), Some("true"));
    assert_eq!(addons::text(&parameters, "none"), None);
    assert_eq!(addons::text(&parameters, "missing"), None);
    assert!(webhooks::check_template("{\"event\": \"{{event.type}}\"}").is_ok());
    assert!(webhooks::check_template("{{#if}}").is_err());
    assert_eq!(
        webhooks::parse_headers("{\"X-A\": \"1\", \"X-B\": 2}"),
        Ok(vec![
            ("X-A".to_owned(), "1".to_owned()),
            ("X-B".to_owned(), "2".to_owned())
        ])
    );
    assert!(webhooks::parse_headers("[\"X-A\"]").is_err());
}

#[test]
fn a_webhook_takes_the_events_it_chose_where_it_listens() {
    let chosen = ["feature-created"];
    let everywhere = stored(json!({"url": "https://x"}), &chosen, &[], &[]);
    assert!(webhooks::matches(&everywhere, &event("feature-created", None)));
    assert!(!webhooks::matches(&everywhere, &event("feature-archived", None)));
    let web_in_production = stored(json!({"url": "https://x"}), &chosen, &["web"], &["production"]);
    assert!(webhooks::matches(
        &web_in_production,
        &event("feature-created", Some("production"))
    ));
    assert!(!webhooks::matches(
        &web_in_production,
        &event("feature-created", Some("development"))
    ));
    assert!(
        webhooks::matches(&web_in_production, &event("feature-created", None)),
        "an event of no environment reaches every webhook"
    );
    let shop = stored(json!({"url": "https://x"}), &chosen, &["shop"], &[]);
    assert!(!webhooks::matches(&shop, &event("feature-created", None)));
    let star = stored(json!({"url": "https://x"}), &chosen, &["*"], &["*"]);
    assert!(webhooks::matches(
        &star,
        &event("feature-created", Some("production"))
    ));
    let mut disabled = everywhere.clone();
    disabled.config.enabled = false;
    assert!(!webhooks::matches(&disabled, &event("feature-created", None)));
}

#[test]
fn a_delivery_is_built_as_unleashs_webhook_builds_it() -> Result<(), Box<dyn std::error::Error>> {
    let formatter = EventFormatter::new("http://localhost:4242", Bold::Simple);
    // Without a template, the body is the event itself.
    let plain = Delivery::build(
        &stored(json!({"url": "https://x/plain"}), &[], &[], &[]),
        event("feature-created", None),
        &formatter,
    )?;
    assert!(plain.plain);
    assert_eq!(plain.url, "https://x/plain");
    assert_eq!(plain.content_type, "application/json");
    assert_eq!(
        plain.headers,
        [("Content-Type".to_owned(), "application/json".to_owned())]
    );
    let sent: Value = serde_json::from_str(&plain.body)?;
    assert_eq!(sent["type"], "feature-created");
    assert_eq!(sent, plain.event);

    // A template sees the event, its JSON and its Markdown, escaped where it stands.
    let templated = Delivery::build(
        &stored(
            json!({
                "url": "https://x/templated",
                "contentType": "text/plain",
                "authorization": "Bearer s3cret",
                "customHeaders": "{\"Authorization\": \"Bearer custom\", \"X-Team\": \"flags\"}",
                "bodyTemplate": "{\"event\": \"{{event.type}}\", \"text\": \"{{eventMarkdown}}\", \"json\": {{{eventJson}}}}"
            }),
            &[],
            &[],
            &[],
        ),
        event("feature-created", None),
        &formatter,
    )?;
    assert!(!templated.plain);
    let sent: Value = serde_json::from_str(&templated.body)?;
    assert_eq!(sent["event"], "feature-created");
    assert_eq!(
        sent["text"],
        "*ada* created *[banner](http://localhost:4242/projects/web/features/banner)* in project \
         *[web](http://localhost:4242/projects/web)*"
    );
    let json: Value = serde_json::from_str(sent["json"].as_str().ok_or("no eventJson")?)?;
    assert_eq!(json["featureName"], "banner");
    // Extra headers replace the usual ones.
    assert_eq!(
        templated.headers,
        [
            ("Content-Type".to_owned(), "text/plain".to_owned()),
            ("Authorization".to_owned(), "Bearer custom".to_owned()),
            ("X-Team".to_owned(), "flags".to_owned())
        ]
    );
    assert!(templated.warnings.is_empty());

    // Headers that do not read are a warning, not a failure; no URL is a failure.
    let warned = Delivery::build(
        &stored(
            json!({"url": "https://x", "customHeaders": "{oops"}),
            &[],
            &[],
            &[],
        ),
        event("feature-created", None),
        &formatter,
    )?;
    assert_eq!(warned.warnings.len(), 1);
    assert!(
        Delivery::build(
            &stored(json!({}), &[], &[], &[]),
            event("feature-created", None),
            &formatter
        )
        .is_err()
    );
    Ok(())
}

#[test]
fn deliveries_are_sent_retried_once_and_recorded() -> Result<(), Box<dyn std::error::Error>> {
    let formatter = EventFormatter::new("http://localhost:4242", Bold::Simple);
    let to = |url: String, extra: Value| -> Result<Delivery, String> {
        let mut parameters = extra;
        parameters["url"] = json!(url);
        Delivery::build(
            &stored(parameters, &[], &[], &[]),
            event("feature-created", None),
            &formatter,
        )
    };
    let agent = webhooks::agent(loopback());

    let ok = Hook::answering(200)?;
    let record = webhooks::send(&agent, &to(ok.url("/ok"), json!({}))?, &Clock::system());
    let received = ok.next()?;
    assert_eq!(received.path, "/ok");
    assert_eq!(received.header("content-type"), Some("application/json"));
    assert_eq!(
        serde_json::from_str::<Value>(&received.body)?["type"],
        "feature-created"
    );
    assert_eq!(record.state, "success");
    assert_eq!(
        record.state_details,
        "Webhook request was successful with status code: 200."
    );
    assert_eq!(record.integration_id, 1);
    let details: Value = serde_json::from_str(&record.details)?;
    assert_eq!(details["url"], ok.url("/ok"));
    assert_eq!(
        details["body"]["type"], "feature-created",
        "a plain body is kept as JSON"
    );

    // A warning while building makes a success one with errors.
    let record = webhooks::send(
        &agent,
        &to(ok.url("/warned"), json!({"customHeaders": "{oops"}))?,
        &Clock::system(),
    );
    ok.next()?;
    assert_eq!(record.state, "successWithErrors");

    // A failing receiver is asked twice, then recorded as failed.
    let down = Hook::answering(503)?;
    let record = webhooks::send(&agent, &to(down.url("/down"), json!({}))?, &Clock::system());
    assert_eq!(down.next()?.path, "/down");
    assert_eq!(down.next()?.path, "/down");
    assert_eq!(record.state, "failed");
    assert_eq!(
        record.state_details,
        "Webhook request failed with status code: 503."
    );
    // A client error is an answer: no retry.
    let refused = Hook::answering(404)?;
    let record = webhooks::send(&agent, &to(refused.url("/nope"), json!({}))?, &Clock::system());
    refused.next()?;
    assert!(
        refused.received.recv_timeout(Duration::from_millis(200)).is_err(),
        "no retry"
    );
    assert_eq!(record.state, "failed");

    // Nothing listening, and an address the policy does not permit, fail without an answer.
    let record = webhooks::send(
        &agent,
        &to(format!("http://127.0.0.1:{}/gone", closed_port()?), json!({}))?,
        &Clock::system(),
    );
    assert_eq!(record.state, "failed");
    assert!(
        record.state_details.starts_with("Webhook request failed: "),
        "{record:?}"
    );
    let guarded = webhooks::agent(UrlPolicy::default());
    let record = webhooks::send(&guarded, &to(ok.url("/private"), json!({}))?, &Clock::system());
    assert_eq!(record.state, "failed");
    assert!(
        record.state_details.contains("non-public"),
        "{}",
        record.state_details
    );
    assert!(ok.received.recv_timeout(Duration::from_millis(200)).is_err());
    Ok(())
}

#[tokio::test]
async fn the_chosen_events_are_delivered_after_the_writes_commit() -> Outcome {
    let world = World::with(Settings {
        webhook_urls: loopback(),
        ..Settings::default()
    })?;
    let hook = Hook::answering(200)?;
    let admin = administrator();
    let created = addons::create(
        &world.ctx,
        &admin,
        webhook(json!({
            "provider": "webhook",
            "enabled": true,
            "parameters": {
                "url": hook.url("/templated"),
                "bodyTemplate": "{\"event\": \"{{event.type}}\", \"flag\": \"{{event.data.name}}\", \"by\": \"{{event.createdBy}}\"}"
            },
            "events": ["feature-created"]
        }))?,
    )
    .await?;
    let delivering = Webhooks::start(
        world.store().clone(),
        loopback(),
        EventFormatter::new("http://localhost:4242", Bold::Simple),
        Clock::system(),
    )?;
    features::create(
        &world.ctx,
        &writer(),
        "default".into(),
        body(json!({"name": "checkout.v2"}))?,
    )
    .await?;
    // An event no webhook chose is not delivered.
    features::update(
        &world.ctx,
        &writer(),
        ("default".into(), "checkout.v2".into()),
        body(json!({"description": "changed"}))?,
    )
    .await?;
    let received = hook.next()?;
    assert_eq!(received.path, "/templated");
    let sent: Value = serde_json::from_str(&received.body)?;
    assert_eq!(
        sent,
        json!({"event": "feature-created", "flag": "checkout.v2", "by": "test-token"})
    );
    assert!(hook.received.recv_timeout(Duration::from_secs(1)).is_err());

    // The delivery is recorded.
    let recorded = loop {
        let deliveries = addons::deliveries(&world.ctx, created.id, DeliveriesQuery::default()).await?;
        if let Some(delivery) = deliveries.integration_events.into_iter().next() {
            break delivery;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(recorded.state, "success");
    assert_eq!(recorded.event["featureName"], "checkout.v2");
    assert_eq!(recorded.event["createdByUserId"], Actor::ADMIN_TOKEN);
    delivering.stop(Duration::from_secs(1));

    // Once stopped, nothing more is delivered.
    features::create(
        &world.ctx,
        &writer(),
        "default".into(),
        body(json!({"name": "after-stop"}))?,
    )
    .await?;
    assert!(hook.received.recv_timeout(Duration::from_millis(700)).is_err());
    Ok(())
}

#[test]
fn the_app_starts_its_webhooks_and_they_stop() -> Outcome {
    let world = World::new()?;
    let webhooks = world.ctx.start_webhooks()?;
    webhooks.stop(Duration::from_secs(1));
    Ok(())
}

#[tokio::test]
async fn a_sample_event_is_sent_now_recorded_and_never_in_the_audit_log() -> Outcome {
    let world = World::with(Settings {
        webhook_urls: loopback(),
        ..Settings::default()
    })?;
    let hook = Hook::answering(204)?;
    let created = addons::create(
        &world.ctx,
        &administrator(),
        webhook(json!({"provider": "webhook", "enabled": true,
            "parameters": {"url": hook.url("/hook"), "authorization": "secret"},
            "events": ["feature-created"]}))?,
    )
    .await?;
    let before = events::list(&world.ctx, EventsQuery::default())
        .await?
        .total_events;
    let sent = addons::send_sample(&world.ctx, created.id).await?;
    assert_eq!(sent.state, "success", "{}", sent.state_details);
    let received = hook.next()?;
    assert!(received.body.contains("sample-flag"), "{}", received.body);
    assert!(
        received
            .headers
            .iter()
            .any(|(name, value)| name.eq_ignore_ascii_case("authorization") && value == "secret")
    );
    let listed = addons::deliveries(&world.ctx, created.id, DeliveriesQuery::default()).await?;
    assert_eq!(listed.integration_events.len(), 1);
    let after = events::list(&world.ctx, EventsQuery::default())
        .await?
        .total_events;
    assert_eq!(before, after, "the sample was written to the audit log");
    // A webhook that does not exist is not found; one that fails is recorded as failed.
    assert!(matches!(
        addons::send_sample(&world.ctx, created.id + 100).await,
        Err(AdminError::NotFound(_))
    ));
    let failing = Hook::answering(500)?;
    let broken = addons::create(
        &world.ctx,
        &administrator(),
        webhook(json!({"provider": "webhook", "enabled": true,
            "parameters": {"url": failing.url("/down")}, "events": []}))?,
    )
    .await?;
    let sent = addons::send_sample(&world.ctx, broken.id).await?;
    assert_eq!(sent.state, "failed");
    assert!(sent.state_details.contains("500"), "{}", sent.state_details);
    Ok(())
}
