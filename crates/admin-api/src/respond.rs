//! Typed answers for what `Json<T>` alone cannot say: a status other than 200, a `Location`
//! or `ETag` header, a cookie, a body that is not JSON, or no body at all. Handlers return these,
//! never a hand-built `HttpResponse`.

use actix_web::body::BoxBody;
use actix_web::cookie::Cookie;
use actix_web::http::header::{ETAG, IF_NONE_MATCH, LOCATION};
use actix_web::{HttpRequest, HttpResponse, Responder, ResponseError};
use serde::Serialize;

use crate::error::ApiError;

/// 201 Created with a JSON body and, when given, a `Location` header.
#[derive(Debug)]
pub struct Created<T> {
    body: T,
    location: Option<String>,
}

impl<T> Created<T> {
    /// 201 with `body`.
    pub fn new(body: T) -> Self {
        Self { body, location: None }
    }

    /// 201 with `body` and `Location: location`.
    pub fn at(location: impl Into<String>, body: T) -> Self {
        Self {
            body,
            location: Some(location.into()),
        }
    }
}

impl<T: Serialize> Responder for Created<T> {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        let mut response = HttpResponse::Created();
        if let Some(location) = self.location {
            response.insert_header((LOCATION, location));
        }
        response.json(self.body)
    }
}

/// 200 OK with an empty body, as Unleash answers many writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Done;

impl Responder for Done {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::Ok().finish()
    }
}

/// 200 OK with an empty body typed as JSON: what Unleash's `res.json(undefined)` answers, as
/// its strategy delete does.
#[derive(Debug, Clone, Copy, Default)]
pub struct DoneAsJson;

impl Responder for DoneAsJson {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::Ok()
            .insert_header((
                actix_web::http::header::CONTENT_TYPE,
                "application/json; charset=utf-8",
            ))
            .finish()
    }
}

/// 204 No Content.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoContent;

impl Responder for NoContent {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::NoContent().finish()
    }
}

/// A JSON body with its `ETag`: 200 with both, or 304 Not Modified with only the tag when the
/// client already holds this version.
#[derive(Debug)]
pub enum Tagged<T> {
    /// 200 with `ETag: etag` and the body.
    Fresh {
        /// The entity tag, quoted.
        etag: String,
        /// The body.
        body: T,
    },
    /// 304 with `ETag: etag` and no body.
    NotModified {
        /// The entity tag, quoted.
        etag: String,
    },
}

/// A strong entity tag over `body`: a quoted digest of it, so the tag changes exactly when the
/// answer does and every replica gives the same answer the same tag.
pub fn strong_etag(body: &[u8]) -> String {
    use sha2::Digest as _;
    format!("\"{}\"", hex::encode(&sha2::Sha256::digest(body)[..12]))
}

/// A weak entity tag over `body` (`W/"…"`): the same digest, for answers a proxy may re-encode.
pub fn weak_etag(body: &[u8]) -> String {
    format!("W/{}", strong_etag(body))
}

impl<T> Tagged<T> {
    /// Whether the request's `If-None-Match` names `etag`, so that 304 is the answer.
    pub fn is_current(request: &HttpRequest, etag: &str) -> bool {
        Self::names(Self::if_none_match(request).as_deref(), etag)
    }

    /// The request's `If-None-Match`, to check with [`Tagged::names`] away from the request.
    pub fn if_none_match(request: &HttpRequest) -> Option<String> {
        request
            .headers()
            .get(IF_NONE_MATCH)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    }

    /// Whether an `If-None-Match` value names `etag`, compared weakly as RFC 9110 asks (a
    /// proxy that compresses may have marked the tag weak), or is `*`.
    pub fn names(if_none_match: Option<&str>, etag: &str) -> bool {
        let opaque = |tag: &str| {
            let tag = tag.trim();
            tag.strip_prefix("W/").unwrap_or(tag).to_owned()
        };
        let wanted = opaque(etag);
        if_none_match.is_some_and(|value| {
            value
                .split(',')
                .any(|tag| tag.trim() == "*" || opaque(tag) == wanted)
        })
    }
}

impl<T: Serialize> Responder for Tagged<T> {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        match self {
            Self::Fresh { etag, body } => HttpResponse::Ok().insert_header((ETAG, etag)).json(body),
            Self::NotModified { etag } => HttpResponse::NotModified().insert_header((ETAG, etag)).finish(),
        }
    }
}

/// 200 with a text body of the given media type, such as Prometheus's exposition format.
#[derive(Debug)]
pub struct Text {
    content_type: &'static str,
    body: String,
}

impl Text {
    /// 200 with `body` as `content_type`.
    pub fn new(content_type: &'static str, body: String) -> Self {
        Self { content_type, body }
    }
}

impl Responder for Text {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::Ok().content_type(self.content_type).body(self.body)
    }
}

/// 302 Found to `location`, with an empty body.
#[derive(Debug, Clone)]
pub struct Found {
    location: String,
}

impl Found {
    /// 302 to `location`.
    pub fn to(location: impl Into<String>) -> Self {
        Self {
            location: location.into(),
        }
    }
}

impl Responder for Found {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::Found()
            .insert_header((LOCATION, self.location))
            .finish()
    }
}

/// Another answer with a `Set-Cookie` header: a session cookie, or its removal.
#[derive(Debug)]
pub struct WithCookie<R> {
    inner: R,
    cookie: Cookie<'static>,
}

impl<R> WithCookie<R> {
    /// `inner`, setting `cookie`.
    pub fn new(inner: R, cookie: Cookie<'static>) -> Self {
        Self { inner, cookie }
    }
}

impl<R: Responder> Responder for WithCookie<R> {
    type Body = BoxBody;

    fn respond_to(self, request: &HttpRequest) -> HttpResponse {
        let mut response = self.inner.respond_to(request).map_into_boxed_body();
        match response.add_cookie(&self.cookie) {
            Ok(()) => response,
            Err(error) => ApiError::internal(format!("cannot set a cookie: {error}")).error_response(),
        }
    }
}

/// 202 Accepted with an empty body, as Unleash answers SDK reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct Accepted;

impl Responder for Accepted {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::Accepted().finish()
    }
}
