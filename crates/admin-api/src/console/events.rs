//! `/events`: the audit log, filtered by flag, project, user, type, environment, text and days,
//! newest first, 50 to a page; each event with what it changed, path by path, before and after.
//! Every filter and page is in the address, so a view can be shared. A flag's page shows its
//! own history with the same rows.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::events::types::{EventOut, EventSearchQuery};
use flag_admin::{AdminError, catalogue::events};
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{form_fields, signed_in, url_escape};
use crate::state::AppState;

/// Events to a page.
const PAGE: i64 = 50;

/// The filters the page reads from its address, by name.
const FILTERS: [&str; 8] = [
    "feature",
    "project",
    "type",
    "createdBy",
    "environment",
    "q",
    "from",
    "to",
];

/// `GET /events`.
pub async fn page(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let query = form_fields(request.query_string().as_bytes());
    let get = |name: &str| super::field(&query, name);
    let offset: i64 = get("offset").parse().unwrap_or(0).max(0);
    let is = |name: &str| {
        let value = get(name);
        (!value.is_empty()).then(|| format!("IS:{value}"))
    };
    let search = EventSearchQuery {
        query: Some(get("q")).filter(|text| !text.is_empty()),
        feature: is("feature"),
        project: is("project"),
        event_type: is("type"),
        created_by: is("createdBy"),
        environment: is("environment"),
        from: is("from"),
        to: is("to"),
        offset: Some(offset.to_string()),
        limit: Some(PAGE.to_string()),
        ..EventSearchQuery::default()
    };
    let loaded = async {
        let caller = events::SEARCH.admit(principal.clone())?;
        let found = events::search(&state.app, &caller, search).await?;
        events::CREATORS.admit(principal.clone())?;
        let creators = events::creators(&state.app).await?;
        Ok::<_, AdminError>((found, creators))
    }
    .await;
    let (found, creators, error) = match loaded {
        Ok((found, creators)) => (Some(found), creators, None),
        Err(error @ AdminError::Validation { .. }) => (None, Vec::new(), Some(error)),
        Err(error) => return layout::failure(&error),
    };
    // This view's address with `offset` changed, the filters kept.
    let at = |offset: i64| {
        let mut parts: Vec<String> = FILTERS
            .iter()
            .filter(|name| !get(name).is_empty())
            .map(|name| format!("{name}={}", url_escape(&get(name))))
            .collect();
        if offset > 0 {
            parts.push(format!("offset={offset}"));
        }
        if parts.is_empty() {
            "/events".to_owned()
        } else {
            format!("/events?{}", parts.join("&"))
        }
    };
    let status = error.as_ref().map_or(StatusCode::OK, crate::error::status_of);
    let body = html! {
        h1 { "Audit log" }
        p.muted { "Every change, who made it and when, with the value before and after. Filters combine; the address keeps them, so a view can be shared." }
        @if let Some(error) = &error { (layout::notice(error)) }
        form.card method="get" action="/events" role="search" {
            div.row {
                div { label for="filter-feature" { "Flag" } input id="filter-feature" name="feature" type="text" value=(get("feature")); }
                div { label for="filter-project" { "Project" } input id="filter-project" name="project" type="text" value=(get("project")); }
                div { label for="filter-environment" { "Environment" } input id="filter-environment" name="environment" type="text" value=(get("environment")); }
            }
            div.row {
                div {
                    label for="filter-type" { "Type" }
                    input id="filter-type" name="type" type="text" list="event-types" value=(get("type"));
                    datalist id="event-types" {
                        @for kind in ["feature-created", "feature-updated", "feature-archived", "feature-revived", "feature-deleted",
                            "feature-environment-enabled", "feature-environment-disabled", "feature-strategy-add",
                            "feature-strategy-update", "feature-strategy-remove", "feature-environment-variants-updated",
                            "feature-tagged", "feature-untagged", "feature-stale-on", "feature-stale-off",
                            "segment-created", "segment-updated", "segment-deleted", "context-field-created",
                            "context-field-updated", "context-field-deleted", "project-created", "api-token-created",
                            "api-token-deleted", "user-created", "user-updated", "user-deleted"] {
                            option value=(kind) {}
                        }
                    }
                }
                div {
                    label for="filter-createdBy" { "Who" }
                    select id="filter-createdBy" name="createdBy" {
                        option value="" { "Anyone" }
                        @for creator in &creators {
                            option value=(creator.id) selected[get("createdBy") == creator.id.to_string()] { (creator.name) }
                        }
                    }
                }
                div { label for="filter-q" { "Text in the change" } input id="filter-q" name="q" type="search" value=(get("q")); }
            }
            div.row {
                div { label for="filter-from" { "From (day, UTC)" } input id="filter-from" name="from" type="date" value=(get("from")); }
                div { label for="filter-to" { "To (day, UTC)" } input id="filter-to" name="to" type="date" value=(get("to")); }
                button type="submit" { "Filter" }
                a.button.secondary href="/events" { "Clear" }
            }
        }
        @if let Some(found) = &found {
            p aria-live="polite" {
                (found.total) " " (if found.total == 1 { "event" } else { "events" })
                @if found.total > 0 { ", showing " (offset + 1) "–" (offset + i64::try_from(found.events.len()).unwrap_or(PAGE)) }
            }
            @if found.events.is_empty() {
                div.card { p { "No event matches. Clear a filter, or widen the days." } }
            } @else {
                (rows(&found.events, true))
            }
            nav.pager aria-label="Pages" {
                @if offset > 0 { a href=(at((offset - PAGE).max(0))) rel="prev" { "← Newer" } }
                @if offset + PAGE < found.total { a href=(at(offset + PAGE)) rel="next" { "Older →" } }
            }
        }
    };
    layout::page(
        status,
        "Audit log",
        Some(&Viewer::of(&principal)),
        "events",
        &body,
    )
}

