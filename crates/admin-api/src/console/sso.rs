//! `/auth/oidc/login` and `/auth/oidc/callback`: signing in through the OpenID provider. Every
//! failure is a page that says which check failed, with the status the API would give it.

use actix_web::cookie::{Cookie, SameSite};
use actix_web::http::StatusCode;
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::AdminError;
use flag_admin::identity::oidc::{self, Callback};
use maud::html;
use serde::Deserialize;

use super::{layout, local_path};
use crate::state::AppState;

/// The cookie that binds a login to the browser that started it.
const LOGIN_COOKIE: &str = "halyard-oidc-login";

/// Where to go after signing in: `redirect`, as Unleash's web UI sends it, or `next`, as the
/// console's pages do.
#[derive(Debug, Deserialize)]
pub struct Start {
    redirect: Option<String>,
    next: Option<String>,
}

fn login_cookie(state: &AppState, value: String) -> Cookie<'static> {
    Cookie::build(LOGIN_COOKIE, value)
        .path("/auth/oidc")
        .http_only(true)
        // Lax: the provider sends the browser back with a top-level GET from its own site.
        .same_site(SameSite::Lax)
        .secure(state.app.settings().secure_cookies)
        .max_age(actix_web::cookie::time::Duration::minutes(10))
        .finish()
}

fn sign_in_failed(error: &AdminError) -> HttpResponse {
    if !crate::error::status_of(error).is_server_error() {
        tracing::info!(%error, "a login through the OpenID provider was refused");
    }
    layout::failure_titled(error, "Sign-in failed", ("/login", "Sign in again"))
}

/// `GET /auth/oidc/login`: sends the browser to the provider.
pub async fn start(
    state: web::Data<AppState>,
    request: HttpRequest,
    query: web::Query<Start>,
) -> HttpResponse {
    let next = local_path(query.redirect.as_deref().or(query.next.as_deref()));
    match oidc::start(
        &state.app,
        state.app.identity(),
        crate::extract::client_address(&request),
        next,
    )
    .await
    {
        Ok(started) => HttpResponse::SeeOther()
            .cookie(login_cookie(&state, started.cookie))
            .insert_header((LOCATION, started.authorize_url))
            .finish(),
        Err(error) => sign_in_failed(&error),
    }
}

/// `GET /auth/oidc/callback`: where the provider sends the browser back; signs in and goes back
/// to the page the login started from.
pub async fn callback(
    state: web::Data<AppState>,
    request: HttpRequest,
    query: web::Query<Callback>,
) -> HttpResponse {
    let cookie = request.cookie(LOGIN_COOKIE);
    let finished = oidc::finish(
        &state.app,
        state.app.identity(),
        cookie.as_ref().map(Cookie::value),
        query.into_inner(),
    )
    .await;
    let mut removal = login_cookie(&state, String::new());
    removal.make_removal();
    let mut response = match finished {
        Ok(finished) => HttpResponse::SeeOther()
            .cookie(crate::auth::session_cookie(
                &state.app,
                finished.logged_in.session,
            ))
            .insert_header((LOCATION, finished.return_to))
            .finish(),
        Err(error) => sign_in_failed(&error),
    };
    if response.add_cookie(&removal).is_err() {
        return layout::page(StatusCode::INTERNAL_SERVER_ERROR, "Error", None, "", &html! {});
    }
    response
}
