//! Server-wide settings, each a JSON document under a name. A change is an audit event, so it
//! moves the store's revision and every replica's caches see it.

use diesel::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, SettingRow};
use crate::queries::events;
use crate::schema::settings;

/// The setting `name`, when it was ever set. A stored document that does not read as `T` is
/// [`StoreError::Corrupt`], never a default.
pub fn get<T: DeserializeOwned>(conn: &mut DbConnection, name: &str) -> Result<Option<T>, StoreError> {
    raw(conn, name)?
        .map(|content| {
            serde_json::from_str(&content).map_err(|source| StoreError::Corrupt {
                entity: "setting",
                key: name.to_owned(),
                column: "content",
                source: source.into(),
            })
        })
        .transpose()
}

/// What the audit log shows of a setting that holds a secret.
const HIDDEN: &str = r#"{"hideEventDetails":true}"#;

fn raw(conn: &mut DbConnection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(settings::table
        .find(name)
        .select(settings::content)
        .first(conn)
        .optional()?)
}

/// Sets `name` to `value`, written as a JSON document, recording who did and what it was before.
pub fn put<T: Serialize + ?Sized>(
    conn: &mut DbConnection,
    name: &str,
    value: &T,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<(), StoreError> {
    store(conn, name, value, actor, now, false)
}

/// As [`put`], for a setting that holds a secret: the audit event records who changed it, and
/// only `{"hideEventDetails": true}` of what it was and became, as Unleash records it.
pub fn put_hidden<T: Serialize + ?Sized>(
    conn: &mut DbConnection,
    name: &str,
    value: &T,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<(), StoreError> {
    store(conn, name, value, actor, now, true)
}

fn store<T: Serialize + ?Sized>(
    conn: &mut DbConnection,
    name: &str,
    value: &T,
    actor: &Actor,
    now: chrono::NaiveDateTime,
    hidden: bool,
) -> Result<(), StoreError> {
    let content = serde_json::to_string(value).map_err(|source| StoreError::Encode {
        column: "settings.content",
        source,
    })?;
    let content = content.as_str();
    crate::queries::write(conn, |conn| {
        let before = raw(conn, name)?;
        let row = SettingRow {
            name: name.into(),
            content: content.into(),
        };
        if before.is_some() {
            diesel::update(settings::table.find(name))
                .set(settings::content.eq(content))
                .execute(conn)?;
        } else {
            diesel::insert_into(settings::table).values(&row).execute(conn)?;
        }
        events::record(
            conn,
            &NewEvent {
                data: Some(if hidden {
                    HIDDEN.to_owned()
                } else {
                    format!("{{\"{name}\":{content}}}")
                }),
                pre_data: before.map(|before| {
                    if hidden {
                        HIDDEN.to_owned()
                    } else {
                        format!("{{\"{name}\":{before}}}")
                    }
                }),
                ..NewEvent::new(EventType::SettingUpdated, actor, now)
            },
        )
    })
}
