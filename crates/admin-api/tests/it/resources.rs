//! Segments, context fields, strategy types, environments and API tokens: read one, change,
//! delete, and what uses them.

use crate::common::{ADMIN, TestApp, assert_error, delete, get, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

#[actix_web::test]
async fn segments_are_read_changed_and_deleted_once_unused() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "gated").await;
    let (status, segment) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    let id = segment["id"].as_i64().unwrap_or_default();
    send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "other", "constraints": []}),
        ),
    )
    .await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/gated/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "segments": [id]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let strategy = body["id"].as_str().unwrap_or_default().to_owned();

    let (status, one) = send(&service, get(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert!(
        one.get("project").is_none(),
        "a global segment has no project key: {one}"
    );
    let (_, uses) = send(
        &service,
        get(&format!("/api/admin/segments/{id}/strategies"), ADMIN),
    )
    .await;
    assert_eq!(uses["strategies"][0]["featureName"], "gated", "{uses}");
    assert_eq!(uses["changeRequestStrategies"], json!([]));
    let (_, of) = send(
        &service,
        get(&format!("/api/admin/segments/strategies/{strategy}"), ADMIN),
    )
    .await;
    assert_eq!(of["segments"][0]["id"], id);

    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/segments/{id}"),
            ADMIN,
            json!({"name": "beta-users", "description": "d", "constraints": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, one) = send(&service, get(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(one["name"], "beta-users");
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/segments/{id}"),
            ADMIN,
            json!({"name": "other", "constraints": []}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(&service, get("/api/admin/segments/seven", ADMIN)).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, get("/api/admin/segments/999", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");

    let (status, body) = send(&service, delete(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_error(status, &body, 409, "ConflictError");
    send(
        &service,
        delete(
            &format!(
                "/api/admin/projects/default/features/gated/environments/development/strategies/{strategy}"
            ),
            ADMIN,
        ),
    )
    .await;
    let (status, _) = send(&service, delete(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let (status, _) = send(
        &service,
        post("/api/admin/segments/validate", ADMIN, json!({"name": "new"})),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = send(
        &service,
        post("/api/admin/segments/validate", ADMIN, json!({"name": "other"})),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post("/api/admin/segments/validate", ADMIN, json!({"name": " "})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
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
async fn strategy_types_are_changed_deprecated_and_deleted_but_built_in_ones_stay() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/strategies",
            ADMIN,
            json!({"name": "byTenant", "parameters": [{"name": "tenants", "type": "list"}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/strategies/byTenant",
            ADMIN,
            json!({"description": "tenants", "parameters": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        post("/api/admin/strategies/byTenant/deprecate", ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, one) = send(&service, get("/api/admin/strategies/byTenant", ADMIN)).await;
    assert_eq!(one["deprecated"], true);
    assert_eq!(one["description"], "tenants");
    send(
        &service,
        post("/api/admin/strategies/byTenant/reactivate", ADMIN, json!({})),
    )
    .await;
    let (_, one) = send(&service, get("/api/admin/strategies/byTenant", ADMIN)).await;
    assert_eq!(one["deprecated"], false);

    for built_in in ["default", "flexibleRollout"] {
        let (status, body) = send(
            &service,
            delete(&format!("/api/admin/strategies/{built_in}"), ADMIN),
        )
        .await;
        assert_error(status, &body, 400, "ValidationError");
        let (status, body) = send(
            &service,
            put(
                &format!("/api/admin/strategies/{built_in}"),
                ADMIN,
                json!({"parameters": []}),
            ),
        )
        .await;
        assert_error(status, &body, 400, "ValidationError");
    }
    let (status, _) = send(
        &service,
        post("/api/admin/strategies/default/deprecate", ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "built-in types can be deprecated");
    let (status, _) = send(&service, delete("/api/admin/strategies/byTenant", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(&service, get("/api/admin/strategies/byTenant", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        post("/api/admin/strategies/nope/deprecate", ADMIN, json!({})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn environments_are_read_ordered_and_seen_from_a_project() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "on-everywhere").await;
    let (status, one) = send(&service, get("/api/admin/environments/production", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(
        one,
        json!({"name": "production", "type": "production", "sortOrder": 3, "enabled": true, "protected": false, "requiredApprovals": null})
    );
    let (status, _) = send(
        &service,
        put(
            "/api/admin/environments/sort-order",
            ADMIN,
            json!({"production": 1, "development": 2, "unknown": 3}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, listed) = send(&service, get("/api/admin/environments", ADMIN)).await;
    assert_eq!(listed["environments"][0]["name"], "production");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/environments/sort-order",
            ADMIN,
            json!({"production": "first"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, get("/api/admin/environments/nope", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (_, seen) = send(&service, get("/api/admin/environments/project/default", ADMIN)).await;
    assert_eq!(seen["environments"][0]["visible"], true, "{seen}");
    assert_eq!(seen["environments"][0]["projectEnabledToggleCount"], 1);
}

#[actix_web::test]
async fn tokens_are_found_by_name_expired_and_kept_per_project() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, created) = send(
        &service,
        post(
            "/api/admin/projects/default/api-tokens",
            ADMIN,
            json!({"tokenName": "backend-1", "type": "client", "environment": "development"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["projects"], json!(["default"]));
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    let (status, _) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::OK);

    let (_, named) = send(&service, get("/api/admin/api-tokens/backend-1", ADMIN)).await;
    assert_eq!(named["tokens"].as_array().map(Vec::len), Some(1), "{named}");
    assert!(
        named["tokens"][0]["secret"]
            .as_str()
            .is_some_and(|shown| shown.ends_with("***"))
    );
    // The project's tokens are the ones that reach it: its own and the SDK token for every project.
    let (_, of_project) = send(&service, get("/api/admin/projects/default/api-tokens", ADMIN)).await;
    let names = |list: &Value| -> Vec<String> {
        list["tokens"]
            .as_array()
            .map(|tokens| {
                tokens
                    .iter()
                    .filter_map(|token| token["tokenName"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        names(&of_project),
        ["backend-development", "backend-1"],
        "{of_project}"
    );
    let (status, body) = send(&service, get("/api/admin/projects/nope/api-tokens", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");

    // A time in the past revokes it everywhere it is used.
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/api-tokens/{secret}"),
            ADMIN,
            json!({"expiresAt": "2020-01-01T00:00:00Z"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/api-tokens/{secret}"),
            ADMIN,
            json!({"expiresAt": "soon"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, _) = send(
        &service,
        put(
            "/api/admin/api-tokens/unknown-secret",
            ADMIN,
            json!({"expiresAt": crate::common::next_year()}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "an unknown secret changes nothing");

    let (status, body) = send(
        &service,
        delete("/api/admin/projects/default/api-tokens/unknown-secret", ADMIN),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, _) = send(
        &service,
        delete(&format!("/api/admin/projects/default/api-tokens/{secret}"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, of_project) = send(&service, get("/api/admin/projects/default/api-tokens", ADMIN)).await;
    assert_eq!(names(&of_project), ["backend-development"], "{of_project}");
}
