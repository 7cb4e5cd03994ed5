//! What the pinned answers of every wing share: redactions that first check the value has the
//! expected form, so that a change of format still shows, and the answers of operations that
//! reply without a body or with a `Location`.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::test;
use insta::internals::{Content, Redaction};
use serde_json::{Value, json};

/// A time in the API's format, `2026-01-01T00:00:00.000Z`, becomes `[time]`.
pub(crate) fn time() -> Redaction {
    insta::dynamic_redaction(|value: Content, _| {
        let well_formed = value.as_str().is_some_and(|text| {
            text.len() == 24 && chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.3fZ").is_ok()
        });
        if well_formed {
            Content::from("[time]")
        } else {
            value
        }
    })
}

/// A random UUID (an error id, a strategy id) becomes `[id]`.
pub(crate) fn uuid() -> Redaction {
    insta::dynamic_redaction(|value: Content, _| {
        if value
            .as_str()
            .is_some_and(|text| uuid::Uuid::parse_str(text).is_ok())
        {
            Content::from("[id]")
        } else {
            value
        }
    })
}

/// Sends `request` to an operation that answers without a body and returns its status and its
/// body as text, which should be empty.
pub(crate) async fn empty_answer<S, B>(service: &S, request: test::TestRequest) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let response = test::call_service(service, request.to_request()).await;
    let status = response.status().as_u16();
    let body = test::read_body(response).await;
    json!({"status": status, "body": String::from_utf8_lossy(&body)})
}

/// Sends `request` and returns its status, its `Location` header and its body, for a 201.
pub(crate) async fn created<S, B>(service: &S, request: test::TestRequest) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let response = test::call_service(service, request.to_request()).await;
    let status = response.status().as_u16();
    let location = response
        .headers()
        .get("Location")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body: Value = test::read_body_json(response).await;
    json!({"status": status, "location": location, "body": body})
}
