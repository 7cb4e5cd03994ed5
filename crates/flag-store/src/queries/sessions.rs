//! Login sessions. Only a hash of the cookie's secret is stored.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{OidcLoginRow, SessionRow, UserRow};
use crate::schema::{login_sessions, oidc_logins, users};

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

/// Ends a session; ending one that does not exist is not an error. Answers whether it was
/// opened through the OpenID provider.
pub fn delete(conn: &mut DbConnection, token_hash: &str) -> Result<bool, StoreError> {
    Ok(diesel::delete(login_sessions::table.find(token_hash))
        .returning(login_sessions::via_oidc)
        .get_results::<bool>(conn)?
        .first()
        .copied()
        .unwrap_or(false))
}

/// How long a login through an OpenID provider may take, from leaving for the provider to
/// coming back.
pub const OIDC_LOGIN_TTL: chrono::Duration = chrono::Duration::minutes(10);

/// Stores a login through an OpenID provider that is starting, and forgets those older than
/// [`OIDC_LOGIN_TTL`].
pub fn start_oidc_login(conn: &mut DbConnection, login: &OidcLoginRow) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        diesel::delete(
            oidc_logins::table.filter(oidc_logins::created_at.lt(login.created_at - OIDC_LOGIN_TTL)),
        )
        .execute(conn)?;
        diesel::insert_into(oidc_logins::table)
            .values(login)
            .execute(conn)?;
        Ok(())
    })
}

/// Takes the login whose cookie hashes to `cookie_hash`, once: it is deleted as it is read, so a
/// callback replayed finds nothing. One older than [`OIDC_LOGIN_TTL`] is not returned.
pub fn take_oidc_login(
    conn: &mut DbConnection,
    cookie_hash: &str,
    now: NaiveDateTime,
) -> Result<Option<OidcLoginRow>, StoreError> {
    crate::queries::write(conn, |conn| {
        let login: Option<OidcLoginRow> = diesel::delete(oidc_logins::table.find(cookie_hash))
            .returning(<OidcLoginRow as Selectable<crate::connection::MultiBackend>>::construct_selection())
            .get_result(conn)
            .optional()?;
        Ok(login.filter(|login| login.created_at >= now - OIDC_LOGIN_TTL))
    })
}
