//! `/flags/{project}/{feature}`: one flag. Its strategies per environment in words, with forms
//! to add, edit and delete them; its variants per environment as weight bars, with an editor
//! whose one save writes the chosen environments through variants-batch; its parents, its
//! events and the applications using it. Each read and write is the API's operation.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::features::types::{
    FeatureDetailOut, FeatureEnvironmentOut, FeatureQuery, FeatureStrategyOut,
};
use flag_admin::catalogue::variants::types::VariantsPush;
use flag_admin::delivery::usage::types::RawQuery;
use flag_admin::identity::auth::{Access, Principal};
use flag_admin::{
    AdminError, catalogue::archive, catalogue::events, catalogue::features, catalogue::lifecycle,
    catalogue::segments, catalogue::strategies, catalogue::strategy_types, catalogue::tags,
    catalogue::variants, delivery::applications,
};
use flag_eval::Variant;
use maud::{Markup, html};

use super::events as audit;
use super::layout::{self, Viewer};
use super::life;
use super::usage as usage_chart;
use super::variants as variant_rows;
use super::{constraints, poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// Empty variant rows the editor offers below the stored ones.
const NEW_VARIANT_ROWS: usize = 2;

/// What the signed-in user may do to a flag's strategies in one environment, as the accesses
/// of the operations that do it admit them.
#[derive(Debug, Clone, Copy)]
struct StrategyWrites {
    add: bool,
    update: bool,
    delete: bool,
}

fn flag_path(project: &str, feature: &str) -> String {
    format!("/flags/{}/{}", url_escape(project), url_escape(feature))
}

/// `GET /flags/{project}/{feature}`.
pub async fn page(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String)>,
) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let (project, feature) = path.into_inner();
    let from = super::form_fields(request.query_string().as_bytes())
        .into_iter()
        .find(|(key, _)| key == "variants")
        .map(|(_, value)| value);
    render(
        &state,
        &principal,
        &project,
        &feature,
        StatusCode::OK,
        None,
        from.as_deref(),
    )
    .await
}

