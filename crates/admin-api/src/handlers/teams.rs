//! Teams: permissions, custom roles, groups, project access, service accounts and their
//! tokens, in Unleash's shapes.

use actix_web::web;
use flag_admin::identity::teams;
use flag_admin::identity::teams::Holder;
use flag_admin::identity::teams::types::{
    AddAccessIn, GroupIn, GroupOut, GroupsOut, PatIn, PatOut, PatsOut, PermissionsOut, ProjectAccessIn,
    ProjectAccessOut, RoleIn, RoleWithPermissionsOut, RoleWrittenOut, RolesOut, ServiceAccountIn,
    ServiceAccountOut, ServiceAccountUpdate, ServiceAccountsOut,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// Every permission a custom role can hold.
#[utoipa::path(
    get,
    path = "/api/admin/permissions",
    tag = "Auth",
    operation_id = "getPermissions",
    responses(
        (status = 200, description = "Every permission a custom role can hold", body = PermissionsOut),
    ),
)]
pub async fn permissions(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<PermissionsOut>, ApiError> {
    Ok(web::Json(teams::permissions(&state.app).await?))
}

/// Every role.
#[utoipa::path(
    get,
    path = "/api/admin/roles",
    tag = "Auth",
    operation_id = "getRoles",
    responses(
        (status = 200, description = "Every role", body = RolesOut),
    ),
)]
pub async fn roles(state: web::Data<AppState>, _caller: Admitted) -> Result<web::Json<RolesOut>, ApiError> {
    Ok(web::Json(teams::roles(&state.app).await?))
}

