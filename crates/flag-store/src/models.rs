//! Rows as stored, one type per table, and the `Insertable` types for new rows.
//!
//! JSON columns stay `String` here; the queries turn them into flag-eval types.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::schema::*;

/// A project.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = projects, check_for_backend(diesel::sqlite::Sqlite))]
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
#[diesel(table_name = environments, check_for_backend(diesel::sqlite::Sqlite))]
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

/// A feature flag.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = features, check_for_backend(diesel::sqlite::Sqlite))]
pub struct FeatureRow {
    /// Unique name.
    pub name: String,
    /// Owning project.
    pub project_id: String,
    /// `release`, `experiment`, `operational`, `kill-switch`, `permission`.
    pub feature_type: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether SDKs emit impression events.
    pub impression_data: bool,
    /// Marked stale.
    pub stale: bool,
    /// When it was archived, if it was.
    pub archived_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A feature's state in one environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_environments, check_for_backend(diesel::sqlite::Sqlite))]
pub struct FeatureEnvironmentRow {
    /// The feature.
    pub feature_name: String,
    /// The environment.
    pub environment_name: String,
    /// The switch.
    pub enabled: bool,
    /// Variants: a JSON list sorted by name.
    pub variants: String,
}

/// A registered strategy type.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = strategy_types, check_for_backend(diesel::sqlite::Sqlite))]
pub struct StrategyTypeRow {
    /// Name used by strategies.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Parameter definitions, JSON.
    pub parameters: String,
    /// Whether it ships with the server.
    pub built_in: bool,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A strategy of a feature in an environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = feature_strategies, check_for_backend(diesel::sqlite::Sqlite))]
pub struct StrategyRow {
    /// Strategy id (a UUID).
    pub id: String,
    /// The feature.
    pub feature_name: String,
    /// The environment.
    pub environment_name: String,
    /// The strategy type.
    pub strategy_name: String,
    /// Display title.
    pub title: Option<String>,
    /// Disabled strategies are kept but not sent to SDKs.
    pub disabled: bool,
    /// Evaluation order.
    pub sort_order: i32,
    /// Parameters, a JSON object of strings.
    pub parameters: String,
    /// Constraints, JSON.
    pub constraints: String,
    /// Strategy variants, JSON.
    pub variants: String,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A segment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = segments, check_for_backend(diesel::sqlite::Sqlite))]
pub struct SegmentRow {
    /// Segment id.
    pub id: i32,
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Project it is limited to, if any.
    pub project_id: Option<String>,
    /// Constraints, JSON.
    pub constraints: String,
    /// Creator.
    pub created_by: Option<String>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A new segment.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = segments)]
pub struct NewSegment {
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Project it is limited to, if any.
    pub project_id: Option<String>,
    /// Constraints, JSON.
    pub constraints: String,
    /// Creator.
    pub created_by: Option<String>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A child's dependency on its parent.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_dependencies, check_for_backend(diesel::sqlite::Sqlite))]
pub struct DependencyRow {
    /// The dependent feature.
    pub child: String,
    /// The feature it depends on.
    pub parent: String,
    /// Whether the parent must be enabled (or disabled).
    pub enabled: bool,
    /// Parent variants that satisfy it, JSON; empty means any.
    pub variants: String,
}

/// A context field definition.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = context_fields, check_for_backend(diesel::sqlite::Sqlite))]
pub struct ContextFieldRow {
    /// Field name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it can be used as stickiness.
    pub stickiness: bool,
    /// Display order.
    pub sort_order: i32,
    /// Allowed values, JSON.
    pub legal_values: String,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A role.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = roles, check_for_backend(diesel::sqlite::Sqlite))]
pub struct RoleRow {
    /// Role id: Admin 1, Editor 2, Viewer 3, Owner 4, Member 5.
    pub id: i32,
    /// Role name.
    pub name: String,
    /// `root` or `project`.
    pub role_type: String,
    /// Free text.
    pub description: Option<String>,
}

