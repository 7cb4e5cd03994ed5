//! API tokens. Only a verifier (hex SHA-256) of each secret is stored; hashing and the
//! constant-time comparison are the caller's.

use diesel::prelude::*;

use crate::connection::{DbConnection, MultiBackend};

use crate::error::StoreError;
use crate::models::{Actor, ApiTokenRow, EventType, NewApiToken, NewEvent, StoredApiToken, UnreadableToken};
use crate::queries::{events, to_json};
use crate::schema::api_tokens;

/// Stores a token.
pub fn create(
    conn: &mut DbConnection,
    token: &NewApiToken,
    actor: &Actor,
) -> Result<ApiTokenRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let row: ApiTokenRow = diesel::insert_into(api_tokens::table)
            .values(token)
            .returning(<ApiTokenRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)?;
        let shown = event_json(&row, row.expires_at);
        events::record(
            conn,
            &NewEvent {
                environment: Some(row.environment.clone()),
                project: shown["project"].as_str().map(str::to_owned),
                data: Some(to_json("data", &shown)?),
                ..NewEvent::new(EventType::ApiTokenCreated, actor, row.created_at)
            },
        )?;
        Ok(row)
    })
}

/// Stores a token unless one with the same secret is stored already; says whether it stored it.
/// The check and the write happen under the write lock, so replicas seeding the same
/// configured tokens at the same moment store each once.
pub fn create_unless_stored(
    conn: &mut DbConnection,
    token: &NewApiToken,
    actor: &Actor,
) -> Result<bool, StoreError> {
    crate::queries::write(conn, |conn| {
        if find_by_hash(conn, &token.secret_hash)?.is_some() {
            return Ok(false);
        }
        create(conn, token, actor).map(|_| true)
    })
}

/// Stores a token only when no token of its type exists; says whether it stored it. The first
/// start's generated admin token is made once, however many replicas start together.
pub fn create_if_none_of_type(
    conn: &mut DbConnection,
    token: &NewApiToken,
    actor: &Actor,
) -> Result<bool, StoreError> {
    crate::queries::write(conn, |conn| {
        let existing: i64 = api_tokens::table
            .filter(api_tokens::token_type.eq(token.token_type))
            .count()
            .get_result(conn)?;
        if existing > 0 {
            return Ok(false);
        }
        create(conn, token, actor).map(|_| true)
    })
}

/// The token whose secret hashes to `secret_hash`.
pub fn find_by_hash(conn: &mut DbConnection, secret_hash: &str) -> Result<Option<ApiTokenRow>, StoreError> {
    Ok(api_tokens::table
        .filter(api_tokens::secret_hash.eq(secret_hash))
        .select(ApiTokenRow::as_select())
        .first(conn)
        .optional()?)
}

/// All tokens, by id. A token whose stored type or projects do not read fails the whole list
/// with [`StoreError::Corrupt`] naming it.
pub fn list(conn: &mut DbConnection) -> Result<Vec<ApiTokenRow>, StoreError> {
    Ok(api_tokens::table
        .order(api_tokens::id.asc())
        .select(ApiTokenRow::as_select())
        .load(conn)?)
}

/// All tokens, by id, each read on its own: a token whose stored type or projects do not read
/// is an [`UnreadableToken`], which still gives its verifier and expiry, and the others read.
/// For checking credentials, where one corrupt row must not stop every other token working.
pub fn list_each(conn: &mut DbConnection) -> Result<Vec<Result<ApiTokenRow, UnreadableToken>>, StoreError> {
    let stored: Vec<StoredApiToken> = api_tokens::table
        .order(api_tokens::id.asc())
        .select(StoredApiToken::as_select())
        .load(conn)?;
    Ok(stored.into_iter().map(StoredApiToken::read).collect())
}

/// Deletes a token.
pub fn delete(
    conn: &mut DbConnection,
    id: i32,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before: ApiTokenRow = api_tokens::table
            .find(id)
            .select(ApiTokenRow::as_select())
            .first(conn)
            .map_err(StoreError::or_not_found("api token", id.to_string()))?;
        diesel::delete(api_tokens::table.find(id)).execute(conn)?;
        crate::queries::access::delete_sealed(
            conn,
            &crate::queries::access::api_token_owner(&before.secret_hash),
        )?;
        let shown = event_json(&before, before.expires_at);
        events::record(
            conn,
            &NewEvent {
                environment: Some(before.environment.clone()),
                project: shown["project"].as_str().map(str::to_owned),
                pre_data: Some(to_json("pre_data", &shown)?),
                ..NewEvent::new(EventType::ApiTokenDeleted, actor, now)
            },
        )
    })
}

/// Sets when the token whose secret hashes to `secret_hash` stops working; a time in the past
/// revokes it. Answers whether such a token exists.
pub fn set_expiry(
    conn: &mut DbConnection,
    secret_hash: &str,
    expires_at: chrono::NaiveDateTime,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<bool, StoreError> {
    crate::queries::write(conn, |conn| {
        let Some(before) = find_by_hash(conn, secret_hash)? else {
            return Ok(false);
        };
        diesel::update(api_tokens::table.find(before.id))
            .set(api_tokens::expires_at.eq(Some(expires_at)))
            .execute(conn)?;
        let shown = event_json(&before, Some(expires_at));
        events::record(
            conn,
            &NewEvent {
                environment: Some(before.environment.clone()),
                project: shown["project"].as_str().map(str::to_owned),
                pre_data: Some(to_json("pre_data", &event_json(&before, before.expires_at))?),
                ..NewEvent::new(EventType::ApiTokenUpdated, actor, now).with_data(&shown)?
            },
        )?;
        Ok(true)
    })
}

/// How Unleash's `project` field names a token's projects: joined with commas (`*` for every
/// project, `a,b` for two), in answers and events alike.
pub fn project_field(projects: &[String]) -> String {
    projects.join(",")
}

/// A token as Unleash records it in an event: everything but its secret, which is not kept
/// here, with `expires_at` as its expiry; `project` is its projects joined by commas.
fn event_json(row: &ApiTokenRow, expires_at: Option<chrono::NaiveDateTime>) -> serde_json::Value {
    serde_json::json!({
        "tokenName": row.token_name,
        "type": row.token_type,
        "project": project_field(row.projects.as_slice()),
        "projects": row.projects,
        "environment": row.environment,
        "expiresAt": expires_at.map(crate::time::iso),
        "createdAt": crate::time::iso(row.created_at),
        "alias": null,
        "seenAt": row.seen_at.map(crate::time::iso),
    })
}
