//! `POST /auth/simple/login` and `POST /logout`.

use actix_web::cookie::Cookie;
use actix_web::{HttpRequest, web};
use flag_admin::identity::session::types::LoginRequest;
use flag_admin::identity::session::{self, SignedOut};
use flag_admin::identity::users::types::UserOut;

use crate::auth::SESSION_COOKIE;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{ObjectBody, client_address};
use crate::respond::{Found, WithCookie};
use crate::state::AppState;

/// Log in with an email or username and a password; sets the session cookie.
///
/// An email is matched first.
///
/// Attempts are limited per client address (429 with `Retry-After` past the limit), and an
/// unknown user costs one password verification like a known one, so neither guessing nor timing
/// tells who has an account.
#[utoipa::path(
    post,
    path = "/auth/simple/login",
    tag = "Auth",
    operation_id = "login",
    request_body = LoginRequest,
    responses(
        (status = 200, description = "Logged in: the user, and the session cookie", body = UserOut,
            headers(("Set-Cookie" = String, description = "The session cookie, `unleash-session`, HttpOnly, for two days"))),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 429, description = "More than the allowed logins a minute from this address", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the next attempt may succeed"))),
    )
)]
pub async fn login(
    state: web::Data<AppState>,
    http: HttpRequest,
    ObjectBody(request): ObjectBody<LoginRequest>,
) -> Result<WithCookie<web::Json<UserOut>>, ApiError> {
    let logged_in = session::login(&state.app, state.app.identity(), client_address(&http), request).await?;
    let cookie = crate::auth::session_cookie(&state.app, logged_in.session);
    Ok(WithCookie::new(web::Json(logged_in.user), cookie))
}

/// End the session, if any, and clear the cookie; as Unleash does, the answer sends a browser
/// to `/signed-out`; with single sign-out on, a session opened through the OpenID provider goes
/// to `/signed-out?provider=<handle>`, which goes on to the OpenID provider's end-session
/// endpoint with the session's ID token as `id_token_hint`, and the provider sends it back.
/// The handle is good once, for a few minutes, and signs no one in.
#[utoipa::path(
    post,
    path = "/logout",
    tag = "Auth",
    operation_id = "logout",
    responses(
        (status = 302, description = "The session, if any, is over; the cookie is cleared",
            headers(
                ("Set-Cookie" = String, description = "Removes the session cookie"),
                ("Location" = String, description = "`/signed-out`, or `/signed-out?provider=<handle>` with single sign-out"),
            )),
    )
)]
pub async fn logout(state: web::Data<AppState>, request: HttpRequest) -> Result<WithCookie<Found>, ApiError> {
    let cookie = request.cookie(SESSION_COOKIE);
    let signed_out = session::logout(&state.app, cookie.as_ref().map(Cookie::value)).await?;
    let mut removal = Cookie::new(SESSION_COOKIE, "");
    removal.set_path("/");
    removal.set_secure(state.app.settings().secure_cookies);
    removal.make_removal();
    // With single sign-out, `/signed-out` goes on to the provider: from a page of its own, since
    // a form's redirects may not leave the console's origin.
    let location = match signed_out {
        SignedOut::Here => "/signed-out".to_owned(),
        SignedOut::AtProvider { handle } => format!("/signed-out?provider={handle}"),
    };
    Ok(WithCookie::new(Found::to(location), removal))
}
