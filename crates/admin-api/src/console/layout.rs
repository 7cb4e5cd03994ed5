//! The page shell every console page shares, and the page an error is shown on.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use flag_admin::AdminError;
use flag_admin::identity::auth::Principal;
use flag_admin::identity::invite;
use maud::{DOCTYPE, Markup, html};

use super::assets;

/// Who the page is for, as the header shows them.
pub struct Viewer<'a> {
    /// Their name in the header.
    pub label: &'a str,
    /// Whether the policy admits them to the admin pages, which open on the invite links.
    pub admin: bool,
}

impl<'a> Viewer<'a> {
    /// The header's view of `principal`.
    pub fn of(principal: &'a Principal) -> Self {
        match principal {
            Principal::User { label, .. } | Principal::AdminToken { name: label, .. } => Self {
                label,
                admin: invite::LIST.admit(principal.clone()).is_ok(),
            },
        }
    }
}

/// A whole page: the header with the navigation (for a signed-in viewer), and `body`.
pub fn page(
    status: StatusCode,
    title: &str,
    viewer: Option<&Viewer<'_>>,
    current: &str,
    body: &Markup,
) -> HttpResponse {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Halyard" }
                link rel="stylesheet" href=(assets::url(&assets::STYLESHEET));
                script src=(assets::url(&assets::SCRIPT)) defer {}
            }
            body {
                header.top {
                    a.brand href="/flags" { "Halyard" }
                    @if let Some(viewer) = viewer {
                        nav aria-label="Main" {
                            a href="/flags" aria-current=[(current == "flags").then_some("page")] { "Flags" }
                            a href="/projects" aria-current=[(current == "projects").then_some("page")] { "Projects" }
                            a href="/segments" aria-current=[(current == "segments").then_some("page")] { "Segments" }
                            a href="/context" aria-current=[(current == "context").then_some("page")] { "Context" }
                            a href="/applications" aria-current=[(current == "applications").then_some("page")] { "Applications" }
                            a href="/events" aria-current=[(current == "events").then_some("page")] { "Audit log" }
                            a href="/playground" aria-current=[(current == "playground").then_some("page")] { "Playground" }
                            a href="/history" aria-current=[(current == "history").then_some("page")] { "What changed" }
                            @if viewer.admin {
                                a href="/admin/invites" aria-current=[(current == "admin").then_some("page")] { "Admin" }
                            }
                        }
                        span.who { "Signed in as " (viewer.label) }
                        form method="post" action="/logout" {
                            button.secondary type="submit" { "Sign out" }
                        }
                    }
                }
                main id="main" { (body) }
            }
        }
    };
    HttpResponse::build(status)
        .insert_header((CONTENT_TYPE, "text/html; charset=utf-8"))
        .insert_header((CACHE_CONTROL, "no-store"))
        .body(markup.into_string())
}

/// A notice of what went wrong, for the top of a form.
pub fn notice(error: &AdminError) -> Markup {
    html! {
        div.notice.error role="alert" {
            (message(error))
            @if let AdminError::Validation { details, .. } = error {
                @if details.len() > 1 {
                    ul { @for detail in details { li { (detail.message) } } }
                }
            }
        }
    }
}

/// What an error says to a person: the operation's message, capitalised; a fault of the
/// server says only that.
pub fn message(error: &AdminError) -> String {
    let text = match error {
        AdminError::Internal(_) => "Something went wrong on the server; try again.".to_owned(),
        AdminError::TooManyRequests { retry_after } => {
            format!("Too many attempts from here; try again in {retry_after} seconds.")
        }
        other => other.to_string(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// A page that shows only `error`, with the status the API would give it.
pub fn failure(error: &AdminError) -> HttpResponse {
    failure_titled(error, "That did not work", ("/flags", "Back to the flags"))
}

/// As [`failure`], headed `heading`, with a link `back` (its address and words).
pub fn failure_titled(error: &AdminError, heading: &str, back: (&str, &str)) -> HttpResponse {
    let status = crate::error::status_of(error);
    if status.is_server_error() {
        tracing::error!(%error, "a console page failed");
    }
    page(
        status,
        heading,
        None,
        "",
        &html! {
            div.card.narrow {
                h1 { (heading) }
                (notice(error))
                p { a href=(back.0) { (back.1) } }
            }
        },
    )
}
