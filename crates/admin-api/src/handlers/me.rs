//! The signed-in caller, as Unleash's web UI asks for it.

use actix_web::web;
use flag_admin::identity::me;
use flag_admin::identity::me::types::{MeOut, ProfileOut};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::respond::Done;
use crate::state::AppState;

/// Who is signed in, what they may do, and the one-time dialogs they closed; 401, with how to
/// log in, when nobody is.
#[utoipa::path(
    get,
    path = "/api/admin/user",
    tag = "Users",
    operation_id = "getMe",
    responses(
        (status = 200, description = "The caller", body = MeOut),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    caller: Result<Admitted, ApiError>,
) -> Result<web::Json<MeOut>, ApiError> {
    match caller {
        Ok(Admitted(caller)) => Ok(web::Json(me::get(&state.app, &caller).await?)),
        Err(ApiError::Admin(flag_admin::AdminError::AuthenticationRequired)) => {
            let options = flag_admin::identity::oidc::login_options(&state.app).await?;
            Err(if options.oidc {
                ApiError::LoginRequired {
                    password: options.password,
                }
            } else {
                flag_admin::AdminError::AuthenticationRequired.into()
            })
        }
        Err(error) => Err(error),
    }
}

/// The signed-in user's projects and root role.
#[utoipa::path(
    get,
    path = "/api/admin/user/profile",
    tag = "Users",
    operation_id = "getProfile",
    responses(
        (status = 200, description = "The profile", body = ProfileOut),
        (status = 400, description = "An API token has no profile", body = ErrorBody),
    ),
)]
pub async fn profile(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
) -> Result<web::Json<ProfileOut>, ApiError> {
    Ok(web::Json(me::profile(&state.app, &caller).await?))
}

/// Records that the signed-in user closed a one-time dialog of the web UI.
#[utoipa::path(
    post,
    path = "/api/admin/splash/{id}",
    tag = "Users",
    operation_id = "updateSplashSettings",
    params(("id" = String, Path, description = "The dialog")),
    responses((status = 200, description = "Recorded; no body")),
)]
pub async fn close_splash(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    me::close_splash(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}
