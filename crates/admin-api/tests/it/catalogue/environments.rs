//! Environments as Unleash 8.2 answers them: created, switched, read, sort orders, the
//! environment list's counts, and the environments of projects, an unknown one refused.

use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, TestApp, assert_error, create_feature, delete, expect, get, post, put, seed_feature, send,
};

/// A production client token, besides the test app's own.
const PRODUCTION_CLIENT: &str = "*:production.production-client-secret";

/// The path of flag `name` in `environment` of the `default` project.
fn flag_in(name: &str, environment: &str) -> String {
    format!("/api/admin/projects/default/features/{name}/environments/{environment}")
}

#[actix_web::test]
async fn environments_and_projects_can_be_set_up() {
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
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "staging", "type": "test"}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, _) = send(
        &service,
        post("/api/admin/environments/staging/off", ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, listed) = send(&service, get("/api/admin/environments", ADMIN)).await;
    assert_eq!(listed["environments"].as_array().map(Vec::len), Some(3));

    let (status, project) = send(
        &service,
        post(
            "/api/admin/projects",
            ADMIN,
            json!({"name": "Mobile Apps", "environments": ["development"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    assert_eq!(project["id"], "mobile-apps");
    assert_eq!(project["environments"], json!(["development"]));
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/mobile-apps/environments",
            ADMIN,
            json!({"environment": "staging"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/mobile-apps/environments",
            ADMIN,
            json!({"environment": "staging"}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/mobile-apps/environments",
            ADMIN,
            json!({"environment": "nope"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "BadDataError");
    let delete = test::TestRequest::delete()
        .uri("/api/admin/projects/mobile-apps/environments/staging")
        .insert_header(("Authorization", ADMIN));
    assert_eq!(send(&service, delete).await.0, StatusCode::OK);
    let (status, fetched) = send(&service, get("/api/admin/projects/mobile-apps", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fetched["environments"], json!([{"environment": "development"}]));
    let (status, body) = send(&service, get("/api/admin/projects/none", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
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
