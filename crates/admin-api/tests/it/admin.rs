//! The admin API around the documented operations.

use crate::common::{ADMIN, TestApp, assert_error, get, post, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

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
async fn editors_write_features_and_variants_but_do_not_administer() -> Result<(), Box<dyn std::error::Error>>
{
    let app = TestApp::new();
    let password = "Ed1tor-Passw0rd!";
    flag_store::queries::users::create(
        &mut *app.store.connection()?,
        &flag_store::models::NewUser {
            name: Some("Ed".into()),
            username: Some("ed".into()),
            email: Some("ed@example.com".into()),
            password_hash: Some(flag_admin::identity::password::hash(password).map_err(|e| e.to_string())?),
            root_role: 2,
            created_at: chrono::Utc::now().naive_utc(),
        },
        &flag_store::models::Actor::system(),
    )?;
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let cookie = crate::common::login(&service, "ed", password).await;

    let batch = test::TestRequest::put()
        .uri("/api/admin/projects/default/features/f/variants-batch")
        .cookie(cookie.clone())
        .set_json(
            json!({"variants": [{"name": "a", "weight": 1}], "environments": ["development", "production"]}),
        );
    let (status, body) = send(&service, batch).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let create = test::TestRequest::post()
        .uri("/api/admin/projects/default/features")
        .cookie(cookie.clone())
        .set_json(json!({"name": "by-editor"}));
    assert_eq!(send(&service, create).await.0, StatusCode::CREATED);
    for request in [
        test::TestRequest::get().uri("/api/admin/invite-link/tokens"),
        test::TestRequest::post()
            .uri("/api/admin/api-tokens")
            .set_json(json!({"tokenName": "x", "type": "client"})),
        test::TestRequest::post()
            .uri("/api/admin/environments")
            .set_json(json!({"name": "qa", "type": "test"})),
    ] {
        let (status, body) = send(&service, request.cookie(cookie.clone())).await;
        assert_error(status, &body, 403, "NoAccessError");
    }
    Ok(())
}

#[actix_web::test]
async fn administrators_manage_users_and_their_roles() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let password = "Edit0r-Passw0rd!";
    let (status, user) = send(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": "Ed@Example.com", "name": "Ed", "rootRole": "Editor", "password": password}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    assert_eq!(
        (user["email"].clone(), user["rootRole"].clone()),
        (json!("ed@example.com"), json!(2))
    );
    let id = user["id"].as_i64().unwrap_or_default();

    for (body, path) in [
        (json!({"email": "ed@example.com", "rootRole": 3}), None),
        (
            json!({"email": "x@example.com", "rootRole": 7}),
            Some("/rootRole"),
        ),
        (json!({"rootRole": 3}), Some("/email")),
        (
            json!({"email": "y@example.com", "rootRole": 3, "password": "weak"}),
            Some("/password"),
        ),
    ] {
        let (status, response) = send(&service, post("/api/admin/user-admin", ADMIN, body)).await;
        match path {
            None => assert_error(status, &response, 409, "NameExistsError"),
            Some(path) => {
                assert_error(status, &response, 400, "ValidationError");
                assert_eq!(response["details"][0]["path"], json!(path));
            }
        }
    }

    let cookie = crate::common::login(&service, "ed@example.com", password).await;
    let batch = || {
        test::TestRequest::put()
            .uri("/api/admin/projects/default/features/f/variants-batch")
            .cookie(cookie.clone())
            .set_json(json!({"variants": [], "environments": ["development"]}))
    };
    assert_eq!(send(&service, batch()).await.0, StatusCode::OK);
    let (status, body) = send(
        &service,
        test::TestRequest::get()
            .uri("/api/admin/user-admin")
            .cookie(cookie.clone()),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");

    // Demoted to Viewer, the same session can no longer write.
    let (status, updated) = send(
        &service,
        crate::common::put(
            &format!("/api/admin/user-admin/{id}"),
            ADMIN,
            json!({"rootRole": 3}),
        ),
    )
    .await;
    assert_eq!((status, updated["rootRole"].clone()), (StatusCode::OK, json!(3)));
    let (status, body) = send(&service, batch()).await;
    assert_error(status, &body, 403, "NoAccessError");

    let (_, listed) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    assert_eq!(listed["users"].as_array().map(Vec::len), Some(1));
    let delete = test::TestRequest::delete()
        .uri(&format!("/api/admin/user-admin/{id}"))
        .insert_header(("Authorization", ADMIN));
    assert_eq!(send(&service, delete).await.0, StatusCode::OK);
    let (status, body) = send(&service, batch()).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    let (status, body) = send(
        &service,
        crate::common::put("/api/admin/user-admin/999", ADMIN, json!({"rootRole": 2})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn a_corrupt_context_field_answers_500_and_logs_which_row() -> Result<(), Box<dyn std::error::Error>> {
    use diesel::RunQueryDsl;
    let captured = crate::common::Captured::default();
    let writer = captured.clone();
    // Only this thread's events are captured: actix's test runtime renders the error response on
    // the thread that runs the test.
    let _logging = tracing::subscriber::set_default(
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish(),
    );
    let app = TestApp::new();
    let service = app.service().await;
    diesel::sql_query("UPDATE context_fields SET legal_values = '{not json' WHERE name = 'userId'")
        .execute(&mut *app.store.connection()?)?;

    let (status, body) = send(&service, get("/api/admin/context", ADMIN)).await;
    assert_error(status, &body, 500, "InternalError");
    assert_eq!(body["message"], "internal error");
    assert!(body.get("details").is_none(), "{body}");
    for cause in ["legal_values", "userId", "context field", "not json"] {
        assert!(!body.to_string().contains(cause), "the cause leaked: {body}");
    }
    let logs = String::from_utf8_lossy(
        &captured
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
    .into_owned();
    let id = body["id"].as_str().unwrap_or("no id");
    assert!(
        logs.lines().any(|line| line.contains(id)
            && line.contains("stored legal_values of context field userId is not valid")),
        "no log line names the row and the error id {id}:\n{logs}"
    );
    Ok(())
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
