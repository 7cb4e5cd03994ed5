//! SDK usage as pictures, drawn on the server: a flag's yes and no counts per environment over
//! the last 48 hours as an SVG chart (yes above the line, no below it, so colour is never the
//! only signal) with its numbers as a table for anyone who cannot see it; and `/applications`,
//! the applications with their instances and SDK versions, outdated SDKs flagged, and flags SDKs
//! asked for that do not exist.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::delivery::usage::types::{ApplicationsQuery, RawUsageOut};
use flag_admin::{AdminError, delivery::applications};
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{signed_in, url_escape};
use crate::state::AppState;

/// Hours a chart shows.
pub const HOURS: usize = 48;
/// Chart size, in SVG units.
const WIDTH: usize = HOURS * 10;
const HALF: f64 = 50.0;

/// One hour of one environment: its start and its counts over every application.
#[derive(Debug, Clone, Default)]
struct Hour {
    start: String,
    yes: i64,
    no: i64,
}

/// Per environment, its hours oldest first.
fn by_environment(usage: &RawUsageOut) -> BTreeMap<String, Vec<Hour>> {
    let mut sums: BTreeMap<String, BTreeMap<String, (i64, i64)>> = BTreeMap::new();
    for row in &usage.data {
        let hour = sums
            .entry(row.environment.clone())
            .or_default()
            .entry(row.timestamp.clone())
            .or_default();
        hour.0 += row.yes;
        hour.1 += row.no;
    }
    sums.into_iter()
        .map(|(environment, hours)| {
            let hours = hours
                .into_iter()
                .map(|(start, (yes, no))| Hour { start, yes, no })
                .collect();
            (environment, hours)
        })
        .collect()
}

/// The flag's usage card: a chart per environment that reported, or what to do when none did.
pub fn card(usage: &RawUsageOut) -> Markup {
    let environments = by_environment(usage);
    html! {
        section.card aria-labelledby="usage" {
            h2 id="usage" { "Usage, last 48 hours" }
            @if environments.is_empty() {
                p.muted { "No SDK has reported this flag in the last 48 hours. SDKs send their counts every minute or so; check that they reach this server with a token for this project." }
            }
            @for (environment, hours) in &environments {
                (chart(environment, hours))
            }
        }
    }
}

