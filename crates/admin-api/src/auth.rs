//! Credentials on HTTP: `Authorization: <token>` (a `Bearer ` prefix is accepted) or the session
//! cookie set by `POST /auth/simple/login`, resolved by the application's `auth` module and
//! admitted by the access each operation declares (see `routes`).

use std::future::Future;
use std::pin::Pin;

use actix_web::body::MessageBody;
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::AUTHORIZATION;
use actix_web::middleware::Next;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use flag_admin::AdminError;
use flag_admin::identity::auth::{
    self, Access, Caller, ClientAccess, Credential, FrontendAccess, wrong_token_type,
};

use crate::error::ApiError;
use crate::state::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "unleash-session";

/// The session cookie for `session`: `HttpOnly`, `SameSite=Lax`, `Secure` when the server is
/// configured for https, for the session's lifetime. The login operation and the console's
/// login page both set it.
pub fn session_cookie(ctx: &flag_admin::Ctx, session: String) -> actix_web::cookie::Cookie<'static> {
    actix_web::cookie::Cookie::build(SESSION_COOKIE, session)
        .path("/")
        .http_only(true)
        .same_site(actix_web::cookie::SameSite::Lax)
        .secure(ctx.settings().secure_cookies)
        .max_age(actix_web::cookie::time::Duration::days(
            flag_admin::identity::session::SESSION_DAYS,
        ))
        .finish()
}

/// The accesses of one path's operations, by method: set by `routes::configure` on each
/// resource, and read by the extractors below, so the access an operation declares is the one
/// its requests are admitted by.
#[derive(Debug, Default)]
pub struct Declared(pub Vec<(actix_web::http::Method, Access)>);

/// The access declared for `request`'s operation. A route without one admits nobody.
fn declared(request: &HttpRequest) -> Result<Access, ApiError> {
    let method = if request.method() == actix_web::http::Method::HEAD {
        actix_web::http::Method::GET
    } else {
        request.method().clone()
    };
    request
        .app_data::<Declared>()
        .and_then(|declared| {
            declared
                .0
                .iter()
                .find(|(declared, _)| *declared == method)
                .map(|(_, access)| *access)
        })
        .ok_or_else(|| ApiError::internal(format!("no access is declared for {method} {}", request.path())))
}

/// Checks that `request`'s operation declares `access`, the one its extractor admits.
fn expect(request: &HttpRequest, access: Access) -> Result<(), ApiError> {
    let declared = declared(request)?;
    if declared == access {
        Ok(())
    } else {
        Err(ApiError::internal(format!(
            "{} {} declares {declared:?} but takes {access:?} credentials",
            request.method(),
            request.path()
        )))
    }
}

/// The token in an `Authorization` header, without an optional `Bearer ` prefix.
pub fn bearer(request: &HttpRequest) -> Option<String> {
    let value = request.headers().get(AUTHORIZATION)?.to_str().ok()?.trim();
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or(value)
        .trim();
    (!token.is_empty()).then(|| token.to_owned())
}

fn app_state(request: &HttpRequest) -> Result<&web::Data<AppState>, ApiError> {
    request
        .app_data::<web::Data<AppState>>()
        .ok_or_else(|| ApiError::internal("application state missing"))
}

async fn resolve(state: &AppState, request: &HttpRequest) -> Result<Credential, ApiError> {
    if let Some(token) = bearer(request) {
        return Ok(auth::resolve_token(&state.app, state.app.identity(), &token).await?);
    }
    match request.cookie(SESSION_COOKIE) {
        Some(cookie) => Ok(auth::resolve_session(&state.app, cookie.value()).await?),
        None => Ok(Credential::Unknown),
    }
}

type Extracted<T> = Pin<Box<dyn Future<Output = Result<T, ApiError>>>>;

/// What an SDK's token grants: on an edge, a token the store does not hold yet is validated
/// upstream on its first use and then resolved again.
async fn resolve_sdk_token(state: &AppState, token: &str) -> Result<Credential, ApiError> {
    let credential = auth::resolve_token(&state.app, state.app.identity(), token).await?;
    if let (Credential::Unknown, Some(edge)) = (&credential, &state.edge)
        && edge.admit(token).await?
    {
        return Ok(auth::resolve_token(&state.app, state.app.identity(), token).await?);
    }
    Ok(credential)
}

/// A request's credentials, admitted by the access its operation declares.
#[derive(Debug)]
enum Admission {
    Admin(Caller),
    Client(ClientAccess),
    Frontend(FrontendAccess),
}