async fn render(
    state: &AppState,
    principal: &Principal,
    project: &str,
    feature: &str,
    status: StatusCode,
    error: Option<&AdminError>,
    from: Option<&str>,
) -> HttpResponse {
    let loaded = async {
        let reader = features::GET.admit(principal.clone())?;
        let query = FeatureQuery {
            variant_environments: Some("true".into()),
            at: None,
        };
        let detail = features::get(
            &state.app,
            &reader,
            (project.to_owned(), feature.to_owned()),
            query,
        )
        .await?;
        let reader = events::OF_FEATURE.admit(principal.clone())?;
        let history = events::of_feature(&state.app, &reader, feature.to_owned()).await?;
        applications::FEATURE_USAGE.admit(principal.clone())?;
        let usage = applications::feature_usage(&state.app, state.app.delivery(), feature.to_owned()).await?;
        applications::RAW_USAGE.admit(principal.clone())?;
        let hourly = applications::raw_usage(
            &state.app,
            state.app.delivery(),
            feature.to_owned(),
            RawQuery {
                hours_back: Some(usage_chart::HOURS.to_string()),
            },
        )
        .await?;
        strategy_types::LIST.admit(principal.clone())?;
        let types = strategy_types::list(&state.app).await?;
        segments::LIST.admit(principal.clone())?;
        let segments = segments::list(&state.app).await?;
        tags::OF_FEATURE.admit(principal.clone())?;
        tags::TYPES.admit(principal.clone())?;
        features::PARENT_OPTIONS.admit(principal.clone())?;
        let offers = life::Offers {
            tags: tags::of_feature(&state.app, feature.to_owned()).await?,
            tag_types: tags::types(&state.app).await?,
            parents: features::parent_options(&state.app, feature.to_owned()).await?,
            stages: {
                lifecycle::STAGES.admit(principal.clone())?;
                lifecycle::stages(&state.app, feature.to_owned()).await?
            },
        };
        let requests = super::change_requests::flag_card(state, principal, project, feature).await?;
        Ok::<_, AdminError>((
            detail,
            history,
            (usage, hourly),
            types,
            segments,
            (offers, requests),
        ))
    }
    .await;
    let (detail, history, (usage, hourly), types, segments, (offers, requests)) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    // Whether the operation `access` declares admits the signed-in user in `environment`.
    let may = |access: Access, environment: &str| {
        access
            .admit_in(principal.clone(), Some(&detail.project))
            .is_ok_and(|caller| caller.require_in(environment).is_ok())
    };
    let strategy_writes = |environment: &str| StrategyWrites {
        add: may(strategies::ADD, environment),
        update: may(strategies::UPDATE, environment),
        delete: may(strategies::DELETE, environment),
    };
    let may_write_variants = |environment: &str| may(variants::BATCH, environment);
    let type_names: Vec<(String, String)> = types
        .strategies
        .iter()
        .filter(|kind| !kind.deprecated)
        .map(|kind| {
            let title = kind
                .display_name
                .clone()
                .or_else(|| kind.title.clone())
                .unwrap_or_else(|| kind.name.clone());
            (kind.name.clone(), title)
        })
        .collect();
    let segment_names: BTreeMap<i64, String> = segments
        .segments
        .into_iter()
        .map(|segment| (i64::from(segment.id), segment.name))
        .collect();
    let viewer = Viewer::of(principal);
    let body = html! {
        p { a href=(format!("/flags?project={}", url_escape(project))) { "← Flags of " (project) } }
        h1 { span.mono { (detail.name) } }
        @if let Some(error) = error { (layout::notice(error)) }
        @if let Some(description) = &detail.description { p { (description) } }
        @if archive::ARCHIVE_ONE.admit_in(principal.clone(), Some(&detail.project)).is_ok() {
            form method="post" action=(format!("{}/archive", flag_path(&detail.project, &detail.name))) {
                button.danger type="submit" { "Archive this flag" }
            }
        }
        p.muted {
            "Type " (detail.feature_type)
            @if detail.stale { " · " strong { "stale" } }
            " · created " (detail.created_at.get(..10).unwrap_or(&detail.created_at))
        }
        (life::card(&detail, &offers, principal))
        (requests)
        @for environment in &detail.environments {
            (environment_section(&detail, environment, strategy_writes(&environment.name), &type_names, &segment_names))
        }
        @if detail.environments.iter().any(|environment| may_write_variants(&environment.name)) {
            (variants_editor(&detail, &may_write_variants, from))
        }
        (usage_chart::card(&hourly))
        section.card aria-labelledby="applications" {
            h2 id="applications" { "Applications using it" }
            @if usage.seen_applications.is_empty() {
                p.muted { "No SDK has reported it in the last 48 hours." }
            } @else {
                ul { @for application in &usage.seen_applications { li { (application) } } }
            }
        }
        section.card aria-labelledby="events" {
            h2 id="events" { "Changes" }
            @if history.events.is_empty() {
                p.muted { "No changes recorded." }
            } @else {
                (audit::rows(&history.events, false))
                p { a href=(format!("/events?feature={}", url_escape(&detail.name))) { "Every change of this flag in the audit log" } }
            }
        }
    };
    layout::page(status, &detail.name, Some(&viewer), "flags", &body)
}

/// The flag's page again, with why a write on it was refused.
pub(super) async fn refused(
    state: &AppState,
    principal: &Principal,
    project: &str,
    feature: &str,
    error: &AdminError,
) -> HttpResponse {
    render(
        state,
        principal,
        project,
        feature,
        crate::error::status_of(error),
        Some(error),
        None,
    )
    .await
}

