//! `/projects/{id}/change-requests`: a project's change requests (mine, to review, scheduled,
//! closed) and which of its environments take changes only through them; a request's page with
//! what each change does against what it changes, its reviews and comments, and the moves the
//! signed-in user may make. Each read and write is the API's operation, and the buttons shown are
//! those `change_requests::moves` allows.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::AdminError;
use flag_admin::catalogue::change_requests::{self, State, types};
use flag_admin::identity::auth::Principal;
use flag_admin::runtime::domain::Timestamp;
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{field, form_fields, poster, see_other, signed_in, url_escape};
use crate::state::AppState;

fn base(project: &str) -> String {
    format!("/projects/{}/change-requests", url_escape(project))
}

/// `GET /projects/{id}/change-requests`.
pub async fn list(state: web::Data<AppState>, request: HttpRequest, path: web::Path<String>) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    render_list(&state, &principal, &path.into_inner(), None).await
}

async fn render_list(
    state: &AppState,
    principal: &Principal,
    project: &str,
    error: Option<&AdminError>,
) -> HttpResponse {
    let loaded = async {
        let reader = change_requests::LIST.admit_in(principal.clone(), Some(project))?;
        let requests = change_requests::list(&state.app, &reader, project.to_owned(), false).await?;
        let reader = change_requests::CONFIG.admit_in(principal.clone(), Some(project))?;
        let config = change_requests::config(&state.app, &reader, project.to_owned()).await?;
        Ok::<_, AdminError>((requests, config))
    }
    .await;
    let (requests, config) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let me = match principal {
        Principal::User { id, .. } => Some(*id),
        Principal::AdminToken { .. } => None,
    };
    let open = |request: &&types::ChangeRequestOut| {
        State::parse(&request.state).is_some_and(|state| !state.is_closed())
    };
    let mine: Vec<&types::ChangeRequestOut> = requests
        .iter()
        .filter(open)
        .filter(|request| Some(request.created_by.id) == me && request.state != "Scheduled")
        .collect();
    let to_review: Vec<&types::ChangeRequestOut> = requests
        .iter()
        .filter(|request| request.state == "In review" && Some(request.created_by.id) != me)
        .collect();
    let scheduled: Vec<&types::ChangeRequestOut> = requests
        .iter()
        .filter(|request| request.state == "Scheduled")
        .collect();
    let closed: Vec<&types::ChangeRequestOut> = requests
        .iter()
        .filter(|request| !open(request))
        .take(50)
        .collect();
    let may_configure = change_requests::SET_CONFIG
        .admit_in(principal.clone(), Some(project))
        .is_ok();
    let status = error.map_or(StatusCode::OK, crate::error::status_of);
    let body = html! {
        p { a href=(format!("/projects/{}", url_escape(project))) { "← Project " (project) } }
        h1 { "Change requests" }
        @if let Some(error) = error { (layout::notice(error)) }
        (table("Mine, open", "mine", project, &mine))
        (table("To review", "to-review", project, &to_review))
        (table("Scheduled", "scheduled", project, &scheduled))
        (table("Closed", "closed", project, &closed))
        section.card aria-labelledby="rules" {
            h2 id="rules" { "Environments that take changes only through requests" }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Environment" } th scope="col" { "Change requests" } th scope="col" { "Approvals" } @if may_configure { th scope="col" { "Change" } } } }
                    tbody {
                        @for environment in &config {
                            tr {
                                td.mono { (environment.environment) }
                                td { (if environment.change_request_enabled { "required" } else { "off" }) }
                                td { (environment.required_approvals.map(|count| count.to_string()).unwrap_or_default()) }
                                @if may_configure {
                                    td {
                                        form.row id=(format!("rule-{}", environment.environment)) method="post" action=(format!("{}/config", base(project))) {
                                            input type="hidden" name="environment" value=(environment.environment);
                                            label { input type="checkbox" name="enabled" checked[environment.change_request_enabled]; " required" }
                                            label { "approvals " input type="number" name="approvals" min="1" max="10" value=(environment.required_approvals.unwrap_or(1)); }
                                            button type="submit" { "Save" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::page(
        status,
        "Change requests",
        Some(&Viewer::of(principal)),
        "projects",
        &body,
    )
}

fn table(title: &str, id: &str, project: &str, requests: &[&types::ChangeRequestOut]) -> Markup {
    html! {
        section.card aria-labelledby=(id) {
            h2 id=(id) { (title) }
            @if requests.is_empty() {
                p.muted { "None." }
            } @else {
                div.table-wrap {
                    table {
                        thead { tr { th scope="col" { "Request" } th scope="col" { "Environment" } th scope="col" { "State" } th scope="col" { "Author" } th scope="col" { "Flags" } } }
                        tbody {
                            @for request in requests {
                                tr {
                                    td { a href=(format!("{}/{}", base(project), request.id)) { "#" (request.id) " " (request.title.as_deref().unwrap_or("")) } }
                                    td.mono { (request.environment) }
                                    td { (request.state) @if let Some(schedule) = &request.schedule { " · " (schedule.scheduled_at) " (" (schedule.status) ")" } }
                                    td { (request.created_by.username.as_deref().unwrap_or("")) }
                                    td.mono { (request.features.iter().map(|feature| feature.name.as_str()).collect::<Vec<_>>().join(", ")) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /projects/{id}/change-requests/config`.
pub async fn config(
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
    let result = async {
        let caller = change_requests::SET_CONFIG.admit_in(principal.clone(), Some(&project))?;
        let approvals = field(&fields, "approvals");
        let command =
            types::UpdateChangeRequestConfigIn {
                change_requests_enabled: !field(&fields, "enabled").is_empty(),
                required_approvals: if approvals.is_empty() {
                    None
                } else {
                    Some(approvals.parse().map_err(|_| {
                        AdminError::invalid("/requiredApprovals", "approvals must be a number")
                    })?)
                },
            };
        change_requests::set_config(
            &state.app,
            &caller,
            project.clone(),
            field(&fields, "environment"),
            command,
        )
        .await
    }
    .await;
    match result {
        Ok(()) => see_other(&base(&project)),
        Err(error) => render_list(&state, &principal, &project, Some(&error)).await,
    }
}

/// `POST /projects/{id}/change-requests/propose`: one change from a flag's page into the
/// signed-in user's draft for an environment.
pub async fn propose(
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
    let feature = field(&fields, "feature");
    let result = async {
        let caller = change_requests::ADD.admit_in(principal.clone(), Some(&project))?;
        let change = match field(&fields, "change").as_str() {
            "on" => types::ChangeIn::switch(feature.clone(), true),
            "off" => types::ChangeIn::switch(feature.clone(), false),
            "archive" => types::ChangeIn::archive(feature.clone()),
            other => {
                return Err(AdminError::invalid(
                    "/change",
                    format!("{other:?} is not a change this form makes"),
                ));
            }
        };
        change_requests::add(
            &state.app,
            &caller,
            project.clone(),
            field(&fields, "environment"),
            vec![change],
        )
        .await
    }
    .await;
    match result {
        Ok(draft) => see_other(&format!("{}/{}", base(&project), draft.id)),
        Err(error) => layout::failure_titled(
            &error,
            "The change was not proposed",
            (
                &format!("/flags/{}/{}", url_escape(&project), url_escape(&feature)),
                "Back to the flag",
            ),
        ),
    }
}

/// `GET /projects/{id}/change-requests/{request}`.
pub async fn page(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, i32)>,
) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let (project, id) = path.into_inner();
    render(&state, &principal, &project, id, None).await
}

async fn render(
    state: &AppState,
    principal: &Principal,
    project: &str,
    id: i32,
    error: Option<&AdminError>,
) -> HttpResponse {
    let loaded = async {
        let reader = change_requests::GET.admit_in(principal.clone(), Some(project))?;
        change_requests::get(&state.app, &reader, project.to_owned(), id).await
    }
    .await;
    let request = match loaded {
        Ok(request) => request,
        Err(error) => return layout::failure(&error),
    };
    let moves = change_requests::moves(principal, &request);
    let may = |state: State| moves.contains(&state);
    let author = matches!(principal, Principal::User { id, .. } if *id == request.created_by.id);
    let action = format!("{}/{}", base(project), id);
    let status = error.map_or(StatusCode::OK, crate::error::status_of);
    let body = html! {
        p { a href=(base(project)) { "← Change requests of " (project) } }
        h1 { "Change request #" (request.id) @if let Some(title) = &request.title { " · " (title) } }
        @if let Some(error) = error { (layout::notice(error)) }
        p {
            strong { (request.state) } " in " span.mono { (request.environment) }
            " · by " (request.created_by.username.as_deref().unwrap_or("")) " · " (request.created_at)
            " · needs " (request.min_approvals) " approval" @if request.min_approvals != 1 { "s" }
        }
        @if let Some(schedule) = &request.schedule {
            p role=[(schedule.status == "failed").then_some("alert")] {
                "Scheduled for " (schedule.scheduled_at) " · " (schedule.status)
                @if let Some(reason) = &schedule.reason { ": " (reason) }
            }
        }
        @for feature in &request.features {
            section.card aria-labelledby=(format!("flag-{}", feature.name)) {
                h2 id=(format!("flag-{}", feature.name)) { a.mono href=(format!("/flags/{}/{}", url_escape(project), url_escape(&feature.name))) { (feature.name) } }
                @if let Some(conflict) = &feature.conflict { p role="alert" { (conflict) } }
                @for change in &feature.changes {
                    div.change {
                        h3 { (change.action) " " span.muted { "by " (change.created_by.username.as_deref().unwrap_or("")) " · " (change.created_at) } }
                        @if let Some(conflict) = &change.conflict { p role="alert" { "Conflict: " (conflict) } }
                        (diff(&change.payload))
                        @if author && !State::parse(&request.state).is_some_and(State::is_closed) && request.state != "Scheduled" {
                            form method="post" action=(action.clone()) {
                                input type="hidden" name="do" value="discard-change";
                                input type="hidden" name="change" value=(change.id);
                                button.danger type="submit" { "Remove this change" }
                            }
                        }
                    }
                }
            }
        }
        section.card aria-labelledby="reviews" {
            h2 id="reviews" { "Reviews" }
            @if request.approvals.is_empty() && request.rejections.is_empty() { p.muted { "None yet." } }
            ul {
                @for approval in &request.approvals { li { "Approved by " (approval.created_by.username.as_deref().unwrap_or("")) " · " (approval.created_at) } }
                @for rejection in &request.rejections { li { "Rejected by " (rejection.created_by.username.as_deref().unwrap_or("")) " · " (rejection.created_at) } }
            }
            div.row {
                @for (state, label) in [(State::InReview, "Send for review"), (State::Approved, "Approve"), (State::Rejected, "Reject"), (State::Applied, "Apply now"), (State::Cancelled, "Cancel")] {
                    @if may(state) {
                        form method="post" action=(action.clone()) {
                            input type="hidden" name="do" value=(state.as_str());
                            button type="submit" class=[matches!(state, State::Rejected | State::Cancelled).then_some("danger")] { (label) }
                        }
                    }
                }
                @if request.state == "Draft" && author {
                    form method="post" action=(action.clone()) {
                        input type="hidden" name="do" value="discard";
                        button.danger type="submit" { "Discard the draft" }
                    }
                }
            }
            @if may(State::Scheduled) {
                form method="post" action=(action.clone()) {
                    input type="hidden" name="do" value="Scheduled";
                    label for="scheduled-at" { "Apply at (RFC 3339 with a time zone, such as 2026-12-01T02:00:00Z)" }
                    div.row {
                        input id="scheduled-at" name="scheduledAt" type="text" required;
                        button type="submit" { "Schedule" }
                    }
                }
            }
        }
        section.card aria-labelledby="comments" {
            h2 id="comments" { "Comments" }
            @for comment in &request.comments {
                div.comment { p { (comment.text) } p.muted { (comment.created_by.username.as_deref().unwrap_or("")) " · " (comment.created_at) } }
            }
            form method="post" action=(action.clone()) {
                input type="hidden" name="do" value="comment";
                label for="comment-text" { "Comment" }
                textarea id="comment-text" name="text" required maxlength="1000" {}
                p { button type="submit" { "Comment" } }
            }
        }
    };
    let title = format!("Change request #{id}");
    layout::page(status, &title, Some(&Viewer::of(principal)), "projects", &body)
}

/// A change's payload beside what it changes as it was when the change was made.
fn diff(payload: &serde_json::Value) -> Markup {
    let mut proposed = payload.clone();
    let before = proposed
        .as_object_mut()
        .and_then(|fields| fields.remove("snapshot"));
    let pretty = |value: &serde_json::Value| serde_json::to_string_pretty(value).unwrap_or_default();
    html! {
        div.row {
            @if let Some(before) = &before {
                div { h4 { "Before" } pre.mono { (pretty(before)) } }
            }
            div { h4 { "Proposed" } pre.mono { (pretty(&proposed)) } }
        }
    }
}

/// `POST /projects/{id}/change-requests/{request}`.
pub async fn act(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, i32)>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let (project, id) = path.into_inner();
    let fields = form_fields(&body);
    let app = &state.app;
    let result = async {
        match field(&fields, "do").as_str() {
            "comment" => {
                let caller = change_requests::COMMENT.admit_in(principal.clone(), Some(&project))?;
                let command = types::CommentIn {
                    text: field(&fields, "text"),
                };
                change_requests::comment(app, &caller, project.clone(), id, command).await?;
            }
            "discard" => {
                let caller = change_requests::DISCARD.admit_in(principal.clone(), Some(&project))?;
                change_requests::discard(app, &caller, project.clone(), id).await?;
                return Ok(false);
            }
            "discard-change" => {
                let caller = change_requests::DISCARD_CHANGE.admit_in(principal.clone(), Some(&project))?;
                let change = field(&fields, "change")
                    .parse()
                    .map_err(|_| AdminError::invalid("/change", "not a change's id"))?;
                change_requests::discard_change(app, &caller, project.clone(), (id, change)).await?;
            }
            state => {
                let caller = change_requests::CHANGE_STATE.admit_in(principal.clone(), Some(&project))?;
                let scheduled_at = field(&fields, "scheduledAt");
                let command = types::ChangeStateIn {
                    state: state.to_owned(),
                    scheduled_at: if scheduled_at.is_empty() {
                        None
                    } else {
                        Some(
                            Timestamp::read(scheduled_at.trim())
                                .map_err(|problem| AdminError::invalid("/scheduledAt", problem))?,
                        )
                    },
                    comment: None,
                };
                change_requests::change_state(app, &caller, project.clone(), id, command).await?;
            }
        }
        Ok::<_, AdminError>(true)
    }
    .await;
    match result {
        Ok(true) => see_other(&format!("{}/{}", base(&project), id)),
        Ok(false) => see_other(&base(&project)),
        Err(error) => render(&state, &principal, &project, id, Some(&error)).await,
    }
}

/// The flag page's card: the open requests that change the flag, and, in each environment that
/// takes changes only through requests, a proposal to switch it or archive it.
pub async fn flag_card(
    state: &AppState,
    principal: &Principal,
    project: &str,
    feature: &str,
) -> Result<Markup, AdminError> {
    let reader = change_requests::CONFIG.admit_in(principal.clone(), Some(project))?;
    let config = change_requests::config(&state.app, &reader, project.to_owned()).await?;
    let protected: Vec<&types::ChangeRequestEnvironmentConfig> = config
        .iter()
        .filter(|environment| environment.change_request_enabled)
        .collect();
    let pending = match change_requests::PENDING_FOR_FEATURE.admit_in(principal.clone(), Some(project)) {
        Ok(reader) => {
            change_requests::pending_for_feature(&state.app, &reader, project.to_owned(), feature.to_owned())
                .await?
        }
        Err(_) => Vec::new(),
    };
    if protected.is_empty() && pending.is_empty() {
        return Ok(html! {});
    }
    let may_propose = change_requests::ADD
        .admit_in(principal.clone(), Some(project))
        .is_ok();
    Ok(html! {
        section.card aria-labelledby="change-requests" {
            h2 id="change-requests" { "Change requests" }
            @if !protected.is_empty() {
                p.muted {
                    "Changes to " (protected.iter().map(|environment| environment.environment.as_str()).collect::<Vec<_>>().join(", "))
                    " are made through change requests."
                }
            }
            @if pending.is_empty() {
                p.muted { "No open request changes this flag." }
            } @else {
                ul {
                    @for request in &pending {
                        li { a href=(format!("{}/{}", base(project), request.id)) { "#" (request.id) " " (request.title.as_deref().unwrap_or("")) } " · " (request.state) " in " span.mono { (request.environment) } }
                    }
                }
            }
            @if may_propose {
                @for environment in &protected {
                    form.row method="post" action=(format!("{}/propose", base(project))) {
                        input type="hidden" name="feature" value=(feature);
                        input type="hidden" name="environment" value=(environment.environment);
                        label for=(format!("propose-{}", environment.environment)) { "Propose in " span.mono { (environment.environment) } }
                        select id=(format!("propose-{}", environment.environment)) name="change" {
                            option value="on" { "switch on" }
                            option value="off" { "switch off" }
                            option value="archive" { "archive the flag" }
                        }
                        button type="submit" { "Add to my draft" }
                    }
                }
            }
        }
    })
}
