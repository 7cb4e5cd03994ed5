//! `/projects`: the projects, and making one; `/projects/{id}`: a project's environments, each
//! switched on or off for it, with the SDK tokens that reach it there and a link to its flags.
//! Each read and write is the API's operation.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::projects::types::{CreateProject, ProjectEnvironment};
use flag_admin::identity::auth::Principal;
use flag_admin::runtime::domain::ResourceName;
use flag_admin::{AdminError, catalogue::environments, catalogue::projects};
use maud::html;

use super::layout::{self, Viewer};
use super::{field, form_fields, poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// `GET /projects`.
pub async fn list(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    render_list(&state, &principal, None, &[]).await
}

async fn render_list(
    state: &AppState,
    principal: &Principal,
    error: Option<&AdminError>,
    typed: &[(String, String)],
) -> HttpResponse {
    let loaded = async {
        projects::NAMES.admit(principal.clone())?;
        projects::names(&state.app).await
    }
    .await;
    let names = match loaded {
        Ok(names) => names,
        Err(error) => return layout::failure(&error),
    };
    let may_create = projects::CREATE.admit(principal.clone()).is_ok();
    let status = error.map_or(StatusCode::OK, crate::error::status_of);
    let body = html! {
        h1 { "Projects" }
        p.muted { "A project groups flags, and chooses the environments they live in." }
        @if let Some(error) = error { (layout::notice(error)) }
        ul.cards {
            @for (id, name) in &names {
                li { a href=(format!("/projects/{}", url_escape(id))) { (name) } " " span.muted.mono { (id) } }
            }
        }
        @if may_create {
            form.card method="post" action="/projects" {
                h2 { "New project" }
                div.row {
                    div {
                        label for="project-name" { "Name" }
                        input id="project-name" name="name" type="text" required value=(field(typed, "name"));
                    }
                    div {
                        label for="project-id" { "Id (made from the name when empty)" }
                        input id="project-id" name="id" type="text" value=(field(typed, "id"));
                    }
                }
                label for="project-description" { "Description" }
                input id="project-description" name="description" type="text" value=(field(typed, "description"));
                p { button type="submit" { "Create the project" } }
            }
        }
    };
    layout::page(
        status,
        "Projects",
        Some(&Viewer::of(principal)),
        "projects",
        &body,
    )
}

/// `POST /projects`.
pub async fn create(state: web::Data<AppState>, request: HttpRequest, body: web::Bytes) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let fields = form_fields(&body);
    let result = async {
        let caller = projects::CREATE.admit(principal.clone())?;
        let id = field(&fields, "id");
        let id = if id.is_empty() {
            None
        } else {
            Some(
                ResourceName::try_from(id.as_str())
                    .map_err(|problem| AdminError::invalid("/id", format!("the id {problem}")))?,
            )
        };
        let description = field(&fields, "description");
        let command = CreateProject {
            id,
            name: field(&fields, "name"),
            description: (!description.is_empty()).then_some(description),
            environments: None,
        };
        projects::create(&state.app, &caller, command).await
    }
    .await;
    match result {
        Ok(made) => see_other(&format!("/projects/{}", url_escape(&made.id))),
        Err(error) => render_list(&state, &principal, Some(&error), &fields).await,
    }
}

/// `GET /projects/{id}`.
pub async fn page(state: web::Data<AppState>, request: HttpRequest, path: web::Path<String>) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    render(&state, &principal, &path.into_inner(), None).await
}

