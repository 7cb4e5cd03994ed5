//! Teams: custom roles made of Unleash's permissions, groups of users, who holds which role in
//! a project, and service accounts with their personal access tokens. What they grant is read
//! by the one permission policy ([`crate::identity::auth`]) through [`grants`].

pub mod grants;
pub mod types;

use std::collections::BTreeMap;

pub use flag_store::models::Holder;
use flag_store::models::{GroupRow, NewGroup, NewPersonalToken, NewUser, RoleRow, UserRow};
use flag_store::queries;

use crate::identity::auth::{Access, Caller, PERSONAL_TOKEN_PREFIX};
use crate::identity::teams::grants::Scope;
use crate::identity::teams::types::{
    AccessGroupOut, AccessUserOut, AddAccessIn, CustomRoleType, EnvironmentPermissionsOut, GroupIn,
    GroupMemberOut, GroupOut, GroupsOut, MemberUserOut, PatIn, PatOut, PatsOut, PermissionLists,
    PermissionOut, PermissionsOut, ProjectAccessIn, ProjectAccessOut, RoleIn, RoleOut,
    RoleWithPermissionsOut, RoleWrittenOut, RolesOut, ServiceAccountIn, ServiceAccountOut,
    ServiceAccountUpdate, ServiceAccountsOut,
};
use crate::runtime::domain::{AnyRootRole, Permission, RootRole};
use crate::runtime::{Runtime, db, input, secrets};
use crate::{AdminError, Detail};

/// Who may list the permissions.
pub const PERMISSIONS: Access = Access::Read;

/// Every permission a custom role can hold: root, project, and per environment.
pub async fn permissions(ctx: &Runtime) -> Result<PermissionsOut, AdminError> {
    let environments = db::run(&ctx.store, queries::environments::list).await?;
    let of = |scope: Scope, environment: &str| -> Vec<PermissionOut> {
        grants::PERMISSIONS
            .iter()
            .filter(|(_, _, held)| *held == scope)
            .filter_map(|(name, _, _)| PermissionOut::named(name, environment))
            .collect()
    };
    Ok(PermissionsOut {
        version: 1,
        permissions: PermissionLists {
            root: of(Scope::Root, ""),
            project: of(Scope::Project, ""),
            environments: environments
                .into_iter()
                .map(|environment| EnvironmentPermissionsOut {
                    permissions: of(Scope::Environment, &environment.name),
                    name: environment.name,
                })
                .collect(),
        },
    })
}

/// Who may list the roles.
pub const ROLES: Access = Access::Read;

/// Every role, built in and custom.
pub async fn roles(ctx: &Runtime) -> Result<RolesOut, AdminError> {
    let roles = db::run(&ctx.store, queries::access::roles).await?;
    Ok(RolesOut {
        version: 1,
        roles: roles.into_iter().map(RoleOut::from).collect(),
    })
}

/// Who may read a role.
pub const ROLE: Access = Access::Read;

/// One role with its permissions; the built-in ones list none, as Unleash's API does not.
pub async fn role(ctx: &Runtime, id: i32) -> Result<RoleWithPermissionsOut, AdminError> {
    let (role, permissions) = db::run(&ctx.store, move |conn| queries::access::role(conn, id)).await?;
    Ok(RoleWithPermissionsOut {
        role: RoleOut::from(role),
        permissions: permissions
            .iter()
            .filter_map(|row| PermissionOut::named(&row.permission, &row.environment))
            .collect(),
    })
}

