//! Environments, a project's flag list and the flag search, as Unleash 8.2 answers them: sort
//! orders, the environment list's counts, an unknown environment added to a project, and what
//! each list says of a flag in each environment.

use crate::common::{
    ADMIN, SDK, TestApp, assert_error, create_feature, delete, expect, get, post, put, send,
};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

/// A production client token, besides the test app's own.
const PRODUCTION_CLIENT: &str = "*:production.production-client-secret";

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
async fn built_in_environments_sort_second_and_third_and_new_ones_last() {
    let app = TestApp::new();
    let service = app.service().await;
    let list = expect(&service, get("/api/admin/environments", ADMIN), StatusCode::OK).await;
    let orders: Vec<(Value, Value)> = list["environments"]
        .as_array()
        .map(|environments| {
            environments
                .iter()
                .map(|environment| (environment["name"].clone(), environment["sortOrder"].clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        orders,
        [(json!("development"), json!(2)), (json!("production"), json!(3))],
        "Unleash renumbers its environments from 1 and drops `default` on new installs"
    );

    // A new environment without a sort order takes one past the largest, as Unleash's own
    // environment store provides for, and the creation answers the environment as its read does.
    let staging = expect(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "staging", "type": "test"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(
        staging,
        json!({
            "name": "staging", "type": "test", "sortOrder": 4, "enabled": true, "protected": false,
            "requiredApprovals": null
        })
    );
    let read = expect(
        &service,
        get("/api/admin/environments/staging", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read, staging);
    let early = expect(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "early", "type": "test", "sortOrder": 1}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(early["sortOrder"], 1, "a sort order given is kept");
    let late = expect(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "late", "type": "test"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(late["sortOrder"], 5, "{late}");
    let list = expect(&service, get("/api/admin/environments", ADMIN), StatusCode::OK).await;
    let names: Vec<&str> = list["environments"]
        .as_array()
        .map(|environments| {
            environments
                .iter()
                .filter_map(|environment| environment["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["early", "development", "production", "staging", "late"]);
}

#[actix_web::test]
async fn environment_list_counts_projects_tokens_and_flags_on_as_unleash_does() {
    let app = TestApp::new();
    app.store_token(PRODUCTION_CLIENT, "client", "production", &["default"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    // A second project with development only.
    expect(
        &service,
        post(
            "/api/admin/projects",
            ADMIN,
            json!({"id": "shop", "name": "Shop", "environments": ["development"]}),
        ),
        StatusCode::CREATED,
    )
    .await;
    // `kept` is on in both environments and then archived: Unleash still counts it.
    create_feature(&service, "kept").await;
    for environment in ["development", "production"] {
        expect(
            &service,
            post(&format!("{}/on", flag_in("kept", environment)), ADMIN, json!({})),
            StatusCode::OK,
        )
        .await;
    }
    expect(
        &service,
        delete("/api/admin/projects/default/features/kept", ADMIN),
        StatusCode::ACCEPTED,
    )
    .await;
    // `live` is on in development only, and `off` nowhere.
    create_feature(&service, "live").await;
    expect(
        &service,
        post(
            &format!("{}/on", flag_in("live", "development")),
            ADMIN,
            json!({}),
        ),
        StatusCode::OK,
    )
    .await;
    create_feature(&service, "off").await;

    let list = expect(&service, get("/api/admin/environments", ADMIN), StatusCode::OK).await;
    // The test app's tokens: a backend one for development (`SDK`), an admin one for every
    // environment (`*`, counted nowhere) and an admin one for production; plus the client one.
    assert_eq!(
        list,
        json!({
            "version": 1,
            "environments": [
                {
                    "name": "development", "type": "development", "sortOrder": 2, "enabled": true,
                    "protected": false, "requiredApprovals": null,
                    "projectCount": 2, "apiTokenCount": 1, "enabledToggleCount": 2
                },
                {
                    "name": "production", "type": "production", "sortOrder": 3, "enabled": true,
                    "protected": false, "requiredApprovals": null,
                    "projectCount": 1, "apiTokenCount": 2, "enabledToggleCount": 1
                }
            ]
        })
    );
    // The keys come in Unleash's order.
    let keys: Vec<&String> = list["environments"][0]
        .as_object()
        .map(|object| object.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "name",
            "type",
            "sortOrder",
            "enabled",
            "protected",
            "requiredApprovals",
            "projectCount",
            "apiTokenCount",
            "enabledToggleCount"
        ]
    );

    // A project's view counts its own flags the same way, archived ones included.
    let view = expect(
        &service,
        get("/api/admin/environments/project/default", ADMIN),
        StatusCode::OK,
    )
    .await;
    let enabled: Vec<(Value, Value)> = view["environments"]
        .as_array()
        .map(|environments| {
            environments
                .iter()
                .map(|environment| {
                    (
                        environment["name"].clone(),
                        environment["projectEnabledToggleCount"].clone(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        enabled,
        [(json!("development"), json!(2)), (json!("production"), json!(1))],
        "{view}"
    );
}

#[actix_web::test]
async fn adding_an_unknown_environment_to_a_project_is_bad_data() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/environments",
            ADMIN,
            json!({"environment": "staging"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "BadDataError");
    assert_eq!(body["message"], "Environment staging does not exist");
    // Unleash looks for the project first.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/nowhere/environments",
            ADMIN,
            json!({"environment": "staging"}),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    // An environment the project has already is taken.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/environments",
            ADMIN,
            json!({"environment": "development"}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    assert_eq!(
        body["message"],
        "default already has the environment development enabled"
    );
    // Nothing was added.
    let project = expect(
        &service,
        get("/api/admin/projects/default", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        project["environments"],
        json!([{"environment": "development"}, {"environment": "production"}])
    );
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
