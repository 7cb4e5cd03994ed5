//! The web console: pages rendered on the server, over the same application operations the API
//! calls. A page parses its form or query, calls one `flag_admin` operation as the signed-in
//! user, and renders the view model that operation returns; it holds no rule of its own, and
//! the server refuses whatever the user's role may not do whatever the page shows.
//!
//! - Templates are Rust (maud), compiled into the binary and escaped by default.
//! - Plain forms work without JavaScript; `assets/console.js` only adds live password rules, a
//!   switch that flips without a reload, and copy buttons.
//! - Every answer carries a Content-Security-Policy with no inline script or style, and every
//!   form post must come from this origin (its `Origin`, or else `Referer`), besides the
//!   `SameSite=Lax` session cookie.

mod admin;
mod assets;
mod change_requests;
mod constraints;
mod context;
mod events;
mod flag;
mod flags;
mod history;
mod layout;
mod life;
mod login;
mod playground;
mod projects;
mod segments;
mod settings;
mod signup;
mod sso;
mod strategy;
mod teams;
mod usage;
mod variants;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::AdminError;
use flag_admin::identity::auth::{self, Credential, Principal};

use crate::auth::SESSION_COOKIE;
use crate::state::AppState;

/// The console's paths; the API has none of them.
pub fn configure(config: &mut web::ServiceConfig) {
    // A form body that does not read (a field missing or of the wrong kind) gets a page, as every
    // refusal does; the API's JSON bodies have their own extractor.
    config.app_data(web::FormConfig::default().error_handler(|error, _| {
        let page = layout::failure(&AdminError::bad_request(format!(
            "the form does not read: {error}"
        )));
        actix_web::error::InternalError::from_response(error, page).into()
    }));
    config
        .service(web::resource("/").route(web::get().to(home)))
        .service(
            web::resource("/login")
                .app_data(query_pages())
                .route(web::get().to(login::page))
                .route(web::post().to(login::submit)),
        )
        .service(
            web::resource("/signed-out")
                .app_data(query_pages())
                .route(web::get().to(login::signed_out)),
        )
        .service(
            web::resource(flag_admin::identity::oidc::LOGIN_PATH)
                .app_data(query_pages())
                .route(web::get().to(sso::start)),
        )
        .service(
            web::resource(flag_admin::identity::oidc::CALLBACK_PATH)
                .app_data(query_pages())
                .route(web::get().to(sso::callback)),
        )
        .service(
            web::resource("/new-user")
                .route(web::get().to(signup::page))
                .route(web::post().to(signup::submit)),
        )
        .service(
            web::resource("/flags")
                .route(web::get().to(flags::list))
                .route(web::post().to(flags::create)),
        )
        .service(
            web::resource("/flags/{project}/{feature}/environments/{environment}")
                .route(web::post().to(flags::switch)),
        )
        .service(web::resource("/flags/{project}/{feature}").route(web::get().to(flag::page)))
        .service(
            web::resource("/flags/{project}/{feature}/variants").route(web::post().to(flag::save_variants)),
        )
        .service(
            web::resource(
                "/flags/{project}/{feature}/{what:(stale|clone|tags|tags/delete|dependencies|dependencies/delete)}",
            )
            .route(web::post().to(life::post)),
        )
        .service(web::resource("/flags/{project}/{feature}/{action}").route(web::post().to(flags::archive)))
        .service(
            web::resource("/flags/{project}/{feature}/environments/{environment}/strategies")
                .route(web::post().to(strategy::save)),
        )
        .service(
            web::resource("/flags/{project}/{feature}/environments/{environment}/strategies/{id}")
                .route(web::get().to(strategy::page))
                .route(web::post().to(strategy::save)),
        )
        .service(
            web::resource("/flags/{project}/{feature}/environments/{environment}/strategies/{id}/delete")
                .route(web::post().to(strategy::delete)),
        )
        .service(
            web::resource("/flags/{project}/{feature}/environments/{environment}/strategies/{id}/move")
                .route(web::post().to(strategy::move_one)),
        )
        .service(
            web::resource("/segments")
                .route(web::get().to(segments::list))
                .route(web::post().to(segments::save)),
        )
        .service(
            web::resource("/segments/{id}")
                .route(web::get().to(segments::page))
                .route(web::post().to(segments::save)),
        )
        .service(web::resource("/segments/{id}/delete").route(web::post().to(segments::delete)))
        .service(
            web::resource("/context")
                .route(web::get().to(context::list))
                .route(web::post().to(context::save)),
        )
        .service(
            web::resource("/context/{name}")
                .route(web::get().to(context::page))
                .route(web::post().to(context::save)),
        )
        .service(web::resource("/context/{name}/delete").route(web::post().to(context::delete)))
        .service(web::resource("/events").route(web::get().to(events::page)))
        .service(web::resource("/applications").route(web::get().to(usage::applications_page)))
        .service(
            web::resource("/projects")
                .route(web::get().to(projects::list))
                .route(web::post().to(projects::create)),
        )
        .service(web::resource("/projects/{id}").route(web::get().to(projects::page)))
        .service(web::resource("/projects/{id}/change-requests").route(web::get().to(change_requests::list)))
        .service(
            web::resource("/projects/{id}/change-requests/config").route(web::post().to(change_requests::config)),
        )
        .service(
            web::resource("/projects/{id}/change-requests/propose").route(web::post().to(change_requests::propose)),
        )
        .service(
            web::resource("/projects/{id}/change-requests/{request}")
                .route(web::get().to(change_requests::page))
                .route(web::post().to(change_requests::act)),
        )
        .service(web::resource("/projects/{id}/environments").route(web::post().to(projects::environment)))
        .service(web::resource("/playground").route(web::get().to(playground::page)))
        .service(web::resource("/history").route(web::get().to(history::page)))
        .service(web::resource("/admin").route(web::get().to(admin_home)))
        .service(
            web::resource("/admin/invites")
                .route(web::get().to(admin::invites))
                .route(web::post().to(admin::create_invite)),
        )
        .service(web::resource("/admin/invites/{secret}").route(web::post().to(admin::update_invite)))
        .service(
            web::resource("/admin/tokens")
                .route(web::get().to(admin::tokens))
                .route(web::post().to(admin::create_token)),
        )
        .service(web::resource("/admin/tokens/{id}/delete").route(web::post().to(admin::delete_token)))
        .service(web::resource("/admin/users").route(web::get().to(admin::users_page)))
        .service(
            web::resource("/admin/webhooks")
                .route(web::get().to(settings::webhooks))
                .route(web::post().to(settings::create_webhook)),
        )
        .service(
            web::resource("/admin/webhooks/{id}/{action}").route(web::post().to(settings::webhook_action)),
        )
        .service(web::resource("/admin/sign-in").route(web::get().to(settings::sign_in)))
        .service(web::resource("/admin/sign-in/password").route(web::post().to(settings::save_password)))
        .service(web::resource("/admin/sign-in/oidc").route(web::post().to(settings::save_oidc)))
        .service(
            web::resource("/admin/import")
                .route(web::get().to(settings::transfer))
                .route(web::post().to(settings::import)),
        )
        .service(web::resource("/admin/export").route(web::get().to(settings::download)))
        .service(web::resource("/admin/users/{id}").route(web::post().to(admin::update_user)))
        .service(
            web::resource("/admin/roles")
                .route(web::get().to(teams::roles))
                .route(web::post().to(teams::create_role)),
        )
        .service(
            web::resource("/admin/roles/{id}")
                .route(web::get().to(teams::role))
                .route(web::post().to(teams::save_role)),
        )
        .service(web::resource("/admin/roles/{id}/delete").route(web::post().to(teams::delete_role)))
        .service(
            web::resource("/admin/groups")
                .route(web::get().to(teams::groups))
                .route(web::post().to(teams::create_group)),
        )
        .service(
            web::resource("/admin/groups/{id}")
                .route(web::get().to(teams::group))
                .route(web::post().to(teams::save_group)),
        )
        .service(web::resource("/admin/groups/{id}/delete").route(web::post().to(teams::delete_group)))
        .service(
            web::resource("/admin/service-accounts")
                .route(web::get().to(teams::service_accounts))
                .route(web::post().to(teams::create_service_account)),
        )
        .service(
            web::resource("/admin/service-accounts/{id}")
                .route(web::get().to(teams::service_account))
                .route(web::post().to(teams::save_service_account)),
        )
        .service(
            web::resource("/admin/service-accounts/{id}/tokens/{token}/delete")
                .route(web::post().to(teams::delete_service_account_token)),
        )
        .service(
            web::resource("/admin/service-accounts/{id}/{action}").route(web::post().to(teams::service_account_action)),
        )
        .service(web::resource("/projects/{id}/access").route(web::post().to(teams::change_access)))
        .service(web::resource("/console/{file}").route(web::get().to(assets::serve)));
}