/// The role's permissions as stored, checked against its type and the environments there are:
/// an unknown permission, one of the wrong scope, or an environment permission without an
/// existing environment is refused, each named at its place in the body.
async fn checked_role(
    ctx: &Runtime,
    request: &RoleIn,
    role_type: CustomRoleType,
) -> Result<Vec<(String, String)>, AdminError> {
    let mut details = Vec::new();
    if request.name.trim().is_empty() {
        details.push(Detail::at("/name", "/name must not be empty"));
    }
    let environments: Vec<String> = db::run(&ctx.store, queries::environments::list)
        .await?
        .into_iter()
        .map(|environment| environment.name)
        .collect();
    let mut held = Vec::new();
    for (index, permission) in request.permissions.iter().enumerate() {
        let at = format!("/permissions/{index}");
        let Some((_, name, _, scope)) = grants::permission(&permission.name) else {
            details.push(Detail::at(
                format!("{at}/name"),
                format!(
                    "{} is not a permission (GET /api/admin/permissions lists them)",
                    permission.name
                ),
            ));
            continue;
        };
        let environment = permission.environment.clone().unwrap_or_default();
        match (role_type, scope) {
            (CustomRoleType::Root, Scope::Root) if name != "ADMIN" => {
                held.push((name.to_owned(), String::new()));
            }
            (CustomRoleType::Root, _) => details.push(Detail::at(
                format!("{at}/name"),
                format!("{name} cannot be part of a custom root role"),
            )),
            (CustomRoleType::Project, Scope::Project) => held.push((name.to_owned(), String::new())),
            (CustomRoleType::Project, Scope::Environment) if environments.contains(&environment) => {
                held.push((name.to_owned(), environment));
            }
            (CustomRoleType::Project, Scope::Environment) => details.push(Detail::at(
                format!("{at}/environment"),
                format!("{name} needs an existing environment, not {environment:?}"),
            )),
            (CustomRoleType::Project, Scope::Root) => details.push(Detail::at(
                format!("{at}/name"),
                format!("{name} is a root permission; a project role cannot hold it"),
            )),
        }
    }
    AdminError::check(details)?;
    Ok(held)
}

fn written(role: RoleRow) -> RoleWrittenOut {
    RoleWrittenOut {
        version: 1,
        roles: RoleOut::from(role),
    }
}

/// Who may create a custom role: administrators, who hold every permission a role can give.
pub const CREATE_ROLE: Access = Access::Admin;

/// Creates a custom role; its name must be free.
pub async fn create_role(
    ctx: &Runtime,
    caller: &Caller,
    request: RoleIn,
) -> Result<RoleWrittenOut, AdminError> {
    let role_type = request.role_type.unwrap_or(CustomRoleType::Project);
    let permissions = checked_role(ctx, &request, role_type).await?;
    let role = caller
        .write(ctx, move |conn, actor, now| {
            queries::access::create_role(
                conn,
                request.name.trim(),
                request.description.as_deref(),
                role_type.as_str(),
                &permissions,
                actor,
                now,
            )
        })
        .await
        .map_err(taken_name("role"))?;
    Ok(written(role))
}

fn taken_name(what: &'static str) -> impl Fn(AdminError) -> AdminError {
    move |error| match error {
        AdminError::NameExists(_) => {
            AdminError::NameExists(format!("a {what} with this name already exists"))
        }
        other => other,
    }
}

/// Who may change a custom role.
pub const UPDATE_ROLE: Access = Access::Admin;

/// Changes a custom role's name, description and permissions; its type stays what it was made.
pub async fn update_role(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: RoleIn,
) -> Result<RoleWrittenOut, AdminError> {
    let (current, _) = db::run(&ctx.store, move |conn| queries::access::role(conn, id)).await?;
    let role_type = match current.role_type.as_str() {
        "root-custom" => CustomRoleType::Root,
        "custom" => CustomRoleType::Project,
        _ => {
            return Err(AdminError::InvalidOperation(format!(
                "the built-in role {} cannot be changed",
                current.name
            )));
        }
    };
    if request.role_type.is_some_and(|asked| asked != role_type) {
        return Err(AdminError::invalid("/type", "a role's type cannot be changed"));
    }
    let permissions = checked_role(ctx, &request, role_type).await?;
    let role = caller
        .write(ctx, move |conn, actor, now| {
            queries::access::update_role(
                conn,
                id,
                request.name.trim(),
                request.description.as_deref(),
                &permissions,
                actor,
                now,
            )
        })
        .await
        .map_err(taken_name("role"))?;
    Ok(written(role))
}

/// Who may delete a custom role.
pub const DELETE_ROLE: Access = Access::Admin;

