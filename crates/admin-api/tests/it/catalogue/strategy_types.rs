//! Strategy types: the four Unleash 8.2 builds in, custom ones with their parameters, in its order
//! with its display names and titles, and changed, deprecated and deleted while the built-in ones
//! stay.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, TestApp, assert_error, delete, get, played_feature, post, put, seed_feature, send,
};

const FEATURES: &str = "/api/admin/projects/default/features";

fn strategies(feature: &str, environment: &str) -> String {
    format!("{FEATURES}/{feature}/environments/{environment}/strategies")
}

#[actix_web::test]
async fn a_fresh_install_builds_in_unleash_8s_four_strategy_types() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/strategies", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    let mut names: Vec<&str> = body["strategies"]
        .as_array()
        .map(|types| types.iter().filter_map(|kind| kind["name"].as_str()).collect())
        .unwrap_or_default();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "applicationHostname",
            "default",
            "flexibleRollout",
            "remoteAddress"
        ]
    );

    seed_feature(&service, "f").await;
    let staff = json!({"name": "userWithId", "parameters": {"userIds": "7"}});
    let (status, body) = send(
        &service,
        post(&strategies("f", "development"), ADMIN, staff.clone()),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("userWithId")),
        "{body}"
    );

    let definition = json!({"name": "userWithId", "parameters": [{"name": "userIds", "type": "list"}]});
    let (status, body) = send(&service, post("/api/admin/strategies", ADMIN, definition)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(&service, post(&strategies("f", "development"), ADMIN, staff)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The engine evaluates it as the SDKs do.
    let played = played_feature(
        &service,
        "development",
        json!({"appName": "a", "userId": "7"}),
        "f",
    )
    .await;
    assert_eq!(played["isEnabled"], true);
}

#[actix_web::test]
async fn custom_strategies_and_context_fields_show_in_the_playground() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let (status, _) = send(
        &service,
        post(
            "/api/admin/strategies",
            ADMIN,
            json!({"name": "byTenant", "parameters": [{"name": "tenants", "type": "list"}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, types) = send(&service, get("/api/admin/strategies", ADMIN)).await;
    assert!(types["strategies"].as_array().is_some_and(|all| {
        all.iter()
            .any(|t| t["name"] == "byTenant" && t["editable"] == true)
    }));
    let (status, _) = send(
        &service,
        post(
            "/api/admin/context",
            ADMIN,
            json!({"name": "tenant", "stickiness": true}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = send(
        &service,
        post("/api/admin/context", ADMIN, json!({"name": "tenant"})),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");

    let strategies = "/api/admin/projects/default/features/g/environments/development/strategies";
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "g"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body) = send(
        &service,
        post(
            strategies,
            ADMIN,
            json!({"name": "byTenant", "parameters": {"tenants": "a"}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(&service, post(strategies, ADMIN, json!({"name": "noSuchType"}))).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        post(strategies, ADMIN, json!({"name": "default", "constraints": [{"contextName": "x", "operator": "LIKE", "values": []}]})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (_, on) = send(
        &service,
        post(
            "/api/admin/projects/default/features/g/environments/development/on",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(on, serde_json::Value::Null);

    let g = crate::common::played_feature(
        &service,
        "development",
        json!({"appName": "a", "tenant": "a"}),
        "g",
    )
    .await;
    assert_eq!(g["strategies"]["result"], "unknown", "{g}");
    assert_eq!(
        g["strategies"]["data"][0]["result"],
        json!({"enabled": "unknown", "evaluationStatus": "incomplete"})
    );
    assert_eq!(g["isEnabled"], false);
}

#[actix_web::test]
async fn strategy_types_come_in_unleashs_order_with_its_display_names_and_titles() {
    let app = TestApp::new();
    let service = app.service().await;
    for (name, title) in [("zeta", Value::Null), ("alpha", json!("Alpha tenants"))] {
        let definition = json!({"name": name, "title": title, "parameters": []});
        let (status, body) = send(&service, post("/api/admin/strategies", ADMIN, definition)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body.get("displayName"), Some(&Value::Null), "{body}");
    }
    let (status, body) = send(&service, get("/api/admin/strategies", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed: Vec<(Value, Value, Value)> = body["strategies"]
        .as_array()
        .map(|types| {
            types
                .iter()
                .map(|kind| {
                    let field = |key: &str| kind.get(key).cloned().unwrap_or_else(|| json!("(absent)"));
                    (field("name"), field("displayName"), field("title"))
                })
                .collect()
        })
        .unwrap_or_default();
    // Unleash orders by its `sort_order` (flexibleRollout 0, default 1, remoteAddress 3,
    // applicationHostname 4, custom types 9999), then by name. Its built-in types have display
    // names and no title; custom ones have no display name.
    assert_eq!(
        listed,
        [
            (json!("flexibleRollout"), json!("Gradual rollout"), Value::Null),
            (json!("default"), json!("Standard"), Value::Null),
            (json!("remoteAddress"), json!("IPs"), Value::Null),
            (json!("applicationHostname"), json!("Hosts"), Value::Null),
            (json!("alpha"), Value::Null, json!("Alpha tenants")),
            (json!("zeta"), Value::Null, Value::Null),
        ],
        "{body}"
    );

    let (status, rollout) = send(&service, get("/api/admin/strategies/flexibleRollout", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{rollout}");
    assert_eq!(rollout["displayName"], "Gradual rollout", "{rollout}");
    assert_eq!(rollout["title"], Value::Null, "{rollout}");
    assert_eq!(
        rollout["description"],
        "Roll out to a percentage of your userbase, and ensure that the experience is the same for the user on each visit.",
        "{rollout}"
    );
    let (status, standard) = send(&service, get("/api/admin/strategies/default", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{standard}");
    assert_eq!(standard["displayName"], "Standard", "{standard}");
    assert_eq!(
        standard["description"],
        "This strategy turns on / off for your entire userbase. Prefer using \"Gradual rollout\" strategy (100%=on, 0%=off).",
        "{standard}"
    );
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
