//! `/login` and `/signed-out`. Signing out is the API's `POST /logout`, which ends the session
//! and sends the browser to `/signed-out`.

use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::AdminError;
use flag_admin::dto::session::LoginRequest;
use flag_admin::session;
use maud::{Markup, html};
use serde::Deserialize;

use super::{layout, local_path, same_origin};
use crate::extract::client_address;
use crate::state::AppState;

/// Where to go after signing in.
#[derive(Debug, Deserialize)]
pub struct Next {
    next: Option<String>,
}

/// The login form's fields.
#[derive(Debug, Deserialize)]
pub struct LoginForm {
    username: String,
    password: String,
    next: Option<String>,
}

fn form(username: &str, next: &str, error: Option<&AdminError>) -> Markup {
    html! {
        div.card.narrow {
            h1 { "Sign in" }
            @if let Some(error) = error { (layout::notice(error)) }
            form method="post" action="/login" {
                input type="hidden" name="next" value=(next);
                label for="username" { "Email or username" }
                input id="username" name="username" type="text" autocomplete="username" required value=(username);
                label for="password" { "Password" }
                input id="password" name="password" type="password" autocomplete="current-password" required;
                p { button type="submit" { "Sign in" } }
            }
        }
    }
}

/// `GET /login`.
pub async fn page(query: web::Query<Next>) -> HttpResponse {
    let next = local_path(query.next.as_deref());
    layout::page(StatusCode::OK, "Sign in", None, "", &form("", next, None))
}

/// `POST /login`: signs in, sets the session cookie and goes back to the page that asked.
pub async fn submit(
    state: web::Data<AppState>,
    request: HttpRequest,
    fields: web::Form<LoginForm>,
) -> HttpResponse {
    if let Err(refused) = same_origin(&request) {
        return layout::failure(&refused);
    }
    let LoginForm {
        username,
        password,
        next,
    } = fields.into_inner();
    let next = local_path(next.as_deref()).to_owned();
    let login = LoginRequest {
        username: username.clone(),
        password,
    };
    match session::login(&state.app, client_address(&request), login).await {
        Ok(logged_in) => HttpResponse::SeeOther()
            .cookie(crate::auth::session_cookie(&state.app, logged_in.session))
            .insert_header((LOCATION, next))
            .finish(),
        Err(error) => layout::page(
            crate::error::status_of(&error),
            "Sign in",
            None,
            "",
            &form(&username, &next, Some(&error)),
        ),
    }
}

/// `GET /signed-out`.
pub async fn signed_out() -> HttpResponse {
    layout::page(
        StatusCode::OK,
        "Signed out",
        None,
        "",
        &html! {
            div.card.narrow {
                h1 { "You are signed out" }
                p { a href="/login" { "Sign in again" } }
            }
        },
    )
}
