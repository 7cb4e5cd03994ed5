//! `/api/admin/user-admin`: users and their root roles, for administrators.

use actix_web::web;
use flag_store::models::{NewUser, UserChanges};
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::dto::users::{CreateUserRequest, UpdateUserRequest, UsersResponse};
use crate::dto::{self, UserOut};
use crate::error::{ApiError, Detail, ErrorBody};
use crate::extract::Body;
use crate::password;
use crate::respond::{Created, Done};

/// User administration's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create, update, delete))]
pub struct Api;

/// List users and the root roles.
#[utoipa::path(
    get,
    path = "/api/admin/user-admin",
    tag = "Users",
    operation_id = "getUsers",
    responses(
        (status = 200, description = "Every user, and the root roles", body = UsersResponse),
        (status = 403, description = "Not an administrator", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    principal: Principal,
) -> Result<web::Json<UsersResponse>, ApiError> {
    principal.require_admin_read()?;
    let users = crate::db::run(&state.store, queries::users::list).await?;
    Ok(web::Json(UsersResponse::from(users)))
}

/// Create a user with a root role.
#[utoipa::path(
    post,
    path = "/api/admin/user-admin",
    tag = "Users",
    operation_id = "createUser",
    request_body = CreateUserRequest,
    responses(
        (status = 201, description = "The user, created", body = UserOut),
        (status = 400, description = "The body breaks the schema, a text rule or a password rule", body = ErrorBody),
        (status = 403, description = "Not an administrator, or a token limited to some environments", body = ErrorBody),
        (status = 409, description = "The email or username is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateUserRequest>,
) -> Result<Created<UserOut>, ApiError> {
    principal.require_admin()?;
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
        root_role: request.root_role.id(),
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::users::create(conn, &user, &actor)
    })
    .await?;
    Ok(Created::new(UserOut::from(row)))
}

/// Change a user's email, name or root role.
#[utoipa::path(
    put,
    path = "/api/admin/user-admin/{id}",
    tag = "Users",
    operation_id = "updateUser",
    params(("id" = i32, Path, description = "The user's id")),
    request_body = UpdateUserRequest,
    responses(
        (status = 200, description = "The user, changed", body = UserOut),
        (status = 400, description = "The body breaks the schema or a text rule, or the id is not a number", body = ErrorBody),
        (status = 403, description = "Not an administrator, or a token limited to some environments", body = ErrorBody),
        (status = 404, description = "No user has this id", body = ErrorBody),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
    Body(request): Body<UpdateUserRequest>,
) -> Result<web::Json<UserOut>, ApiError> {
    principal.require_admin()?;
    ApiError::check(dto::person_problems(
        request.email.as_deref(),
        None,
        request.name.as_deref(),
    ))?;
    let changes = UserChanges {
        name: request.name.map(|name| name.trim().to_owned()),
        email: request.email.map(|email| email.trim().to_owned()),
        root_role: request.root_role.map(crate::domain::RootRole::id),
    };
    let id = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    let row = crate::db::run(&state.store, move |conn| {
        queries::users::update(conn, id, &changes, &actor, now)
    })
    .await?;
    Ok(web::Json(UserOut::from(row)))
}

/// Delete a user.
#[utoipa::path(
    delete,
    path = "/api/admin/user-admin/{id}",
    tag = "Users",
    operation_id = "deleteUser",
    params(("id" = i32, Path, description = "The user's id")),
    responses(
        (status = 200, description = "The user is deleted"),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 403, description = "Not an administrator, or a token limited to some environments", body = ErrorBody),
        (status = 404, description = "No user has this id", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn delete(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<i32>,
) -> Result<Done, ApiError> {
    principal.require_admin()?;
    let id = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::users::delete(conn, id, &actor, now)
    })
    .await?;
    Ok(Done)
}
