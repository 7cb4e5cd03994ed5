//! The admin pages: invite links (`/admin/invites`), API tokens (`/admin/tokens`) and users
//! with their root roles (`/admin/users`). Each reads and writes through the API's operations,
//! admitted by the accesses those declare, so an Editor or a Viewer gets the API's 403.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::identity::auth::{Access, Caller, Principal};
use flag_admin::identity::invite::types::{CreateSignupTokenRequest, UpdateSignupTokenRequest};
use flag_admin::identity::tokens::types::CreateToken;
use flag_admin::identity::users::types::UpdateUserRequest;
use flag_admin::{AdminError, identity::invite, identity::tokens, identity::users};
use maud::{Markup, html};

use super::layout::{self, Viewer};
use super::{field, form_fields, poster, see_other, signed_in, url_escape};
use crate::state::AppState;

/// A `datetime-local` field (`2026-12-01T12:00`, read as UTC) or an RFC 3339 time, parsed by
/// the API's own request types.
pub(super) fn utc(text: &str) -> String {
    if text.len() == 16 {
        format!("{text}:00Z")
    } else {
        text.to_owned()
    }
}

/// Runs `render` for an admin page when `access`, the declaration of the operation it reads,
/// admits the principal.
pub(super) async fn admin_page<F, Fut>(
    state: &AppState,
    request: &HttpRequest,
    access: Access,
    current: &str,
    title: &str,
    render: F,
) -> HttpResponse
where
    F: FnOnce(Principal) -> Fut,
    Fut: std::future::Future<Output = Result<Markup, AdminError>>,
{
    let principal = match signed_in(state, request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    if let Err(error) = access.admit(principal.clone()) {
        return layout::failure(&error);
    }
    let viewer_principal = principal.clone();
    match render(principal).await {
        Ok(body) => layout::page(
            StatusCode::OK,
            title,
            Some(&Viewer::of(&viewer_principal)),
            current,
            &body,
        ),
        Err(error) => layout::failure(&error),
    }
}

/// Runs an admin write from a form as the caller `access`, the declaration of the operation it
/// calls, admits, then goes back to `back`; a refusal is shown on its own page.
pub(super) async fn admin_write<F, Fut>(
    state: &AppState,
    request: &HttpRequest,
    access: Access,
    back: &str,
    write: F,
) -> HttpResponse
where
    F: FnOnce(Caller) -> Fut,
    Fut: std::future::Future<Output = Result<Option<Markup>, AdminError>>,
{
    let principal = match poster(state, request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let result = match access.admit(principal.clone()) {
        Ok(caller) => write(caller).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(None) => see_other(back),
        // Something to show once, such as a new token's secret.
        Ok(Some(body)) => layout::page(
            StatusCode::OK,
            "Done",
            Some(&Viewer::of(&principal)),
            "admin",
            &body,
        ),
        Err(error) => layout::failure(&error),
    }
}

/// `GET /admin/invites`.
pub async fn invites(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    admin_page(&state, &request, invite::LIST, "admin", "Invite links", |_| async move {
        let links = invite::list(app).await?;
        Ok(html! {
            h1 { "Invite links" }
            (admin_nav("invites"))
            @for link in links.tokens() {
                @let secret = link.secret();
                @let url = link.url().unwrap_or_default();
                section.card {
                    h2 { (link.name()) " "
                        span.state.on[link.enabled()].off[!link.enabled()] {
                            (if link.enabled() { "active" } else { "inactive" })
                        }
                    }
                    p { span.mono { (url) } " " button.secondary type="button" data-copy=(url) { "Copy the link" } }
                    p.muted { "Expires " (link.expires_at()) " (UTC)" }
                    form.row method="post" action=(format!("/admin/invites/{}", url_escape(secret))) {
                        div {
                            label for=(format!("expires-{secret}")) { "New expiry (UTC)" }
                            input id=(format!("expires-{secret}")) name="expiresAt" type="datetime-local";
                        }
                        input type="hidden" name="enabled" value=(if link.enabled() { "false" } else { "true" });
                        button type="submit" name="action" value="expiry" { "Change the expiry" }
                        button.secondary type="submit" name="action" value="toggle" {
                            (if link.enabled() { "Disable" } else { "Enable" })
                        }
                    }
                    @let signed_up = link.users();
                    p { (signed_up.len()) " signed up"
                        @if !signed_up.is_empty() { ": " (signed_up.iter().filter_map(|user| user.name().or(user.username())).collect::<Vec<_>>().join(", ")) }
                    }
                }
            }
            section.card aria-labelledby="new-invite" {
                h2 id="new-invite" { "Create an invite link" }
                p.muted { "People who sign up with it become Viewers." }
                form method="post" action="/admin/invites" {
                    div.row {
                        div {
                            label for="invite-name" { "Name" }
                            input id="invite-name" name="name" type="text" required;
                        }
                        div {
                            label for="invite-expires" { "Expires (UTC)" }
                            input id="invite-expires" name="expiresAt" type="datetime-local" required;
                        }
                    }
                    p { button type="submit" { "Create" } }
                }
            }
        })
    })
    .await
}

pub(super) fn admin_nav(current: &str) -> Markup {
    html! {
        nav.row aria-label="Administration" {
            @for (path, name, label) in [("/admin/invites", "invites", "Invite links"), ("/admin/tokens", "tokens", "API tokens"), ("/admin/users", "users", "Users"),
                ("/admin/groups", "groups", "Groups"), ("/admin/roles", "roles", "Roles"), ("/admin/service-accounts", "service-accounts", "Service accounts"),
                ("/admin/webhooks", "webhooks", "Webhooks"), ("/admin/sign-in", "sign-in", "Sign-in"), ("/admin/import", "import", "Import and export")] {
                a href=(path) aria-current=[(name == current).then_some("page")] { (label) }
            }
        }
    }
}

/// `POST /admin/invites`: creates an invite link.
pub async fn create_invite(
    state: web::Data<AppState>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        invite::CREATE,
        "/admin/invites",
        |caller| async move {
            let request =
                CreateSignupTokenRequest::new(field(&fields, "name"), &utc(&field(&fields, "expiresAt")))
                    .map_err(|error| {
                        AdminError::invalid("/expiresAt", format!("give a name and an expiry: {error}"))
                    })?;
            invite::create(app, &caller, request).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/invites/{secret}`: a new expiry, or enabled or disabled.
pub async fn update_invite(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    let secret = path.into_inner();
    admin_write(
        &state,
        &request,
        invite::UPDATE,
        "/admin/invites",
        |caller| async move {
            let change = if field(&fields, "action") == "toggle" {
                UpdateSignupTokenRequest::switching(field(&fields, "enabled") == "true")
            } else {
                UpdateSignupTokenRequest::expiring(&utc(&field(&fields, "expiresAt"))).map_err(|error| {
                    AdminError::invalid("/expiresAt", format!("give a new expiry: {error}"))
                })?
            };
            invite::update(app, &caller, secret, change).await?;
            Ok(None)
        },
    )
    .await
}

/// `GET /admin/tokens`.
pub async fn tokens(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    admin_page(&state, &request, tokens::LIST, "admin", "API tokens", |principal| async move {
        let listed = tokens::list(app, &tokens::LIST.admit(principal)?).await?;
        Ok(html! {
            h1 { "API tokens" }
            (admin_nav("tokens"))
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Environment" } th.optional scope="col" { "Secret" } th scope="col" { span.visually-hidden { "Actions" } } } }
                    tbody {
                        @for token in &listed.tokens {
                            tr {
                                td { (token.token_name) }
                                td { (token.token_type) }
                                td { (token.environment) }
                                td.optional.mono { (token.secret) }
                                td {
                                    form method="post" action=(format!("/admin/tokens/{}/delete", token.id)) {
                                        button.danger type="submit" aria-label=(format!("Delete {}", token.token_name)) { "Delete" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            section.card aria-labelledby="new-token" {
                h2 id="new-token" { "Create a token" }
                form method="post" action="/admin/tokens" {
                    div.row {
                        div {
                            label for="token-name" { "Name" }
                            input id="token-name" name="tokenName" type="text" required;
                        }
                        div {
                            label for="token-type" { "Type" }
                            select id="token-type" name="type" {
                                option value="backend" { "backend (server SDKs)" }
                                option value="frontend" { "frontend (browser SDKs)" }
                            }
                        }
                        div {
                            label for="token-environment" { "Environment" }
                            input id="token-environment" name="environment" type="text" value="development";
                        }
                    }
                    p { button type="submit" { "Create" } }
                }
            }
        })
    })
    .await
}

/// `POST /admin/tokens`: creates a token and shows its secret, once.
pub async fn create_token(
    state: web::Data<AppState>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        tokens::CREATE,
        "/admin/tokens",
        |caller| async move {
            let request = CreateToken::new(
                field(&fields, "tokenName"),
                &field(&fields, "type"),
                field(&fields, "environment"),
            )
            .map_err(|error| {
                AdminError::invalid("/type", format!("the token form does not read: {error}"))
            })?;
            let created = tokens::create(app, &caller, request).await?;
            Ok(Some(html! {
                div.card.narrow {
                    h1 { "Token created" }
                    div.notice.ok role="status" { "Copy the secret now: it is not shown again." }
                    p { span.mono id="secret" { (created.secret) } }
                    p { button.secondary type="button" data-copy=(created.secret) { "Copy the secret" } }
                    p { a href="/admin/tokens" { "Back to the tokens" } }
                }
            }))
        },
    )
    .await
}

/// `POST /admin/tokens/{id}/delete`.
pub async fn delete_token(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
) -> HttpResponse {
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        tokens::DELETE_BY_ID,
        "/admin/tokens",
        |caller| async move {
            tokens::delete_by_id(app, &caller, id).await?;
            Ok(None)
        },
    )
    .await
}

/// `GET /admin/users`.
pub async fn users_page(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    admin_page(&state, &request, users::LIST, "admin", "Users", |_| async move {
        let listed = users::list(app).await?;
        Ok(html! {
            h1 { "Users" }
            (admin_nav("users"))
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Name" } th scope="col" { "Email or username" } th scope="col" { "Root role" } } }
                    tbody {
                        @for user in listed.users() {
                            @let id = user.id();
                            @let login = user.email().or(user.username()).unwrap_or_default();
                            tr {
                                td { (user.name().unwrap_or("")) }
                                td { (login) }
                                td {
                                    form.row method="post" action=(format!("/admin/users/{id}")) {
                                        label.visually-hidden for=(format!("role-{id}")) { "Root role of " (login) }
                                        select id=(format!("role-{id}")) name="rootRole" {
                                            @for role in listed.root_roles() {
                                                option value=(role.id()) selected[role.id() == user.root_role()] { (role.name()) }
                                            }
                                        }
                                        button.secondary type="submit" { "Save" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        })
    })
    .await
}

/// `POST /admin/users/{id}`: a new root role.
pub async fn update_user(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
    body: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        users::UPDATE,
        "/admin/users",
        |caller| async move {
            let role: i64 = field(&fields, "rootRole")
                .parse()
                .map_err(|_| AdminError::invalid("/rootRole", "choose a root role"))?;
            let change = UpdateUserRequest::role_change(role)
                .map_err(|error| AdminError::invalid("/rootRole", error))?;
            users::update(app, &caller, id, change).await?;
            Ok(None)
        },
    )
    .await
}
