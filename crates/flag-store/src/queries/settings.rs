//! Server-wide settings, each a JSON document under a name. A change is an audit event, so it
//! moves the store's revision and every replica's caches see it.

use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{EventType, NewEvent, SettingRow};
use crate::queries::events;
use crate::schema::settings;

/// The setting `name`, when it was ever set.
pub fn get(conn: &mut DbConnection, name: &str) -> Result<Option<String>, StoreError> {
    Ok(settings::table
        .find(name)
        .select(settings::content)
        .first(conn)
        .optional()?)
}

/// Sets `name` to `content` (a JSON document), recording who did and what it was before.
pub fn put(
    conn: &mut DbConnection,
    name: &str,
    content: &str,
    actor: &str,
    now: chrono::NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, name)?;
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
                data: Some(format!("{{\"{name}\":{content}}}")),
                pre_data: before.map(|before| format!("{{\"{name}\":{before}}}")),
                ..NewEvent::new(EventType::SettingUpdated, actor.into(), now)
            },
        )
    })
}
