//! Flags: updating them, their names, the archive, batch operations and bulk switches, feature
//! types, and clones.

use crate::common::{ADMIN, SDK, TestApp, assert_error, delete, get, patch, post, put, seed_feature, send};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

const FEATURES: &str = "/api/admin/projects/default/features";

fn names(client: &Value) -> Vec<String> {
    client["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|feature| feature["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn event_types<S, B>(service: &S) -> Vec<String>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let (status, body) = send(service, get("/api/admin/search/events?limit=1000", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter_map(|event| event["type"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn put_sets_every_field_and_patch_changes_some() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    let (status, body) = send(
        &service,
        put(
            &format!("{FEATURES}/checkout"),
            ADMIN,
            json!({"description": "new checkout", "type": "kill-switch", "impressionData": true}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let keys: Vec<&String> = body
        .as_object()
        .map(|object| object.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "name",
            "description",
            "type",
            "project",
            "stale",
            "createdAt",
            "impressionData",
            "archived"
        ]
    );
    assert_eq!(body["type"], "kill-switch");
    assert_eq!(body["impressionData"], true);

    // PUT replaces every field: left out, the description is cleared and the type is `release`.
    let (_, body) = send(&service, put(&format!("{FEATURES}/checkout"), ADMIN, json!({}))).await;
    assert_eq!(body["description"], Value::Null);
    assert_eq!(body["type"], "release");
    // The same update again changes nothing, so it records no event.
    let updates = |types: &[String]| {
        types
            .iter()
            .filter(|kind| *kind == "feature-metadata-updated")
            .count()
    };
    let before = updates(&event_types(&service).await);
    send(&service, put(&format!("{FEATURES}/checkout"), ADMIN, json!({}))).await;
    assert_eq!(updates(&event_types(&service).await), before);

    let (status, body) = send(
        &service,
        patch(
            &format!("{FEATURES}/checkout"),
            ADMIN,
            json!([{"op": "replace", "path": "/stale", "value": true}, {"op": "replace", "path": "/description", "value": "old"}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["stale"], true);
    assert_eq!(body["description"], "old");
    let types = event_types(&service).await;
    assert!(types.contains(&"feature-stale-on".to_owned()), "{types:?}");
    assert!(
        types.contains(&"feature-metadata-updated".to_owned()),
        "{types:?}"
    );

    // Bad inputs.
    let (status, body) = send(
        &service,
        put(&format!("{FEATURES}/checkout"), ADMIN, json!({"name": "renamed"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        put(&format!("{FEATURES}/checkout"), ADMIN, json!({"type": "nope"})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, put(&format!("{FEATURES}/missing"), ADMIN, json!({}))).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        patch(
            &format!("{FEATURES}/checkout"),
            ADMIN,
            json!([{"op": "replace", "path": "/variants", "value": []}]),
        ),
    )
    .await;
    assert_error(status, &body, 403, "InvalidOperationError");
    let (status, body) = send(
        &service,
        patch(
            &format!("{FEATURES}/checkout"),
            ADMIN,
            json!([{"op": "test", "path": "/stale", "value": false}]),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        patch(
            &format!("{FEATURES}/checkout"),
            ADMIN,
            json!([{"op": "jump", "path": "/x"}]),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn names_are_validated_against_live_and_archived_flags() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "live-one").await;
    seed_feature(&service, "gone").await;
    let (status, _) = send(&service, delete(&format!("{FEATURES}/gone"), ADMIN)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let validate = |name: &str| post("/api/admin/features/validate", ADMIN, json!({"name": name}));
    let (status, body) = send(&service, validate("fresh")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(&service, validate("live-one")).await;
    assert_error(status, &body, 409, "NameExistsError");
    assert_eq!(body["message"], "A flag with that name already exists");
    let (status, body) = send(&service, validate("gone")).await;
    assert_error(status, &body, 409, "NameExistsError");
    assert_eq!(body["message"], "An archived flag with that name already exists");
    let (status, body) = send(&service, validate("not url friendly")).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, post("/api/admin/features/validate", ADMIN, json!({}))).await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn archived_flags_leave_every_evaluation_and_come_back_switched_off() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    seed_feature(&service, "loner").await;
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/child/dependencies"),
            ADMIN,
            json!({"feature": "parent"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // What archiving would do, and the rule it follows.
    let (status, impact) = send(
        &service,
        post(
            "/api/admin/projects/default/archive/validate",
            ADMIN,
            json!({"features": ["parent"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{impact}");
    assert_eq!(
        impact,
        json!({"parentsWithChildFeatures": ["parent"], "hasDeletedDependencies": true})
    );
    let (status, body) = send(&service, delete(&format!("{FEATURES}/parent"), ADMIN)).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    assert_eq!(
        body["message"],
        "You can not archive/delete this feature since other features depend on it."
    );

    // Both at once is allowed; the child's dependency goes with it.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/archive",
            ADMIN,
            json!({"features": ["parent", "child", "unknown"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (status, _) = send(&service, delete(&format!("{FEATURES}/loner"), ADMIN)).await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (_, client) = send(&service, get("/api/client/features", SDK)).await;
    assert!(names(&client).is_empty(), "{client}");
    let (_, played) = send(
        &service,
        post(
            "/api/admin/playground",
            ADMIN,
            json!({"environment": "development", "context": {"appName": "a"}}),
        ),
    )
    .await;
    assert_eq!(played["features"], json!([]), "{played}");
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/loner/environments/development/on"),
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ArchivedFeatureError");

    // Revived flags come back off everywhere, with their strategies.
    let (status, body) = send(
        &service,
        post("/api/admin/archive/revive/loner", ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, client) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(names(&client), ["loner"]);
    assert_eq!(client["features"][0]["enabled"], false);
    assert_eq!(
        client["features"][0]["strategies"].as_array().map(Vec::len),
        Some(1)
    );
    let (status, body) = send(
        &service,
        post("/api/admin/archive/revive/nothing", ADMIN, json!({})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");

    // Deleting for good frees the name; a live flag is left alone.
    let (status, _) = send(&service, delete("/api/admin/archive/loner", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let (_, client) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(names(&client), ["loner"]);
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/delete",
            ADMIN,
            json!({"features": ["parent", "child"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &service,
        post("/api/admin/features/validate", ADMIN, json!({"name": "parent"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/revive",
            ADMIN,
            json!({"features": "not a list"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let types = event_types(&service).await;
    for expected in [
        "feature-archived",
        "feature-revived",
        "feature-deleted",
        "feature-dependencies-removed",
    ] {
        assert!(types.contains(&expected.to_owned()), "{expected}: {types:?}");
    }
}

#[actix_web::test]
async fn batch_operations_refuse_flags_of_other_projects() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "mine").await;
    let (status, body) = send(
        &service,
        post("/api/admin/projects", ADMIN, json!({"name": "other"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for path in ["archive", "stale"] {
        let (status, body) = send(
            &service,
            post(
                &format!("/api/admin/projects/other/{path}"),
                ADMIN,
                json!({"features": ["mine"], "stale": true}),
            ),
        )
        .await;
        assert_error(status, &body, 403, "InvalidOperationError");
    }
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/stale",
            ADMIN,
            json!({"features": ["mine", "unknown"], "stale": true}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (_, client) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(client["features"][0]["stale"], true);
}

#[actix_web::test]
async fn bulk_switches_are_all_or_nothing_and_can_enable_disabled_strategies() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "one").await;
    seed_feature(&service, "two").await;
    let bulk = "/api/admin/projects/default/bulk_features/environments/development";
    let (status, body) = send(
        &service,
        post(
            &format!("{bulk}/off"),
            ADMIN,
            json!({"features": ["one", "missing"]}),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (_, client) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(client["features"][0]["enabled"], true, "nothing was switched");
    let (status, body) = send(
        &service,
        post(&format!("{bulk}/off"), ADMIN, json!({"features": ["one", "two"]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // With its only strategy disabled, switching on enables it when asked to.
    let base = format!("{FEATURES}/one/environments/development");
    let (_, listed) = send(&service, get(&format!("{base}/strategies"), ADMIN)).await;
    let id = listed[0]["id"].as_str().unwrap_or_default().to_owned();
    send(
        &service,
        patch(
            &format!("{base}/strategies/{id}"),
            ADMIN,
            json!([{"op": "replace", "path": "/disabled", "value": true}]),
        ),
    )
    .await;
    let (status, body) = send(
        &service,
        post(
            &format!("{bulk}/on?shouldActivateDisabledStrategies=true"),
            ADMIN,
            json!({"features": ["one"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, listed) = send(&service, get(&format!("{base}/strategies"), ADMIN)).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["disabled"], false);
}

#[actix_web::test]
async fn feature_types_list_in_order_and_lifetimes_change() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/feature-types", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let ids: Vec<&str> = body["types"]
        .as_array()
        .map(|types| types.iter().filter_map(|kind| kind["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        ids,
        [
            "release",
            "experiment",
            "operational",
            "kill-switch",
            "permission",
            "sunset"
        ]
    );
    let (status, body) = send(
        &service,
        put(
            "/api/admin/feature-types/Release/lifetime",
            ADMIN,
            json!({"lifetimeDays": 0}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["lifetimeDays"], Value::Null);
    let (status, body) = send(
        &service,
        put(
            "/api/admin/feature-types/nope/lifetime",
            ADMIN,
            json!({"lifetimeDays": 3}),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/feature-types/release/lifetime",
            ADMIN,
            json!({"lifetimeDays": -1}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn clones_copy_strategies_variants_and_parents_switched_off() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "original").await;
    send(
        &service,
        post(
            &format!("{FEATURES}/original/environments/development/strategies"),
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": {"rollout": "40", "stickiness": "default", "groupId": "original"}}),
        ),
    )
    .await;
    send(
        &service,
        post(
            &format!("{FEATURES}/original/dependencies"),
            ADMIN,
            json!({"feature": "parent"}),
        ),
    )
    .await;
    let (status, copy) = send(
        &service,
        post(
            &format!("{FEATURES}/original/clone"),
            ADMIN,
            json!({"name": "copy"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{copy}");
    assert_eq!(copy["name"], "copy");
    let (_, read) = send(&service, get(&format!("{FEATURES}/copy"), ADMIN)).await;
    assert_eq!(read["environments"][0]["enabled"], false);
    assert_eq!(
        read["environments"][0]["strategies"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(
        read["environments"][0]["strategies"][1]["parameters"]["groupId"],
        "copy"
    );
    assert_eq!(read["dependencies"][0]["feature"], "parent");
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/original/clone"),
            ADMIN,
            json!({"name": "copy"}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/missing/clone"),
            ADMIN,
            json!({"name": "other"}),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/original/clone"),
            ADMIN,
            json!({"name": "not friendly"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}
