//! Custom roles, groups, project access, service accounts and their personal access tokens, and
//! sealed secrets. Every write records an event, so the revision moves and every replica's
//! cached grants are read again.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::{DbConnection, MultiBackend};
use crate::error::StoreError;
use crate::models::{
    Actor, EventType, GroupRow, GroupUserRow, Holder, NewEvent, NewGroup, NewPersonalToken, NewUser,
    PersonalTokenRow, ProjectAccessRow, RolePermissionRow, RoleRow, SealedSecretRow, UserRow,
};
use crate::queries::{events, to_json};
use crate::schema::{
    group_users, groups, personal_access_tokens, project_access, public_signup_tokens, role_permissions,
    roles, sealed_secrets, users,
};

/// The highest id of a built-in role (Admin, Editor, Viewer, Owner, Member).
pub const BUILT_IN_ROLES: i32 = 5;

fn record(
    conn: &mut DbConnection,
    event_type: EventType,
    actor: &Actor,
    now: NaiveDateTime,
    project: Option<&str>,
    data: Option<serde_json::Value>,
    pre_data: Option<serde_json::Value>,
) -> Result<(), StoreError> {
    events::record(
        conn,
        &NewEvent {
            project: project.map(str::to_owned),
            data: data.map(|data| to_json("data", &data)).transpose()?,
            pre_data: pre_data.map(|data| to_json("pre_data", &data)).transpose()?,
            ..NewEvent::new(event_type, actor, now)
        },
    )
}

// Roles.

/// Every role, by id.
pub fn roles(conn: &mut DbConnection) -> Result<Vec<RoleRow>, StoreError> {
    Ok(roles::table
        .order(roles::id)
        .select(RoleRow::as_select())
        .load(conn)?)
}

/// Every custom role's permissions.
pub fn role_permissions(conn: &mut DbConnection) -> Result<Vec<RolePermissionRow>, StoreError> {
    Ok(role_permissions::table
        .order((
            role_permissions::role_id,
            role_permissions::permission,
            role_permissions::environment,
        ))
        .select(RolePermissionRow::as_select())
        .load(conn)?)
}

/// One role and its permissions.
pub fn role(conn: &mut DbConnection, id: i32) -> Result<(RoleRow, Vec<RolePermissionRow>), StoreError> {
    let role = crate::queries::users::role(conn, id)?;
    let permissions = role_permissions::table
        .filter(role_permissions::role_id.eq(id))
        .order((role_permissions::permission, role_permissions::environment))
        .select(RolePermissionRow::as_select())
        .load(conn)?;
    Ok((role, permissions))
}

fn role_json(role: &RoleRow, permissions: &[(String, String)]) -> serde_json::Value {
    serde_json::json!({
        "id": role.id,
        "name": role.name,
        "type": role.role_type,
        "description": role.description,
        "permissions": permissions
            .iter()
            .map(|(name, environment)| serde_json::json!({"name": name, "environment": environment}))
            .collect::<Vec<_>>(),
    })
}

fn put_permissions(
    conn: &mut DbConnection,
    id: i32,
    permissions: &[(String, String)],
) -> Result<(), StoreError> {
    diesel::delete(role_permissions::table.filter(role_permissions::role_id.eq(id))).execute(conn)?;
    let mut rows: Vec<RolePermissionRow> = permissions
        .iter()
        .map(|(permission, environment)| RolePermissionRow {
            role_id: id,
            permission: permission.clone(),
            environment: environment.clone(),
        })
        .collect();
    rows.sort();
    rows.dedup();
    for row in rows {
        diesel::insert_into(role_permissions::table)
            .values(&row)
            .execute(conn)?;
    }
    Ok(())
}

/// Creates a custom role (`root-custom` or `custom`) with its permissions; a taken name is
/// [`StoreError::Conflict`].
pub fn create_role(
    conn: &mut DbConnection,
    name: &str,
    description: Option<&str>,
    role_type: &str,
    permissions: &[(String, String)],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<RoleRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let role: RoleRow = diesel::insert_into(roles::table)
            .values((
                roles::name.eq(name),
                roles::role_type.eq(role_type),
                roles::description.eq(description),
            ))
            .returning(<RoleRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)?;
        put_permissions(conn, role.id, permissions)?;
        record(
            conn,
            EventType::RoleCreated,
            actor,
            now,
            None,
            Some(role_json(&role, permissions)),
            None,
        )?;
        Ok(role)
    })
}

