//! The console in a real browser: headless Chromium driven over WebDriver (chromedriver),
//! against the real binary on a scratch database. `./scripts/test` installs Debian's `chromium`
//! and `chromium-driver` when they are missing; without them these tests fail and say so.
//! `HALYARD_BROWSER=firefox` runs the same flows in Firefox through geckodriver instead
//! (`scripts/console-firefox` sets that up).
//!
//! Each flow saves a screenshot to `target/browser-screenshots/` when it fails.

#[path = "it/common/process.rs"]
#[allow(dead_code, reason = "shared with the other suites; each uses part of it")]
mod process;

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use flag_store::scratch::Scratch;
use futures_util::FutureExt as _;
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::{Value, json};

use process::{OidcProvider, Running, start_server_on};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const ADMIN_PASSWORD: &str = "First-Adm1n!pass";
const ADMIN_TOKEN: &str = "*:*.browser-admin-secret";
const BACKEND: &str = "*:development.browser-backend-secret";
const PASSWORD: &str = "Corr3ct-Horse!";

/// Which browser the flows run in: Chromium, or Firefox with `HALYARD_BROWSER=firefox`.
fn firefox() -> bool {
    std::env::var("HALYARD_BROWSER").is_ok_and(|browser| browser == "firefox")
}

/// The WebDriver server for the browser, found on the path or where its package puts it.
fn driver() -> Result<PathBuf, String> {
    let candidates: &[&str] = if firefox() {
        &[
            "geckodriver",
            "/root/.cargo/bin/geckodriver",
            "/usr/local/bin/geckodriver",
        ]
    } else {
        &[
            "chromedriver",
            "/usr/bin/chromedriver",
            "/usr/lib/chromium/chromedriver",
        ]
    };
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|path| {
            Command::new(path)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success())
        })
        .ok_or_else(|| {
            if firefox() {
                "geckodriver was not found: scripts/console-firefox installs it and Firefox".into()
            } else {
                "chromedriver was not found: install Debian's chromium and chromium-driver packages \
                 (./scripts/test does so when they are missing)"
                    .into()
            }
        })
}

/// The real server and a browser session on it.
struct Console {
    base: String,
    browser: Client,
    _server: Running,
    _driver: Running,
    _scratch: Scratch,
    agent: ureq::Agent,
}

impl Console {
    async fn start() -> Result<Self, Box<dyn std::error::Error>> {
        Self::start_on(process::free_port()?, &[]).await
    }

