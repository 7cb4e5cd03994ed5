//! Features: `/api/admin/projects/{projectId}/features`.

use flag_eval::{Strategy, Variant};
use flag_store::models::{FeatureRow, UserRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::catalogue::model::VariantSchema;
use crate::identity::users::types::image_url;
use crate::runtime::domain::{FeatureType, ResourceName};
use crate::runtime::input::iso;

/// A feature, without its environments, as Unleash answers its writes: `archivedAt` only once
/// archived.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureOut {
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// `release`, `experiment`, `operational`, `kill-switch`, `permission` or `sunset`.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// The project it belongs to.
    pub project: String,
    /// Whether it is marked stale.
    pub stale: bool,
    /// When it was created.
    pub created_at: String,
    /// Whether SDKs emit impression events for it.
    pub impression_data: bool,
    /// When it was archived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<String>,
    /// Whether it is archived.
    pub archived: bool,
}

impl From<FeatureRow> for FeatureOut {
    fn from(row: FeatureRow) -> Self {
        Self {
            name: row.name,
            description: row.description,
            feature_type: row.feature_type,
            project: row.project_id,
            stale: row.stale,
            created_at: iso(row.created_at),
            impression_data: row.impression_data,
            archived_at: row.archived_at.map(iso),
            archived: row.archived_at.is_some(),
        }
    }
}

/// A feature in one environment, as a feature list shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironmentSummary {
    /// The environment.
    pub name: String,
    /// Whether the feature is on there.
    pub enabled: bool,
    /// The environment's type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// The environment's display order.
    pub sort_order: i32,
    /// The feature's variants there.
    pub variant_count: usize,
    /// When an SDK last reported evaluating it there.
    pub last_seen_at: Option<String>,
    /// Whether it has strategies there, disabled ones included.
    pub has_strategies: bool,
    /// Whether any of them is enabled.
    pub has_enabled_strategies: bool,
}

/// A feature in a project's list.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureListItem {
    /// The feature.
    #[serde(flatten)]
    pub feature: FeatureOut,
    /// Its state in each environment of its project that the caller may read.
    pub environments: Vec<FeatureEnvironmentSummary>,
}

/// `GET /api/admin/projects/{projectId}/features`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeaturesOut {
    /// Always 2, as Unleash 8 answers.
    pub version: u32,
    /// The project's features, by name.
    pub features: Vec<FeatureListItem>,
}

/// Body of `POST /api/admin/projects/{projectId}/features`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateFeature {
    /// Unique across projects, archived features included.
    pub name: ResourceName,
    /// `release` when absent.
    #[serde(default, rename = "type")]
    pub feature_type: FeatureType,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether SDKs emit impression events for it.
    #[serde(default)]
    pub impression_data: bool,
}

/// A strategy as a flag's read shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureStrategyOut {
    /// The strategy type.
    pub name: String,
    /// Constraints.
    #[schema(value_type = Vec<crate::catalogue::model::ConstraintSchema>)]
    pub constraints: Vec<flag_eval::Constraint>,
    /// Strategy variants.
    #[schema(value_type = Vec<VariantSchema>)]
    pub variants: Vec<Variant>,
    /// Parameters.
    #[schema(value_type = Object)]
    pub parameters: flag_eval::Parameters,
    /// Segment ids.
    pub segments: Vec<i64>,
    /// Evaluation order.
    pub sort_order: i64,
    /// Its id.
    pub id: String,
    /// Display title.
    pub title: Option<String>,
    /// Disabled strategies are kept but not evaluated.
    pub disabled: bool,
}

impl FeatureStrategyOut {
    /// `strategy` as a flag's read shows it.
    pub fn of(strategy: Strategy) -> Self {
        Self {
            name: strategy.name,
            constraints: strategy.constraints,
            variants: strategy.variants,
            parameters: strategy.parameters,
            segments: strategy.segments,
            sort_order: strategy.sort_order.unwrap_or(0),
            id: strategy.id.unwrap_or_default(),
            title: strategy.title,
            disabled: strategy.disabled.unwrap_or(false),
        }
    }
}

/// A flag's state in one environment.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEnvironmentOut {
    /// The environment.
    pub name: String,
    /// When an SDK last reported evaluating the flag there.
    pub last_seen_at: Option<String>,
    /// Its variants there; only when asked for (`variantEnvironments=true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<VariantSchema>>)]
    pub variants: Option<Vec<Variant>>,
    /// Whether the flag is on there.
    pub enabled: bool,
    /// Evaluations to true SDKs reported there in the last hour.
    pub yes: i64,
    /// Evaluations to false SDKs reported there in the last hour.
    pub no: i64,
    /// The environment's type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// The environment's display order.
    pub sort_order: i32,
    /// Its strategies there, in evaluation order.
    pub strategies: Vec<FeatureStrategyOut>,
}

