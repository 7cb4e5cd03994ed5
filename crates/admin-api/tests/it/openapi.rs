//! The API description lists every route, and the API page works with no network.

use std::collections::{BTreeMap, BTreeSet};

use actix_web::http::{Method, StatusCode};
use actix_web::test as http;
use serde_json::Value;

use flag_admin::identity::auth::Access;

use crate::common::{TestApp, send};

/// Every (method, path, operation) of the served document.
fn operations(document: &Value) -> Vec<(String, String, Value)> {
    document["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, methods)| {
            methods
                .as_object()
                .into_iter()
                .flatten()
                .map(move |(method, operation)| (method.clone(), path.clone(), operation.clone()))
        })
        .collect()
}

#[actix_web::test]
async fn every_operation_documents_its_request_and_responses() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, document) = send(&service, http::TestRequest::get().uri("/docs/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(document["openapi"], "3.1.0");
    let operations = operations(&document);
    assert_eq!(operations.len(), admin_api::routes::operations().len());
    for (method, path, operation) in &operations {
        let name = format!("{method} {path}");
        assert!(operation["operationId"].is_string(), "{name} has no operationId");
        let responses = operation["responses"].as_object().cloned().unwrap_or_default();
        // The frontend API's paths Unleash reserves answer only 405, as Unleash's do.
        let reserved = [
            "/api/frontend/client/features",
            "/api/frontend/health",
            "/api/frontend/internal-backstage/prometheus",
        ];
        assert!(
            responses
                .keys()
                .any(|status| status.starts_with('2') || status == "302" || status == "304")
                || (reserved.contains(&path.as_str()) && responses.contains_key("405")),
            "{name} documents no success"
        );
        for (status, response) in &responses {
            let schema = &response["content"]["application/json"]["schema"];
            // OFREP defines its own failures for 400 and 404.
            if path.starts_with("/ofrep/") && (status == "400" || status == "404") {
                assert_eq!(
                    schema["$ref"], "#/components/schemas/OfrepFailure",
                    "{name} {status}"
                );
            } else if status.starts_with('4') || status.starts_with('5') {
                assert_eq!(
                    schema["$ref"], "#/components/schemas/ErrorBody",
                    "{name} {status}"
                );
            } else if let Some(content) = response["content"].as_object() {
                assert!(
                    content.values().all(|media| media["schema"].is_object()),
                    "{name} {status} has content without a schema"
                );
                // A success answer names its fields: no inline bare object stands for it.
                for media in content.values() {
                    let schema = &media["schema"];
                    let bare = schema["type"] == "object"
                        && schema.get("properties").is_none()
                        && schema.get("additionalProperties").is_none();
                    assert!(!bare, "{name} {status} answers a bare object");
                }
            }
        }
        if operation["security"]
            .as_array()
            .is_some_and(|security| !security.is_empty())
        {
            assert!(
                responses.contains_key("401"),
                "{name} needs credentials but does not document 401"
            );
        }
        if let Some(body) = operation.get("requestBody") {
            assert!(
                body["content"]["application/json"]["schema"].is_object(),
                "{name} has a body without a schema"
            );
            for status in ["413", "415"] {
                assert!(
                    responses.contains_key(status),
                    "{name} takes a body but does not document {status}"
                );
            }
        }
    }
    // No schema is a bare object: each names its fields, or is a map or a union.
    for (name, schema) in document["components"]["schemas"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let bare = schema["type"] == "object"
            && schema.get("properties").is_none()
            && schema.get("additionalProperties").is_none();
        assert!(!bare, "schema {name} is a bare object");
    }
}

#[actix_web::test]
async fn every_documented_operation_is_routed() {
    let app = TestApp::new();
    let service = app.service().await;
    let document = admin_api::openapi::document();
    for (method, path, _) in operations(&document) {
        let uri: String = path
            .split('/')
            .map(|part| if part.starts_with('{') { "x" } else { part })
            .collect::<Vec<_>>()
            .join("/");
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap_or(Method::GET);
        let request = http::TestRequest::default().method(method.clone()).uri(&uri);
        let (status, body) = send(&service, request).await;
        let unrouted = status == StatusCode::METHOD_NOT_ALLOWED
            || (status == StatusCode::NOT_FOUND
                && body["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("no route matches")));
        assert!(
            !unrouted,
            "{method} {path} is documented but not routed: {status} {body}"
        );
    }
}

#[test]
fn routes_and_document_have_the_same_operations() {
    // The registered operations, from the table `build_app` registers, against the document.
    let registered: std::collections::BTreeSet<(String, String)> = admin_api::routes::operations()
        .iter()
        .map(|operation| (operation.method.as_str().to_lowercase(), operation.path.clone()))
        .collect();
    let documented: std::collections::BTreeSet<(String, String)> =
        operations(&admin_api::openapi::document())
            .into_iter()
            .map(|(method, path, _)| (method, path))
            .collect();
    assert_eq!(registered, documented);
}

#[test]
fn credentialed_operations_document_401_and_403_and_public_ones_do_not() {
    let document = admin_api::openapi::document();
    let declared: BTreeMap<(String, String), Access> = admin_api::routes::operations()
        .iter()
        .map(|operation| {
            (
                (operation.method.as_str().to_lowercase(), operation.path.clone()),
                operation.access,
            )
        })
        .collect();
    let mut descriptions: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut login = Vec::new();
    for (method, path, operation) in operations(&document) {
        let name = format!("{method} {path}");
        let access = declared.get(&(method.clone(), path.clone()));
        assert!(access.is_some(), "{name} is documented but not declared");
        let responses = &operation["responses"];
        if access != Some(&Access::Public) {
            for status in ["401", "403"] {
                assert_eq!(
                    responses[status]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorBody",
                    "{name} needs credentials but does not document {status} with the error envelope"
                );
                if let Some(description) = responses[status]["description"].as_str() {
                    descriptions
                        .entry(status)
                        .or_default()
                        .insert(description.to_owned());
                }
            }
        } else if path == "/auth/simple/login" {
            // The login needs no credentials, yet answers 401 for a wrong password and 403 while
            // password login is switched off: its own answers, not those of an access check.
            for status in ["401", "403"] {
                login.push(
                    responses[status]["description"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                );
            }
        } else {
            for status in ["401", "403"] {
                assert!(
                    responses.get(status).is_none(),
                    "{name} needs no credentials but documents {status}"
                );
            }
        }
    }
    // Derived, not written by hand: one description of each status for every operation.
    for status in ["401", "403"] {
        assert_eq!(
            descriptions.get(status).map(BTreeSet::len),
            Some(1),
            "{status} is described in more than one way: {:?}",
            descriptions.get(status)
        );
    }
    // The login's own 401 and 403 say why it answers them, not what the access ones say.
    assert_eq!(login.len(), 2, "the login is not documented once");
    for description in &login {
        assert!(
            !description.is_empty() && !descriptions.values().any(|shared| shared.contains(description)),
            "the login's {description:?} is an access check's"
        );
    }
}

#[actix_web::test]
async fn the_api_page_is_served_locally() {
    let app = TestApp::new();
    let service = app.service().await;
    let response = http::call_service(&service, http::TestRequest::get().uri("/docs/").to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let page = String::from_utf8_lossy(&http::read_body(response).await).into_owned();
    assert!(page.contains("swagger-ui-bundle.js"), "{page}");
    assert!(
        !page.contains("https://") && !page.contains("http://"),
        "the page loads something from the network"
    );
    let bundle = http::call_service(
        &service,
        http::TestRequest::get()
            .uri("/docs/swagger-ui-bundle.js")
            .to_request(),
    )
    .await;
    assert_eq!(bundle.status(), StatusCode::OK);
    assert!(http::read_body(bundle).await.len() > 100_000);
    let initializer = http::call_service(
        &service,
        http::TestRequest::get()
            .uri("/docs/swagger-initializer.js")
            .to_request(),
    )
    .await;
    assert_eq!(initializer.status(), StatusCode::OK);
    let script = String::from_utf8_lossy(&http::read_body(initializer).await).into_owned();
    assert!(
        script.contains("\"/docs/openapi.json\""),
        "the page reads the served document: {script}"
    );
}
