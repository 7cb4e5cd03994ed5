//! Webhooks (Unleash's addons): the API with its bad inputs, and deliveries to a real HTTP
//! receiver on loopback, posted by the real delivery threads after the writes commit.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use actix_web::http::StatusCode;
use flag_admin::Settings;
use flag_admin::runtime::url_policy::UrlPolicy;
use serde_json::{Value, json};

use crate::common::{ADMIN, PRODUCTION_ADMIN, TestApp, assert_error, delete, get, post, put, send};

/// One request the receiver took.
#[derive(Debug)]
pub struct Received {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// How the receiver answers: a status, or nothing until released.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    Status(u16),
    HoldFirst,
}

/// An HTTP receiver on loopback that reports every request it takes.
pub struct Hook {
    port: u16,
    pub received: Receiver<Received>,
    pub release: Sender<()>,
}

pub fn receiver(answer: Answer) -> std::io::Result<Hook> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    let (report, received) = channel();
    let (release, released) = channel::<()>();
    let released = Arc::new(Mutex::new(released));
    std::thread::spawn(move || {
        for (index, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { return };
            let report = report.clone();
            let released = Arc::clone(&released);
            std::thread::spawn(move || {
                let Some(request) = read_request(&stream) else {
                    return;
                };
                let hold = matches!(answer, Answer::HoldFirst) && index == 0;
                let _ = report.send(request);
                if hold {
                    let _ = released.lock().unwrap_or_else(PoisonError::into_inner).recv();
                }
                let status = match answer {
                    Answer::Status(status) => status,
                    Answer::HoldFirst => 200,
                };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            });
        }
    });
    Ok(Hook {
        port,
        received,
        release,
    })
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

impl Hook {
    pub fn next(&self) -> Result<Received, &'static str> {
        self.received
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| "the webhook was not delivered within 30 s")
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// The app with webhooks allowed to post to loopback, its delivery threads running.
fn open_app() -> std::io::Result<(TestApp, flag_admin::catalogue::webhooks::Webhooks)> {
    let app = TestApp::with_settings(Settings {
        webhook_urls: UrlPolicy {
            allow_private: true,
            allow_list: Vec::new(),
        },
        ..Settings::default()
    });
    let webhooks = app.state.app.start_webhooks()?;
    Ok((app, webhooks))
}

