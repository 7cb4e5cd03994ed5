//! An admin token limited to one environment (`*:production.x`) reads what is not specific to an
//! environment, reads and writes environment-specific state only in its own environment, and may
//! make no write whose effect reaches beyond it. Checked over every registered operation.

use crate::common::{ADMIN, PRODUCTION_ADMIN, TestApp, assert_error, get, post, send};
use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

/// What a production-only token may do with an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Needs no credentials.
    Public,
    /// Reads nothing specific to an environment: allowed.
    Read,
    /// Reads or writes the `development` environment's state: 403 naming `development`.
    Development,
    /// Administration, or a write that changes every environment: 403 naming `production`.
    Everywhere,
    /// The client API, for client and backend tokens only: 403, the token's type is wrong.
    SdkOnly,
}

/// Every documented operation, with the body that passes validation, so that only the
/// permission can refuse it.
fn scope_of(method: &str, path: &str) -> Option<(Scope, Value)> {
    use Scope::{Development, Everywhere, Public, Read, SdkOnly};
    let strategy = json!({"name": "default"});
    Some(match (method, path) {
        ("get", "/health" | "/ready" | "/internal-backstage/prometheus" | "/invite/{token}/validate") => {
            (Public, Value::Null)
        }
        ("post", "/edge/validate") => (Public, json!({"tokens": []})),
        ("post", "/auth/simple/login") => (Public, json!({"username": "x", "password": "y"})),
        ("post", "/logout") => (Public, Value::Null),
        ("post", "/invite/{token}/signup") => (Public, Value::Null),
        // The client API's token rules belong to the SDK side of the API.
        ("get", "/api/client/features" | "/api/client/features/{featureName}") => (SdkOnly, Value::Null),
        (
            "post",
            "/api/client/register"
            | "/api/client/metrics"
            | "/api/client/metrics/bulk"
            | "/api/client/metrics/edge"
            | "/api/frontend/client/register"
            | "/api/frontend/client/metrics"
            | "/api/frontend",
        ) => (SdkOnly, Value::Null),
        ("get", "/api/frontend") => (SdkOnly, Value::Null),
        ("post", "/ofrep/v1/evaluate/flags" | "/ofrep/v1/evaluate/flags/{key}") => (SdkOnly, Value::Null),
        ("get", "/api/admin/ui-config") => (Read, Value::Null),
        ("post", "/api/admin/ui-config/cors") => (Everywhere, json!({"frontendApiOrigins": ["*"]})),
        // What SDKs reported is read by every administrator, as Unleash shows it.
        (
            "get",
            "/api/admin/metrics/applications"
            | "/api/admin/metrics/applications/{appName}"
            | "/api/admin/metrics/applications/{appName}/overview"
            | "/api/admin/metrics/instances/{appName}/environment/{environment}"
            | "/api/admin/client-metrics/features/{name}"
            | "/api/admin/client-metrics/features/{name}/raw"
            | "/api/admin/metrics/unknown-flags",
        ) => (Read, Value::Null),
        ("post", "/api/admin/playground") => (
            Development,
            json!({"environment": "development", "context": {"appName": "a"}}),
        ),
        ("post", "/api/admin/playground/advanced") => (
            Development,
            json!({"environments": ["production", "development"], "context": {"appName": "a"}}),
        ),
        // Reading what administrators manage is not specific to an environment.
        (
            "get",
            "/api/admin/invite-link/tokens"
            | "/api/admin/invite-link/tokens/{token}"
            | "/api/admin/api-tokens"
            | "/api/admin/user-admin",
        ) => (Read, Value::Null),
        ("post", "/api/admin/invite-link/tokens") => (
            Everywhere,
            json!({"name": "n", "expiresAt": "2030-01-01T00:00:00Z"}),
        ),
        ("put", "/api/admin/invite-link/tokens/{token}") => (Everywhere, json!({"enabled": false})),
        (
            "get",
            "/api/admin/environments"
            | "/api/admin/projects"
            | "/api/admin/projects/{projectId}"
            | "/api/admin/context"
            | "/api/admin/strategies"
            | "/api/admin/segments"
            | "/api/admin/projects/{projectId}/features"
            | "/api/admin/projects/{projectId}/features/{featureName}",
        ) => (Read, Value::Null),
        ("post", "/api/admin/environments") => (Everywhere, json!({"name": "qa", "type": "test"})),
        ("post", "/api/admin/environments/{name}/on" | "/api/admin/environments/{name}/off") => {
            (Everywhere, Value::Null)
        }
        ("post", "/api/admin/projects") => (Everywhere, json!({"name": "other"})),
        ("post", "/api/admin/projects/{projectId}/environments") => {
            (Everywhere, json!({"environment": "production"}))
        }
        ("delete", "/api/admin/projects/{projectId}/environments/{environment}") => (Everywhere, Value::Null),
        ("post", "/api/admin/context") => (Everywhere, json!({"name": "tenant"})),
        ("post", "/api/admin/strategies") => (Everywhere, json!({"name": "custom"})),
        ("post", "/api/admin/segments") => (Everywhere, json!({"name": "s", "constraints": []})),
        ("post", "/api/admin/api-tokens") => (
            Everywhere,
            json!({"tokenName": "t", "type": "client", "environment": "production"}),
        ),
        ("delete", "/api/admin/api-tokens/{token}") => (Everywhere, Value::Null),
        ("post", "/api/admin/user-admin") => (Everywhere, json!({"email": "new@example.com", "rootRole": 3})),
        ("put", "/api/admin/user-admin/{id}") => (Everywhere, json!({"rootRole": 3})),
        ("delete", "/api/admin/user-admin/{id}") => (Everywhere, Value::Null),
        ("post", "/api/admin/projects/{projectId}/features/{featureName}/dependencies") => {
            (Everywhere, json!({"feature": "parent"}))
        }
        ("delete", "/api/admin/projects/{projectId}/features/{featureName}/dependencies") => {
            (Everywhere, Value::Null)
        }
        ("post", "/api/admin/projects/{projectId}/features") => (Everywhere, json!({"name": "new-flag"})),
        ("put", "/api/admin/projects/{projectId}/features/{featureName}/variants-batch") => (
            Development,
            json!({"variants": [], "environments": ["production", "development"]}),
        ),
        (
            "get",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
        ) => (Development, Value::Null),
        (
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on"
            | "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
        ) => (Development, Value::Null),
        (
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
        ) => (Development, strategy),
        (
            "put",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
        ) => (Development, strategy),
        (
            "delete",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
        ) => (Development, Value::Null),
        _ => return None,
    })
}

