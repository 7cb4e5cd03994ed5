//! Rows as stored, one type per table, and the `Insertable` types for new rows.
//!
//! JSON columns stay `String` here, as written. Each has an accessor of the same name that
//! decodes it into its type (`ContextFieldRow::legal_values`, `SegmentRow::constraints`...)
//! or fails with [`StoreError::Corrupt`] naming the row and column, so no caller parses JSON text
//! and nothing falls back to a silent default.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::{Constraint, Variant};
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::*;

/// One allowed value of a context field, as Unleash writes it: `{value, description?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegalValue {
    /// The value.
    pub value: String,
    /// What it means; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One parameter a strategy type declares, as Unleash writes it:
/// `{name, type, description?, required?}`.
///
/// `description` and `required` stay optional, because custom types registered without them are
/// stored and listed without them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrategyParameter {
    /// Parameter name, the key in a strategy's `parameters`.
    pub name: String,
    /// `string`, `percentage`, `list`, `number` or `boolean`.
    #[serde(rename = "type")]
    pub parameter_type: String,
    /// Help text; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a strategy must set it; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

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

/// A feature flag.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = features, check_for_backend(crate::connection::MultiBackend))]
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
    /// The user who created it ([`Actor::user_id`]), when known.
    pub created_by_user_id: Option<i32>,
}

/// A tag on a feature: `{value, type}`, as Unleash writes it in events.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TagRef {
    /// The value.
    pub value: String,
    /// The tag type.
    #[serde(rename = "type")]
    pub tag_type: String,
}

/// A stage a flag entered.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_lifecycles, check_for_backend(crate::connection::MultiBackend))]
pub struct LifecycleRow {
    /// The flag.
    pub feature_name: String,
    /// `initial`, `pre-live`, `live`, `completed` or `archived`.
    pub stage: String,
    /// For `completed`: `kept` or `discarded`.
    pub status: Option<String>,
    /// For `completed`: the variant kept.
    pub status_value: Option<String>,
    /// When it entered the stage, UTC.
    pub created_at: NaiveDateTime,
}

/// A tag type.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = tag_types, check_for_backend(crate::connection::MultiBackend))]
pub struct TagTypeRow {
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// An icon name.
    pub icon: Option<String>,
    /// `#rrggbb`.
    pub color: Option<String>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A feature type, with the days after which a flag of it is potentially stale.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_types, check_for_backend(crate::connection::MultiBackend))]
pub struct FeatureTypeRow {
    /// `release`, `kill-switch`...
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Days until potentially stale; `None` for never.
    pub lifetime_days: Option<i32>,
    /// Position in lists.
    pub sort_order: i32,
}

/// A feature's state in one environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_environments, check_for_backend(crate::connection::MultiBackend))]
pub struct FeatureEnvironmentRow {
    /// The feature.
    pub feature_name: String,
    /// The environment.
    pub environment_name: String,
    /// The switch.
    pub enabled: bool,
    /// Variants: a JSON list sorted by name.
    pub variants: String,
    /// When an SDK last reported using the feature here.
    pub last_seen_at: Option<NaiveDateTime>,
}

impl FeatureEnvironmentRow {
    /// The variants, decoded from `variants`.
    pub fn variants(&self) -> Result<Vec<Variant>, StoreError> {
        from_json(
            "feature environment",
            format_args!("{} in {}", self.feature_name, self.environment_name),
            "variants",
            &self.variants,
        )
    }
}

/// A registered strategy type.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = strategy_types, check_for_backend(crate::connection::MultiBackend))]
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
    /// Whether it is deprecated: still evaluated, no longer offered for new strategies.
    pub deprecated: bool,
    /// The name people read, as Unleash seeds it for its built-in types; none for custom ones.
    pub display_name: Option<String>,
    /// Where it is listed: types are listed by this, then by name.
    pub sort_order: i32,
}

impl StrategyTypeRow {
    /// Where custom types are listed: after the built-in ones, as Unleash's column default puts them.
    pub const CUSTOM_SORT_ORDER: i32 = 9999;

    /// A custom strategy type declaring `parameters`, created `at`; the store writes the
    /// parameters as JSON and keeps the time to the microsecond.
    pub fn custom(
        name: String,
        title: Option<String>,
        description: Option<String>,
        parameters: &[StrategyParameter],
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            title,
            description,
            parameters: crate::queries::to_json("strategy_types.parameters", parameters)?,
            built_in: false,
            created_at: crate::time::stored(at),
            deprecated: false,
            display_name: None,
            sort_order: Self::CUSTOM_SORT_ORDER,
        })
    }

    /// The parameter definitions, decoded from `parameters`.
    pub fn parameters(&self) -> Result<Vec<StrategyParameter>, StoreError> {
        from_json("strategy type", &self.name, "parameters", &self.parameters)
    }
}