fn custom(conn: &mut DbConnection, id: i32) -> Result<(RoleRow, Vec<RolePermissionRow>), StoreError> {
    let found = role(conn, id)?;
    if id <= BUILT_IN_ROLES {
        return Err(StoreError::Rejected {
            message: format!("the built-in role {} cannot be changed or deleted", found.0.name),
        });
    }
    Ok(found)
}

fn pairs(rows: &[RolePermissionRow]) -> Vec<(String, String)> {
    rows.iter()
        .map(|row| (row.permission.clone(), row.environment.clone()))
        .collect()
}

/// Changes a custom role's name, description and permissions; its type stays.
pub fn update_role(
    conn: &mut DbConnection,
    id: i32,
    name: &str,
    description: Option<&str>,
    permissions: &[(String, String)],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<RoleRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let (before, before_permissions) = custom(conn, id)?;
        let after: RoleRow = diesel::update(roles::table.find(id))
            .set((roles::name.eq(name), roles::description.eq(description)))
            .returning(<RoleRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)?;
        put_permissions(conn, id, permissions)?;
        record(
            conn,
            EventType::RoleUpdated,
            actor,
            now,
            None,
            Some(role_json(&after, permissions)),
            Some(role_json(&before, &pairs(&before_permissions))),
        )?;
        Ok(after)
    })
}

/// Deletes a custom role no user, group, project access or invite link holds; one in use is
/// [`StoreError::InUse`], naming what holds it.
pub fn delete_role(
    conn: &mut DbConnection,
    id: i32,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let (before, permissions) = custom(conn, id)?;
        let holders: i64 = users::table
            .filter(users::custom_root_role.eq(id))
            .count()
            .get_result(conn)?;
        let group_holders: i64 = groups::table
            .filter(groups::root_role_id.eq(id))
            .count()
            .get_result(conn)?;
        let project_holders: i64 = project_access::table
            .filter(project_access::role_id.eq(id))
            .count()
            .get_result(conn)?;
        let links: i64 = public_signup_tokens::table
            .filter(public_signup_tokens::role_id.eq(id))
            .count()
            .get_result(conn)?;
        if holders + group_holders + project_holders + links > 0 {
            return Err(StoreError::InUse {
                message: format!(
                    "the role {} is in use ({holders} users, {group_holders} groups, {project_holders} \
                     project assignments, {links} invite links); take it from them first",
                    before.name
                ),
            });
        }
        diesel::delete(roles::table.find(id)).execute(conn)?;
        record(
            conn,
            EventType::RoleDeleted,
            actor,
            now,
            None,
            None,
            Some(role_json(&before, &pairs(&permissions))),
        )
    })
}

// Groups.

/// Every group, by name.
pub fn groups(conn: &mut DbConnection) -> Result<Vec<GroupRow>, StoreError> {
    Ok(groups::table
        .order(groups::name)
        .select(GroupRow::as_select())
        .load(conn)?)
}

/// One group.
pub fn group(conn: &mut DbConnection, id: i32) -> Result<GroupRow, StoreError> {
    groups::table
        .find(id)
        .select(GroupRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("group", id.to_string()))
}

/// Every membership.
pub fn memberships(conn: &mut DbConnection) -> Result<Vec<GroupUserRow>, StoreError> {
    Ok(group_users::table
        .order((group_users::group_id, group_users::user_id))
        .select(GroupUserRow::as_select())
        .load(conn)?)
}

/// The groups `user` is a member of.
pub fn groups_of(conn: &mut DbConnection, user: i32) -> Result<Vec<GroupRow>, StoreError> {
    Ok(groups::table
        .inner_join(group_users::table)
        .filter(group_users::user_id.eq(user))
        .order(groups::name)
        .select(GroupRow::as_select())
        .load(conn)?)
}