/// Someone who created or changed a flag.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonOut {
    /// The user's id: -42 for admin tokens, -1337 for the server.
    pub id: i32,
    /// Their name, username or email.
    pub name: String,
    /// A Gravatar address.
    pub image_url: String,
}

/// A parent a flag depends on.
#[derive(Debug, Serialize, ToSchema)]
pub struct DependencyOut {
    /// The parent.
    pub feature: String,
    /// Whether the parent must be on (or off).
    pub enabled: bool,
    /// Parent variants that satisfy it; any when empty.
    pub variants: Vec<String>,
}

/// The stage of its lifecycle a flag is in.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleOut {
    /// `initial`, `pre-live`, `live`, `completed` or `archived`.
    pub stage: String,
    /// For `completed`: `kept` or `discarded`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// When it entered the stage.
    pub entered_stage_at: String,
}

/// Who changed a flag.
#[derive(Debug, Serialize, ToSchema)]
pub struct CollaboratorsOut {
    /// The users, most recent first.
    pub users: Vec<PersonOut>,
}

/// `GET /api/admin/projects/{projectId}/features/{featureName}`, as Unleash answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureDetailOut {
    /// Its state in each environment of its project that the caller may read, by display order.
    pub environments: Vec<FeatureEnvironmentOut>,
    /// Its name.
    pub name: String,
    /// Whether SDKs emit impression events for it.
    pub impression_data: bool,
    /// Free text.
    pub description: Option<String>,
    /// Its project.
    pub project: String,
    /// Whether it is marked stale.
    pub stale: bool,
    /// When it was created.
    pub created_at: String,
    /// Who created it, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<PersonOut>,
    /// Its type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// Always false: an archived flag is not found here.
    pub archived: bool,
    /// The parents it depends on.
    pub dependencies: Vec<DependencyOut>,
    /// The flags that depend on it.
    pub children: Vec<String>,
    /// Its lifecycle stage, when recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<LifecycleOut>,
    /// Links: none here.
    #[schema(value_type = Vec<Object>)]
    pub links: Vec<serde_json::Value>,
    /// Who changed it.
    pub collaborators: CollaboratorsOut,
    /// Our extension: when read `at` a past moment, the moment and the revision that answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<AsOfOut>,
}

/// The query of a flag's read.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct FeatureQuery {
    /// `true`: each environment shows its variants.
    #[serde(default)]
    pub variant_environments: Option<String>,
    /// Our extension: the flag as it was at this past moment (RFC 3339 with a time zone), within
    /// the history; archived then, it is shown with `archived: true`. Its usage (`yes`, `no`,
    /// `lastSeenAt`) is not reconstructed and reads as none; its creator and collaborators are
    /// as now.
    #[serde(default)]
    pub at: Option<String>,
}

/// The moment a past read answered for, and the revision in force then.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AsOfOut {
    /// The moment asked for.
    pub at: String,
    /// The revision in force then: the id of the newest audit event at or before it.
    pub revision: i32,
}

/// Body of `PUT /api/admin/projects/{projectId}/features/{featureName}`. As in Unleash, every
/// field is set: one left out takes its default (no description, `release`, not stale, no
/// impression data, not archived).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateFeature {
    /// Must be the feature's own name when given: a feature cannot be renamed.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The type.
    #[serde(default, rename = "type")]
    pub feature_type: FeatureType,
    /// Marked stale.
    #[serde(default)]
    pub stale: bool,
    /// Archives the feature, or revives it when `false`, without the archive operations' checks.
    #[serde(default)]
    pub archived: bool,
    /// Whether SDKs emit impression events.
    #[serde(default)]
    pub impression_data: bool,
}

/// One RFC 6902 JSON Patch operation.
#[derive(Debug, ToSchema)]
#[allow(dead_code, reason = "schema-only: the body is read as json_patch::Patch")]
pub struct PatchOperationSchema {
    /// `add`, `remove`, `replace`, `copy`, `move` or `test`.
    op: String,
    /// A JSON Pointer into the document.
    path: String,
    /// For `copy` and `move`: the pointer to copy or move from.
    from: Option<String>,
    /// For `add`, `replace` and `test`.
    value: Option<serde_json::Value>,
}

/// Body of `POST /api/admin/features/validate`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidateFeatureName {
    /// The name to check.
    pub name: String,
    /// The project the flag would belong to.
    #[serde(default)]
    pub project_id: Option<String>,
}