/// A strategy of a feature in an environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = feature_strategies, check_for_backend(crate::connection::MultiBackend))]
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

impl StrategyRow {
    /// The parameters, decoded from `parameters`.
    pub fn parameters(&self) -> Result<flag_eval::Parameters, StoreError> {
        from_json("strategy", &self.id, "parameters", &self.parameters)
    }

    /// The constraints, decoded from `constraints`.
    pub fn constraints(&self) -> Result<Vec<Constraint>, StoreError> {
        from_json("strategy", &self.id, "constraints", &self.constraints)
    }

    /// The strategy variants, decoded from `variants`.
    pub fn variants(&self) -> Result<Vec<Variant>, StoreError> {
        from_json("strategy", &self.id, "variants", &self.variants)
    }
}

/// A segment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = segments, check_for_backend(crate::connection::MultiBackend))]
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

impl SegmentRow {
    /// The constraints, decoded from `constraints`.
    pub fn constraints(&self) -> Result<Vec<Constraint>, StoreError> {
        from_json("segment", self.id, "constraints", &self.constraints)
    }
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

impl NewSegment {
    /// A segment of `constraints`, created by `created_by` `at`; the store writes the
    /// constraints as JSON and keeps the time to the microsecond.
    pub fn new(
        name: String,
        description: Option<String>,
        project_id: Option<String>,
        constraints: &[flag_eval::Constraint],
        created_by: Option<String>,
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            description,
            project_id,
            constraints: crate::queries::to_json("segments.constraints", constraints)?,
            created_by,
            created_at: crate::time::stored(at),
        })
    }
}

/// A child's dependency on its parent.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_dependencies, check_for_backend(crate::connection::MultiBackend))]
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

impl DependencyRow {
    /// The parent variants that satisfy the dependency, decoded from `variants`.
    pub fn variants(&self) -> Result<Vec<String>, StoreError> {
        from_json("feature dependency", &self.child, "variants", &self.variants)
    }
}

/// A context field definition.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = context_fields, check_for_backend(crate::connection::MultiBackend))]
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

impl ContextFieldRow {
    /// A context field with its allowed values, created `at`; the store writes the values as
    /// JSON and keeps the time to the microsecond.
    pub fn new(
        name: String,
        description: Option<String>,
        stickiness: bool,
        sort_order: i32,
        legal_values: &[LegalValue],
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            description,
            stickiness,
            sort_order,
            legal_values: crate::queries::to_json("context_fields.legal_values", legal_values)?,
            created_at: crate::time::stored(at),
        })
    }

    /// The allowed values, decoded from `legal_values`.
    pub fn legal_values(&self) -> Result<Vec<LegalValue>, StoreError> {
        from_json("context field", &self.name, "legal_values", &self.legal_values)
    }
}

/// A role.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = roles, check_for_backend(crate::connection::MultiBackend))]
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
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(crate::connection::MultiBackend))]
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
#[diesel(table_name = public_signup_tokens, check_for_backend(crate::connection::MultiBackend))]
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
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_tokens, check_for_backend(crate::connection::MultiBackend))]
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

impl ApiTokenRow {
    /// The projects the token may read, decoded from `projects`; `["*"]` means all.
    pub fn projects(&self) -> Result<Vec<String>, StoreError> {
        from_json("api token", self.id, "projects", &self.projects)
    }
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

impl NewApiToken {
    /// A token of `token_type` (`admin`, `client`, `backend`, `frontend`) for `environment` (or
    /// `*`) and `projects` (`["*"]` for all), stored by the verifier of its secret; the store
    /// writes the projects as JSON and keeps times to the microsecond.
    pub fn new(
        token_name: String,
        secret_hash: String,
        token_type: &str,
        environment: String,
        projects: &[String],
        expires_at: Option<NaiveDateTime>,
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            token_name,
            secret_hash,
            token_type: token_type.to_owned(),
            environment,
            projects: crate::queries::to_json("api_tokens.projects", projects)?,
            expires_at: expires_at.map(crate::time::stored),
            created_at: crate::time::stored(at),
        })
    }
}

/// A login session: only a hash of its cookie value is stored.
#[derive(Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_sessions, check_for_backend(crate::connection::MultiBackend))]
pub struct SessionRow {
    /// Hex SHA-256 of the session secret.
    pub token_hash: String,
    /// The user.
    pub user_id: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
    /// Whether it was opened through the OpenID provider.
    pub via_oidc: bool,
    /// The provider's ID token, kept for `id_token_hint` when signing out there too; never
    /// shown by `Debug`.
    pub id_token: Option<String>,
}

