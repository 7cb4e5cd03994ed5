//! Unleash's own PostgreSQL database (6.x to 8.x), read in one read-only transaction, for what its
//! admin API never shows: users' password hashes, integrations' secret parameters, API tokens'
//! true types, and the whole audit log.

use std::fmt;

use chrono::{NaiveDate, NaiveDateTime};
use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::{Integer, Nullable, Text, Timestamp};

use super::Event;
use crate::error::StoreError;

/// The schemas read here: the first migration of each major release and the newest of 8.2.0, by
/// the names in Unleash's `migrations` table (each a timestamp, so they sort by age).
const RELEASES: [(&str, &str); 4] = [
    ("/20240506141345-lifecycle-initial-stage", "6"),
    ("/20250424185110-unknown-flags", "7"),
    ("/20260601105104-add-sunset-feature-type", "8"),
    ("/20260902120000-add-user-agent-to-login-history", "8.2"),
];

/// An integration's parameters.
pub type Parameters = serde_json::Map<String, serde_json::Value>;

/// An Unleash database, open read-only.
pub struct UnleashDatabase {
    conn: PgConnection,
    /// The release its schema is of (`6`, `7`, `8`), with its newest migration.
    pub version: String,
}

impl fmt::Debug for UnleashDatabase {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("UnleashDatabase")
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// A password hash, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct UnleashUser {
    /// Unleash's id.
    pub id: i32,
    /// Email, lower-cased.
    pub email: Option<String>,
    /// Username.
    pub username: Option<String>,
    /// The bcrypt hash; none for a user who never set a password.
    pub password_hash: Option<String>,
}

impl fmt::Debug for UnleashUser {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("UnleashUser")
            .field("id", &self.id)
            .field("email", &self.email)
            .finish_non_exhaustive()
    }
}

/// An API token as Unleash stores it: its secret in clear, never shown.
#[derive(Clone, PartialEq, Eq)]
pub struct UnleashToken {
    /// The secret.
    pub secret: String,
    /// Its true type (`backend` tokens are listed as `client` by the API).
    pub token_type: String,
}

impl fmt::Debug for UnleashToken {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("UnleashToken")
            .field("token_type", &self.token_type)
            .finish_non_exhaustive()
    }
}

#[derive(QueryableByName)]
struct Newest {
    #[diesel(sql_type = Nullable<Text>)]
    name: Option<String>,
}

#[derive(QueryableByName)]
struct UserIn {
    #[diesel(sql_type = Integer)]
    id: i32,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    username: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    password_hash: Option<String>,
}

#[derive(QueryableByName)]
struct TokenIn {
    #[diesel(sql_type = Text)]
    secret: String,
    #[diesel(sql_type = Text)]
    token_type: String,
}

#[derive(QueryableByName)]
struct AddonIn {
    #[diesel(sql_type = Integer)]
    id: i32,
    #[diesel(sql_type = Nullable<Text>)]
    parameters: Option<String>,
}

#[derive(QueryableByName)]
struct EventIn {
    #[diesel(sql_type = Timestamp)]
    created_at: NaiveDateTime,
    #[diesel(sql_type = Text)]
    event_type: String,
    #[diesel(sql_type = Text)]
    created_by: String,
    #[diesel(sql_type = Nullable<Integer>)]
    created_by_user_id: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    project: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    environment: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    feature_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    data: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pre_data: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    tags: Option<String>,
}

/// The release a schema whose newest migration is `newest` is of, or why it is none read here.
fn release(newest: &str) -> Result<String, String> {
    let (first, _) = RELEASES[0];
    let (last, _) = RELEASES[RELEASES.len() - 1];
    if newest < first {
        return Err(format!(
            "the database's schema is older than Unleash 6 (its newest migration is {newest}); \
             upgrade Unleash to 6 or later first, or migrate through the API alone"
        ));
    }
    if newest > last {
        return Err(format!(
            "the database's schema is newer than Unleash 8.2 (its newest migration is {newest}), \
             which this version of Halyard does not know; migrate through the API alone"
        ));
    }
    let major = RELEASES
        .iter()
        .rev()
        .find(|(name, _)| newest >= *name)
        .map_or("6", |(_, major)| major);
    let major = if major == "8.2" { "8" } else { major };
    Ok(format!(
        "Unleash {major} (newest migration {})",
        newest.trim_start_matches('/')
    ))
}

