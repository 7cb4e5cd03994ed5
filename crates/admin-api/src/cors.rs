//! CORS for the APIs browsers call directly: the frontend API (`/api/frontend`) and OpenFeature's
//! remote evaluation (`/ofrep`), answered as Unleash answers them. The allowed origins are set
//! with `POST /api/admin/ui-config/cors`; `*` allows every origin. The other APIs send no CORS
//! headers.

use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderMap, HeaderValue};
use actix_web::{HttpResponse, web};

use crate::state::AppState;

/// Whether `path` is served to browsers of other origins.
fn cross_origin(path: &str) -> bool {
    path == "/api/frontend" || path.starts_with("/api/frontend/") || path.starts_with("/ofrep/")
}

/// The `Access-Control-Allow-Origin` value for a request from `origin`, if it is allowed. With
/// `*` configured, a request that names its origin gets that origin back: the answer allows
/// credentials, and the CORS specification forbids `*` together with credentials, so browsers
/// would refuse it.
fn allowed_origin(origins: &[String], origin: Option<&HeaderValue>) -> Option<HeaderValue> {
    if origins.is_empty() || origins.iter().any(|allowed| allowed == "*") {
        return Some(origin.cloned().unwrap_or(HeaderValue::from_static("*")));
    }
    let origin = origin?;
    let text = origin.to_str().ok()?;
    origins
        .iter()
        .any(|allowed| allowed == text)
        .then(|| origin.clone())
}

fn add_common(headers: &mut HeaderMap, allow: Option<HeaderValue>) {
    if let Some(allow) = allow {
        // Credentials go with a named origin only, never with `*`.
        if allow != "*" {
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
                HeaderValue::from_static("true"),
            );
        }
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, allow);
    }
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("ETag"),
    );
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
}

/// Answers preflight requests and adds CORS headers to the answers of cross-origin paths.
pub async fn cors(
    request: ServiceRequest,
    next: actix_web::middleware::Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    if !cross_origin(request.path()) {
        return Ok(next.call(request).await?.map_into_left_body());
    }
    let origins = match request.app_data::<web::Data<AppState>>() {
        Some(state) => {
            match flag_admin::identity::auth::frontend_origins(&state.app, state.app.identity()).await {
                Ok(origins) => origins,
                // Answered here, with the envelope and without CORS headers: no origin is allowed.
                Err(error) => {
                    let error = crate::error::ApiError::from(error);
                    return Ok(request.error_response(error).map_into_right_body());
                }
            }
        }
        None => return Ok(next.call(request).await?.map_into_left_body()),
    };
    let allow = allowed_origin(&origins, request.headers().get(header::ORIGIN));
    if request.method() == Method::OPTIONS {
        let mut response = HttpResponse::NoContent();
        response
            .insert_header((
                header::ACCESS_CONTROL_ALLOW_METHODS,
                "GET,HEAD,PUT,PATCH,POST,DELETE",
            ))
            .insert_header((header::ACCESS_CONTROL_MAX_AGE, "86400"))
            .insert_header((header::VARY, "Access-Control-Request-Headers"));
        if let Some(asked) = request.headers().get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
            response.insert_header((header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone()));
        }
        let mut response = response.finish();
        add_common(response.headers_mut(), allow);
        return Ok(request.into_response(response).map_into_right_body());
    }
    let mut response = next.call(request).await?;
    add_common(response.headers_mut(), allow);
    Ok(response.map_into_left_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_matched_exactly_and_star_allows_all() {
        let listed = vec!["https://app.example.com".to_owned()];
        let from = |origin: &'static str| Some(HeaderValue::from_static(origin));
        assert_eq!(
            allowed_origin(&listed, from("https://app.example.com").as_ref()),
            from("https://app.example.com")
        );
        assert_eq!(
            allowed_origin(&listed, from("https://evil.example.com").as_ref()),
            None
        );
        assert_eq!(allowed_origin(&listed, None), None);
        assert_eq!(allowed_origin(&["*".to_owned()], None), from("*"));
        assert_eq!(
            allowed_origin(&[], from("https://x.example").as_ref()),
            from("https://x.example"),
            "with every origin allowed, the origin is named back, since credentials are allowed"
        );
        assert!(cross_origin("/api/frontend") && cross_origin("/api/frontend/client/metrics"));
        assert!(cross_origin("/ofrep/v1/evaluate/flags") && !cross_origin("/api/frontendx"));
        assert!(!cross_origin("/api/client/features"));
    }
}
