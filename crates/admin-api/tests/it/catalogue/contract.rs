//! The catalogue's admin API, pinned: one representative success per operation and at least
//! one error per handler module, status and body both.
//! Only what changes from run to run is redacted: times and random UUIDs, each by a redaction
//! (in `crate::answers`) that first checks the value has the expected form, so a change of format
//! still shows. Sequence ids of a fresh database (segments) are deterministic and stay.

use crate::answers::{created, empty_answer, time, uuid};
use crate::common::{ADMIN, SDK, TestApp, create_feature, expect, get, post, put, seed_feature, send};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

/// A DELETE with the given token, as `common` builds the other methods.
fn delete(path: &str, token: &str) -> test::TestRequest {
    test::TestRequest::delete()
        .uri(path)
        .insert_header(("Authorization", token))
}

/// Creates a segment on `plan` and returns its id.
async fn create_segment<S, B>(service: &S) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let segment = json!({
        "name": "pro-users",
        "description": "Paying customers",
        "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro", "team"]}]
    });
    let segment = expect(
        service,
        post("/api/admin/segments", ADMIN, segment),
        StatusCode::CREATED,
    )
    .await;
    segment["id"].clone()
}

/// The path of feature `name`'s strategies in `environment`.
fn strategies_path(name: &str, environment: &str) -> String {
    format!("/api/admin/projects/default/features/{name}/environments/{environment}/strategies")
}

/// The environment `name` as `GET /api/admin/environments` lists it.
async fn listed_environment<S, B>(service: &S, name: &str) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let list = expect(service, get("/api/admin/environments", ADMIN), StatusCode::OK).await;
    list["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|environment| environment["name"] == name)
        })
        .cloned()
        .unwrap_or_default()
}

/// The environments project `id` uses, as `GET /api/admin/projects/{id}` lists them.
async fn project_environments<S, B>(service: &S, id: &str) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let project = expect(
        service,
        get(&format!("/api/admin/projects/{id}"), ADMIN),
        StatusCode::OK,
    )
    .await;
    project["environments"].clone()
}

// Environments.

#[actix_web::test]
async fn list_environments_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let staging = json!({"name": "staging", "type": "test", "sortOrder": 150, "enabled": false});
    expect(
        &service,
        post("/api/admin/environments", ADMIN, staging),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(&service, get("/api/admin/environments", ADMIN), StatusCode::OK).await;
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn create_environment_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let staging = json!({"name": "staging", "type": "test", "sortOrder": 150});
    let body = expect(
        &service,
        post("/api/admin/environments", ADMIN, staging),
        StatusCode::CREATED,
    )
    .await;
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn environment_on_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let staging = json!({"name": "staging", "type": "test", "enabled": false});
    expect(
        &service,
        post("/api/admin/environments", ADMIN, staging),
        StatusCode::CREATED,
    )
    .await;
    let mut answer = empty_answer(
        &service,
        post("/api/admin/environments/staging/on", ADMIN, json!({})),
    )
    .await;
    answer["listed"] = listed_environment(&service, "staging").await;
    insta::assert_json_snapshot!(answer);
}

#[actix_web::test]
async fn environment_off_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let mut answer = empty_answer(
        &service,
        post("/api/admin/environments/development/off", ADMIN, json!({})),
    )
    .await;
    answer["listed"] = listed_environment(&service, "development").await;
    insta::assert_json_snapshot!(answer);
}

#[actix_web::test]
async fn environment_on_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post("/api/admin/environments/nowhere/on", ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

// Projects.

#[actix_web::test]
async fn list_projects_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let shop = json!({"id": "shop", "name": "Shop", "description": "The web shop"});
    expect(
        &service,
        post("/api/admin/projects", ADMIN, shop),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(&service, get("/api/admin/projects", ADMIN), StatusCode::OK).await;
    insta::assert_json_snapshot!(body, {".projects[].createdAt" => time()});
}

#[actix_web::test]
async fn create_project_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    // No id: it is made from the name.
    let shop = json!({"name": "Web Shop", "description": "The web shop", "environments": ["development"]});
    let body = expect(
        &service,
        post("/api/admin/projects", ADMIN, shop),
        StatusCode::CREATED,
    )
    .await;
    insta::assert_json_snapshot!(body, {".createdAt" => time()});
}

