//! Request extraction that always fails with an [`ApiError`]: JSON bodies with the failing
//! field's path, content-type and size checks, and handlers for actix's own extractors.

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::{PathError, PayloadError, QueryPayloadError};
use actix_web::http::header::{CONTENT_ENCODING, CONTENT_TYPE};
use actix_web::{FromRequest, HttpRequest, web};
use serde::de::DeserializeOwned;

use flag_admin::{AdminError, Detail};

use crate::error::ApiError;

/// The largest body accepted when the app sets no limit.
pub const DEFAULT_BODY_LIMIT: usize = flag_admin::runtime::settings::DEFAULT_BODY_LIMIT;

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

/// A JSON request body that must be an object: every body whose type is a struct, which serde
/// would otherwise also read from an array by position (`[null, null]`). Otherwise as [`Body`],
/// which is left for bodies that are arrays, maps or any JSON value.
#[derive(Debug)]
pub struct ObjectBody<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for ObjectBody<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let bytes = JsonBytes::from_request(request, payload);
        Box::pin(async move {
            let bytes = bytes.await?.0;
            if bytes.iter().find(|byte| !byte.is_ascii_whitespace()) != Some(&b'{') {
                return Err(ApiError::invalid("/", "the body must be a JSON object"));
            }
            parse(&bytes).map(ObjectBody)
        })
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
        let encoding = request
            .headers()
            .get(CONTENT_ENCODING)
            .map(|value| value.to_str().unwrap_or("(not text)").trim().to_ascii_lowercase());
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
            // The encodings the server decodes; any other would be read as if it were none.
            if let Some(encoding) = encoding
                && !matches!(encoding.as_str(), "" | "identity" | "gzip" | "deflate" | "br")
            {
                return Err(ApiError::ContentEncoding(encoding));
            }
            bytes
                .await
                .map(JsonBytes)
                .map_err(|error| match error.as_error::<PayloadError>() {
                    Some(PayloadError::Overflow) => ApiError::PayloadTooLarge { limit },
                    Some(PayloadError::EncodingCorrupted | PayloadError::Io(_)) => {
                        ApiError::bad_request("the body cannot be decoded as its Content-Encoding says")
                    }
                    Some(PayloadError::Incomplete(_)) => ApiError::bad_request("the body ended early"),
                    _ => ApiError::bad_request("the body cannot be read"),
                })
        })
    }
}

/// Parses JSON, reporting where it failed.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = flag_admin::runtime::input::pointer(error.path());
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

    fn path_of(json: &str) -> String {
        #[derive(Debug, serde::Deserialize)]
        #[expect(dead_code, reason = "only the failure is looked at")]
        struct Report {
            variants: Vec<Weighted>,
            toggles: std::collections::BTreeMap<String, Weighted>,
        }
        #[derive(Debug, serde::Deserialize)]
        #[expect(dead_code, reason = "only the failure is looked at")]
        struct Weighted {
            weight: u32,
        }
        let mut deserializer = serde_json::Deserializer::from_str(json);
        serde_path_to_error::deserialize::<_, Report>(&mut deserializer).map_or_else(
            |error| flag_admin::runtime::input::pointer(error.path()),
            |_| String::new(),
        )
    }

    #[test]
    fn paths_become_json_pointers_with_each_key_one_segment() {
        assert_eq!(path_of(r#"{"variants": [{"weight": -1}]}"#), "/variants/0/weight");
        assert_eq!(
            path_of(r#"{"variants": [], "toggles": {"checkout.new": {"weight": -1}}}"#),
            "/toggles/checkout.new/weight"
        );
        assert_eq!(
            path_of(r#"{"variants": [], "toggles": {"a/b~c": {"weight": -1}}}"#),
            "/toggles/a~1b~0c/weight"
        );
        assert_eq!(path_of("[]"), "/");
    }
}