    /// The server on `port`, with `settings` besides the tests' own.
    async fn start_on(port: u16, settings: &[(&str, &str)]) -> Result<Self, Box<dyn std::error::Error>> {
        let scratch = Scratch::new()?;
        let mut environment = vec![
            ("UNLEASH_DEFAULT_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("INIT_ADMIN_API_TOKENS", ADMIN_TOKEN),
            ("INIT_BACKEND_API_TOKENS", BACKEND),
            ("HALYARD_LOGIN_RATE_PER_MINUTE", "1000"),
            ("HALYARD_SIGNUP_RATE_PER_MINUTE", "1000"),
        ];
        environment.extend_from_slice(settings);
        let (server, port) = start_server_on(port, &scratch, &["--log-level", "warn"], &environment)?;
        let server = Running(server);
        let driver_port = process::free_port()?;
        let driver = Running(
            Command::new(driver()?)
                .arg(format!("--port={driver_port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        );
        let capabilities = if firefox() {
            json!({"moz:firefoxOptions": {"args": ["-headless", "-width=1280", "-height=900"]}})
        } else {
            json!({
                "goog:chromeOptions": {
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900",
                        // Loopback only: the OpenID provider's pages ask for web fonts.
                        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
                }
            })
        };
        let capabilities = match capabilities {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        let started = Instant::now();
        let browser = loop {
            match ClientBuilder::new(HttpConnector::new())
                .capabilities(capabilities.clone())
                .connect(&format!("http://127.0.0.1:{driver_port}"))
                .await
            {
                Ok(browser) => break browser,
                Err(error) if started.elapsed() > Duration::from_secs(20) => {
                    return Err(format!("chromedriver did not start a browser: {error}").into());
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
            }
        };
        Ok(Self {
            base: format!("http://127.0.0.1:{port}"),
            browser,
            _server: server,
            _driver: driver,
            _scratch: scratch,
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .into(),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An API call with the admin token: the status and the JSON answer.
    fn api(&self, method: &str, path: &str, body: Option<Value>) -> Result<(u16, Value), ureq::Error> {
        let url = self.url(path);
        let mut response = match (method, body) {
            ("GET", _) => self.agent.get(&url).header("Authorization", ADMIN_TOKEN).call()?,
            ("POST", Some(body)) => self
                .agent
                .post(&url)
                .header("Authorization", ADMIN_TOKEN)
                .send_json(body)?,
            ("POST", None) => self
                .agent
                .post(&url)
                .header("Authorization", ADMIN_TOKEN)
                .send_empty()?,
            _ => return Err(ureq::Error::BadUri(format!("{method} {path}"))),
        };
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string()?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }

    async fn sign_in(&self, username: &str, password: &str) -> TestResult {
        self.browser.goto(&self.url("/login")).await?;
        self.browser
            .find(Locator::Id("username"))
            .await?
            .send_keys(username)
            .await?;
        self.browser
            .find(Locator::Id("password"))
            .await?
            .send_keys(password)
            .await?;
        self.browser
            .find(Locator::Css("main button[type=submit]"))
            .await?
            .click()
            .await?;
        self.browser
            .wait()
            .for_element(Locator::Css("header .who"))
            .await?;
        Ok(())
    }

    async fn sign_out(&self) -> TestResult {
        self.browser
            .find(Locator::Css("header form button"))
            .await?
            .click()
            .await?;
        self.browser
            .wait()
            .for_url(&url_of(&self.url("/signed-out"))?)
            .await?;
        Ok(())
    }

    async fn text(&self) -> Result<String, fantoccini::error::CmdError> {
        self.browser.find(Locator::Css("main")).await?.text().await
    }

    /// With `HALYARD_SCREENSHOTS` set to a directory (`scripts/console-screenshots` sets it),
    /// saves the page as `name.png` there, for the README.
    async fn keep(&self, name: &str) -> TestResult {
        if let Some(directory) = std::env::var_os("HALYARD_SCREENSHOTS") {
            let png = self.browser.screenshot().await?;
            std::fs::create_dir_all(&directory)?;
            std::fs::write(PathBuf::from(directory).join(format!("{name}.png")), png)?;
        }
        Ok(())
    }

    /// Runs `flow`, saving a screenshot named `name` when it fails.
    async fn run<F>(&self, name: &str, flow: F) -> TestResult
    where
        F: std::future::Future<Output = TestResult>,
    {
        let outcome = std::panic::AssertUnwindSafe(flow).catch_unwind().await;
        let failed = !matches!(outcome, Ok(Ok(())));
        if failed {
            let directory =
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/browser-screenshots");
            let _ = std::fs::create_dir_all(&directory);
            if let Ok(png) = self.browser.screenshot().await {
                let path = directory.join(format!("{name}.png"));
                let _ = std::fs::write(&path, png);
                eprintln!("screenshot of the failed flow: {}", path.display());
            }
        }
        match outcome {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

fn url_of(text: &str) -> Result<url::Url, url::ParseError> {
    url::Url::parse(text)
}

/// A user with `role` made through the API.
fn make_user(console: &Console, email: &str, role: i32) -> TestResult {
    let (status, body) = console.api(
        "POST",
        "/api/admin/user-admin",
        Some(json!({"email": email, "rootRole": role, "password": PASSWORD})),
    )?;
    assert_eq!(status, 201, "{body}");
    Ok(())
}

#[path = "browser/day.rs"]
mod day;

#[path = "browser/change_requests.rs"]
mod change_requests;

/// A change request's whole life in the console.
#[tokio::test(flavor = "current_thread")]
async fn a_change_request_through_its_whole_life_in_a_real_browser() -> TestResult {
    let console = Console::start().await?;
    let result = change_requests::flows(&console).await;
    let _ = console.browser.clone().close().await;
    result
}

/// A team's whole day, every item of it checked through the API, then axe-core on every page.
#[tokio::test(flavor = "current_thread")]
async fn a_teams_whole_day_in_a_real_browser() -> TestResult {
    let console = Console::start_on(
        process::free_port()?,
        &[("UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION", "true")],
    )
    .await?;
    let result = day::flows(&console).await;
    let _ = console.browser.clone().close().await;
    result
}

#[tokio::test(flavor = "current_thread")]
async fn the_console_in_a_real_browser() -> TestResult {
    let console = Console::start().await?;
    let result = flows(&console).await;
    let _ = console.browser.clone().close().await;
    result
}

async fn flows(console: &Console) -> TestResult {
    // 1. The first admin signs in with the configured password; an invite link is made; a new
    // person opens it, watches the password rules turn green, signs up and lands on the flags.
    console
        .run("1-invite-signup", async {
            console.sign_in("admin", ADMIN_PASSWORD).await?;
            // The admin makes the link on the admin page.
            console.browser.goto(&console.url("/admin/invites")).await?;
            console
                .browser
                .find(Locator::Id("invite-name"))
                .await?
                .send_keys("team")
                .await?;
            // A date-time field's typing depends on the browser's locale: its value is set directly.
            let expires = (chrono::Utc::now() + chrono::Duration::days(7))
                .format("%Y-%m-%dT%H:%M")
                .to_string();
            console
                .browser
                .execute(
                    "document.getElementById('invite-expires').value = arguments[0];",
                    vec![json!(expires)],
                )
                .await?;
            console
                .browser
                .find(Locator::Css("form[action='/admin/invites'] button[type=submit]"))
                .await?
                .click()
                .await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("button[data-copy]"))
                .await?;
            let link = console
                .browser
                .find(Locator::Css("button[data-copy]"))
                .await?
                .attr("data-copy")
                .await?
                .unwrap_or_default();
            let secret = link.rsplit("invite=").next().unwrap_or_default().to_owned();
            assert_eq!(secret.len(), 32, "{link}");
            console.sign_out().await?;
            console
                .browser
                .goto(&console.url(&format!("/new-user?invite={secret}")))
                .await?;
            console
                .browser
                .find(Locator::Id("name"))
                .await?
                .send_keys("Ada")
                .await?;
            console
                .browser
                .find(Locator::Id("email"))
                .await?
                .send_keys("ada@example.com")
                .await?;
            let password = console.browser.find(Locator::Id("password")).await?;
            let unmet = console
                .browser
                .find_all(Locator::Css("ul.rules li.met"))
                .await?
                .len();
            assert!(unmet < 6, "every rule met before typing");
            password.send_keys(PASSWORD).await?;
            let met = console
                .browser
                .find_all(Locator::Css("ul.rules li.met"))
                .await?
                .len();
            assert_eq!(met, 6, "the rules did not all turn green");
            console
                .browser
                .find(Locator::Css("main button[type=submit]"))
                .await?
                .click()
                .await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("header .who"))
                .await?;
            let here = console.browser.current_url().await?;
            assert_eq!(here.path(), "/flags");
            let who = console
                .browser
                .find(Locator::Css("header .who"))
                .await?
                .text()
                .await?;
            assert_eq!(who, "Signed in as ada@example.com");
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    // 2. An editor switches a flag on in development; the client API then serves it enabled.
    console
        .run("2-editor-switch", async {
            let (status, body) = console.api(
                "POST",
                "/api/admin/projects/default/features",
                Some(json!({"name": "checkout"})),
            )?;
            assert_eq!(status, 201, "{body}");
            make_user(console, "editor@example.com", 2)?;
            console.sign_in("editor@example.com", PASSWORD).await?;
            let switch = console
                .browser
                .find(Locator::Css("button[aria-label='checkout in development']"))
                .await?;
            assert_eq!(switch.attr("aria-pressed").await?.as_deref(), Some("false"));
            switch.click().await?;
            let started = Instant::now();
            while switch.attr("aria-pressed").await?.as_deref() != Some("true") {
                assert!(
                    started.elapsed() < Duration::from_secs(10),
                    "the switch did not flip"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let mut response = console
                .agent
                .get(console.url("/api/client/features/checkout"))
                .header("Authorization", BACKEND)
                .call()?;
            let served: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
            assert_eq!(served["enabled"], true, "{served}");
            console.keep("console-flags").await?;
            // At phone width the page does not scroll sideways (wide tables scroll in their own box).
            console.browser.set_window_size(390, 844).await?;
            for path in ["/flags", "/flags/default/checkout", "/playground"] {
                console.browser.goto(&console.url(path)).await?;
                let overflow = console
                    .browser
                    .execute(
                        "return document.documentElement.scrollWidth - document.documentElement.clientWidth;",
                        Vec::new(),
                    )
                    .await?;
                assert!(
                    overflow.as_i64().is_some_and(|pixels| pixels <= 0),
                    "{path} overflows at phone width by {overflow}px"
                );
            }
            console.browser.set_window_size(1280, 900).await?;
            console.browser.goto(&console.url("/flags")).await?;
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    // 3. The variants editor writes two environments in one save.
    console
        .run("3-variants", async {
            console.sign_in("editor@example.com", PASSWORD).await?;
            console
                .browser
                .goto(&console.url("/flags/default/checkout"))
                .await?;
            for environment in ["development", "production"] {
                let tick = console
                    .browser
                    .find(Locator::Css(&format!(
                        "input[name=environments][value={environment}]"
                    )))
                    .await?;
                if tick.prop("checked").await?.as_deref() != Some("true") {
                    tick.click().await?;
                }
            }
            console
                .browser
                .find(Locator::Id("v0-name"))
                .await?
                .send_keys("blue")
                .await?;
            console
                .browser
                .find(Locator::Css("#v0-type option[value=fix]"))
                .await?
                .click()
                .await?;
            console
                .browser
                .find(Locator::Id("v0-percent"))
                .await?
                .send_keys("30")
                .await?;
            console
                .browser
                .find(Locator::Id("v1-name"))
                .await?
                .send_keys("red")
                .await?;
            console
                .browser
                .find(Locator::Css("form[action$='/variants'] button[type=submit]"))
                .await?
                .click()
                .await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("progress.bar"))
                .await?;
            for environment in ["development", "production"] {
                let (status, stored) = console.api(
                    "GET",
                    &format!(
                        "/api/admin/projects/default/features/checkout/environments/{environment}/variants"
                    ),
                    None,
                )?;
                assert_eq!(status, 200, "{stored}");
                let names: Vec<(&str, i64)> = stored["variants"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|variant| {
                        (
                            variant["name"].as_str().unwrap_or_default(),
                            variant["weight"].as_i64().unwrap_or_default(),
                        )
                    })
                    .collect();
                assert_eq!(names, [("blue", 300), ("red", 700)], "{environment}");
            }
            console
                .browser
                .execute(
                    "document.getElementById('variants-editor').scrollIntoView();",
                    Vec::new(),
                )
                .await?;
            console.keep("console-variants").await?;
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    // 4. The playground: the flag is on for one user and off for another, and the
    // explanation names the constraint that failed.
    console
        .run("4-playground", async {
            let (status, body) = console.api(
                "POST",
                "/api/admin/projects/default/features",
                Some(json!({"name": "beta"})),
            )?;
            assert_eq!(status, 201, "{body}");
            let (status, body) = console.api(
                "POST",
                "/api/admin/projects/default/features/beta/environments/development/strategies",
                Some(json!({"name": "flexibleRollout", "parameters": {"rollout": "100", "stickiness": "default", "groupId": "beta"},
                    "constraints": [{"contextName": "userId", "operator": "IN", "values": ["7"]}]})),
            )?;
            assert_eq!(status, 200, "{body}");
            let (status, body) = console.api(
                "POST",
                "/api/admin/projects/default/features/beta/environments/development/on",
                None,
            )?;
            assert_eq!(status, 200, "{body}");
            console.sign_in("editor@example.com", PASSWORD).await?;
            console.browser.goto(&console.url("/playground")).await?;
            console.browser.find(Locator::Id("field-userId")).await?.send_keys("7,8").await?;
            console
                .browser
                .find(Locator::Css("main form button[type=submit]"))
                .await?
                .click()
                .await?;
            console.browser.wait().for_element(Locator::Css("details.cell")).await?;
            let cells = console.browser.find_all(Locator::Css("details.cell")).await?;
            let mut on = None;
            let mut off = None;
            for cell in cells {
                let row = cell.find(Locator::XPath("ancestor::tr")).await?.text().await?;
                if !row.starts_with("beta") {
                    continue;
                }
                let column = cell.attr("data-context").await?.unwrap_or_default();
                let summary = cell.find(Locator::Css("summary")).await?.text().await?;
                if column == "development · userId=7" {
                    on = Some(summary);
                } else if column == "development · userId=8" {
                    off = Some((summary, cell));
                }
            }
            let on = on.ok_or("no cell for user 7")?;
            assert!(on.starts_with("✓ true"), "{on}");
            let (summary, cell) = off.ok_or("no cell for user 8")?;
            assert!(summary.starts_with("✗ false"), "{summary}");
            cell.find(Locator::Css("summary")).await?.click().await?;
            let why = cell.text().await?;
            assert!(why.contains("✗ false userId IN 7"), "{why}");
            console
                .browser
                .execute("document.getElementById('results').scrollIntoView();", Vec::new())
                .await?;
            console.keep("console-playground").await?;
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    // 5. A viewer sees no switch, and a post forged from the viewer's own session is refused.
    console
        .run("5-viewer", async {
            make_user(console, "viewer@example.com", 3)?;
            console.sign_in("viewer@example.com", PASSWORD).await?;
            let switches = console.browser.find_all(Locator::Css("form.toggle")).await?;
            assert!(switches.is_empty(), "a viewer sees a switch");
            assert!(console.text().await?.contains("checkout"));
            let status = console
                .browser
                .execute(
                    "const body = new URLSearchParams({enabled: 'false'});
                     return fetch('/flags/default/checkout/environments/development',
                       {method: 'POST', body, headers: {Accept: 'application/json'}})
                       .then((response) => response.status);",
                    Vec::new(),
                )
                .await?;
            assert_eq!(status, json!(403));
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    // 6. An expired link, and an email already taken, are said plainly.
    console
        .run("6-signup-messages", async {
            let past = (chrono::Utc::now() - chrono::Duration::days(1)).to_rfc3339();
            let expires = (chrono::Utc::now() + chrono::Duration::days(7)).to_rfc3339();
            let (_, expired) = console.api(
                "POST",
                "/api/admin/invite-link/tokens",
                Some(json!({"name": "old", "expiresAt": expires})),
            )?;
            let old = expired["secret"].as_str().unwrap_or_default().to_owned();
            let mut response = console
                .agent
                .put(console.url(&format!("/api/admin/invite-link/tokens/{old}")))
                .header("Authorization", ADMIN_TOKEN)
                .send_json(json!({"expiresAt": past}))?;
            assert_eq!(
                response.status().as_u16(),
                200,
                "{}",
                response.body_mut().read_to_string()?
            );
            console
                .browser
                .goto(&console.url(&format!("/new-user?invite={old}")))
                .await?;
            assert!(console.text().await?.contains("invalid or has expired"));

            let (_, fresh) = console.api(
                "POST",
                "/api/admin/invite-link/tokens",
                Some(json!({"name": "fresh", "expiresAt": expires})),
            )?;
            let secret = fresh["secret"].as_str().unwrap_or_default().to_owned();
            console
                .browser
                .goto(&console.url(&format!("/new-user?invite={secret}")))
                .await?;
            console
                .browser
                .find(Locator::Id("name"))
                .await?
                .send_keys("Ada again")
                .await?;
            console
                .browser
                .find(Locator::Id("email"))
                .await?
                .send_keys("ada@example.com")
                .await?;
            console
                .browser
                .find(Locator::Id("password"))
                .await?
                .send_keys(PASSWORD)
                .await?;
            console
                .browser
                .find(Locator::Css("main button[type=submit]"))
                .await?
                .click()
                .await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("[role=alert]"))
                .await?;
            let alert = console
                .browser
                .find(Locator::Css("[role=alert]"))
                .await?
                .text()
                .await?;
            assert!(alert.contains("already exists"), "{alert}");
            let kept = console
                .browser
                .find(Locator::Id("name"))
                .await?
                .prop("value")
                .await?;
            assert_eq!(kept.as_deref(), Some("Ada again"));
            let password = console
                .browser
                .find(Locator::Id("password"))
                .await?
                .prop("value")
                .await?;
            assert_eq!(password.as_deref(), Some(""), "the password was kept");
            Ok(())
        })
        .await?;

    // 7. A form on another origin that posts to the console is refused, although the browser
    // sends the session cookie along (the other origin is the same site).
    console
        .run("7-cross-site", async {
            let hostile = serve_once(&format!(
                "<!doctype html><form id=f method=post action='{}/flags'>\
                 <input name=project value=default><input name=name value=forged></form>\
                 <button id=go onclick=\"document.getElementById('f').submit()\">go</button>",
                console.base
            ))?;
            make_user(console, "admin2@example.com", 1)?;
            console.sign_in("admin2@example.com", PASSWORD).await?;
            console.browser.goto(&hostile).await?;
            console.browser.find(Locator::Id("go")).await?.click().await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("[role=alert]"))
                .await?;
            assert!(console.text().await?.contains("not sent from this site"));
            let (status, _) = console.api("GET", "/api/admin/projects/default/features/forged", None)?;
            assert_eq!(status, 404, "the forged post created a flag");
            Ok(())
        })
        .await?;
    Ok(())
}

/// Serves `html` to the first request on a loopback port of its own; answers its URL.
fn serve_once(html: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://127.0.0.1:{}/", listener.local_addr()?.port());
    let html = html.to_owned();
    std::thread::spawn(move || {
        if let Ok((mut stream, _)) = listener.accept() {
            let mut buffer = [0; 4096];
            let _ = stream.read(&mut buffer);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                html.len()
            );
        }
    });
    Ok(url)
}

/// Single sign-on through a real OpenID provider (`oidc-provider` under Node), configured from
/// the environment as a deployment would: users created on first login with the role their
/// group maps to, the role updated at the next login, single sign-out, and ID tokens with a
/// foreign audience or a forged signature refused with a page that says so.
#[tokio::test(flavor = "current_thread")]
async fn single_sign_on_through_a_real_provider() -> TestResult {
    let port = process::free_port()?;
    let base = format!("http://127.0.0.1:{port}");
    let provider = OidcProvider::start(&base)?;
    let console = Console::start_on(
        port,
        &[
            ("UNLEASH_URL", &base),
            ("OIDC_ENABLED", "true"),
            ("OIDC_DISCOVER_URL", &provider.issuer),
            ("OIDC_CLIENT_ID", "halyard"),
            ("OIDC_CLIENT_SECRET", "halyard-secret"),
            ("OIDC_AUTO_CREATE", "true"),
            ("OIDC_ENABLE_GROUP_SYNCING", "true"),
            ("OIDC_ADD_GROUPS_SCOPE", "true"),
            ("OIDC_GROUP_ROOT_ROLES", "flag-admins=Admin,flag-editors=Editor"),
            ("OIDC_ENABLE_SINGLE_SIGN_OUT", "true"),
        ],
    )
    .await?;
    let result = sso_flows(&console, &provider).await;
    let _ = console.browser.clone().close().await;
    result
}

/// The root role of the user with `email`, through the API.
fn role_of(console: &Console, email: &str) -> Result<Option<i64>, Box<dyn std::error::Error>> {
    let (status, body) = console.api("GET", "/api/admin/user-admin", None)?;
    assert_eq!(status, 200, "{body}");
    Ok(body["users"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|user| user["email"] == email)
        .and_then(|user| user["rootRole"].as_i64()))
}

impl Console {
    /// Clicks "Sign in with single sign-on" and signs in at the provider as `login`, agreeing
    /// to share what it asks; ends back on this server.
    async fn sign_in_at_provider(&self, login: &str) -> TestResult {
        self.browser.goto(&self.url("/login")).await?;
        self.browser
            .find(Locator::LinkText("Sign in with single sign-on"))
            .await?
            .click()
            .await?;
        self.browser
            .wait()
            .for_element(Locator::Css("input[name=login]"))
            .await?
            .send_keys(login)
            .await?;
        self.browser
            .find(Locator::Css("input[name=password]"))
            .await?
            .send_keys("any password")
            .await?;
        self.browser
            .find(Locator::Css("button[type=submit]"))
            .await?
            .click()
            .await?;
        // The consent page, then back here.
        let started = Instant::now();
        while !self.browser.current_url().await?.as_str().starts_with(&self.base) {
            if let Ok(consent) = self
                .browser
                .find(Locator::Css("input[name=prompt][value=consent]"))
                .await
            {
                drop(consent);
                self.browser
                    .find(Locator::Css("button[type=submit]"))
                    .await?
                    .click()
                    .await?;
            }
            if started.elapsed() > Duration::from_secs(20) {
                return Err(format!(
                    "the provider did not send the browser back: {}",
                    self.text().await?
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }
}

async fn sso_flows(console: &Console, provider: &OidcProvider) -> TestResult {
    let email = "dana@example.com";
    console
        .run("sso-1-first-login-creates-the-user", async {
            provider.control(&format!(
                "/__test/account?login={email}&groups=flag-editors,staff"
            ))?;
            assert_eq!(role_of(console, email)?, None, "no such user yet");
            console.sign_in_at_provider(email).await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("header .who"))
                .await?;
            assert_eq!(role_of(console, email)?, Some(2), "created as an Editor");
            console.keep("console-sso-signed-in").await
        })
        .await?;
    console
        .run("sso-2-single-sign-out", async {
            console
                .browser
                .find(Locator::Css("header form button"))
                .await?
                .click()
                .await?;
            // The provider asks whether to sign out there too; it was sent the ID token it
            // issued, as Okta requires.
            let confirm = console
                .browser
                .wait()
                .for_element(Locator::Css("button[name=logout]"))
                .await?;
            let at_provider = console.browser.current_url().await?;
            assert!(
                at_provider
                    .query_pairs()
                    .any(|(name, value)| name == "id_token_hint" && value.split('.').count() == 3),
                "no id_token_hint: {at_provider}"
            );
            confirm.click().await?;
            console
                .browser
                .wait()
                .for_url(&url_of(&console.url("/signed-out"))?)
                .await?;
            assert!(console.text().await?.contains("You are signed out"));
            Ok(())
        })
        .await?;
    console
        .run("sso-3-next-login-updates-the-role", async {
            provider.control(&format!("/__test/account?login={email}&groups=flag-admins"))?;
            console.sign_in_at_provider(email).await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("header .who"))
                .await?;
            assert_eq!(role_of(console, email)?, Some(1), "now an Admin");
            Ok(())
        })
        .await?;
    console
        .run("sso-4-an-existing-user-by-email-in-any-case", async {
            make_user(console, "Finn@Example.com", 2)?;
            console.browser.delete_all_cookies().await?;
            // Finn's groups claim names no mapped group: the default role, Viewer.
            provider.control("/__test/account?login=finn&email=finn@EXAMPLE.com&groups=staff")?;
            console.sign_in_at_provider("finn").await?;
            console
                .browser
                .wait()
                .for_element(Locator::Css("header .who"))
                .await?;
            let (_, users) = console.api("GET", "/api/admin/user-admin", None)?;
            let finns: Vec<&Value> = users["users"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|user| {
                    user["email"]
                        .as_str()
                        .is_some_and(|email| email.eq_ignore_ascii_case("finn@example.com"))
                })
                .collect();
            assert_eq!(finns.len(), 1, "the same user: {finns:?}");
            assert_eq!(finns[0]["rootRole"], json!(3), "{finns:?}");
            Ok(())
        })
        .await?;
    console
        .run("sso-5-a-password-session-signs-out-here-only", async {
            console.browser.delete_all_cookies().await?;
            console.sign_in("admin", ADMIN_PASSWORD).await?;
            console.sign_out().await?;
            assert!(console.text().await?.contains("You are signed out"));
            Ok(())
        })
        .await?;
    console
        .run("sso-5-an-unverified-email", async {
            console.browser.delete_all_cookies().await?;
            provider.control("/__test/account?login=ursula@example.com&verified=false")?;
            console.sign_in_at_provider("ursula@example.com").await?;
            let text = console.text().await?;
            assert!(
                text.contains("Sign-in failed") && text.contains("has not verified"),
                "{text}"
            );
            assert_eq!(
                role_of(console, "ursula@example.com")?,
                None,
                "no user was created"
            );
            Ok(())
        })
        .await?;
    console
        .run("sso-5-no-email", async {
            console.browser.delete_all_cookies().await?;
            provider.control("/__test/account?login=nomail&email=")?;
            console.sign_in_at_provider("nomail").await?;
            let text = console.text().await?;
            assert!(
                text.contains("Sign-in failed") && text.contains("no email"),
                "{text}"
            );
            Ok(())
        })
        .await?;
    for (mode, says) in [("aud", "audience"), ("sig", "Signature verification failed")] {
        console
            .run(&format!("sso-6-tampered-{mode}"), async {
                console.browser.delete_all_cookies().await?;
                provider.control(&format!("/__test/mode?m={mode}"))?;
                console.sign_in_at_provider("eve@example.com").await?;
                console
                    .browser
                    .wait()
                    .for_element(Locator::Css("div.notice.error"))
                    .await?;
                let text = console.text().await?;
                assert!(
                    text.contains("Sign-in failed")
                        && text.contains("The ID token does not verify")
                        && text.contains(says),
                    "{mode}: {text}"
                );
                assert!(
                    console.browser.find(Locator::Css("header .who")).await.is_err(),
                    "{mode}: not signed in"
                );
                assert_eq!(
                    role_of(console, "eve@example.com")?,
                    None,
                    "{mode}: no user was created"
                );
                Ok(())
            })
            .await?;
    }
    provider.control("/__test/mode?m=none")?;
    Ok(())
}
