//! What a token may call. Each API takes its own token types: the admin API no SDK token, the
//! client API client and backend tokens, the frontend API frontend tokens; a missing, unknown,
//! deleted or expired token is refused, and Edge learns which tokens are valid.
//! An admin token limited to one environment (`*:production.x`) reads what is not specific to an
//! environment, reads and writes environment-specific state only in its own environment, and may
//! make no write whose effect reaches beyond it. Checked over every registered operation, by the
//! access each one declares.

use actix_web::http::StatusCode;
use actix_web::test::{self, TestRequest};
use flag_admin::identity::auth::Access;
use flag_store::models::NewApiToken;
use flag_store::queries;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, PRODUCTION_ADMIN, SDK, TestApp, assert_error, get, post, put, seed_feature, send,
};
use crate::delivery::client_cache::fetch;
use crate::delivery::frontend::app_with_flags;

// Each API takes its own token types.

#[actix_web::test]
async fn missing_or_unknown_credentials_are_401() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = json!({"environment": "development", "context": {"appName": "a"}});
    let unauthenticated = test::TestRequest::post()
        .uri("/api/admin/playground")
        .set_json(&body);
    let (status, response) = send(&service, unauthenticated).await;
    assert_error(status, &response, 401, "AuthenticationRequired");
    let (status, response) = send(&service, post("/api/admin/playground", "*:*.wrong", body.clone())).await;
    assert_error(status, &response, 401, "AuthenticationRequired");
    let batch = json!({"variants": [], "environments": ["development"]});
    let unauthenticated = test::TestRequest::put()
        .uri("/api/admin/projects/default/features/f/variants-batch")
        .set_json(&batch);
    let (status, response) = send(&service, unauthenticated).await;
    assert_error(status, &response, 401, "AuthenticationRequired");
    // A Bearer prefix is accepted.
    let bearer = post("/api/admin/playground", &format!("Bearer {ADMIN}"), body);
    assert_eq!(send(&service, bearer).await.0, StatusCode::OK);
}

#[actix_web::test]
async fn credentials_are_judged_before_the_path_and_body() {
    // Credentials are resolved asynchronously, a body's type and a path's numbers at once: the
    // answer must not depend on which finishes first.
    let app = TestApp::new();
    let service = app.service().await;
    for _ in 0..20 {
        let no_body = test::TestRequest::post()
            .uri("/api/admin/projects/default/features")
            .insert_header(("Authorization", "*:*.wrong"));
        let (status, response) = send(&service, no_body).await;
        assert_error(status, &response, 401, "AuthenticationRequired");
        let bad_number = test::TestRequest::put()
            .uri("/api/admin/roles/not-a-number")
            .insert_header(("Authorization", "*:*.wrong"))
            .set_json(json!({"name": "r"}));
        let (status, response) = send(&service, bad_number).await;
        assert_error(status, &response, 401, "AuthenticationRequired");
        let (status, response) = send(
            &service,
            test::TestRequest::post()
                .uri("/api/frontend")
                .insert_header(("Authorization", PRODUCTION_ADMIN)),
        )
        .await;
        assert_error(status, &response, 403, "NoAccessError");
    }
}

#[actix_web::test]
async fn client_tokens_are_refused_on_the_admin_api() -> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let client = "default:development.client-secret";
    queries::api_tokens::create(
        &mut *app.store.connection()?,
        &NewApiToken {
            token_name: "sdk".into(),
            secret_hash: flag_admin::runtime::secrets::verifier(client),
            token_type: flag_store::models::TokenType::Client,
            environment: "development".into(),
            projects: flag_store::models::TokenProjects::from(vec!["default".to_owned()]),
            expires_at: None,
            created_at: chrono::Utc::now().naive_utc(),
        },
        &flag_store::models::Actor::system(),
    )?;
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/playground",
            client,
            json!({"environment": "development", "context": {"appName": "a"}}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
    Ok(())
}

#[actix_web::test]
async fn the_client_api_needs_a_token() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, test::TestRequest::get().uri("/api/client/features")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    let (status, body) = send(&service, get("/api/client/features", "*:*.unknown")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
}