fn group_json(group: &GroupRow, users: &[i32]) -> serde_json::Value {
    serde_json::json!({
        "id": group.id,
        "name": group.name,
        "description": group.description,
        "mappingsSSO": group.mappings_sso().unwrap_or_default(),
        "rootRole": group.root_role_id,
        "users": users,
    })
}

fn members(conn: &mut DbConnection, id: i32) -> Result<Vec<i32>, StoreError> {
    Ok(group_users::table
        .filter(group_users::group_id.eq(id))
        .order(group_users::user_id)
        .select(group_users::user_id)
        .load(conn)?)
}

fn put_members(
    conn: &mut DbConnection,
    id: i32,
    users: &[i32],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let kept = members(conn, id)?;
    diesel::delete(
        group_users::table
            .filter(group_users::group_id.eq(id))
            .filter(group_users::user_id.ne_all(users)),
    )
    .execute(conn)?;
    for user in users.iter().filter(|user| !kept.contains(user)) {
        diesel::insert_into(group_users::table)
            .values(&GroupUserRow {
                group_id: id,
                user_id: *user,
                created_at: now,
                created_by: Some(actor.name.clone()),
            })
            .execute(conn)
            .map_err(StoreError::on_missing_reference(|| {
                StoreError::not_found("user", user.to_string())
            }))?;
    }
    Ok(())
}

/// Creates a group with its members; a taken name is [`StoreError::Conflict`], a missing user
/// or role [`StoreError::NotFound`].
pub fn create_group(
    conn: &mut DbConnection,
    group: &NewGroup,
    users: &[i32],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<GroupRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let row: GroupRow = diesel::insert_into(groups::table)
            .values((
                group,
                groups::created_at.eq(now),
                groups::created_by.eq(&actor.name),
            ))
            .returning(<GroupRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)
            .map_err(StoreError::on_missing_reference(|| {
                StoreError::not_found("role", format!("{:?}", group.root_role_id))
            }))?;
        put_members(conn, row.id, users, actor, now)?;
        record(
            conn,
            EventType::GroupCreated,
            actor,
            now,
            None,
            Some(group_json(&row, users)),
            None,
        )?;
        Ok(row)
    })
}

/// Changes a group and sets its members to `users`.
pub fn update_group(
    conn: &mut DbConnection,
    id: i32,
    group: &NewGroup,
    users: &[i32],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<GroupRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = self::group(conn, id)?;
        let before_users = members(conn, id)?;
        let row: GroupRow = diesel::update(groups::table.find(id))
            .set(group)
            .returning(<GroupRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)
            .map_err(StoreError::on_missing_reference(|| {
                StoreError::not_found("role", format!("{:?}", group.root_role_id))
            }))?;
        put_members(conn, id, users, actor, now)?;
        record(
            conn,
            EventType::GroupUpdated,
            actor,
            now,
            None,
            Some(group_json(&row, users)),
            Some(group_json(&before, &before_users)),
        )?;
        Ok(row)
    })
}

/// Sets `user`'s memberships among the groups mapping single sign-on groups: a member of each
/// group whose mappings name one of `sso_groups`, and of no other mapped group. Groups without
/// mappings are left alone. Answers whether anything changed.
pub fn sync_sso_groups(
    conn: &mut DbConnection,
    user: i32,
    sso_groups: &[String],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<bool, StoreError> {
    crate::queries::write(conn, |conn| {
        let mut changed = false;
        for group in groups(conn)? {
            let mappings = group.mappings_sso()?;
            if mappings.is_empty() {
                continue;
            }
            let wanted = mappings.iter().any(|mapped| sso_groups.contains(mapped));
            let mut users = members(conn, group.id)?;
            let held = users.contains(&user);
            if wanted == held {
                continue;
            }
            let before = users.clone();
            if wanted {
                users.push(user);
            } else {
                users.retain(|member| *member != user);
            }
            put_members(conn, group.id, &users, actor, now)?;
            record(
                conn,
                EventType::GroupUpdated,
                actor,
                now,
                None,
                Some(group_json(&group, &users)),
                Some(group_json(&group, &before)),
            )?;
            changed = true;
        }
        Ok(changed)
    })
}

/// Deletes a group, its memberships and its project roles.
pub fn delete_group(
    conn: &mut DbConnection,
    id: i32,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = group(conn, id)?;
        let users = members(conn, id)?;
        diesel::delete(groups::table.find(id)).execute(conn)?;
        record(
            conn,
            EventType::GroupDeleted,
            actor,
            now,
            None,
            None,
            Some(group_json(&before, &users)),
        )
    })
}