/// A list of flag names: the body of the batch archive, revive and delete operations.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BatchFeatures {
    /// The flags.
    pub features: Vec<String>,
}

/// Body of `POST /api/admin/projects/{projectId}/stale`.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BatchStale {
    /// The flags.
    pub features: Vec<String>,
    /// Stale, or not.
    pub stale: bool,
}

/// What archiving some flags would do.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArchiveImpactOut {
    /// Listed flags that unlisted flags depend on: archiving them is refused.
    pub parents_with_child_features: Vec<String>,
    /// Whether any listed flag is in a dependency, which archiving removes.
    pub has_deleted_dependencies: bool,
}

/// A feature type.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureTypeOut {
    /// `release`, `kill-switch`...
    pub id: String,
    /// Display name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Days after which a flag of this type is potentially stale; `null` for never.
    pub lifetime_days: Option<i32>,
}

impl From<flag_store::models::FeatureTypeRow> for FeatureTypeOut {
    fn from(row: flag_store::models::FeatureTypeRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            description: row.description,
            lifetime_days: row.lifetime_days,
        }
    }
}

/// `GET /api/admin/feature-types`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureTypesOut {
    /// Always 1.
    pub version: u32,
    /// The types.
    pub types: Vec<FeatureTypeOut>,
}

/// Body of `PUT /api/admin/feature-types/{id}/lifetime`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateLifetime {
    /// Days, at least 0; `0` or `null` for never potentially stale.
    #[schema(minimum = 0, maximum = 2147483647)]
    pub lifetime_days: Option<u32>,
}

/// Body of `POST /api/admin/projects/{projectId}/features/{featureName}/clone`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneFeature {
    /// The new flag's name.
    pub name: ResourceName,
    /// Whether strategies grouped by the old name (`groupId`) are grouped by the new one; `true`
    /// when absent.
    #[serde(default = "yes")]
    pub replace_group_id: bool,
}

fn yes() -> bool {
    true
}

/// The query of the switch operations.
#[derive(Debug, Default, Deserialize, ToSchema, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct SwitchQuery {
    /// `true`: switching on a flag whose strategies are all disabled enables them, instead of
    /// adding the default strategy.
    #[serde(default)]
    pub should_activate_disabled_strategies: Option<String>,
}

impl SwitchQuery {
    /// Whether to enable disabled strategies: only the exact text `true`, as in Unleash.
    pub fn activate_disabled(&self) -> bool {
        self.should_activate_disabled_strategies.as_deref() == Some("true")
    }

    /// How to switch a flag on (`enabled`) or off as this query asks.
    pub fn switch(&self, enabled: bool) -> flag_store::queries::features::Switch {
        flag_store::queries::features::Switch {
            enabled,
            activate_disabled: enabled && self.activate_disabled(),
        }
    }
}

/// A strategy as a feature environment lists it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentStrategyOut {
    /// Its id.
    pub id: String,
    /// The flag.
    pub feature_name: String,
    /// Display title.
    pub title: Option<String>,
    /// Parameters, as strings.
    #[schema(value_type = Object)]
    pub parameters: flag_eval::Parameters,
    /// Constraints.
    #[schema(value_type = Vec<crate::catalogue::model::ConstraintSchema>)]
    pub constraints: Vec<flag_eval::Constraint>,
    /// Strategy variants.
    #[schema(value_type = Vec<VariantSchema>)]
    pub variants: Vec<Variant>,
    /// Evaluation order.
    pub sort_order: i64,
    /// Disabled strategies are kept but not evaluated.
    pub disabled: bool,
    /// The strategy type.
    pub name: String,
}

/// `GET /api/admin/projects/{projectId}/features/{featureName}/environments/{environment}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureInEnvironmentOut {
    /// The flag.
    pub name: String,
    /// The environment.
    pub environment: String,
    /// Whether the flag is on there.
    pub enabled: bool,
    /// Its strategies there, in evaluation order.
    pub strategies: Vec<EnvironmentStrategyOut>,
}

/// A strategy as the strategy list of a feature environment shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyListItem {
    /// Its id.
    pub id: String,
    /// The strategy type.
    pub name: String,
    /// Constraints.
    #[schema(value_type = Vec<crate::catalogue::model::ConstraintSchema>)]
    pub constraints: Vec<flag_eval::Constraint>,
    /// Parameters, as strings.
    #[schema(value_type = Object)]
    pub parameters: flag_eval::Parameters,
    /// Strategy variants.
    #[schema(value_type = Vec<VariantSchema>)]
    pub variants: Vec<Variant>,
    /// Display title.
    pub title: Option<String>,
    /// Disabled strategies are kept but not evaluated.
    pub disabled: bool,
    /// Evaluation order.
    pub sort_order: i64,
    /// A release plan's milestone: always `null` here.
    pub milestone_id: Option<String>,
    /// Segment ids.
    pub segments: Vec<i64>,
}

