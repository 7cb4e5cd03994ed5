//! `/flags/{project}/{feature}`: one flag. Its strategies per environment in words, with forms
//! to add, edit and delete them; its variants per environment as weight bars, with an editor
//! whose one save writes the chosen environments through variants-batch; its parents, its
//! events and the applications using it. Each read and write is the API's operation.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::features::types::{
    FeatureDetailOut, FeatureEnvironmentOut, FeatureQuery, FeatureStrategyOut, StrategyOut,
};
use flag_admin::catalogue::strategies::types::StrategyRequest;
use flag_admin::catalogue::variants::types::VariantsPush;
use flag_admin::identity::auth::{Access, Principal};
use flag_admin::{
    AdminError, catalogue::archive, catalogue::events, catalogue::features, catalogue::segments,
    catalogue::strategies, catalogue::strategy_types, catalogue::variants, delivery::applications,
};
use flag_eval::model::Override;
use flag_eval::{Payload, Variant};
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// Constraint rows a strategy form offers.
const CONSTRAINT_ROWS: usize = 3;
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
        strategy_types::LIST.admit(principal.clone())?;
        let types = strategy_types::list(&state.app).await?;
        segments::LIST.admit(principal.clone())?;
        let segments = segments::list(&state.app).await?;
        Ok::<_, AdminError>((detail, history, usage, types, segments))
    }
    .await;
    let (detail, history, usage, types, segments) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    // Whether the operation `access` declares admits the signed-in user in `environment`.
    let may = |access: Access, environment: &str| {
        access
            .admit(principal.clone())
            .is_ok_and(|caller| caller.require_in(environment).is_ok())
    };
    let strategy_writes = |environment: &str| StrategyWrites {
        add: may(strategies::ADD, environment),
        update: may(strategies::UPDATE, environment),
        delete: may(strategies::DELETE, environment),
    };
    let may_write_variants = |environment: &str| may(variants::BATCH, environment);
    let type_names: Vec<String> = types
        .strategies
        .iter()
        .filter(|kind| !kind.deprecated)
        .map(|kind| kind.name.clone())
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
        @if archive::ARCHIVE_ONE.admit(principal.clone()).is_ok() {
            form method="post" action=(format!("{}/archive", flag_path(&detail.project, &detail.name))) {
                button.danger type="submit" { "Archive this flag" }
            }
        }
        p.muted {
            "Type " (detail.feature_type)
            @if detail.stale { " · stale" }
            " · created " (detail.created_at.get(..10).unwrap_or(&detail.created_at))
        }
        @if !detail.dependencies.is_empty() || !detail.children.is_empty() {
            section.card aria-labelledby="dependencies" {
                h2 id="dependencies" { "Dependencies" }
                @for parent in &detail.dependencies {
                    p { "Needs " span.mono { (parent.feature) } " to be "
                        (if parent.enabled { "enabled" } else { "disabled" })
                        @if !parent.variants.is_empty() { " with variant " (parent.variants.join(" or ")) }
                    }
                }
                @if !detail.children.is_empty() {
                    p { "Flags that depend on it: " (detail.children.join(", ")) }
                }
            }
        }
        @for environment in &detail.environments {
            (environment_section(&detail, environment, strategy_writes(&environment.name), &type_names, &segment_names))
        }
        @if detail.environments.iter().any(|environment| may_write_variants(&environment.name)) {
            (variants_editor(&detail, &may_write_variants, from))
        }
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
                div.table-wrap {
                    table {
                        thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "Who" } th scope="col" { "What" } th.optional scope="col" { "Environment" } } }
                        tbody {
                            @for event in history.events.iter().take(50) {
                                tr {
                                    td { (event.created_at.get(..19).unwrap_or(&event.created_at).replace('T', " ")) }
                                    td { (event.created_by) }
                                    td { (event.event_type) }
                                    td.optional { (event.environment.as_deref().unwrap_or("")) }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::page(status, &detail.name, Some(&viewer), "flags", &body)
}

/// The flag's page again, with why a write on it was refused.
async fn refused(
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

/// A constraint in words: `region is one of eu, us`, `not (plan contains pro)`.
fn constraint_text(constraint: &flag_eval::Constraint) -> String {
    let values = match &constraint.value {
        Some(value) if constraint.values.is_empty() => value.clone(),
        _ => constraint.values.join(", "),
    };
    let operator = match constraint.operator.as_str() {
        "IN" => "is one of",
        "NOT_IN" => "is not one of",
        "STR_CONTAINS" => "contains",
        "STR_STARTS_WITH" => "starts with",
        "STR_ENDS_WITH" => "ends with",
        "NUM_EQ" => "=",
        "NUM_GT" => ">",
        "NUM_GTE" => "≥",
        "NUM_LT" => "<",
        "NUM_LTE" => "≤",
        "DATE_AFTER" => "is after",
        "DATE_BEFORE" => "is before",
        "SEMVER_EQ" => "is version",
        "SEMVER_GT" => "is a version above",
        "SEMVER_LT" => "is a version below",
        other => other,
    };
    let case = if constraint.case_insensitive == Some(true) {
        " (any case)"
    } else {
        ""
    };
    let text = format!("{} {operator} {values}{case}", constraint.context_name);
    if constraint.inverted == Some(true) {
        format!("not ({text})")
    } else {
        text
    }
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
            @for constraint in &strategy.constraints { li { "When " (constraint_text(constraint)) } }
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
    types: &[String],
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
                @for strategy in &environment.strategies {
                    li {
                        (strategy_text(strategy, segments))
                        @if writes.update || writes.delete {
                            details {
                                summary { "Edit" }
                                @if writes.update {
                                    (strategy_form(&base, &environment.name, Some(strategy), &strategy.name, types))
                                }
                                @if writes.delete {
                                    form method="post" action=(format!("{base}/strategies/{}/delete", url_escape(&strategy.id))) {
                                        button.danger type="submit" { "Delete this strategy" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if writes.add {
                details {
                    summary { "Add a strategy" }
                    (strategy_form(&base, &environment.name, None, "flexibleRollout", types))
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

fn strategy_form(
    base: &str,
    environment: &str,
    strategy: Option<&FeatureStrategyOut>,
    kind: &str,
    types: &[String],
) -> Markup {
    let id = strategy.map_or_else(|| format!("new-{environment}"), |strategy| strategy.id.clone());
    let action = match strategy {
        Some(strategy) => format!("{base}/strategies/{}", url_escape(&strategy.id)),
        None => format!("{base}/strategies"),
    };
    let parameter = |name: &str| {
        strategy
            .and_then(|strategy| strategy.parameters.get(name))
            .unwrap_or_default()
            .to_owned()
    };
    let field = |name: &str| format!("{id}-{name}");
    html! {
        form method="post" action=(action) {
            div.row {
                div {
                    label for=(field("name")) { "Type" }
                    select id=(field("name")) name="name" {
                        @for name in types { option value=(name) selected[name == kind] { (name) } }
                    }
                }
                div {
                    label for=(field("rollout")) { "Rollout % (flexibleRollout)" }
                    input id=(field("rollout")) name="rollout" type="number" min="0" max="100"
                        value=(if parameter("rollout").is_empty() { "100".to_owned() } else { parameter("rollout") });
                }
                div {
                    label for=(field("stickiness")) { "Stickiness (flexibleRollout)" }
                    input id=(field("stickiness")) name="stickiness" type="text"
                        value=(if parameter("stickiness").is_empty() { "default".to_owned() } else { parameter("stickiness") });
                }
            }
            label for=(field("userIds")) { "User ids, comma-separated (userWithId)" }
            input id=(field("userIds")) name="userIds" type="text" value=(parameter("userIds"));
            fieldset {
                legend { "Constraints: all must hold" }
                @for row in 0..CONSTRAINT_ROWS {
                    @let constraint = strategy.and_then(|strategy| strategy.constraints.get(row));
                    div.row {
                        div {
                            label for=(field(&format!("c{row}-context"))) { "Context field" }
                            input id=(field(&format!("c{row}-context"))) name=(format!("c{row}_context")) type="text"
                                value=(constraint.map_or("", |constraint| constraint.context_name.as_str()));
                        }
                        div {
                            label for=(field(&format!("c{row}-operator"))) { "Operator" }
                            select id=(field(&format!("c{row}-operator"))) name=(format!("c{row}_operator")) {
                                @for operator in flag_eval::Operator::ALL.map(flag_eval::Operator::name) {
                                    option value=(operator) selected[constraint.is_some_and(|constraint| constraint.operator == operator)] { (operator) }
                                }
                            }
                        }
                        div {
                            label for=(field(&format!("c{row}-values"))) { "Values, comma-separated" }
                            input id=(field(&format!("c{row}-values"))) name=(format!("c{row}_values")) type="text"
                                value=(constraint.map_or_else(String::new, |constraint| match &constraint.value {
                                    Some(value) if constraint.values.is_empty() => value.clone(),
                                    _ => constraint.values.join(","),
                                }));
                        }
                        div {
                            label for=(field(&format!("c{row}-inverted"))) {
                                input id=(field(&format!("c{row}-inverted"))) name=(format!("c{row}_inverted")) type="checkbox" value="true"
                                    checked[constraint.is_some_and(|constraint| constraint.inverted == Some(true))];
                                " Negate"
                            }
                        }
                    }
                }
            }
            p { button type="submit" { (if strategy.is_some() { "Save the strategy" } else { "Add the strategy" }) } }
        }
    }
}

/// The strategy a form describes, as the operation's typed command. An edit starts from the
/// stored strategy (`stored`), so what the form does not show (segments, variants, title, other
/// parameters, constraints past its rows, letter case) is kept.
fn strategy_request(
    fields: &[(String, String)],
    stored: Option<StrategyOut>,
) -> Result<StrategyRequest, AdminError> {
    let get = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim().to_owned())
            .unwrap_or_default()
    };
    let kind = get("name");
    let mut request = match stored {
        Some(stored) => StrategyRequest::try_from(stored)?,
        None => StrategyRequest::new(kind.as_str()),
    };
    // Another type's parameters mean nothing to this one.
    if request.name() != kind {
        request.clear_parameters();
    }
    match kind.as_str() {
        "flexibleRollout" => {
            let or = |value: String, default: &str| {
                if value.is_empty() {
                    default.to_owned()
                } else {
                    value
                }
            };
            request.set_parameter("rollout", or(get("rollout"), "100"));
            request.set_parameter("stickiness", or(get("stickiness"), "default"));
        }
        "userWithId" => request.set_parameter("userIds", get("userIds")),
        _ => {}
    }
    request.set_name(kind);
    let stored = request.constraints().to_vec();
    let mut constraints = Vec::new();
    for row in 0..CONSTRAINT_ROWS {
        let context = get(&format!("c{row}_context"));
        if context.is_empty() {
            continue;
        }
        let values: Vec<String> = get(&format!("c{row}_values"))
            .split(',')
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .collect();
        let operator = get(&format!("c{row}_operator"));
        let mut constraint = stored.get(row).cloned().unwrap_or_default();
        constraint.context_name = context;
        constraint.inverted = Some(get(&format!("c{row}_inverted")) == "true");
        if flag_eval::Operator::parse(&operator).is_some_and(|operator| !operator.takes_list()) {
            constraint.value = Some(values.first().cloned().unwrap_or_default());
            constraint.values = Vec::new();
        } else {
            constraint.values = values;
            constraint.value = None;
        }
        constraint.operator = operator;
        constraints.push(constraint);
    }
    constraints.extend(stored.into_iter().skip(CONSTRAINT_ROWS));
    request.set_constraints(constraints);
    Ok(request)
}

/// `POST /flags/{project}/{feature}/environments/{environment}/strategies[/{id}]`: adds a
/// strategy, or saves the one named.
pub async fn save_strategy(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<Vec<String>>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let path = path.into_inner();
    let (project, feature, environment) = match path.as_slice() {
        [project, feature, environment, ..] => (project.clone(), feature.clone(), environment.clone()),
        _ => return layout::failure(&AdminError::NotFound("no such page".into())),
    };
    let id = path.get(3).cloned();
    let result = async {
        let place = (project.clone(), feature.clone(), environment.clone());
        match id {
            Some(id) => {
                let caller = strategies::UPDATE.admit(principal.clone())?;
                // The stored strategy is read as part of the update, under its access, so that a
                // refusal comes before the form is read.
                strategies::GET.admit(principal.clone())?;
                let stored = strategies::get(&state.app, &caller, place.clone(), id.clone()).await?;
                let request = strategy_request(&super::form_fields(&body), Some(stored))?;
                strategies::update(&state.app, &caller, place, id, request).await
            }
            None => {
                let caller = strategies::ADD.admit(principal.clone())?;
                let request = strategy_request(&super::form_fields(&body), None)?;
                strategies::add(&state.app, &caller, place, request).await
            }
        }
    }
    .await;
    match result {
        Ok(_) => see_other(&flag_path(&project, &feature)),
        Err(error) => refused(&state, &principal, &project, &feature, &error).await,
    }
}

/// `POST …/strategies/{id}/delete`.
pub async fn delete_strategy(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String, String, String)>,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let (project, feature, environment, id) = path.into_inner();
    let result = async {
        let caller = strategies::DELETE.admit(principal.clone())?;
        strategies::delete(
            &state.app,
            &caller,
            (project.clone(), feature.clone(), environment),
            id,
        )
        .await
    }
    .await;
    match result {
        Ok(_) => see_other(&flag_path(&project, &feature)),
        Err(error) => refused(&state, &principal, &project, &feature, &error).await,
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
    let rows = stored.len() + NEW_VARIANT_ROWS;
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
                @for row in 0..rows {
                    @let variant = stored.get(row);
                    fieldset {
                        legend { "Variant " (row + 1) }
                        div.row {
                            div {
                                label for=(format!("v{row}-name")) { "Name" }
                                input id=(format!("v{row}-name")) name=(format!("v{row}_name")) type="text"
                                    value=(variant.map_or("", |variant| variant.name.as_str()));
                            }
                            div {
                                label for=(format!("v{row}-type")) { "Weight" }
                                select id=(format!("v{row}-type")) name=(format!("v{row}_weightType")) {
                                    option value="variable" selected[variant.is_none_or(|variant| variant.weight_type.as_deref() != Some("fix"))] { "variable" }
                                    option value="fix" selected[variant.is_some_and(|variant| variant.weight_type.as_deref() == Some("fix"))] { "fixed" }
                                }
                            }
                            div {
                                label for=(format!("v{row}-percent")) { "Fixed %" }
                                input id=(format!("v{row}-percent")) name=(format!("v{row}_percent")) type="number" min="0" max="100" step="0.1"
                                    value=(variant.filter(|variant| variant.weight_type.as_deref() == Some("fix"))
                                        .map(|variant| format!("{:.1}", variant.weight as f64 / 10.0)).unwrap_or_default());
                            }
                        }
                        div.row {
                            div {
                                label for=(format!("v{row}-payload-type")) { "Payload type" }
                                select id=(format!("v{row}-payload-type")) name=(format!("v{row}_payloadType")) {
                                    @for kind in ["", "string", "json", "csv", "number"] {
                                        option value=(kind) selected[variant.and_then(|variant| variant.payload.as_ref()).map_or("", |payload| payload.payload_type.as_str()) == kind] {
                                            (if kind.is_empty() { "none" } else { kind })
                                        }
                                    }
                                }
                            }
                            div {
                                label for=(format!("v{row}-payload")) { "Payload" }
                                input id=(format!("v{row}-payload")) name=(format!("v{row}_payload")) type="text"
                                    value=(variant.and_then(|variant| variant.payload.as_ref()).map_or("", |payload| payload.value.as_str()));
                            }
                        }
                        input type="hidden" name=(format!("v{row}_stickiness"))
                            value=(variant.and_then(|variant| variant.stickiness.as_deref()).unwrap_or("default"));
                        label for=(format!("v{row}-overrides")) { "Overrides: field=value,value; field=value" }
                        input id=(format!("v{row}-overrides")) name=(format!("v{row}_overrides")) type="text"
                            value=(variant.map_or_else(String::new, |variant| variant.overrides.iter()
                                .map(|rule| format!("{}={}", rule.context_name, rule.values.join(",")))
                                .collect::<Vec<_>>().join("; ")));
                    }
                }
                p { button type="submit" { "Save variants" } }
            }
        }
    }
}

/// The variants a form describes, and the environments ticked to write them to.
fn variants_form(fields: &[(String, String)]) -> (Vec<Variant>, Vec<String>) {
    let mut by_name: BTreeMap<&str, &str> = BTreeMap::new();
    for (key, value) in fields {
        by_name.insert(key, value);
    }
    let get = |key: String| by_name.get(key.as_str()).map_or("", |value| value.trim());
    let environments: Vec<String> = fields
        .iter()
        .filter(|(key, _)| key == "environments")
        .map(|(_, value)| value.clone())
        .collect();
    let mut variants = Vec::new();
    for row in 0.. {
        if !by_name.contains_key(format!("v{row}_name").as_str()) {
            break;
        }
        let name = get(format!("v{row}_name"));
        if name.is_empty() {
            continue;
        }
        let fixed = get(format!("v{row}_weightType")) == "fix";
        let stickiness = match get(format!("v{row}_stickiness")) {
            "" => "default",
            stickiness => stickiness,
        };
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a percentage of at most 100, in tenths"
        )]
        let weight = if fixed {
            let percent: f64 = get(format!("v{row}_percent")).parse().unwrap_or(-1.0);
            (percent * 10.0).round() as i64
        } else {
            0
        };
        let payload_type = get(format!("v{row}_payloadType"));
        let payload = (!payload_type.is_empty()).then(|| Payload {
            payload_type: payload_type.to_owned(),
            value: get(format!("v{row}_payload")).to_owned(),
        });
        let overrides = get(format!("v{row}_overrides"))
            .split(';')
            .filter_map(|rule| rule.split_once('='))
            .map(|(field, values)| Override {
                context_name: field.trim().to_owned(),
                values: values
                    .split(',')
                    .map(str::trim)
                    .filter(|value| !value.is_empty())
                    .map(str::to_owned)
                    .collect(),
            })
            .collect();
        variants.push(Variant {
            name: name.to_owned(),
            weight,
            weight_type: Some(if fixed { "fix" } else { "variable" }.to_owned()),
            stickiness: Some(stickiness.to_owned()),
            payload,
            overrides,
        });
    }
    (variants, environments)
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
        let caller = variants::BATCH.admit(principal.clone())?;
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
