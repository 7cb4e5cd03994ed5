//! Single sign-on settings: `/api/admin/auth/oidc/settings` and
//! `/api/admin/auth/simple/settings`, as Unleash's admin UI reads and writes them.

use actix_web::web;
use flag_admin::identity::oidc;
use flag_admin::identity::oidc::types::{OidcSettings, PasswordAuthSettings};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::state::AppState;

/// The OpenID Connect settings in force; the secret is `*****`.
///
/// The settings come from the `OIDC_*` environment variables when `OIDC_ENABLED` is set, and
/// are stored through this API otherwise.
#[utoipa::path(
    get,
    path = "/api/admin/auth/oidc/settings",
    tag = "Auth",
    operation_id = "getOidcSettings",
    responses(
        (status = 200, description = "The settings", body = OidcSettings),
    ),
)]
pub async fn get_oidc(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
) -> Result<web::Json<OidcSettings>, ApiError> {
    Ok(web::Json(oidc::settings(&state.app, &caller).await?))
}

/// Change the OpenID Connect settings.
///
/// They are checked before they are stored: an enabled provider needs `discoverUrl` (https, or
/// http on loopback), `clientId` and `secret`. `*****` as the secret keeps the stored one. The
/// next login discovers the provider again. While the `OIDC_*` environment variables set them,
/// they cannot be changed here, and single sign-on cannot be switched off while password login
/// is off (403, `InvalidOperationError`).
#[utoipa::path(
    post,
    path = "/api/admin/auth/oidc/settings",
    tag = "Auth",
    operation_id = "setOidcSettings",
    request_body = OidcSettings,
    responses(
        (status = 200, description = "The settings stored, the secret masked", body = OidcSettings),
        (status = 400, description = "The settings break a rule", body = ErrorBody),
    ),
)]
pub async fn set_oidc(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(settings): ObjectBody<OidcSettings>,
) -> Result<web::Json<OidcSettings>, ApiError> {
    Ok(web::Json(
        oidc::save_settings(&state.app, state.app.identity(), &caller, settings).await?,
    ))
}

/// Whether logging in with a password is switched off.
#[utoipa::path(
    get,
    path = "/api/admin/auth/simple/settings",
    tag = "Auth",
    operation_id = "getSimpleSettings",
    responses(
        (status = 200, description = "The setting", body = PasswordAuthSettings),
    ),
)]
pub async fn get_password(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<PasswordAuthSettings>, ApiError> {
    Ok(web::Json(oidc::password_settings(&state.app).await?))
}

/// Switch logging in with a password off or on.
///
/// It can be switched off only while single sign-on is on, so that someone can always sign in
/// (403, `InvalidOperationError`, otherwise).
/// API tokens keep working either way.
#[utoipa::path(
    post,
    path = "/api/admin/auth/simple/settings",
    tag = "Auth",
    operation_id = "setSimpleSettings",
    request_body = PasswordAuthSettings,
    responses(
        (status = 200, description = "The setting stored", body = PasswordAuthSettings),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
    ),
)]
pub async fn set_password(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(settings): ObjectBody<PasswordAuthSettings>,
) -> Result<web::Json<PasswordAuthSettings>, ApiError> {
    Ok(web::Json(
        oidc::save_password_settings(&state.app, &caller, settings).await?,
    ))
}
