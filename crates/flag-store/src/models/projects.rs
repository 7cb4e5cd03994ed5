//! Projects and the global environments.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::schema::{environments, projects};

/// A project.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = projects, check_for_backend(crate::connection::MultiBackend))]
pub struct ProjectRow {
    /// Project id, used in paths.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A global environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = environments, check_for_backend(crate::connection::MultiBackend))]
pub struct EnvironmentRow {
    /// Environment name.
    pub name: String,
    /// `development`, `production`, ...
    pub environment_type: String,
    /// Display order.
    pub sort_order: i32,
    /// Whether it is in use.
    pub enabled: bool,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}