impl UnleashDatabase {
    /// Connects to `url`, opens one read-only snapshot and tells the schema's release; refuses a
    /// schema older than Unleash 6 or newer than the last one known, naming its newest migration.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        let mut conn = PgConnection::establish(url)?;
        conn.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
        let newest: Vec<Newest> = diesel::sql_query("SELECT max(name)::text AS name FROM migrations")
            .load(&mut conn)
            .map_err(|error| StoreError::Rejected {
                message: format!("the database has no Unleash migrations table: {error}"),
            })?;
        let newest = newest
            .into_iter()
            .next()
            .and_then(|row| row.name)
            .ok_or_else(|| StoreError::Rejected {
                message: "the database's migrations table is empty: it is not an Unleash database".to_owned(),
            })?;
        let version = release(&newest).map_err(|message| StoreError::Rejected { message })?;
        Ok(Self { conn, version })
    }

    /// Every user who can sign in (not deleted, not a service account or the system's own), with
    /// their password hash.
    pub fn users(&mut self) -> Result<Vec<UnleashUser>, StoreError> {
        let rows: Vec<UserIn> = diesel::sql_query(
            "SELECT id, lower(email)::text AS email, username::text AS username, \
                    password_hash::text AS password_hash \
             FROM users WHERE deleted_at IS NULL AND NOT is_service AND NOT is_system ORDER BY id",
        )
        .load(&mut self.conn)?;
        Ok(rows
            .into_iter()
            .map(|row| UnleashUser {
                id: row.id,
                email: row.email,
                username: row.username,
                password_hash: row.password_hash,
            })
            .collect())
    }

    /// Every API token's secret and true type.
    pub fn tokens(&mut self) -> Result<Vec<UnleashToken>, StoreError> {
        let rows: Vec<TokenIn> = diesel::sql_query(
            "SELECT secret::text AS secret, lower(type)::text AS token_type FROM api_tokens",
        )
        .load(&mut self.conn)?;
        Ok(rows
            .into_iter()
            .map(|row| UnleashToken {
                secret: row.secret,
                token_type: row.token_type,
            })
            .collect())
    }

    /// Each integration's parameters in clear, by id.
    pub fn addon_parameters(&mut self) -> Result<Vec<(i32, Parameters)>, StoreError> {
        let rows: Vec<AddonIn> = diesel::sql_query("SELECT id, parameters::text AS parameters FROM addons")
            .load(&mut self.conn)?;
        rows.into_iter()
            .map(|row| {
                let parameters = match row.parameters {
                    Some(text) => crate::queries::from_json("addon", row.id, "parameters", &text)?,
                    None => serde_json::Map::new(),
                };
                Ok((row.id, parameters))
            })
            .collect()
    }

    /// The audit log from `since` on (all of it when none), oldest first.
    pub fn events(&mut self, since: Option<NaiveDate>) -> Result<Vec<Event>, StoreError> {
        let since = since
            .unwrap_or(NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default())
            .and_time(chrono::NaiveTime::MIN);
        let rows: Vec<EventIn> = diesel::sql_query(
            "SELECT (created_at AT TIME ZONE 'UTC') AS created_at, type::text AS event_type, \
                    created_by::text AS created_by, created_by_user_id, project, environment, feature_name, \
                    data::text AS data, pre_data::text AS pre_data, tags::text AS tags \
             FROM events WHERE created_at >= ($1 AT TIME ZONE 'UTC') ORDER BY created_at, id",
        )
        .bind::<Timestamp, _>(since)
        .load(&mut self.conn)?;
        Ok(rows
            .into_iter()
            .map(|row| Event {
                created_at: crate::time::stored(row.created_at),
                event_type: row.event_type,
                created_by: row.created_by,
                created_by_user_id: row.created_by_user_id,
                project: row.project,
                environment: row.environment,
                feature_name: row.feature_name,
                data: row.data.filter(|text| text != "null"),
                pre_data: row.pre_data.filter(|text| text != "null"),
                tags: row.tags.filter(|text| text != "null"),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::release;

    #[test]
    fn schemas_of_unleash_6_to_8_are_read_and_others_refused() {
        let read = |name: &str| release(name);
        assert_eq!(
            read("/20240523113322-roles-toggle-to-flag-rename").as_deref(),
            Ok("Unleash 6 (newest migration 20240523113322-roles-toggle-to-flag-rename)")
        );
        assert!(
            read("/20260406161629-user-access-requests-unique-email")
                .is_ok_and(|text| text.starts_with("Unleash 7 "))
        );
        assert!(
            read("/20260724084058-set-default-value-for-user-created-for-api-token-v2")
                .is_ok_and(|text| text.starts_with("Unleash 8 "))
        );
        assert!(
            read("/20260817100000-add-job-retry-metadata").is_ok_and(|text| text.starts_with("Unleash 8 "))
        );
        assert!(
            read("/20240430075605-add-scim-external-id")
                .is_err_and(|message| message.contains("older than Unleash 6")
                    && message.contains("20240430075605-add-scim-external-id"))
        );
        assert!(
            read("/20270101000000-something-new")
                .is_err_and(|message| message.contains("newer than Unleash 8.2")
                    && message.contains("20270101000000-something-new"))
        );
    }
}