/// Deletes a custom role nobody holds.
pub async fn delete_role(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::delete_role(conn, id, actor, now)
        })
        .await
}

// Groups.

fn members_of(
    group: &GroupRow,
    memberships: &[flag_store::models::GroupUserRow],
    users: &BTreeMap<i32, UserRow>,
) -> Vec<GroupMemberOut> {
    memberships
        .iter()
        .filter(|membership| membership.group_id == group.id)
        .filter_map(|membership| {
            Some(GroupMemberOut {
                user: MemberUserOut::from(users.get(&membership.user_id)?),
                joined_at: input::iso(membership.created_at),
                created_by: membership.created_by.clone(),
            })
        })
        .collect()
}

async fn all_groups(ctx: &Runtime) -> Result<Vec<GroupOut>, AdminError> {
    let (groups, memberships, users) = db::run(&ctx.store, |conn| {
        Ok((
            queries::access::groups(conn)?,
            queries::access::memberships(conn)?,
            queries::users::list(conn)?,
        ))
    })
    .await?;
    let users: BTreeMap<i32, UserRow> = users.into_iter().map(|user| (user.id, user)).collect();
    Ok(groups
        .into_iter()
        .map(|group| {
            let members = members_of(&group, &memberships, &users);
            GroupOut::new(group, members)
        })
        .collect::<Result<_, _>>()?)
}

/// Who may list the groups.
pub const GROUPS: Access = Access::AdminRead;

/// Every group with its members.
pub async fn groups(ctx: &Runtime) -> Result<GroupsOut, AdminError> {
    Ok(GroupsOut {
        groups: all_groups(ctx).await?,
    })
}

/// Who may read a group.
pub const GROUP: Access = Access::AdminRead;

/// One group, its members in the order they were given.
pub async fn group(ctx: &Runtime, id: i32) -> Result<GroupOut, AdminError> {
    let (group, memberships, users) = db::run(&ctx.store, move |conn| {
        Ok((
            queries::access::group(conn, id)?,
            queries::access::memberships(conn)?,
            queries::users::list(conn)?,
        ))
    })
    .await?;
    let users: BTreeMap<i32, UserRow> = users.into_iter().map(|user| (user.id, user)).collect();
    let members = members_of(&group, &memberships, &users);
    Ok(GroupOut::new(group, members)?)
}

/// The group's stored form and members, checked: a name, a root role that is one.
async fn checked_group(ctx: &Runtime, request: &GroupIn) -> Result<(NewGroup, Vec<i32>), AdminError> {
    let name = request.name.trim();
    if name.is_empty() {
        return Err(AdminError::invalid("/name", "/name must not be empty"));
    }
    if let Some(role) = request.root_role {
        root_role(ctx, role).await?;
    }
    let mut users: Vec<i32> = request
        .users
        .iter()
        .flatten()
        .map(|member| member.user.id)
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    users.retain(|user| seen.insert(*user));
    let group = NewGroup::new(
        name.to_owned(),
        request.description.clone(),
        request.mappings_sso.as_deref().unwrap_or_default(),
        request.root_role,
    )?;
    Ok((group, users))
}

/// Who may create a group.
pub const CREATE_GROUP: Access = Access::Admin;

/// Creates a group with its members. Groups hold users, never groups, so they cannot loop.
pub async fn create_group(ctx: &Runtime, caller: &Caller, request: GroupIn) -> Result<GroupOut, AdminError> {
    let (new, users) = checked_group(ctx, &request).await?;
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::access::create_group(conn, &new, &users, actor, now)
        })
        .await
        .map_err(taken_name("group"))?;
    group(ctx, row.id).await
}

/// Who may change a group.
pub const UPDATE_GROUP: Access = Access::Admin;

/// Changes a group and sets its members.
pub async fn update_group(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: GroupIn,
) -> Result<GroupOut, AdminError> {
    let (new, users) = checked_group(ctx, &request).await?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::update_group(conn, id, &new, &users, actor, now)
        })
        .await
        .map_err(taken_name("group"))?;
    group(ctx, id).await
}