// Project access.

/// Who holds which role in `project`.
pub fn project_access(conn: &mut DbConnection, project: &str) -> Result<Vec<ProjectAccessRow>, StoreError> {
    Ok(project_access::table
        .filter(project_access::project_id.eq(project))
        .order(project_access::id)
        .select(ProjectAccessRow::as_select())
        .load(conn)?)
}

/// The project roles `user` holds, directly or through the groups `groups`.
pub fn access_of(
    conn: &mut DbConnection,
    user: i32,
    groups: &[i32],
) -> Result<Vec<ProjectAccessRow>, StoreError> {
    Ok(project_access::table
        .filter(
            project_access::user_id
                .eq(user)
                .or(project_access::group_id.eq_any(groups)),
        )
        .order(project_access::id)
        .select(ProjectAccessRow::as_select())
        .load(conn)?)
}

fn access_json(rows: &[(i32, Holder)]) -> serde_json::Value {
    serde_json::Value::Array(
        rows.iter()
            .map(|(role, holder)| match holder {
                Holder::User(user) => serde_json::json!({"roleId": role, "userId": user}),
                Holder::Group(group) => serde_json::json!({"roleId": role, "groupId": group}),
            })
            .collect(),
    )
}

fn holders(rows: &[ProjectAccessRow]) -> Result<Vec<(i32, Holder)>, StoreError> {
    rows.iter().map(|row| Ok((row.role_id, row.holder()?))).collect()
}

/// Changes who holds which role in `project`: `remove` first (each holder's roles there, or one
/// role of it when named), then `add`. A missing project, role, user or group is
/// [`StoreError::NotFound`]; a role that is not a project role is [`StoreError::Rejected`].
pub fn change_project_access(
    conn: &mut DbConnection,
    project: &str,
    remove: &[(Option<i32>, Holder)],
    add: &[(i32, Holder)],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<Vec<ProjectAccessRow>, StoreError> {
    crate::queries::write(conn, |conn| {
        crate::queries::projects::get(conn, project)?;
        let before = holders(&project_access(conn, project)?)?;
        for (role, holder) in remove {
            let mut query = diesel::delete(project_access::table)
                .filter(project_access::project_id.eq(project))
                .into_boxed();
            query = match holder {
                Holder::User(user) => query.filter(project_access::user_id.eq(*user)),
                Holder::Group(group) => query.filter(project_access::group_id.eq(*group)),
            };
            if let Some(role) = role {
                query = query.filter(project_access::role_id.eq(*role));
            }
            query.execute(conn)?;
        }
        for (role, holder) in add {
            let found = crate::queries::users::role(conn, *role)?;
            if found.role_type != "project" && found.role_type != "custom" {
                return Err(StoreError::Rejected {
                    message: format!("{} is a root role, not a project role", found.name),
                });
            }
            let (user_id, group_id) = match holder {
                Holder::User(user) => {
                    crate::queries::users::get(conn, *user)?;
                    (Some(*user), None)
                }
                Holder::Group(group) => {
                    self::group(conn, *group)?;
                    (None, Some(*group))
                }
            };
            let held = project_access(conn, project)?
                .iter()
                .any(|row| row.role_id == *role && row.user_id == user_id && row.group_id == group_id);
            if !held {
                diesel::insert_into(project_access::table)
                    .values((
                        project_access::project_id.eq(project),
                        project_access::role_id.eq(*role),
                        project_access::user_id.eq(user_id),
                        project_access::group_id.eq(group_id),
                        project_access::created_at.eq(now),
                    ))
                    .execute(conn)?;
            }
        }
        let after_rows = project_access(conn, project)?;
        record(
            conn,
            EventType::ProjectAccessUpdated,
            actor,
            now,
            Some(project),
            Some(access_json(&holders(&after_rows)?)),
            Some(access_json(&before)),
        )?;
        Ok(after_rows)
    })
}

// Service accounts and personal access tokens.

/// Creates a service account: a user that cannot log in.
pub fn create_service_account(
    conn: &mut DbConnection,
    account: &NewUser,
    custom_root_role: Option<i32>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<UserRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let mut account = account.clone();
        account.password_hash = None;
        let row = crate::queries::users::insert_quietly(conn, &account)?;
        diesel::update(users::table.find(row.id))
            .set((
                users::is_service.eq(true),
                users::custom_root_role.eq(custom_root_role),
            ))
            .execute(conn)
            .map_err(StoreError::on_missing_reference(|| {
                StoreError::not_found("role", format!("{custom_root_role:?}"))
            }))?;
        let row = crate::queries::users::get(conn, row.id)?;
        record(
            conn,
            EventType::ServiceAccountCreated,
            actor,
            now,
            None,
            Some(service_account_json(&row)),
            None,
        )?;
        Ok(row)
    })
}

