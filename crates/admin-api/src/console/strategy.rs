//! `/flags/{project}/{feature}/environments/{environment}/strategies/{id}` (or `new?type=`): one
//! strategy's page. Every parameter its type declares, with an input that fits the parameter's
//! type; any number of constraints; segments; strategy variants; title; disabled. "Try it"
//! evaluates the strategy as the form stands, for a context, without saving it. Reordering and
//! deleting are posts from the flag's page. Each read and write is the API's operation.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::context_fields::types::ContextFieldOut;
use flag_admin::catalogue::features::types::{FeatureQuery, StrategyOrder, StrategyOut};
use flag_admin::catalogue::segments::types::SegmentOut;
use flag_admin::catalogue::strategies::types::StrategyRequest;
use flag_admin::catalogue::strategy_types::types::StrategyTypeOut;
use flag_admin::identity::auth::Principal;
use flag_admin::{
    AdminError, catalogue::context_fields, catalogue::features, catalogue::segments, catalogue::strategies,
    catalogue::strategy_types, delivery::playground,
};
use flag_eval::{Constraint, Variant};
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{constraints, poster, see_other, signed_in, url_escape, variants};
use crate::state::AppState;

/// Empty strategy-variant rows offered below the stored ones.
const NEW_VARIANT_ROWS: usize = 1;

/// The flag's page.
fn flag_path(project: &str, feature: &str) -> String {
    format!("/flags/{}/{}", url_escape(project), url_escape(feature))
}

/// The environment's strategies, under the flag.
fn strategies_path(project: &str, feature: &str, environment: &str) -> String {
    format!(
        "{}/environments/{}/strategies",
        flag_path(project, feature),
        url_escape(environment)
    )
}

/// A strategy as the form holds it: read from the store, or from a form that did not save.
#[derive(Debug, Clone, Default)]
struct Draft {
    kind: String,
    title: String,
    disabled: bool,
    parameters: BTreeMap<String, String>,
    constraints: Vec<Constraint>,
    segments: Vec<i32>,
    variants: Vec<Variant>,
}

impl Draft {
    fn new(kind: &str) -> Self {
        Self {
            kind: kind.to_owned(),
            ..Self::default()
        }
    }

    fn of(stored: &StrategyOut) -> Self {
        Self {
            kind: stored.name.clone(),
            title: stored.title.clone().unwrap_or_default(),
            disabled: stored.disabled,
            parameters: stored
                .parameters
                .iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
            constraints: stored.constraints.clone(),
            segments: stored
                .segments
                .iter()
                .filter_map(|&id| i32::try_from(id).ok())
                .collect(),
            variants: stored.variants.clone(),
        }
    }

    /// The draft a form describes, over the strategy it edits (whose parameters the type does
    /// not declare are kept).
    fn from_form(fields: &[(String, String)], kind: &StrategyTypeOut, base: Self) -> Self {
        let get = |name: &str| {
            fields
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.trim().to_owned())
        };
        let mut parameters = base.parameters;
        for declared in &kind.parameters {
            let value = get(&format!("p_{}", declared.name));
            if declared.parameter_type == "boolean" {
                parameters.insert(
                    declared.name.clone(),
                    if value.as_deref() == Some("true") {
                        "true"
                    } else {
                        "false"
                    }
                    .to_owned(),
                );
            } else {
                match value {
                    Some(value) if !value.is_empty() => {
                        parameters.insert(declared.name.clone(), value);
                    }
                    _ => {
                        parameters.remove(&declared.name);
                    }
                }
            }
        }
        Self {
            kind: kind.name.clone(),
            title: get("title").unwrap_or_default(),
            disabled: get("disabled").as_deref() == Some("true"),
            parameters,
            constraints: constraints::parse(fields),
            segments: fields
                .iter()
                .filter(|(key, _)| key == "segments")
                .filter_map(|(_, value)| value.parse().ok())
                .collect(),
            variants: variants::parse(fields, "sv"),
        }
    }

    /// The operation's command: over the stored strategy (keeping its place), or a new one.
    fn into_request(self, stored: Option<StrategyOut>) -> Result<StrategyRequest, AdminError> {
        let mut request = match stored {
            Some(stored) => StrategyRequest::try_from(stored)?,
            None => StrategyRequest::new(self.kind.as_str()),
        };
        request.clear_parameters();
        for (name, value) in self.parameters {
            request.set_parameter(name, value);
        }
        request.set_title(self.title);
        request.set_disabled(self.disabled);
        request.set_constraints(self.constraints);
        request.set_segments(self.segments);
        request.set_variants(self.variants);
        Ok(request)
    }
}