/// Who may delete a group.
pub const DELETE_GROUP: Access = Access::Admin;

/// Deletes a group: its members lose what it gave them.
pub async fn delete_group(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::delete_group(conn, id, actor, now)
        })
        .await
}

// Project access.

/// Who may read a project's access: anyone signed in to the admin API, as its members need.
pub const PROJECT_ACCESS: Access = Access::Read;

/// Who holds which role in `project`, with the project roles there are.
pub async fn project_access(ctx: &Runtime, project: String) -> Result<ProjectAccessOut, AdminError> {
    let (rows, roles, groups, memberships, users) = db::run(&ctx.store, move |conn| {
        queries::projects::get(conn, &project)?;
        Ok((
            queries::access::project_access(conn, &project)?,
            queries::access::roles(conn)?,
            queries::access::groups(conn)?,
            queries::access::memberships(conn)?,
            queries::users::list(conn)?,
        ))
    })
    .await?;
    let users: BTreeMap<i32, UserRow> = users.into_iter().map(|user| (user.id, user)).collect();
    let groups: BTreeMap<i32, GroupRow> = groups.into_iter().map(|group| (group.id, group)).collect();
    let mut held: BTreeMap<Holder, (Vec<i32>, String)> = BTreeMap::new();
    for row in &rows {
        let entry = held
            .entry(row.holder()?)
            .or_insert_with(|| (Vec::new(), input::iso(row.created_at)));
        entry.0.push(row.role_id);
    }
    let mut out = ProjectAccessOut {
        roles: roles
            .into_iter()
            .filter(|role| role.role_type == "project" || role.role_type == "custom")
            .map(RoleOut::from)
            .collect(),
        users: Vec::new(),
        groups: Vec::new(),
    };
    for (holder, (roles, added_at)) in held {
        let role_id = roles.first().copied().unwrap_or_default();
        match holder {
            Holder::User(id) => {
                if let Some(user) = users.get(&id) {
                    out.users.push(AccessUserOut {
                        user: MemberUserOut::from(user),
                        role_id,
                        roles,
                        added_at,
                    });
                }
            }
            Holder::Group(id) => {
                if let Some(group) = groups.get(&id) {
                    out.groups.push(AccessGroupOut {
                        id,
                        name: group.name.clone(),
                        role_id,
                        roles,
                        added_at,
                        user_count: memberships.iter().filter(|member| member.group_id == id).count(),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Refuses giving a role in `project` that holds a permission the caller does not hold there:
/// no one widens access beyond their own. Administrators give any role.
async fn check_giving(
    ctx: &Runtime,
    caller: &Caller,
    project: &str,
    roles: &[i32],
) -> Result<(), AdminError> {
    if caller.principal().administers() || roles.is_empty() {
        return Ok(());
    }
    let permissions = db::run(&ctx.store, queries::access::role_permissions).await?;
    for role in roles {
        for (name, environment) in grants::of_project_role(*role, &permissions) {
            if !caller.principal().may_give(name, project, &environment) {
                let place = if environment.is_empty() {
                    String::new()
                } else {
                    format!(" in {environment}")
                };
                return Err(AdminError::NoAccess(format!(
                    "role {role} holds {name}{place}, which you do not hold in this project, so you cannot give it"
                )));
            }
        }
    }
    Ok(())
}

/// Who may set a project's access: its owners, and administrators.
pub const SET_PROJECT_ACCESS: Access = Access::Write(Permission::ProjectUserAccessWrite);

/// Sets who holds which role in `project`, replacing what was: what Terraform's
/// `unleash_project_access` writes.
pub async fn set_project_access(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: ProjectAccessIn,
) -> Result<(), AdminError> {
    let current = db::run(&ctx.store, {
        let project = project.clone();
        move |conn| {
            queries::projects::get(conn, &project)?;
            queries::access::project_access(conn, &project)
        }
    })
    .await?;
    let remove = current
        .iter()
        .map(|row| Ok((Some(row.role_id), row.holder()?)))
        .collect::<Result<Vec<_>, flag_store::StoreError>>()?;
    let add: Vec<(i32, Holder)> = request
        .roles
        .iter()
        .flat_map(|role| {
            role.users
                .iter()
                .map(|user| (role.id, Holder::User(*user)))
                .chain(role.groups.iter().map(|group| (role.id, Holder::Group(*group))))
        })
        .collect();
    let given: Vec<i32> = add.iter().map(|(role, _)| *role).collect();
    check_giving(ctx, caller, &project, &given).await?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::change_project_access(conn, &project, &remove, &add, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may give a role in a project: its owners, and administrators.
pub const ADD_PROJECT_ACCESS: Access = Access::Write(Permission::ProjectUserAccessWrite);

/// Gives `role` in `project` to more users and groups, keeping what others hold.
pub async fn add_project_access(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    role: i32,
    request: AddAccessIn,
) -> Result<(), AdminError> {
    let add: Vec<(i32, Holder)> = request
        .users
        .iter()
        .map(|user| (role, Holder::User(user.id)))
        .chain(request.groups.iter().map(|group| (role, Holder::Group(group.id))))
        .collect();
    check_giving(ctx, caller, &project, &[role]).await?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::change_project_access(conn, &project, &[], &add, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may take a user's or group's roles in a project away: its owners, and administrators.
pub const REMOVE_PROJECT_ACCESS: Access = Access::Write(Permission::ProjectUserAccessWrite);

/// Takes every role `holder` holds in `project` away.
pub async fn remove_project_access(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    holder: Holder,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::change_project_access(conn, &project, &[(None, holder)], &[], actor, now)
        })
        .await?;
    Ok(())
}

// Service accounts.

/// The built-in root role and custom root role that `role` gives: a custom one must exist and
/// be a root role, refused at `/rootRole` otherwise, as a body's mistake. Users, groups and
/// service accounts are given root roles through it.
pub(crate) async fn check_root_role(
    ctx: &Runtime,
    role: AnyRootRole,
) -> Result<(RootRole, Option<i32>), AdminError> {
    if let AnyRootRole::Custom(id) = role {
        let found = db::run(&ctx.store, move |conn| queries::users::role(conn, id))
            .await
            .map_err(|_| AdminError::invalid("/rootRole", format!("there is no role {id}")))?;
        if found.role_type != "root-custom" {
            return Err(AdminError::invalid(
                "/rootRole",
                format!("role {} is not a root role", found.name),
            ));
        }
    }
    Ok(role.parts())
}

/// The root role with id `id`, as a body's number is read.
async fn root_role(ctx: &Runtime, id: i32) -> Result<(RootRole, Option<i32>), AdminError> {
    let role =
        AnyRootRole::from_id(i64::from(id)).map_err(|error| AdminError::invalid("/rootRole", error))?;
    check_root_role(ctx, role).await
}

/// Who may list the service accounts.
pub const SERVICE_ACCOUNTS: Access = Access::AdminRead;

/// Every service account, and the root roles one can hold.
pub async fn service_accounts(ctx: &Runtime) -> Result<ServiceAccountsOut, AdminError> {
    let (accounts, roles) = db::run(&ctx.store, |conn| {
        Ok((
            queries::access::service_accounts(conn)?,
            queries::access::roles(conn)?,
        ))
    })
    .await?;
    Ok(ServiceAccountsOut {
        service_accounts: accounts.iter().map(ServiceAccountOut::from).collect(),
        root_roles: roles
            .into_iter()
            .filter(|role| role.role_type == "root" || role.role_type == "root-custom")
            .map(RoleOut::from)
            .collect(),
    })
}

/// Who may create a service account.
pub const CREATE_SERVICE_ACCOUNT: Access = Access::Admin;

/// Creates a service account: a username that no user has, and a root role.
pub async fn create_service_account(
    ctx: &Runtime,
    caller: &Caller,
    request: ServiceAccountIn,
) -> Result<ServiceAccountOut, AdminError> {
    let username = request.username.trim().to_owned();
    AdminError::check(input::person_problems(
        None,
        Some(&username),
        request.name.as_deref(),
    ))?;
    if username.is_empty() {
        return Err(AdminError::invalid("/username", "/username must not be empty"));
    }
    let (role, custom) = root_role(ctx, request.root_role).await?;
    let account = NewUser {
        name: request.name,
        username: Some(username),
        email: None,
        password_hash: None,
        root_role: role,
        created_at: ctx.now(),
    };
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::access::create_service_account(conn, &account, custom, actor, now)
        })
        .await
        .map_err(|error| match error {
            AdminError::NameExists(_) => {
                AdminError::NameExists("a user or service account with this username already exists".into())
            }
            other => other,
        })?;
    Ok(ServiceAccountOut::from(&row))
}

/// Who may change a service account.
pub const UPDATE_SERVICE_ACCOUNT: Access = Access::Admin;

/// Changes a service account's name or root role.
pub async fn update_service_account(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: ServiceAccountUpdate,
) -> Result<ServiceAccountOut, AdminError> {
    db::run(&ctx.store, move |conn| queries::access::service_account(conn, id)).await?;
    let role = match request.root_role {
        Some(role) => Some(root_role(ctx, role).await?),
        None => None,
    };
    let row = caller
        .write(ctx, move |conn, actor, now| {
            let changes = flag_store::models::UserChanges {
                name: request.name,
                email: None,
                root_role: role.map(|(built_in, _)| built_in),
                custom_root_role: None,
            };
            queries::users::update(conn, id, &changes, actor, now)?;
            match role {
                Some((_, custom)) => queries::access::set_custom_root_role(conn, id, custom, actor, now),
                None => queries::users::get(conn, id),
            }
        })
        .await?;
    Ok(ServiceAccountOut::from(&row))
}

/// Who may delete a service account.
pub const DELETE_SERVICE_ACCOUNT: Access = Access::Admin;

/// Deletes a service account: its tokens stop working at once.
pub async fn delete_service_account(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::delete_service_account(conn, id, actor, now)
        })
        .await
}

/// Who may list a service account's tokens.
pub const TOKENS: Access = Access::AdminRead;

/// A service account's tokens, without their secrets.
pub async fn tokens(ctx: &Runtime, id: i32) -> Result<PatsOut, AdminError> {
    let rows = db::run(&ctx.store, move |conn| {
        queries::access::service_account(conn, id)?;
        queries::access::tokens_of(conn, id)
    })
    .await?;
    Ok(PatsOut {
        pats: rows.into_iter().map(PatOut::from).collect(),
    })
}

/// Who may make a service account a token.
pub const CREATE_TOKEN: Access = Access::Admin;

/// Makes a service account a token that works until `expiresAt`; its secret is in this answer
/// only.
pub async fn create_token(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: PatIn,
) -> Result<PatOut, AdminError> {
    let description = request.description.trim().to_owned();
    if description.is_empty() {
        return Err(AdminError::invalid(
            "/description",
            "/description must not be empty",
        ));
    }
    let now = ctx.now();
    let expires_at = flag_store::time::stored(request.expires_at.0.naive_utc());
    if expires_at <= now {
        return Err(AdminError::invalid(
            "/expiresAt",
            "/expiresAt must be in the future",
        ));
    }
    let random = secrets::random_hex(28).map_err(|error| AdminError::Internal(error.to_string()))?;
    let secret = format!("{PERSONAL_TOKEN_PREFIX}{random}");
    let token = NewPersonalToken {
        secret_hash: secrets::verifier(&secret),
        description,
        user_id: id,
        expires_at,
        created_at: now,
    };
    let row = caller
        .write(ctx, move |conn, actor, _| {
            queries::access::service_account(conn, id)?;
            queries::access::create_token(conn, &token, actor)
        })
        .await?;
    Ok(PatOut {
        secret: Some(secret),
        ..PatOut::from(row)
    })
}

/// Who may delete a service account's token.
pub const DELETE_TOKEN: Access = Access::Admin;

/// Deletes a service account's token.
pub async fn delete_token(ctx: &Runtime, caller: &Caller, id: i32, token: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::access::service_account(conn, id)?;
            queries::access::delete_token(conn, id, token, actor, now)
        })
        .await
}
