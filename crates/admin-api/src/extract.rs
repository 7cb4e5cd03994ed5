//! Request extraction that always fails with an [`ApiError`]: JSON bodies with the failing
//! field's path, content-type and size checks, and handlers for actix's own extractors.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::{PathError, PayloadError, QueryPayloadError};
use actix_web::http::header::CONTENT_TYPE;
use actix_web::{FromRequest, HttpRequest, web};
use serde::de::DeserializeOwned;

use flag_admin::{AdminError, Detail};

use crate::error::ApiError;

/// The largest body accepted when the app sets no limit.
pub const DEFAULT_BODY_LIMIT: usize = flag_admin::settings::DEFAULT_BODY_LIMIT;

/// The body size limit, as app data; `build_app` sets the same limit in `web::PayloadConfig`.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// A JSON request body. Rejects other content types with 415, bodies over the limit with 413,
/// and anything that does not deserialise with 400 naming the field.
#[derive(Debug)]
pub struct Body<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for Body<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = JsonBytes::from_request(request, payload);
        Box::pin(async move { parse(&bytes.await?.0).map(Body) })
    }
}

/// The bytes of a JSON request body, unparsed, for handlers that parse it their own way
/// (OFREP's own error shapes, an empty body taken as `{}`). Rejects other content types with
/// 415 and bodies over the limit with 413.
#[derive(Debug)]
pub struct JsonBytes(pub web::Bytes);

impl FromRequest for JsonBytes {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let limit = request
            .app_data::<web::Data<BodyLimit>>()
            .map_or(DEFAULT_BODY_LIMIT, |limit| limit.0);
        let bytes = web::Bytes::from_request(request, payload);
        let content_type = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        Box::pin(async move {
            let essence = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if essence != "application/json" && !essence.ends_with("+json") {
                return Err(ApiError::ContentType(if content_type.is_empty() {
                    "none".into()
                } else {
                    content_type
                }));
            }
            bytes
                .await
                .map(JsonBytes)
                .map_err(|error| match error.as_error::<PayloadError>() {
                    Some(PayloadError::Overflow) => ApiError::PayloadTooLarge { limit },
                    _ => ApiError::bad_request(format!("cannot read the body: {error}")),
                })
        })
    }
}

/// Parses JSON, reporting where it failed.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = pointer(&error.path().to_string());
        let inner = error.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            ApiError::bad_request(format!("the body is not valid JSON: {inner}"))
        } else {
            let message = format!("{path}: {inner}");
            ApiError::Admin(AdminError::Validation {
                message: format!("the request body does not match the schema: {message}"),
                details: vec![Detail::at(path, inner.to_string())],
            })
        }
    })?;
    deserializer
        .end()
        .map_err(|error| ApiError::bad_request(format!("the body is not valid JSON: {error}")))?;
    Ok(value)
}

/// `variants[0].weight` → `/variants/0/weight`; the root is `/`.
fn pointer(path: &str) -> String {
    if path == "." || path.is_empty() {
        return "/".into();
    }
    let mut pointer = String::new();
    for part in path.split(['.', '[']) {
        let part = part.trim_end_matches(']');
        if !part.is_empty() {
            pointer.push('/');
            pointer.push_str(part);
        }
    }
    pointer
}

/// The address a request is counted against: the connection's peer.
pub fn client_address(request: &HttpRequest) -> std::net::IpAddr {
    request
        .peer_addr()
        .map_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), |address| {
            address.ip()
        })
}

/// Maps actix's path extraction errors to the envelope.
pub fn path_error(error: PathError, _request: &HttpRequest) -> actix_web::Error {
    ApiError::bad_request(format!("invalid path parameter: {error}")).into()
}

/// Maps actix's query extraction errors to the envelope.
pub fn query_error(error: QueryPayloadError, _request: &HttpRequest) -> actix_web::Error {
    ApiError::bad_request(format!("invalid query string: {error}")).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_json_pointers() {
        assert_eq!(pointer("variants[0].weight"), "/variants/0/weight");
        assert_eq!(pointer("."), "/");
        assert_eq!(pointer("context.appName"), "/context/appName");
    }
}
