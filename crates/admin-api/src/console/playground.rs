//! `/playground`: the context form, the results as a table of flags × environments and
//! contexts, and, for any cell, why: each strategy with its constraints and segments, each
//! with its result as a symbol and a word as well as a colour, and the variant. The answer is
//! the advanced playground operation's, read as its JSON view model.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::auth::{Access, Principal};
use flag_admin::domain::Permission;
use flag_admin::playground::{self, Chunked};
use flag_admin::{AdminError, context_fields, environments};
use maud::{Markup, html};
use serde_json::{Map, Value, json};

use super::layout::{self, Viewer};
use super::{form_fields, signed_in};
use crate::state::AppState;

/// The most of an answer a page shows; a larger one asks for a narrower context.
const SHOWN_BYTES: usize = 4 << 20;

/// The context fields with a place of their own in Unleash's context; the others are
/// properties.
const TOP_LEVEL: [&str; 4] = ["userId", "sessionId", "remoteAddress", "currentTime"];

/// `GET /playground`: the form, and the answer when the form was sent (`run=1`).
pub async fn page(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let query = form_fields(request.query_string().as_bytes());
    let get = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim().to_owned())
            .unwrap_or_default()
    };
    let loaded = async {
        let known = environments::list(&state.app).await?;
        let fields = context_fields::list(&state.app).await?;
        Ok::<_, AdminError>((known, fields))
    }
    .await;
    let (known, fields) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let chosen: Vec<String> = query
        .iter()
        .filter(|(key, _)| key == "env")
        .map(|(_, value)| value.clone())
        .collect();
    let field_names: Vec<String> = fields
        .iter()
        .map(|field| field.name.clone())
        .filter(|name| name != "environment" && name != "appName")
        .collect();
    let (answer, error) = if get("run") == "1" {
        match evaluate(&state, &principal, &query, &chosen, &field_names).await {
            Ok(answer) => (Some(answer), None),
            Err(error) => (None, Some(error)),
        }
    } else {
        (None, None)
    };
    let status = error.as_ref().map_or(StatusCode::OK, crate::error::status_of);
    let viewer = Viewer::of(&principal);
    let body = html! {
        h1 { "Playground" }
        p.muted { "Give a context to see which flags are on for it, and why. Separate several values with commas to try every combination." }
        @if let Some(error) = &error { (layout::notice(error)) }
        form.card method="get" action="/playground" {
            input type="hidden" name="run" value="1";
            fieldset {
                legend { "Environments" }
                @for environment in &known.environments {
                    label {
                        input type="checkbox" name="env" value=(environment.name)
                            checked[chosen.contains(&environment.name) || (chosen.is_empty() && environment.name == "development")];
                        " " (environment.name)
                    }
                }
            }
            div.row {
                div {
                    label for="appName" { "appName" }
                    input id="appName" name="appName" type="text" value=(if get("appName").is_empty() { "playground".to_owned() } else { get("appName") });
                }
                div {
                    label for="projects" { "Projects, comma-separated (all when empty)" }
                    input id="projects" name="projects" type="text" value=(get("projects"));
                }
            }
            div.row {
                @for name in &field_names {
                    div {
                        label for=(format!("field-{name}")) { (name) }
                        input id=(format!("field-{name}")) name=(format!("ctx_{name}")) type="text" value=(get(&format!("ctx_{name}")));
                    }
                }
            }
            label for="custom" { "Other properties, one name=value per line" }
            textarea id="custom" name="custom" { (get("custom")) }
            p { button type="submit" { "Evaluate" } }
        }
        @if let Some(answer) = &answer { (results(answer)) }
    };
    layout::page(status, "Playground", Some(&viewer), "playground", &body)
}

/// The advanced playground's answer to the form, read back as JSON.
async fn evaluate(
    state: &AppState,
    principal: &Principal,
    query: &[(String, String)],
    environments: &[String],
    field_names: &[String],
) -> Result<Value, AdminError> {
    let caller = Access::ReadIn(Permission::Playground).admit(principal.clone())?;
    let get = |name: &str| {
        query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim().to_owned())
            .unwrap_or_default()
    };
    let mut context = Map::new();
    context.insert("appName".into(), json!(get("appName")));
    let mut properties = Map::new();
    for name in field_names {
        let value = get(&format!("ctx_{name}"));
        if value.is_empty() {
            continue;
        }
        if TOP_LEVEL.contains(&name.as_str()) {
            context.insert(name.clone(), json!(value));
        } else {
            properties.insert(name.clone(), json!(value));
        }
    }
    for line in get("custom").lines() {
        if let Some((name, value)) = line.split_once('=') {
            let (name, value) = (name.trim(), value.trim());
            if !name.is_empty() {
                properties.insert(name.to_owned(), json!(value));
            }
        }
    }
    if !properties.is_empty() {
        context.insert("properties".into(), Value::Object(properties));
    }
    let projects: Vec<String> = get("projects")
        .split(',')
        .map(str::trim)
        .filter(|project| !project.is_empty())
        .map(str::to_owned)
        .collect();
    let body = json!({
        "environments": if environments.is_empty() { vec!["development".to_owned()] } else { environments.to_vec() },
        "projects": if projects.is_empty() { json!("*") } else { json!(projects) },
        "context": context,
    });
    let mut answer = playground::advanced(&state.app, &caller, body).await?;
    let bytes = state
        .app
        .cpu()
        .run(move || {
            let mut bytes = Vec::new();
            while let Some(chunk) = answer.next_chunk() {
                bytes.extend_from_slice(&chunk?);
                if bytes.len() > SHOWN_BYTES {
                    return Err(AdminError::bad_request(
                        "the answer is too large to show here: choose fewer environments, projects or values, \
                         or ask /api/admin/playground/advanced",
                    ));
                }
            }
            Ok(bytes)
        })
        .await??;
    serde_json::from_slice(&bytes)
        .map_err(|error| AdminError::Internal(format!("the playground's answer: {error}")))
}

