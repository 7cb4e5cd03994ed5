//! `/context`: the context fields constraints read, each with its legal values and the flags
//! and strategies that constrain on it; a page per field to edit its description, stickiness and
//! legal values, or delete it (refused while a strategy uses it, naming where). Each read and
//! write is the API's operation.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::context_fields::types::{CreateContextField, LegalValue, UpdateContextField};
use flag_admin::identity::auth::Principal;
use flag_admin::runtime::domain::ResourceName;
use flag_admin::{AdminError, catalogue::context_fields};
use maud::html;

use super::layout::{self, Viewer};
use super::{form_fields, poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// A field as its form holds it.
#[derive(Debug, Default)]
struct Draft {
    name: String,
    description: String,
    stickiness: bool,
    /// One legal value per line: `value` or `value: what it means`.
    legal_values: String,
}

impl Draft {
    fn from_form(fields: &[(String, String)]) -> Self {
        let get = |name: &str| super::field(fields, name);
        Self {
            name: get("name"),
            description: get("description"),
            stickiness: get("stickiness") == "true",
            legal_values: get("legalValues"),
        }
    }

    fn legal_values(&self) -> Vec<LegalValue> {
        self.legal_values
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(|line| match line.split_once(": ") {
                Some((value, description)) => LegalValue {
                    value: value.trim().to_owned(),
                    description: Some(description.trim().to_owned()),
                },
                None => LegalValue {
                    value: line.to_owned(),
                    description: None,
                },
            })
            .collect()
    }

    fn of_values(values: &[LegalValue]) -> String {
        values
            .iter()
            .map(|legal| match &legal.description {
                Some(description) if !description.is_empty() => {
                    format!("{}: {description}", legal.value)
                }
                _ => legal.value.clone(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `GET /context`.
pub async fn list(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let loaded = async {
        context_fields::LIST.admit(principal.clone())?;
        context_fields::list(&state.app).await
    }
    .await;
    let fields = match loaded {
        Ok(fields) => fields,
        Err(error) => return layout::failure(&error),
    };
    let may_create = context_fields::CREATE.admit(principal.clone()).is_ok();
    let body = html! {
        h1 { "Context fields" }
        p.muted { "The fields SDKs send with each question, which constraints read. Legal values give a constraint's editor its choices; stickiness lets a rollout keep a person's answer by the field." }
        @if may_create { p { a.button href="/context/new" { "New context field" } } }
        div.table-wrap {
            table {
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Legal values" }
                    th scope="col" { "Stickiness" } th.optional scope="col" { "Used by flags" }
                } }
                tbody {
                    @for field in &fields {
                        tr {
                            td { a href=(format!("/context/{}", url_escape(&field.name))) { (field.name) }
                                @if let Some(description) = &field.description { br; span.muted { (description) } } }
                            td { @if field.legal_values.is_empty() { span.muted { "any" } } @else {
                                (field.legal_values.iter().map(|legal| legal.value.as_str()).collect::<Vec<_>>().join(", ")) } }
                            td { (if field.stickiness { "yes" } else { "no" }) }
                            td.optional { (field.used_in_features.unwrap_or(0)) }
                        }
                    }
                }
            }
        }
    };
    layout::page(
        StatusCode::OK,
        "Context fields",
        Some(&Viewer::of(&principal)),
        "context",
        &body,
    )
}

/// `GET /context/new` and `GET /context/{name}`.
pub async fn page(state: web::Data<AppState>, request: HttpRequest, path: web::Path<String>) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let name = path.into_inner();
    if name == "new" {
        return render(&state, &principal, false, &Draft::default(), StatusCode::OK, None).await;
    }
    match stored(&state, &principal, &name).await {
        Ok(draft) => render(&state, &principal, true, &draft, StatusCode::OK, None).await,
        Err(error) => layout::failure(&error),
    }
}

async fn stored(state: &AppState, principal: &Principal, name: &str) -> Result<Draft, AdminError> {
    context_fields::GET.admit(principal.clone())?;
    let field = context_fields::get(&state.app, name.to_owned()).await?;
    Ok(Draft {
        legal_values: Draft::of_values(&field.legal_values),
        name: field.name,
        description: field.description.unwrap_or_default(),
        stickiness: field.stickiness,
    })
}

async fn render(
    state: &AppState,
    principal: &Principal,
    exists: bool,
    draft: &Draft,
    status: StatusCode,
    error: Option<&AdminError>,
) -> HttpResponse {
    let uses = if exists {
        let loaded = async {
            context_fields::STRATEGIES.admit(principal.clone())?;
            context_fields::strategies(&state.app, draft.name.clone()).await
        }
        .await;
        match loaded {
            Ok(uses) => Some(uses),
            Err(error) => return layout::failure(&error),
        }
    } else {
        None
    };
    let may_write = if exists {
        context_fields::UPDATE.admit(principal.clone()).is_ok()
    } else {
        context_fields::CREATE.admit(principal.clone()).is_ok()
    };
    let may_delete = exists && context_fields::DELETE.admit(principal.clone()).is_ok();
    let action = if exists {
        format!("/context/{}", url_escape(&draft.name))
    } else {
        "/context".to_owned()
    };
    let title = if exists {
        format!("Context field {}", draft.name)
    } else {
        "New context field".to_owned()
    };
    let body = html! {
        p { a href="/context" { "← Context fields" } }
        h1 { (title) }
        @if let Some(error) = error { (layout::notice(error)) }
        @if let Some(uses) = &uses { (super::segments::used_by(&uses.strategies, "No strategy constrains on it.")) }
        form.card method="post" action=(action) {
            @if exists {
                input type="hidden" name="name" value=(draft.name);
            } @else {
                label for="name" { "Name" }
                input id="name" name="name" type="text" required value=(draft.name);
            }
            label for="description" { "Description" }
            input id="description" name="description" type="text" value=(draft.description);
            label {
                input name="stickiness" type="checkbox" value="true" checked[draft.stickiness];
                " Usable for stickiness"
            }
            label for="legalValues" { "Legal values, one per line (value, or value: what it means); any value when empty" }
            textarea id="legalValues" name="legalValues" { (draft.legal_values) }
            @if may_write {
                p { button type="submit" { (if exists { "Save the field" } else { "Create the field" }) } }
            }
        }
        @if may_delete {
            form method="post" action=(format!("/context/{}/delete", url_escape(&draft.name))) {
                button.danger type="submit" { "Delete this field" }
            }
        }
    };
    layout::page(status, &title, Some(&Viewer::of(principal)), "context", &body)
}

/// `POST /context` and `POST /context/{name}`.
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
    let mut draft = Draft::from_form(&form_fields(&body));
    let existing = path.map(web::Path::into_inner);
    if let Some(name) = &existing {
        draft.name.clone_from(name);
    }
    let result = async {
        match &existing {
            Some(name) => {
                let caller = context_fields::UPDATE.admit(principal.clone())?;
                let update = UpdateContextField {
                    description: Some(draft.description.clone()),
                    stickiness: draft.stickiness,
                    sort_order: None,
                    legal_values: draft.legal_values(),
                };
                context_fields::update(&state.app, &caller, name.clone(), update).await
            }
            None => {
                let caller = context_fields::CREATE.admit(principal.clone())?;
                let name = ResourceName::try_from(draft.name.as_str())
                    .map_err(|problem| AdminError::invalid("/name", format!("the name {problem}")))?;
                let command = CreateContextField {
                    name,
                    description: (!draft.description.is_empty()).then(|| draft.description.clone()),
                    stickiness: draft.stickiness,
                    sort_order: None,
                    legal_values: draft.legal_values(),
                };
                context_fields::create(&state.app, &caller, command)
                    .await
                    .map(|_| ())
            }
        }
    }
    .await;
    match result {
        Ok(()) => see_other(&format!("/context/{}", url_escape(&draft.name))),
        Err(error) => {
            render(
                &state,
                &principal,
                existing.is_some(),
                &draft,
                crate::error::status_of(&error),
                Some(&error),
            )
            .await
        }
    }
}

/// `POST /context/{name}/delete`: refused, naming the strategies, while any constrains on it.
pub async fn delete(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<String>,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let name = path.into_inner();
    let result = async {
        let caller = context_fields::DELETE.admit(principal.clone())?;
        context_fields::delete(&state.app, &caller, name.clone()).await
    }
    .await;
    match result {
        Ok(()) => see_other("/context"),
        Err(error) => match stored(&state, &principal, &name).await {
            Ok(draft) => {
                render(
                    &state,
                    &principal,
                    true,
                    &draft,
                    crate::error::status_of(&error),
                    Some(&error),
                )
                .await
            }
            Err(_) => layout::failure(&error),
        },
    }
}