impl std::fmt::Debug for SessionRow {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SessionRow")
            .field("token_hash", &self.token_hash)
            .field("user_id", &self.user_id)
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .field("via_oidc", &self.via_oidc)
            .field("id_token", &self.id_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// A login through an OpenID provider that has started and not come back yet.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oidc_logins, check_for_backend(crate::connection::MultiBackend))]
pub struct OidcLoginRow {
    /// Hex SHA-256 of the secret in the browser's cookie.
    pub cookie_hash: String,
    /// The `state` sent to the provider.
    pub state: String,
    /// The `nonce` the ID token must carry.
    pub nonce: String,
    /// The PKCE code verifier.
    pub pkce_verifier: String,
    /// The console path to go back to.
    pub return_to: String,
    /// When it started, UTC.
    pub created_at: NaiveDateTime,
}

/// An audit event.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = events, check_for_backend(crate::connection::MultiBackend))]
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
    /// The user who wrote ([`Actor::user_id`]); `None` for events from before it was kept.
    pub created_by_user_id: Option<i32>,
    /// The feature's tags, JSON `[{value, type}]`.
    pub tags: Option<String>,
    /// The kind of group it was written in: `transaction`, or `None` when written alone.
    pub group_type: Option<String>,
    /// The group it was written in, a ULID shared by the events of one write transaction.
    pub group_id: Option<String>,
}

/// What an audit event records, named as Unleash names its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, diesel::expression::AsExpression)]
#[diesel(sql_type = diesel::sql_types::Text)]
pub enum EventType {
    /// `addon-config-created`.
    AddonConfigCreated,
    /// `addon-config-deleted`.
    AddonConfigDeleted,
    /// `addon-config-updated`.
    AddonConfigUpdated,
    /// `api-token-created`.
    ApiTokenCreated,
    /// `api-token-deleted`.
    ApiTokenDeleted,
    /// `api-token-updated`.
    ApiTokenUpdated,
    /// `context-field-created`.
    ContextFieldCreated,
    /// `context-field-deleted`.
    ContextFieldDeleted,
    /// `context-field-updated`.
    ContextFieldUpdated,
    /// `environment-created`.
    EnvironmentCreated,
    /// `environment-disabled`.
    EnvironmentDisabled,
    /// `environment-enabled`.
    EnvironmentEnabled,
    /// `feature-archived`.
    FeatureArchived,
    /// `feature-completed`.
    FeatureCompleted,
    /// `feature-created`.
    FeatureCreated,
    /// `feature-deleted`.
    FeatureDeleted,
    /// `feature-dependencies-removed`.
    FeatureDependenciesRemoved,
    /// `feature-dependency-added`.
    FeatureDependencyAdded,
    /// `feature-environment-disabled`.
    FeatureEnvironmentDisabled,
    /// `feature-environment-enabled`.
    FeatureEnvironmentEnabled,
    /// `feature-environment-variants-updated`.
    FeatureEnvironmentVariantsUpdated,
    /// `feature-metadata-updated`.
    FeatureMetadataUpdated,
    /// `feature-revived`.
    FeatureRevived,
    /// `feature-stale-off`.
    FeatureStaleOff,
    /// `feature-stale-on`.
    FeatureStaleOn,
    /// `feature-strategy-add`.
    FeatureStrategyAdd,
    /// `feature-strategy-remove`.
    FeatureStrategyRemove,
    /// `feature-strategy-update`.
    FeatureStrategyUpdate,
    /// `feature-tagged`.
    FeatureTagged,
    /// `feature-type-updated`.
    FeatureTypeUpdated,
    /// `feature-uncompleted`.
    FeatureUncompleted,
    /// `feature-untagged`.
    FeatureUntagged,
    /// `features-imported`.
    FeaturesImported,
    /// `project-created`.
    ProjectCreated,
    /// `project-environment-added`.
    ProjectEnvironmentAdded,
    /// `project-environment-removed`.
    ProjectEnvironmentRemoved,
    /// `public-signup-token-created`.
    PublicSignupTokenCreated,
    /// `public-signup-token-updated`.
    PublicSignupTokenUpdated,
    /// `public-signup-token-user-added`.
    PublicSignupTokenUserAdded,
    /// `segment-created`.
    SegmentCreated,
    /// `segment-deleted`.
    SegmentDeleted,
    /// `segment-updated`.
    SegmentUpdated,
    /// `setting-updated`.
    SettingUpdated,
    /// `strategy-created`.
    StrategyCreated,
    /// `strategy-deleted`.
    StrategyDeleted,
    /// `strategy-deprecated`.
    StrategyDeprecated,
    /// `strategy-order-changed`.
    StrategyOrderChanged,
    /// `strategy-reactivated`.
    StrategyReactivated,
    /// `strategy-updated`.
    StrategyUpdated,
    /// `tag-created`.
    TagCreated,
    /// `tag-deleted`.
    TagDeleted,
    /// `tag-type-created`.
    TagTypeCreated,
    /// `tag-type-deleted`.
    TagTypeDeleted,
    /// `tag-type-updated`.
    TagTypeUpdated,
    /// `user-created`.
    UserCreated,
    /// `user-deleted`.
    UserDeleted,
    /// `user-updated`.
    UserUpdated,
}

impl EventType {
    /// The name Unleash gives it, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApiTokenCreated => "api-token-created",
            Self::ApiTokenDeleted => "api-token-deleted",
            Self::ApiTokenUpdated => "api-token-updated",
            Self::ContextFieldCreated => "context-field-created",
            Self::ContextFieldDeleted => "context-field-deleted",
            Self::ContextFieldUpdated => "context-field-updated",
            Self::EnvironmentCreated => "environment-created",
            Self::EnvironmentDisabled => "environment-disabled",
            Self::EnvironmentEnabled => "environment-enabled",
            Self::FeatureArchived => "feature-archived",
            Self::FeatureCompleted => "feature-completed",
            Self::FeatureCreated => "feature-created",
            Self::FeatureDeleted => "feature-deleted",
            Self::FeatureDependenciesRemoved => "feature-dependencies-removed",
            Self::FeatureDependencyAdded => "feature-dependency-added",
            Self::FeatureEnvironmentDisabled => "feature-environment-disabled",
            Self::FeatureEnvironmentEnabled => "feature-environment-enabled",
            Self::FeatureEnvironmentVariantsUpdated => "feature-environment-variants-updated",
            Self::FeatureMetadataUpdated => "feature-metadata-updated",
            Self::FeatureRevived => "feature-revived",
            Self::FeatureStaleOff => "feature-stale-off",
            Self::FeatureStaleOn => "feature-stale-on",
            Self::FeatureStrategyAdd => "feature-strategy-add",
            Self::FeatureStrategyRemove => "feature-strategy-remove",
            Self::FeatureStrategyUpdate => "feature-strategy-update",
            Self::FeatureTagged => "feature-tagged",
            Self::FeatureTypeUpdated => "feature-type-updated",
            Self::FeatureUncompleted => "feature-uncompleted",
            Self::FeatureUntagged => "feature-untagged",
            Self::AddonConfigCreated => "addon-config-created",
            Self::AddonConfigDeleted => "addon-config-deleted",
            Self::AddonConfigUpdated => "addon-config-updated",
            Self::FeaturesImported => "features-imported",
            Self::ProjectCreated => "project-created",
            Self::ProjectEnvironmentAdded => "project-environment-added",
            Self::ProjectEnvironmentRemoved => "project-environment-removed",
            Self::PublicSignupTokenCreated => "public-signup-token-created",
            Self::PublicSignupTokenUpdated => "public-signup-token-updated",
            Self::PublicSignupTokenUserAdded => "public-signup-token-user-added",
            Self::SegmentCreated => "segment-created",
            Self::SegmentDeleted => "segment-deleted",
            Self::SegmentUpdated => "segment-updated",
            Self::SettingUpdated => "setting-updated",
            Self::StrategyCreated => "strategy-created",
            Self::StrategyDeleted => "strategy-deleted",
            Self::StrategyDeprecated => "strategy-deprecated",
            Self::StrategyOrderChanged => "strategy-order-changed",
            Self::StrategyReactivated => "strategy-reactivated",
            Self::StrategyUpdated => "strategy-updated",
            Self::TagCreated => "tag-created",
            Self::TagDeleted => "tag-deleted",
            Self::TagTypeCreated => "tag-type-created",
            Self::TagTypeDeleted => "tag-type-deleted",
            Self::TagTypeUpdated => "tag-type-updated",
            Self::UserCreated => "user-created",
            Self::UserDeleted => "user-deleted",
            Self::UserUpdated => "user-updated",
        }
    }
}

