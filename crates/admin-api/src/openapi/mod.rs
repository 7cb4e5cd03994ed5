//! The API description, served at `/docs/openapi.json` with a Swagger UI at `/docs/`.
//!
//! It is generated from the operations' declarations (`routes::operations`): each handler's
//! `#[utoipa::path]` with the schemas it names, and the security its declared access takes.
//! `Conventions` adds what every operation shares: 401 and 403 wherever that access needs
//! credentials, the statuses any body or database call can give, and the security schemes.
//! No handler writes a 401 or a 403 of its own, so each has one description everywhere.
//! A test compares the document with the registered routes.

use std::sync::OnceLock;

use actix_web::http::header::ContentType;
use actix_web::{HttpResponse, web};
use serde_json::Value;
use utoipa::openapi::path::HttpMethod;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{OpenApi as Document, RefOr, Response, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use flag_admin::identity::auth::Access;

use crate::error::ErrorBody;
use crate::routes;

pub(crate) const DIFFERENCES: &str = "Unleash-compatible paths, shapes and `Authorization` header. Deliberate differences from Unleash 8: \
every error is `{id, name, message, details?}`; schema failures are 400 `ValidationError` naming the field; \
variants-batch writes all environments or none, in one transaction with its audit events, and answers 404 when the \
feature is not in the project; signup answers 200, enforces Unleash's password rules, hashes with Argon2id, \
answers 409 `NameExistsError` for a taken email or username, the same 400 for unknown, disabled and expired \
tokens, and is rate-limited per address (429); expiry is checked to the second and an expired token is never \
shown as enabled; PUT on a signup token answers with the whole token; the playground evaluates `userWithId` \
completely, sorts features by project then name, and hashes non-ASCII stickiness ids over UTF-8 bytes as the SDKs do; \
API tokens are stored as SHA-256 verifiers. \
An admin token limited to environments (`*:production.x`) reads everything that is not specific to an environment, \
reads and writes environment-specific state (strategies, variants, on/off, the playgrounds) only in its own \
environments, and gets 403 `NoAccessError` for every write whose effect reaches beyond them (features, dependencies, \
segments, context fields, strategy types, tokens, users, invite links, projects, environments). \
Limits: a playground context has at most 256 fields (top-level and `properties` together) and values of at most \
64 KiB; the advanced playground evaluates at most 15,000 environment × feature × context combinations and repeats at \
most 64 MiB of context in its answer (both configurable), checked before any evaluation; names, emails and \
usernames are at most 255 characters without control characters, and a username has no `@`; dates must be RFC 3339 \
with a time zone, a four-digit year and no leap second, as JavaScript reads them; logins are limited to 10 a minute \
per address (429). GET routes answer HEAD.";

#[derive(OpenApi)]
#[openapi(
    info(title = "Halyard", description = "Feature flags with Unleash's API."),
    components(schemas(ErrorBody)),
    modifiers(&Conventions)
)]
struct ApiDoc;

/// The whole document, from the operations' declarations: each one's description, at its
/// path and method, with the security its access needs.
pub fn generated() -> Document {
    let mut document = ApiDoc::openapi();
    let components = document.components.get_or_insert_with(Default::default);
    for (name, schema) in routes::Described::openapi()
        .components
        .map(|described| described.schemas)
        .unwrap_or_default()
    {
        components.schemas.entry(name).or_insert(schema);
    }
    let mut paths = utoipa::openapi::path::PathsBuilder::new();
    for operation in routes::operations() {
        let mut documented = (operation.describe)();
        documented.security = security(operation.access);
        paths = paths.path(
            operation.path,
            utoipa::openapi::path::PathItem::new(http_method(&operation.method), documented),
        );
    }
    document.paths.merge(paths.build());
    Conventions.modify(&mut document);
    document.info.description = Some(DIFFERENCES.to_owned());
    document.info.version = env!("CARGO_PKG_VERSION").to_owned();
    document
}

/// The credentials an access takes: none, an API token, or a token or the session cookie.
fn security(access: Access) -> Option<Vec<SecurityRequirement>> {
    let token = || SecurityRequirement::new::<_, _, &str>("apiKey", []);
    match access {
        Access::Public => None,
        Access::Client | Access::Frontend => Some(vec![token()]),
        Access::Read
        | Access::Person
        | Access::AdminRead
        | Access::ReadIn(_)
        | Access::WriteIn(_)
        | Access::Write(_)
        | Access::Root(_)
        | Access::Admin => Some(vec![
            token(),
            SecurityRequirement::new::<_, _, &str>("session", []),
        ]),
    }
}