#[actix_web::test]
async fn the_client_api_takes_client_and_backend_tokens_only() -> Result<(), flag_store::StoreError> {
    let app = TestApp::new();
    app.store_token("*:development.client-one", "client", "development", &["*"])?;
    app.store_token("*:development.frontend-one", "frontend", "development", &["*"])?;
    let service = app.service().await;
    for (token, status) in [
        (SDK, 200),
        ("*:development.client-one", 200),
        (ADMIN, 403),
        ("*:development.frontend-one", 403),
    ] {
        for path in ["/api/client/features", "/api/client/features/missing"] {
            let (actual, body) = send(&service, get(path, token)).await;
            if status == 403 {
                assert_error(actual, &body, 403, "NoAccessError");
                assert!(
                    body["message"]
                        .as_str()
                        .is_some_and(|message| message.contains("expected a different token type")),
                    "{body}"
                );
            } else {
                assert_ne!(actual, StatusCode::FORBIDDEN, "{token} on {path}: {body}");
                assert_ne!(actual, StatusCode::UNAUTHORIZED, "{token} on {path}: {body}");
            }
        }
    }
    Ok(())
}

#[actix_web::test]
async fn only_frontend_tokens_are_taken() {
    let app = app_with_flags().await;
    let service = app.service().await;
    let (status, body) = send(&service, test::TestRequest::get().uri("/api/frontend")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    let (status, body) = send(&service, get("/api/frontend", "*:development.unknown")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    for token in [SDK, ADMIN] {
        let (status, body) = send(&service, get("/api/frontend", token)).await;
        assert_error(status, &body, 403, "NoAccessError");
    }
}

// A token is checked on every request, and Edge asks which are valid.

#[actix_web::test]
async fn api_tokens_are_created_shown_once_and_revoked() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let (status, created) = send(
        &service,
        post("/api/admin/api-tokens", ADMIN, json!({"tokenName": "ios", "type": "CLIENT", "environment": "production", "projects": ["default"]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    assert!(secret.starts_with("default:production."), "{secret}");

    let (status, features) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(features["features"][0]["name"], "f");
    let (status, body) = send(&service, get("/api/admin/projects", &secret)).await;
    assert_error(status, &body, 403, "NoAccessError");

    let (_, listed) = send(&service, get("/api/admin/api-tokens", ADMIN)).await;
    assert!(
        !listed.to_string().contains(&secret),
        "the list never shows secrets"
    );
    assert!(
        listed["tokens"]
            .as_array()
            .is_some_and(|tokens| tokens.iter().any(|t| t["tokenName"] == "ios"))
    );

    for body in [
        json!({"tokenName": "x", "type": "admin"}),
        json!({"tokenName": "", "type": "client"}),
        json!({"tokenName": "x", "type": "client", "environment": "nowhere"}),
    ] {
        let (status, response) = send(&service, post("/api/admin/api-tokens", ADMIN, body)).await;
        assert_error(status, &response, 400, "ValidationError");
    }

    let revoke = test::TestRequest::delete()
        .uri(&format!("/api/admin/api-tokens/{secret}"))
        .insert_header(("Authorization", ADMIN));
    assert_eq!(send(&service, revoke).await.0, StatusCode::OK);
    let (status, body) = send(&service, get("/api/client/features", &secret)).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
}

#[actix_web::test]
async fn tokens_are_checked_in_memory_and_follow_every_change() {
    let app = TestApp::new();
    let service = app.service().await;
    // A token made through the API works on the next request.
    let (status, created) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "sdk", "type": "client", "environment": "development"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    let (status, _, _) = fetch(&service, &secret, None).await;
    assert_eq!(status, StatusCode::OK);

    // Deleted, it is refused on the next request.
    let (status, body) = send(
        &service,
        test::TestRequest::delete()
            .uri(&format!("/api/admin/api-tokens/{secret}"))
            .insert_header(("Authorization", ADMIN)),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(&service, get("/api/client/features", &secret)).await;
    assert_error(status, &body, 401, "AuthenticationRequired");

    // A token past its expiry is refused though the map holding it is current.
    let (status, created) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "short", "type": "client", "environment": "development",
                   "expiresAt": (chrono::Utc::now() + chrono::Duration::seconds(1)).to_rfc3339()}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    let (status, _, _) = fetch(&service, &secret, None).await;
    assert_eq!(status, StatusCode::OK);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (status, body) = send(&service, get("/api/client/features", &secret)).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
}

const SHOP_FRONTEND: &str = "shop:production.shop-frontend-secret";

#[actix_web::test]
async fn edge_learns_which_tokens_are_valid_and_what_they_grant() {
    let app = TestApp::new();
    app.store_token(SHOP_FRONTEND, "frontend", "production", &["shop"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    // No credential is needed, as in Unleash: Edge asks before it trusts any token.
    let request = test::TestRequest::post()
        .uri("/edge/validate")
        .set_json(json!({"tokens": [SDK, "*:development.not-a-token", SHOP_FRONTEND, "garbage"]}));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({"tokens": [
            {"token": SDK, "type": "backend", "environment": "development", "projects": ["*"]},
            {"token": SHOP_FRONTEND, "type": "frontend", "environment": "production", "projects": ["shop"]}
        ]})
    );
    let request = test::TestRequest::post()
        .uri("/edge/validate")
        .set_json(json!({"tokens": "x"}));
    let (status, body) = send(&service, request).await;
    assert_error(status, &body, 400, "ValidationError");
}

// An admin token limited to one environment.

/// What a production-only token meets at an operation, by the access it declares.
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
    /// The SDK protocols, for client, backend or frontend tokens only: 403, the token's type
    /// is wrong.
    SdkOnly,
    /// People only: 403, an API token is not a person.
    PeopleOnly,
}

/// The outcome the declared access implies; the test checks the server keeps to it.
fn scope_of(access: Access) -> Scope {
    match access {
        Access::Public => Scope::Public,
        Access::Read | Access::AdminRead => Scope::Read,
        Access::ReadIn(_) | Access::WriteIn(_) => Scope::Development,
        Access::Write(_) | Access::Root(_) | Access::Admin => Scope::Everywhere,
        Access::Client | Access::Frontend => Scope::SdkOnly,
        Access::Person => Scope::PeopleOnly,
    }
}

/// A body that passes validation for each operation that takes one, so that only the
/// permission can refuse it; `None` for an operation this table does not know, which fails the
/// test until one is given.
pub(crate) fn body_of(method: &str, path: &str) -> Option<Value> {
    let strategy = json!({"name": "default"});
    Some(match (method, path) {
        ("get" | "delete", _) => Value::Null,
        ("post", "/edge/validate") => json!({"tokens": []}),
        ("post", "/auth/simple/login") => json!({"username": "x", "password": "y"}),
        ("post", "/logout" | "/invite/{token}/signup") => Value::Null,
        (
            "post",
            "/api/client/register"
            | "/api/client/metrics"
            | "/api/client/metrics/bulk"
            | "/api/client/metrics/edge"
            | "/api/frontend/client/register"
            | "/api/frontend/client/metrics"
            | "/api/frontend"
            | "/ofrep/v1/evaluate/flags"
            | "/ofrep/v1/evaluate/flags/{key}",
        ) => Value::Null,
        ("post", "/api/admin/ui-config/cors") => json!({"frontendApiOrigins": ["*"]}),
        ("post", "/api/admin/auth/oidc/settings") => json!({"enabled": false}),
        ("post", "/api/admin/auth/simple/settings") => json!({"disabled": false}),
        ("post", "/api/admin/playground") => {
            json!({"environment": "development", "context": {"appName": "a"}})
        }
        ("post", "/api/admin/playground/advanced") => {
            json!({"environments": ["production", "development"], "context": {"appName": "a"}})
        }
        ("post", "/api/admin/invite-link/tokens") => {
            json!({"name": "n", "expiresAt": crate::common::next_year()})
        }
        ("put", "/api/admin/invite-link/tokens/{token}") => json!({"enabled": false}),
        ("post", "/api/admin/environments") => json!({"name": "qa", "type": "test"}),
        ("post", "/api/admin/environments/{name}/on" | "/api/admin/environments/{name}/off") => Value::Null,
        ("post", "/api/admin/projects") => json!({"name": "other"}),
        ("put", "/api/admin/projects/{projectId}") => json!({"name": "Default"}),
        ("put", "/api/admin/projects/{projectId}/settings") => json!({"mode": "open"}),
        ("put", "/api/admin/projects/{projectId}/environments/{environment}/change-requests/config") => {
            json!({"changeRequestsEnabled": false})
        }
        ("post", "/api/admin/projects/{projectId}/environments/{environment}/change-requests")
        | ("put", "/api/admin/projects/{projectId}/change-requests/{changeRequestId}/changes/{changeId}") => {
            json!({"feature": "f", "action": "updateEnabled", "payload": {"enabled": false}})
        }
        ("put", "/api/admin/projects/{projectId}/change-requests/{id}/state") => {
            json!({"state": "Cancelled"})
        }
        ("put", "/api/admin/projects/{projectId}/change-requests/{id}/title") => json!({"title": "t"}),
        ("post", "/api/admin/projects/{projectId}/change-requests/{id}/comments") => json!({"text": "c"}),
        ("put", "/api/admin/environments/update/{name}") => json!({"type": "development"}),
        ("post", "/api/admin/projects/{projectId}/environments") => json!({"environment": "production"}),
        ("post", "/api/admin/context") => json!({"name": "tenant"}),
        ("post", "/api/admin/strategies") => json!({"name": "custom"}),
        ("post", "/api/admin/addons") | ("put", "/api/admin/addons/{id}") => {
            json!({"provider": "webhook", "enabled": true, "parameters": {"url": "https://93.184.216.34/hook"}, "events": []})
        }
        ("post", "/api/admin/segments") => json!({"name": "s", "constraints": []}),
        ("post", "/api/admin/api-tokens") => {
            json!({"tokenName": "t", "type": "client", "environment": "production"})
        }
        ("post", "/api/admin/user-admin") => json!({"email": "new@example.com", "rootRole": 3}),
        ("post", "/api/admin/roles") | ("put", "/api/admin/roles/{roleId}") => {
            json!({"name": "role", "permissions": [{"name": "CREATE_FEATURE"}]})
        }
        ("post", "/api/admin/groups") | ("put", "/api/admin/groups/{groupId}") => json!({"name": "group"}),
        ("put", "/api/admin/projects/{projectId}/access") => json!({"roles": []}),
        ("post", "/api/admin/projects/{projectId}/role/{roleId}/access") => json!({"users": []}),
        ("post", "/api/admin/service-account") => json!({"username": "bot", "rootRole": 3}),
        ("put", "/api/admin/service-account/{id}") => json!({"name": "bot"}),
        ("post", "/api/admin/service-account/{id}/token") => {
            json!({"description": "ci", "expiresAt": crate::common::next_year()})
        }
        ("put", "/api/admin/user-admin/{id}") => json!({"rootRole": 3}),
        ("post", "/api/admin/user-admin/{id}/change-password") => json!({"password": "N3w-Passw0rd!x"}),
        ("post", "/api/admin/projects/{projectId}/features/{featureName}/dependencies") => {
            json!({"feature": "parent"})
        }
        ("post", "/api/admin/projects/{projectId}/features") => json!({"name": "new-flag"}),
        ("put", "/api/admin/projects/{projectId}/features/{featureName}") => json!({}),
        ("put", "/api/admin/environments/sort-order") => json!({"development": 1}),
        ("post", "/api/admin/splash/{id}") => Value::Null,
        ("post", "/api/admin/projects/{projectId}/features/{featureName}/clone") => json!({"name": "copy"}),
        ("post", "/api/admin/features-batch/export") => json!({"environment": "development"}),
        ("post", "/api/admin/features-batch/validate" | "/api/admin/features-batch/import") => {
            json!({"project": "default", "environment": "development",
                   "data": {"features": [], "featureStrategies": [], "tagTypes": []}})
        }
        ("post", "/api/admin/constraints/validate") => {
            json!({"contextName": "userId", "operator": "IN", "values": ["1"]})
        }
        ("post", "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/complete") => {
            json!({"status": "kept"})
        }
        ("post", "/api/admin/projects/{projectId}/features/{featureName}/lifecycle/uncomplete") => {
            Value::Null
        }
        ("put", "/api/admin/context/{contextField}") => json!({}),
        ("post", "/api/admin/context/validate" | "/api/admin/segments/validate") => json!({"name": "fresh"}),
        ("post", "/api/admin/context/{contextField}/legal-values") => json!({"value": "v"}),
        ("put", "/api/admin/strategies/{name}") => json!({"parameters": []}),
        (
            "post",
            "/api/admin/strategies/{strategyName}/deprecate"
            | "/api/admin/strategies/{strategyName}/reactivate",
        ) => Value::Null,
        ("put", "/api/admin/segments/{id}") => json!({"name": "s", "constraints": []}),
        ("put", "/api/admin/api-tokens/{token}") => json!({"expiresAt": crate::common::next_year()}),
        ("post", "/api/admin/projects/{projectId}/api-tokens") => {
            json!({"tokenName": "t", "type": "client", "environment": "production"})
        }
        (
            "patch",
            "/api/admin/projects/{projectId}/features/{featureName}"
            | "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}"
            | "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
        ) => json!([]),
        (
            "put",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
        ) => {
            json!([])
        }
        ("post", "/api/admin/features/validate") => json!({"name": "free-name"}),
        ("put", "/api/admin/feature-types/{id}/lifetime") => json!({"lifetimeDays": 7}),
        (
            "post",
            "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/on"
            | "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off"
            | "/api/admin/projects/{projectId}/archive"
            | "/api/admin/projects/{projectId}/archive/validate"
            | "/api/admin/projects/{projectId}/revive"
            | "/api/admin/projects/{projectId}/delete",
        ) => json!({"features": ["f"]}),
        ("post", "/api/admin/projects/{projectId}/stale") => json!({"features": ["f"], "stale": true}),
        ("post", "/api/admin/archive/revive/{featureName}") => Value::Null,
        ("post", "/api/admin/tag-types" | "/api/admin/tag-types/validate") => json!({"name": "team"}),
        ("put", "/api/admin/tag-types/{name}") => json!({"description": "d"}),
        ("post", "/api/admin/tags" | "/api/admin/features/{featureName}/tags") => {
            json!({"type": "simple", "value": "blue"})
        }
        ("put", "/api/admin/features/{featureName}/tags") => json!({"addedTags": [], "removedTags": []}),
        ("put", "/api/admin/projects/{projectId}/tags") => {
            json!({"features": ["f"], "tags": {"addedTags": [], "removedTags": []}})
        }
        (
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/set-sort-order",
        ) => json!([]),
        ("put", "/api/admin/projects/{projectId}/features/{featureName}/variants-batch") => {
            json!({"variants": [], "environments": ["production", "development"]})
        }
        (
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on"
            | "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
        ) => Value::Null,
        (
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
        )
        | (
            "put",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
        ) => strategy,
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
        let scope = scope_of(operation.access);
        let Some(body) = body_of(&method_name, &operation.path) else {
            unclassified.push(format!("{method_name} {}", operation.path));
            continue;
        };
        if scope == Scope::Public {
            continue;
        }
        let mut request = TestRequest::default()
            .method(operation.method.clone())
            .uri(&concrete(&operation.path, &strategy_id))
            .insert_header(("Authorization", PRODUCTION_ADMIN));
        if !body.is_null() {
            request = request.set_json(body);
        }
        let (status, answer) = send(&service, request).await;
        let route = format!("{method_name} {}", operation.path);
        if matches!(
            scope,
            Scope::SdkOnly | Scope::Development | Scope::Everywhere | Scope::PeopleOnly
        ) {
            assert_eq!(status, StatusCode::FORBIDDEN, "{route}: {answer}");
        }
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
            Scope::PeopleOnly => {
                assert_error(status, &answer, 403, "NoAccessError");
                assert!(
                    answer["message"]
                        .as_str()
                        .is_some_and(|message| message.contains("people")),
                    "{route}: {answer}"
                );
            }
            Scope::Public => {}
        }
    }
    assert!(
        unclassified.is_empty(),
        "give these operations a body that passes validation: {unclassified:?}"
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

fn variant(name: &str, weight: Value) -> Value {
    json!({"name": name, "weight": weight})
}

#[actix_web::test]
async fn an_environment_scoped_token_cannot_write_other_environments() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let path = "/api/admin/projects/default/features/f/variants-batch";
    let request =
        json!({"variants": [variant("a", json!(1))], "environments": ["production", "development"]});
    let (status, body) = send(&service, put(path, PRODUCTION_ADMIN, request)).await;
    assert_error(status, &body, 403, "NoAccessError");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS") && message.contains("\"development\""),
        "{message}"
    );
    let production_only = json!({"variants": [variant("a", json!(1))], "environments": ["production"]});
    assert_eq!(
        send(&service, put(path, PRODUCTION_ADMIN, production_only))
            .await
            .0,
        StatusCode::OK
    );
}