impl<DB> diesel::serialize::ToSql<diesel::sql_types::Text, DB> for EventType
where
    DB: diesel::backend::Backend,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut diesel::serialize::Output<'b, '_, DB>) -> diesel::serialize::Result {
        self.as_str().to_sql(out)
    }
}

/// A new audit event.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = events)]
pub struct NewEvent {
    /// Event type.
    pub event_type: EventType,
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
    /// The user who wrote, as Unleash numbers them: [`Actor::ADMIN_TOKEN`] for an admin API
    /// token, [`Actor::SYSTEM`] for the server itself.
    pub created_by_user_id: Option<i32>,
    /// The tags of the feature, JSON `[{value, type}]`; the feature's tags at the time when
    /// left `None` for an event about a feature.
    pub tags: Option<String>,
}

/// Who writes: the name the audit log shows and the user id it records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Email or username of a user, the name of an admin API token, or the server's name.
    pub name: String,
    /// The user's id, or one of the ids Unleash gives non-users.
    pub user_id: i32,
}

impl Actor {
    /// The user id Unleash records for writes through an admin API token.
    pub const ADMIN_TOKEN: i32 = -42;
    /// The user id Unleash records for the server's own writes.
    pub const SYSTEM: i32 = -1337;

    /// The server itself: seeding, imports at start.
    pub fn system() -> Self {
        Self {
            name: "unleash_system_user".to_owned(),
            user_id: Self::SYSTEM,
        }
    }
}