/// A user.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = users, check_for_backend(diesel::sqlite::Sqlite))]
pub struct UserRow {
    /// User id.
    pub id: i32,
    /// Display name.
    pub name: Option<String>,
    /// Unique login name.
    pub username: Option<String>,
    /// Unique email, lower-cased.
    pub email: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// Root role id.
    pub root_role: i32,
    /// Failed logins since the last success.
    pub login_attempts: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last login, UTC.
    pub seen_at: Option<NaiveDateTime>,
}

/// What an administrator changes on a user; a `None` field is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, AsChangeset)]
#[diesel(table_name = users)]
pub struct UserChanges {
    /// New display name.
    pub name: Option<String>,
    /// New email; lower-cased by [`crate::queries::users::update`].
    pub email: Option<String>,
    /// New root role id.
    pub root_role: Option<i32>,
}

/// A new user; `email` must already be lower-cased (see [`crate::queries::users::create`]).
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = users)]
pub struct NewUser {
    /// Display name.
    pub name: Option<String>,
    /// Unique login name.
    pub username: Option<String>,
    /// Unique email.
    pub email: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// Root role id.
    pub root_role: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A public signup token.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = public_signup_tokens, check_for_backend(diesel::sqlite::Sqlite))]
pub struct SignupTokenRow {
    /// The secret, part of the invite link.
    pub secret: String,
    /// Display name.
    pub name: String,
    /// The invite link.
    pub url: Option<String>,
    /// Role given to users who sign up.
    pub role_id: i32,
    /// Whether it can be used (an expired token cannot, whatever this says).
    pub enabled: bool,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Creator.
    pub created_by: Option<String>,
}

/// An API token: only a SHA-256 verifier of its secret is stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = api_tokens, check_for_backend(diesel::sqlite::Sqlite))]
pub struct ApiTokenRow {
    /// Token id.
    pub id: i32,
    /// Display name.
    pub token_name: String,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// `admin`, `client`, `backend`, `frontend`.
    pub token_type: String,
    /// Environment, or `*`.
    pub environment: String,
    /// Projects, JSON list; `["*"]` for all.
    pub projects: String,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last use, UTC.
    pub seen_at: Option<NaiveDateTime>,
}

/// A new API token.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = api_tokens)]
pub struct NewApiToken {
    /// Display name.
    pub token_name: String,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// `admin`, `client`, `backend`, `frontend`.
    pub token_type: String,
    /// Environment, or `*`.
    pub environment: String,
    /// Projects, JSON list.
    pub projects: String,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A login session: only a hash of its cookie value is stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_sessions, check_for_backend(diesel::sqlite::Sqlite))]
pub struct SessionRow {
    /// Hex SHA-256 of the session secret.
    pub token_hash: String,
    /// The user.
    pub user_id: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
}

/// An audit event.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = events, check_for_backend(diesel::sqlite::Sqlite))]
pub struct EventRow {
    /// Sequence number.
    pub id: i32,
    /// Event type, as Unleash names them (`feature-environment-variants-updated`, ...).
    pub event_type: String,
    /// Who wrote.
    pub created_by: String,
    /// When, UTC.
    pub created_at: NaiveDateTime,
    /// Project concerned.
    pub project: Option<String>,
    /// Environment concerned.
    pub environment: Option<String>,
    /// Feature concerned.
    pub feature_name: Option<String>,
    /// New value, JSON.
    pub data: Option<String>,
    /// Old value, JSON.
    pub pre_data: Option<String>,
}

/// A new audit event.
#[derive(Debug, Clone, Default, Insertable)]
#[diesel(table_name = events)]
pub struct NewEvent {
    /// Event type.
    pub event_type: String,
    /// Who wrote.
    pub created_by: String,
    /// When, UTC.
    pub created_at: NaiveDateTime,
    /// Project concerned.
    pub project: Option<String>,
    /// Environment concerned.
    pub environment: Option<String>,
    /// Feature concerned.
    pub feature_name: Option<String>,
    /// New value, JSON.
    pub data: Option<String>,
    /// Old value, JSON.
    pub pre_data: Option<String>,
}
