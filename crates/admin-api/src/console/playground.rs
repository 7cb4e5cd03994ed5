//! `/playground`: the context form, the results as a table of flags × environments and
//! contexts, and, for any cell, why: each strategy with its constraints and segments, each
//! with its result as a symbol and a word as well as a colour, and the variant. The answer is
//! the advanced playground operation's, read back as its typed view model.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::delivery::playground;
use flag_admin::delivery::playground::types::{PlaygroundContext, PlaygroundQuery, shown};
use flag_admin::identity::auth::Principal;
use flag_admin::runtime::domain::Timestamp;
use flag_admin::{AdminError, catalogue::context_fields, catalogue::environments};
use maud::{Markup, PreEscaped, html};

use super::layout::{self, Viewer};
use super::{form_fields, signed_in};
use crate::state::AppState;

/// The most of an answer a page shows; a larger one asks for a narrower context.
const SHOWN_BYTES: usize = 4 << 20;

/// Flags shown on one page of results.
const PAGE: usize = 100;

/// The `appName` a context has when the form leaves it empty.
const DEFAULT_APP_NAME: &str = "playground";

/// `GET /playground`: the form, and the answer when the form was sent (`run=1`).
pub async fn page(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let query = form_fields(request.query_string().as_bytes());
    let get = |name: &str| super::field(&query, name);
    let loaded = async {
        environments::LIST.admit(principal.clone())?;
        let known = environments::list(&state.app).await?;
        context_fields::LIST.admit(principal.clone())?;
        let fields = context_fields::list(&state.app).await?;
        Ok::<_, AdminError>((known, fields))
    }
    .await;
    let (known, fields) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let page: usize = get("page").parse().unwrap_or(0).min(1_000_000);
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
        match evaluate(&state, &principal, &query, &chosen, &field_names, page).await {
            Ok(answer) => (Some(answer), None),
            Err(error) => (None, Some(error)),
        }
    } else {
        (None, None)
    };
    let status = error.as_ref().map_or(StatusCode::OK, crate::error::status_of);
    // This question's address on another page of flags: a shared link asks the same.
    let at = |page: usize| {
        let mut kept: Vec<String> = query
            .iter()
            .filter(|(key, _)| key != "page")
            .map(|(key, value)| format!("{}={}", super::url_escape(key), super::url_escape(value)))
            .collect();
        kept.push(format!("page={page}"));
        format!("/playground?{}", kept.join("&"))
    };
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
                            checked[chosen.contains(&environment.name) || (chosen.is_empty() && environment.enabled)];
                        " " (environment.name)
                    }
                }
            }
            div.row {
                div {
                    label for="appName" { "appName" }
                    input id="appName" name="appName" type="text" value=(if get("appName").is_empty() { DEFAULT_APP_NAME.to_owned() } else { get("appName") });
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
            div.row {
                div {
                    label for="at" { "As of (UTC; empty for now)" }
                    input id="at" name="at" type="datetime-local" step="0.001" value=(get("at"));
                }
            }
            p { button type="submit" { "Evaluate" } }
        }
        @if let Some(answer) = &answer {
            @if let Some(as_of) = &answer.0.as_of {
                p.card role="status" {
                    "As of " strong { (as_of.at) } ": the configuration after audit event " (as_of.revision)
                    " (" a href=(format!("/history?from={}", super::url_escape(&as_of.at))) { "what changed since" } ")."
                }
            }
            (results(&answer.0))
            @let total = answer.1;
            @if total > PAGE {
                nav.row aria-label="Pages of results" {
                    span.muted { "Flags " (page * PAGE + 1) "–" (((page + 1) * PAGE).min(total)) " of " (total) }
                    @if page > 0 { a href=(at(page - 1)) rel="prev" { "Previous flags" } }
                    @if (page + 1) * PAGE < total { a href=(at(page + 1)) rel="next" { "Next flags" } }
                }
            }
        }
    };
    layout::page(status, "Playground", Some(&viewer), "playground", &body)
}

/// The form's "As of": empty for now; a date-time field's value (no zone) is UTC.
fn as_of(text: &str) -> Result<Option<Timestamp>, AdminError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    Timestamp::read(&zoned(text))
        .map(Some)
        .map_err(|message| AdminError::invalid("/at", format!("As of: {message}")))
}

/// A moment from a form: a date-time field gives `2026-11-30T14:03`, with seconds and their
/// fraction when set, and no zone, which is UTC here; a time with a zone is kept.
pub(super) fn zoned(text: &str) -> String {
    let text = text.trim();
    let time = text.split_once('T').map_or("", |(_, time)| time);
    if time.ends_with('Z') || time.contains('+') || time.contains('-') {
        text.to_owned()
    } else if time.len() == 5 {
        format!("{text}:00Z")
    } else {
        format!("{text}Z")
    }
}

