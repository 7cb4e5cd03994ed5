//! The frontend API (`/api/frontend`): flags evaluated on the server for a browser or mobile
//! SDK's context, from the compiled engine cache, with no database work per request; and the
//! UI configuration that holds its allowed origins.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::delivery::frontend;
use flag_admin::delivery::frontend::types::{FrontendFeatures, FrontendRequest, SetCors, UiConfig};

use crate::auth::{Admitted, FrontendToken};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{JsonBytes, ObjectBody, client_address};
use crate::respond::{NoContent, Tagged, weak_etag};
use crate::state::AppState;

fn answer(request: &HttpRequest, body: Vec<u8>, conditional: bool) -> HttpResponse {
    let etag = weak_etag(&body);
    if conditional && Tagged::<()>::is_current(request, &etag) {
        // A 304 stands for the 200 it replaces, so it carries the same caching rule.
        return HttpResponse::NotModified()
            .insert_header((header::ETAG, etag))
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
            .finish();
    }
    HttpResponse::Ok()
        .insert_header((header::ETAG, etag))
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .body(body)
}

/// The flags enabled for the context in the query string (`userId=…&properties[plan]=pro`).
#[utoipa::path(
    get,
    path = "/api/frontend",
    tag = "Frontend API",
    operation_id = "getFrontendFeatures",
    params(
        ("userId" = Option<String>, Query, description = "The user"),
        ("sessionId" = Option<String>, Query, description = "The session; a fresh one when absent"),
        ("remoteAddress" = Option<String>, Query, description = "The client's address; the caller's when absent"),
        ("appName" = Option<String>, Query, description = "The application"),
        ("properties" = Option<Object>, Query, style = DeepObject, explode, description = "Custom fields, as `properties[name]=value`; other names are custom fields too"),
        ("If-None-Match" = Option<String>, Header, description = "An `ETag` from an earlier answer"),
    ),
    responses(
        (status = 200, description = "The enabled flags", body = FrontendFeatures,
            headers(("ETag" = String, description = "Weak; changes with the answer"))),
        (status = 304, description = "The answer has the `ETag` in `If-None-Match`"),
    ),
)]
pub async fn get_features(
    state: web::Data<AppState>,
    FrontendToken(access): FrontendToken,
    request: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, ApiError> {
    let context = frontend::context_from(query.into_inner(), client_address(&request), state.app.now_utc())?;
    let body = frontend::evaluate(&state.app, state.app.delivery(), &access, &context).await?;
    Ok(answer(&request, body, true))
}

/// The flags enabled for the context in the body (`{"context": {...}}`); always 200.
#[utoipa::path(
    post,
    path = "/api/frontend",
    tag = "Frontend API",
    operation_id = "getFrontendApiFeaturesWithPost",
    request_body = FrontendRequest,
    responses(
        (status = 200, description = "The enabled flags", body = FrontendFeatures,
            headers(("ETag" = String, description = "Weak; changes with the answer"))),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 413, description = "The body is larger than the limit", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
    ),
)]
pub async fn post_features(
    state: web::Data<AppState>,
    FrontendToken(access): FrontendToken,
    request: HttpRequest,
    JsonBytes(body): JsonBytes,
) -> Result<HttpResponse, ApiError> {
    // An empty body is an empty context, as in Unleash.
    let request_body: FrontendRequest = if body.iter().all(u8::is_ascii_whitespace) {
        FrontendRequest::default()
    } else {
        crate::extract::parse(&body)?
    };
    let pairs = frontend::json_pairs(request_body.context)?;
    let context = frontend::context_from(pairs, client_address(&request), state.app.now_utc())?;
    let body = frontend::evaluate(&state.app, state.app.delivery(), &access, &context).await?;
    Ok(answer(&request, body, false))
}

/// What the UI needs to know about the server, with the frontend API's origins.
#[utoipa::path(
    get,
    path = "/api/admin/ui-config",
    tag = "Admin UI",
    operation_id = "getUiConfig",
    responses(
        (status = 200, description = "The configuration", body = UiConfig),
    ),
)]
pub async fn ui_config(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<UiConfig>, ApiError> {
    Ok(web::Json(
        frontend::ui_config(&state.app, state.app.identity()).await?,
    ))
}

/// Sets the origins the frontend API answers; every replica applies it on its next request.
#[utoipa::path(
    post,
    path = "/api/admin/ui-config/cors",
    tag = "Admin UI",
    operation_id = "setCors",
    request_body = SetCors,
    responses(
        (status = 204, description = "Set; no body"),
        (status = 400, description = "The body breaks the schema, or an origin is not `*` or `scheme://host[:port]`", body = ErrorBody),
    ),
)]
pub async fn set_cors(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<SetCors>,
) -> Result<NoContent, ApiError> {
    frontend::set_cors(&state.app, &caller, request).await?;
    Ok(NoContent)
}

/// What Unleash answers on the frontend API's paths it does not serve.
const NOT_IMPLEMENTED: &str = "The frontend API does not support this endpoint.";

/// Not served: the frontend API evaluates on the server, so SDKs poll `/api/frontend`.
#[utoipa::path(
    get,
    path = "/api/frontend/client/features",
    tag = "Frontend API",
    operation_id = "getFrontendClientFeatures",
    responses(
        (status = 405, description = "Always, with a frontend token, as Unleash answers", body = ErrorBody),
    ),
)]
pub async fn client_features(FrontendToken(_): FrontendToken) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotImplemented(NOT_IMPLEMENTED))
}

/// Not served: the server's own health is at `/health`.
#[utoipa::path(
    get,
    path = "/api/frontend/health",
    tag = "Frontend API",
    operation_id = "getFrontendHealth",
    responses(
        (status = 405, description = "Always, with a frontend token, as Unleash answers", body = ErrorBody),
    ),
)]
pub async fn health(FrontendToken(_): FrontendToken) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotImplemented(NOT_IMPLEMENTED))
}

/// Not served: the server's metrics are at `/internal-backstage/prometheus`.
#[utoipa::path(
    get,
    path = "/api/frontend/internal-backstage/prometheus",
    tag = "Frontend API",
    operation_id = "getFrontendPrometheus",
    responses(
        (status = 405, description = "Always, with a frontend token, as Unleash answers", body = ErrorBody),
    ),
)]
pub async fn prometheus(FrontendToken(_): FrontendToken) -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotImplemented(NOT_IMPLEMENTED))
}
