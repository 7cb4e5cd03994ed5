//! Server-wide settings.

use diesel::prelude::*;

use crate::schema::settings;

/// A server-wide setting.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = settings, check_for_backend(crate::connection::MultiBackend))]
pub struct SettingRow {
    /// Its name.
    pub name: String,
    /// Its value, a JSON document.
    pub content: String,
}