fn chart(environment: &str, hours: &[Hour]) -> Markup {
    let yes: i64 = hours.iter().map(|hour| hour.yes).sum();
    let no: i64 = hours.iter().map(|hour| hour.no).sum();
    let peak = hours
        .iter()
        .map(|hour| hour.yes.max(hour.no))
        .max()
        .unwrap_or(0)
        .max(1);
    #[expect(clippy::cast_precision_loss, reason = "a bar's height, to the pixel")]
    let height = |count: i64| count as f64 / peak as f64 * (HALF - 2.0);
    let id = format!("usage-{environment}");
    let summary =
        format!("{environment}: {yes} yes and {no} no in the last 48 hours; the busiest hour had {peak}.");
    html! {
        figure.usage {
            figcaption id=(format!("{id}-caption")) {
                strong { (environment) } ": " (yes) " yes, " (no) " no"
            }
            svg role="img" aria-labelledby=(format!("{id}-title")) viewBox=(format!("0 0 {WIDTH} {}", HALF * 2.0))
                preserveAspectRatio="none" class="chart" {
                title id=(format!("{id}-title")) { (summary) }
                line.axis x1="0" x2=(WIDTH) y1=(HALF) y2=(HALF) {}
                @for (index, hour) in hours.iter().enumerate() {
                    @let x = index * 10 + 1;
                    @if hour.yes > 0 {
                        rect.yes x=(x) y=(format!("{:.1}", HALF - height(hour.yes))) width="8" height=(format!("{:.1}", height(hour.yes))) {
                            title { (hour.start) ": " (hour.yes) " yes" }
                        }
                    }
                    @if hour.no > 0 {
                        rect.no x=(x) y=(HALF) width="8" height=(format!("{:.1}", height(hour.no))) {
                            title { (hour.start) ": " (hour.no) " no" }
                        }
                    }
                }
            }
            div.ticks aria-hidden="true" { span { "48 h ago" } span { "now" } }
            p.legend.muted { span.key.yes { "▲ yes (on)" } " above the line, " span.key.no { "▼ no (off)" } " below; tallest bar " (peak) "." }
            details {
                summary { "The numbers" }
                div.table-wrap {
                    table {
                        thead { tr { th scope="col" { "Hour (UTC)" } th scope="col" { "Yes" } th scope="col" { "No" } } }
                        tbody {
                            @for hour in hours.iter().rev().filter(|hour| hour.yes > 0 || hour.no > 0) {
                                tr { td { (hour.start.get(..16).unwrap_or(&hour.start).replace('T', " ")) } td { (hour.yes) } td { (hour.no) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `GET /applications`.
pub async fn applications_page(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let loaded = async {
        applications::LIST.admit(principal.clone())?;
        let query = ApplicationsQuery {
            limit: Some("1000".into()),
            ..ApplicationsQuery::default()
        };
        let list = applications::list(&state.app, state.app.delivery(), query).await?;
        applications::OUTDATED_SDKS.admit(principal.clone())?;
        let outdated = applications::outdated_sdks(&state.app, None).await?;
        applications::UNKNOWN_FLAGS.admit(principal.clone())?;
        let unknown = applications::unknown_flags(&state.app, state.app.delivery()).await?;
        applications::GET.admit(principal.clone())?;
        let mut details = Vec::with_capacity(list.applications.len());
        for application in list.applications.iter().take(100) {
            details.push(
                applications::get(&state.app, state.app.delivery(), application.app_name.clone()).await?,
            );
        }
        Ok::<_, AdminError>((list, outdated, unknown, details))
    }
    .await;
    let (list, outdated, unknown, details) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let outdated_versions: Vec<&str> = outdated.sdks.iter().map(|sdk| sdk.sdk_version.as_str()).collect();
    let body = html! {
        h1 { "Applications" }
        p.muted { "What SDKs told this server in the last two days: who they are, where they run and which SDK they use." }
        @if !outdated.sdks.is_empty() {
            div.notice.error role="status" {
                strong { "Outdated SDKs: " }
                @for sdk in &outdated.sdks {
                    span.mono { (sdk.sdk_version) } " in " (sdk.applications.join(", ")) ". "
                }
                "Upgrade them: older SDKs miss features and fixes."
            }
        }
        @if details.len() < list.applications.len() {
            p.muted { "The first " (details.len()) " of " (list.total) " applications, by name." }
        }
        @if list.applications.is_empty() {
            div.card { p { "No application has registered yet. Point an SDK at this server with a backend or frontend token; it shows up here within a minute." } }
        }
        @for application in &details {
            section.card aria-labelledby=(format!("app-{}", application.app_name)) {
                h2 id=(format!("app-{}", application.app_name)) { (application.app_name) }
                @if let Some(description) = &application.description { p { (description) } }
                @if application.instances.is_empty() {
                    p.muted { "No instance seen recently." }
                } @else {
                    div.table-wrap {
                        table {
                            thead { tr { th scope="col" { "Instance" } th scope="col" { "Environment" } th scope="col" { "SDK" } th.optional scope="col" { "Last seen (UTC)" } } }
                            tbody {
                                @for instance in &application.instances {
                                    tr {
                                        td.mono { (instance.instance_id) }
                                        td { (instance.environment) }
                                        td {
                                            (instance.sdk_version.as_deref().unwrap_or("unknown"))
                                            @if instance.sdk_version.as_deref().is_some_and(|version| outdated_versions.contains(&version)) {
                                                " " strong.state.off { "outdated" }
                                            }
                                        }
                                        td.optional { (instance.last_seen.get(..16).unwrap_or(&instance.last_seen).replace('T', " ")) }
                                    }
                                }
                            }
                        }
                    }
                }
                @if !application.seen_toggles.is_empty() {
                    p { "Flags it asked for: " (application.seen_toggles.len()) }
                }
            }
        }
        section.card aria-labelledby="unknown" {
            h2 id="unknown" { "Flags SDKs asked for that do not exist" }
            @if unknown.unknown_flags.is_empty() {
                p.muted { "None in the last 24 hours." }
            } @else {
                ul {
                    @for flag in &unknown.unknown_flags {
                        li {
                            span.mono { (flag.name) } " last asked for " (flag.last_seen_at.get(..16).unwrap_or(&flag.last_seen_at).replace('T', " "))
                            " · " a href=(format!("/flags?q={}", url_escape(&flag.name))) { "search the flags" }
                        }
                    }
                }
            }
        }
    };
    layout::page(
        StatusCode::OK,
        "Applications",
        Some(&Viewer::of(&principal)),
        "applications",
        &body,
    )
}