impl NewEvent {
    /// The event with `tags`, the feature's tags it records.
    pub fn with_tags(self, tags: &[TagRef]) -> Result<Self, StoreError> {
        Ok(Self {
            tags: Some(crate::queries::to_json("tags", tags)?),
            ..self
        })
    }

    /// The event with `data`, written as JSON, as what it records.
    pub fn with_data<T: Serialize + ?Sized>(self, data: &T) -> Result<Self, StoreError> {
        Ok(Self {
            data: Some(crate::queries::to_json("data", data)?),
            ..self
        })
    }

    /// An event of `event_type` by `actor` at `created_at`, about nothing in particular yet.
    pub fn new(event_type: EventType, actor: &Actor, created_at: NaiveDateTime) -> Self {
        Self {
            event_type,
            created_by: actor.name.clone(),
            created_by_user_id: Some(actor.user_id),
            tags: None,
            created_at,
            project: None,
            environment: None,
            feature_name: None,
            data: None,
            pre_data: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Debug;

    use diesel::sql_types::Text;
    use serde_json::Value;

    use super::*;
    use crate::DbConnection;
    use crate::queries::evaluation::ProjectScope;
    use crate::queries::strategies::StrategyInput;
    use crate::queries::{self, api_tokens, dependencies, evaluation, features, segments, strategies};
    use crate::testing::{TestResult, TestStore, now, tenant_field};

    /// Asserts that `result` is `Corrupt` for this row and column, and that its message names all
    /// three, so the row can be found from a log line.
    fn assert_corrupt<T: Debug>(result: Result<T, StoreError>, entity: &str, key: &str, column: &str) {
        let message = match &result {
            Err(
                error @ StoreError::Corrupt {
                    entity: found_entity,
                    key: found_key,
                    column: found_column,
                    ..
                },
            ) if (*found_entity, found_key.as_str(), *found_column) == (entity, key, column) => {
                error.to_string()
            }
            _ => String::new(),
        };
        assert!(
            [entity, key, column].iter().all(|part| message.contains(part)),
            "expected the stored {column} of {entity} {key} to be corrupt, got {result:?}"
        );
    }

    /// Overwrites one JSON column of the rows `filter` selects with raw SQL, as a bad migration or
    /// a hand edit would.
    fn overwrite(
        conn: &mut DbConnection,
        table: &str,
        column: &str,
        filter: &str,
        text: &str,
    ) -> QueryResult<usize> {
        let placeholder = match conn.backend() {
            crate::Backend::Sqlite => "?",
            crate::Backend::Postgres => "$1",
        };
        diesel::sql_query(format!(
            "UPDATE {table} SET {column} = {placeholder} WHERE {filter}"
        ))
        .bind::<Text, _>(text)
        .execute(conn)
    }

    const GARBAGE: &str = "{not json";

    fn feature(conn: &mut DbConnection, name: &str) -> Result<FeatureRow, StoreError> {
        features::create(
            conn,
            &FeatureRow {
                name: name.into(),
                project_id: "default".into(),
                feature_type: "release".into(),
                description: None,
                impression_data: false,
                stale: false,
                archived_at: None,
                created_at: now(),
                created_by_user_id: None,
            },
            &crate::models::Actor::system(),
        )
    }

    #[test]
    fn garbage_in_a_json_column_is_corrupt_naming_entity_key_and_column() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let conn = &mut *conn;
        feature(conn, "parent")?;
        feature(conn, "child")?;
        dependencies::set(
            conn,
            "default",
            "child",
            "parent",
            true,
            &[],
            &crate::models::Actor::system(),
            now(),
        )?;
        let strategy = strategies::add(
            conn,
            "default",
            "parent",
            "development",
            &StrategyInput {
                name: "default".into(),
                ..StrategyInput::default()
            },
            &crate::models::Actor::system(),
            now(),
        )?;
        let strategy_id = strategy.id.unwrap_or_default();
        let segment = segments::create(
            conn,
            &NewSegment {
                name: "beta".into(),
                description: None,
                project_id: None,
                constraints: "[]".into(),
                created_by: None,
                created_at: now(),
            },
            &crate::models::Actor::system(),
        )?;
        let token = api_tokens::create(
            conn,
            &NewApiToken {
                token_name: "sdk".into(),
                secret_hash: "00".repeat(32),
                token_type: "client".into(),
                environment: "development".into(),
                projects: r#"["default"]"#.into(),
                expires_at: None,
                created_at: now(),
            },
            &crate::models::Actor::system(),
        )?;
        let client_features =
            |conn: &mut DbConnection| evaluation::client_features(conn, &ProjectScope::All, "development");
        let strategy_row = |conn: &mut DbConnection| -> QueryResult<StrategyRow> {
            feature_strategies::table
                .find(&strategy_id)
                .select(StrategyRow::as_select())
                .first(conn)
        };

        overwrite(conn, "context_fields", "legal_values", "name = 'userId'", GARBAGE)?;
        let fields = queries::context_fields::list(conn)?;
        let field = fields.iter().find(|field| field.name == "userId");
        assert_corrupt(
            field.map(ContextFieldRow::legal_values).transpose(),
            "context field",
            "userId",
            "legal_values",
        );

        overwrite(
            conn,
            "strategy_types",
            "parameters",
            "name = 'remoteAddress'",
            GARBAGE,
        )?;
        let types = strategies::list_types(conn)?;
        let strategy_type = types.iter().find(|row| row.name == "remoteAddress");
        assert_corrupt(
            strategy_type.map(StrategyTypeRow::parameters).transpose(),
            "strategy type",
            "remoteAddress",
            "parameters",
        );

        overwrite(conn, "api_tokens", "projects", "TRUE", GARBAGE)?;
        let token_key = token.id.to_string();
        assert_corrupt(
            api_tokens::find_by_hash(conn, &token.secret_hash)?
                .map(|row| row.projects())
                .transpose(),
            "api token",
            &token_key,
            "projects",
        );

        // The columns the evaluation reads: each is checked through its accessor and through
        // every query that decodes it, then put back so the next one is the only fault.
        let segment_key = segment.id.to_string();
        let segment_filter = format!("id = {}", segment.id);
        overwrite(conn, "segments", "constraints", &segment_filter, GARBAGE)?;
        assert_corrupt(
            segments::get(conn, segment.id)?.constraints(),
            "segment",
            &segment_key,
            "constraints",
        );
        assert_corrupt(client_features(conn), "segment", &segment_key, "constraints");
        overwrite(conn, "segments", "constraints", &segment_filter, "[]")?;

        let state = "feature_name = 'parent' AND environment_name = 'development'";
        overwrite(conn, "feature_environments", "variants", state, GARBAGE)?;
        let key = "parent in development";
        assert_corrupt(
            features::environment(conn, "parent", "development")?.variants(),
            "feature environment",
            key,
            "variants",
        );
        assert_corrupt(
            queries::variants::get(conn, "default", "parent", "development"),
            "feature environment",
            key,
            "variants",
        );
        assert_corrupt(client_features(conn), "feature environment", key, "variants");
        overwrite(conn, "feature_environments", "variants", state, "[]")?;

        let strategy_filter = format!("id = '{strategy_id}'");
        for column in ["parameters", "constraints", "variants"] {
            let good = if column == "parameters" { "{}" } else { "[]" };
            overwrite(conn, "feature_strategies", column, &strategy_filter, GARBAGE)?;
            let row = strategy_row(conn)?;
            let accessor = match column {
                "parameters" => row.parameters().map(drop),
                "constraints" => row.constraints().map(drop),
                _ => row.variants().map(drop),
            };
            assert_corrupt(accessor, "strategy", &strategy_id, column);
            assert_corrupt(
                strategies::list(conn, "parent", "development"),
                "strategy",
                &strategy_id,
                column,
            );
            assert_corrupt(
                strategies::get(conn, "parent", "development", &strategy_id),
                "strategy",
                &strategy_id,
                column,
            );
            assert_corrupt(client_features(conn), "strategy", &strategy_id, column);
            overwrite(conn, "feature_strategies", column, &strategy_filter, good)?;
        }

        overwrite(
            conn,
            "feature_dependencies",
            "variants",
            "child = 'child'",
            GARBAGE,
        )?;
        assert_corrupt(
            dependencies::of(conn, "child")?
                .map(|row| row.variants())
                .transpose(),
            "feature dependency",
            "child",
            "variants",
        );
        assert_corrupt(client_features(conn), "feature dependency", "child", "variants");
        overwrite(conn, "feature_dependencies", "variants", "child = 'child'", "[]")?;

        // With every column put back, the document reads again.
        assert_eq!(client_features(conn)?.features.len(), 2);
        Ok(())
    }

    #[test]
    fn typed_values_serialise_to_the_json_that_is_stored() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let custom = StrategyTypeRow {
            name: "byTenant".into(),
            title: None,
            description: None,
            parameters: r#"[{"name":"tenants","type":"list"}]"#.into(),
            built_in: false,
            created_at: now(),
            deprecated: false,
            display_name: None,
            sort_order: StrategyTypeRow::CUSTOM_SORT_ORDER,
        };
        strategies::register_type(&mut conn, &custom, &crate::models::Actor::system())?;
        let field = tenant_field(r#"[{"value":"a"},{"value":"b","description":"the b tenant"}]"#);
        queries::context_fields::create(&mut conn, &field, &crate::models::Actor::system())?;
        for row in strategies::list_types(&mut conn)? {
            let stored: Value = serde_json::from_str(&row.parameters)?;
            assert_eq!(serde_json::to_value(row.parameters()?)?, stored, "{}", row.name);
        }
        for row in queries::context_fields::list(&mut conn)? {
            let stored: Value = serde_json::from_str(&row.legal_values)?;
            assert_eq!(serde_json::to_value(row.legal_values()?)?, stored, "{}", row.name);
        }
        Ok(())
    }

    #[test]
    fn writes_that_would_not_read_back_are_rejected() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let field = tenant_field(r#"["a", "b"]"#);
        let error = queries::context_fields::create(&mut conn, &field, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Rejected { message })
                if message.starts_with("context field tenant has invalid legal_values: ")),
            "{error:?}"
        );
        let custom = StrategyTypeRow {
            name: "byTenant".into(),
            title: None,
            description: None,
            parameters: r#"[{"name":"tenants"}]"#.into(),
            built_in: false,
            created_at: now(),
            deprecated: false,
            display_name: None,
            sort_order: StrategyTypeRow::CUSTOM_SORT_ORDER,
        };
        let error = strategies::register_type(&mut conn, &custom, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Rejected { message })
                if message.starts_with("strategy type byTenant has invalid parameters: ")),
            "{error:?}"
        );
        // Nothing was written.
        assert!(
            !queries::context_fields::list(&mut conn)?
                .iter()
                .any(|row| row.name == "tenant")
        );
        assert!(
            !strategies::list_types(&mut conn)?
                .iter()
                .any(|row| row.name == "byTenant")
        );
        Ok(())
    }
}

