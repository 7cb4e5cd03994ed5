//! A team's working day in the console, in a real browser, each step done as a person would and
//! checked through the API: strategies of every kind, segments and context fields, a flag's
//! life, projects, the audit log, usage, the admin pages, and the everyday ease of the playground
//! and the search. Then axe-core over every page the day went through.

use std::time::Duration;

use fantoccini::Locator;
use serde_json::{Value, json};

use super::{ADMIN_PASSWORD, BACKEND, Console, TestResult};

impl Console {
    /// Types `text` into the field with `id`, replacing what it held.
    pub(crate) async fn fill(&self, id: &str, text: &str) -> TestResult {
        let field = self.browser.find(Locator::Id(id)).await?;
        field.clear().await?;
        field.send_keys(text).await?;
        Ok(())
    }

    /// Clicks the element `css` finds.
    pub(crate) async fn press(&self, css: &str) -> TestResult {
        self.browser.find(Locator::Css(css)).await?.click().await?;
        Ok(())
    }

    /// Clicks `css`, waits for the next page to load (the page marked before the click is
    /// gone), then for `then` on it.
    pub(crate) async fn press_and_wait(&self, css: &str, then: &str) -> TestResult {
        self.browser
            .execute("window.beforeThisClick = true;", Vec::new())
            .await?;
        self.press(css).await?;
        let started = std::time::Instant::now();
        loop {
            let same = self
                .browser
                .execute(
                    "return window.beforeThisClick === true && document.readyState === 'complete';",
                    Vec::new(),
                )
                .await
                .is_ok_and(|value| value == Value::Bool(true));
            let ready = self
                .browser
                .execute("return document.readyState === 'complete';", Vec::new())
                .await
                .is_ok_and(|value| value == Value::Bool(true));
            if !same && ready {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "{css} led to no new page"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.browser
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css(then))
            .await?;
        Ok(())
    }

    /// An API call that must succeed: its JSON answer.
    fn must(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, Box<dyn std::error::Error>> {
        let (status, answer) = self.api(method, path, body)?;
        assert!((200..300).contains(&status), "{method} {path}: {status} {answer}");
        Ok(answer)
    }

    /// axe-core's serious and critical violations on the page shown, one line each.
    pub(crate) async fn axe(&self) -> Result<Vec<String>, Box<dyn std::error::Error>> {
        let source = axe_source()?;
        let found = self
            .browser
            .execute_async(
                &format!(
                    "{source}\n;const done = arguments[arguments.length - 1];
                     axe.run(document, {{resultTypes: ['violations']}})
                       .then((results) => done(results.violations
                         .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
                         .map((violation) => violation.id + ' (' + violation.impact + '): ' + violation.help + ' at '
                           + violation.nodes.map((node) => node.target.join(' ')).join(', '))))
                       .catch((error) => done(['axe failed: ' + error]));"
                ),
                Vec::new(),
            )
            .await?;
        Ok(found
            .as_array()
            .into_iter()
            .flatten()
            .map(|line| line.as_str().unwrap_or_default().to_owned())
            .collect())
    }
}

/// axe-core's script, from the npm package `./scripts/test` installs.
fn axe_source() -> Result<String, String> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).map_err(|error| {
        format!(
            "axe-core is missing at {} ({error}): run `npm ci` in crates/admin-api/tests/sdk (./scripts/test does)",
            path.display()
        )
    })
}

/// The strategy at `index` in development of `feature`, through the API.
fn strategies(console: &Console, feature: &str) -> Result<Vec<Value>, Box<dyn std::error::Error>> {
    let answer = console.must(
        "GET",
        &format!("/api/admin/projects/default/features/{feature}/environments/development/strategies"),
        None,
    )?;
    Ok(answer.as_array().cloned().unwrap_or_default())
}

