//! The client against the real server, run in-process on a loopback socket on a scratch
//! database of the backend under test (`HALYARD_TEST_DATABASE`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::web;
use admin_api::AppState;
use flag_admin::{Ctx, Settings};
use flag_client::{Client, Context, Error, Event, Mode, Source};
use flag_store::Store;
use flag_store::scratch::Scratch;
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const ADMIN: &str = "*:*.client-test-admin-secret";
const BACKEND: &str = "*:development.client-test-backend-secret";

/// The server, running on its own thread until dropped.
struct Running {
    handle: Option<actix_server::ServerHandle>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(handle) = self.handle.take() {
            actix_web::rt::System::new().block_on(handle.stop(false));
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The real server over `store` on `port`.
fn serve(store: Store, port: u16) -> Result<Running, Box<dyn std::error::Error>> {
    let ctx = Ctx::new(store, Settings::default())?;
    let state = web::Data::new(AppState::new(ctx));
    let (sender, receiver) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            match admin_api::server::start(state.clone(), ("127.0.0.1", port)) {
                Ok(server) => {
                    let _ = sender.send(Ok(server.handle()));
                    let _ = admin_api::server::run(server, state).await;
                }
                Err(error) => {
                    let _ = sender.send(Err(error.to_string()));
                }
            }
        });
    });
    let handle = receiver.recv()??;
    Ok(Running {
        handle: Some(handle),
        thread: Some(thread),
    })
}

/// A scratch database with the tokens, the server on a free port, and an admin agent.
struct Server {
    base: String,
    port: u16,
    store: Store,
    running: Option<Running>,
    agent: ureq::Agent,
    _scratch: Scratch,
    directory: tempfile::TempDir,
}

impl Server {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let scratch = Scratch::new()?;
        let store = scratch.open()?;
        flag_admin::app::seeding::seed_admin_tokens(&store, &[ADMIN.into()])?;
        flag_admin::app::seeding::seed_tokens(
            &store,
            flag_admin::runtime::domain::TokenType::Backend,
            &[BACKEND.into()],
        )?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let running = serve(store.clone(), port)?;
        Ok(Self {
            base: format!("http://127.0.0.1:{port}"),
            port,
            store,
            running: Some(running),
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .into(),
            _scratch: scratch,
            directory: tempfile::tempdir()?,
        })
    }

    fn stop(&mut self) {
        self.running = None;
    }

    fn restart(&mut self) -> TestResult {
        self.running = Some(serve(self.store.clone(), self.port)?);
        Ok(())
    }

    fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), Box<dyn std::error::Error>> {
        let url = format!("{}{path}", self.base);
        let mut response = match (method, body) {
            ("GET", _) => self.agent.get(&url).header("Authorization", ADMIN).call()?,
            ("PUT", Some(body)) => self
                .agent
                .put(&url)
                .header("Authorization", ADMIN)
                .send_json(&body)?,
            (_, body) => self
                .agent
                .post(&url)
                .header("Authorization", ADMIN)
                .send_json(body.unwrap_or(json!({})))?,
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
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let (status, answer) = self.call(method, path, body)?;
        if !(200..300).contains(&status) {
            return Err(format!("{method} {path}: {status} {answer}").into());
        }
        Ok(answer)
    }

    /// `everyone` on for all, `pro-only` on for `plan=pro` with the variant `gold`, `switched-off`
    /// off, in development.
    fn demo_flags(&self) -> TestResult {
        let base = "/api/admin/projects/default/features";
        for name in ["everyone", "pro-only", "switched-off"] {
            self.expect("POST", base, Some(json!({"name": name})))?;
        }
        let strategies = |name: &str| format!("{base}/{name}/environments/development/strategies");
        self.expect("POST", &strategies("everyone"), Some(json!({"name": "default"})))?;
        self.expect(
            "POST",
            &strategies("pro-only"),
            Some(json!({"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "default", "groupId": "pro-only"},
                "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
                "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default",
                              "payload": {"type": "json", "value": "{\"tier\":1}"}}]})),
        )?;
        self.expect(
            "POST",
            &strategies("switched-off"),
            Some(json!({"name": "default"})),
        )?;
        for name in ["everyone", "pro-only"] {
            self.switch(name, true)?;
        }
        Ok(())
    }

    fn switch(&self, name: &str, on: bool) -> TestResult {
        let state = if on { "on" } else { "off" };
        self.expect(
            "POST",
            &format!("/api/admin/projects/default/features/{name}/environments/development/{state}"),
            None,
        )?;
        Ok(())
    }

    fn client(&self, mode: Mode) -> flag_client::Builder {
        Client::builder(format!("{}/api", self.base), BACKEND)
            .app_name("flag-client-test")
            .mode(mode)
            .refresh_interval(Duration::from_millis(200))
            .metrics_interval(None)
            .backup_path(self.directory.path().join("backup.json"))
    }
}