/// Admits `request` by the access its operation declares; `None` for a public operation.
async fn admission(request: &HttpRequest) -> Option<Result<Admission, ApiError>> {
    // A method the path does not serve is answered by the resource's default service.
    let access = match declared(request) {
        Ok(Access::Public) | Err(_) => return None,
        Ok(access) => access,
    };
    let state = match app_state(request) {
        Ok(state) => state,
        Err(error) => return Some(Err(error)),
    };
    Some(match access {
        Access::Client => sdk_token(state, bearer(request))
            .await
            .and_then(|credential| match credential {
                Credential::Client(access) => Ok(Admission::Client(access)),
                Credential::Admin(_) | Credential::Frontend(_) => Err(wrong_token_type().into()),
                Credential::Unknown => Err(AdminError::AuthenticationRequired.into()),
            }),
        Access::Frontend => {
            // OpenFeature's providers may send the token as `X-API-Key`, as OFREP allows.
            let api_key = || {
                request
                    .path()
                    .starts_with("/ofrep/")
                    .then(|| request.headers().get("X-API-Key")?.to_str().ok())
                    .flatten()
                    .map(|key| key.trim().to_owned())
                    .filter(|key| !key.is_empty())
            };
            let token = bearer(request).or_else(api_key);
            sdk_token(state, token)
                .await
                .and_then(|credential| match credential {
                    Credential::Frontend(access) => Ok(Admission::Frontend(access)),
                    Credential::Admin(_) | Credential::Client(_) => Err(wrong_token_type().into()),
                    Credential::Unknown => Err(AdminError::AuthenticationRequired.into()),
                })
        }
        _ => match resolve(state, request).await {
            // Project roles count in the project the path names.
            Ok(Credential::Admin(principal)) => access
                .admit_in(principal, request.match_info().get("projectId"))
                .map(Admission::Admin)
                .map_err(ApiError::from),
            Ok(Credential::Client(_) | Credential::Frontend(_)) => Err(wrong_token_type().into()),
            Ok(Credential::Unknown) => Err(AdminError::AuthenticationRequired.into()),
            Err(error) => Err(error),
        },
    })
}

/// An SDK's token, resolved; a request without one needs authentication.
async fn sdk_token(state: &AppState, token: Option<String>) -> Result<Credential, ApiError> {
    match token {
        Some(token) => resolve_sdk_token(state, &token).await,
        None => Err(AdminError::AuthenticationRequired.into()),
    }
}

/// Resolves and admits every request's credentials before its handler's extractors read its
/// path, query or body, so a request without the access its operation declares is answered 401
/// or 403 whatever else is wrong with it, as Unleash answers, and never by whichever extractor
/// happened to finish first. The extractors below take what this admitted.
pub async fn admit(
    request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    if let Some(admission) = admission(request.request()).await {
        request.extensions_mut().insert(Admitting(admission));
    }
    next.call(request).await
}

/// What [`admit`] decided for a request, until its extractor takes it.
struct Admitting(Result<Admission, ApiError>);

/// What [`admit`] decided for `request`, or, on a resource it does not wrap, the decision made
/// now.
async fn take(request: &HttpRequest) -> Result<Admission, ApiError> {
    let admitted = request.extensions_mut().remove::<Admitting>();
    match admitted {
        Some(Admitting(admission)) => admission,
        None => match admission(request).await {
            Some(admission) => admission,
            None => Err(declared(request).err().unwrap_or_else(|| {
                ApiError::internal(format!(
                    "{} {} is public and takes no credentials",
                    request.method(),
                    request.path()
                ))
            })),
        },
    }
}

/// An administrator admitted to the operation by the access it declares.
impl FromRequest for Admitted {
    type Error = ApiError;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            match take(&request).await? {
                Admission::Admin(caller) => Ok(Self(caller)),
                Admission::Client(_) | Admission::Frontend(_) => Err(ApiError::internal(format!(
                    "{} {} declares an SDK's access but takes an administrator's credentials",
                    request.method(),
                    request.path()
                ))),
            }
        })
    }
}

/// A [`Caller`]: an administrator admitted by the access the operation declares.
#[derive(Debug)]
pub struct Admitted(pub Caller);

/// A client or backend token, for the client API.
#[derive(Debug)]
pub struct ClientToken(pub ClientAccess);

impl FromRequest for ClientToken {
    type Error = ApiError;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            expect(&request, Access::Client)?;
            match take(&request).await? {
                Admission::Client(access) => Ok(Self(access)),
                Admission::Admin(_) | Admission::Frontend(_) => Err(wrong_token_type().into()),
            }
        })
    }
}

/// A frontend token, for the frontend API and OFREP.
#[derive(Debug)]
pub struct FrontendToken(pub FrontendAccess);

impl FromRequest for FrontendToken {
    type Error = ApiError;
    type Future = Extracted<Self>;

    fn from_request(request: &HttpRequest, _payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        Box::pin(async move {
            expect(&request, Access::Frontend)?;
            match take(&request).await? {
                Admission::Frontend(access) => Ok(Self(access)),
                Admission::Admin(_) | Admission::Client(_) => Err(wrong_token_type().into()),
            }
        })
    }
}