async fn render(
    state: &AppState,
    principal: &Principal,
    id: &str,
    error: Option<&AdminError>,
) -> HttpResponse {
    let loaded = async {
        projects::GET.admit(principal.clone())?;
        let project = projects::get(&state.app, id.to_owned()).await?;
        environments::LIST.admit(principal.clone())?;
        let known = environments::list(&state.app).await?;
        projects::TOKEN_COUNTS.admit(principal.clone())?;
        let tokens = projects::token_counts(&state.app, id.to_owned()).await?;
        let access = super::teams::access_section(state, principal, id).await?;
        Ok::<_, AdminError>((project, known, tokens, access))
    }
    .await;
    let (project, known, tokens, access) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let may_enable = projects::ENABLE_ENVIRONMENT
        .admit_in(principal.clone(), Some(id))
        .is_ok();
    let may_disable = projects::DISABLE_ENVIRONMENT
        .admit_in(principal.clone(), Some(id))
        .is_ok();
    let every = tokens.get("*").copied().unwrap_or(0);
    let status = error.map_or(StatusCode::OK, crate::error::status_of);
    let body = html! {
        p { a href="/projects" { "← Projects" } }
        h1 { (project.name) " " span.muted.mono { (project.id) } }
        @if let Some(description) = &project.description { p { (description) } }
        @if let Some(error) = error { (layout::notice(error)) }
        p {
            a href=(format!("/flags?project={}", url_escape(&project.id))) {
                (project.features.len()) (if project.features.len() == 1 { " flag" } else { " flags" })
            }
            " · created " (project.created_at.get(..10).unwrap_or(&project.created_at))
            " · " a href=(format!("/projects/{}/change-requests", url_escape(&project.id))) { "Change requests" }
        }
        section.card aria-labelledby="environments" {
            h2 id="environments" { "Environments" }
            p.muted { "Flags of this project live in the environments switched on here. SDK tokens count those for this project or for every project." }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Environment" } th scope="col" { "In this project" } th scope="col" { "SDK tokens" } } }
                    tbody {
                        @for environment in &known.environments {
                            @let on = project.environments.iter().any(|used| used.environment == environment.name);
                            tr {
                                th scope="row" {
                                    (environment.name) " " span.muted { "(" (environment.environment_type) ")" }
                                    @if !environment.enabled { " " span.muted { "disabled everywhere" } }
                                }
                                td {
                                    span.state.on[on].off[!on] { (if on { "on" } else { "off" }) }
                                    @if (on && may_disable) || (!on && may_enable) {
                                        form.inline method="post" action=(format!("/projects/{}/environments", url_escape(&project.id))) {
                                            input type="hidden" name="environment" value=(environment.name);
                                            input type="hidden" name="enabled" value=(if on { "false" } else { "true" });
                                            " " button.secondary type="submit" aria-label=(format!("{} {} in {}", if on { "Switch off" } else { "Switch on" }, environment.name, project.id)) {
                                                (if on { "Switch off" } else { "Switch on" })
                                            }
                                        }
                                    }
                                }
                                td { (tokens.get(&environment.name).copied().unwrap_or(0) + every) }
                            }
                        }
                    }
                }
            }
        }
        (access)
    };
    layout::page(
        status,
        &project.name,
        Some(&Viewer::of(principal)),
        "projects",
        &body,
    )
}

/// `POST /projects/{id}/environments` with `environment` and `enabled`.
pub async fn environment(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let project = path.into_inner();
    let fields = form_fields(&body);
    let name = field(&fields, "environment");
    let result = async {
        if field(&fields, "enabled") == "true" {
            let caller = projects::ENABLE_ENVIRONMENT.admit_in(principal.clone(), Some(&project))?;
            let environment = ResourceName::try_from(name.as_str()).map_err(|problem| {
                AdminError::invalid("/environment", format!("the environment {problem}"))
            })?;
            let request = ProjectEnvironment {
                environment,
                change_requests_enabled: None,
                default_strategy: None,
            };
            projects::enable_environment(&state.app, &caller, project.clone(), request).await
        } else {
            let caller = projects::DISABLE_ENVIRONMENT.admit_in(principal.clone(), Some(&project))?;
            projects::disable_environment(&state.app, &caller, project.clone(), name.clone()).await
        }
    }
    .await;
    match result {
        Ok(()) => see_other(&format!("/projects/{}", url_escape(&project))),
        Err(error) => render(&state, &principal, &project, Some(&error)).await,
    }
}
