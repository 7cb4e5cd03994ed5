//! Login sessions. Only a hash of the cookie's secret is stored.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{SessionRow, UserRow};
use crate::schema::{login_sessions, users};

/// Stores a session; a user that does not exist (deleted since logging in) is
/// [`StoreError::NotFound`].
pub fn create(conn: &mut DbConnection, session: &SessionRow) -> Result<(), StoreError> {
    // The user is the sessions table's only foreign key, so a foreign-key violation can only
    // mean that it does not exist.
    diesel::insert_into(login_sessions::table)
        .values(session)
        .execute(conn)
        .map_err(StoreError::on_missing_reference(|| {
            StoreError::not_found("user", session.user_id.to_string())
        }))?;
    Ok(())
}

/// The user of an unexpired session.
pub fn find_user(
    conn: &mut DbConnection,
    token_hash: &str,
    now: NaiveDateTime,
) -> Result<Option<UserRow>, StoreError> {
    Ok(login_sessions::table
        .inner_join(users::table)
        .filter(login_sessions::token_hash.eq(token_hash))
        .filter(login_sessions::expires_at.gt(now))
        .select(UserRow::as_select())
        .first(conn)
        .optional()?)
}

/// Ends a session; ending one that does not exist is not an error.
pub fn delete(conn: &mut DbConnection, token_hash: &str) -> Result<(), StoreError> {
    diesel::delete(login_sessions::table.find(token_hash)).execute(conn)?;
    Ok(())
}
