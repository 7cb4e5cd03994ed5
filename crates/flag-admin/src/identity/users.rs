//! Users and their root roles, for administrators.

pub mod types;

use flag_store::models::{NewUser, UserChanges};
use flag_store::queries;

use crate::identity::auth::{Access, Caller};
use crate::identity::users::types::UserOut;
use crate::identity::users::types::{CreateUserRequest, PasswordRequest, UpdateUserRequest, UsersResponse};
use crate::runtime::input;
use crate::{AdminError, Detail, identity::password, runtime::Runtime, runtime::db};

/// Who may list the users.
pub const LIST: Access = Access::AdminRead;

/// Every user, and the root roles.
pub async fn list(ctx: &Runtime) -> Result<UsersResponse, AdminError> {
    let (mut users, roles) = db::run(&ctx.store, |conn| {
        Ok((queries::users::list(conn)?, queries::access::roles(conn)?))
    })
    .await?;
    // Service accounts are listed at /api/admin/service-account, as in Unleash.
    users.retain(|user| !user.is_service);
    Ok(UsersResponse::new(users, roles))
}

/// A password's Argon2id hash, made on the CPU pool.
pub(crate) async fn hash_password(ctx: &Runtime, password: String) -> Result<String, AdminError> {
    ctx.cpu
        .run(move || password::hash(&password))
        .await?
        .map_err(|error| AdminError::Internal(format!("password hashing failed: {error}")))
}

/// Who may create a user.
pub const CREATE: Access = Access::Admin;

/// Creates a user with an email, a username or both, a root role, and optionally a password
/// that follows Unleash's rules.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateUserRequest,
) -> Result<UserOut, AdminError> {
    let email = request
        .email
        .map(|email| email.trim().to_owned())
        .filter(|email| !email.is_empty());
    let username = request
        .username
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty());
    if email.is_none() && username.is_none() {
        return Err(AdminError::invalid("/email", "give an email, a username or both"));
    }
    let mut details = input::person_problems(email.as_deref(), username.as_deref(), request.name.as_deref());
    if let Some(password) = &request.password {
        details.extend(
            password::broken_rules(password)
                .into_iter()
                .map(|rule| Detail::at("/password", rule)),
        );
    }
    AdminError::check(details)?;
    let password_hash = match request.password {
        Some(password) => Some(hash_password(ctx, password).await?),
        None => None,
    };
    let user = NewUser {
        name: request.name.map(|name| name.trim().to_owned()),
        username,
        email,
        password_hash,
        root_role: request.root_role.parts().0,
        created_at: ctx.now(),
    };
    crate::identity::teams::check_root_role(ctx, request.root_role).await?;
    let custom = request.root_role.parts().1;
    let row = caller
        .write(ctx, move |conn, actor, _| match custom {
            Some(custom) => queries::users::create_with_custom_root(conn, &user, custom, actor),
            None => queries::users::create(conn, &user, actor),
        })
        .await?;
    Ok(UserOut::from(row))
}

/// Who may change a user.
pub const UPDATE: Access = Access::Admin;

/// Changes a user's email, name or root role.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: UpdateUserRequest,
) -> Result<UserOut, AdminError> {
    AdminError::check(input::person_problems(
        request.email.as_deref(),
        None,
        request.name.as_deref(),
    ))?;
    if let Some(role) = request.root_role {
        crate::identity::teams::check_root_role(ctx, role).await?;
    }
    let changes = UserChanges {
        name: request.name.map(|name| name.trim().to_owned()),
        email: request.email.map(|email| email.trim().to_owned()),
        root_role: request.root_role.map(|role| role.parts().0),
        custom_root_role: request.root_role.map(|role| role.parts().1),
    };
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::users::update(conn, id, &changes, actor, now)
        })
        .await?;
    Ok(UserOut::from(row))
}

/// Who may set a user's password.
pub const CHANGE_PASSWORD: Access = Access::Admin;

/// Sets a user's password, which must follow Unleash's rules, and ends their sessions: how an
/// admin lets in a user who has none, such as one moved from Unleash through its API.
pub async fn change_password(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: PasswordRequest,
) -> Result<(), AdminError> {
    AdminError::check(
        password::broken_rules(&request.password)
            .into_iter()
            .map(|rule| Detail::at("/password", rule))
            .collect(),
    )?;
    let hash = hash_password(ctx, request.password).await?;
    caller
        .write(ctx, move |conn, _, _| {
            queries::users::change_password(conn, id, &hash)
        })
        .await
}

/// Who may delete a user.
pub const DELETE: Access = Access::Admin;

/// Deletes a user.
pub async fn delete(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::users::delete(conn, id, actor, now)
        })
        .await
}

/// Who may read one user.
pub const GET: Access = Access::AdminRead;

/// One user, with their root role.
pub async fn get(ctx: &Runtime, id: i32) -> Result<UserOut, AdminError> {
    let user = db::run(&ctx.store, move |conn| queries::users::get(conn, id)).await?;
    Ok(UserOut::from(user))
}

/// Who may search the users: anyone signed in to the admin API, as in Unleash, where adding
/// people to a project needs it.
pub const SEARCH: Access = Access::Read;

/// The users whose name contains `query`, or whose username or email starts with it, in any
/// letter case, as Unleash's user search matches them; by id.
pub async fn search(ctx: &Runtime, query: String) -> Result<Vec<UserOut>, AdminError> {
    let mut users = db::run(&ctx.store, queries::users::list).await?;
    // Service accounts are listed at /api/admin/service-account, as in Unleash.
    users.retain(|user| !user.is_service);
    let wanted = query.to_lowercase();
    Ok(users
        .into_iter()
        .filter(|user| {
            let lower = |text: &Option<String>| text.as_deref().map(str::to_lowercase);
            lower(&user.name).is_some_and(|name| name.contains(&wanted))
                || lower(&user.username).is_some_and(|username| username.starts_with(&wanted))
                || lower(&user.email).is_some_and(|email| email.starts_with(&wanted))
        })
        .map(UserOut::from)
        .collect())
}