pub async fn flows(console: &Console) -> TestResult {
    console.must(
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": "rollout"})),
    )?;
    console.must(
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": "checkout"})),
    )?;
    console.sign_in("admin", ADMIN_PASSWORD).await?;

    // 1. Context fields and segments: a field with legal values, then a segment on it.
    console
        .run("day-1-context-and-segments", async {
            console.browser.goto(&console.url("/context/new")).await?;
            console.fill("name", "plan").await?;
            console.fill("description", "billing plan").await?;
            console.fill("legalValues", "free\npro: paying").await?;
            console
                .press_and_wait("main form button[type=submit]", "#used-by")
                .await?;
            let field = console.must("GET", "/api/admin/context/plan", None)?;
            assert_eq!(field["legalValues"][1]["description"], "paying", "{field}");

            console.browser.goto(&console.url("/segments/new")).await?;
            console.fill("name", "paying").await?;
            console.fill("segment-c0-context", "plan").await?;
            console.press("#segment-c0-operator option[value=IN]").await?;
            console.fill("segment-c0-values", "pro").await?;
            console
                .press_and_wait("main form.card button[type=submit]", "#used-by")
                .await?;
            let segments = console.must("GET", "/api/admin/segments", None)?;
            assert_eq!(segments["segments"][0]["name"], "paying", "{segments}");
            assert_eq!(
                segments["segments"][0]["constraints"][0]["values"],
                json!(["pro"])
            );
            Ok(())
        })
        .await?;
    let segment = console.must("GET", "/api/admin/segments", None)?["segments"][0]["id"]
        .as_i64()
        .unwrap_or_default();

    // 2. A gradual rollout with three constraints (one row added by the button), a segment and a
    // title, tried before it is saved; then moved below another strategy.
    console
        .run("day-2-strategy", async {
            console
                .browser
                .goto(&console.url("/flags/default/rollout"))
                .await?;
            console
                .press("#add-development option[value=flexibleRollout]")
                .await?;
            console
                .press_and_wait("form[action$='/strategies/new'] button", "#p-rollout")
                .await?;
            console.fill("title", "Paying users first").await?;
            console.fill("p-rollout", "100").await?;
            console.fill("strategy-c0-context", "plan").await?;
            console.press("#strategy-c0-operator option[value=IN]").await?;
            console.fill("strategy-c0-values", "pro").await?;
            console.fill("strategy-c1-context", "currentTime").await?;
            console
                .press("#strategy-c1-operator option[value=DATE_AFTER]")
                .await?;
            let hint = console
                .browser
                .find(Locator::Id("strategy-c1-hint"))
                .await?
                .text()
                .await?;
            assert!(
                hint.contains("RFC 3339"),
                "the hint did not follow the operator: {hint}"
            );
            console.fill("strategy-c1-values", "2000-01-01T00:00:00Z").await?;
            console.press("button[data-add-constraint]").await?;
            console.fill("strategy-c2-context", "userId").await?;
            console.press("#strategy-c2-operator option[value=IN]").await?;
            console.fill("strategy-c2-values", "13").await?;
            console.press("input[name=c2_inverted]").await?;
            console
                .press(&format!("input[name=segments][value='{segment}']"))
                .await?;
            console.fill("try-userId", "7").await?;
            console.fill("try-properties", "plan=pro").await?;
            console.press_and_wait("button[name=preview]", "#tried").await?;
            let tried = console.browser.find(Locator::Id("tried")).await?.text().await?;
            assert!(tried.starts_with("✓ On"), "{tried}");
            assert!(strategies(console, "rollout")?.is_empty(), "trying it saved it");
            console
                .browser
                .execute(
                    "document.querySelector('fieldset.constraints').scrollIntoView();",
                    Vec::new(),
                )
                .await?;
            console.keep("console-strategy").await?;
            console
                .press_and_wait("main form.card > p > button[type=submit]", "#life")
                .await?;
            let saved = strategies(console, "rollout")?;
            assert_eq!(saved.len(), 1, "{saved:?}");
            assert_eq!(saved[0]["title"], "Paying users first");
            assert_eq!(saved[0]["segments"], json!([segment]));
            let constraints = saved[0]["constraints"].as_array().cloned().unwrap_or_default();
            assert_eq!(constraints.len(), 3, "{constraints:?}");
            assert_eq!(constraints[1]["value"], "2000-01-01T00:00:00Z");
            assert_eq!(constraints[2]["inverted"], true);

            console.must(
                "POST",
                "/api/admin/projects/default/features/rollout/environments/development/strategies",
                Some(json!({"name": "default"})),
            )?;
            console
                .browser
                .goto(&console.url("/flags/default/rollout"))
                .await?;
            console
                .press_and_wait("button[aria-label='Move strategy 1 down']", "#life")
                .await?;
            let names: Vec<Value> = strategies(console, "rollout")?
                .iter()
                .map(|strategy| strategy["name"].clone())
                .collect();
            assert_eq!(names, [json!("default"), json!("flexibleRollout")]);
            Ok(())
        })
        .await?;

    // 3. A flag's life: tagged, marked stale, made to depend on another, copied.
    console
        .run("day-3-flag-life", async {
            console
                .browser
                .goto(&console.url("/flags/default/rollout"))
                .await?;
            console.press("#tag-type option[value=simple]").await?;
            console.fill("tag-value", "payments").await?;
            console
                .press_and_wait("form[action$='/tags'] button", "#life")
                .await?;
            console
                .press_and_wait("form[action$='/stale'] button", "#life")
                .await?;
            console.press("#parent option[value=checkout]").await?;
            console
                .press_and_wait("form[action$='/dependencies'] button", "#life")
                .await?;
            console
                .press("section[aria-labelledby=life] details summary")
                .await?;
            console.fill("clone-name", "rollout-copy").await?;
            console
                .press_and_wait("form[action$='/clone'] button", "#life")
                .await?;
            let flag = console.must("GET", "/api/admin/projects/default/features/rollout", None)?;
            assert_eq!(flag["stale"], true, "{flag}");
            assert_eq!(flag["dependencies"][0]["feature"], "checkout");
            let tags = console.must("GET", "/api/admin/features/rollout/tags", None)?;
            assert_eq!(tags["tags"][0]["value"], "payments", "{tags}");
            console.must("GET", "/api/admin/projects/default/features/rollout-copy", None)?;
            // The list filters by the tag.
            console
                .browser
                .goto(&console.url("/flags?project=default&tag=simple%3Apayments"))
                .await?;
            let listed = console.text().await?;
            assert!(
                listed.contains("rollout") && !listed.contains("checkout"),
                "{listed}"
            );
            // The copy is archived, revived, archived again and deleted for good.
            for (at, button) in [
                ("/flags/default/rollout-copy", "form[action$='/archive'] button"),
                (
                    "/flags?project=default&archived=1",
                    "button[aria-label='Revive rollout-copy']",
                ),
                ("/flags/default/rollout-copy", "form[action$='/archive'] button"),
                (
                    "/flags?project=default&archived=1",
                    "button[aria-label='Delete rollout-copy for good']",
                ),
            ] {
                console.browser.goto(&console.url(at)).await?;
                console.press_and_wait(button, "main h1").await?;
            }
            let (status, _) =
                console.api("GET", "/api/admin/projects/default/features/rollout-copy", None)?;
            assert_eq!(status, 404, "the copy was not deleted");
            let archive = console.must("GET", "/api/admin/search/features?archived=IS:true", None)?;
            assert!(!archive.to_string().contains("rollout-copy"), "{archive}");
            Ok(())
        })
        .await?;

    // 4. A project, with production switched off in it.
    console
        .run("day-4-project", async {
            console.browser.goto(&console.url("/projects")).await?;
            console.fill("project-name", "Payments").await?;
            console.fill("project-id", "payments").await?;
            console
                .press_and_wait("form[action='/projects'] button", "#environments")
                .await?;
            console
                .press_and_wait(
                    "button[aria-label='Switch off production in payments']",
                    "#environments",
                )
                .await?;
            let project = console.must("GET", "/api/admin/projects/payments", None)?;
            assert_eq!(
                project["environments"],
                json!([{"environment": "development"}]),
                "{project}"
            );
            Ok(())
        })
        .await?;

    // 5. The audit log: the flag's changes, with a change's before and after.
    console
        .run("day-5-audit-log", async {
            console.browser.goto(&console.url("/events")).await?;
            console.fill("filter-feature", "rollout").await?;
            console
                .press_and_wait("form[role=search] button[type=submit]", "table.events")
                .await?;
            let here = console.browser.current_url().await?;
            assert!(
                here.query()
                    .is_some_and(|query| query.contains("feature=rollout")),
                "{here}"
            );
            console.press("details.diff summary").await?;
            let diff = console
                .browser
                .find(Locator::Css("details.diff"))
                .await?
                .text()
                .await?;
            assert!(!diff.is_empty(), "no change shown");
            let total = console.must("GET", "/api/admin/search/events?feature=IS:rollout", None)?["total"]
                .as_i64()
                .unwrap_or_default();
            assert!(
                console.text().await?.contains(&format!("{total} events")),
                "the count differs from the API's {total}"
            );
            console.keep("console-audit-log").await?;
            Ok(())
        })
        .await?;

    // 6. Usage: an SDK's counts drawn on the flag's page; the application listed.
    console
        .run("day-6-usage", async {
            let now = chrono::Utc::now();
            let response = console
                .agent
                .post(console.url("/api/client/metrics"))
                .header("Authorization", BACKEND)
                .send_json(json!({"appName": "checkout-web", "instanceId": "pod-1",
                    "bucket": {"start": (now - chrono::Duration::minutes(1)).to_rfc3339(), "stop": now.to_rfc3339(),
                               "toggles": {"rollout": {"yes": 5, "no": 2}}}}))?;
            assert!(response.status().is_success(), "{}", response.status());
            let started = std::time::Instant::now();
            loop {
                console.browser.goto(&console.url("/flags/default/rollout")).await?;
                if console.browser.find(Locator::Css("svg.chart")).await.is_ok() {
                    break;
                }
                assert!(started.elapsed() < Duration::from_secs(30), "the usage was never drawn");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            let title = console.browser.find(Locator::Css("svg.chart title")).await?.prop("textContent").await?;
            assert!(title.is_some_and(|title| title.starts_with("development: 5 yes and 2 no")), "the chart's words are wrong");
            console
                .browser
                .execute("document.getElementById('usage').scrollIntoView();", Vec::new())
                .await?;
            console.keep("console-usage").await?;
            console.browser.goto(&console.url("/applications")).await?;
            assert!(console.text().await?.contains("checkout-web"));
            Ok(())
        })
        .await?;

    // 7. Admin: a webhook sent a sample; a document checked, then imported.
    console
        .run("day-7-admin", async {
            let hook = super::serve_once("ok")?;
            console.browser.goto(&console.url("/admin/webhooks")).await?;
            console.fill("webhook-url", &format!("{hook}flags")).await?;
            console.fill("webhook-description", "ops").await?;
            console
                .press_and_wait(
                    "form[action='/admin/webhooks'] button[type=submit]",
                    "form[action$='/sample']",
                )
                .await?;
            console
                .press_and_wait("form[action$='/sample'] button", "table")
                .await?;
            let shown = console.text().await?;
            assert!(shown.contains("success"), "{shown}");

            let document = console.must(
                "POST",
                "/api/admin/features-batch/export",
                Some(json!({"environment": "development", "features": ["checkout"]})),
            )?;
            let text = document.to_string().replace("\"checkout\"", "\"imported\"");
            console.browser.goto(&console.url("/admin/import")).await?;
            console
                .browser
                .execute(
                    "document.getElementById('import-data').value = arguments[0];",
                    vec![json!(text)],
                )
                .await?;
            console
                .press_and_wait("button[name=step][value=check]", "#import-check")
                .await?;
            let checked = console
                .browser
                .find(Locator::Id("import-check"))
                .await?
                .text()
                .await?;
            assert!(checked.starts_with("Ready to import"), "{checked}");
            console
                .press_and_wait("button[name=step][value=import]", "#import-check")
                .await?;
            console.must("GET", "/api/admin/projects/default/features/imported", None)?;
            // The export form's download, as the browser fetches it.
            let exported = console
                .browser
                .execute_async(
                    r#"const done = arguments[arguments.length - 1];
                       const form = document.querySelector("form[action='/admin/export']");
                       const query = new URLSearchParams(new FormData(form));
                       fetch("/admin/export?" + query).then(async (response) => done({
                         disposition: response.headers.get("content-disposition"),
                         names: (await response.json()).features.map((feature) => feature.name)}));"#,
                    Vec::new(),
                )
                .await?;
            assert!(
                exported["disposition"]
                    .as_str()
                    .is_some_and(|value| value.starts_with("attachment")),
                "{exported}"
            );
            assert!(
                exported["names"]
                    .as_array()
                    .is_some_and(|names| names.contains(&json!("imported"))),
                "{exported}"
            );
            // Password login cannot be switched off while single sign-on is off: the page says so.
            console.browser.goto(&console.url("/admin/sign-in")).await?;
            console
                .press_and_wait("form[action='/admin/sign-in/password'] button", "[role=alert]")
                .await?;
            let refusal = console.text().await?;
            assert!(refusal.contains("Single sign-on is off"), "{refusal}");
            let settings = console.must("GET", "/api/admin/auth/simple/settings", None)?;
            assert_eq!(settings["disabled"], false, "{settings}");
            Ok(())
        })
        .await?;

    // 8. Everyday ease: the playground starts with every enabled environment ticked; the search
    // finds flags in every project.
    console
        .run("day-8-everyday", async {
            console.browser.goto(&console.url("/playground")).await?;
            for environment in ["development", "production"] {
                let tick = console
                    .browser
                    .find(Locator::Css(&format!("input[name=env][value={environment}]")))
                    .await?;
                assert_eq!(
                    tick.prop("checked").await?.as_deref(),
                    Some("true"),
                    "{environment} is not ticked"
                );
            }
            console.must(
                "POST",
                "/api/admin/projects/payments/features",
                Some(json!({"name": "refunds"})),
            )?;
            console.browser.goto(&console.url("/flags")).await?;
            console.press("#project option[value='*']").await?;
            console.fill("q", "refunds").await?;
            console
                .press_and_wait("form[role=search] button", "table")
                .await?;
            let found = console.text().await?;
            assert!(found.contains("refunds") && found.contains("payments"), "{found}");
            Ok(())
        })
        .await?;

    // 9. Every page the day went through, and the rest, with no serious or critical violation.
    console
        .run("day-9-axe", async {
            let strategy = strategies(console, "rollout")?
                .first()
                .and_then(|strategy| strategy["id"].as_str().map(str::to_owned))
                .unwrap_or_default();
            let role = console.must(
                "POST",
                "/api/admin/roles",
                Some(json!({"name": "axe", "type": "custom", "permissions": [{"name": "CREATE_FEATURE"}]})),
            )?["roles"]["id"]
                .clone();
            let account = console.must(
                "POST",
                "/api/admin/service-account",
                Some(json!({"username": "axe-bot", "rootRole": 3})),
            )?["id"]
                .clone();
            let pages = [
                "/flags".to_owned(),
                "/flags?project=*&q=r".to_owned(),
                "/flags?project=default&archived=1".to_owned(),
                "/flags/default/rollout".to_owned(),
                format!("/flags/default/rollout/environments/development/strategies/{strategy}"),
                "/flags/default/rollout/environments/development/strategies/new?type=flexibleRollout"
                    .to_owned(),
                "/segments".to_owned(),
                "/segments/new".to_owned(),
                "/context/new".to_owned(),
                format!("/segments/{segment}"),
                "/context".to_owned(),
                "/context/plan".to_owned(),
                "/projects".to_owned(),
                "/projects/payments".to_owned(),
                "/events".to_owned(),
                "/events?feature=rollout".to_owned(),
                "/applications".to_owned(),
                "/playground".to_owned(),
                "/playground?run=1&env=development&env=production&appName=web&ctx_userId=7".to_owned(),
                "/admin/invites".to_owned(),
                "/admin/tokens".to_owned(),
                "/admin/users".to_owned(),
                "/admin/roles".to_owned(),
                format!("/admin/roles/{role}"),
                "/admin/groups".to_owned(),
                "/admin/service-accounts".to_owned(),
                format!("/admin/service-accounts/{account}"),
                "/admin/webhooks".to_owned(),
                "/admin/sign-in".to_owned(),
                "/admin/import".to_owned(),
            ];
            // axe itself is checked first: an image without a text alternative is critical.
            console.browser.goto(&console.url("/flags")).await?;
            console
                .browser
                .execute(
                    "document.querySelector('main').append(document.createElement('img'));",
                    Vec::new(),
                )
                .await?;
            let planted = console.axe().await?;
            assert!(
                planted.iter().any(|violation| violation.starts_with("image-alt")),
                "axe did not see a planted violation: {planted:?}"
            );
            let mut violations = Vec::new();
            for path in &pages {
                console.browser.goto(&console.url(path)).await?;
                for violation in console.axe().await? {
                    violations.push(format!("{path}: {violation}"));
                }
            }
            // A page that says what went wrong.
            console
                .browser
                .goto(&console.url("/flags/default/no-such-flag"))
                .await?;
            for violation in console.axe().await? {
                violations.push(format!("a failure page: {violation}"));
            }
            let expires = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
            let invite = console.must(
                "POST",
                "/api/admin/invite-link/tokens",
                Some(json!({"name": "axe", "expiresAt": expires})),
            )?;
            let signup = format!(
                "/new-user?invite={}",
                invite["secret"].as_str().unwrap_or_default()
            );
            console.browser.goto(&console.url("/flags")).await?;
            console.sign_out().await?;
            for path in ["/login", "/signed-out", signup.as_str()] {
                console.browser.goto(&console.url(path)).await?;
                for violation in console.axe().await? {
                    violations.push(format!("{path}: {violation}"));
                }
            }
            assert!(
                violations.is_empty(),
                "axe-core found:\n{}",
                violations.join("\n")
            );
            Ok(())
        })
        .await?;
    Ok(())
}