fn service_account_json(row: &UserRow) -> serde_json::Value {
    serde_json::json!({
        "id": row.id,
        "name": row.name,
        "username": row.username,
        "rootRole": row.custom_root_role.unwrap_or(row.root_role.id()),
    })
}

/// Changes a user's (or service account's) custom root role, or takes it away.
pub fn set_custom_root_role(
    conn: &mut DbConnection,
    user: i32,
    role: Option<i32>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<UserRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = crate::queries::users::get(conn, user)?;
        if let Some(role) = role {
            crate::queries::users::check_custom_root(conn, role)?;
        }
        diesel::update(users::table.find(user))
            .set(users::custom_root_role.eq(role))
            .execute(conn)?;
        let after = crate::queries::users::get(conn, user)?;
        let event = if after.is_service {
            EventType::ServiceAccountUpdated
        } else {
            EventType::UserUpdated
        };
        record(
            conn,
            event,
            actor,
            now,
            None,
            Some(service_account_json(&after)),
            Some(service_account_json(&before)),
        )?;
        Ok(after)
    })
}

/// Deletes a service account, its tokens and its roles.
pub fn delete_service_account(
    conn: &mut DbConnection,
    id: i32,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = service_account(conn, id)?;
        diesel::delete(users::table.find(id)).execute(conn)?;
        record(
            conn,
            EventType::ServiceAccountDeleted,
            actor,
            now,
            None,
            None,
            Some(service_account_json(&before)),
        )
    })
}

/// One service account; a user who is not one is [`StoreError::NotFound`].
pub fn service_account(conn: &mut DbConnection, id: i32) -> Result<UserRow, StoreError> {
    let row = crate::queries::users::get(conn, id)?;
    if row.is_service {
        Ok(row)
    } else {
        Err(StoreError::not_found("service account", id.to_string()))
    }
}

/// Every service account, by id.
pub fn service_accounts(conn: &mut DbConnection) -> Result<Vec<UserRow>, StoreError> {
    Ok(crate::queries::users::list(conn)?
        .into_iter()
        .filter(|row| row.is_service)
        .collect())
}

/// The personal access tokens of `user`, oldest first.
pub fn tokens_of(conn: &mut DbConnection, user: i32) -> Result<Vec<PersonalTokenRow>, StoreError> {
    Ok(personal_access_tokens::table
        .filter(personal_access_tokens::user_id.eq(user))
        .order(personal_access_tokens::id)
        .select(PersonalTokenRow::as_select())
        .load(conn)?)
}

fn token_json(row: &PersonalTokenRow) -> serde_json::Value {
    serde_json::json!({
        "id": row.id,
        "description": row.description,
        "userId": row.user_id,
        "expiresAt": crate::time::stored(row.expires_at).and_utc().to_rfc3339(),
    })
}

/// Stores a personal access token for an existing user.
pub fn create_token(
    conn: &mut DbConnection,
    token: &NewPersonalToken,
    actor: &Actor,
) -> Result<PersonalTokenRow, StoreError> {
    crate::queries::write(conn, |conn| {
        crate::queries::users::get(conn, token.user_id)?;
        let row: PersonalTokenRow = diesel::insert_into(personal_access_tokens::table)
            .values(token)
            .returning(<PersonalTokenRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)?;
        record(
            conn,
            EventType::PatCreated,
            actor,
            token.created_at,
            None,
            Some(token_json(&row)),
            None,
        )?;
        Ok(row)
    })
}