#[actix_web::test]
async fn create_project_error_with_an_empty_name() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post("/api/admin/projects", ADMIN, json!({"id": "shop", "name": "  "})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn get_project_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "checkout").await;
    expect(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "kill-payments", "type": "kill-switch"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(
        &service,
        get("/api/admin/projects/default", ADMIN),
        StatusCode::OK,
    )
    .await;
    insta::assert_json_snapshot!(body, {".createdAt" => time()});
}

#[actix_web::test]
async fn get_project_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/projects/nope", ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn enable_project_environment_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let shop = json!({"id": "shop", "name": "Shop", "environments": ["development"]});
    expect(
        &service,
        post("/api/admin/projects", ADMIN, shop),
        StatusCode::CREATED,
    )
    .await;
    let mut answer = empty_answer(
        &service,
        post(
            "/api/admin/projects/shop/environments",
            ADMIN,
            json!({"environment": "production", "changeRequestsEnabled": false}),
        ),
    )
    .await;
    answer["environments"] = project_environments(&service, "shop").await;
    insta::assert_json_snapshot!(answer);
}

#[actix_web::test]
async fn disable_project_environment_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let mut answer = empty_answer(
        &service,
        delete("/api/admin/projects/default/environments/production", ADMIN),
    )
    .await;
    answer["environments"] = project_environments(&service, "default").await;
    insta::assert_json_snapshot!(answer);
}

// Context fields.

#[actix_web::test]
async fn list_context_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let region = json!({
        "name": "region",
        "description": "Where the user is",
        "stickiness": true,
        "sortOrder": 7,
        "legalValues": [{"value": "eu", "description": "Europe"}, {"value": "us"}]
    });
    expect(
        &service,
        post("/api/admin/context", ADMIN, region),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(&service, get("/api/admin/context", ADMIN), StatusCode::OK).await;
    insta::assert_json_snapshot!(body, {"[].createdAt" => time()});
}

#[actix_web::test]
async fn create_context_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let region = json!({
        "name": "region",
        "description": "Where the user is",
        "stickiness": true,
        "legalValues": [{"value": "eu", "description": "Europe"}, {"value": "us"}]
    });
    let body = expect(
        &service,
        post("/api/admin/context", ADMIN, region),
        StatusCode::CREATED,
    )
    .await;
    insta::assert_json_snapshot!(body, {".createdAt" => "[createdAt]"});
}