/// An application SDKs registered or reported metrics for.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = client_applications, check_for_backend(crate::connection::MultiBackend))]
pub struct ClientApplicationRow {
    /// The SDKs' `appName`.
    pub app_name: String,
    /// The strategies its first registration named, a JSON list.
    pub strategies: String,
    /// A description.
    pub description: Option<String>,
    /// A link.
    pub url: Option<String>,
    /// A colour.
    pub color: Option<String>,
    /// An icon name.
    pub icon: Option<String>,
    /// First report, UTC.
    pub created_at: NaiveDateTime,
    /// Latest report, UTC.
    pub seen_at: NaiveDateTime,
}

impl ClientApplicationRow {
    /// The strategies, decoded from `strategies`.
    pub fn strategies(&self) -> Result<Vec<String>, StoreError> {
        from_json(
            "client application",
            &self.app_name,
            "strategies",
            &self.strategies,
        )
    }
}

/// One SDK instance of an application in one environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = client_instances, check_for_backend(crate::connection::MultiBackend))]
pub struct ClientInstanceRow {
    /// The application.
    pub app_name: String,
    /// The SDK's `instanceId`.
    pub instance_id: String,
    /// The environment of the token it reported with.
    pub environment: String,
    /// `unleash-node-sdk:6.12.1` and the like.
    pub sdk_version: Option<String>,
    /// `backend` or `frontend`.
    pub sdk_type: String,
    /// The address it reported from.
    pub client_ip: Option<String>,
    /// The projects of its token, a JSON list; `["*"]` for all.
    pub projects: String,
    /// When the SDK says it started.
    pub started: Option<NaiveDateTime>,
    /// Its poll interval, in milliseconds.
    pub interval_ms: Option<i64>,
    /// First report, UTC.
    pub created_at: NaiveDateTime,
    /// Latest report, UTC.
    pub last_seen: NaiveDateTime,
}

