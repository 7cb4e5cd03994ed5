//! A change request's whole life in the console, in a real browser: an administrator makes
//! production take changes only through requests; an editor's direct switch is refused, so they
//! propose it from the flag's page and send it for review, and cannot approve it themselves;
//! a reviewer comments, approves and applies it. Each step is checked through the API, then
//! axe-core runs over the pages.

use fantoccini::Locator;
use serde_json::{Value, json};

use super::{ADMIN_PASSWORD, Console, PASSWORD, TestResult, make_user};

/// Whether `feature` is on in production, through the API.
fn on_in_production(console: &Console, feature: &str) -> Result<bool, Box<dyn std::error::Error>> {
    let (status, flag) = console.api(
        "GET",
        &format!("/api/admin/projects/default/features/{feature}"),
        None,
    )?;
    assert_eq!(status, 200, "{flag}");
    Ok(flag["environments"]
        .as_array()
        .and_then(|environments| environments.iter().find(|env| env["name"] == "production"))
        .is_some_and(|env| env["enabled"] == Value::Bool(true)))
}

pub async fn flows(console: &Console) -> TestResult {
    let (status, body) = console.api(
        "POST",
        "/api/admin/projects/default/features",
        Some(json!({"name": "payments-kill"})),
    )?;
    assert_eq!(status, 201, "{body}");
    let (status, _) = console.api(
        "POST",
        "/api/admin/projects/default/features/payments-kill/environments/production/on",
        None,
    )?;
    assert_eq!(status, 200);
    make_user(console, "editor@example.com", 2)?;
    make_user(console, "reviewer@example.com", 1)?;
    let mut axe_findings = Vec::new();

    console
        .run("cr-1-rule", async {
            console.sign_in("admin", ADMIN_PASSWORD).await?;
            console.browser.goto(&console.url("/projects/default")).await?;
            console
                .press_and_wait("main a[href='/projects/default/change-requests']", "#rules")
                .await?;
            console.press("#rule-production input[name=enabled]").await?;
            console
                .press_and_wait("#rule-production button", "#rules")
                .await?;
            let (_, config) =
                console.api("GET", "/api/admin/projects/default/change-requests/config", None)?;
            let production = config
                .as_array()
                .and_then(|environments| environments.iter().find(|env| env["environment"] == "production"))
                .cloned()
                .unwrap_or_default();
            assert_eq!(production["changeRequestEnabled"], json!(true), "{config}");
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    console
        .run("cr-2-propose", async {
            console.sign_in("editor@example.com", PASSWORD).await?;
            // The direct switch is refused, naming the rule.
            console
                .browser
                .goto(&console.url("/flags?project=default"))
                .await?;
            console
                .press_and_wait("button[aria-label='payments-kill in production']", "[role=alert]")
                .await?;
            let refused = console.text().await?;
            assert!(refused.contains("change request"), "{refused}");
            assert!(on_in_production(console, "payments-kill")?);
            // Proposed from the flag's page instead.
            console
                .browser
                .goto(&console.url("/flags/default/payments-kill"))
                .await?;
            console
                .browser
                .wait()
                .for_element(Locator::Id("change-requests"))
                .await?;
            console
                .browser
                .find(Locator::Css("#propose-production option[value=off]"))
                .await?
                .click()
                .await?;
            console
                .press_and_wait(
                    "form[action='/projects/default/change-requests/propose'] button",
                    "#reviews",
                )
                .await?;
            let draft = console.text().await?;
            assert!(
                draft.contains("Draft") && draft.contains("updateEnabled"),
                "{draft}"
            );
            axe_findings.extend(console.axe().await?);
            console
                .press_and_wait("form input[value='In review'] ~ button", "#reviews")
                .await?;
            let sent = console.text().await?;
            assert!(sent.contains("In review"), "{sent}");
            // Their own request offers them no approval.
            assert!(!sent.contains("Approve"), "{sent}");
            console.sign_out().await?;
            Ok(())
        })
        .await?;

    console
        .run("cr-3-review-apply", async {
            console.sign_in("reviewer@example.com", PASSWORD).await?;
            console
                .browser
                .goto(&console.url("/projects/default/change-requests"))
                .await?;
            console
                .browser
                .wait()
                .for_element(Locator::Id("to-review"))
                .await?;
            axe_findings.extend(console.axe().await?);
            console
                .press_and_wait("section[aria-labelledby=to-review] tbody a", "#reviews")
                .await?;
            console.fill("comment-text", "Checked with payments").await?;
            console
                .press_and_wait("form input[value=comment] ~ p button", "#reviews")
                .await?;
            console
                .press_and_wait("form input[value=Approved] ~ button", "#reviews")
                .await?;
            let approved = console.text().await?;
            assert!(
                approved.contains("Approved by reviewer@example.com"),
                "{approved}"
            );
            assert!(approved.contains("Checked with payments"), "{approved}");
            assert!(
                on_in_production(console, "payments-kill")?,
                "approved is not applied"
            );
            console
                .press_and_wait("form input[value=Applied] ~ button", "#reviews")
                .await?;
            let applied = console.text().await?;
            assert!(applied.contains("Applied"), "{applied}");
            assert!(
                !on_in_production(console, "payments-kill")?,
                "applied, so off in production"
            );
            axe_findings.extend(console.axe().await?);
            console.sign_out().await?;
            Ok(())
        })
        .await?;
    assert!(axe_findings.is_empty(), "axe-core: {axe_findings:#?}");
    Ok(())
}
