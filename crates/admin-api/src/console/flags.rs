//! `/flags`: a project's flags with one switch per environment, search by name, and creating a
//! flag. The list is the flag search operation's answer; a switch is the API's switch operation.

use actix_web::http::StatusCode;
use actix_web::http::header::{ACCEPT, LOCATION};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::features::types::{BatchFeatures, CreateFeature, SwitchQuery};
use flag_admin::catalogue::search::types::{SearchOut, SearchQuery};
use flag_admin::identity::auth::{Access, Caller, Principal};
use flag_admin::runtime::domain::{FeatureType, ResourceName};
use flag_admin::{
    AdminError, catalogue::archive, catalogue::features, catalogue::projects, catalogue::search,
};
use maud::{Markup, html};
use serde::{Deserialize, Serialize};

use super::layout::{self, Viewer};
use super::{poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// Flags shown on one page.
const PAGE: usize = 100;

/// The list's query: the project, words in flag names, and the page.
#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    project: Option<String>,
    q: Option<String>,
    page: Option<usize>,
    /// `1`: the project's archived flags.
    archived: Option<String>,
    /// Only flags with this tag, `type:value`.
    tag: Option<String>,
}

/// The project choice that searches every project.
const EVERY_PROJECT: &str = "*";

/// The new flag's fields.
#[derive(Debug, Deserialize)]
pub struct CreateForm {
    project: String,
    name: String,
    #[serde(rename = "type")]
    feature_type: Option<FeatureType>,
    description: Option<String>,
}

/// A switch's field: the state to set.
#[derive(Debug, Deserialize)]
pub struct SwitchForm {
    enabled: String,
    /// The list to go back to.
    back: Option<String>,
}

/// A switch's answer to a script: the state set.
#[derive(Debug, Serialize)]
struct Switched {
    enabled: bool,
}

/// A switch's refusal to a script: what the page would say.
#[derive(Debug, Serialize)]
struct Refused {
    message: String,
}

/// The caller admitted by `access`, an operation's declaration, in `project` (where project
/// roles count), when the policy admits them.
fn admitted(access: Access, principal: &Principal, project: &str) -> Option<Caller> {
    access.admit_in(principal.clone(), Some(project)).ok()
}

/// `GET /flags`.
pub async fn list(
    state: web::Data<AppState>,
    request: HttpRequest,
    query: web::Query<ListQuery>,
) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    render(&state, &principal, query.into_inner(), StatusCode::OK, None, None).await
}