impl ClientInstanceRow {
    /// An instance of `app_name` in `environment`, heard from `at`, reporting with a token of
    /// `projects` (`None` for all); the store writes the projects as JSON and keeps the time to
    /// the microsecond. What the instance says of itself is added by the caller.
    pub fn new(
        app_name: String,
        instance_id: String,
        environment: String,
        projects: Option<&[String]>,
        sdk_type: &str,
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        let at = crate::time::stored(at);
        Ok(Self {
            app_name,
            instance_id,
            environment,
            sdk_version: None,
            sdk_type: sdk_type.to_owned(),
            client_ip: None,
            projects: crate::queries::to_json(
                "client_instances.projects",
                projects.unwrap_or(&["*".to_owned()]),
            )?,
            started: None,
            interval_ms: None,
            created_at: at,
            last_seen: at,
        })
    }
}

impl ClientInstanceRow {
    /// The projects, decoded from `projects`.
    pub fn projects(&self) -> Result<Vec<String>, StoreError> {
        from_json(
            "client instance",
            format_args!("{} of {}", self.instance_id, self.app_name),
            "projects",
            &self.projects,
        )
    }
}

/// Evaluations of a flag by an application in an environment during one hour.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = client_usage, check_for_backend(crate::connection::MultiBackend))]
pub struct UsageRow {
    /// The flag.
    pub feature_name: String,
    /// The application.
    pub app_name: String,
    /// The environment.
    pub environment: String,
    /// The start of the hour, UTC.
    pub hour: NaiveDateTime,
    /// Evaluations that were on.
    pub yes: i64,
    /// Evaluations that were off.
    pub no: i64,
    /// Counts by variant name, a JSON object.
    pub variants: String,
}