/// The advanced playground's answer to the form.
async fn evaluate(
    state: &AppState,
    principal: &Principal,
    query: &[(String, String)],
    environments: &[String],
    field_names: &[String],
    page: usize,
) -> Result<(shown::Answer, usize), AdminError> {
    let caller = playground::ADVANCED.admit(principal.clone())?;
    let get = |name: &str| super::field(query, name);
    let app_name = get("appName");
    let mut context = PlaygroundContext::new(if app_name.is_empty() {
        DEFAULT_APP_NAME.to_owned()
    } else {
        app_name
    });
    for name in field_names {
        let value = get(&format!("ctx_{name}"));
        if !value.is_empty() {
            context.set(name.as_str(), value);
        }
    }
    for line in get("custom").lines() {
        if let Some((name, value)) = line.split_once('=') {
            let (name, value) = (name.trim(), value.trim());
            if !name.is_empty() {
                context.set_property(name, value);
            }
        }
    }
    let projects = super::comma_list(&get("projects"));
    if environments.is_empty() {
        return Err(AdminError::invalid(
            "/environments",
            "tick at least one environment",
        ));
    }
    let request = PlaygroundQuery {
        environments: environments.to_vec(),
        projects: (!projects.is_empty()).then_some(projects),
        context,
        at: as_of(&get("at"))?,
    };
    playground::advanced_shown(
        &state.app,
        state.app.delivery(),
        &caller,
        &request,
        page * PAGE..(page + 1) * PAGE,
        SHOWN_BYTES,
    )
    .await?
    .ok_or_else(|| {
        AdminError::bad_request(
            "the answer is too large to show here: choose fewer environments, projects or values, \
                 or ask /api/admin/playground/advanced",
        )
    })
}

/// A result as a symbol and a word, never a colour alone; `None` is unknown.
fn verdict(result: Option<bool>) -> Markup {
    match result {
        Some(true) => PreEscaped(r#"<span class="verdict yes">✓ true</span>"#.to_owned()),
        Some(false) => PreEscaped(r#"<span class="verdict no">✗ false</span>"#.to_owned()),
        None => PreEscaped(r#"<span class="verdict unknown">? unknown</span>"#.to_owned()),
    }
}

/// One context's values, as `userId=1, region=eu`.
fn context_text(context: &[(String, String)]) -> String {
    let parts: Vec<String> = context
        .iter()
        .filter(|(name, _)| name != "appName" && name != "environment")
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if parts.is_empty() {
        "(no fields)".into()
    } else {
        parts.join(", ")
    }
}

fn constraint_line(constraint: &shown::Constraint) -> Markup {
    let values = if constraint.values.is_empty() {
        constraint.value.as_deref().unwrap_or_default().to_owned()
    } else {
        constraint.values.join(", ")
    };
    html! {
        li {
            (verdict(Some(constraint.result))) " "
            @if constraint.inverted == Some(true) { "not " }
            span.mono { (constraint.context_name) }
            " " (constraint.operator) " " (values)
        }
    }
}

/// Why one flag is on or off for one context in one environment.
fn explanation(entry: &shown::Entry) -> Markup {
    html! {
        ul.tree {
            @if entry.has_unsatisfied_dependency {
                li { span.verdict.no { "✗" } " a parent flag's condition is not met" }
            }
            @if !entry.is_enabled_in_current_environment {
                li { span.verdict.no { "✗" } " switched off in this environment" }
            }
            @if entry.strategies.data.is_empty() {
                li.muted { "No strategies: on for everyone when switched on." }
            }
            @for strategy in &entry.strategies.data {
                li {
                    (verdict(strategy.result.enabled)) " strategy "
                    strong { (strategy.title.as_deref().unwrap_or(&strategy.name)) }
                    @if strategy.disabled { " " span.muted { "(disabled, skipped)" } }
                    ul {
                        @for (name, value) in &strategy.parameters {
                            li.muted { (name) " = " (value) }
                        }
                        @for constraint in &strategy.constraints {
                            (constraint_line(constraint))
                        }
                        @for segment in &strategy.segments {
                            li {
                                (verdict(Some(segment.result))) " segment "
                                strong { (segment.name) }
                                ul {
                                    @for constraint in &segment.constraints {
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
                span.mono { (entry.variant.name) }
                @if !entry.variant.enabled { " " span.muted { "(none given)" } }
            }
        }
    }
}

fn results(answer: &shown::Answer) -> Markup {
    // The columns: each environment with each context, in the answer's order (the same for
    // every flag), named from the first flag.
    let columns: Vec<String> = answer
        .features
        .first()
        .map(|feature| {
            feature
                .environments
                .iter()
                .flat_map(|(environment, entries)| {
                    entries
                        .iter()
                        .map(move |entry| format!("{environment} · {}", context_text(&entry.context)))
                })
                .collect()
        })
        .unwrap_or_default();
    html! {
        section aria-labelledby="results" {
            h2 id="results" { "Results" }
            p.muted { "Open a result to see why." }
            @if answer.features.is_empty() {
                p { "No flags in the chosen projects." }
            }
            div.table-wrap {
                table {
                    thead {
                        tr {
                            th scope="col" { "Flag" }
                            @for column in &columns { th scope="col" { (column) } }
                        }
                    }
                    tbody {
                        @for feature in &answer.features {
                            tr {
                                th scope="row" { span.mono { (feature.name) } }
                                @for (column, entry) in columns.iter().zip(feature.environments.values().flatten()) {
                                    td {
                                        details.cell data-context=(column) {
                                            summary {
                                                (verdict(Some(entry.is_enabled)))
                                                span.visually-hidden { " for " (column) }
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