/// One role with its permissions.
#[utoipa::path(
    get,
    path = "/api/admin/roles/{roleId}",
    tag = "Auth",
    operation_id = "getRoleById",
    params(("roleId" = i32, Path, description = "The role's id")),
    responses(
        (status = 200, description = "One role with its permissions", body = RoleWithPermissionsOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn role(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<RoleWithPermissionsOut>, ApiError> {
    Ok(web::Json(teams::role(&state.app, path.into_inner()).await?))
}

/// Creates a custom role.
#[utoipa::path(
    post,
    path = "/api/admin/roles",
    tag = "Auth",
    operation_id = "createRole",
    request_body = RoleIn,
    responses(
        (status = 200, description = "Creates a custom role", body = RoleWrittenOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create_role(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<RoleIn>,
) -> Result<web::Json<RoleWrittenOut>, ApiError> {
    Ok(web::Json(teams::create_role(&state.app, &caller, request).await?))
}

/// Changes a custom role.
#[utoipa::path(
    put,
    path = "/api/admin/roles/{roleId}",
    tag = "Auth",
    operation_id = "updateRole",
    params(("roleId" = i32, Path, description = "The role's id")),
    request_body = RoleIn,
    responses(
        (status = 200, description = "Changes a custom role", body = RoleWrittenOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn update_role(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<RoleIn>,
) -> Result<web::Json<RoleWrittenOut>, ApiError> {
    Ok(web::Json(
        teams::update_role(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Deletes a custom role nobody holds.
#[utoipa::path(
    delete,
    path = "/api/admin/roles/{roleId}",
    tag = "Auth",
    operation_id = "deleteRole",
    params(("roleId" = i32, Path, description = "The role's id")),
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
        (status = 409, description = "The role is in use", body = ErrorBody),
    ),
)]
pub async fn delete_role(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
) -> Result<Done, ApiError> {
    teams::delete_role(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Every group with its members.
#[utoipa::path(
    get,
    path = "/api/admin/groups",
    tag = "Users",
    operation_id = "getGroups",
    responses(
        (status = 200, description = "Every group with its members", body = GroupsOut),
    ),
)]
pub async fn groups(state: web::Data<AppState>, _caller: Admitted) -> Result<web::Json<GroupsOut>, ApiError> {
    Ok(web::Json(teams::groups(&state.app).await?))
}

/// One group.
#[utoipa::path(
    get,
    path = "/api/admin/groups/{groupId}",
    tag = "Users",
    operation_id = "getGroup",
    params(("groupId" = i32, Path, description = "The group's id")),
    responses(
        (status = 200, description = "One group", body = GroupOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn group(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<GroupOut>, ApiError> {
    Ok(web::Json(teams::group(&state.app, path.into_inner()).await?))
}

/// Creates a group.
#[utoipa::path(
    post,
    path = "/api/admin/groups",
    tag = "Users",
    operation_id = "createGroup",
    request_body = GroupIn,
    responses(
        (status = 201, description = "Creates a group", body = GroupOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create_group(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<GroupIn>,
) -> Result<Created<GroupOut>, ApiError> {
    Ok(Created::new(
        teams::create_group(&state.app, &caller, request).await?,
    ))
}

/// Changes a group and sets its members.
#[utoipa::path(
    put,
    path = "/api/admin/groups/{groupId}",
    tag = "Users",
    operation_id = "updateGroup",
    params(("groupId" = i32, Path, description = "The group's id")),
    request_body = GroupIn,
    responses(
        (status = 200, description = "Changes a group and sets its members", body = GroupOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn update_group(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<GroupIn>,
) -> Result<web::Json<GroupOut>, ApiError> {
    Ok(web::Json(
        teams::update_group(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Deletes a group.
#[utoipa::path(
    delete,
    path = "/api/admin/groups/{groupId}",
    tag = "Users",
    operation_id = "deleteGroup",
    params(("groupId" = i32, Path, description = "The group's id")),
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn delete_group(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
) -> Result<Done, ApiError> {
    teams::delete_group(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Who holds which role in the project.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/access",
    tag = "Projects",
    operation_id = "getProjectAccess",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "Who holds which role in the project", body = ProjectAccessOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn project_access(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ProjectAccessOut>, ApiError> {
    Ok(web::Json(
        teams::project_access(&state.app, path.into_inner()).await?,
    ))
}

/// Sets who holds which role in the project, replacing what was.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/access",
    tag = "Projects",
    operation_id = "setProjectAccess",
    params(("projectId" = String, Path, description = "The project")),
    request_body = ProjectAccessIn,
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn set_project_access(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<ProjectAccessIn>,
) -> Result<Done, ApiError> {
    teams::set_project_access(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Gives a project role to more users and groups.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/role/{roleId}/access",
    tag = "Projects",
    operation_id = "addAccessToProject",
    params(("projectId" = String, Path, description = "The project"), ("roleId" = i32, Path, description = "The project role")),
    request_body = AddAccessIn,
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn add_project_access(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
    ObjectBody(request): ObjectBody<AddAccessIn>,
) -> Result<Done, ApiError> {
    {
        let (project, role) = path.into_inner();
        teams::add_project_access(&state.app, &caller, project, role, request)
    }
    .await?;
    Ok(Done)
}

/// Takes a user's roles in the project away.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/users/{userId}/roles",
    tag = "Projects",
    operation_id = "removeUserFromProject",
    params(("projectId" = String, Path, description = "The project"), ("userId" = i32, Path, description = "The user")),
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn remove_user_access(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
) -> Result<Done, ApiError> {
    {
        let (project, user) = path.into_inner();
        teams::remove_project_access(&state.app, &caller, project, Holder::User(user))
    }
    .await?;
    Ok(Done)
}

/// Takes a group's roles in the project away.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/groups/{groupId}/roles",
    tag = "Projects",
    operation_id = "removeGroupFromProject",
    params(("projectId" = String, Path, description = "The project"), ("groupId" = i32, Path, description = "The group")),
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn remove_group_access(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
) -> Result<Done, ApiError> {
    {
        let (project, group) = path.into_inner();
        teams::remove_project_access(&state.app, &caller, project, Holder::Group(group))
    }
    .await?;
    Ok(Done)
}

/// Every service account.
#[utoipa::path(
    get,
    path = "/api/admin/service-account",
    tag = "Service Accounts",
    operation_id = "getServiceAccounts",
    responses(
        (status = 200, description = "Every service account", body = ServiceAccountsOut),
    ),
)]
pub async fn service_accounts(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<ServiceAccountsOut>, ApiError> {
    Ok(web::Json(teams::service_accounts(&state.app).await?))
}

/// Creates a service account.
#[utoipa::path(
    post,
    path = "/api/admin/service-account",
    tag = "Service Accounts",
    operation_id = "createServiceAccount",
    request_body = ServiceAccountIn,
    responses(
        (status = 201, description = "Creates a service account", body = ServiceAccountOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create_service_account(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<ServiceAccountIn>,
) -> Result<Created<ServiceAccountOut>, ApiError> {
    Ok(Created::new(
        teams::create_service_account(&state.app, &caller, request).await?,
    ))
}

/// Changes a service account's name or root role.
#[utoipa::path(
    put,
    path = "/api/admin/service-account/{id}",
    tag = "Service Accounts",
    operation_id = "updateServiceAccount",
    params(("id" = i32, Path, description = "The service account's id")),
    request_body = ServiceAccountUpdate,
    responses(
        (status = 200, description = "Changes a service account's name or root role", body = ServiceAccountOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn update_service_account(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<ServiceAccountUpdate>,
) -> Result<web::Json<ServiceAccountOut>, ApiError> {
    Ok(web::Json(
        teams::update_service_account(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Deletes a service account and its tokens.
#[utoipa::path(
    delete,
    path = "/api/admin/service-account/{id}",
    tag = "Service Accounts",
    operation_id = "deleteServiceAccount",
    params(("id" = i32, Path, description = "The service account's id")),
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn delete_service_account(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
) -> Result<Done, ApiError> {
    teams::delete_service_account(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// A service account's tokens, without their secrets.
#[utoipa::path(
    get,
    path = "/api/admin/service-account/{id}/token",
    tag = "Service Accounts",
    operation_id = "getServiceAccountTokens",
    params(("id" = i32, Path, description = "The service account's id")),
    responses(
        (status = 200, description = "A service account's tokens, without their secrets", body = PatsOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn tokens(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<PatsOut>, ApiError> {
    Ok(web::Json(teams::tokens(&state.app, path.into_inner()).await?))
}

/// Makes a service account a token; its secret is in this answer only.
#[utoipa::path(
    post,
    path = "/api/admin/service-account/{id}/token",
    tag = "Service Accounts",
    operation_id = "createServiceAccountToken",
    params(("id" = i32, Path, description = "The service account's id")),
    request_body = PatIn,
    responses(
        (status = 201, description = "Makes a service account a token; its secret is in this answer only", body = PatOut),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create_token(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<PatIn>,
) -> Result<Created<PatOut>, ApiError> {
    Ok(Created::new(
        teams::create_token(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Deletes a service account's token.
#[utoipa::path(
    delete,
    path = "/api/admin/service-account/{id}/token/{tokenId}",
    tag = "Service Accounts",
    operation_id = "deleteServiceAccountToken",
    params(("id" = i32, Path, description = "The service account's id"), ("tokenId" = i32, Path, description = "The token's id")),
    responses(
        (status = 200, description = "Done"),
        (status = 400, description = "The body or path breaks the schema or a rule", body = ErrorBody),
        (status = 404, description = "It does not exist", body = ErrorBody),
    ),
)]
pub async fn delete_token(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(i32, i32)>,
) -> Result<Done, ApiError> {
    {
        let (id, token) = path.into_inner();
        teams::delete_token(&state.app, &caller, id, token)
    }
    .await?;
    Ok(Done)
}