/// What the page needs besides the draft.
struct Catalogue {
    kind: StrategyTypeOut,
    fields: Vec<ContextFieldOut>,
    segments: Vec<SegmentOut>,
}

async fn catalogue(state: &AppState, principal: &Principal, kind: &str) -> Result<Catalogue, AdminError> {
    strategy_types::GET.admit(principal.clone())?;
    let kind = strategy_types::get(&state.app, kind.to_owned()).await?;
    context_fields::LIST.admit(principal.clone())?;
    let fields = context_fields::list(&state.app).await?;
    segments::LIST.admit(principal.clone())?;
    let segments = segments::list(&state.app).await?.segments;
    Ok(Catalogue {
        kind,
        fields,
        segments,
    })
}

/// `GET …/strategies/{id}`, or `GET …/strategies/new?type=`.
pub async fn page(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String, String, String)>,
) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let (project, feature, environment, id) = path.into_inner();
    let query = super::form_fields(request.query_string().as_bytes());
    let loaded = async {
        let place = (project.clone(), feature.clone(), environment.clone());
        if id == "new" {
            let kind = query
                .iter()
                .find(|(key, _)| key == "type")
                .map_or("flexibleRollout", |(_, value)| value.as_str());
            // The flag and environment must exist for a new strategy too.
            let reader = features::GET.admit(principal.clone())?;
            features::get(
                &state.app,
                &reader,
                (project.clone(), feature.clone()),
                FeatureQuery::default(),
            )
            .await?;
            let mut draft = Draft::new(kind);
            if kind == "flexibleRollout" {
                draft.parameters.insert("rollout".into(), "100".into());
                draft.parameters.insert("stickiness".into(), "default".into());
                draft.parameters.insert("groupId".into(), feature.clone());
            }
            Ok::<_, AdminError>((None, draft))
        } else {
            let caller = strategies::GET.admit(principal.clone())?;
            let stored = strategies::get(&state.app, &caller, place, id.clone()).await?;
            let draft = Draft::of(&stored);
            Ok((Some(id.clone()), draft))
        }
    }
    .await;
    let (id, draft) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let place = Place {
        project: &project,
        feature: &feature,
        environment: &environment,
        id: id.as_deref(),
    };
    render(&state, &principal, &place, &draft, None, None, &[]).await
}

/// Where a strategy is.
struct Place<'a> {
    project: &'a str,
    feature: &'a str,
    environment: &'a str,
    /// `None` for a new one.
    id: Option<&'a str>,
}