#[actix_web::test]
async fn webhooks_are_created_read_masked_replaced_and_deleted() -> Result<(), Box<dyn std::error::Error>> {
    let (app, webhooks) = open_app()?;
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/addons", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["addons"], json!([]));
    assert_eq!(body["providers"][0]["name"], "webhook");
    assert_eq!(
        body["providers"][0]["parameters"]
            .as_array()
            .ok_or("no parameters")?
            .iter()
            .map(|parameter| parameter["name"].clone())
            .collect::<Vec<_>>(),
        vec![
            "url",
            "contentType",
            "authorization",
            "customHeaders",
            "bodyTemplate"
        ]
    );

    let created = json!({
        "provider": "webhook",
        "description": "to the tracker",
        "enabled": true,
        "parameters": {"url": "http://127.0.0.1:9/hook", "authorization": "Bearer s3cret", "contentType": "application/json"},
        "events": ["feature-created"],
        "projects": ["default"],
        "environments": []
    });
    let (status, body) = send(&service, post("/api/admin/addons", ADMIN, created.clone())).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["id"].as_i64().ok_or("no id")?;
    assert_eq!(
        body,
        json!({
            "id": id,
            "provider": "webhook",
            "enabled": true,
            "description": "to the tracker",
            "parameters": {"url": "http://127.0.0.1:9/hook", "authorization": "Bearer s3cret", "contentType": "application/json"},
            "events": ["feature-created"],
            "projects": ["default"],
            "environments": []
        })
    );

    // Reads mask the URL and the headers, and give the parameters in stored order.
    let (status, body) = send(&service, get(&format!("/api/admin/addons/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        serde_json::to_string(&body["parameters"])?,
        r#"{"url":"*****","contentType":"application/json","authorization":"*****"}"#
    );
    assert!(body["createdAt"].is_string(), "{body}");
    let (_, list) = send(&service, get("/api/admin/addons", ADMIN)).await;
    assert_eq!(list["addons"][0], body);

    // The audit log records the webhook without its parameters.
    let (_, events) = send(&service, get("/api/admin/events", ADMIN)).await;
    let event = &events["events"][0];
    assert_eq!(event["type"], "addon-config-created");
    assert_eq!(event["data"]["id"], id);
    assert!(event["data"].get("parameters").is_none(), "{event}");

    // An update that sends the masked values back keeps them.
    let mut replaced = body.clone();
    replaced["description"] = json!("renamed");
    replaced["parameters"]["contentType"] = json!("text/plain");
    let (status, body) = send(&service, put(&format!("/api/admin/addons/{id}"), ADMIN, replaced)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["description"], "renamed");
    assert_eq!(
        body["parameters"],
        json!({"url": "http://127.0.0.1:9/hook", "contentType": "text/plain", "authorization": "Bearer s3cret"})
    );

    // A bad replacement is refused, and a masked value with nothing stored behind it is dropped.
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/addons/{id}"),
            ADMIN,
            json!({"provider": "webhook", "enabled": "yes", "parameters": {}, "events": []}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/addons/{id}"),
            ADMIN,
            json!({"provider": "webhook", "enabled": false, "parameters": {"url": "*****", "customHeaders": "*****"}, "events": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["parameters"], json!({"url": "http://127.0.0.1:9/hook"}));
    let (status, _) = send(&service, delete(&format!("/api/admin/addons/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    for request in [
        get(&format!("/api/admin/addons/{id}"), ADMIN),
        put(&format!("/api/admin/addons/{id}"), ADMIN, created.clone()),
        delete(&format!("/api/admin/addons/{id}"), ADMIN),
    ] {
        let (status, body) = send(&service, request).await;
        assert_error(status, &body, 404, "NotFoundError");
    }
    // As in Unleash, an unknown webhook has no deliveries rather than a 404.
    let (status, body) = send(&service, get(&format!("/api/admin/addons/{id}/events"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"integrationEvents": []}));
    let (status, body) = send(&service, get("/api/admin/addons/abc", ADMIN)).await;
    assert_eq!(status.as_u16() / 100, 4, "{body}");
    webhooks.stop(Duration::from_secs(1));
    Ok(())
}

#[actix_web::test]
async fn bad_webhooks_are_refused_with_the_reason() -> Result<(), Box<dyn std::error::Error>> {
    // The default policy: only public addresses.
    let app = TestApp::new();
    let service = app.service().await;
    let webhook = |parameters: Value| json!({"provider": "webhook", "enabled": true, "parameters": parameters, "events": ["feature-created"]});
    let cases = [
        (
            json!({"provider": "slack", "enabled": true, "parameters": {"url": "https://93.184.216.34/"}, "events": []}),
            "Unknown addon provider slack",
        ),
        (
            json!({"provider": "", "enabled": true, "parameters": {}, "events": []}),
            "No addon provider supplied. The property was either missing or an empty value.",
        ),
        (webhook(json!({})), "Missing required parameters: url "),
        (
            webhook(json!({"url": "http://127.0.0.1:8080/hook"})),
            "URL resolves to a non-public address: 127.0.0.1",
        ),
        (
            webhook(json!({"url": "http://169.254.169.254/latest/meta-data"})),
            "URL resolves to a non-public address: 169.254.169.254",
        ),
        (
            webhook(json!({"url": "http://[::1]:8080/hook"})),
            "URL resolves to a non-public address: ::1",
        ),
        (
            webhook(json!({"url": "file:///etc/passwd"})),
            "Invalid protocol: file:",
        ),
        (
            webhook(json!({"url": "https://93.184.216.34/", "customHeaders": "{not json"})),
            "Could not parse the JSON in the customHeaders parameter.",
        ),
        (
            webhook(json!({"url": "https://93.184.216.34/", "bodyTemplate": "{{#if}}"})),
            "the body template does not compile",
        ),
        (
            webhook(json!({"url": "https://93.184.216.34/", "headers": {"a": "b"}})),
            "\"parameters.headers\" must be a string, a number or a boolean",
        ),
    ];
    for (body, message) in cases {
        let (status, answer) = send(&service, post("/api/admin/addons", ADMIN, body.clone())).await;
        assert_error(status, &answer, 400, "ValidationError");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|text| text.starts_with(message)),
            "{body} gave {answer}"
        );
    }
    for body in [
        json!([]),
        json!({"provider": 1}),
        json!("webhook"),
        json!({"provider": "webhook", "parameters": {"url": "https://93.184.216.34/"}, "events": []}),
        json!({"provider": "webhook", "enabled": true, "events": []}),
        json!({"provider": "webhook", "enabled": true, "parameters": {"url": "https://93.184.216.34/"}}),
    ] {
        let (status, answer) = send(&service, post("/api/admin/addons", ADMIN, body)).await;
        assert_error(status, &answer, 400, "ValidationError");
    }
    // A token limited to one environment does not administer webhooks.
    let (status, answer) = send(
        &service,
        post(
            "/api/admin/addons",
            PRODUCTION_ADMIN,
            webhook(json!({"url": "https://93.184.216.34/"})),
        ),
    )
    .await;
    assert_error(status, &answer, 403, "NoAccessError");
    let (_, list) = send(&service, get("/api/admin/addons", ADMIN)).await;
    assert_eq!(list["addons"], json!([]));
    Ok(())
}

#[actix_web::test]
async fn a_chosen_event_is_posted_with_the_headers_and_the_rendered_template()
-> Result<(), Box<dyn std::error::Error>> {
    let (app, webhooks) = open_app()?;
    let service = app.service().await;
    let hook = receiver(Answer::Status(200))?;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/addons",
            ADMIN,
            json!({
                "provider": "webhook",
                "enabled": true,
                "parameters": {
                    "url": hook.url("/templated"),
                    "authorization": "Bearer s3cret",
                    "customHeaders": "{\"X-Team\": \"flags\"}",
                    "bodyTemplate": "{\"event\": \"{{event.type}}\", \"flag\": \"{{event.data.name}}\", \"by\": \"{{event.createdBy}}\", \"text\": \"{{eventMarkdown}}\", \"json\": {{{eventJson}}}}"
                },
                "events": ["feature-created"]
            }),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["id"].as_i64().ok_or("no id")?;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/addons",
            ADMIN,
            json!({
                "provider": "webhook",
                "enabled": true,
                "parameters": {"url": hook.url("/plain")},
                "events": ["feature-environment-enabled"],
                "environments": ["production"]
            }),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "checkout.v2"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Switched on in development: no webhook listens there.
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout.v2/environments/development/on",
            ADMIN,
            Value::Null,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout.v2/environments/production/on",
            ADMIN,
            Value::Null,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    // Deliveries run side by side, so they may arrive in either order.
    let mut received = [hook.next()?, hook.next()?];
    received.sort_by(|a, b| b.path.cmp(&a.path));
    let [templated, plain] = received;
    assert_eq!(templated.path, "/templated");
    assert_eq!(templated.header("authorization"), Some("Bearer s3cret"));
    assert_eq!(templated.header("x-team"), Some("flags"));
    assert_eq!(templated.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_str(&templated.body)?;
    assert_eq!(body["event"], "feature-created");
    assert_eq!(body["flag"], "checkout.v2");
    assert_eq!(body["by"], "admin");
    // `eventMarkdown` is the event told as Unleash tells it to webhooks, in its simple style.
    assert_eq!(
        body["text"],
        "*admin* created *[checkout.v2](http://localhost:4242/projects/default/features/checkout.v2)* \
         in project *[default](http://localhost:4242/projects/default)*"
    );
    // `eventJson` is the event serialised into a JSON string, as Unleash gives it.
    let json: Value = serde_json::from_str(body["json"].as_str().ok_or("no eventJson")?)?;
    assert_eq!(json["type"], "feature-created");
    assert_eq!(json["featureName"], "checkout.v2");

    // Without a template, the body is the event as the audit log shows it.
    assert_eq!(plain.path, "/plain");
    let event: Value = serde_json::from_str(&plain.body)?;
    assert_eq!(event["type"], "feature-environment-enabled");
    assert_eq!(event["environment"], "production");
    assert_eq!(
        event
            .as_object()
            .ok_or("not an object")?
            .keys()
            .collect::<Vec<_>>(),
        vec![
            "id",
            "type",
            "createdBy",
            "createdAt",
            "createdByUserId",
            "data",
            "preData",
            "tags",
            "featureName",
            "project",
            "environment",
            "groupType",
            "groupId"
        ]
    );
    assert!(
        hook.received.recv_timeout(Duration::from_secs(2)).is_err(),
        "an event no webhook chose was delivered"
    );

    // Each delivery is recorded.
    let deliveries = loop {
        let (status, body) = send(&service, get(&format!("/api/admin/addons/{id}/events"), ADMIN)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if body["integrationEvents"]
            .as_array()
            .is_some_and(|list| !list.is_empty())
        {
            break body;
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    };
    let delivery = &deliveries["integrationEvents"][0];
    assert_eq!(delivery["state"], "success", "{delivery}");
    assert_eq!(
        delivery["stateDetails"],
        "Webhook request was successful with status code: 200."
    );
    assert_eq!(delivery["integrationId"], id);
    assert_eq!(delivery["event"]["type"], "feature-created", "{delivery}");
    assert_eq!(delivery["details"]["url"], hook.url("/templated"));
    assert!(delivery["id"].is_string());
    webhooks.stop(Duration::from_secs(1));
    Ok(())
}

#[actix_web::test]
async fn a_failing_receiver_is_retried_once_and_recorded() -> Result<(), Box<dyn std::error::Error>> {
    let (app, webhooks) = open_app()?;
    let service = app.service().await;
    let hook = receiver(Answer::Status(503))?;
    let (_, body) = send(
        &service,
        post(
            "/api/admin/addons",
            ADMIN,
            json!({"provider": "webhook", "enabled": true, "parameters": {"url": hook.url("/down")}, "events": ["feature-created"]}),
        ),
    )
    .await;
    let id = body["id"].as_i64().ok_or("no id")?;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "f"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(hook.next()?.path, "/down");
    assert_eq!(hook.next()?.path, "/down");
    let delivery = loop {
        let (_, body) = send(&service, get(&format!("/api/admin/addons/{id}/events"), ADMIN)).await;
        if let Some(delivery) = body["integrationEvents"].get(0) {
            break delivery.clone();
        }
        actix_web::rt::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(delivery["state"], "failed");
    assert_eq!(
        delivery["stateDetails"],
        "Webhook request failed with status code: 503."
    );
    assert!(
        hook.received.recv_timeout(Duration::from_secs(2)).is_err(),
        "retried more than once"
    );
    webhooks.stop(Duration::from_secs(1));
    Ok(())
}

#[actix_web::test]
async fn a_receiver_that_does_not_answer_never_holds_up_writes() -> Result<(), Box<dyn std::error::Error>> {
    let (app, webhooks) = open_app()?;
    let service = app.service().await;
    let hook = receiver(Answer::HoldFirst)?;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/addons",
            ADMIN,
            json!({"provider": "webhook", "enabled": true, "parameters": {"url": hook.url("/slow")}, "events": ["feature-created"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "first"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    // The receiver has the first delivery and does not answer it.
    let first: Value = serde_json::from_str(&hook.next()?.body)?;
    assert_eq!(first["featureName"], "first");
    // Writes go on while that delivery hangs, and their events are delivered by other senders.
    for name in ["second", "third"] {
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
    let mut later = Vec::new();
    for _ in 0..2 {
        let event: Value = serde_json::from_str(&hook.next()?.body)?;
        later.push(event["featureName"].as_str().unwrap_or_default().to_owned());
    }
    later.sort();
    assert_eq!(later, ["second", "third"]);
    hook.release.send(())?;
    webhooks.stop(Duration::from_secs(5));
    Ok(())
}

#[actix_web::test]
async fn an_unreachable_receiver_is_recorded_and_extra_headers_replace_the_usual_ones()
-> Result<(), Box<dyn std::error::Error>> {
    let (app, webhooks) = open_app()?;
    let service = app.service().await;
    // A port nothing listens on.
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.local_addr()?.port()
    };
    let (_, body) = send(
        &service,
        post(
            "/api/admin/addons",
            ADMIN,
            json!({"provider": "webhook", "enabled": true, "parameters": {"url": format!("http://127.0.0.1:{closed}/gone")}, "events": ["feature-created"]}),
        ),
    )
    .await;
    let gone = body["id"].as_i64().ok_or("no id")?;
    let hook = receiver(Answer::Status(200))?;
    let (_, body) = send(
        &service,
        post(
            "/api/admin/addons",
            ADMIN,
            json!({
                "provider": "webhook",
                "enabled": true,
                "parameters": {
                    "url": hook.url("/headers"),
                    "authorization": "Bearer replaced",
                    "customHeaders": "{\"Content-Type\": \"text/plain\", \"Authorization\": \"Bearer custom\", \"X-Attempt\": 1}"
                },
                "events": ["feature-created"]
            }),
        ),
    )
    .await;
    let headers_id = body["id"].as_i64().ok_or("no id")?;
    for name in ["one", "two"] {
        let (status, _) = send(
            &service,
            post(
                "/api/admin/projects/default/features",
                ADMIN,
                json!({"name": name}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let received = hook.next()?;
    assert_eq!(received.header("content-type"), Some("text/plain"));
    assert_eq!(received.header("authorization"), Some("Bearer custom"));
    assert_eq!(received.header("x-attempt"), Some("1"));
    assert_eq!(
        received
            .headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            .count(),
        1
    );
    hook.next()?;

    // Both failed deliveries are recorded (each after its retry), and the list pages.
    let deliveries = loop {
        let (_, body) = send(&service, get(&format!("/api/admin/addons/{gone}/events"), ADMIN)).await;
        if body["integrationEvents"]
            .as_array()
            .is_some_and(|list| list.len() == 2)
        {
            break body;
        }
        actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    };
    let delivery = &deliveries["integrationEvents"][0];
    assert_eq!(delivery["state"], "failed", "{delivery}");
    assert!(
        delivery["stateDetails"]
            .as_str()
            .is_some_and(|details| details.starts_with("Webhook request failed: ")),
        "{delivery}"
    );
    let (_, page) = send(
        &service,
        get(
            &format!("/api/admin/addons/{gone}/events?limit=1&offset=1"),
            ADMIN,
        ),
    )
    .await;
    let page = page["integrationEvents"].as_array().ok_or("no list")?;
    assert_eq!(page.len(), 1);
    assert_eq!(page[0]["id"], deliveries["integrationEvents"][1]["id"]);
    let (_, recorded) = send(
        &service,
        get(&format!("/api/admin/addons/{headers_id}/events"), ADMIN),
    )
    .await;
    assert_eq!(
        recorded["integrationEvents"][0]["details"]["contentType"],
        "application/json"
    );
    webhooks.stop(Duration::from_secs(1));
    Ok(())
}
