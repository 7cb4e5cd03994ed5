//! Users and roles.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::{DbConnection, MultiBackend};

use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, NewUser, RoleRow, UserChanges, UserRow};
use crate::queries::{events, to_json};
use crate::schema::{login_sessions, roles, users};

/// Inserts a user, lower-casing the email. The unique indexes decide: a taken email (in any
/// letter case) or username is [`StoreError::Conflict`], even when two signups race.
pub fn create(conn: &mut DbConnection, user: &NewUser, actor: &Actor) -> Result<UserRow, StoreError> {
    let mut user = user.clone();
    user.email = user.email.map(|email| flag_eval::fold_case(&email));
    crate::queries::write(conn, |conn| insert(conn, &user, actor))
}

/// How many users there are.
pub fn count(conn: &mut DbConnection) -> Result<i64, StoreError> {
    Ok(users::table.count().get_result(conn)?)
}

/// Inserts `user` when there is no user at all, as `create` does; answers whether it did. Of
/// several replicas starting on a new database at once, exactly one creates the first user.
pub fn create_if_none(conn: &mut DbConnection, user: &NewUser, actor: &Actor) -> Result<bool, StoreError> {
    let mut user = user.clone();
    user.email = user.email.map(|email| flag_eval::fold_case(&email));
    crate::queries::write(conn, |conn| {
        if count(conn)? > 0 {
            return Ok(false);
        }
        insert(conn, &user, actor).map(|_| true)
    })
}

/// Inserts a user as [`create`] does, holding the custom root role `custom` (whose
/// permissions add to the built-in root role's), in one write.
pub fn create_with_custom_root(
    conn: &mut DbConnection,
    user: &NewUser,
    custom: i32,
    actor: &Actor,
) -> Result<UserRow, StoreError> {
    let mut user = user.clone();
    user.email = user.email.map(|email| flag_eval::fold_case(&email));
    crate::queries::write(conn, |conn| {
        check_custom_root(conn, custom)?;
        let row = insert_quietly(conn, &user)?;
        diesel::update(users::table.find(row.id))
            .set(users::custom_root_role.eq(Some(custom)))
            .execute(conn)?;
        let row = get(conn, row.id)?;
        events::record(
            conn,
            &NewEvent {
                data: Some(to_json("data", &event_json(&row))?),
                ..NewEvent::new(EventType::UserCreated, actor, row.created_at)
            },
        )?;
        Ok(row)
    })
}

/// Refuses a role that is not a custom root role.
pub(crate) fn check_custom_root(conn: &mut DbConnection, id: i32) -> Result<(), StoreError> {
    let found = role(conn, id)?;
    if found.role_type == "root-custom" {
        Ok(())
    } else {
        Err(StoreError::Rejected {
            message: format!("role {} is not a root role", found.name),
        })
    }
}

/// The insert and its event, for callers already in a transaction.
pub(crate) fn insert(conn: &mut DbConnection, user: &NewUser, actor: &Actor) -> Result<UserRow, StoreError> {
    let row = insert_quietly(conn, user)?;
    events::record(
        conn,
        &NewEvent {
            data: Some(to_json("data", &event_json(&row))?),
            ..NewEvent::new(EventType::UserCreated, actor, row.created_at)
        },
    )?;
    Ok(row)
}

/// The insert alone, for callers that record an event of their own.
pub(crate) fn insert_quietly(conn: &mut DbConnection, user: &NewUser) -> Result<UserRow, StoreError> {
    // The root role is the users table's only foreign key, so a foreign-key violation can only
    // mean that it does not exist.
    let row: UserRow = diesel::insert_into(users::table)
        .values(user)
        .returning(<UserRow as Selectable<MultiBackend>>::construct_selection())
        .get_result(conn)
        .map_err(StoreError::on_missing_reference(|| {
            StoreError::not_found("role", user.root_role.id().to_string())
        }))?;
    Ok(row)
}

/// One user.
pub fn get(conn: &mut DbConnection, id: i32) -> Result<UserRow, StoreError> {
    users::table
        .find(id)
        .select(UserRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("user", id.to_string()))
}

/// The user who logs in as `login`: the user with that email (any letter case) if there is one,
/// otherwise the user with that username, as Unleash resolves it. A username that equals someone
/// else's email can never take over that person's login.
pub fn find_by_login(conn: &mut DbConnection, login: &str) -> Result<Option<UserRow>, StoreError> {
    let by_email = users::table
        .filter(users::email.eq(flag_eval::fold_case(login)))
        .select(UserRow::as_select())
        .first(conn)
        .optional()?;
    if by_email.is_some() {
        return Ok(by_email);
    }
    Ok(users::table
        .filter(users::username.eq(login))
        .select(UserRow::as_select())
        .first(conn)
        .optional()?)
}

/// All users, by id.
pub fn list(conn: &mut DbConnection) -> Result<Vec<UserRow>, StoreError> {
    Ok(users::table
        .order(users::id.asc())
        .select(UserRow::as_select())
        .load(conn)?)
}

