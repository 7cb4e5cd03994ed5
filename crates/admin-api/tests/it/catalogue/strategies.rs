//! A flag's strategies: where they may go, their order, their patches, the stored shape of their
//! constraints, and a flag switched on or off by its strategies, as Unleash 8.2 does.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, SDK, TestApp, assert_error, get, patch, played_feature, post, put, seed_feature, send,
};

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

fn object_keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .map(|fields| fields.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

#[actix_web::test]
async fn a_strategy_without_a_sort_order_goes_after_the_others() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let strategies = "/api/admin/projects/default/features/f/environments/development/strategies";
    let (status, explicit) = send(
        &service,
        post(strategies, ADMIN, json!({"name": "default", "sortOrder": 5})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{explicit}");
    let (status, appended) = send(&service, post(strategies, ADMIN, json!({"name": "default"}))).await;
    assert_eq!(status, StatusCode::OK, "{appended}");
    assert_eq!(appended["sortOrder"], json!(6), "{appended}");
    let (_, feature) = send(&service, get("/api/admin/projects/default/features/f", ADMIN)).await;
    let development = feature["environments"]
        .as_array()
        .and_then(|environments| environments.iter().find(|env| env["name"] == "development"))
        .cloned()
        .unwrap_or_default();
    let ids: Vec<&Value> = development["strategies"]
        .as_array()
        .map(|strategies| strategies.iter().map(|strategy| &strategy["id"]).collect())
        .unwrap_or_default();
    assert_eq!(
        ids.last(),
        Some(&&appended["id"]),
        "the new strategy is evaluated last"
    );
}

#[actix_web::test]
async fn strategies_are_listed_read_reordered_and_patched() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "ordered").await;
    let base = format!("{FEATURES}/ordered/environments/development");
    let (_, second) = send(
        &service,
        post(
            &format!("{base}/strategies"),
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": {"rollout": 50}}),
        ),
    )
    .await;
    let (status, listed) = send(&service, get(&format!("{base}/strategies"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let ids: Vec<String> = listed
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|item| item["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(ids.len(), 2);
    assert_eq!(listed[1]["milestoneId"], Value::Null);
    let second_id = second["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(ids[1], second_id);

    let (status, body) = send(
        &service,
        post(
            &format!("{base}/strategies/set-sort-order"),
            ADMIN,
            json!([{"id": second_id, "sortOrder": -1}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, environment) = send(&service, get(&base, ADMIN)).await;
    assert_eq!(environment["name"], "ordered");
    assert_eq!(environment["environment"], "development");
    assert_eq!(environment["strategies"][0]["id"], second_id.as_str());
    let (status, body) = send(
        &service,
        post(
            &format!("{base}/strategies/set-sort-order"),
            ADMIN,
            json!([{"id": "not-a-strategy", "sortOrder": 1}]),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        post(
            &format!("{base}/strategies/set-sort-order"),
            ADMIN,
            json!([{"id": second_id}]),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, one) = send(&service, get(&format!("{base}/strategies/{second_id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["parameters"]["rollout"], "50");
    let (status, patched) = send(
        &service,
        patch(
            &format!("{base}/strategies/{second_id}"),
            ADMIN,
            json!([{"op": "replace", "path": "/disabled", "value": true}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["disabled"], true);
    assert_eq!(patched["parameters"]["rollout"], "50");
    let (status, body) = send(&service, get(&format!("{base}/strategies/nope"), ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        get(
            &format!("{FEATURES}/ordered/environments/nowhere/strategies"),
            ADMIN,
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn constraints_and_client_documents_read_back_as_stored() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    let (status, _) = send(&service, post(FEATURES, ADMIN, json!({"name": "child"}))).await;
    assert_eq!(status, StatusCode::CREATED);
    let bare = json!({"contextName": "userId", "operator": "IN", "values": ["1"]});
    let explicit = json!({"contextName": "userId", "operator": "STR_CONTAINS", "values": ["x"],
        "caseInsensitive": false, "inverted": false});
    let strategy = json!({"name": "default", "constraints": [bare, explicit]});
    let (status, added) = send(
        &service,
        post(&strategies("child", "development"), ADMIN, strategy),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    let dependency = json!({"feature": "parent"});
    let (status, body) = send(
        &service,
        post(&format!("{FEATURES}/child/dependencies"), ADMIN, dependency),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(
        &service,
        post(
            &format!("{FEATURES}/child/environments/development/on"),
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let stored_keys = [
        vec!["contextName", "operator", "values"],
        vec!["contextName", "operator", "values", "caseInsensitive", "inverted"],
    ];
    let check = |constraints: &Value, place: &str| {
        for (index, keys) in stored_keys.iter().enumerate() {
            let mut actual = object_keys(&constraints[index]);
            let mut expected = keys.clone();
            actual.sort_unstable();
            expected.sort_unstable();
            assert_eq!(actual, expected, "{place}: {}", constraints[index]);
        }
    };
    check(&added["constraints"], "the add answer");
    let (_, feature) = send(&service, get(&format!("{FEATURES}/child"), ADMIN)).await;
    let development = named(&feature["environments"], "development");
    check(&development["strategies"][0]["constraints"], "the feature read");

    let (status, document) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(status, StatusCode::OK, "{document}");
    let child = named(&document["features"], "child");
    check(&child["strategies"][0]["constraints"], "the client API");
    assert_eq!(
        child["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": []}]),
        "Unleash writes `variants: []` for an enabled parent when none were named"
    );
    // On a disabled parent, Unleash leaves `variants` out.
    let (status, answer) = send(
        &service,
        post(
            &format!("{FEATURES}/child/dependencies"),
            ADMIN,
            json!({"feature": "parent", "enabled": false}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (_, disabled) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(
        named(&disabled["features"], "child")["dependencies"],
        json!([{"feature": "parent", "enabled": false}])
    );
    let mut query = object_keys(&document["query"]);
    query.sort_unstable();
    assert_eq!(
        query,
        ["environment", "inlineSegmentConstraints"],
        "{}",
        document["query"]
    );

    // The playground puts Unleash's default `inverted` first, and `caseInsensitive` only when
    // it was stored.
    let played = played_feature(&service, "development", json!({"appName": "a"}), "child").await;
    let constraints = &played["strategies"]["data"][0]["constraints"];
    assert_eq!(object_keys(&constraints[0])[0], "inverted", "{constraints}");
    assert!(constraints[0].get("caseInsensitive").is_none(), "{constraints}");
    assert_eq!(constraints[1]["caseInsensitive"], false, "{constraints}");
}

#[actix_web::test]
async fn switching_on_without_a_strategy_adds_the_default_rollout() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, _) = send(&service, post(FEATURES, ADMIN, json!({"name": "bare"}))).await;
    assert_eq!(status, StatusCode::CREATED);
    // The first switch adds the rollout; the second finds it and adds nothing more.
    for _ in 0..2 {
        let (status, _) = send(
            &service,
            post(
                &format!("{FEATURES}/bare/environments/production/on"),
                ADMIN,
                json!({}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let (_, feature) = send(&service, get(&format!("{FEATURES}/bare"), ADMIN)).await;
        let environments = feature["environments"].as_array().cloned().unwrap_or_default();
        assert!(!environments.is_empty(), "{feature}");
        for environment in environments {
            let strategies = environment["strategies"].as_array().cloned().unwrap_or_default();
            if environment["name"] == "production" {
                assert_eq!(environment["enabled"], true);
                assert_eq!(strategies.len(), 1, "{environment}");
                assert_eq!(strategies[0]["name"], "flexibleRollout");
                assert_eq!(
                    strategies[0]["parameters"],
                    json!({"groupId": "bare", "rollout": "100", "stickiness": "default"})
                );
            } else {
                assert!(
                    strategies.is_empty(),
                    "only the environment switched on: {environment}"
                );
            }
        }
    }
}

#[actix_web::test]
async fn a_strategy_can_go_in_an_environment_the_project_has_not_enabled() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "staging", "type": "test"}),
        ),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    seed_feature(&service, "f").await;
    let (status, body) = send(
        &service,
        post(&strategies("f", "staging"), ADMIN, json!({"name": "default"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let played = played_feature(&service, "staging", json!({"appName": "a"}), "f").await;
    assert_eq!(played["strategies"]["data"][0]["name"], "default", "{played}");
    assert_eq!(played["isEnabledInCurrentEnvironment"], false, "{played}");
    // An environment that does not exist is still a 404.
    let (status, body) = send(
        &service,
        post(&strategies("f", "nowhere"), ADMIN, json!({"name": "default"})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn removing_or_disabling_the_last_active_strategy_switches_the_feature_off() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    // Disabling the only strategy in development switches development off.
    let (_, feature) = send(&service, get(&format!("{FEATURES}/f"), ADMIN)).await;
    let development = named(&feature["environments"], "development");
    let id = development["strategies"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (status, body) = send(
        &service,
        put(
            &format!("{}/{id}", strategies("f", "development")),
            ADMIN,
            json!({"name": "default", "disabled": true}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Removing the only strategy in production switches production off.
    let production = named(&feature["environments"], "production");
    let id = production["strategies"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let request = actix_web::test::TestRequest::delete()
        .uri(&format!("{}/{id}", strategies("f", "production")))
        .insert_header(("Authorization", ADMIN));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (_, feature) = send(&service, get(&format!("{FEATURES}/f"), ADMIN)).await;
    assert_eq!(
        named(&feature["environments"], "development")["enabled"],
        false,
        "{feature}"
    );
    assert_eq!(
        named(&feature["environments"], "production")["enabled"],
        false,
        "{feature}"
    );
}