async fn render(
    state: &AppState,
    principal: &Principal,
    query: ListQuery,
    status: StatusCode,
    error: Option<&AdminError>,
    typed: Option<&CreateForm>,
) -> HttpResponse {
    let projects = async {
        projects::NAMES.admit(principal.clone())?;
        projects::names(&state.app).await
    }
    .await;
    let projects = match projects {
        Ok(projects) => projects,
        Err(error) => return layout::failure(&error),
    };
    let project = query
        .project
        .filter(|project| project == EVERY_PROJECT || projects.iter().any(|(id, _)| id == project))
        .or_else(|| projects.first().map(|(id, _)| id.clone()))
        .unwrap_or_else(|| "default".into());
    let words = query.q.unwrap_or_default();
    let tag = query.tag.unwrap_or_default().trim().to_owned();
    let every = project == EVERY_PROJECT;
    let archived = query.archived.as_deref() == Some("1");
    // Far past the last page is simply empty.
    let page = query.page.unwrap_or(0).min(1_000_000);
    let search = SearchQuery {
        query: Some(words.clone()).filter(|words| !words.trim().is_empty()),
        project: (!every).then(|| format!("IS:{project}")),
        tag: (!tag.is_empty()).then(|| format!("INCLUDE:{tag}")),
        offset: Some((page * PAGE).to_string()),
        limit: Some(PAGE.to_string()),
        sort_by: Some("name".into()),
        sort_order: Some("asc".into()),
        archived: archived.then(|| "IS:true".into()),
        ..SearchQuery::default()
    };
    let found = async {
        search::SEARCH.admit(principal.clone())?;
        search::search(&state.app, search).await
    }
    .await;
    let found = match found {
        Ok(found) => found,
        Err(error) => return layout::failure(&error),
    };
    let may_create = admitted(features::CREATE, principal, &project).is_some();
    // This list's address on page `page`, its filters kept.
    let at = |page: usize| {
        let mut address = format!("/flags?project={}", url_escape(&project));
        if !words.is_empty() {
            address.push_str(&format!("&q={}", url_escape(&words)));
        }
        if !tag.is_empty() {
            address.push_str(&format!("&tag={}", url_escape(&tag)));
        }
        if page > 0 {
            address.push_str(&format!("&page={page}"));
        }
        address
    };
    let back = at(page);
    let viewer = Viewer::of(principal);
    let body = html! {
        h1 { "Flags" }
        @if let Some(error) = error { (layout::notice(error)) }
        form.card.row method="get" action="/flags" role="search" {
            div {
                label for="project" { "Project" }
                select id="project" name="project" {
                    @for (id, name) in &projects {
                        option value=(id) selected[*id == project] { (name) }
                    }
                    option value=(EVERY_PROJECT) selected[every] { "All projects" }
                }
            }
            div {
                label for="q" { "Search by name" }
                input id="q" name="q" type="search" value=(words);
            }
            div {
                label for="tag" { "Tag (type:value)" }
                input id="tag" name="tag" type="search" value=(tag);
            }
            button type="submit" { "Show" }
        }
        p {
            @if archived {
                a href=(format!("/flags?project={}", url_escape(&project))) { "Back to the live flags" }
            } @else {
                a href=(format!("/flags?project={}&archived=1", url_escape(&project))) { "Archived flags" }
            }
        }
        @if archived {
            (archived_table(principal, &found))
        } @else {
            (table(principal, &found, &back, every, may_create && !every))
        }
        @if page > 0 || found.total > (page + 1) * PAGE {
            nav.row aria-label="Pages" {
                @if page > 0 { a href=(at(page - 1)) { "Previous page" } }
                @if found.total > (page + 1) * PAGE { a href=(at(page + 1)) { "Next page" } }
            }
        }
        @if may_create && !archived && !every {
            (create_form(&project, typed))
        }
    };
    layout::page(status, "Flags", Some(&viewer), "flags", &body)
}