/// Sets a user's password, as an admin does, and ends the user's sessions, as Unleash does.
pub fn change_password(conn: &mut DbConnection, id: i32, hash: &str) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let changed = diesel::update(users::table.find(id))
            .set(users::password_hash.eq(hash))
            .execute(conn)?;
        if changed == 0 {
            return Err(StoreError::NotFound {
                entity: "user",
                key: id.to_string(),
            });
        }
        diesel::delete(login_sessions::table.filter(login_sessions::user_id.eq(id))).execute(conn)?;
        Ok(())
    })
}

/// Replaces a user's password hash: a bcrypt hash moved from Unleash, by an Argon2id hash of the
/// same password at the user's first login. Not an audit event: the password did not change.
pub fn replace_password_hash(conn: &mut DbConnection, id: i32, hash: &str) -> Result<(), StoreError> {
    diesel::update(users::table.find(id))
        .set(users::password_hash.eq(hash))
        .execute(conn)?;
    Ok(())
}

/// Records a login attempt: success resets the failure count and sets `seen_at`.
pub fn record_login(
    conn: &mut DbConnection,
    id: i32,
    success: bool,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let target = users::table.find(id);
    if success {
        diesel::update(target)
            .set((users::login_attempts.eq(0), users::seen_at.eq(Some(now))))
            .execute(conn)?;
    } else {
        diesel::update(target)
            .set(users::login_attempts.eq(users::login_attempts + 1))
            .execute(conn)?;
    }
    Ok(())
}

/// One role.
pub fn role(conn: &mut DbConnection, id: i32) -> Result<RoleRow, StoreError> {
    roles::table
        .find(id)
        .select(RoleRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("role", id.to_string()))
}

/// Changes a user's name, email or root role (Admin 1, Editor 2, Viewer 3). The email is
/// lower-cased, and one another user has (in any letter case) is [`StoreError::Conflict`].
pub fn update(
    conn: &mut DbConnection,
    id: i32,
    changes: &UserChanges,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<UserRow, StoreError> {
    let mut changes = changes.clone();
    changes.email = changes.email.map(|email| flag_eval::fold_case(&email));
    crate::queries::write(conn, |conn| {
        if let Some(root_role) = changes.root_role {
            let role = role(conn, root_role.id())?;
            if role.role_type != "root" {
                return Err(StoreError::Rejected {
                    message: format!("role {} is not a root role", role.name),
                });
            }
        }
        if let Some(Some(custom)) = changes.custom_root_role {
            check_custom_root(conn, custom)?;
        }
        let before = get(conn, id)?;
        if changes != UserChanges::default() {
            diesel::update(users::table.find(id))
                .set(&changes)
                .execute(conn)?;
        }
        let after = get(conn, id)?;
        events::record(
            conn,
            &NewEvent {
                data: Some(to_json("data", &event_json(&after))?),
                pre_data: Some(to_json("pre_data", &event_json(&before))?),
                ..NewEvent::new(EventType::UserUpdated, actor, now)
            },
        )?;
        Ok(after)
    })
}

/// Deletes a user, their sessions and their signup-token links.
pub fn delete(conn: &mut DbConnection, id: i32, actor: &Actor, now: NaiveDateTime) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        diesel::delete(users::table.find(id)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(to_json("pre_data", &event_json(&before))?),
                ..NewEvent::new(EventType::UserDeleted, actor, now)
            },
        )
    })
}

/// A user as Unleash records one in an event: `{id, name, username, email, rootRole}`.
fn event_json(user: &UserRow) -> serde_json::Value {
    serde_json::json!({
        "id": user.id,
        "name": user.name,
        "username": user.username,
        "email": user.email,
        "rootRole": user.custom_root_role.unwrap_or(user.root_role.id()),
    })
}

/// The one-time dialogs `user_id` has closed, as `(dialog, seen)`.
pub fn splashes(conn: &mut DbConnection, user_id: i32) -> Result<Vec<(String, bool)>, StoreError> {
    use crate::schema::user_splashes;
    Ok(user_splashes::table
        .filter(user_splashes::user_id.eq(user_id))
        .order(user_splashes::splash_id.asc())
        .select((user_splashes::splash_id, user_splashes::seen))
        .load(conn)?)
}

/// Records that `user_id` closed the dialog `splash_id`.
pub fn close_splash(conn: &mut DbConnection, user_id: i32, splash_id: &str) -> Result<(), StoreError> {
    use crate::schema::user_splashes;
    crate::queries::write(conn, |conn| {
        diesel::delete(user_splashes::table.find((user_id, splash_id))).execute(conn)?;
        diesel::insert_into(user_splashes::table)
            .values((
                user_splashes::user_id.eq(user_id),
                user_splashes::splash_id.eq(splash_id),
                user_splashes::seen.eq(true),
            ))
            .execute(conn)?;
        Ok(())
    })
}

/// The users with these ids, by id.
pub fn with_ids(conn: &mut DbConnection, ids: &[i32]) -> Result<Vec<UserRow>, StoreError> {
    Ok(users::table
        .filter(users::id.eq_any(ids))
        .order(users::id.asc())
        .select(UserRow::as_select())
        .load(conn)?)
}

/// The user with `email`, in any letter case.
pub fn find_by_email(conn: &mut DbConnection, email: &str) -> Result<Option<UserRow>, StoreError> {
    Ok(users::table
        .filter(users::email.eq(flag_eval::fold_case(email)))
        .select(UserRow::as_select())
        .first(conn)
        .optional()?)
}