/// A query that does not read, on the pages a browser is sent to from elsewhere (the provider's
/// callback, the login links, the page after signing out), gets a page, not the API's JSON.
fn query_pages() -> web::QueryConfig {
    web::QueryConfig::default().error_handler(|error, _| {
        let page = layout::failure(&AdminError::bad_request(format!(
            "the address does not read: {error}"
        )));
        actix_web::error::InternalError::from_response(error, page).into()
    })
}

/// Whether `path` is the console's, so that its answers get the console's headers.
fn is_console(path: &str) -> bool {
    matches!(
        path,
        "/" | "/login"
            | "/signed-out"
            | "/new-user"
            | "/playground"
            | "/history"
            | "/admin"
            | "/flags"
            | "/segments"
            | "/context"
            | "/events"
            | "/projects"
            | "/applications"
    ) || path.starts_with("/flags/")
        || path.starts_with("/projects/")
        || path.starts_with("/segments/")
        || path.starts_with("/context/")
        || path.starts_with("/admin/")
        || path.starts_with("/console/")
        || path.starts_with("/auth/oidc/")
}

/// The console's security headers on each of its answers: a Content-Security-Policy with no
/// inline script or style, no framing, no sniffing, and no referrer beyond this origin.
pub async fn headers(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let console = is_console(request.path());
    let mut response = next.call(request).await?;
    if console {
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                 connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        );
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    }
    Ok(response)
}

