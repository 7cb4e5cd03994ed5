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

/// A project's settings: its mode, its flags' naming pattern and its link templates.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = projects, check_for_backend(crate::connection::MultiBackend))]
pub struct ProjectSettingsRow {
    /// Project id.
    pub id: String,
    /// `open`, `protected` or `private`.
    pub mode: String,
    /// JSON `{pattern, example, description}`, or `None`.
    pub feature_naming: Option<String>,
    /// JSON `[{title, urlTemplate}]`.
    pub link_templates: String,
}

/// A project row as stored, every column: what a copy of the database copies.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = projects, check_for_backend(crate::connection::MultiBackend))]
pub(crate) struct StoredProject {
    id: String,
    name: String,
    description: Option<String>,
    created_at: NaiveDateTime,
    mode: String,
    feature_naming: Option<String>,
    link_templates: String,
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
