//! `/segments`: the segments, each with the flags and strategies that use it; a page per
//! segment to edit its name, description, project and constraints, or delete it (refused while a
//! strategy uses it, naming where). Each read and write is the API's operation.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::segments::types::{CreateSegment, SegmentDetailOut, StrategyUseOut};
use flag_admin::identity::auth::Principal;
use flag_admin::{AdminError, catalogue::context_fields, catalogue::projects, catalogue::segments};
use flag_eval::Constraint;
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{constraints, form_fields, poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// A segment as its form holds it.
#[derive(Debug, Default)]
struct Draft {
    name: String,
    description: String,
    project: String,
    constraints: Vec<Constraint>,
}

impl Draft {
    fn from_form(fields: &[(String, String)]) -> Self {
        let get = |name: &str| super::field(fields, name);
        Self {
            name: get("name"),
            description: get("description"),
            project: get("project"),
            constraints: constraints::parse(fields),
        }
    }

    fn of(stored: SegmentDetailOut) -> Self {
        Self {
            name: stored.name,
            description: stored.description.unwrap_or_default(),
            project: stored.project.unwrap_or_default(),
            constraints: stored.constraints,
        }
    }

    fn command(&self) -> CreateSegment {
        CreateSegment {
            name: self.name.clone(),
            description: (!self.description.is_empty()).then(|| self.description.clone()),
            project: (!self.project.is_empty()).then(|| self.project.clone()),
            constraints: self.constraints.clone(),
        }
    }
}

/// `GET /segments`.
pub async fn list(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let loaded = async {
        segments::LIST.admit(principal.clone())?;
        segments::list(&state.app).await
    }
    .await;
    let list = match loaded {
        Ok(list) => list,
        Err(error) => return layout::failure(&error),
    };
    let may_create = segments::CREATE.admit(principal.clone()).is_ok();
    let body = html! {
        h1 { "Segments" }
        p.muted { "A segment is a named set of constraints that many strategies can share: change it once, and every strategy using it follows." }
        @if may_create { p { a.button href="/segments/new" { "New segment" } } }
        @if list.segments.is_empty() {
            div.card { p { "No segments yet." @if may_create { " " a href="/segments/new" { "Create the first one" } "." } } }
        } @else {
            div.table-wrap {
                table {
                    thead { tr {
                        th scope="col" { "Name" } th scope="col" { "Constraints" }
                        th scope="col" { "Used by flags" } th.optional scope="col" { "Project" }
                    } }
                    tbody {
                        @for segment in &list.segments {
                            tr {
                                td { a href=(format!("/segments/{}", segment.id)) { (segment.name) }
                                    @if let Some(description) = &segment.description { br; span.muted { (description) } } }
                                td { (segment.constraints.iter().map(constraints::text).collect::<Vec<_>>().join("; ")) }
                                td { (segment.used_in_features) }
                                td.optional { (segment.project.as_deref().unwrap_or("all projects")) }
                            }
                        }
                    }
                }
            }
        }
    };
    layout::page(
        StatusCode::OK,
        "Segments",
        Some(&Viewer::of(&principal)),
        "segments",
        &body,
    )
}

/// `GET /segments/new` and `GET /segments/{id}`.
pub async fn page(state: web::Data<AppState>, request: HttpRequest, path: web::Path<String>) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let id = path.into_inner();
    if id == "new" {
        return render(&state, &principal, None, &Draft::default(), StatusCode::OK, None).await;
    }
    let loaded = async {
        let id = parse_id(&id)?;
        segments::GET.admit(principal.clone())?;
        let stored = segments::get(&state.app, id).await?;
        Ok::<_, AdminError>((id, stored))
    }
    .await;
    match loaded {
        Ok((id, stored)) => {
            render(
                &state,
                &principal,
                Some(id),
                &Draft::of(stored),
                StatusCode::OK,
                None,
            )
            .await
        }
        Err(error) => layout::failure(&error),
    }
}

fn parse_id(text: &str) -> Result<i32, AdminError> {
    text.parse()
        .map_err(|_| AdminError::NotFound(format!("no segment {text:?}")))
}