async fn render(
    state: &AppState,
    principal: &Principal,
    place: &Place<'_>,
    draft: &Draft,
    error: Option<&AdminError>,
    preview: Option<Markup>,
    form: &[(String, String)],
) -> HttpResponse {
    let status = error.map_or(StatusCode::OK, crate::error::status_of);
    let catalogue = match catalogue(state, principal, &draft.kind).await {
        Ok(catalogue) => catalogue,
        Err(error) => return layout::failure(&error),
    };
    let base = strategies_path(place.project, place.feature, place.environment);
    let action = match place.id {
        Some(id) => format!("{base}/{}", url_escape(id)),
        None => base.clone(),
    };
    let title = catalogue
        .kind
        .display_name
        .clone()
        .or_else(|| catalogue.kind.title.clone())
        .unwrap_or_else(|| draft.kind.clone());
    let stickiness: Vec<&str> = ["default", "userId", "sessionId", "random"]
        .into_iter()
        .chain(
            catalogue
                .fields
                .iter()
                .filter(|field| field.stickiness)
                .map(|field| field.name.as_str())
                .filter(|name| !matches!(*name, "userId" | "sessionId")),
        )
        .collect();
    // The save is shown to whoever its operation admits in this environment; "Try it" needs
    // only reading.
    let may_save = match place.id {
        Some(_) => strategies::UPDATE,
        None => strategies::ADD,
    }
    .admit_in(principal.clone(), Some(place.project))
    .is_ok_and(|caller| caller.require_in(place.environment).is_ok());
    let viewer = Viewer::of(principal);
    let body = html! {
        p { a href=(flag_path(place.project, place.feature)) { "← " (place.feature) } }
        h1 {
            (if place.id.is_some() { "Edit strategy: " } else { "New strategy: " })
            (title) " in " (place.environment)
        }
        @if let Some(description) = &catalogue.kind.description { p.muted { (description) } }
        @if let Some(error) = error { (layout::notice(error)) }
        form.card method="post" action=(action) {
            input type="hidden" name="name" value=(draft.kind);
            div.row {
                div {
                    label for="title" { "Title (optional)" }
                    input id="title" name="title" type="text" value=(draft.title);
                }
                div {
                    label {
                        input name="disabled" type="checkbox" value="true" checked[draft.disabled];
                        " Disabled: kept, but not evaluated"
                    }
                }
            }
            @if !catalogue.kind.parameters.is_empty() {
                fieldset {
                    legend { "Parameters" }
                    @for declared in &catalogue.kind.parameters {
                        @let id = format!("p-{}", declared.name);
                        @let name = format!("p_{}", declared.name);
                        @let value = draft.parameters.get(&declared.name).cloned().unwrap_or_default();
                        @let described = declared.description.as_deref().filter(|text| !text.is_empty());
                        @match declared.parameter_type.as_str() {
                            "boolean" => label {
                                input id=(id) name=(name) type="checkbox" value="true" checked[value == "true"];
                                " " (declared.name)
                            },
                            "percentage" => {
                                label for=(id) { (declared.name) " (%)" }
                                input id=(id) name=(name) type="number" min="0" max="100" step="1" value=(value)
                                    required[declared.required == Some(true)];
                            },
                            "number" => {
                                label for=(id) { (declared.name) " (a number)" }
                                input id=(id) name=(name) type="number" step="any" value=(value)
                                    required[declared.required == Some(true)];
                            },
                            "list" => {
                                label for=(id) { (declared.name) " (comma-separated)" }
                                input id=(id) name=(name) type="text" value=(value)
                                    required[declared.required == Some(true)];
                            },
                            _ if declared.name == "stickiness" => {
                                label for=(id) { (declared.name) }
                                select id=(id) name=(name) {
                                    @for choice in &stickiness {
                                        option value=(choice) selected[*choice == value] { (choice) }
                                    }
                                    @if !value.is_empty() && !stickiness.contains(&value.as_str()) {
                                        option value=(value) selected { (value) }
                                    }
                                }
                            },
                            _ => {
                                label for=(id) { (declared.name) }
                                input id=(id) name=(name) type="text" value=(value)
                                    required[declared.required == Some(true)];
                            },
                        }
                        @if let Some(text) = described { small.muted { (text) } }
                    }
                }
            }
            (constraints::editor("strategy", &draft.constraints, &catalogue.fields))
            fieldset {
                legend { "Segments: each must match too" }
                @if catalogue.segments.is_empty() {
                    p.muted { "No segments yet. " a href="/segments" { "Create one" } " to share constraints between strategies." }
                }
                @for segment in catalogue.segments.iter().filter(|segment| segment.project.as_deref().is_none_or(|project| project == place.project)) {
                    label {
                        input type="checkbox" name="segments" value=(segment.id) checked[draft.segments.contains(&segment.id)];
                        " " (segment.name)
                        @if let Some(description) = &segment.description { " " span.muted { "(" (description) ")" } }
                    }
                }
            }
            details open[!draft.variants.is_empty()] {
                summary { "Strategy variants (" (draft.variants.len()) ")" }
                p.muted { "When this strategy turns the flag on, these variants replace the flag's own." }
                (variants::rows("sv", &draft.variants, NEW_VARIANT_ROWS))
            }
            @if may_save {
                p { button type="submit" { (if place.id.is_some() { "Save the strategy" } else { "Add the strategy" }) } }
            }
            fieldset {
                legend { "Try it before saving" }
                p.muted { "Evaluates the strategy as this form stands, for the context below; nothing is saved." }
                div.row {
                    div {
                        label for="try-userId" { "userId" }
                        input id="try-userId" name="try_userId" type="text" value=(tried(form, "try_userId"));
                    }
                    div {
                        label for="try-sessionId" { "sessionId" }
                        input id="try-sessionId" name="try_sessionId" type="text" value=(tried(form, "try_sessionId"));
                    }
                }
                label for="try-properties" { "Other fields, one name=value per line" }
                textarea id="try-properties" name="try_properties" { (tried(form, "try_properties")) }
                p { button.secondary type="submit" name="preview" value="1" { "Try it" } }
                @if let Some(preview) = preview { (preview) }
            }
        }
    };
    layout::page(
        status,
        &format!("{title} in {}", place.environment),
        Some(&viewer),
        "flags",
        &body,
    )
}

