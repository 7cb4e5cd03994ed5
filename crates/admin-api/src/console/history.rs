//! `/history`: what changed in an environment between two moments, each flag before and after,
//! with the audit events between them that made it so. Every field is in the address, so a view
//! can be shared; the playground links here from an answer about a past moment.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::history::types::{ChangedOut, ChangesOut, ChangesQuery};
use flag_admin::{catalogue::environments, catalogue::history};
use maud::{Markup, html};

use super::events as audit;
use super::layout::{self, Viewer};
use super::{form_fields, signed_in, url_escape};
use crate::state::AppState;

/// `GET /history`: the form, and the changes once a start is given.
pub async fn page(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let query = form_fields(request.query_string().as_bytes());
    let get = |name: &str| super::field(&query, name);
    let known = match async {
        environments::LIST.admit(principal.clone())?;
        environments::list(&state.app).await
    }
    .await
    {
        Ok(known) => known,
        Err(error) => return layout::failure(&error),
    };
    let environment = Some(get("environment"))
        .filter(|name| !name.is_empty())
        .or_else(|| {
            known
                .environments
                .iter()
                .find(|environment| environment.enabled)
                .map(|environment| environment.name.clone())
        })
        .unwrap_or_default();
    let (from, to) = (get("from"), get("to"));
    let (answer, error) = if from.is_empty() {
        (None, None)
    } else {
        let asked = async {
            let caller = history::CHANGES.admit(principal.clone())?;
            history::changes(
                &state.app,
                &caller,
                ChangesQuery {
                    environment: Some(environment.clone()),
                    from: Some(super::playground::zoned(&from)),
                    to: Some(to.clone())
                        .filter(|to| !to.is_empty())
                        .map(|to| super::playground::zoned(&to)),
                },
            )
            .await
        }
        .await;
        match asked {
            Ok(answer) => (Some(answer), None),
            Err(error) => (None, Some(error)),
        }
    };
    let status = error.as_ref().map_or(StatusCode::OK, crate::error::status_of);
    let viewer = Viewer::of(&principal);
    let body = html! {
        h1 { "What changed" }
        p.muted { "Which flags changed in an environment between two moments, and how. Times are UTC; leave the end empty for now." }
        @if let Some(error) = &error { (layout::notice(error)) }
        form.card method="get" action="/history" {
            div.row {
                div {
                    label for="environment" { "Environment" }
                    select id="environment" name="environment" {
                        @for known in &known.environments {
                            option value=(known.name) selected[known.name == environment] { (known.name) }
                        }
                    }
                }
                div {
                    label for="from" { "From" }
                    input id="from" name="from" type="datetime-local" step="0.001" required value=(from);
                }
                div {
                    label for="to" { "To (empty for now)" }
                    input id="to" name="to" type="datetime-local" step="0.001" value=(to);
                }
            }
            p { button type="submit" { "Show the changes" } }
        }
        @if let Some(answer) = &answer { (changes(answer)) }
    };
    layout::page(status, "What changed", Some(&viewer), "history", &body)
}

fn changes(answer: &ChangesOut) -> Markup {
    html! {
        section.card aria-labelledby="changed" {
            h2 id="changed" {
                (answer.features.len()) (if answer.features.len() == 1 { " flag" } else { " flags" })
                " changed in " (answer.environment)
            }
            p.muted {
                "From " (answer.from.at) " (after audit event " (answer.from.revision) ") to "
                (answer.to.at) " (after audit event " (answer.to.revision) ")."
            }
            @for changed in &answer.features { (flag(answer, changed)) }
        }
    }
}

fn flag(answer: &ChangesOut, changed: &ChangedOut) -> Markup {
    let pretty = |value: &Option<serde_json::Value>| {
        value
            .as_ref()
            .and_then(|value| serde_json::to_string_pretty(value).ok())
            .unwrap_or_else(|| "(none)".to_owned())
    };
    let enabled =
        |value: &Option<serde_json::Value>| match value.as_ref().and_then(|value| value.get("enabled")) {
            Some(serde_json::Value::Bool(true)) => "on",
            Some(_) => "off",
            None => "absent",
        };
    let strategies = |value: &Option<serde_json::Value>| {
        value
            .as_ref()
            .and_then(|value| value.get("strategies"))
            .and_then(serde_json::Value::as_array)
            .map_or(0, Vec::len)
    };
    html! {
        article.changed {
            h3 {
                a href=(format!("/flags/{}/{}", url_escape(&changed.project), url_escape(&changed.name))) { (changed.name) }
                " " span.muted { (changed.project) " · " (changed.change) }
            }
            p {
                "Switched " (enabled(&changed.before)) " → " (enabled(&changed.after))
                "; strategies " (strategies(&changed.before)) " → " (strategies(&changed.after)) ". "
                a href=(format!("/playground?run=1&env={}&projects={}&at={}", url_escape(&answer.environment), url_escape(&changed.project), url_escape(&answer.from.at))) { "Evaluate at the start" }
                " · "
                a href=(format!("/playground?run=1&env={}&projects={}&at={}", url_escape(&answer.environment), url_escape(&changed.project), url_escape(&answer.to.at))) { "at the end" }
            }
            details.diff {
                summary { "The definition before and after" }
                div.row {
                    div { h4 { "Before" } pre.mono { (pretty(&changed.before)) } }
                    div { h4 { "After" } pre.mono { (pretty(&changed.after)) } }
                }
            }
            @if !changed.events.is_empty() { (audit::rows(&changed.events, false)) }
        }
    }
}
