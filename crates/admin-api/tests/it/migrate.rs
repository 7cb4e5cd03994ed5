//! `halyard migrate`, between real processes on the backend under test: a Halyard server as the
//! source (it speaks Unleash's admin API), moved whole into an empty database, whose server then
//! answers SDKs byte for byte as the source did; the same move again writing nothing; a database
//! holding data refused without `--merge`. A loopback proxy in front of the source answers the
//! token list as Unleash 8.2 does (full secrets), so the secrets' verifiers are carried and each
//! secret works on the target with its scope, and leaves out of its lists what Unleash's
//! open-source server leaves out (projects besides `default`), which the migration completes; the
//! same proxy plays a source that fails in each way, and each failure is a clear message with
//! nothing written and no secret shown.

use std::io::{BufRead as _, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use flag_store::scratch::Scratch;
use serde_json::{Value, json};

use crate::common::process::{Running, call, expect, server_command, start_server_with};

type Outcome = Result<(), Box<dyn std::error::Error>>;

const ADMIN: &str = "*:*.migrate-test-admin-secret";
const BACKEND: &str = "*:production.migrate-test-backend-secret";
const FRONTEND: &str = "*:production.migrate-test-frontend-secret";

/// The tokens the Unleash-like token list shows in full: made on the source through its API, so
/// the source knows them, with their secrets as the answer to their creation gave them.
struct Made {
    secret: String,
    token_type: &'static str,
    environment: &'static str,
    projects: Vec<&'static str>,
}

/// A source server holding one of everything a migration carries.
struct Source {
    _scratch: Scratch,
    _running: Running,
    base: String,
    made: Vec<Made>,
}

impl Source {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let scratch = Scratch::new()?;
        // Warnings only: nothing reads the source's output, and a full pipe would stop it.
        let (child, port) = start_server_with(
            &scratch,
            &["--log-format", "json", "--log-level", "warn"],
            &[
                ("INIT_ADMIN_API_TOKENS", ADMIN),
                ("INIT_BACKEND_API_TOKENS", BACKEND),
                ("INIT_FRONTEND_API_TOKENS", FRONTEND),
            ],
        )?;
        let mut source = Self {
            _scratch: scratch,
            _running: Running(child),
            base: format!("http://127.0.0.1:{port}"),
            made: Vec::new(),
        };
        source.populate()?;
        Ok(source)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn post(&self, path: &str, body: Value, status: u16) -> Result<Value, Box<dyn std::error::Error>> {
        expect("POST", &self.url(path), ADMIN, Some(body), status)
    }

    fn populate(&mut self) -> Outcome {
        self.post(
            "/api/admin/projects",
            json!({"id": "payments", "name": "Payments", "description": "Money in and out"}),
            201,
        )?;
        expect(
            "DELETE",
            &self.url("/api/admin/projects/payments/environments/development"),
            ADMIN,
            None,
            200,
        )?;
        self.post(
            "/api/admin/strategies",
            json!({"name": "tenant", "description": "By tenant", "parameters": [
                {"name": "tenants", "type": "list", "description": "Tenants", "required": true}]}),
            201,
        )?;
        self.post(
            "/api/admin/context",
            json!({"name": "tenant", "description": "The customer", "stickiness": true, "sortOrder": 5,
                   "legalValues": [{"value": "acme", "description": "Acme"}, {"value": "globex"}]}),
            201,
        )?;
        self.post(
            "/api/admin/tag-types",
            json!({"name": "team", "description": "Owning team", "icon": "people"}),
            201,
        )?;
        let beta = self.post(
            "/api/admin/segments",
            json!({"name": "beta-users", "description": "Beta", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["1", "2", "3"]}]}),
            201,
        )?;
        let acme = self.post(
            "/api/admin/segments",
            json!({"name": "acme", "project": "payments", "constraints": [
                {"contextName": "tenant", "operator": "IN", "values": ["acme"]}]}),
            201,
        )?;

        let flag = "/api/admin/projects/default/features";
        self.post(
            flag,
            json!({"name": "checkout", "type": "experiment", "description": "New checkout", "impressionData": true}),
            201,
        )?;
        let strategies = "/api/admin/projects/default/features/checkout/environments/production/strategies";
        self.post(
            strategies,
            json!({"name": "flexibleRollout", "title": "Half of beta",
                   "parameters": {"rollout": "50", "stickiness": "userId", "groupId": "checkout"},
                   "constraints": [
                       {"contextName": "tenant", "operator": "IN", "values": ["acme"], "caseInsensitive": true},
                       {"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2026-01-01T00:00:00.000Z"},
                       {"contextName": "appName", "operator": "STR_STARTS_WITH", "values": ["web"], "inverted": true}],
                   "segments": [beta["id"]],
                   "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
                                 "payload": {"type": "string", "value": "b"}}]}),
            200,
        )?;
        self.post(strategies, json!({"name": "default", "disabled": true}), 200)?;
        self.post(
            strategies,
            json!({"name": "tenant", "parameters": {"tenants": "acme,globex"}}),
            200,
        )?;
        self.post(
            "/api/admin/projects/default/features/checkout/environments/production/on",
            json!({}),
            200,
        )?;
        self.post(
            "/api/admin/features/checkout/tags",
            json!({"type": "team", "value": "web"}),
            201,
        )?;
        expect(
            "PATCH",
            &self.url("/api/admin/projects/default/features/checkout"),
            ADMIN,
            Some(json!([{"op": "replace", "path": "/stale", "value": true}])),
            200,
        )?;

        self.post(flag, json!({"name": "checkout-banner"}), 201)?;
        expect(
            "PUT",
            &self.url("/api/admin/projects/default/features/checkout-banner/variants-batch"),
            ADMIN,
            Some(json!({"environments": ["production"], "variants": [
                {"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default"},
                {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default",
                 "payload": {"type": "json", "value": "{\"x\":1}"},
                 "overrides": [{"contextName": "userId", "values": ["7"]}]}]})),
            200,
        )?;
        self.post(
            "/api/admin/projects/default/features/checkout-banner/dependencies",
            json!({"feature": "checkout", "enabled": true, "variants": ["blue"]}),
            200,
        )?;
        self.post(
            "/api/admin/projects/default/features/checkout-banner/environments/production/strategies",
            json!({"name": "default"}),
            200,
        )?;
        self.post(
            "/api/admin/projects/default/features/checkout-banner/environments/production/on",
            json!({}),
            200,
        )?;

        self.post(
            "/api/admin/projects/payments/features",
            json!({"name": "refunds", "type": "kill-switch"}),
            201,
        )?;
        self.post(
            "/api/admin/projects/payments/features/refunds/environments/production/strategies",
            json!({"name": "default", "segments": [acme["id"]]}),
            200,
        )?;
        self.post(
            "/api/admin/projects/payments/features/refunds/environments/production/on",
            json!({}),
            200,
        )?;

        self.post(flag, json!({"name": "old-thing", "description": "Gone"}), 201)?;
        self.post(
            "/api/admin/projects/default/features/old-thing/environments/production/strategies",
            json!({"name": "remoteAddress", "parameters": {"IPs": "10.0.0.1"}, "title": "One address"}),
            200,
        )?;
        expect(
            "DELETE",
            &self.url("/api/admin/projects/default/features/old-thing"),
            ADMIN,
            None,
            202,
        )?;

        self.post(
            "/api/admin/addons",
            json!({"provider": "webhook", "description": "Audit hook", "enabled": true,
                   "parameters": {"url": "http://93.184.216.34/hook", "authorization": "Bearer hook-secret"}, "events": ["feature-created"]}),
            201,
        )?;
        self.post(
            "/api/admin/user-admin",
            json!({"email": "Dana@Example.com", "name": "Dana", "rootRole": 2, "sendEmail": false}),
            201,
        )?;

        for (token_type, environment, projects) in [
            ("backend", "production", vec!["default"]),
            ("frontend", "production", vec!["payments"]),
        ] {
            let name = format!("migrated-{token_type}");
            let mut body = json!({"tokenName": name, "type": token_type, "projects": projects});
            if environment != "*" {
                body["environment"] = json!(environment);
            }
            let answer = self.post("/api/admin/api-tokens", body, 201)?;
            let secret = answer["secret"]
                .as_str()
                .ok_or("no secret in the answer")?
                .to_owned();
            self.made.push(Made {
                secret,
                token_type,
                environment,
                projects,
            });
        }
        // Admin tokens are made only at start here, as in Unleash 8.
        self.made.push(Made {
            secret: ADMIN.to_owned(),
            token_type: "admin",
            environment: "*",
            projects: vec!["*"],
        });
        Ok(())
    }
}

