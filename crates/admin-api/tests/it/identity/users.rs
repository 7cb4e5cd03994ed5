//! Users and their roles: administrators create, change and delete users, an editor writes flags
//! and variants but administers nothing, a demoted session loses its writes at once; and the user
//! operations' answers, pinned.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, get, post, put, seed_feature, send};

pub(super) const PASSWORD: &str = "Corr3ct-Horse!";

/// Creates a user with a password through the admin API and returns the answer.
pub(super) async fn create_user<S, B>(service: &S, email: &str) -> Value
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let body = json!({"email": email, "name": "Ed", "rootRole": "Editor", "password": PASSWORD});
    let (status, user) = send(service, post("/api/admin/user-admin", ADMIN, body)).await;
    assert_eq!(status, StatusCode::CREATED, "{user}");
    user
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
            root_role: flag_store::models::RootRole::Editor,
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

// The user operations' answers, pinned.

#[actix_web::test]
async fn list_users_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    create_user(&service, "ed@example.com").await;
    let (status, body) = send(&service, get("/api/admin/user-admin", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {".users[].id" => "[id]", ".users[].createdAt" => "[time]"});
}

#[actix_web::test]
async fn create_user_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = json!({"email": "Ed@Example.com", "username": "ed", "name": "Ed", "rootRole": 2, "password": PASSWORD, "sendEmail": false});
    let (status, body) = send(&service, post("/api/admin/user-admin", ADMIN, body)).await;
    assert_eq!(status, StatusCode::CREATED);
    insta::assert_json_snapshot!(body, {".id" => "[id]", ".createdAt" => "[time]"});
}

#[actix_web::test]
async fn create_user_error_with_a_project_role() {
    let app = TestApp::new();
    let service = app.service().await;
    let body = json!({"email": "x@example.com", "rootRole": 4});
    let (status, body) = send(&service, post("/api/admin/user-admin", ADMIN, body)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn update_user_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let user = create_user(&service, "ed@example.com").await;
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/user-admin/{}", user["id"]),
            ADMIN,
            json!({"name": "Edward", "rootRole": "viewer"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body, {".id" => "[id]", ".createdAt" => "[time]"});
}

#[actix_web::test]
async fn update_user_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        put("/api/admin/user-admin/999", ADMIN, json!({"rootRole": 2})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn delete_user_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let user = create_user(&service, "ed@example.com").await;
    let request = test::TestRequest::delete()
        .uri(&format!("/api/admin/user-admin/{}", user["id"]))
        .insert_header(("Authorization", ADMIN));
    let (status, body) = send(&service, request).await;
    insta::assert_json_snapshot!(json!({"status": status.as_u16(), "body": body}));
}

#[actix_web::test]
async fn an_admin_sets_a_users_password_which_ends_their_sessions() {
    let app = TestApp::new();
    let service = app.service().await;
    let user = create_user(&service, "moved@example.com").await;
    let path = format!("/api/admin/user-admin/{}/change-password", user["id"]);
    let cookie = crate::common::login(&service, "moved@example.com", PASSWORD).await;

    let (status, body) = send(
        &service,
        post(&path, ADMIN, json!({"password": "N3w-Passw0rd!x"})),
    )
    .await;
    assert_eq!((status, body), (StatusCode::OK, Value::Null));
    // The old session ends; the new password signs in, the old one does not.
    let me = test::TestRequest::get().uri("/api/admin/user").cookie(cookie);
    assert_eq!(send(&service, me).await.0, StatusCode::UNAUTHORIZED);
    crate::common::login(&service, "moved@example.com", "N3w-Passw0rd!x").await;
    let old = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": "moved@example.com", "password": PASSWORD}));
    assert_eq!(send(&service, old).await.0, StatusCode::UNAUTHORIZED);

    for (body, status, name) in [
        (json!({"password": "weak"}), 400, "ValidationError"),
        (json!({}), 400, "ValidationError"),
        (
            json!({"password": "N3w-Passw0rd!x", "other": 1}),
            400,
            "ValidationError",
        ),
    ] {
        let (got, answer) = send(&service, post(&path, ADMIN, body)).await;
        assert_error(got, &answer, status, name);
    }
    let (got, answer) = send(
        &service,
        post(
            "/api/admin/user-admin/999/change-password",
            ADMIN,
            json!({"password": "N3w-Passw0rd!x"}),
        ),
    )
    .await;
    assert_error(got, &answer, 404, "NotFoundError");
    let editor = crate::common::login(&service, "moved@example.com", "N3w-Passw0rd!x").await;
    let by_editor = test::TestRequest::post()
        .uri(&path)
        .cookie(editor)
        .set_json(json!({"password": "An0ther-Passw0rd!"}));
    assert_eq!(send(&service, by_editor).await.0, StatusCode::FORBIDDEN);
}

#[actix_web::test]
async fn a_user_is_read_by_id_and_searched_as_terraform_does() {
    let app = TestApp::new();
    let service = app.service().await;
    let made = create_user(&service, "terra@example.com").await;
    let id = made["id"].as_i64().unwrap_or_default();
    let (status, user) = send(&service, get(&format!("/api/admin/user-admin/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{user}");
    assert_eq!(user["email"], "terra@example.com");
    assert_eq!(user["rootRole"], 2);
    assert_eq!(user["id"], made["id"]);
    let (status, body) = send(&service, get("/api/admin/user-admin/999999", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(&service, get("/api/admin/user-admin/not-a-number", ADMIN)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // The search is an array of users, as the providers parse it.
    let (status, found) = send(&service, get("/api/admin/user-admin/search?q=TERRA", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found.as_array().map(Vec::len), Some(1), "{found}");
    assert_eq!(found[0]["id"], made["id"]);
    let (_, none) = send(&service, get("/api/admin/user-admin/search?q=example.com", ADMIN)).await;
    assert_eq!(none, json!([]));
    let (status, all) = send(&service, get("/api/admin/user-admin/search", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert!(all.as_array().is_some_and(|users| !users.is_empty()));
    // An editor may search, as in Unleash, but not read a user by id.
    let cookie = crate::common::login(&service, "terra@example.com", PASSWORD).await;
    let searched = test::TestRequest::get()
        .uri("/api/admin/user-admin/search?q=terra")
        .cookie(cookie.clone());
    assert_eq!(send(&service, searched).await.0, StatusCode::OK);
    let read = test::TestRequest::get()
        .uri(&format!("/api/admin/user-admin/{id}"))
        .cookie(cookie);
    let (status, body) = send(&service, read).await;
    assert_error(status, &body, 403, "NoAccessError");
}