/// Deletes `user`'s personal access token `id`.
pub fn delete_token(
    conn: &mut DbConnection,
    user: i32,
    id: i32,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before: PersonalTokenRow = personal_access_tokens::table
            .find(id)
            .filter(personal_access_tokens::user_id.eq(user))
            .select(PersonalTokenRow::as_select())
            .first(conn)
            .map_err(StoreError::or_not_found("personal access token", id.to_string()))?;
        diesel::delete(personal_access_tokens::table.find(id)).execute(conn)?;
        record(
            conn,
            EventType::PatDeleted,
            actor,
            now,
            None,
            None,
            Some(token_json(&before)),
        )
    })
}

/// The user a personal access token acts as, with the token, when its verifier is stored and
/// it has not expired at `now`.
pub fn find_token(
    conn: &mut DbConnection,
    secret_hash: &str,
    now: NaiveDateTime,
) -> Result<Option<(PersonalTokenRow, UserRow)>, StoreError> {
    let token: Option<PersonalTokenRow> = personal_access_tokens::table
        .filter(personal_access_tokens::secret_hash.eq(secret_hash))
        .filter(personal_access_tokens::expires_at.gt(now))
        .select(PersonalTokenRow::as_select())
        .first(conn)
        .optional()?;
    let Some(token) = token else {
        return Ok(None);
    };
    let user = crate::queries::users::get(conn, token.user_id)?;
    Ok(Some((token, user)))
}

// Sealed secrets.

/// Whose sealed secret an API token's is, by the token's verifier.
pub fn api_token_owner(verifier: &str) -> String {
    format!("api-token:{verifier}")
}

/// Whose sealed secret the OpenID provider's client secret is.
pub const OIDC_CLIENT_SECRET: &str = "oidc-client-secret";

/// The sealed secret of `owner`.
pub fn sealed(conn: &mut DbConnection, owner: &str) -> Result<Option<String>, StoreError> {
    Ok(sealed_secrets::table
        .find(owner)
        .select(sealed_secrets::sealed)
        .first(conn)
        .optional()?)
}

/// Every sealed secret.
pub fn all_sealed(conn: &mut DbConnection) -> Result<Vec<SealedSecretRow>, StoreError> {
    Ok(sealed_secrets::table
        .order(sealed_secrets::owner)
        .select(SealedSecretRow::as_select())
        .load(conn)?)
}

/// Stores or replaces `owner`'s sealed secret. Secrets are kept out of the audit log.
pub fn put_sealed(conn: &mut DbConnection, owner: &str, sealed: &str) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        diesel::delete(sealed_secrets::table.find(owner)).execute(conn)?;
        diesel::insert_into(sealed_secrets::table)
            .values(&SealedSecretRow {
                owner: owner.to_owned(),
                sealed: sealed.to_owned(),
            })
            .execute(conn)?;
        Ok(())
    })
}

/// Removes `owner`'s sealed secret, if any.
pub fn delete_sealed(conn: &mut DbConnection, owner: &str) -> Result<(), StoreError> {
    diesel::delete(sealed_secrets::table.find(owner)).execute(conn)?;
    Ok(())
}

/// Seals every sealed secret again with `reseal` (a key rotation), reading and writing them
/// in one write, so that no secret sealed meanwhile is lost; a secret `reseal` refuses (why, as
/// text) refuses the whole rotation. Answers how many were sealed again.
pub fn reseal(
    conn: &mut DbConnection,
    mut reseal: impl FnMut(&SealedSecretRow) -> Result<String, String>,
) -> Result<usize, StoreError> {
    crate::queries::write(conn, |conn| {
        let rows = all_sealed(conn)?;
        for row in &rows {
            let sealed = reseal(row).map_err(|message| StoreError::Rejected { message })?;
            diesel::update(sealed_secrets::table.find(&row.owner))
                .set(sealed_secrets::sealed.eq(sealed))
                .execute(conn)?;
        }
        Ok(rows.len())
    })
}