/// A strategy in words: its type, its parameters, its constraints and segments.
fn strategy_text(strategy: &FeatureStrategyOut, segments: &BTreeMap<i64, String>) -> Markup {
    html! {
        strong { (strategy.title.as_deref().unwrap_or(&strategy.name)) }
        @if strategy.title.is_some() { " " span.muted { "(" (strategy.name) ")" } }
        @if strategy.disabled { " " span.state.off { "disabled" } }
        ul {
            @match strategy.name.as_str() {
                "default" => li { "On for everyone" },
                "flexibleRollout" => li {
                    (strategy.parameters.get("rollout").unwrap_or("100")) "% of "
                    (strategy.parameters.get("stickiness").unwrap_or("default")) " stickiness"
                    @if let Some(group) = strategy.parameters.get("groupId") { ", group " span.mono { (group) } }
                },
                "userWithId" => li { "Users " (strategy.parameters.get("userIds").unwrap_or("")) },
                _ => @for (name, value) in strategy.parameters.iter() { li { (name) ": " (value) } },
            }
            @for constraint in &strategy.constraints { li { "When " (constraints::text(constraint)) } }
            @for segment in &strategy.segments {
                li { "In segment " (segments.get(segment).map_or_else(|| format!("#{segment}"), Clone::clone)) }
            }
            @if !strategy.variants.is_empty() {
                li { "Variants: " (strategy.variants.iter().map(|variant| variant.name.as_str()).collect::<Vec<_>>().join(", ")) }
            }
        }
    }
}

fn environment_section(
    detail: &FeatureDetailOut,
    environment: &FeatureEnvironmentOut,
    writes: StrategyWrites,
    types: &[(String, String)],
    segments: &BTreeMap<i64, String>,
) -> Markup {
    let base = format!(
        "{}/environments/{}",
        flag_path(&detail.project, &detail.name),
        url_escape(&environment.name)
    );
    html! {
        section.card aria-labelledby=(format!("env-{}", environment.name)) {
            h2 id=(format!("env-{}", environment.name)) {
                (environment.name) " "
                span.state.on[environment.enabled].off[!environment.enabled] { (if environment.enabled { "on" } else { "off" }) }
            }
            @if environment.strategies.is_empty() {
                p.muted { "No strategies: when switched on, on for everyone." }
            }
            ol {
                @for (index, strategy) in environment.strategies.iter().enumerate() {
                    @let here = format!("{base}/strategies/{}", url_escape(&strategy.id));
                    li {
                        (strategy_text(strategy, segments))
                        div.actions {
                            a href=(here) { (if writes.update { "Edit" } else { "Details" }) }
                            @if writes.update && environment.strategies.len() > 1 {
                                @if index > 0 {
                                    form.inline method="post" action=(format!("{here}/move")) {
                                        input type="hidden" name="to" value="up";
                                        button.secondary type="submit" aria-label=(format!("Move strategy {} up", index + 1)) { "↑ Up" }
                                    }
                                }
                                @if index + 1 < environment.strategies.len() {
                                    form.inline method="post" action=(format!("{here}/move")) {
                                        input type="hidden" name="to" value="down";
                                        button.secondary type="submit" aria-label=(format!("Move strategy {} down", index + 1)) { "↓ Down" }
                                    }
                                }
                            }
                            @if writes.delete {
                                form.inline method="post" action=(format!("{here}/delete")) {
                                    button.danger type="submit" aria-label=(format!("Delete strategy {}", index + 1)) { "Delete" }
                                }
                            }
                        }
                    }
                }
            }
            @if writes.add {
                form.row method="get" action=(format!("{base}/strategies/new")) {
                    div {
                        label for=(format!("add-{}", environment.name)) { "Add a strategy in " (environment.name) }
                        select id=(format!("add-{}", environment.name)) name="type" {
                            @for (name, title) in types { option value=(name) selected[name == "flexibleRollout"] { (title) } }
                        }
                    }
                    button type="submit" { "Add…" }
                }
            }
            @if let Some(variants) = &environment.variants {
                @if !variants.is_empty() {
                    h3 { "Variants" }
                    (weight_bars(variants))
                }
            }
        }
    }
}