/// The path with its parameters filled in: the `development` environment, feature `f` of project
/// `default`, user 1.
fn concrete(path: &str, strategy_id: &str) -> String {
    path.replace("{projectId}", "default")
        .replace("{featureName}", "f")
        .replace("{environment}", "development")
        .replace("{name}", "development")
        .replace("{strategyId}", strategy_id)
        .replace("{token}", "some-token")
        .replace("{id}", "1")
}

#[actix_web::test]
async fn an_environment_token_stays_in_its_environment_on_every_route() {
    let app = TestApp::new();
    let service = app.service().await;
    crate::common::seed_feature(&service, "f").await;
    crate::common::seed_feature(&service, "parent").await;
    let (status, feature) = send(&service, get("/api/admin/projects/default/features/f", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{feature}");
    let strategy_id = feature["environments"]
        .as_array()
        .and_then(|environments| environments.iter().find(|env| env["name"] == "development"))
        .and_then(|env| env["strategies"][0]["id"].as_str())
        .unwrap_or_default()
        .to_owned();

    let mut unclassified = Vec::new();
    for operation in admin_api::routes::operations() {
        let method_name = operation.method.as_str().to_lowercase();
        let Some((scope, body)) = scope_of(&method_name, operation.path) else {
            unclassified.push(format!("{method_name} {}", operation.path));
            continue;
        };
        if scope == Scope::Public {
            continue;
        }
        let mut request = TestRequest::default()
            .method(operation.method.clone())
            .uri(&concrete(operation.path, &strategy_id))
            .insert_header(("Authorization", PRODUCTION_ADMIN));
        if !body.is_null() {
            request = request.set_json(body);
        }
        let (status, answer) = send(&service, request).await;
        let route = format!("{method_name} {}", operation.path);
        match scope {
            Scope::Read => assert_ne!(status, StatusCode::FORBIDDEN, "{route}: {answer}"),
            Scope::SdkOnly => {
                assert_error(status, &answer, 403, "NoAccessError");
                assert!(
                    answer["message"]
                        .as_str()
                        .is_some_and(|message| message.contains("expected a different token type")),
                    "{route}: {answer}"
                );
            }
            Scope::Development | Scope::Everywhere => {
                assert_error(status, &answer, 403, "NoAccessError");
                let message = answer["message"].as_str().unwrap_or_default();
                let environment = if scope == Scope::Development {
                    "\"development\""
                } else {
                    "\"production\""
                };
                assert!(
                    message.contains(environment) && message.contains("permission"),
                    "{route}: {message}"
                );
            }
            Scope::Public => {}
        }
    }
    assert!(
        unclassified.is_empty(),
        "classify these operations for environment-scoped tokens: {unclassified:?}"
    );
}

#[actix_web::test]
async fn an_environment_token_works_in_its_own_environment() {
    let app = TestApp::new();
    let service = app.service().await;
    crate::common::seed_feature(&service, "f").await;
    let base = "/api/admin/projects/default/features/f/environments/production";
    let (status, body) = send(
        &service,
        post(
            &format!("{base}/strategies"),
            PRODUCTION_ADMIN,
            json!({"name": "default"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        post(&format!("{base}/off"), PRODUCTION_ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/playground",
            PRODUCTION_ADMIN,
            json!({"environment": "production", "context": {"appName": "a"}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Reading the flag shows only the environment the token may see.
    let (status, feature) = send(
        &service,
        get("/api/admin/projects/default/features/f", PRODUCTION_ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{feature}");
    let names: Vec<&Value> = feature["environments"]
        .as_array()
        .map(|environments| environments.iter().map(|env| &env["name"]).collect())
        .unwrap_or_default();
    assert_eq!(names, [&json!("production")]);
}

#[actix_web::test]
async fn issue_7_an_environment_token_cannot_add_a_dependency() {
    // The dependency would change development's answers too.
    let app = TestApp::new();
    let service = app.service().await;
    crate::common::seed_feature(&service, "child").await;
    crate::common::seed_feature(&service, "parent").await;
    let path = "/api/admin/projects/default/features/child/dependencies";
    let (status, body) = send(
        &service,
        post(path, PRODUCTION_ADMIN, json!({"feature": "parent"})),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
    let played =
        crate::common::played_feature(&service, "development", json!({"appName": "a"}), "child").await;
    assert_eq!(played["hasUnsatisfiedDependency"], json!(false));
    assert_eq!(played["isEnabled"], json!(true));
}