/// A "Try it" value as the form sent it: it is not part of the strategy.
fn tried(fields: &[(String, String)], name: &str) -> String {
    fields
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.clone())
        .unwrap_or_default()
}

/// `POST …/strategies[/{id}]`: adds a strategy, or saves the one named; with `preview`, only
/// evaluates it.
pub async fn save(
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
    let fields = super::form_fields(&body);
    let place = (project.clone(), feature.clone(), environment.clone());
    // The stored strategy, when editing, under its read access; the refusal comes before the form
    // is read.
    let stored = match &id {
        Some(id) => {
            let stored = async {
                let caller = strategies::GET.admit(principal.clone())?;
                strategies::get(&state.app, &caller, place.clone(), id.clone()).await
            }
            .await;
            match stored {
                Ok(stored) => Some(stored),
                Err(error) => return layout::failure(&error),
            }
        }
        None => None,
    };
    let kind_name = match &stored {
        Some(stored) => stored.name.clone(),
        None => fields
            .iter()
            .find(|(key, _)| key == "name")
            .map(|(_, value)| value.trim().to_owned())
            .unwrap_or_default(),
    };
    let kind = async {
        strategy_types::GET.admit(principal.clone())?;
        strategy_types::get(&state.app, kind_name).await
    }
    .await;
    let kind = match kind {
        Ok(kind) => kind,
        Err(error) => return layout::failure(&error),
    };
    let base = stored.as_ref().map_or_else(|| Draft::new(&kind.name), Draft::of);
    let draft = Draft::from_form(&fields, &kind, base);
    let here = Place {
        project: &project,
        feature: &feature,
        environment: &environment,
        id: id.as_deref(),
    };
    if fields.iter().any(|(key, value)| key == "preview" && value == "1") {
        let shown = try_it(&state, &principal, &here, &draft, &fields).await;
        let (error, preview) = match shown {
            Ok(markup) => (None, Some(markup)),
            Err(error) => (Some(error), None),
        };
        return render(
            &state,
            &principal,
            &here,
            &draft,
            error.as_ref(),
            preview,
            &fields,
        )
        .await;
    }
    let result = async {
        let command = draft.clone().into_request(stored)?;
        match &id {
            Some(id) => {
                let caller = strategies::UPDATE.admit_in(principal.clone(), Some(&project))?;
                strategies::update(&state.app, &caller, place, id.clone(), command).await
            }
            None => {
                let caller = strategies::ADD.admit_in(principal.clone(), Some(&project))?;
                strategies::add(&state.app, &caller, place, command).await
            }
        }
    }
    .await;
    match result {
        Ok(_) => see_other(&flag_path(&project, &feature)),
        Err(error) => render(&state, &principal, &here, &draft, Some(&error), None, &fields).await,
    }
}

