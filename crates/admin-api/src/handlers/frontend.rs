//! The frontend API (`/api/frontend`): flags evaluated on the server for a browser or mobile
//! SDK's context, from the compiled engine cache, with no database work per request; and the
//! UI configuration that holds its allowed origins.

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_eval::Context;
use flag_store::queries::{self, evaluation::ProjectScope};
use sha2::{Digest as _, Sha256};

use crate::AppState;
use crate::auth::{FRONTEND_ORIGINS, FrontendAccess, Principal};
use crate::dto::frontend::{
    CurrentVersion, FrontendFeatures, FrontendRequest, FrontendToggle, FrontendVariant, LatestVersion,
    SetCors, UiConfig, VersionInfo,
};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, JsonBytes};
use crate::respond::{NoContent, Tagged};

/// The frontend API's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(get_features, post_features, ui_config, set_cors))]
pub struct Api;

/// A context from `(name, value)` pairs, as Unleash builds it for the frontend API: the known
/// fields by name, `properties[name]` and every other name as a property, `currentTime` ignored
/// (date rules use the server's clock), the caller's address when none is given, and a fresh
/// session id when none is given.
pub(crate) fn context_from(
    pairs: impl IntoIterator<Item = (String, String)>,
    request: &HttpRequest,
) -> Result<Context, ApiError> {
    let mut context = Context::default();
    for (name, value) in pairs {
        if value.is_empty() {
            continue;
        }
        match name.as_str() {
            "userId" => context.user_id = Some(value),
            "sessionId" => context.session_id = Some(value),
            "remoteAddress" => context.remote_address = Some(value),
            "appName" => context.app_name = Some(value),
            "environment" => context.environment = Some(value),
            _ => {
                let property = name
                    .strip_prefix("properties[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .unwrap_or(&name);
                context.properties.insert(property.to_owned(), value);
            }
        }
    }
    if context.remote_address.is_none() {
        context.remote_address = Some(crate::rate_limit::client_address(request).to_string());
    }
    let seed = getrandom::u64().map_err(|error| ApiError::Internal(format!("no randomness: {error}")))?;
    if context.session_id.is_none() {
        context.session_id = Some(format!("{seed:016x}"));
    }
    Ok(context.at(chrono::Utc::now()).with_random_seed(seed))
}

/// The `(name, value)` pairs of a JSON context: strings as they are, numbers and booleans as
/// text, `properties` flattened; anything else is a 400.
fn json_pairs(
    context: serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<(String, String)>, ApiError> {
    fn text(path: &str, value: serde_json::Value) -> Result<Option<String>, ApiError> {
        match value {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(text) => Ok(Some(text)),
            serde_json::Value::Number(number) => Ok(Some(number.to_string())),
            serde_json::Value::Bool(flag) => Ok(Some(flag.to_string())),
            _ => Err(ApiError::invalid(path, format!("{path} must be a string"))),
        }
    }
    let mut pairs = Vec::with_capacity(context.len());
    for (name, value) in context {
        if name == "properties" {
            let serde_json::Value::Object(properties) = value else {
                return Err(ApiError::invalid(
                    "/context/properties",
                    "/context/properties must be an object",
                ));
            };
            for (property, value) in properties {
                if let Some(value) = text(&format!("/context/properties/{property}"), value)? {
                    pairs.push((format!("properties[{property}]"), value));
                }
            }
        } else if let Some(value) = text(&format!("/context/{name}"), value)? {
            pairs.push((name, value));
        }
    }
    Ok(pairs)
}

/// Evaluates every flag of the token's environment and projects for `context` and answers the
/// enabled ones, with a weak `ETag` over the body.
async fn evaluate(
    state: &AppState,
    access: &FrontendAccess,
    context: &Context,
) -> Result<(String, Vec<u8>), ApiError> {
    let scope = access
        .projects
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    let compiled = crate::engines::compile(state, &scope, std::slice::from_ref(&access.environment)).await?;
    let Some(compiled) = compiled.first() else {
        return Err(ApiError::Internal("no compiled environment".into()));
    };
    let toggles = compiled
        .features()
        .filter_map(|feature| {
            let variant = compiled.engine.variant(&feature.name, context);
            variant.feature_enabled.then(|| FrontendToggle {
                name: &feature.name,
                enabled: true,
                impression_data: feature.impression_data.unwrap_or(false),
                variant: FrontendVariant {
                    name: variant.name,
                    enabled: variant.enabled,
                    payload: variant.payload,
                    feature_enabled: true,
                    feature_enabled_camel: true,
                },
            })
        })
        .collect();
    let body = serde_json::to_vec(&FrontendFeatures { toggles })
        .map_err(|error| ApiError::Internal(format!("cannot serialise frontend features: {error}")))?;
    let etag = format!("W/\"{}\"", hex::encode(&Sha256::digest(&body)[..12]));
    Ok((etag, body))
}

fn answer(request: &HttpRequest, etag: String, body: Vec<u8>, conditional: bool) -> HttpResponse {
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
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "Not a frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn get_features(
    state: web::Data<AppState>,
    access: FrontendAccess,
    request: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, ApiError> {
    let context = context_from(query.into_inner(), &request)?;
    let (etag, body) = evaluate(&state, &access, &context).await?;
    Ok(answer(&request, etag, body, true))
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
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "Not a frontend token", body = ErrorBody),
        (status = 413, description = "The body is larger than the limit", body = ErrorBody),
        (status = 415, description = "The body is not JSON", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn post_features(
    state: web::Data<AppState>,
    access: FrontendAccess,
    request: HttpRequest,
    JsonBytes(body): JsonBytes,
) -> Result<HttpResponse, ApiError> {
    // An empty body is an empty context, as in Unleash.
    let request_body: FrontendRequest = if body.iter().all(u8::is_ascii_whitespace) {
        FrontendRequest::default()
    } else {
        crate::extract::parse(&body)?
    };
    let context = context_from(json_pairs(request_body.context)?, &request)?;
    let (etag, body) = evaluate(&state, &access, &context).await?;
    Ok(answer(&request, etag, body, false))
}

/// What the UI needs to know about the server, with the frontend API's origins.
#[utoipa::path(
    get,
    path = "/api/admin/ui-config",
    tag = "Admin UI",
    operation_id = "getUiConfig",
    responses(
        (status = 200, description = "The configuration", body = UiConfig),
        (status = 401, description = "Not logged in", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn ui_config(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<web::Json<UiConfig>, ApiError> {
    let origins = crate::auth::frontend_origins(&state).await?;
    let version = env!("CARGO_PKG_VERSION").to_owned();
    Ok(web::Json(UiConfig {
        version_info: VersionInfo {
            current: CurrentVersion { oss: version.clone() },
            latest: LatestVersion::default(),
            is_latest: true,
        },
        version,
        unleash_url: state.settings.unleash_url.clone(),
        base_uri_path: String::new(),
        authentication_type: "password",
        email_enabled: false,
        disable_password_auth: false,
        maintenance_mode: false,
        frontend_api_origins: origins.to_vec(),
    }))
}

/// Whether `origin` is `*` or a bare origin (`scheme://host[:port]`, no path, no trailing
/// slash), as Unleash checks it.
fn valid_origin(origin: &str) -> bool {
    if origin == "*" {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    // As a browser sends it: lower case, without the scheme's default port.
    let default_port = match scheme {
        "https" => Some(":443"),
        "http" => Some(":80"),
        _ => None,
    };
    !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
        && !rest.is_empty()
        && !rest.contains(['/', '*', '?', '#', '@', ' '])
        && !rest.chars().any(|c| c.is_ascii_uppercase())
        && default_port.is_none_or(|port| !rest.ends_with(port))
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
        (status = 401, description = "Not logged in", body = ErrorBody),
        (status = 403, description = "Not an administrator", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn set_cors(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<SetCors>,
) -> Result<NoContent, ApiError> {
    principal.require_admin()?;
    if let Some((index, origin)) = request
        .frontend_api_origins
        .iter()
        .enumerate()
        .find(|(_, origin)| !valid_origin(origin))
    {
        return Err(ApiError::invalid(
            format!("/frontendApiOrigins/{index}"),
            format!("invalid origin: {origin}"),
        ));
    }
    let origins = request.frontend_api_origins;
    let actor = principal.actor().to_owned();
    crate::db::run(&state.store, move |conn| {
        queries::settings::put(conn, FRONTEND_ORIGINS, &origins, &actor, crate::now())
    })
    .await?;
    Ok(NoContent)
}

#[cfg(test)]
mod tests {
    use super::valid_origin;

    #[test]
    fn origins_are_star_or_bare() {
        for good in ["*", "https://app.example.com", "http://localhost:3000"] {
            assert!(valid_origin(good), "{good}");
        }
        for bad in [
            "",
            "app.example.com",
            "https://app.example.com/",
            "https://*.example.com",
            "https://",
            "HTTPS://app.example.com",
            "https://App.example.com",
            "https://app.example.com:443",
        ] {
            assert!(!valid_origin(bad), "{bad}");
        }
    }
}
