//! Tag types, tags, the tags on flags, and the audit log they write.

use crate::common::{ADMIN, TestApp, assert_error, delete, get, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

#[actix_web::test]
async fn tag_types_are_created_validated_changed_and_deleted() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/tag-types", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"version": 1, "tagTypes": [{"name": "simple", "description": "Used to simplify filtering of features", "icon": "#", "color": "#FFFFFF"}]})
    );
    let (status, body) = send(
        &service,
        post(
            "/api/admin/tag-types",
            ADMIN,
            json!({"name": "team", "color": "#00FF00"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body, json!({"name": "team", "color": "#00FF00"}));
    let (status, body) = send(
        &service,
        post("/api/admin/tag-types", ADMIN, json!({"name": "team"})),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post("/api/admin/tag-types/validate", ADMIN, json!({"name": "team"})),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post("/api/admin/tag-types/validate", ADMIN, json!({"name": "area"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"valid": true, "tagType": {"name": "area"}}));
    for bad in [
        json!({"name": "x"}),
        json!({"name": "not friendly"}),
        json!({"name": "team2", "color": "green"}),
        json!({"name": "team3", "extra": 1}),
    ] {
        let (status, body) = send(&service, post("/api/admin/tag-types", ADMIN, bad.clone())).await;
        assert_error(status, &body, 400, "ValidationError");
    }
    let (status, _) = send(
        &service,
        put(
            "/api/admin/tag-types/team",
            ADMIN,
            json!({"description": "owning team"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = send(&service, get("/api/admin/tag-types/team", ADMIN)).await;
    assert_eq!(
        body,
        json!({"version": 1, "tagType": {"name": "team", "description": "owning team", "icon": null, "color": "#00FF00"}})
    );
    // A tag type created without a colour is white, as in Unleash.
    let (status, body) = send(
        &service,
        post("/api/admin/tag-types", ADMIN, json!({"name": "area"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, body) = send(&service, get("/api/admin/tag-types/area", ADMIN)).await;
    assert_eq!(body["tagType"]["color"], "#FFFFFF", "{body}");
    let (status, body) = send(&service, get("/api/admin/tag-types/nope", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(&service, put("/api/admin/tag-types/nope", ADMIN, json!({}))).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, _) = send(&service, delete("/api/admin/tag-types/team", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(&service, delete("/api/admin/tag-types/team", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn flags_are_tagged_untagged_and_tags_deleted() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    seed_feature(&service, "search").await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/tags",
            ADMIN,
            json!({"type": "simple", "value": "  web  "}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        body,
        json!({"version": 1, "tag": {"type": "simple", "value": "web"}})
    );
    let (status, body) = send(
        &service,
        post(
            "/api/admin/tags",
            ADMIN,
            json!({"type": "simple", "value": "web"}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post("/api/admin/tags", ADMIN, json!({"type": "nope", "value": "web"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        post("/api/admin/tags", ADMIN, json!({"type": "simple", "value": "w"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(
        &service,
        post(
            "/api/admin/features/checkout/tags",
            ADMIN,
            json!({"type": "simple", "value": "payments"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body, json!({"type": "simple", "value": "payments"}));
    let (status, body) = send(
        &service,
        post(
            "/api/admin/features/missing/tags",
            ADMIN,
            json!({"type": "simple", "value": "x1"}),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/features/checkout/tags",
            ADMIN,
            json!({"addedTags": [{"type": "simple", "value": "web"}], "removedTags": [{"type": "simple", "value": "payments"}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"version": 1, "tags": [{"type": "simple", "value": "web", "color": "#FFFFFF"}]})
    );
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/tags",
            ADMIN,
            json!({"features": ["search", "checkout"], "tags": {"addedTags": [{"type": "simple", "value": "q4"}], "removedTags": []}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, body) = send(&service, get("/api/admin/features/search/tags", ADMIN)).await;
    assert_eq!(
        body["tags"],
        json!([{"type": "simple", "value": "q4", "color": "#FFFFFF"}])
    );
    let (status, body) = send(&service, get("/api/admin/features/missing/tags", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");

    let (_, body) = send(&service, get("/api/admin/tags/simple", ADMIN)).await;
    let values: Vec<&str> = body["tags"]
        .as_array()
        .map(|tags| tags.iter().filter_map(|tag| tag["value"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(values, ["web", "payments", "q4"]);
    let (status, body) = send(&service, get("/api/admin/tags/simple/nope", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");

    // The audit log records the tags, with the flag's tags then.
    let (status, events) = send(
        &service,
        get(
            "/api/admin/search/events?feature=IS:checkout&type=IS_ANY_OF:feature-tagged,feature-untagged",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{events}");
    assert_eq!(events["total"], 4, "{events}");
    let newest = &events["events"][0];
    assert_eq!(newest["type"], "feature-tagged");
    assert_eq!(newest["data"], json!({"type": "simple", "value": "q4"}));
    assert_eq!(newest["createdByUserId"], -42);
    assert!(
        newest["tags"].as_array().is_some_and(|tags| tags.len() == 2),
        "{newest}"
    );
    let (status, body) = send(&service, get("/api/admin/search/events?feature=checkout", ADMIN)).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        get("/api/admin/search/events?from=IS:2026-13-01", ADMIN),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    // Deleting a tag takes it off every flag.
    let (status, _) = send(&service, delete("/api/admin/tags/simple/q4", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = send(&service, get("/api/admin/features/search/tags", ADMIN)).await;
    assert_eq!(body["tags"], json!([]));
    let (status, _) = send(
        &service,
        delete("/api/admin/features/checkout/tags/simple/web", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = send(&service, get("/api/admin/features/checkout/tags", ADMIN)).await;
    assert_eq!(body["tags"], Value::Array(Vec::new()));
}

#[actix_web::test]
async fn the_audit_log_is_read_by_flag_and_by_writer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "logged").await;
    let (status, body) = send(&service, get("/api/admin/events/logged", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["toggleName"], "logged");
    let keys: Vec<&String> = body["events"][0]
        .as_object()
        .map(|object| object.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "id",
            "type",
            "createdBy",
            "createdAt",
            "createdByUserId",
            "data",
            "preData",
            "tags",
            "featureName",
            "project",
            "environment",
            "groupType",
            "groupId"
        ]
    );
    let total = body["totalEvents"].as_i64().unwrap_or_default();
    assert!(total >= 5, "{body}");
    let (_, all) = send(&service, get("/api/admin/events", ADMIN)).await;
    assert!(all["totalEvents"].as_i64().unwrap_or_default() >= total);
    let (_, page) = send(&service, get("/api/admin/search/events?limit=2&offset=1", ADMIN)).await;
    assert_eq!(page["events"].as_array().map(Vec::len), Some(2));
    assert_eq!(page["events"][0]["type"], "feature-strategy-add");
    assert_eq!(page["events"][0]["label"], "Flag strategy added");
    let (status, creators) = send(&service, get("/api/admin/event-creators", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{creators}");
    assert!(
        creators
            .as_array()
            .is_some_and(|list| list.iter().any(|creator| creator["id"] == -42)),
        "{creators}"
    );
}

#[actix_web::test]
async fn sdks_can_ask_for_the_flags_with_any_of_some_tags() {
    let app = TestApp::new();
    let service = app.service().await;
    for name in ["web-a", "web-b", "other"] {
        seed_feature(&service, name).await;
    }
    for (feature, value) in [("web-a", "web"), ("web-b", "mobile")] {
        let (status, body) = send(
            &service,
            post(
                &format!("/api/admin/features/{feature}/tags"),
                ADMIN,
                json!({"type": "simple", "value": value}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let names = |body: &Value| -> Vec<String> {
        body["features"]
            .as_array()
            .map(|features| {
                features
                    .iter()
                    .filter_map(|feature| feature["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (status, body) = send(
        &service,
        get("/api/client/features?tag=simple:web", crate::common::SDK),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(names(&body), ["web-a"]);
    assert_eq!(body["query"]["tag"], json!([["simple", "web"]]));
    let (_, body) = send(
        &service,
        get(
            "/api/client/features?tag=simple:web&tag=simple:mobile&namePrefix=web",
            crate::common::SDK,
        ),
    )
    .await;
    assert_eq!(names(&body), ["web-a", "web-b"]);
    let (_, body) = send(&service, get("/api/client/features", crate::common::SDK)).await;
    assert_eq!(names(&body).len(), 3);
    let (status, body) = send(
        &service,
        get("/api/client/features?tag=untyped", crate::common::SDK),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}