async fn render(
    state: &AppState,
    principal: &Principal,
    id: Option<i32>,
    draft: &Draft,
    status: StatusCode,
    error: Option<&AdminError>,
) -> HttpResponse {
    let loaded = async {
        context_fields::LIST.admit(principal.clone())?;
        let fields = context_fields::list(&state.app).await?;
        projects::NAMES.admit(principal.clone())?;
        let projects = projects::names(&state.app).await?;
        let uses = match id {
            Some(id) => {
                segments::STRATEGIES.admit(principal.clone())?;
                Some(segments::strategies(&state.app, id).await?)
            }
            None => None,
        };
        Ok::<_, AdminError>((fields, projects, uses))
    }
    .await;
    let (fields, projects, uses) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let may_write = match id {
        Some(_) => segments::UPDATE.admit(principal.clone()).is_ok(),
        None => segments::CREATE.admit(principal.clone()).is_ok(),
    };
    let may_delete = id.is_some() && segments::DELETE.admit(principal.clone()).is_ok();
    let action = id.map_or_else(|| "/segments".to_owned(), |id| format!("/segments/{id}"));
    let title = if id.is_some() {
        format!("Segment {}", draft.name)
    } else {
        "New segment".to_owned()
    };
    let body = html! {
        p { a href="/segments" { "← Segments" } }
        h1 { (title) }
        @if let Some(error) = error { (layout::notice(error)) }
        @if let Some(uses) = &uses { (used_by(&uses.strategies, "No strategy uses it: it can be deleted.")) }
        form.card method="post" action=(action) {
            div.row {
                div {
                    label for="name" { "Name" }
                    input id="name" name="name" type="text" required value=(draft.name);
                }
                div {
                    label for="project" { "Project" }
                    select id="project" name="project" {
                        option value="" selected[draft.project.is_empty()] { "All projects" }
                        @for (project, name) in &projects {
                            option value=(project) selected[*project == draft.project] { (name) }
                        }
                    }
                }
            }
            label for="description" { "Description" }
            input id="description" name="description" type="text" value=(draft.description);
            (constraints::editor("segment", &draft.constraints, &fields))
            @if may_write {
                p { button type="submit" { (if id.is_some() { "Save the segment" } else { "Create the segment" }) } }
            }
        }
        @if may_delete {
            @if let Some(id) = id {
                form method="post" action=(format!("/segments/{id}/delete")) {
                    button.danger type="submit" { "Delete this segment" }
                }
            }
        }
    };
    layout::page(status, &title, Some(&Viewer::of(principal)), "segments", &body)
}

/// The strategies that use a segment or a context field, with links to their flags; `none`
/// when there are none.
pub(super) fn used_by(strategies: &[StrategyUseOut], none: &str) -> Markup {
    html! {
        section.card aria-labelledby="used-by" {
            h2 id="used-by" { "Used by" }
            @if strategies.is_empty() {
                p.muted { (none) }
            } @else {
                ul {
                    @for strategy in strategies {
                        li {
                            a href=(format!("/flags/{}/{}", url_escape(&strategy.project_id), url_escape(&strategy.feature_name))) {
                                (strategy.feature_name)
                            }
                            " (" (strategy.project_id) "), " (strategy.strategy_name) " in " (strategy.environment)
                        }
                    }
                }
            }
        }
    }
}

/// `POST /segments` and `POST /segments/{id}`.
pub async fn save(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: Option<web::Path<String>>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let draft = Draft::from_form(&form_fields(&body));
    let id = match path
        .map(web::Path::into_inner)
        .map(|id| parse_id(&id))
        .transpose()
    {
        Ok(id) => id,
        Err(error) => return layout::failure(&error),
    };
    let result = async {
        match id {
            Some(id) => {
                let caller = segments::UPDATE.admit(principal.clone())?;
                segments::update(&state.app, &caller, id, draft.command()).await?;
                Ok(id)
            }
            None => {
                let caller = segments::CREATE.admit(principal.clone())?;
                Ok(segments::create(&state.app, &caller, draft.command()).await?.id)
            }
        }
    }
    .await;
    match result {
        Ok(id) => see_other(&format!("/segments/{id}")),
        Err(error) => {
            render(
                &state,
                &principal,
                id,
                &draft,
                crate::error::status_of(&error),
                Some(&error),
            )
            .await
        }
    }
}

/// `POST /segments/{id}/delete`: refused, naming the strategies, while any uses it.
pub async fn delete(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let result = async {
        let id = parse_id(&path)?;
        let caller = segments::DELETE.admit(principal.clone())?;
        segments::delete(&state.app, &caller, id).await?;
        Ok::<_, AdminError>(())
    }
    .await;
    match result {
        Ok(()) => see_other("/segments"),
        Err(error) => {
            let stored = async {
                let id = parse_id(&path)?;
                let stored = segments::get(&state.app, id).await?;
                Ok::<_, AdminError>((id, stored))
            }
            .await;
            match stored {
                Ok((id, stored)) => {
                    let draft = Draft::of(stored);
                    render(
                        &state,
                        &principal,
                        Some(id),
                        &draft,
                        crate::error::status_of(&error),
                        Some(&error),
                    )
                    .await
                }
                Err(_) => layout::failure(&error),
            }
        }
    }
}
