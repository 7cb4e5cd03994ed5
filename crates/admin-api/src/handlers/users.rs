//! `/api/admin/user-admin`: users and their root roles, for administrators.

use actix_web::web;
use flag_admin::identity::users;
use flag_admin::identity::users::types::UserOut;
use flag_admin::identity::users::types::{
    CreateUserRequest, PasswordRequest, UpdateUserRequest, UsersResponse,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// List users and the root roles.
#[utoipa::path(
    get,
    path = "/api/admin/user-admin",
    tag = "Users",
    operation_id = "getUsers",
    responses(
        (status = 200, description = "Every user, and the root roles", body = UsersResponse),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<UsersResponse>, ApiError> {
    Ok(web::Json(users::list(&state.app).await?))
}

/// One user, with their root role.
#[utoipa::path(
    get,
    path = "/api/admin/user-admin/{id}",
    tag = "Users",
    operation_id = "getUser",
    params(("id" = i32, Path, description = "The user's id")),
    responses(
        (status = 200, description = "The user", body = UserOut),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No user has this id", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<UserOut>, ApiError> {
    Ok(web::Json(users::get(&state.app, path.into_inner()).await?))
}

/// The query of a user search.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Text in the name, or the start of the username or email, in any letter case; every user
    /// when empty or absent.
    #[serde(default)]
    q: Option<String>,
}

/// Users by name, username or email, as Unleash's user search finds them.
#[utoipa::path(
    get,
    path = "/api/admin/user-admin/search",
    tag = "Users",
    operation_id = "searchUsers",
    params(SearchQuery),
    responses(
        (status = 200, description = "The users found, by id", body = Vec<UserOut>),
    ),
)]
pub async fn search(
    state: web::Data<AppState>,
    _caller: Admitted,
    query: web::Query<SearchQuery>,
) -> Result<web::Json<Vec<UserOut>>, ApiError> {
    Ok(web::Json(
        users::search(&state.app, query.into_inner().q.unwrap_or_default()).await?,
    ))
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
        (status = 409, description = "The email or username is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateUserRequest>,
) -> Result<Created<UserOut>, ApiError> {
    Ok(Created::new(users::create(&state.app, &caller, request).await?))
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
        (status = 404, description = "No user has this id", body = ErrorBody),
        (status = 409, description = "The email is taken", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<UpdateUserRequest>,
) -> Result<web::Json<UserOut>, ApiError> {
    Ok(web::Json(
        users::update(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Set a user's password, as an admin; the user's sessions end.
#[utoipa::path(
    post,
    path = "/api/admin/user-admin/{id}/change-password",
    tag = "Users",
    operation_id = "changeUserPassword",
    params(("id" = i32, Path, description = "The user's id")),
    request_body = PasswordRequest,
    responses(
        (status = 200, description = "The password is set; no body"),
        (status = 400, description = "The body breaks the schema or a password rule, or the id is not a number", body = ErrorBody),
        (status = 404, description = "No user has this id", body = ErrorBody),
    ),
)]
pub async fn change_password(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<PasswordRequest>,
) -> Result<Done, ApiError> {
    users::change_password(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
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
        (status = 404, description = "No user has this id", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
) -> Result<Done, ApiError> {
    users::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}
