//! Searching flags with Unleash's filters, paging and sorting.

use crate::common::{ADMIN, TestApp, assert_error, delete, get, patch, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

fn names(body: &Value) -> Vec<String> {
    body["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|feature| feature["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn flags_are_found_by_filters_sorted_and_paged() {
    let app = TestApp::new();
    let service = app.service().await;
    for name in ["alpha", "beta", "gamma", "old"] {
        seed_feature(&service, name).await;
    }
    send(
        &service,
        put(
            "/api/admin/projects/default/features/beta",
            ADMIN,
            json!({"type": "kill-switch", "description": "Checkout kill switch"}),
        ),
    )
    .await;
    send(
        &service,
        patch(
            "/api/admin/projects/default/features/gamma",
            ADMIN,
            json!([{"op": "replace", "path": "/stale", "value": true}]),
        ),
    )
    .await;
    send(
        &service,
        post(
            "/api/admin/features/alpha/tags",
            ADMIN,
            json!({"type": "simple", "value": "web"}),
        ),
    )
    .await;
    send(
        &service,
        delete("/api/admin/projects/default/features/old", ADMIN),
    )
    .await;

    let search = |query: &str| get(&format!("/api/admin/search/features{query}"), ADMIN);
    let (status, all) = send(&service, search("")).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(
        names(&all),
        ["alpha", "beta", "gamma"],
        "live flags, oldest first"
    );
    assert_eq!(all["total"], 3);
    let first = &all["features"][0];
    let keys: Vec<&String> = first
        .as_object()
        .map(|object| object.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "type",
            "description",
            "project",
            "favorite",
            "name",
            "createdAt",
            "stale",
            "archivedAt",
            "impressionData",
            "dependencyType",
            "environments",
            "segments",
            "createdBy",
            "lifecycle",
            "tags"
        ]
    );
    assert_eq!(first["archivedAt"], Value::Null);
    assert_eq!(
        first["tags"],
        json!([{"value": "web", "type": "simple", "color": "#FFFFFF"}])
    );
    assert!(all["features"][1].get("tags").is_none(), "no tags, no key");
    assert_eq!(first["environments"][0]["hasEnabledStrategies"], true);

    let (_, found) = send(&service, search("?query=checkout")).await;
    assert_eq!(names(&found), ["beta"]);
    let (_, found) = send(&service, search("?type=IS_NOT:kill-switch")).await;
    assert_eq!(names(&found), ["alpha", "gamma"]);
    let (_, found) = send(&service, search("?state=IS:stale")).await;
    assert_eq!(names(&found), ["gamma"]);
    let (_, found) = send(&service, search("?tag=INCLUDE:simple:web")).await;
    assert_eq!(names(&found), ["alpha"]);
    let (_, found) = send(
        &service,
        search("?tag=DO_NOT_INCLUDE:simple:web&project=IS:default"),
    )
    .await;
    assert_eq!(names(&found), ["beta", "gamma"]);
    let (_, found) = send(&service, search("?createdAt=IS_BEFORE:2000-01-01")).await;
    assert_eq!(found["total"], 0);
    let (_, found) = send(&service, search("?archived=IS:true")).await;
    assert_eq!(names(&found), ["old"]);
    assert!(found["features"][0]["archivedAt"].is_string());
    let (_, found) = send(&service, search("?lifecycle=IS:archived")).await;
    assert_eq!(names(&found), ["old"]);
    let (_, found) = send(&service, search("?sortBy=name&sortOrder=desc&limit=2&offset=0")).await;
    assert_eq!(names(&found), ["gamma", "beta"]);
    assert_eq!(found["total"], 3);
    let (_, found) = send(&service, search("?sortBy=name&limit=2&offset=2")).await;
    assert_eq!(names(&found), ["gamma"]);

    for bad in [
        "?tag=EXCLUDE_ALL:simple",
        "?project=LIKE:default",
        "?createdAt=IS_BEFORE:yesterday",
        "?sortOrder=up",
        "?archived=IS:maybe",
    ] {
        let (status, body) = send(&service, search(bad)).await;
        assert_error(status, &body, 400, "ValidationError");
    }
}