impl UsageRow {
    /// The variant counts, decoded from `variants`.
    pub fn variants(&self) -> Result<BTreeMap<String, i64>, StoreError> {
        from_json(
            "client usage",
            format_args!(
                "{} by {} in {}",
                self.feature_name, self.app_name, self.environment
            ),
            "variants",
            &self.variants,
        )
    }
}

/// A flag name an SDK asked for that no flag has.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = unknown_flags, check_for_backend(crate::connection::MultiBackend))]
pub struct UnknownFlagRow {
    /// The name asked for.
    pub name: String,
    /// The application that asked.
    pub app_name: String,
    /// The environment it asked in.
    pub environment: String,
    /// When it last asked, UTC.
    pub seen_at: NaiveDateTime,
}

/// A server-wide setting.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = settings, check_for_backend(crate::connection::MultiBackend))]
pub struct SettingRow {
    /// Its name.
    pub name: String,
    /// Its value, a JSON document.
    pub content: String,
}

/// A webhook (one of Unleash's addons), as stored: its lists and parameters as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = addons, check_for_backend(crate::connection::MultiBackend))]
pub struct AddonRow {
    /// Its id.
    pub id: i32,
    /// `webhook`.
    pub provider: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it delivers.
    pub enabled: bool,
    /// The provider's parameters, a JSON object.
    pub parameters: String,
    /// The event types it delivers, a JSON list.
    pub events: String,
    /// The projects it listens to, a JSON list; empty for every project.
    pub projects: String,
    /// The environments it listens to, a JSON list; empty for every environment.
    pub environments: String,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A webhook's settings, as parsed: what a create writes and an update replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddonConfig {
    /// `webhook`.
    pub provider: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it delivers.
    pub enabled: bool,
    /// The provider's parameters: strings, numbers or booleans.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// The event types it delivers.
    pub events: Vec<String>,
    /// The projects it listens to; empty for every project.
    pub projects: Vec<String>,
    /// The environments it listens to; empty for every environment.
    pub environments: Vec<String>,
}

/// A stored webhook, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addon {
    /// Its id.
    pub id: i32,
    /// Its settings.
    pub config: AddonConfig,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl TryFrom<AddonRow> for Addon {
    type Error = StoreError;

    fn try_from(row: AddonRow) -> Result<Self, StoreError> {
        let id = row.id;
        Ok(Self {
            id,
            config: AddonConfig {
                provider: row.provider,
                description: row.description,
                enabled: row.enabled,
                parameters: from_json("addon", id, "parameters", &row.parameters)?,
                events: from_json("addon", id, "events", &row.events)?,
                projects: from_json("addon", id, "projects", &row.projects)?,
                environments: from_json("addon", id, "environments", &row.environments)?,
            },
            created_at: row.created_at,
        })
    }
}

/// What one delivery to a webhook did.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = integration_events, check_for_backend(crate::connection::MultiBackend))]
pub struct IntegrationEventRow {
    /// Its id: increasing.
    pub id: i32,
    /// The webhook.
    pub integration_id: i32,
    /// When the delivery ended, UTC.
    pub created_at: NaiveDateTime,
    /// `success`, `failed` or `successWithErrors`.
    pub state: String,
    /// What happened, in words.
    pub state_details: String,
    /// The audit event delivered, JSON.
    pub event: String,
    /// The request: URL, content type and body, JSON.
    pub details: String,
}

/// A delivery to record.
#[derive(Debug, Clone, PartialEq, Eq, Insertable)]
#[diesel(table_name = integration_events)]
pub struct NewIntegrationEvent {
    /// The webhook.
    pub integration_id: i32,
    /// When the delivery ended, UTC.
    pub created_at: NaiveDateTime,
    /// `success`, `failed` or `successWithErrors`.
    pub state: String,
    /// What happened, in words.
    pub state_details: String,
    /// The audit event delivered, JSON.
    pub event: String,
    /// The request: URL, content type and body, JSON.
    pub details: String,
}