/// Events as a table, each with its changes under a disclosure; `with_flag` adds the flag and
/// project columns (a flag's own history leaves them out).
pub fn rows(events: &[EventOut], with_flag: bool) -> Markup {
    html! {
        div.table-wrap {
            table.events {
                thead { tr {
                    th scope="col" { "When (UTC)" } th scope="col" { "Who" } th scope="col" { "What" }
                    @if with_flag { th scope="col" { "Flag" } th.optional scope="col" { "Project" } }
                    th.optional scope="col" { "Environment" }
                    // A visible heading: a visually hidden one is positioned against the page,
                    // not the table's scrolling box, and widens a phone's page.
                    th scope="col" { "Playground" }
                } }
                tbody {
                    @for event in events {
                        tr {
                            td { (event.created_at.get(..19).unwrap_or(&event.created_at).replace('T', " ")) }
                            td { (event.created_by) }
                            td {
                                @if let Some(label) = event.label.as_ref().filter(|label| **label != event.event_type) {
                                    (label) " " span.muted.mono { (event.event_type) }
                                } @else {
                                    span.mono { (event.event_type) }
                                }
                                (changes(event))
                            }
                            @if with_flag {
                                td { @if let (Some(feature), Some(project)) = (&event.feature_name, &event.project) {
                                    a href=(format!("/flags/{}/{}", url_escape(project), url_escape(feature))) { (feature) }
                                } @else { (event.feature_name.as_deref().unwrap_or("")) } }
                                td.optional { (event.project.as_deref().unwrap_or("")) }
                            }
                            td.optional { (event.environment.as_deref().unwrap_or("")) }
                            td { @if let Some(link) = evaluate_then(event) {
                                a href=(link) title="The playground against the configuration as this change left it" { "Evaluate as of this change" }
                            } }
                        }
                    }
                }
            }
        }
    }
}

/// The playground asked about `event`'s flag (its project, its environment when it names one)
/// as of the moment the event was recorded; `None` for an event about no flag. An event's time
/// is shown to the millisecond but recorded to the microsecond, so the moment asked is the next
/// millisecond: the one shown would read the configuration from before the event.
fn evaluate_then(event: &EventOut) -> Option<String> {
    event.feature_name.as_ref()?;
    let at = chrono::DateTime::parse_from_rfc3339(&event.created_at).map_or_else(
        |_| event.created_at.clone(),
        |shown| {
            (shown.to_utc() + chrono::TimeDelta::milliseconds(1))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        },
    );
    let mut link = format!("/playground?run=1&at={}", url_escape(&at));
    if let Some(project) = &event.project {
        link.push_str(&format!("&projects={}", url_escape(project)));
    }
    if let Some(environment) = &event.environment {
        link.push_str(&format!("&env={}", url_escape(environment)));
    }
    Some(link)
}

/// An event's changes, path by path: the value before struck out, the value after beside it.
fn changes(event: &EventOut) -> Markup {
    let changes = event.changes();
    let shown = |value: &serde_json::Value| match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    html! {
        @if !changes.is_empty() {
            details.diff {
                summary { (changes.len()) (if changes.len() == 1 { " change" } else { " changes" }) }
                dl {
                    @for change in &changes {
                        dt.mono { (if change.path.is_empty() { "the whole value".to_owned() } else { change.path.trim_start_matches('/').replace('/', " › ") }) }
                        dd {
                            @if let Some(before) = &change.before {
                                del aria-label="before" { span.visually-hidden { "before: " } (shown(before)) }
                            }
                            @if change.before.is_some() && change.after.is_some() { " → " }
                            @if let Some(after) = &change.after {
                                ins aria-label="after" { span.visually-hidden { "after: " } (shown(after)) }
                            }
                            @if change.after.is_none() { " " span.muted { "(removed)" } }
                            @if change.before.is_none() && !change.path.is_empty() { " " span.muted { "(added)" } }
                        }
                    }
                }
            }
        }
    }
}