/// One strategy, as its own read answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyOut {
    /// Its id.
    pub id: String,
    /// The strategy type.
    pub name: String,
    /// Constraints.
    #[schema(value_type = Vec<crate::catalogue::model::ConstraintSchema>)]
    pub constraints: Vec<flag_eval::Constraint>,
    /// Parameters, as strings.
    #[schema(value_type = Object)]
    pub parameters: flag_eval::Parameters,
    /// Strategy variants.
    #[schema(value_type = Vec<VariantSchema>)]
    pub variants: Vec<Variant>,
    /// Segment ids.
    pub segments: Vec<i64>,
    /// Display title.
    pub title: Option<String>,
    /// Disabled strategies are kept but not evaluated.
    pub disabled: bool,
    /// Evaluation order.
    pub sort_order: i64,
}

impl StrategyOut {
    /// `strategy` as its read shows it.
    pub fn of(strategy: Strategy) -> Self {
        Self {
            id: strategy.id.unwrap_or_default(),
            name: strategy.name,
            constraints: strategy.constraints,
            parameters: strategy.parameters,
            variants: strategy.variants,
            segments: strategy.segments,
            title: strategy.title,
            disabled: strategy.disabled.unwrap_or(false),
            sort_order: strategy.sort_order.unwrap_or(0),
        }
    }
}

/// A new place in the evaluation order.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StrategyOrder {
    /// The strategy.
    pub id: String,
    /// Its new place.
    pub sort_order: i32,
}

/// Body of the bulk switch operations.
#[derive(Debug, Deserialize, ToSchema)]
pub struct BulkSwitch {
    /// The flags.
    pub features: Vec<String>,
}

/// The username Unleash stores for the users it writes as: `unleash_admin_token` for admin
/// tokens and `unleash_system_user` for the server itself; their avatars are made from it.
fn system_username(id: i32) -> Option<&'static str> {
    match id {
        flag_store::models::Actor::ADMIN_TOKEN => Some("unleash_admin_token"),
        flag_store::models::Actor::SYSTEM => Some("unleash_system_user"),
        _ => None,
    }
}

/// Someone who wrote: a user by their name, else username, else email; an admin token or the
/// server by the names Unleash gives them; anyone else by the name the audit log kept.
pub fn person(id: i32, user: Option<&UserRow>, written: &str) -> PersonOut {
    let name = match (id, user) {
        (_, Some(user)) => user
            .name
            .clone()
            .or_else(|| user.username.clone())
            .or_else(|| user.email.clone())
            .unwrap_or_else(|| "unknown".into()),
        (flag_store::models::Actor::ADMIN_TOKEN, None) => "Unleash Admin Token User".into(),
        (flag_store::models::Actor::SYSTEM, None) => "Unleash System".into(),
        (_, None) if !written.is_empty() => written.to_owned(),
        (_, None) => "unknown".into(),
    };
    PersonOut {
        id,
        image_url: image_url(
            user.and_then(|user| user.email.as_deref()),
            user.and_then(|user| user.username.as_deref())
                .or_else(|| system_username(id)),
            id,
        ),
        name,
    }
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn avatars_hash_what_unleash_hashes() {
        let avatar = |hash: &str| format!("https://gravatar.com/avatar/{hash}?s=42&d=retro&r=g");
        // sha256("ops@example.com"): the email, lower-cased, whatever the username and id.
        assert_eq!(
            image_url(Some(" Ops@Example.com"), Some("ops"), 7),
            avatar("af3c82544f648b38dc7d403473bb4b957cd04353afd9096fa871c1e469656c8c")
        );
        // The admin token's user, as Unleash's web UI knows it, and its own `admin`.
        assert_eq!(
            person(flag_store::models::Actor::ADMIN_TOKEN, None, "").image_url,
            avatar("989553ee532211da1dfc7513e22e544afde4a4b06e03355448c1b1059e6a7e6d")
        );
        assert_eq!(
            image_url(None, Some("admin"), 1),
            avatar("8c6976e5b5410415bde908bd4dee15dfb167a9c873fc4bb8a81f6f2ab448a918")
        );
        // Without email or username, the id.
        assert_eq!(
            image_url(None, None, 12),
            avatar(&hex::encode(Sha256::digest("12")))
        );
    }
}
