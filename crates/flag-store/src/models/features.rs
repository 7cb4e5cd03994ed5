//! Feature flags and what hangs off them: their state per environment, types, tags, lifecycle
//! stages and dependencies.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

use flag_eval::Variant;

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::{
    feature_dependencies, feature_environments, feature_lifecycles, feature_types, features, tag_types,
};

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
    /// The user who created it ([`Actor::user_id`](crate::models::Actor::user_id)), when known.
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