fn http_method(method: &actix_web::http::Method) -> HttpMethod {
    match *method {
        actix_web::http::Method::POST => HttpMethod::Post,
        actix_web::http::Method::PUT => HttpMethod::Put,
        actix_web::http::Method::DELETE => HttpMethod::Delete,
        actix_web::http::Method::PATCH => HttpMethod::Patch,
        _ => HttpMethod::Get,
    }
}

/// The document as JSON, as `/docs/openapi.json` serves it.
pub fn document() -> Value {
    serde_json::to_value(generated()).unwrap_or_default()
}

/// `GET /docs/openapi.json`: the document, generated on the first request and kept as bytes
/// that every worker shares, so a process that is never asked for it builds none.
pub async fn serve() -> HttpResponse {
    static JSON: OnceLock<web::Bytes> = OnceLock::new();
    let json = JSON.get_or_init(|| web::Bytes::from(serde_json::to_vec(&generated()).unwrap_or_default()));
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(json.clone())
}

/// The 401 of every operation that needs credentials.
const UNAUTHENTICATED: &str = "no or unknown credentials";

/// The 403 of every operation that needs credentials.
const FORBIDDEN: &str = "not allowed with these credentials (`NoAccessError`), or refused by a rule of \
the operation (`InvalidOperationError`)";

/// The password login, which is public and still answers 401 and 403 of its own.
const LOGIN: &str = "/auth/simple/login";

/// What every operation shares: 401 and 403 where credentials are needed, 413 and 415 where
/// there is a body, 500 and 503 wherever the database is asked, the error envelope on every
/// error, and the two ways to authenticate.
struct Conventions;

impl Modify for Conventions {
    fn modify(&self, document: &mut Document) {
        let error = |description: &str| -> RefOr<Response> {
            ResponseBuilder::new()
                .description(description)
                .content(
                    "application/json",
                    utoipa::openapi::ContentBuilder::new()
                        .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorBody")))
                        .build(),
                )
                .build()
                .into()
        };
        for (path, item) in &mut document.paths.paths {
            let asks_database = path != "/health" && path != "/internal-backstage/prometheus";
            for operation in [
                &mut item.get,
                &mut item.post,
                &mut item.put,
                &mut item.patch,
                &mut item.delete,
            ]
            .into_iter()
            .flatten()
            {
                let secured = operation
                    .security
                    .as_ref()
                    .is_some_and(|security| !security.is_empty());
                let responses = &mut operation.responses.responses;
                if secured {
                    responses
                        .entry("401".into())
                        .or_insert_with(|| error(UNAUTHENTICATED));
                    responses.entry("403".into()).or_insert_with(|| error(FORBIDDEN));
                } else if path == LOGIN {
                    // No access check answers the login, which needs no credentials; the login
                    // itself answers 401 `PasswordMismatch` and 403 `InvalidOperationError`.
                    responses
                        .entry("401".into())
                        .or_insert_with(|| error("Unknown user or wrong password"));
                    responses
                        .entry("403".into())
                        .or_insert_with(|| error("Logging in with a password is switched off"));
                }
                if operation.request_body.is_some() {
                    responses
                        .entry("413".into())
                        .or_insert_with(|| error("the body is over the limit"));
                    responses
                        .entry("415".into())
                        .or_insert_with(|| error("the body is not JSON"));
                }
                if asks_database {
                    responses
                        .entry("500".into())
                        .or_insert_with(|| error("internal error"));
                    responses
                        .entry("503".into())
                        .or_insert_with(|| error("the database is busy"));
                }
            }
        }
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "apiKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "An API token such as `*:*.secret`; a `Bearer ` prefix is accepted",
            ))),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::auth::SESSION_COOKIE,
                "The session cookie set by `POST /auth/simple/login`",
            ))),
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn described_lists_exactly_the_routed_operations() {
        let routed: BTreeSet<(String, String)> = routes::operations()
            .iter()
            .map(|operation| (operation.method.as_str().to_lowercase(), operation.path.clone()))
            .collect();
        let described: BTreeSet<(String, String)> = routes::Described::openapi()
            .paths
            .paths
            .iter()
            .flat_map(|(path, item)| {
                [
                    ("get", &item.get),
                    ("post", &item.post),
                    ("put", &item.put),
                    ("patch", &item.patch),
                    ("delete", &item.delete),
                ]
                .into_iter()
                .filter(|(_, operation)| operation.is_some())
                .map(move |(method, _)| (method.to_owned(), path.clone()))
            })
            .collect();
        assert_eq!(routed, described);
    }
}