/// A result as a symbol and a word, never a colour alone.
fn verdict(result: &Value) -> Markup {
    match result {
        Value::Bool(true) => html! { span.verdict.yes { "✓ true" } },
        Value::Bool(false) => html! { span.verdict.no { "✗ false" } },
        _ => html! { span.verdict.unknown { "? unknown" } },
    }
}

/// One context's values, as `userId=1, region=eu`.
fn context_text(context: &Value) -> String {
    let mut parts = Vec::new();
    if let Value::Object(fields) = context {
        for (name, value) in fields {
            match value {
                Value::Object(properties) => {
                    for (name, value) in properties {
                        parts.push(format!("{name}={}", value.as_str().unwrap_or_default()));
                    }
                }
                Value::String(text) if name != "appName" && name != "environment" => {
                    parts.push(format!("{name}={text}"));
                }
                _ => {}
            }
        }
    }
    if parts.is_empty() {
        "(no fields)".into()
    } else {
        parts.join(", ")
    }
}

fn constraint_line(constraint: &Value) -> Markup {
    let values = constraint["values"]
        .as_array()
        .filter(|values| !values.is_empty())
        .map(|values| {
            values
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .or_else(|| constraint["value"].as_str().map(str::to_owned))
        .unwrap_or_default();
    html! {
        li {
            (verdict(&constraint["result"])) " "
            @if constraint["inverted"] == true { "not " }
            span.mono { (constraint["contextName"].as_str().unwrap_or_default()) }
            " " (constraint["operator"].as_str().unwrap_or_default()) " " (values)
        }
    }
}

/// Why one flag is on or off for one context in one environment.
fn explanation(entry: &Value) -> Markup {
    let strategies = entry["strategies"]["data"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    html! {
        ul.tree {
            @if entry["hasUnsatisfiedDependency"] == true {
                li { span.verdict.no { "✗" } " a parent flag's condition is not met" }
            }
            @if entry["isEnabledInCurrentEnvironment"] == false {
                li { span.verdict.no { "✗" } " switched off in this environment" }
            }
            @if strategies.is_empty() {
                li.muted { "No strategies: on for everyone when switched on." }
            }
            @for strategy in &strategies {
                li {
                    (verdict(&strategy["result"]["enabled"])) " strategy "
                    strong { (strategy["title"].as_str().unwrap_or_else(|| strategy["name"].as_str().unwrap_or_default())) }
                    @if strategy["disabled"] == true { " " span.muted { "(disabled, skipped)" } }
                    ul {
                        @if let Some(parameters) = strategy["parameters"].as_object() {
                            @for (name, value) in parameters {
                                li.muted { (name) " = " (value.as_str().unwrap_or_default()) }
                            }
                        }
                        @for constraint in strategy["constraints"].as_array().into_iter().flatten() {
                            (constraint_line(constraint))
                        }
                        @for segment in strategy["segments"].as_array().into_iter().flatten() {
                            li {
                                (verdict(&segment["result"])) " segment "
                                strong { (segment["name"].as_str().unwrap_or_default()) }
                                ul {
                                    @for constraint in segment["constraints"].as_array().into_iter().flatten() {
                                        (constraint_line(constraint))
                                    }
                                }
                            }
                        }
                    }
                }
            }
            li {
                "Variant: "
                span.mono { (entry["variant"]["name"].as_str().unwrap_or("disabled")) }
                @if entry["variant"]["enabled"] == false { " " span.muted { "(none given)" } }
            }
        }
    }
}

fn results(answer: &Value) -> Markup {
    let features = answer["features"].as_array().cloned().unwrap_or_default();
    html! {
        section aria-labelledby="results" {
            h2 id="results" { "Results" }
            @if features.is_empty() {
                p { "No flags in the chosen projects." }
            }
            div.table-wrap {
                table {
                    thead {
                        tr {
                            th scope="col" { "Flag" }
                            th scope="col" { "Environment and context: result (open one to see why)" }
                        }
                    }
                    tbody {
                        @for feature in &features {
                            tr {
                                th scope="row" { span.mono { (feature["name"].as_str().unwrap_or_default()) } }
                                td {
                                    @if let Some(environments) = feature["environments"].as_object() {
                                        @for (environment, entries) in environments {
                                            @for entry in entries.as_array().into_iter().flatten() {
                                                details.cell {
                                                    summary {
                                                        (verdict(&entry["isEnabled"])) " "
                                                        (environment) " · " (context_text(&entry["context"]))
                                                    }
                                                    (explanation(entry))
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