/// `/admin`: the invite links.
async fn admin_home() -> HttpResponse {
    see_other("/admin/invites")
}

/// `/`: the flags page.
async fn home() -> HttpResponse {
    see_other("/flags")
}

/// 303 See Other to `location`: where a form post, or a page that needs a login, sends the
/// browser.
fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, location))
        .finish()
}

/// A path to come back to after signing in: only this site's own absolute paths.
fn local_path(next: Option<&str>) -> &str {
    match next {
        // Visible ASCII only: browsers drop tabs and line breaks (`/\t/evil` becomes `//evil`),
        // and a header cannot carry them.
        Some(path)
            if path.starts_with('/')
                && !path.starts_with("//")
                && path.bytes().all(|byte| byte.is_ascii_graphic() && byte != b'\\') =>
        {
            path
        }
        _ => "/flags",
    }
}

/// The signed-in user, or the login page with a way back here.
async fn signed_in(state: &AppState, request: &HttpRequest) -> Result<Principal, HttpResponse> {
    let credential = match request.cookie(SESSION_COOKIE) {
        Some(cookie) => auth::resolve_session(&state.app, cookie.value()).await,
        None => Ok(Credential::Unknown),
    };
    match credential {
        Ok(Credential::Admin(principal @ Principal::User { .. })) => Ok(principal),
        Ok(_) => {
            let here = request
                .uri()
                .path_and_query()
                .map_or("/flags", |path| path.as_str());
            let next: String = url_escape(here);
            Err(see_other(&format!("/login?next={next}")))
        }
        Err(error) => Err(layout::failure(&error)),
    }
}

/// A form or query field, trimmed; empty when absent.
fn field(fields: &[(String, String)], name: &str) -> String {
    fields
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.trim().to_owned())
        .unwrap_or_default()
}

/// The items of a comma-separated field, trimmed, empty ones left out.
fn comma_list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A form's fields in order, repeated names kept (`environments=a&environments=b`).
fn form_fields(body: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// The signed-in user of a form post sent from this origin: what every state-changing page
/// asks first; otherwise the page to answer with (the login page, or the refusal).
async fn poster(state: &AppState, request: &HttpRequest) -> Result<Principal, HttpResponse> {
    let principal = signed_in(state, request).await?;
    same_origin(request).map_err(|refused| layout::failure(&refused))?;
    Ok(principal)
}

/// Percent-encodes everything but unreserved characters and `/`, for a query value.
fn url_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~' | b'/') {
            escaped.push(char::from(byte));
        } else {
            escaped.push_str(&format!("%{byte:02X}"));
        }
    }
    escaped
}

/// Refuses a state-changing request that did not come from a page of this origin: its
/// `Origin` header (or, without one, its `Referer`) must name the host the request was sent to.
/// Browsers send `Origin` with every cross-site form post, so a forged form is refused even
/// where the `SameSite` cookie would travel.
fn same_origin(request: &HttpRequest) -> Result<(), AdminError> {
    if request.method() == Method::GET || request.method() == Method::HEAD {
        return Ok(());
    }
    let host = request.connection_info().host().to_owned();
    let from = request
        .headers()
        .get(header::ORIGIN)
        .or_else(|| request.headers().get(header::REFERER))
        .and_then(|value| value.to_str().ok())
        .and_then(|value| url::Url::parse(value).ok());
    let matches = from.is_some_and(|url| {
        let authority = match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => String::new(),
        };
        authority.eq_ignore_ascii_case(&host)
    });
    if matches {
        Ok(())
    } else {
        Err(AdminError::NoAccess(
            "this form was not sent from this site's own pages, so it was refused".into(),
        ))
    }
}
