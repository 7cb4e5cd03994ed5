//! `/new-user?invite=<secret>`: the page an invite link opens. It signs the person up through
//! the signup operation, signs them in, and sends them to the flags.

use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::AdminError;
use flag_admin::identity::invite::types::CreateInvitedUserRequest;
use flag_admin::identity::session::types::LoginRequest;
use flag_admin::{identity::invite, identity::password, identity::session};
use maud::{Markup, html};
use serde::Deserialize;

use super::{layout, same_origin};
use crate::extract::client_address;
use crate::state::AppState;

/// The link's secret.
#[derive(Debug, Deserialize)]
pub struct Invite {
    invite: Option<String>,
}

/// The signup form's fields.
#[derive(Debug, Deserialize)]
pub struct SignupForm {
    invite: String,
    name: String,
    email: String,
    password: String,
}

/// What a refused link says: the same for an unknown, switched-off or expired one.
const UNUSABLE: &str = "This invite link is invalid or has expired. Ask whoever sent it for a new one.";

fn unusable() -> HttpResponse {
    layout::page(
        StatusCode::NOT_FOUND,
        "Invite link",
        None,
        "",
        &html! {
            div.card.narrow {
                h1 { "Invite link" }
                div.notice.error role="alert" { (UNUSABLE) }
                p { a href="/login" { "Sign in" } }
            }
        },
    )
}

fn form(secret: &str, name: &str, email: &str, error: Option<&AdminError>) -> Markup {
    html! {
        div.card.narrow {
            h1 { "Create your account" }
            @if let Some(error) = error { (layout::notice(error)) }
            form method="post" action="/new-user" {
                input type="hidden" name="invite" value=(secret);
                label for="name" { "Name" }
                input id="name" name="name" type="text" autocomplete="name" required maxlength="255" value=(name);
                label for="email" { "Email" }
                input id="email" name="email" type="email" autocomplete="email" required maxlength="255" value=(email);
                label for="password" { "Password" }
                input id="password" name="password" type="password" autocomplete="new-password" required
                    aria-describedby="password-rules" data-rules="password-rules";
                ul.rules id="password-rules" aria-live="polite" {
                    @for rule in password::RULES {
                        li data-rule=(rule.id) { (rule.description) }
                    }
                }
                p { button type="submit" { "Sign up" } }
            }
        }
    }
}

/// `GET /new-user?invite=<secret>`.
pub async fn page(state: web::Data<AppState>, query: web::Query<Invite>) -> HttpResponse {
    let Some(secret) = query.into_inner().invite.filter(|secret| !secret.is_empty()) else {
        return unusable();
    };
    match invite::validate(&state.app, secret.clone()).await {
        Ok(()) => layout::page(StatusCode::OK, "Sign up", None, "", &form(&secret, "", "", None)),
        Err(AdminError::NotFound(_) | AdminError::Validation { .. }) => unusable(),
        Err(error) => layout::failure(&error),
    }
}

/// `POST /new-user`: signs up, signs in and goes to the flags; a refusal shows on the form with
/// what was typed, but never the password.
pub async fn submit(
    state: web::Data<AppState>,
    request: HttpRequest,
    fields: web::Form<SignupForm>,
) -> HttpResponse {
    if let Err(refused) = same_origin(&request) {
        return layout::failure(&refused);
    }
    let SignupForm {
        invite: secret,
        name,
        email,
        password,
    } = fields.into_inner();
    let address = client_address(&request);
    let signup = CreateInvitedUserRequest {
        username: None,
        email: email.clone(),
        name: name.clone(),
        password: password.clone(),
    };
    match invite::sign_up(&state.app, state.app.identity(), address, secret.clone(), signup).await {
        Ok(_) => {
            let login = LoginRequest {
                username: email,
                password,
            };
            match session::login(&state.app, state.app.identity(), address, login).await {
                Ok(logged_in) => HttpResponse::SeeOther()
                    .cookie(crate::auth::session_cookie(&state.app, logged_in.session))
                    .insert_header((LOCATION, "/flags"))
                    .finish(),
                // The account exists; signing in can still be done by hand.
                Err(_) => HttpResponse::SeeOther()
                    .insert_header((LOCATION, "/login"))
                    .finish(),
            }
        }
        Err(AdminError::NotFound(_)) => unusable(),
        Err(error) => layout::page(
            crate::error::status_of(&error),
            "Sign up",
            None,
            "",
            &form(&secret, &name, &email, Some(&error)),
        ),
    }
}