/// Each variant's share, as a bar with its percentage in words.
fn weight_bars(variants: &[flag_eval::Variant]) -> Markup {
    html! {
        ul.variants {
            @for variant in variants {
                @let percent = variant.weight as f64 / 10.0;
                li {
                    span.mono { (variant.name) } " " (format!("{percent:.1}")) "%"
                    @if variant.weight_type.as_deref() == Some("fix") { " (fixed)" }
                    progress.bar max="1000" value=(variant.weight)
                        aria-label=(format!("{} {percent:.1} percent", variant.name)) {
                        (format!("{percent:.1}%"))
                    }
                }
            }
        }
    }
}

fn variants_editor(
    detail: &FeatureDetailOut,
    may_write: &dyn Fn(&str) -> bool,
    from: Option<&str>,
) -> Markup {
    // The editor starts from the variants of the environment asked for (`?variants=`), else of
    // the first writable one.
    let source = detail
        .environments
        .iter()
        .filter(|environment| may_write(&environment.name))
        .find(|environment| from.is_none_or(|from| environment.name == from))
        .or_else(|| {
            detail
                .environments
                .iter()
                .find(|environment| may_write(&environment.name))
        });
    let stored: Vec<flag_eval::Variant> = source
        .and_then(|environment| environment.variants.clone())
        .unwrap_or_default();
    html! {
        section.card aria-labelledby="variants-editor" {
            h2 id="variants-editor" { "Edit variants" }
            p.muted { "Variable weights share what fixed ones leave. One save writes every environment ticked below." }
            p {
                "Start from the variants of: "
                @for environment in detail.environments.iter().filter(|environment| may_write(&environment.name)) {
                    a href=(format!("{}?variants={}#variants-editor", flag_path(&detail.project, &detail.name), url_escape(&environment.name)))
                        aria-current=[source.is_some_and(|source| source.name == environment.name).then_some("true")] {
                        (environment.name)
                    }
                    " "
                }
            }
            form method="post" action=(format!("{}/variants", flag_path(&detail.project, &detail.name))) {
                fieldset {
                    legend { "Environments" }
                    @for environment in &detail.environments {
                        @if may_write(&environment.name) {
                            label {
                                input type="checkbox" name="environments" value=(environment.name)
                                    checked[source.is_some_and(|source| source.name == environment.name)];
                                " " (environment.name)
                            }
                        }
                    }
                }
                (variant_rows::rows("v", &stored, NEW_VARIANT_ROWS))
                p { button type="submit" { "Save variants" } }
            }
        }
    }
}

/// The variants a form describes, and the environments ticked to write them to.
fn variants_form(fields: &[(String, String)]) -> (Vec<Variant>, Vec<String>) {
    let environments: Vec<String> = fields
        .iter()
        .filter(|(key, _)| key == "environments")
        .map(|(_, value)| value.clone())
        .collect();
    (variant_rows::parse(fields, "v"), environments)
}

/// `POST /flags/{project}/{feature}/variants`: one save, through variants-batch, to every
/// environment ticked.
pub async fn save_variants(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String)>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let (project, feature) = path.into_inner();
    let (chosen, environments) = variants_form(&super::form_fields(&body));
    let result = async {
        let caller = variants::BATCH.admit_in(principal.clone(), Some(&project))?;
        if environments.is_empty() {
            return Err(AdminError::invalid(
                "/environments",
                "tick at least one environment",
            ));
        }
        let push = VariantsPush::new(&chosen, environments)?;
        variants::batch_push(&state.app, &caller, project.clone(), feature.clone(), push).await
    }
    .await;
    match result {
        Ok(_) => see_other(&format!("{}#variants-editor", flag_path(&project, &feature))),
        Err(error) => refused(&state, &principal, &project, &feature, &error).await,
    }
}
