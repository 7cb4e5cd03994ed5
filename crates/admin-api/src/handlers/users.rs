//! `/api/admin/user-admin`: users and their root roles, for administrators.

use actix_web::{HttpResponse, web};
use chrono::Utc;
use flag_store::models::{NewUser, UserChanges};
use flag_store::queries;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{self, UserOut};
use crate::error::{ApiError, Detail};
use crate::extract::Body;
use crate::password;

/// A root role given by id (1, 2, 3) or by name (`Admin`, `Editor`, `Viewer`).
fn root_role(value: &Value) -> Result<i32, ApiError> {
    let id = match value {
        Value::Number(number) => number.as_i64().and_then(|id| i32::try_from(id).ok()),
        Value::String(name) => match name.to_ascii_lowercase().as_str() {
            "admin" => Some(1),
            "editor" => Some(2),
            "viewer" => Some(3),
            other => other.parse().ok(),
        },
        _ => None,
    };
    id.filter(|id| (1..=3).contains(id)).ok_or_else(|| {
        ApiError::invalid(
            "/rootRole",
            "/rootRole must be 1 (Admin), 2 (Editor) or 3 (Viewer)",
        )
    })
}

/// `GET /api/admin/user-admin`.
pub async fn list(state: web::Data<AppState>, principal: Principal) -> Result<HttpResponse, ApiError> {
    principal.require_admin_read()?;
    let users = crate::db::run(&state.store, queries::users::list).await?;
    let users: Vec<UserOut> = users.into_iter().map(UserOut::from).collect();
    Ok(HttpResponse::Ok().json(json!({
        "users": users,
        "rootRoles": [
            {"id": 1, "name": "Admin", "type": "root"},
            {"id": 2, "name": "Editor", "type": "root"},
            {"id": 3, "name": "Viewer", "type": "root"}
        ]
    })))
}

/// Body of `POST /api/admin/user-admin`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateUser {
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    name: Option<String>,
    root_role: Value,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    send_email: Option<bool>,
}

/// `POST /api/admin/user-admin`: 201 with the user.
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateUser>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let root_role = root_role(&request.root_role)?;
    let email = request
        .email
        .map(|email| email.trim().to_owned())
        .filter(|email| !email.is_empty());
    let username = request
        .username
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty());
    if email.is_none() && username.is_none() {
        return Err(ApiError::invalid("/email", "give an email, a username or both"));
    }
    let mut details = dto::person_problems(email.as_deref(), username.as_deref(), request.name.as_deref());
    if let Some(password) = &request.password {
        details.extend(
            password::broken_rules(password)
                .into_iter()
                .map(|rule| Detail::at("/password", rule)),
        );
    }
    ApiError::check(details)?;
    let _ = request.send_email;
    let hash = match request.password {
        Some(password) => Some(
            state
                .cpu
                .run(move || password::hash(&password))
                .await?
                .map_err(|error| ApiError::Internal(format!("password hashing failed: {error}")))?,
        ),
        None => None,
    };
    let user = NewUser {
        name: request.name.map(|name| name.trim().to_owned()),
        username,
        email,
        password_hash: hash,
        root_role,
        created_at: Utc::now().naive_utc(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::users::create(conn, &user, &actor)
    })
    .await?;
    Ok(HttpResponse::Created().json(UserOut::from(row)))
}

/// Body of `PUT /api/admin/user-admin/{id}`: Unleash's `updateUserSchema`. Any other field is
/// refused rather than ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateUser {
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    root_role: Option<Value>,
}

/// `PUT /api/admin/user-admin/{id}`: changes the email, name or root role; 200 with the user.
pub async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    Body(request): Body<UpdateUser>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let root_role = request.root_role.as_ref().map(root_role).transpose()?;
    ApiError::check(dto::person_problems(
        request.email.as_deref(),
        None,
        request.name.as_deref(),
    ))?;
    let changes = UserChanges {
        name: request.name.map(|name| name.trim().to_owned()),
        email: request.email.map(|email| email.trim().to_owned()),
        root_role,
    };
    let id = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    let row = crate::db::run(&state.store, move |conn| {
        queries::users::update(conn, id, &changes, &actor, now)
    })
    .await?;
    Ok(HttpResponse::Ok().json(UserOut::from(row)))
}

/// `DELETE /api/admin/user-admin/{id}`: 200.
pub async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let id = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    crate::db::run(&state.store, move |conn| {
        queries::users::delete(conn, id, &actor, now)
    })
    .await?;
    Ok(HttpResponse::Ok().finish())
}
