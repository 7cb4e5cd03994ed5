//! Typed answers for what `Json<T>` alone cannot say: a status other than 200, a `Location`
//! header, or no body at all. Handlers return these, never a hand-built `HttpResponse`.

use actix_web::body::BoxBody;
use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, Responder};
use serde::Serialize;

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

/// 204 No Content.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoContent;

impl Responder for NoContent {
    type Body = BoxBody;

    fn respond_to(self, _request: &HttpRequest) -> HttpResponse {
        HttpResponse::NoContent().finish()
    }
}
