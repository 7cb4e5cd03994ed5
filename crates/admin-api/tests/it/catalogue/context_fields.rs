//! Context fields: read, changed and deleted once unused, and their legal values held for segment
//! and strategy constraints alike.

use actix_web::http::StatusCode;
use serde_json::json;

use crate::common::{ADMIN, TestApp, assert_error, delete, get, post, put, seed_feature, send};

const FEATURES: &str = "/api/admin/projects/default/features";

fn strategies(feature: &str, environment: &str) -> String {
    format!("{FEATURES}/{feature}/environments/{environment}/strategies")
}

#[actix_web::test]
async fn context_fields_are_read_changed_and_deleted_once_unused() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "regional").await;
    let (status, body) = send(
        &service,
        post("/api/admin/context", ADMIN, json!({"name": "region"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/context/region/legal-values",
            ADMIN,
            json!({"value": "eu"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    send(
        &service,
        post(
            "/api/admin/context/region/legal-values",
            ADMIN,
            json!({"value": "us", "description": "America"}),
        ),
    )
    .await;
    let (_, field) = send(&service, get("/api/admin/context/region", ADMIN)).await;
    assert_eq!(
        field["legalValues"],
        json!([{"value": "eu"}, {"value": "us", "description": "America"}])
    );
    let (status, _) = send(
        &service,
        delete("/api/admin/context/region/legal-values/eu", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &service,
        put(
            "/api/admin/context/region",
            ADMIN,
            json!({"description": "where", "stickiness": true, "legalValues": [{"value": "us"}, {"value": "eu"}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, field) = send(&service, get("/api/admin/context/region", ADMIN)).await;
    assert_eq!(field["stickiness"], true);
    assert_eq!(field["description"], "where");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/context/region",
            ADMIN,
            json!({"legalValues": [{"value": "us"}, {"value": "us"}]}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    send(
        &service,
        post(
            "/api/admin/projects/default/features/regional/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}),
        ),
    )
    .await;
    let (_, uses) = send(&service, get("/api/admin/context/region/strategies", ADMIN)).await;
    assert_eq!(uses["strategies"][0]["featureName"], "regional", "{uses}");
    let (status, body) = send(&service, delete("/api/admin/context/region", ADMIN)).await;
    assert_error(status, &body, 409, "ConflictError");
    let (status, body) = send(&service, get("/api/admin/context/nope", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        post("/api/admin/context/validate", ADMIN, json!({"name": "region"})),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, _) = send(
        &service,
        post("/api/admin/context/validate", ADMIN, json!({"name": "tenant"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &service,
        post("/api/admin/context/validate", ADMIN, json!({"name": "a b"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, of_project) = send(
        &service,
        get("/api/admin/projects/default/context?include=root", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{of_project}");
    assert!(
        of_project
            .as_array()
            .is_some_and(|fields| fields.iter().any(|field| field["name"] == "region"))
    );
    let (status, body) = send(&service, get("/api/admin/projects/nope/context", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, _) = send(&service, delete("/api/admin/context/appName", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "an unused field can go, built in or not");
}

#[actix_web::test]
async fn legal_values_hold_for_segment_and_strategy_constraints() {
    let app = TestApp::new();
    let service = app.service().await;
    let field = json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]});
    let (status, body) = send(&service, post("/api/admin/context", ADMIN, field)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    seed_feature(&service, "f").await;
    let outside = json!([{"contextName": "region", "operator": "IN", "values": ["eu", "mars"]}]);
    let inside = json!([{"contextName": "region", "operator": "IN", "values": ["eu", "us"]}]);

    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "bad", "constraints": outside}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("mars")),
        "{body}"
    );
    let (status, body) = send(
        &service,
        post(
            &strategies("f", "development"),
            ADMIN,
            json!({"name": "default", "constraints": outside}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "good", "constraints": inside}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, segments) = send(&service, get("/api/admin/segments", ADMIN)).await;
    assert_eq!(
        segments["segments"].as_array().map(Vec::len),
        Some(1),
        "no bad segment was kept"
    );
}

/// Terraform compares the answer to a create with what it wrote, and then with a read: all
/// three must agree, legal values included.
#[actix_web::test]
async fn a_created_context_field_answers_as_it_reads() {
    let app = TestApp::new();
    let service = app.service().await;
    let field = json!({
        "name": "tenant",
        "description": "Which tenant",
        "stickiness": true,
        "sortOrder": 3,
        "legalValues": [{"value": "acme", "description": "Acme"}, {"value": "globex"}],
    });
    let (status, created) = send(&service, post("/api/admin/context", ADMIN, field)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["legalValues"],
        json!([{"value": "acme", "description": "Acme"}, {"value": "globex"}])
    );
    assert_eq!(created["sortOrder"], 3);
    let (status, read) = send(&service, get("/api/admin/context/tenant", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(created, read);
}
