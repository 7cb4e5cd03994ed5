//! Finding flags: the search with Unleash's filters, paging and sorting, and what the search and a
//! project's flag list say of a flag in each environment, as Unleash 8.2 answers them.

use crate::common::{
    ADMIN, SDK, TestApp, assert_error, create_feature, delete, expect, get, patch, post, put, seed_feature,
    send,
};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
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

/// The path of flag `name` in `environment` of the `default` project.
fn flag_in(name: &str, environment: &str) -> String {
    format!("/api/admin/projects/default/features/{name}/environments/{environment}")
}

/// Flag `mixed`: on in development with an enabled strategy and two variants there, off in
/// production with only a disabled strategy; flag `bare`: no strategy anywhere.
async fn mixed_and_bare<S, B>(service: &S)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    create_feature(service, "mixed").await;
    expect(
        service,
        post(
            &format!("{}/on", flag_in("mixed", "development")),
            ADMIN,
            json!({}),
        ),
        StatusCode::OK,
    )
    .await;
    expect(
        service,
        put(
            "/api/admin/projects/default/features/mixed/variants-batch",
            ADMIN,
            json!({
                "environments": ["development"],
                "variants": [
                    {"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default"},
                    {"name": "red", "weight": 500, "weightType": "variable", "stickiness": "default"}
                ]
            }),
        ),
        StatusCode::OK,
    )
    .await;
    expect(
        service,
        post(
            &format!("{}/strategies", flag_in("mixed", "production")),
            ADMIN,
            json!({"name": "default", "disabled": true}),
        ),
        StatusCode::OK,
    )
    .await;
    create_feature(service, "bare").await;
}

/// The flag `name` among `features`.
fn flag<'a>(features: &'a Value, name: &str) -> &'a Value {
    features
        .as_array()
        .and_then(|features| features.iter().find(|feature| feature["name"] == name))
        .unwrap_or_else(|| panic!("no flag {name} in {features}"))
}

/// What each list says of a flag in one environment, for the fields Unleash computes alike in
/// the project's flag list and the search.
fn strategies_by_environment(feature: &Value) -> Vec<(String, bool, bool)> {
    feature["environments"]
        .as_array()
        .map(|environments| {
            environments
                .iter()
                .map(|environment| {
                    (
                        environment["name"].as_str().unwrap_or_default().to_owned(),
                        environment["hasStrategies"] == true,
                        environment["hasEnabledStrategies"] == true,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[actix_web::test]
async fn project_flag_list_shows_each_environment_as_unleash_does() {
    let app = TestApp::new();
    let service = app.service().await;
    mixed_and_bare(&service).await;
    let list = expect(
        &service,
        get("/api/admin/projects/default/features", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        flag(&list["features"], "mixed")["environments"],
        json!([
            {
                "name": "development", "enabled": true, "type": "development", "sortOrder": 2,
                "variantCount": 2, "lastSeenAt": null, "hasStrategies": true,
                "hasEnabledStrategies": true
            },
            {
                "name": "production", "enabled": false, "type": "production", "sortOrder": 3,
                "variantCount": 0, "lastSeenAt": null, "hasStrategies": true,
                "hasEnabledStrategies": false
            }
        ])
    );
    assert_eq!(
        strategies_by_environment(flag(&list["features"], "bare")),
        [
            ("development".to_owned(), false, false),
            ("production".to_owned(), false, false)
        ]
    );

    // Environments come by sort order, not by name.
    expect(
        &service,
        put(
            "/api/admin/environments/sort-order",
            ADMIN,
            json!({"production": 1}),
        ),
        StatusCode::OK,
    )
    .await;
    let list = expect(
        &service,
        get("/api/admin/projects/default/features", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        strategies_by_environment(flag(&list["features"], "mixed")),
        [
            ("production".to_owned(), true, false),
            ("development".to_owned(), true, true)
        ]
    );
}

#[actix_web::test]
async fn search_says_which_environments_have_strategies_disabled_ones_included() {
    let app = TestApp::new();
    let service = app.service().await;
    mixed_and_bare(&service).await;
    let found = expect(&service, get("/api/admin/search/features", ADMIN), StatusCode::OK).await;
    assert_eq!(
        strategies_by_environment(flag(&found["features"], "mixed")),
        [
            ("development".to_owned(), true, true),
            ("production".to_owned(), true, false)
        ],
        "{found}"
    );
    assert_eq!(
        strategies_by_environment(flag(&found["features"], "bare")),
        [
            ("development".to_owned(), false, false),
            ("production".to_owned(), false, false)
        ]
    );
    // Disabling development's only strategy leaves it with strategies, none enabled.
    let strategies = expect(
        &service,
        get(&format!("{}/strategies", flag_in("mixed", "development")), ADMIN),
        StatusCode::OK,
    )
    .await;
    let id = strategies[0]["id"].as_str().unwrap_or_default().to_owned();
    let mut strategy = strategies[0].clone();
    strategy["disabled"] = json!(true);
    expect(
        &service,
        put(
            &format!("{}/strategies/{id}", flag_in("mixed", "development")),
            ADMIN,
            strategy,
        ),
        StatusCode::OK,
    )
    .await;
    let found = expect(&service, get("/api/admin/search/features", ADMIN), StatusCode::OK).await;
    assert_eq!(
        strategies_by_environment(flag(&found["features"], "mixed")),
        [
            ("development".to_owned(), true, false),
            ("production".to_owned(), true, false)
        ],
        "{found}"
    );
}

#[actix_web::test]
async fn search_has_no_flag_level_last_seen_only_each_environment_has() {
    let app = TestApp::new();
    let service = app.service().await;
    mixed_and_bare(&service).await;
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let (status, _) = send(
        &service,
        post(
            "/api/client/metrics",
            SDK,
            json!({
                "appName": "web", "instanceId": "i-1",
                "bucket": {"start": now, "stop": now, "toggles": {"mixed": {"yes": 1, "no": 0}}}
            }),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // Reports are held and written in batches; an admin usage view writes what is held first.
    expect(
        &service,
        get("/api/admin/metrics/applications", ADMIN),
        StatusCode::OK,
    )
    .await;
    let found = expect(&service, get("/api/admin/search/features", ADMIN), StatusCode::OK).await;
    for name in ["mixed", "bare"] {
        assert!(
            flag(&found["features"], name).get("lastSeenAt").is_none(),
            "Unleash 8 has no flag-level lastSeenAt: {found}"
        );
    }
    let seen: Vec<(Value, bool)> = flag(&found["features"], "mixed")["environments"]
        .as_array()
        .map(|environments| {
            environments
                .iter()
                .map(|environment| (environment["name"].clone(), environment["lastSeenAt"].is_string()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        seen,
        [(json!("development"), true), (json!("production"), false)],
        "{found}"
    );
    assert_eq!(
        flag(&found["features"], "mixed")["environments"][1]["lastSeenAt"],
        Value::Null,
        "an environment never seen says null"
    );
}