/// `halyard migrate` on `target`'s database with `args` after `--from` and `--token`.
fn migrate(target: &Scratch, from: &str, token: &str, args: &[&str]) -> std::io::Result<Output> {
    server_command(target)
        .args(["migrate", "--from", from, "--token", token])
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .output()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// What the target's database holds of its users' own.
fn holds_nothing(target: &Scratch) -> Result<bool, Box<dyn std::error::Error>> {
    let store = target.open()?;
    let held = flag_store::queries::migrate::read(&mut *store.connection()?)?;
    Ok(held.flags.is_empty() && held.users.is_empty() && held.tokens.is_empty() && held.segments.is_empty())
}

/// The target's server, with `tokens` made at its start.
fn serve(target: &Scratch, tokens: &[(&str, &str)]) -> Result<(Running, String), Box<dyn std::error::Error>> {
    let (child, port) = start_server_with(target, &["--log-format", "json"], tokens)?;
    Ok((Running(child), format!("http://127.0.0.1:{port}")))
}

fn get(base: &str, path: &str, token: &str) -> Result<Value, Box<dyn std::error::Error>> {
    expect("GET", &format!("{base}{path}"), token, None, 200)
}

/// The fields of each listed object a migration must carry.
fn pick(list: &Value, fields: &[&str]) -> Vec<Value> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| {
                    fields
                        .iter()
                        .map(|field| (*field, item[*field].clone()))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

const CONTEXTS: [&str; 6] = [
    "",
    "?userId=1&tenant=acme&appName=shop",
    "?userId=2&tenant=ACME&appName=web-shop",
    "?userId=7&tenant=globex",
    "?userId=3&tenant=acme&currentTime=2025-06-01T00:00:00Z",
    "?sessionId=s1&tenant=acme",
];

#[test]
fn a_halyard_installation_moves_whole_and_its_sdks_read_the_same_answers() -> Outcome {
    let source = Source::start()?;
    let target = Scratch::new()?;

    let dry = migrate(&target, &source.base, ADMIN, &["--dry-run"])?;
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(
        text(&dry).contains("Dry run: nothing was written."),
        "{}",
        text(&dry)
    );
    assert!(holds_nothing(&target)?, "a dry run wrote");

    let moved = migrate(&target, &source.base, ADMIN, &[])?;
    let report = text(&moved);
    assert!(moved.status.success(), "{report}");
    assert!(!report.contains(ADMIN), "the source's token shows in: {report}");
    let row = |kind: &str| {
        report.lines().find(|line| line.starts_with(kind)).map(|line| {
            line.split_whitespace()
                .filter_map(|word| word.parse::<usize>().ok())
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(row("flags"), Some(vec![4, 4, 0, 0]), "{report}");
    assert_eq!(row("segments"), Some(vec![2, 2, 0, 0]), "{report}");
    assert_eq!(row("projects"), Some(vec![2, 1, 0, 1]), "{report}");
    // A Halyard source keeps only verifiers of its tokens: each is named as not carried.
    assert!(
        report
            .contains("API token migrated-backend (client, production): the source does not show its secret"),
        "{report}"
    );
    assert!(report.contains("point your SDKs"), "{report}");

    // The same move again finds everything there and writes nothing.
    let again = migrate(&target, &source.base, ADMIN, &[])?;
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("Nothing to write"), "{}", text(&again));
    // After a change in the source, a database holding data is refused without --merge, and a
    // dry run says so; --merge writes the change.
    source.post(
        "/api/admin/projects/default/features",
        json!({"name": "late-flag"}),
        201,
    )?;
    let dry = migrate(
        &target,
        &source.base,
        ADMIN,
        &["--dry-run", "--events-since", "2099-01-01"],
    )?;
    assert!(
        text(&dry).contains("Without --merge this migration is refused"),
        "{}",
        text(&dry)
    );
    let events_row = text(&dry)
        .lines()
        .find(|line| line.starts_with("events"))
        .map(str::to_owned);
    assert_eq!(
        events_row
            .as_deref()
            .and_then(|row| row.split_whitespace().nth(1)),
        Some("0"),
        "--events-since 2099-01-01 reads no event"
    );
    let refused = migrate(&target, &source.base, ADMIN, &[])?;
    assert!(!refused.status.success());
    assert!(text(&refused).contains("already holds"), "{}", text(&refused));
    let merged = migrate(&target, &source.base, ADMIN, &["--merge"])?;
    assert!(merged.status.success(), "{}", text(&merged));

    // Where the target's production takes changes only through change requests, a merge that
    // would change it is refused whole.
    {
        let store = target.open()?;
        flag_store::queries::change_requests::set_rule(
            &mut *store.connection()?,
            "default",
            "production",
            Some(1),
            &flag_store::models::Actor::system(),
            chrono::Utc::now().naive_utc(),
        )?;
    }
    source.post(
        "/api/admin/projects/default/features",
        json!({"name": "protected-late-flag"}),
        201,
    )?;
    let protected = migrate(&target, &source.base, ADMIN, &["--merge"])?;
    assert!(!protected.status.success(), "{}", text(&protected));
    assert!(
        text(&protected).contains("change request"),
        "{}",
        text(&protected)
    );
    {
        let store = target.open()?;
        let held = flag_store::queries::migrate::read(&mut *store.connection()?)?;
        assert!(!held.flags.iter().any(|flag| flag.name == "protected-late-flag"));
        flag_store::queries::change_requests::set_rule(
            &mut *store.connection()?,
            "default",
            "production",
            None,
            &flag_store::models::Actor::system(),
            chrono::Utc::now().naive_utc(),
        )?;
    }
    let merged = migrate(&target, &source.base, ADMIN, &["--merge"])?;
    assert!(merged.status.success(), "{}", text(&merged));

    // The source's start tokens, whose secrets it does not show, are made at the target's start
    // too, so that both are read alike.
    let (_running, base) = serve(
        &target,
        &[
            ("INIT_ADMIN_API_TOKENS", ADMIN),
            ("INIT_BACKEND_API_TOKENS", BACKEND),
            ("INIT_FRONTEND_API_TOKENS", FRONTEND),
        ],
    )?;
    for context in CONTEXTS {
        for (path, token) in [
            (format!("/api/client/features{context}"), BACKEND),
            (format!("/api/frontend{context}"), FRONTEND),
        ] {
            let mine = get(&source.base, &path, token)?;
            let theirs = get(&base, &path, token)?;
            for part in ["features", "segments", "toggles"] {
                assert_eq!(
                    serde_json::to_string(&mine[part])?,
                    serde_json::to_string(&theirs[part])?,
                    "{part} of {path}"
                );
            }
        }
    }
    let views: [(&str, &str, &[&str]); 11] = [
        (
            "/api/admin/environments",
            "environments",
            &["name", "type", "enabled", "sortOrder"],
        ),
        (
            "/api/admin/environments/project/payments",
            "environments",
            &["name", "visible"],
        ),
        (
            "/api/admin/projects",
            "projects",
            &["id", "name", "description", "featureCount", "createdAt"],
        ),
        (
            "/api/admin/segments",
            "segments",
            &[
                "id",
                "name",
                "description",
                "constraints",
                "project",
                "createdBy",
                "createdAt",
            ],
        ),
        (
            "/api/admin/strategies",
            "strategies",
            &["name", "description", "editable", "deprecated", "parameters"],
        ),
        (
            "/api/admin/tag-types",
            "tagTypes",
            &["name", "description", "icon", "color"],
        ),
        ("/api/admin/tags", "tags", &["type", "value"]),
        (
            "/api/admin/user-admin",
            "users",
            &["id", "name", "email", "username", "rootRole", "createdAt"],
        ),
        (
            "/api/admin/addons",
            "addons",
            &["id", "provider", "description", "parameters", "events"],
        ),
        (
            "/api/admin/search/features?archived=IS:true",
            "features",
            &[
                "name",
                "project",
                "type",
                "description",
                "archivedAt",
                "createdAt",
                "createdBy",
            ],
        ),
        (
            "/api/admin/search/features?limit=100",
            "features",
            &[
                "name",
                "project",
                "type",
                "description",
                "stale",
                "impressionData",
                "createdAt",
                "dependencyType",
                "tags",
                "segments",
            ],
        ),
    ];
    for (path, list, fields) in views {
        let mine = get(&source.base, path, ADMIN)?;
        let theirs = get(&base, path, ADMIN)?;
        assert_eq!(pick(&mine[list], fields), pick(&theirs[list], fields), "{path}");
    }
    let mine = get(&source.base, "/api/admin/context", ADMIN)?;
    let theirs = get(&base, "/api/admin/context", ADMIN)?;
    let fields = [
        "name",
        "description",
        "stickiness",
        "sortOrder",
        "legalValues",
        "createdAt",
    ];
    assert_eq!(pick(&mine, &fields), pick(&theirs, &fields));
    // An archived flag's strategies came across too.
    let path = "/api/admin/projects/default/features/old-thing/environments/production/strategies";
    let fields = ["id", "name", "title", "parameters", "constraints", "segments"];
    assert_eq!(
        pick(&get(&source.base, path, ADMIN)?, &fields),
        pick(&get(&base, path, ADMIN)?, &fields)
    );
    assert_eq!(get(&base, path, ADMIN)?.as_array().map(Vec::len), Some(1));
    for flag in ["checkout", "checkout-banner"] {
        let path = format!("/api/admin/projects/default/features/{flag}");
        let mine = get(&source.base, &path, ADMIN)?;
        let theirs = get(&base, &path, ADMIN)?;
        for part in ["environments", "dependencies", "createdAt", "stale"] {
            assert_eq!(mine[part], theirs[part], "{part} of {flag}");
        }
    }
    // A webhook whose secrets the source's API hides comes across off, and the report says so.
    let addons = get(&base, "/api/admin/addons", ADMIN)?;
    assert_eq!(addons["addons"][0]["enabled"], false);
    assert!(
        report.contains("integration webhook \"Audit hook\": the source's API hides its url, authorization"),
        "{report}"
    );
    // What is made after the move gets ids after the kept ones.
    let made = expect(
        "POST",
        &format!("{base}/api/admin/segments"),
        ADMIN,
        Some(json!({"name": "after-the-move", "constraints": []})),
        201,
    )?;
    assert_eq!(made["id"], 3);
    expect(
        "POST",
        &format!("{base}/api/admin/user-admin"),
        ADMIN,
        Some(json!({"email": "erin@example.com", "rootRole": 3, "sendEmail": false})),
        201,
    )?;
    // The history came across, and one event says what the migration wrote.
    let mine = get(&source.base, "/api/admin/search/events?limit=1000", ADMIN)?;
    let theirs = get(&base, "/api/admin/search/events?limit=1000", ADMIN)?;
    let events = |answer: &Value| {
        pick(
            &answer["events"],
            &["type", "createdAt", "createdBy", "featureName", "data", "preData"],
        )
    };
    let (mine, theirs) = (events(&mine), events(&theirs));
    // Newest first: what the target's start wrote, then, among the migrations' own events, the
    // source's.
    let migrated = theirs
        .iter()
        .position(|event| event["type"] == "features-imported")
        .ok_or("no features-imported event")?;
    // (Less the target's own: the change-request rule it took and dropped above.)
    let carried: Vec<&Value> = theirs[migrated..]
        .iter()
        .filter(|event| {
            event["type"] != "features-imported" && event["type"] != "change-request-configuration-updated"
        })
        .collect();
    assert_eq!(carried, mine.iter().collect::<Vec<_>>());
    Ok(())
}

/// What the proxy in front of the source does.
struct Proxy {
    port: u16,
    mode: Arc<AtomicU8>,
}

impl Proxy {
    /// The token list as Unleash 8.2 answers it, full secrets; everything else forwarded.
    const UNLEASH: u8 = 0;
    /// The segment list answers an HTML page.
    const GARBAGE: u8 = 1;
    /// Neither event search answers, as on a server without them.
    const MISSING: u8 = 2;
    /// The tag list never answers.
    const HANGING: u8 = 3;

    fn start(source: &Source) -> Result<Self, Box<dyn std::error::Error>> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let mode = Arc::new(AtomicU8::new(Self::UNLEASH));
        let shared = Arc::clone(&mode);
        let upstream = source.base.clone();
        let tokens: Value = source
            .made
            .iter()
            .map(|made| {
                // Unleash lists backend tokens as client tokens.
                let listed_type = if made.token_type == "backend" { "client" } else { made.token_type };
                let expires = (made.token_type == "backend").then_some("2099-01-01T00:00:00.000Z");
                json!({"secret": made.secret, "tokenName": format!("migrated-{}", made.token_type),
                       "type": listed_type, "environment": made.environment, "project": made.projects.join(","),
                       "projects": made.projects, "expiresAt": expires, "createdAt": "2026-03-04T05:06:07.000Z",
                       "seenAt": null, "alias": null})
            })
            .chain([json!({"secret": "sR4nd0mSelect0rXyZ12ab", "tokenName": "secure-one", "type": "client",
                           "environment": "production", "projects": ["*"], "createdAt": "2026-03-04T05:06:07.000Z",
                           "secure": true})])
            .collect();
        let tokens = json!({ "tokens": tokens }).to_string();
        std::thread::spawn(move || {
            for connection in listener.incoming().flatten() {
                let mode = Arc::clone(&shared);
                let upstream = upstream.clone();
                let tokens = tokens.clone();
                std::thread::spawn(move || {
                    let _ = Self::answer(connection, &mode, &upstream, &tokens);
                });
            }
        });
        Ok(Self { port, mode })
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    fn answer(
        mut connection: TcpStream,
        mode: &AtomicU8,
        upstream: &str,
        tokens: &str,
    ) -> std::io::Result<()> {
        let mut reader = std::io::BufReader::new(connection.try_clone()?);
        let mut request_line = String::new();
        reader.read_line(&mut request_line)?;
        let mut length = 0usize;
        let mut authorization = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line)?;
            if line.trim().is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            if lower.starts_with("authorization:") {
                authorization = line["authorization:".len()..].trim().to_owned();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let mut words = request_line.split_whitespace();
        let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let reply = |connection: &mut TcpStream, status: u16, body: &str| {
            write!(
                connection,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        };
        match (mode.load(Ordering::SeqCst), path) {
            (_, "/api/admin/api-tokens") if authorization == ADMIN => {
                return reply(&mut connection, 200, tokens);
            }
            (Self::GARBAGE, "/api/admin/segments") => {
                return reply(&mut connection, 200, "<html>maintenance</html>");
            }
            (Self::MISSING, path)
                if path.starts_with("/api/admin/search/events") || path == "/api/admin/events/search" =>
            {
                return reply(&mut connection, 404, "{}");
            }
            (Self::HANGING, "/api/admin/tags") => {
                std::thread::sleep(Duration::from_secs(30));
                return Ok(());
            }
            _ => {}
        }
        let (status, answer) = call(
            method,
            &format!("{upstream}{path}"),
            &authorization,
            (method == "POST").then(|| serde_json::from_slice(&body).unwrap_or(Value::Null)),
        )
        .map_err(|error| std::io::Error::other(error.to_string()))?;
        let mut answer = answer;
        if mode.load(Ordering::SeqCst) == Self::UNLEASH {
            Self::as_unleash_oss(path, &mut answer);
        }
        reply(&mut connection, status, &answer.to_string())
    }

    /// What Unleash's open-source server leaves out of its lists, or adds: only project `default`
    /// is listed whatever else holds flags; here a strategy type is missing whose strategies
    /// remain, and a Slack integration is listed.
    fn as_unleash_oss(path: &str, answer: &mut Value) {
        match path {
            "/api/admin/projects" => {
                if let Some(projects) = answer["projects"].as_array_mut() {
                    projects.retain(|project| project["id"] == "default");
                }
            }
            "/api/admin/strategies" => {
                if let Some(kinds) = answer["strategies"].as_array_mut() {
                    kinds.retain(|kind| kind["name"] != "tenant");
                }
            }
            "/api/admin/addons" => {
                if let Some(addons) = answer["addons"].as_array_mut() {
                    addons.push(
                        json!({"id": 9, "provider": "slack", "description": "team channel", "enabled": true,
                                       "parameters": {"url": "*****"}, "events": ["feature-created"]}),
                    );
                }
            }
            _ => {}
        }
    }
}

#[test]
fn token_secrets_listed_as_unleash_lists_them_keep_working_with_their_scope() -> Outcome {
    let source = Source::start()?;
    let proxy = Proxy::start(&source)?;
    let target = Scratch::new()?;
    let moved = migrate(&target, &proxy.base(), ADMIN, &[])?;
    let report = text(&moved);
    assert!(moved.status.success(), "{report}");
    for made in &source.made {
        assert!(!report.contains(&made.secret), "a secret shows in: {report}");
    }
    assert!(!report.contains("sR4nd0mSelect0r"), "{report}");
    // Three tokens made through the API and the three the source started with, whose secrets
    // this proxy does not show; the secure one's secret is not readable either.
    assert!(
        report.contains("API token secure-one (client, production): the source does not show its secret"),
        "{report}"
    );
    // What the lists leave out is completed, and said.
    for said in [
        "project payments: the source's API does not list it",
        "strategy type tenant: strategies use it but the source does not list it",
        "integration slack \"team channel\": Halyard delivers webhooks only",
    ] {
        assert!(report.contains(said), "{said:?} not in {report}");
    }
    // No token is made at the target's start: each one that works came across.
    let (_running, base) = serve(&target, &[])?;
    let listed = get(&base, "/api/admin/api-tokens", ADMIN)?;
    let backend = listed["tokens"]
        .as_array()
        .and_then(|tokens| {
            tokens
                .iter()
                .find(|token| token["tokenName"] == "migrated-backend")
        })
        .ok_or("no migrated-backend token")?;
    assert_eq!(
        (
            &backend["expiresAt"],
            &backend["environment"],
            &backend["projects"]
        ),
        (
            &json!("2099-01-01T00:00:00.000Z"),
            &json!("production"),
            &json!(["default"])
        )
    );
    let status = |method: &str, path: &str, token: &str| -> Result<u16, Box<dyn std::error::Error>> {
        Ok(call(method, &format!("{base}{path}"), token, None)?.0)
    };
    for made in &source.made {
        match made.token_type {
            "backend" => {
                let answer = get(&base, "/api/client/features", &made.secret)?;
                let projects: Vec<&str> = answer["features"]
                    .as_array()
                    .ok_or("no features")?
                    .iter()
                    .filter_map(|feature| feature["project"].as_str())
                    .collect();
                assert!(
                    !projects.is_empty() && projects.iter().all(|project| *project == "default"),
                    "{projects:?}"
                );
                assert_eq!(status("GET", "/api/admin/projects", &made.secret)?, 403);
            }
            "frontend" => {
                let answer = get(&base, "/api/frontend?tenant=acme", &made.secret)?;
                let names: Vec<&str> = answer["toggles"]
                    .as_array()
                    .ok_or("no toggles")?
                    .iter()
                    .filter_map(|toggle| toggle["name"].as_str())
                    .collect();
                assert_eq!(
                    names,
                    ["refunds"],
                    "a payments frontend token sees only payments' flags"
                );
                assert_eq!(status("GET", "/api/client/features", &made.secret)?, 403);
            }
            _ => {
                assert_eq!(status("GET", "/api/admin/projects", &made.secret)?, 200);
                assert_eq!(
                    status("GET", "/api/admin/projects", "*:*.not-a-migrated-secret")?,
                    401
                );
            }
        }
    }
    Ok(())
}

#[test]
fn a_source_that_fails_writes_nothing_and_says_what_failed() -> Outcome {
    let source = Source::start()?;
    let proxy = Proxy::start(&source)?;
    let target = Scratch::new()?;
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.local_addr()?.port()
    };
    let unreachable = format!("http://127.0.0.1:{closed}");
    let cases: [(&str, &str, u8, &[&str], &str); 7] = [
        (
            &unreachable,
            ADMIN,
            Proxy::UNLEASH,
            &[],
            "cannot reach the source",
        ),
        (
            "ftp://example.com",
            ADMIN,
            Proxy::UNLEASH,
            &[],
            "is not an http:// or https:// URL",
        ),
        ("", "*:*.wrong-secret", Proxy::UNLEASH, &[], "refused the token"),
        ("", BACKEND, Proxy::UNLEASH, &[], "use an admin API token"),
        (
            "",
            ADMIN,
            Proxy::GARBAGE,
            &[],
            "/api/admin/segments with something that is not Unleash's answer",
        ),
        (
            "",
            ADMIN,
            Proxy::MISSING,
            &[],
            "has no /api/admin/search/events (404)",
        ),
        (
            "",
            ADMIN,
            Proxy::HANGING,
            &["--timeout-seconds", "1"],
            "did not answer /api/admin/tags within 1 s",
        ),
    ];
    for (from, token, mode, args, message) in cases {
        proxy.set(mode);
        let from = if from.is_empty() {
            proxy.base()
        } else {
            from.to_owned()
        };
        let failed = migrate(&target, &from, token, args)?;
        let said = text(&failed);
        assert!(!failed.status.success(), "{message}: {said}");
        assert!(said.contains(message), "expected {message:?} in: {said}");
        assert!(!said.contains(token), "{message}: the token shows in: {said}");
        assert!(holds_nothing(&target)?, "{message}: something was written");
    }
    Ok(())
}
