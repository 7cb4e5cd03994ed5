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

/// How long a session that has ended keeps its ID token for the page that sends the browser on
/// to the provider's end-session endpoint.
pub const SIGN_OUT_TTL: chrono::Duration = chrono::Duration::minutes(10);

/// Ends a session and answers whether it was opened through the OpenID provider, as [`delete`]
/// does; but an unexpired session that holds an ID token is kept a little longer for
/// [`take_id_token`]: it moves to `handle_hash`, the hash of a one-time handle, and expires
/// `now`, so that neither its secret nor the handle signs anyone in. Sessions that expired more
/// than [`SIGN_OUT_TTL`] ago, with whatever ID tokens they kept, are forgotten.
pub fn end_keeping_id_token(
    conn: &mut DbConnection,
    token_hash: &str,
    handle_hash: &str,
    now: NaiveDateTime,
) -> Result<bool, StoreError> {
    crate::queries::write(conn, |conn| {
        diesel::delete(login_sessions::table.filter(login_sessions::expires_at.lt(now - SIGN_OUT_TTL)))
            .execute(conn)?;
        let kept = diesel::update(
            login_sessions::table
                .find(token_hash)
                .filter(login_sessions::expires_at.gt(now))
                .filter(login_sessions::id_token.is_not_null()),
        )
        .set((
            login_sessions::token_hash.eq(handle_hash),
            login_sessions::expires_at.eq(now),
        ))
        .returning(login_sessions::via_oidc)
        .get_results::<bool>(conn)?;
        match kept.first() {
            Some(&via_oidc) => Ok(via_oidc),
            None => delete(conn, token_hash),
        }
    })
}

/// Takes the ID token that an ended session keeps under `handle_hash` (see
/// [`end_keeping_id_token`]), once: the session is deleted as it is read. One that ended more
/// than [`SIGN_OUT_TTL`] ago is not returned. Whether it has ended is not asked again, since the
/// clocks of replicas may differ a little: the hash of a live session's secret would find that
/// session too, and only its holder knows the secret.
pub fn take_id_token(
    conn: &mut DbConnection,
    handle_hash: &str,
    now: NaiveDateTime,
) -> Result<Option<String>, StoreError> {
    // Read first, outside the write lock: a handle that names nothing (a forged or spent one)
    // costs one indexed read and never the database's one write lock.
    let kept: i64 = login_sessions::table
        .find(handle_hash)
        .filter(login_sessions::id_token.is_not_null())
        .count()
        .get_result(conn)?;
    if kept == 0 {
        return Ok(None);
    }
    crate::queries::write(conn, |conn| {
        let taken: Option<(Option<String>, NaiveDateTime)> = diesel::delete(
            login_sessions::table
                .find(handle_hash)
                .filter(login_sessions::id_token.is_not_null()),
        )
        .returning((login_sessions::id_token, login_sessions::expires_at))
        .get_result(conn)
        .optional()?;
        Ok(taken
            .filter(|(_, expires_at)| *expires_at >= now - SIGN_OUT_TTL)
            .and_then(|(id_token, _)| id_token))
    })
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