/// The draft's answer for the "Try it" context, in words.
async fn try_it(
    state: &AppState,
    principal: &Principal,
    place: &Place<'_>,
    draft: &Draft,
    fields: &[(String, String)],
) -> Result<Markup, AdminError> {
    let get = |name: &str| super::field(fields, name);
    let mut context = BTreeMap::new();
    for name in ["userId", "sessionId"] {
        let value = get(&format!("try_{name}"));
        if !value.is_empty() {
            context.insert(name.to_owned(), value);
        }
    }
    for line in get("try_properties").lines() {
        if let Some((name, value)) = line.split_once('=')
            && !name.trim().is_empty()
        {
            context.insert(name.trim().to_owned(), value.trim().to_owned());
        }
    }
    let caller = playground::PREVIEW_STRATEGY.admit(principal.clone())?;
    let command = draft.clone().into_request(None)?;
    let answer = playground::preview_strategy(
        &state.app,
        &caller,
        (
            place.project.to_owned(),
            place.feature.to_owned(),
            place.environment.to_owned(),
        ),
        command,
        context,
    )
    .await?;
    let mark = |held: bool| if held { "✓" } else { "✗" };
    Ok(html! {
        div.notice.ok[answer.enabled].error[!answer.enabled] role="status" id="tried" {
            strong { (if answer.enabled { "✓ On" } else { "✗ Off" }) }
            " for this context"
            @if let Some(variant) = &answer.variant { ", variant " span.mono { (variant) } }
            "."
            ul {
                @if answer.disabled { li { "The strategy is disabled, so it is skipped." } }
                @for (constraint, held) in &answer.constraints { li { (mark(*held)) " " (constraints::text(constraint)) } }
                @for (segment, held) in &answer.segments { li { (mark(*held)) " segment " (segment) } }
                @if answer.unknown { li { "The answer could not be decided for this context: a value the strategy needs is missing, or its type is unknown here." } }
                @if answer.constraints.iter().all(|(_, held)| *held) && answer.segments.iter().all(|(_, held)| *held) && !answer.disabled && !answer.enabled && !answer.unknown {
                    li { "Every constraint holds; the strategy's own parameters leave this context out." }
                }
            }
        }
    })
}

/// `POST …/strategies/{id}/move` with `to=up` or `to=down`: swaps the strategy with its
/// neighbour in evaluation order.
pub async fn move_one(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String, String, String)>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let (project, feature, environment, id) = path.into_inner();
    let up = super::form_fields(&body)
        .iter()
        .any(|(key, value)| key == "to" && value == "up");
    let result = async {
        let caller = strategies::SET_SORT_ORDER.admit(principal.clone())?;
        let place = (project.clone(), feature.clone(), environment.clone());
        let reader = strategies::LIST.admit(principal.clone())?;
        let mut order: Vec<String> = strategies::list(&state.app, &reader, place.clone())
            .await?
            .into_iter()
            .map(|strategy| strategy.id)
            .collect();
        let at = order
            .iter()
            .position(|known| *known == id)
            .ok_or_else(|| AdminError::NotFound(format!("no strategy {id} in {environment}")))?;
        let other = if up {
            at.checked_sub(1)
        } else {
            Some(at + 1).filter(|next| *next < order.len())
        };
        if let Some(other) = other {
            order.swap(at, other);
        }
        let orders = order
            .into_iter()
            .zip(0..)
            .map(|(id, sort_order)| StrategyOrder { id, sort_order })
            .collect();
        strategies::set_sort_order(&state.app, &caller, place, orders).await
    }
    .await;
    match result {
        Ok(()) => see_other(&format!(
            "{}#env-{}",
            flag_path(&project, &feature),
            url_escape(&environment)
        )),
        Err(error) => layout::failure(&error),
    }
}

/// `POST …/strategies/{id}/delete`.
pub async fn delete(
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
        Err(error) => layout::failure(&error),
    }
}