fn pro() -> Context {
    let mut context = Context {
        user_id: Some("7".into()),
        ..Context::default()
    };
    context.properties.set("plan", "pro");
    context
}

/// This machine's name, read as the client reads it for `applicationHostname`.
fn this_host() -> Result<String, Box<dyn std::error::Error>> {
    Ok(std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .ok_or("no host name")?)
}

/// Waits until `check` holds, at most `timeout`; returns how long it took.
fn within(timeout: Duration, mut check: impl FnMut() -> bool) -> Result<Duration, String> {
    let started = Instant::now();
    while !check() {
        if started.elapsed() > timeout {
            return Err(format!("not within {timeout:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(started.elapsed())
}

#[test]
fn polling_fetches_once_then_gets_304s_and_sees_a_write_on_the_next_poll() -> TestResult {
    let server = Server::start()?;
    server.demo_flags()?;
    let client = server.client(Mode::Polling).build()?;
    // The readiness future works under any executor; here, actix's.
    actix_web::rt::System::new().block_on(client.ready())?;
    assert!(client.is_ready());
    assert!(client.is_enabled("everyone", &Context::default()));
    assert!(!client.is_enabled("switched-off", &Context::default()));
    assert!(!client.is_enabled("no-such-flag", &Context::default()));
    let variant = client.variant("pro-only", &pro());
    assert_eq!(
        (variant.name.as_str(), variant.enabled, variant.feature_enabled),
        ("gold", true, true)
    );
    assert_eq!(
        variant.payload.map(|payload| payload.value),
        Some("{\"tier\":1}".to_owned())
    );
    assert_eq!(client.flag_names(), ["everyone", "pro-only", "switched-off"]);

    within(Duration::from_secs(5), || client.fetches().unchanged >= 3)?;
    assert_eq!(client.fetches().updated, 1, "{:?}", client.fetches());
    assert_eq!(client.fetches().failed, 0);

    server.switch("switched-off", true)?;
    let took = within(Duration::from_secs(5), || {
        client.is_enabled("switched-off", &Context::default())
    })?;
    assert!(took < Duration::from_millis(1000), "{took:?}");
    assert_eq!(client.fetches().updated, 2);

    // The explanation is the playground's, computed here.
    let explained = client.explain("pro-only", &pro()).ok_or("no explanation")?;
    assert_eq!(explained["isEnabled"], true);
    assert_eq!(explained["strategies"][0]["constraints"][0]["result"], true);
    assert_eq!(explained["variant"]["name"], "gold");
    assert!(client.explain("no-such-flag", &pro()).is_none());
    Ok(())
}

#[test]
fn streaming_and_delta_modes_see_each_write() -> TestResult {
    let server = Server::start()?;
    server.demo_flags()?;
    for mode in [Mode::Streaming, Mode::Auto, Mode::Delta] {
        let errors = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&errors);
        let backup = server.directory.path().join(format!("{mode:?}.json"));
        let client = server
            .client(mode)
            .backup_path(&backup)
            .on_event(move |event| {
                if let (Event::Error(error), Ok(mut seen)) = (event, seen.lock()) {
                    seen.push(error.to_string());
                }
            })
            .build()?;
        client.wait_until_ready(Duration::from_secs(10))?;
        let mut on = client.is_enabled("switched-off", &Context::default());
        for _ in 0..4 {
            on = !on;
            server.switch("switched-off", on)?;
            let took = within(Duration::from_secs(5), || {
                client.is_enabled("switched-off", &Context::default()) == on
            })?;
            assert!(took < Duration::from_secs(1), "{mode:?}: {took:?}");
        }
        assert_eq!(client.fetches().failed, 0, "{mode:?}: {errors:?}");
        assert!(client.fetches().updated >= 5, "{mode:?}: {:?}", client.fetches());
        // A new flag arrives too, and the delta's document reaches the backup.
        let name = format!("new-{mode:?}").to_lowercase();
        server.expect(
            "POST",
            "/api/admin/projects/default/features",
            Some(json!({"name": name})),
        )?;
        within(Duration::from_secs(5), || client.flag_names().contains(&name))?;
        let backup: Value = serde_json::from_slice(&std::fs::read(&backup)?)?;
        assert!(
            backup["features"]
                .as_array()
                .is_some_and(|features| features.iter().any(|feature| feature["name"] == name.as_str())),
            "{mode:?}"
        );
    }
    Ok(())
}

#[test]
fn a_client_starts_from_its_backup_while_the_server_is_down_and_catches_up_when_it_returns() -> TestResult {
    let mut server = Server::start()?;
    server.demo_flags()?;
    {
        let client = server.client(Mode::Polling).build()?;
        client.wait_until_ready(Duration::from_secs(10))?;
    }
    server.stop();
    server
        .switch("switched-off", true)
        .err()
        .ok_or("the server is still up")?;

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let client = server
        .client(Mode::Auto)
        .on_event(move |event| {
            if let Ok(mut seen) = seen.lock() {
                seen.push(match event {
                    Event::Ready(source) => format!("ready {source:?}"),
                    Event::Updated(source) => format!("updated {source:?}"),
                    Event::Error(_) => "error".to_owned(),
                    Event::Impression(_) => "impression".to_owned(),
                });
            }
        })
        .build()?;
    // Ready at once, from the backup, and answering from it.
    assert!(client.is_ready());
    assert!(client.is_enabled("everyone", &Context::default()));
    assert!(!client.is_enabled("switched-off", &Context::default()));
    within(Duration::from_secs(5), || client.fetches().failed >= 1)?;
    assert!(
        matches!(client.last_error(), Some(Error::Transport(_))),
        "{:?}",
        client.last_error()
    );

    // The server returns with a change made meanwhile.
    server.restart()?;
    server.switch("switched-off", true)?;
    within(Duration::from_secs(20), || {
        client.is_enabled("switched-off", &Context::default())
    })?;
    let events = events.lock().map_err(|error| error.to_string())?.clone();
    assert_eq!(
        events.first().map(String::as_str),
        Some("ready Backup"),
        "{events:?}"
    );
    assert!(events.contains(&"error".to_owned()), "{events:?}");
    assert!(events.contains(&"updated Server".to_owned()), "{events:?}");
    assert_eq!(Source::Server, Source::Server);
    Ok(())
}

#[test]
fn usage_arrives_in_the_servers_views() -> TestResult {
    let server = Server::start()?;
    server.demo_flags()?;
    let client = server
        .client(Mode::Polling)
        .app_name("flag-client-usage")
        .instance_id("instance-1")
        .metrics_interval(Some(Duration::from_millis(300)))
        .build()?;
    client.wait_until_ready(Duration::from_secs(10))?;
    for _ in 0..5 {
        assert!(client.is_enabled("everyone", &Context::default()));
        assert!(!client.is_enabled("switched-off", &Context::default()));
        client.variant("pro-only", &pro());
        client.is_enabled("no-such-flag", &Context::default());
    }
    client.flush_metrics()?;
    // The server writes usage every 5 seconds.
    let mut usage = Value::Null;
    within(Duration::from_secs(15), || {
        usage = server
            .expect("GET", "/api/admin/client-metrics/features/everyone", None)
            .unwrap_or(Value::Null);
        usage["lastHourUsage"]
            .as_array()
            .is_some_and(|rows| !rows.is_empty())
    })?;
    let yes: i64 = usage["lastHourUsage"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|row| row["yes"].as_i64()).sum())
        .unwrap_or_default();
    assert_eq!(yes, 5, "{usage}");
    assert_eq!(usage["seenApplications"], json!(["flag-client-usage"]));
    let raw = server.expect(
        "GET",
        "/api/admin/client-metrics/features/pro-only/raw?hoursBack=1",
        None,
    )?;
    let gold: i64 = raw["data"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter_map(|row| row["variants"]["gold"].as_i64())
                .sum()
        })
        .unwrap_or_default();
    assert_eq!(gold, 5, "{raw}");
    let application = server.expect("GET", "/api/admin/metrics/applications/flag-client-usage", None)?;
    assert_eq!(
        application["instances"][0]["instanceId"], "instance-1",
        "{application}"
    );
    assert!(
        application["instances"][0]["sdkVersion"]
            .as_str()
            .is_some_and(|version| version.starts_with("flag-client:")),
        "{application}"
    );
    let unknown = server.expect("GET", "/api/admin/metrics/unknown-flags", None)?;
    assert_eq!(unknown["unknownFlags"][0]["name"], "no-such-flag", "{unknown}");
    Ok(())
}

#[test]
fn a_bad_token_is_a_clear_error_without_a_busy_loop() -> TestResult {
    let server = Server::start()?;
    for mode in [Mode::Polling, Mode::Auto, Mode::Delta] {
        let client = Client::builder(format!("{}/api", server.base), "*:development.not-a-token")
            .mode(mode)
            .refresh_interval(Duration::from_millis(10))
            .metrics_interval(None)
            .backup_path(server.directory.path().join("bad.json"))
            .build()?;
        let started = Instant::now();
        assert_eq!(
            client.wait_until_ready(Duration::from_secs(10)),
            Err(Error::Unauthorized { status: 401 }),
            "{mode:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{mode:?}: {:?}",
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(client.fetches().failed, 1, "{mode:?}: fetching stopped");
        assert!(!client.is_enabled("anything", &Context::default()));
    }
    // An admin token is refused by the client API with 403: the same clear stop.
    let client = Client::builder(format!("{}/api", server.base), ADMIN)
        .mode(Mode::Polling)
        .metrics_interval(None)
        .backup_path(server.directory.path().join("admin.json"))
        .build()?;
    assert_eq!(
        client.wait_until_ready(Duration::from_secs(10)),
        Err(Error::Unauthorized { status: 403 })
    );
    // A URL that is no URL is refused by the builder.
    assert!(matches!(
        Client::builder("localhost:4242", BACKEND).build(),
        Err(Error::Config(_))
    ));
    Ok(())
}

#[test]
fn the_evaluate_report_matches_the_playground_for_the_demo_flags() -> TestResult {
    let server = Server::start()?;
    // The demo flags the README's quick start loads.
    let demo: Value = serde_json::from_str(include_str!("../../../examples/data/flags.json"))?;
    flag_admin::app::seeding::import(
        &server.store,
        "default",
        "development",
        &serde_json::from_value(demo)?,
    )?;
    let client = server.client(Mode::Polling).build()?;
    client.wait_until_ready(Duration::from_secs(10))?;
    let contexts = json!({"contexts": [
        {"context": {"appName": "web", "userId": "2", "properties": {"plan": "pro", "region": "eu-west"}}},
        {"context": {"appName": "web", "userId": "17", "properties": {"plan": "free"}}},
        {"context": {"appName": "api", "userId": "1019", "sessionId": "s", "remoteAddress": "10.1.2.3", "properties": {"region": "us-east", "age": "42"}}},
        {"context": {"appName": "web"}},
    ]});
    let report = flag_client::report::evaluate(&client, &contexts)?;
    let flags = report["flags"].as_array().ok_or("no flags")?;
    assert_eq!(flags.len(), 2, "{report}");
    for (index, entry) in contexts["contexts"]
        .as_array()
        .ok_or("no contexts")?
        .iter()
        .enumerate()
    {
        let played = server.expect(
            "POST",
            "/api/admin/playground",
            Some(json!({"environment": "development", "context": entry["context"]})),
        )?;
        let mut compared = 0;
        for feature in played["features"].as_array().ok_or("no features")? {
            let name = feature["name"].as_str().ok_or("no name")?;
            let answer = &report["results"][name][index.to_string()];
            assert_eq!(
                answer["enabled"], feature["isEnabled"],
                "{name} for context {index}: {answer}"
            );
            assert_eq!(
                answer["variant"]["name"], feature["variant"]["name"],
                "{name} for context {index}"
            );
            assert_eq!(
                answer["variant"]["enabled"], feature["variant"]["enabled"],
                "{name} for context {index}"
            );
            assert_eq!(
                answer["variant"].get("payload"),
                feature["variant"].get("payload"),
                "{name} for context {index}"
            );
            compared += 1;
        }
        assert_eq!(compared, flags.len());
    }
    Ok(())
}

#[test]
fn impressions_are_reported_for_flags_that_ask_for_them() -> TestResult {
    let server = Server::start()?;
    server.demo_flags()?;
    server.expect(
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": "watched", "impressionData": true})),
    )?;
    let impressions = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&impressions);
    let client = server
        .client(Mode::Polling)
        .on_event(move |event| {
            if let (Event::Impression(impression), Ok(mut seen)) = (event, seen.lock()) {
                seen.push((
                    impression.feature_name.clone(),
                    impression.event_type,
                    impression.enabled,
                    impression.variant.clone(),
                    impression.context.user_id.clone(),
                ));
            }
        })
        .build()?;
    client.wait_until_ready(Duration::from_secs(10))?;
    client.is_enabled("watched", &pro());
    client.variant("watched", &pro());
    client.is_enabled("everyone", &pro());
    let seen = impressions.lock().map_err(|error| error.to_string())?.clone();
    assert_eq!(
        seen,
        [
            (
                "watched".to_owned(),
                "isEnabled",
                false,
                None,
                Some("7".to_owned())
            ),
            (
                "watched".to_owned(),
                "getVariant",
                false,
                Some("disabled".to_owned()),
                Some("7".to_owned())
            ),
        ]
    );
    Ok(())
}

#[test]
fn contexts_are_completed_as_unleashs_sdks_complete_them() -> TestResult {
    let server = Server::start()?;
    let base = "/api/admin/projects/default/features";
    let hostname = this_host()?;
    let flags = [
        (
            "for-this-app",
            json!({"name": "default", "constraints": [{"contextName": "appName", "operator": "IN", "values": ["flag-client-test"]}]}),
        ),
        (
            "in-default-environment",
            json!({"name": "default", "constraints": [{"contextName": "environment", "operator": "IN", "values": ["default"]}]}),
        ),
        (
            "since-2000",
            json!({"name": "default", "constraints": [{"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2000-01-01T00:00:00.000Z"}]}),
        ),
        (
            "half-at-random",
            json!({"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "random", "groupId": "half"}}),
        ),
        (
            "on-this-host",
            json!({"name": "applicationHostname", "parameters": {"hostNames": hostname}}),
        ),
    ];
    server
        .expect(
            "POST",
            "/api/admin/strategies",
            Some(
                json!({"name": "applicationHostname", "parameters": [{"name": "hostNames", "type": "list"}]}),
            ),
        )
        .ok();
    for (name, strategy) in &flags {
        server.expect("POST", base, Some(json!({"name": name})))?;
        server.expect(
            "POST",
            &format!("{base}/{name}/environments/development/strategies"),
            Some(strategy.clone()),
        )?;
        server.switch(name, true)?;
    }
    let client = server.client(Mode::Polling).build()?;
    client.wait_until_ready(Duration::from_secs(10))?;
    let bare = Context::default();
    for name in [
        "for-this-app",
        "in-default-environment",
        "since-2000",
        "on-this-host",
    ] {
        assert!(client.is_enabled(name, &bare), "{name} with an empty context");
        assert!(
            client.is_enabled(name, &client.context()),
            "{name} with the client's context"
        );
    }
    // A context's own values win.
    let mut other = client.context();
    other.app_name = Some("another-app".into());
    assert!(!client.is_enabled("for-this-app", &other));
    // Random rollouts are random, with a fresh context or the same one again.
    let fresh = (0..1000)
        .filter(|_| client.is_enabled("half-at-random", &Context::default()))
        .count();
    assert!((350..650).contains(&fresh), "{fresh} of 1000");
    let reused = client.context();
    let again = (0..1000)
        .filter(|_| client.is_enabled("half-at-random", &reused))
        .count();
    assert!((350..650).contains(&again), "{again} of 1000");
    Ok(())
}

#[test]
fn reads_are_lock_free_and_the_client_is_send_and_sync() {
    fn send_sync<T: Send + Sync + Clone>() {}
    send_sync::<Client>();
}

#[test]
fn each_client_answers_from_its_own_flags_on_a_thread_that_reads_many_and_inside_a_hook() -> TestResult {
    // A thread keeps a cache of the flags of up to 8 live clients and reads others plainly: 12
    // clients, read in turns, each answer from their own flags, and so do 8 new ones after 8 of
    // them are dropped. A read made inside an impression hook, while the outer read holds the
    // thread's caches, reads the flags plainly.
    let directory = tempfile::tempdir()?;
    let offline =
        |index: usize, document: Value| -> Result<flag_client::Builder, Box<dyn std::error::Error>> {
            Ok(Client::builder("http://127.0.0.1:9/api", BACKEND)
                .app_name("cache-test")
                .bootstrap(serde_json::from_value(document)?)
                .backup_path(directory.path().join(format!("backup-{index}.json")))
                .refresh_interval(Duration::from_secs(3600))
                .metrics_interval(None))
        };
    let clients = (0..12)
        .map(|index| {
            offline(
                index,
                json!({"version": 2, "features": [{"name": "f", "enabled": index % 3 == 0,
                    "strategies": [{"name": "default"}]}]}),
            )?
            .build()
            .map_err(Into::into)
        })
        .collect::<Result<Vec<Client>, Box<dyn std::error::Error>>>()?;
    let context = Context::default();
    for round in 0..3 {
        for (index, client) in clients.iter().enumerate() {
            assert_eq!(
                client.is_enabled("f", &context),
                index % 3 == 0,
                "client {index}, round {round}"
            );
        }
    }

    let mut clients = clients;
    clients.truncate(4);
    for index in 12..20 {
        clients.push(
            offline(
                index,
                json!({"version": 2, "features": [{"name": "f", "enabled": index % 2 == 0,
                    "strategies": [{"name": "default"}]}]}),
            )?
            .build()?,
        );
    }
    for round in 0..2 {
        for (position, client) in clients.iter().enumerate() {
            let index = if position < 4 { position } else { position + 8 };
            let expected = if index < 12 {
                index % 3 == 0
            } else {
                index % 2 == 0
            };
            assert_eq!(
                client.is_enabled("f", &context),
                expected,
                "client {index}, round {round}"
            );
        }
    }

    let itself: Arc<std::sync::OnceLock<Client>> = Arc::default();
    let inner = Arc::clone(&itself);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    let client = offline(
        99,
        json!({"version": 2, "features": [
            {"name": "watched", "enabled": true, "impressionData": true, "strategies": [{"name": "default"}]},
            {"name": "plain", "enabled": true, "strategies": [{"name": "default"}]}]}),
    )?
    .on_event(move |event| {
        if let (Event::Impression(_), Some(client), Ok(mut record)) = (event, inner.get(), record.lock()) {
            record.push(client.is_enabled("plain", &Context::default()));
        }
    })
    .build()?;
    itself
        .set(client.clone())
        .map_err(|_| "the client was set twice")?;
    assert!(client.is_enabled("watched", &context));
    assert_eq!(*seen.lock().map_err(|error| error.to_string())?, [true]);
    Ok(())
}

#[test]
fn issue_context_json_keeps_top_level_custom_fields_as_properties() -> TestResult {
    // `{"userId":"u","tenant":"acme"}` kept `userId` and lost `tenant` when read as a `Context`;
    // Unleash's SDKs and the server's playground read `tenant` as a property.
    let server = Server::start()?;
    let base = "/api/admin/projects/default/features";
    server.expect("POST", base, Some(json!({"name": "for-acme"})))?;
    server.expect(
        "POST",
        &format!("{base}/for-acme/environments/development/strategies"),
        Some(json!({"name": "default", "constraints": [{"contextName": "tenant", "operator": "IN", "values": ["acme"]}]})),
    )?;
    server.switch("for-acme", true)?;
    let client = server.client(Mode::Polling).build()?;
    client.wait_until_ready(Duration::from_secs(10))?;
    for (mut context, expected) in [
        (json!({"userId": "u", "tenant": "acme"}), true),
        (json!({"userId": "u", "properties": {"tenant": "acme"}}), true),
        (
            json!({"userId": "u", "tenant": "acme", "properties": {"tenant": "other"}}),
            true,
        ),
        (
            json!({"userId": "u", "tenant": "other", "properties": {"tenant": "acme"}}),
            false,
        ),
        (json!({"userId": "u"}), false),
    ] {
        // The playground needs an `appName`; the client would fill in this one.
        context["appName"] = json!("flag-client-test");
        let read: Context = serde_json::from_value(context.clone())?;
        assert_eq!(read.user_id.as_deref(), Some("u"), "{context}");
        assert_eq!(client.is_enabled("for-acme", &read), expected, "{context}");
        let played = server.expect(
            "POST",
            "/api/admin/playground",
            Some(json!({"environment": "development", "context": context})),
        )?;
        assert_eq!(
            played["features"][0]["isEnabled"], expected,
            "the playground agrees for {context}: {played}"
        );
    }
    Ok(())
}

#[test]
fn issue_explain_decides_application_hostname_as_is_enabled_does() -> TestResult {
    // `explain` said `unknown` and off for an `applicationHostname` flag `is_enabled` answered
    // true for: the playground cannot know the host, the client does.
    let server = Server::start()?;
    let base = "/api/admin/projects/default/features";
    let host = this_host()?;
    server
        .expect(
            "POST",
            "/api/admin/strategies",
            Some(
                json!({"name": "applicationHostname", "parameters": [{"name": "hostNames", "type": "list"}]}),
            ),
        )
        .ok();
    let hostname = |names: &str| json!({"name": "applicationHostname", "parameters": {"hostNames": names}});
    let flags = [
        (
            "on-this-host",
            vec![json!({"name": "applicationHostname",
                "parameters": {"hostNames": format!("elsewhere.invalid, {}", host.to_uppercase())},
                "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}]})],
            true,
        ),
        ("on-another-host", vec![hostname("elsewhere.invalid")], false),
        (
            "this-host-but-not-this-app",
            vec![
                json!({"name": "applicationHostname", "parameters": {"hostNames": host},
                "constraints": [{"contextName": "appName", "operator": "IN", "values": ["another-app"]}]}),
            ],
            false,
        ),
        (
            "another-host-then-everyone",
            vec![hostname("elsewhere.invalid"), json!({"name": "default"})],
            true,
        ),
    ];
    for (name, strategies, _) in &flags {
        server.expect("POST", base, Some(json!({"name": name})))?;
        for strategy in strategies {
            server.expect(
                "POST",
                &format!("{base}/{name}/environments/development/strategies"),
                Some(strategy.clone()),
            )?;
        }
        server.switch(name, true)?;
    }
    let client = server.client(Mode::Polling).build()?;
    client.wait_until_ready(Duration::from_secs(10))?;
    let context = client.context();
    for (name, strategies, expected) in &flags {
        assert_eq!(client.is_enabled(name, &context), *expected, "{name}");
        let explained = client.explain(name, &context).ok_or("no explanation")?;
        assert_eq!(explained["isEnabled"], *expected, "{name}: {explained}");
        assert_eq!(explained["result"], *expected, "{name}: {explained}");
        assert_eq!(
            explained["variant"]["name"],
            client.variant(name, &context).name.as_str(),
            "{name}: {explained}"
        );
        let explained_strategies = explained["strategies"].as_array().ok_or("no strategies")?;
        assert_eq!(
            explained_strategies.len(),
            strategies.len(),
            "{name}: {explained}"
        );
        for (strategy, defined) in explained_strategies.iter().zip(strategies) {
            assert_eq!(strategy["name"], defined["name"], "{name}: {explained}");
            assert_eq!(
                strategy["result"]["evaluationStatus"], "complete",
                "{name}: {explained}"
            );
        }
    }
    let explained = client.explain("on-this-host", &context).ok_or("no explanation")?;
    assert_eq!(explained["variant"]["name"], "blue", "{explained}");
    assert_eq!(
        explained["strategies"][0]["result"]["enabled"], true,
        "{explained}"
    );
    Ok(())
}

#[test]
fn issue_a_refused_token_stops_registration_and_usage_as_well_as_fetching() -> TestResult {
    // After a 401 the fetching stopped, but the usage thread went on calling
    // `/api/client/register` at every interval.
    let server = Server::start()?;
    let errors = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&errors);
    let client = Client::builder(format!("{}/api", server.base), "*:development.not-a-token")
        .mode(Mode::Polling)
        .metrics_interval(Some(Duration::from_millis(10)))
        .backup_path(server.directory.path().join("refused.json"))
        .on_event(move |event| {
            if let (Event::Error(error), Ok(mut seen)) = (event, seen.lock()) {
                seen.push(error.clone());
            }
        })
        .build()?;
    assert_eq!(
        client.wait_until_ready(Duration::from_secs(10)),
        Err(Error::Unauthorized { status: 401 })
    );
    let before = errors.lock().map_err(|error| error.to_string())?.len();
    // Fifty usage intervals: a usage thread that went on would register again at each.
    std::thread::sleep(Duration::from_millis(500));
    let errors = errors.lock().map_err(|error| error.to_string())?.clone();
    // After the refusal, at most the fetch's own error and one registration already under way.
    assert!(errors.len() <= before + 2, "{before} then {errors:?}");
    assert!(
        errors
            .iter()
            .all(|error| *error == Error::Unauthorized { status: 401 }),
        "{errors:?}"
    );
    assert_eq!(client.fetches().failed, 1);
    // Usage is not sent either: the refusal is the answer.
    client.is_enabled("anything", &Context::default());
    assert_eq!(client.flush_metrics(), Err(Error::Unauthorized { status: 401 }));
    Ok(())
}

#[test]
fn issue_waiting_for_readiness_returns_after_the_listener_heard_ready() -> TestResult {
    // `wait_until_ready` could return before the `Ready` event reached the listener. A slow
    // listener makes the gap wide: it must have recorded `Ready` whenever the wait returns.
    let server = Server::start()?;
    server.demo_flags()?;
    for way in ["wait_until_ready", "ready", "is_ready"] {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&heard);
        let client = server
            .client(Mode::Polling)
            .backup_path(server.directory.path().join(format!("{way}.json")))
            .on_event(move |event| {
                if let Event::Ready(source) = event {
                    std::thread::sleep(Duration::from_millis(100));
                    if let Ok(mut seen) = seen.lock() {
                        seen.push(*source);
                    }
                }
            })
            .build()?;
        match way {
            "wait_until_ready" => client.wait_until_ready(Duration::from_secs(10))?,
            "ready" => actix_web::rt::System::new().block_on(client.ready())?,
            _ => {
                within(Duration::from_secs(10), || client.is_ready())?;
            }
        }
        assert_eq!(
            *heard.lock().map_err(|error| error.to_string())?,
            [Source::Server],
            "{way}"
        );
    }
    Ok(())
}
