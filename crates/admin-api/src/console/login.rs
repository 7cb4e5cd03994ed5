//! `/login` and `/signed-out`. Signing out is the API's `POST /logout`, which ends the session
//! and sends the browser to `/signed-out`.

use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::AdminError;
use flag_admin::identity::oidc::LoginOptions;
use flag_admin::identity::session;
use flag_admin::identity::session::types::LoginRequest;
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

fn form(options: LoginOptions, username: &str, next: &str, error: Option<&AdminError>) -> Markup {
    html! {
        div.card.narrow {
            h1 { "Sign in" }
            @if let Some(error) = error { (layout::notice(error)) }
            @if options.oidc {
                p {
                    a.button.primary href={ (flag_admin::identity::oidc::LOGIN_PATH) "?redirect=" (encode(next)) } {
                        "Sign in with single sign-on"
                    }
                }
            }
            @if options.password {
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
}

/// `path` as a query value.
fn encode(path: &str) -> String {
    url::form_urlencoded::byte_serialize(path.as_bytes()).collect()
}

/// How users may sign in; with password login only when the settings cannot be read, so the
/// page still shows.
async fn options(state: &AppState) -> LoginOptions {
    flag_admin::identity::oidc::login_options(&state.app)
        .await
        .unwrap_or(LoginOptions {
            password: true,
            oidc: false,
        })
}

/// `GET /login`.
pub async fn page(state: web::Data<AppState>, query: web::Query<Next>) -> HttpResponse {
    let next = local_path(query.next.as_deref());
    let options = options(&state).await;
    layout::page(
        StatusCode::OK,
        "Sign in",
        None,
        "",
        &form(options, "", next, None),
    )
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
    match session::login(&state.app, state.app.identity(), client_address(&request), login).await {
        Ok(logged_in) => HttpResponse::SeeOther()
            .cookie(crate::auth::session_cookie(&state.app, logged_in.session))
            .insert_header((LOCATION, next))
            .finish(),
        Err(error) => layout::page(
            crate::error::status_of(&error),
            "Sign in",
            None,
            "",
            &form(options(&state).await, &username, &next, Some(&error)),
        ),
    }
}

/// `/signed-out`'s query: `provider` after a sign-out that goes on to the OpenID provider, a
/// one-time handle to the session's ID token.
#[derive(Debug, Deserialize)]
pub struct SignedOut {
    provider: Option<String>,
}

/// `GET /signed-out`; with `provider`, and single sign-out on, it goes on to the provider's
/// end-session endpoint, which comes back here.
pub async fn signed_out(state: web::Data<AppState>, query: web::Query<SignedOut>) -> HttpResponse {
    let provider = match &query.provider {
        Some(handle) => {
            let back = format!("{}/signed-out", state.app.settings().unleash_url);
            flag_admin::identity::oidc::logout_url(&state.app, state.app.identity(), &back, Some(handle))
                .await
        }
        None => None,
    };
    layout::page(
        StatusCode::OK,
        "Signed out",
        None,
        "",
        &html! {
            div.card.narrow {
                @if let Some(provider) = &provider {
                    meta http-equiv="refresh" content={ "0;url=" (provider) };
                    h1 { "Signing you out at your provider" }
                    p { a href=(provider) { "Continue" } }
                } @else {
                    h1 { "You are signed out" }
                    p { a href="/login" { "Sign in again" } }
                }
            }
        },
    )
}