#[actix_web::test]
async fn create_context_error_with_a_bad_name() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post("/api/admin/context", ADMIN, json!({"name": "home region"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

// Strategy types.

/// A custom strategy type with a required list parameter and an optional percentage.
fn tenant_strategy_type() -> Value {
    json!({
        "name": "tenant",
        "title": "Tenants",
        "description": "On for the listed tenants",
        "parameters": [
            {"name": "tenants", "type": "list", "description": "Tenant ids", "required": true},
            {"name": "percentage", "type": "percentage"}
        ]
    })
}

#[actix_web::test]
async fn list_strategy_types_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    expect(
        &service,
        post("/api/admin/strategies", ADMIN, tenant_strategy_type()),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(&service, get("/api/admin/strategies", ADMIN), StatusCode::OK).await;
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn create_strategy_type_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = expect(
        &service,
        post("/api/admin/strategies", ADMIN, tenant_strategy_type()),
        StatusCode::CREATED,
    )
    .await;
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn create_strategy_type_error_with_an_untyped_parameter() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/strategies",
            ADMIN,
            json!({"name": "tenant", "parameters": [{"name": "tenants"}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

// Segments.

#[actix_web::test]
async fn list_segments_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_segment(&service).await;
    let body = expect(&service, get("/api/admin/segments", ADMIN), StatusCode::OK).await;
    insta::assert_json_snapshot!(body, {".segments[].createdAt" => time()});
}

#[actix_web::test]
async fn create_segment_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let segment = json!({
        "name": "pro-users",
        "description": "Paying customers",
        "project": "default",
        "constraints": [
            {"contextName": "plan", "operator": "IN", "values": ["pro", "team"]},
            {"contextName": "email", "operator": "STR_ENDS_WITH", "values": ["@example.com"], "caseInsensitive": true, "inverted": true}
        ]
    });
    let answer = created(&service, post("/api/admin/segments", ADMIN, segment)).await;
    insta::assert_json_snapshot!(answer, {".body.createdAt" => time()});
}

#[actix_web::test]
async fn create_segment_error_with_a_bad_operator() {
    let app = TestApp::new();
    let service = app.service().await;
    let segment = json!({
        "name": "odd",
        "constraints": [{"contextName": "plan", "operator": "SOUNDS_LIKE", "values": ["pro"]}]
    });
    let (status, body) = send(&service, post("/api/admin/segments", ADMIN, segment)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

// Dependencies.

const DEPENDENCIES: &str = "/api/admin/projects/default/features/child/dependencies";

/// Feature `child` as the client API shows it: the admin API does not show dependencies.
async fn client_child<S, B>(service: &S) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    expect(service, get("/api/client/features/child", SDK), StatusCode::OK).await
}

#[actix_web::test]
async fn add_dependency_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    let mut answer = empty_answer(
        &service,
        post(
            DEPENDENCIES,
            ADMIN,
            json!({"feature": "parent", "enabled": true, "variants": ["red"]}),
        ),
    )
    .await;
    answer["child"] = client_child(&service).await;
    insta::assert_json_snapshot!(answer);
}

#[actix_web::test]
async fn add_dependency_error_with_an_unknown_child() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    let (status, body) = send(&service, post(DEPENDENCIES, ADMIN, json!({"feature": "parent"}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn remove_dependency_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    expect(
        &service,
        post(DEPENDENCIES, ADMIN, json!({"feature": "parent"})),
        StatusCode::OK,
    )
    .await;
    let mut answer = empty_answer(&service, delete(DEPENDENCIES, ADMIN)).await;
    answer["child"] = client_child(&service).await;
    insta::assert_json_snapshot!(answer);
}

// Features.

#[actix_web::test]
async fn list_features_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "checkout").await;
    expect(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "banner", "type": "experiment", "description": "A new banner", "impressionData": true}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(
        &service,
        get("/api/admin/projects/default/features", ADMIN),
        StatusCode::OK,
    )
    .await;
    insta::assert_json_snapshot!(body, {".features[].createdAt" => time()});
}

#[actix_web::test]
async fn create_feature_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let feature = json!({"name": "banner", "type": "experiment", "description": "A new banner", "impressionData": true});
    let body = expect(
        &service,
        post("/api/admin/projects/default/features", ADMIN, feature),
        StatusCode::CREATED,
    )
    .await;
    insta::assert_json_snapshot!(body, {".createdAt" => time()});
}

#[actix_web::test]
async fn get_feature_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let segment = create_segment(&service).await;
    expect(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            json!({"name": "checkout", "type": "experiment", "description": "The new checkout"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let rollout = json!({
        "name": "flexibleRollout",
        "title": "Half of the listed users",
        "parameters": {"rollout": 50, "stickiness": "userId"},
        "constraints": [
            {"contextName": "userId", "operator": "IN", "values": ["1", "2", "3"]},
            {"contextName": "appVersion", "operator": "SEMVER_GT", "value": "1.2.0"}
        ],
        "segments": [segment],
        "variants": [{"name": "fast", "weight": 1000, "stickiness": "userId", "payload": {"type": "string", "value": "one-click"}}]
    });
    expect(
        &service,
        post(&strategies_path("checkout", "development"), ADMIN, rollout),
        StatusCode::OK,
    )
    .await;
    // `userWithId` is not built in: it is defined first, as in Unleash 8.
    expect(
        &service,
        post(
            "/api/admin/strategies",
            ADMIN,
            json!({"name": "userWithId", "parameters": [{"name": "userIds", "type": "list"}]}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let staff = json!({"name": "userWithId", "parameters": {"userIds": "7,8"}, "disabled": true});
    expect(
        &service,
        post(&strategies_path("checkout", "development"), ADMIN, staff),
        StatusCode::OK,
    )
    .await;
    let variants = json!({
        "variants": [{"name": "red", "weight": 1}, {"name": "blue", "weight": 1, "payload": {"type": "json", "value": "{\"color\":\"blue\"}"}}],
        "environments": ["development"]
    });
    expect(
        &service,
        put(
            "/api/admin/projects/default/features/checkout/variants-batch",
            ADMIN,
            variants,
        ),
        StatusCode::OK,
    )
    .await;
    expect(
        &service,
        post(
            "/api/admin/projects/default/features/checkout/environments/development/on",
            ADMIN,
            json!({}),
        ),
        StatusCode::OK,
    )
    .await;
    let body = expect(
        &service,
        get("/api/admin/projects/default/features/checkout", ADMIN),
        StatusCode::OK,
    )
    .await;
    insta::assert_json_snapshot!(body, {
        ".createdAt" => time(),
        ".lifecycle.enteredStageAt" => time(),
        ".environments[].strategies[].id" => uuid(),
    });
}

#[actix_web::test]
async fn get_feature_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        get("/api/admin/projects/default/features/missing", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

/// Feature `name`'s state in `environment`, as the admin API shows it.
async fn feature_environment<S, B>(service: &S, name: &str, environment: &str) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let feature = expect(
        service,
        get(&format!("/api/admin/projects/default/features/{name}"), ADMIN),
        StatusCode::OK,
    )
    .await;
    feature["environments"]
        .as_array()
        .and_then(|environments| environments.iter().find(|state| state["name"] == environment))
        .cloned()
        .unwrap_or_default()
}

#[actix_web::test]
async fn feature_on_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    expect(
        &service,
        post(
            &strategies_path("banner", "production"),
            ADMIN,
            json!({"name": "default"}),
        ),
        StatusCode::OK,
    )
    .await;
    let mut answer = empty_answer(
        &service,
        post(
            "/api/admin/projects/default/features/banner/environments/production/on",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    answer["production"] = feature_environment(&service, "banner", "production").await;
    insta::assert_json_snapshot!(answer, {".production.strategies[].id" => uuid()});
}

#[actix_web::test]
async fn feature_off_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "banner").await;
    let mut answer = empty_answer(
        &service,
        post(
            "/api/admin/projects/default/features/banner/environments/production/off",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    answer["production"] = feature_environment(&service, "banner", "production").await;
    insta::assert_json_snapshot!(
        answer,
        {".production.strategies[].id" => uuid()}
    );
}

#[actix_web::test]
async fn feature_on_error_with_an_unknown_environment() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/banner/environments/nowhere/on",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

// Strategies.

/// A gradual rollout to pro users, with a title and a sort order.
fn pro_rollout() -> Value {
    json!({
        "name": "flexibleRollout",
        "title": "Pro users",
        "sortOrder": 5,
        "parameters": {"rollout": "25"},
        "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]
    })
}

#[actix_web::test]
async fn add_strategy_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    let body = expect(
        &service,
        post(&strategies_path("banner", "development"), ADMIN, pro_rollout()),
        StatusCode::OK,
    )
    .await;
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn add_strategy_error_with_a_bad_constraint() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    let strategy = json!({
        "name": "default",
        "constraints": [{"contextName": "appVersion", "operator": "SEMVER_EQ", "value": "one"}]
    });
    let (status, body) = send(
        &service,
        post(&strategies_path("banner", "development"), ADMIN, strategy),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn update_strategy_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    let path = strategies_path("banner", "development");
    let strategy = expect(&service, post(&path, ADMIN, pro_rollout()), StatusCode::OK).await;
    let id = strategy["id"].as_str().unwrap_or_default();
    let changed = json!({
        "name": "flexibleRollout",
        "title": "Pro and team users",
        "parameters": {"rollout": 75, "stickiness": "sessionId", "groupId": "banner-test"},
        "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro", "team"]}]
    });
    let body = expect(
        &service,
        put(&format!("{path}/{id}"), ADMIN, changed),
        StatusCode::OK,
    )
    .await;
    assert_eq!(body["id"], json!(id));
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn a_replaced_strategy_keeps_disabled_and_answers_every_field_and_its_delete_is_typed_json() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    let path = strategies_path("banner", "development");
    let strategy = expect(&service, post(&path, ADMIN, pro_rollout()), StatusCode::OK).await;
    let id = strategy["id"].as_str().unwrap_or_default().to_owned();
    let mut changed = pro_rollout();
    changed["disabled"] = json!(true);
    let body = expect(
        &service,
        put(&format!("{path}/{id}"), ADMIN, changed),
        StatusCode::OK,
    )
    .await;
    assert_eq!(body["disabled"], true, "{body}");
    assert_eq!(body["segments"], json!([]), "{body}");
    assert_eq!(body["variants"], json!([]), "{body}");
    let read = expect(&service, get(&format!("{path}/{id}"), ADMIN), StatusCode::OK).await;
    assert_eq!(read["disabled"], true, "{read}");
    let response = test::call_service(&service, delete(&format!("{path}/{id}"), ADMIN).to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response
            .headers()
            .get("content-type")
            .and_then(|value| value.to_str().ok()),
        Some("application/json; charset=utf-8")
    );
    assert!(test::read_body(response).await.is_empty());
}

#[actix_web::test]
async fn update_strategy_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    create_feature(&service, "banner").await;
    let path = format!(
        "{}/00000000-0000-4000-8000-000000000000",
        strategies_path("banner", "development")
    );
    let (status, body) = send(&service, put(&path, ADMIN, pro_rollout())).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn delete_strategy_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "banner").await;
    let path = strategies_path("banner", "development");
    let strategy = expect(&service, post(&path, ADMIN, pro_rollout()), StatusCode::OK).await;
    let id = strategy["id"].as_str().unwrap_or_default();
    let mut answer = empty_answer(&service, delete(&format!("{path}/{id}"), ADMIN)).await;
    answer["development"] = feature_environment(&service, "banner", "development").await;
    insta::assert_json_snapshot!(
        answer,
        {".development.strategies[].id" => uuid()}
    );
}

/// Request bodies follow Unleash 8.2's schemas: a field Unleash's schema does not list is ignored
/// where Unleash ignores it and refused where Unleash refuses it.
#[actix_web::test]
async fn request_bodies_take_what_unleash_takes() {
    let app = TestApp::new();
    let service = app.service().await;
    // `username`, the older name of `tokenName`, names a token when `tokenName` is absent, and
    // `tokenName` wins when both are given.
    for (body, name) in [
        (
            json!({"username": "legacy-script", "type": "client", "environment": "development"}),
            "legacy-script",
        ),
        (
            json!({"tokenName": "new-name", "username": "old-name", "type": "backend"}),
            "new-name",
        ),
    ] {
        let token = &created(&service, post("/api/admin/api-tokens", ADMIN, body)).await["body"];
        assert_eq!(token["tokenName"], json!(name), "{token}");
    }
    let body = expect(
        &service,
        post("/api/admin/api-tokens", ADMIN, json!({"type": "client"})),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(body["details"][0]["path"], json!("/tokenName"), "{body}");

    // Fields Unleash's open schemas accept beyond ours are ignored.
    for (path, body) in [
        (
            "/api/admin/context",
            json!({"name": "tenant", "project": "default"}),
        ),
        (
            "/api/admin/strategies",
            json!({"name": "custom", "parameters": [], "editable": true, "deprecated": false}),
        ),
        (
            "/api/admin/segments",
            json!({"name": "s", "constraints": [], "extra": 1}),
        ),
        (
            "/api/admin/projects/default/features",
            json!({"name": "tagged", "tags": [{"type": "simple", "value": "a"}]}),
        ),
    ] {
        let answer = created(&service, post(path, ADMIN, body)).await;
        assert_eq!(answer["status"], json!(201), "{path}: {answer}");
    }
    // Unleash's `loginSchema` refuses other fields.
    let body = expect(
        &service,
        post(
            "/auth/simple/login",
            ADMIN,
            json!({"username": "a", "password": "b", "remember": true}),
        ),
        StatusCode::BAD_REQUEST,
    )
    .await;
    assert_eq!(body["name"], json!("ValidationError"), "{body}");
}
