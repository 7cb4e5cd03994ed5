//! Dependencies between flags: refused on the flag itself or on a missing parent, and evaluated
//! as the SDKs evaluate them.

use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, get, played_feature, post, put, seed_feature, send};

const FEATURES: &str = "/api/admin/projects/default/features";

fn strategies(feature: &str, environment: &str) -> String {
    format!("{FEATURES}/{feature}/environments/{environment}/strategies")
}

/// The entry of the array `list` whose `name` is `name` (`Null` when there is none).
fn named(list: &Value, name: &str) -> Value {
    list.as_array()
        .and_then(|entries| entries.iter().find(|entry| entry["name"] == name))
        .cloned()
        .unwrap_or_default()
}

#[actix_web::test]
async fn dependencies_are_enforced_and_evaluated() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    let path = "/api/admin/projects/default/features/child/dependencies";
    // As in Unleash: 403 `InvalidOperationError` for a dependency on itself or on a missing
    // parent.
    let (status, body) = send(&service, post(path, ADMIN, json!({"feature": "child"}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    let (status, body) = send(&service, post(path, ADMIN, json!({"feature": "ghost"}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("ghost")),
        "{body}"
    );
    let (status, _) = send(
        &service,
        post(path, ADMIN, json!({"feature": "parent", "enabled": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let child =
        crate::common::played_feature(&service, "development", json!({"appName": "a"}), "child").await;
    assert_eq!(child["hasUnsatisfiedDependency"], true, "{child}");
    assert_eq!(child["isEnabled"], false);

    let remove = test::TestRequest::delete()
        .uri(path)
        .insert_header(("Authorization", ADMIN));
    assert_eq!(send(&service, remove).await.0, StatusCode::OK);
    let child =
        crate::common::played_feature(&service, "development", json!({"appName": "a"}), "child").await;
    assert_eq!(child["isEnabled"], true);
}

#[actix_web::test]
async fn a_disabled_dependency_on_a_parent_false_for_the_context_is_satisfied() {
    // DECISIONS.md: the playground answers what the SDKs answer, not Unleash's playground.
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    let only_seven = json!({"name": "default", "constraints": [
        {"contextName": "userId", "operator": "IN", "values": ["7"]}]});
    let parent_strategies = strategies("parent", "development");
    let (_, feature) = send(&service, get(&format!("{FEATURES}/parent"), ADMIN)).await;
    let existing = named(&feature["environments"], "development")["strategies"][0]["id"].clone();
    let (status, body) = send(
        &service,
        put(
            &format!("{parent_strategies}/{}", existing.as_str().unwrap_or_default()),
            ADMIN,
            only_seven,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        post(
            &format!("{FEATURES}/child/dependencies"),
            ADMIN,
            json!({"feature": "parent", "enabled": false}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "userId": "8"}),
        "child",
    )
    .await;
    assert_eq!(played["hasUnsatisfiedDependency"], false, "{played}");
    assert_eq!(played["isEnabled"], true, "{played}");
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "userId": "7"}),
        "child",
    )
    .await;
    assert_eq!(played["hasUnsatisfiedDependency"], true, "{played}");
    assert_eq!(played["isEnabled"], false, "{played}");
}