fn table(principal: &Principal, found: &SearchOut, back: &str, every: bool, may_create: bool) -> Markup {
    // The columns: every environment any flag shown has, in display order; flags of projects
    // that do not use one leave its cell empty.
    let mut environments: Vec<(i32, &str)> = Vec::new();
    for environment in found.features.iter().flat_map(|feature| &feature.environments) {
        if !environments.iter().any(|(_, name)| *name == environment.name) {
            environments.push((environment.sort_order, environment.name.as_str()));
        }
    }
    environments.sort_unstable();
    let environments: Vec<&str> = environments.into_iter().map(|(_, name)| name).collect();
    html! {
        p.muted { (found.total) (if found.total == 1 { " flag" } else { " flags" }) }
        @if found.features.is_empty() {
            div.card {
                p { "No flag matches." }
                @if may_create { p { "Create one with the form below; it starts switched off in every environment." } }
            }
        } @else {
            div.table-wrap {
                table {
                    thead {
                        tr {
                            th scope="col" { "Flag" }
                            @if every { th scope="col" { "Project" } }
                            th.optional scope="col" { "Type" }
                            th.optional scope="col" { "Last used by an SDK" }
                            @for environment in &environments { th scope="col" { (environment) } }
                        }
                    }
                    tbody {
                        @for feature in &found.features {
                            tr {
                                th scope="row" {
                                    a.mono href=(format!("/flags/{}/{}", url_escape(&feature.project), url_escape(&feature.name))) { (feature.name) }
                                    @if feature.stale { " " span.muted { "(stale)" } }
                                    @if let Some(description) = &feature.description {
                                        br; span.muted { (description) }
                                    }
                                }
                                @if every { td { (feature.project) } }
                                td.optional { (feature.feature_type) }
                                td.optional {
                                    @match feature.environments.iter().filter_map(|environment| environment.last_seen_at.as_ref()).max() {
                                        Some(seen) => time datetime=(seen) { (seen.get(..16).unwrap_or(seen).replace('T', " ")) " UTC" },
                                        None => span.muted { "never" },
                                    }
                                }
                                @for column in &environments {
                                    td {
                                        @match feature.environments.iter().find(|environment| environment.name == *column) {
                                            Some(environment) => (switch_form(principal, &feature.project, &feature.name, &environment.name, environment.enabled, back)),
                                            None => span.muted { "not in its project" },
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

fn archived_table(principal: &Principal, found: &SearchOut) -> Markup {
    html! {
        p.muted { (found.total) (if found.total == 1 { " archived flag" } else { " archived flags" }) }
        ul {
            @for feature in &found.features {
                @let may_revive = admitted(archive::REVIVE_MANY, principal, &feature.project).is_some();
                @let may_delete = admitted(archive::DELETE_MANY, principal, &feature.project).is_some();
                li {
                    span.mono { (feature.name) }
                    " " span.muted { "archived " (feature.archived_at.as_deref().unwrap_or("").get(..10).unwrap_or("")) }
                    @if may_revive {
                        form method="post" action=(format!("/flags/{}/{}/revive", url_escape(&feature.project), url_escape(&feature.name))) {
                            button.secondary type="submit" aria-label=(format!("Revive {}", feature.name)) { "Revive" }
                        }
                    }
                    @if may_delete {
                        form method="post" action=(format!("/flags/{}/{}/delete", url_escape(&feature.project), url_escape(&feature.name))) {
                            button.danger type="submit" aria-label=(format!("Delete {} for good", feature.name)) { "Delete for good" }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /flags/{project}/{feature}/archive`, `…/revive`, and `…/delete` (an archived flag, for good).
pub async fn archive(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String, String)>,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let (project, feature, action) = path.into_inner();
    let result = match action.as_str() {
        "archive" => match archive::ARCHIVE_ONE.admit_in(principal, Some(&project)) {
            Ok(caller) => archive::archive_one(&state.app, &caller, project.clone(), feature).await,
            Err(error) => Err(error),
        },
        // By the project's batch operations, which hold to the project that admitted the
        // caller, as the API's project routes do.
        "revive" => match archive::REVIVE_MANY.admit_in(principal, Some(&project)) {
            Ok(caller) => {
                let request = BatchFeatures {
                    features: vec![feature],
                };
                archive::revive_many(&state.app, &caller, project.clone(), request).await
            }
            Err(error) => Err(error),
        },
        "delete" => match archive::DELETE_MANY.admit_in(principal, Some(&project)) {
            Ok(caller) => {
                let request = BatchFeatures {
                    features: vec![feature],
                };
                archive::delete_many(&state.app, &caller, project.clone(), request).await
            }
            Err(error) => Err(error),
        },
        _ => Err(AdminError::NotFound("no such page".into())),
    };
    match result {
        Ok(()) if action == "archive" => see_other(&format!("/flags?project={}", url_escape(&project))),
        Ok(()) => see_other(&format!("/flags?project={}&archived=1", url_escape(&project))),
        Err(error) => layout::failure(&error),
    }
}

/// One environment's switch: a form for whoever may switch it there, the state for anyone else.
fn switch_form(
    principal: &Principal,
    project: &str,
    feature: &str,
    environment: &str,
    enabled: bool,
    back: &str,
) -> Markup {
    let may_switch = admitted(features::SWITCH_WITH, principal, project)
        .is_some_and(|caller| caller.require_in(environment).is_ok());
    let label = format!("{feature} in {environment}");
    html! {
        @if may_switch {
            form.toggle.switch method="post"
                action=(format!("/flags/{}/{}/environments/{}", url_escape(project), url_escape(feature), url_escape(environment))) {
                input type="hidden" name="enabled" value=(if enabled { "false" } else { "true" });
                input type="hidden" name="back" value=(back);
                button type="submit" aria-pressed=(enabled.to_string()) aria-label=(label) {
                    (if enabled { "On" } else { "Off" })
                }
            }
        } @else {
            span.state.on[enabled].off[!enabled] aria-label=(label) { (if enabled { "On" } else { "Off" }) }
        }
    }
}

fn create_form(project: &str, typed: Option<&CreateForm>) -> Markup {
    let chosen = typed.and_then(|typed| typed.feature_type).unwrap_or_default();
    html! {
        section.card aria-labelledby="create-title" {
            h2 id="create-title" { "Create a flag" }
            form method="post" action="/flags" {
                input type="hidden" name="project" value=(project);
                div.row {
                    div {
                        label for="new-name" { "Name" }
                        input id="new-name" name="name" type="text" required maxlength="100"
                            pattern="[A-Za-z0-9~_.\\-]+" value=(typed.map_or("", |typed| typed.name.as_str()));
                    }
                    div {
                        label for="new-type" { "Type" }
                        select id="new-type" name="type" {
                            @for kind in FeatureType::ALL {
                                option value=(kind.as_str()) selected[kind == chosen] { (kind.as_str()) }
                            }
                        }
                    }
                }
                label for="new-description" { "Description" }
                input id="new-description" name="description" type="text"
                    value=(typed.and_then(|typed| typed.description.as_deref()).unwrap_or(""));
                p { button type="submit" { "Create" } }
            }
        }
    }
}

/// `POST /flags`: creates a flag, then shows the project's list.
pub async fn create(
    state: web::Data<AppState>,
    request: HttpRequest,
    fields: web::Form<CreateForm>,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let fields = fields.into_inner();
    let result = async {
        let caller = features::CREATE.admit_in(principal.clone(), Some(&fields.project))?;
        let name = ResourceName::try_from(fields.name.as_str())
            .map_err(|message| AdminError::invalid("/name", message))?;
        let request = CreateFeature {
            name,
            feature_type: fields.feature_type.unwrap_or_default(),
            description: fields.description.clone().filter(|text| !text.trim().is_empty()),
            impression_data: false,
        };
        features::create(&state.app, &caller, fields.project.clone(), request).await
    }
    .await;
    match result {
        Ok(_) => see_other(&format!(
            "/flags?project={}&q={}",
            url_escape(&fields.project),
            url_escape(&fields.name)
        )),
        Err(error) => {
            let query = ListQuery {
                project: Some(fields.project.clone()),
                ..ListQuery::default()
            };
            render(
                &state,
                &principal,
                query,
                crate::error::status_of(&error),
                Some(&error),
                Some(&fields),
            )
            .await
        }
    }
}

/// `POST /flags/{project}/{feature}/environments/{environment}`: switches a flag on or off there.
/// A script's request (`Accept: application/json`) gets the new state; a form post goes back to
/// the list.
pub async fn switch(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String, String)>,
    fields: web::Form<SwitchForm>,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let enabled = fields.enabled == "true";
    let result = async {
        let caller = features::SWITCH_WITH.admit_in(principal.clone(), Some(&path.0))?;
        features::switch_with(
            &state.app,
            &caller,
            path.into_inner(),
            enabled,
            SwitchQuery::default(),
        )
        .await
    }
    .await;
    let wants_json = request
        .headers()
        .get(ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.contains("application/json"));
    match (result, wants_json) {
        (Ok(()), true) => HttpResponse::Ok().json(Switched { enabled }),
        (Ok(()), false) => HttpResponse::SeeOther()
            .insert_header((LOCATION, super::local_path(fields.back.as_deref())))
            .finish(),
        (Err(error), true) => HttpResponse::build(crate::error::status_of(&error)).json(Refused {
            message: layout::message(&error),
        }),
        (Err(error), false) => layout::failure(&error),
    }
}
