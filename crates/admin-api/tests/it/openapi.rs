//! The API description lists every route, and the API page works with no network.

use crate::common::{TestApp, send};
use actix_web::http::{Method, StatusCode};
use actix_web::test as http;
use admin_api::openapi::OPERATIONS;

#[actix_web::test]
async fn the_document_lists_every_operation() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, document) = send(&service, http::TestRequest::get().uri("/docs/openapi.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(document["openapi"], "3.1.0");
    for operation in OPERATIONS {
        assert!(
            document["paths"][operation.path][operation.method].is_object(),
            "{} {} is missing",
            operation.method,
            operation.path
        );
    }
    let variants =
        &document["paths"]["/api/admin/projects/{projectId}/features/{featureName}/variants-batch"]["put"];
    assert_eq!(
        variants["responses"]["403"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
}

#[actix_web::test]
async fn every_documented_operation_is_routed() {
    let app = TestApp::new();
    let service = app.service().await;
    for operation in OPERATIONS {
        let uri: String = operation
            .path
            .split('/')
            .map(|part| if part.starts_with('{') { "x" } else { part })
            .collect::<Vec<_>>()
            .join("/");
        let method = Method::from_bytes(operation.method.to_uppercase().as_bytes()).unwrap_or(Method::GET);
        let request = http::TestRequest::default().method(method).uri(&uri);
        let (status, body) = send(&service, request).await;
        let unrouted = status == StatusCode::METHOD_NOT_ALLOWED
            || (status == StatusCode::NOT_FOUND
                && body["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("no route matches")));
        assert!(
            !unrouted,
            "{} {} is documented but not routed: {status} {body}",
            operation.method, operation.path
        );
    }
}

#[test]
fn routes_and_document_have_the_same_operations() {
    // The registered operations, from the table `build_app` registers, against the document.
    let registered: std::collections::BTreeSet<(String, String)> = admin_api::routes::operations()
        .iter()
        .map(|operation| {
            (
                operation.method.as_str().to_lowercase(),
                operation.path.to_owned(),
            )
        })
        .collect();
    let document = admin_api::openapi::document();
    let documented: std::collections::BTreeSet<(String, String)> = document["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, methods)| {
            methods
                .as_object()
                .into_iter()
                .flatten()
                .map(move |(method, _)| (method.clone(), path.clone()))
        })
        .collect();
    assert_eq!(registered, documented);
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
}
