//! The audit log: events as stored, their types, new events and who writes them.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::Serialize;

use super::TagRef;
use crate::error::StoreError;
use crate::schema::events;

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
    /// `group-created`.
    GroupCreated,
    /// `group-deleted`.
    GroupDeleted,
    /// `group-updated`.
    GroupUpdated,
    /// `pat-created`.
    PatCreated,
    /// `pat-deleted`.
    PatDeleted,
    /// `project-access-updated`.
    ProjectAccessUpdated,
    /// `project-deleted`.
    ProjectDeleted,
    /// `project-updated`.
    ProjectUpdated,
    /// `environment-updated`.
    EnvironmentUpdated,
    /// `environment-deleted`.
    EnvironmentDeleted,
    /// `role-created`.
    RoleCreated,
    /// `role-deleted`.
    RoleDeleted,
    /// `role-updated`.
    RoleUpdated,
    /// `service-account-created`.
    ServiceAccountCreated,
    /// `service-account-deleted`.
    ServiceAccountDeleted,
    /// `service-account-updated`.
    ServiceAccountUpdated,
    /// `change-request-created`.
    ChangeRequestCreated,
    /// `change-request-discarded`.
    ChangeRequestDiscarded,
    /// `change-added`.
    ChangeAdded,
    /// `change-discarded`.
    ChangeDiscarded,
    /// `change-edited`.
    ChangeEdited,
    /// `change-request-approved`.
    ChangeRequestApproved,
    /// `change-request-rejected`.
    ChangeRequestRejected,
    /// `change-request-approval-added`.
    ChangeRequestApprovalAdded,
    /// `change-request-cancelled`.
    ChangeRequestCancelled,
    /// `change-request-sent-to-review`.
    ChangeRequestSentToReview,
    /// `change-request-applied`.
    ChangeRequestApplied,
    /// `change-request-scheduled`.
    ChangeRequestScheduled,
    /// `change-request-scheduled-application-success`.
    ChangeRequestScheduledApplicationSuccess,
    /// `change-request-scheduled-application-failure`.
    ChangeRequestScheduledApplicationFailure,
    /// `change-request-configuration-updated`.
    ChangeRequestConfigurationUpdated,
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
            Self::GroupCreated => "group-created",
            Self::GroupDeleted => "group-deleted",
            Self::GroupUpdated => "group-updated",
            Self::PatCreated => "pat-created",
            Self::PatDeleted => "pat-deleted",
            Self::ProjectAccessUpdated => "project-access-updated",
            Self::ProjectDeleted => "project-deleted",
            Self::ProjectUpdated => "project-updated",
            Self::EnvironmentUpdated => "environment-updated",
            Self::EnvironmentDeleted => "environment-deleted",
            Self::RoleCreated => "role-created",
            Self::RoleDeleted => "role-deleted",
            Self::RoleUpdated => "role-updated",
            Self::ServiceAccountCreated => "service-account-created",
            Self::ServiceAccountDeleted => "service-account-deleted",
            Self::ServiceAccountUpdated => "service-account-updated",
            Self::ChangeRequestCreated => "change-request-created",
            Self::ChangeRequestDiscarded => "change-request-discarded",
            Self::ChangeAdded => "change-added",
            Self::ChangeDiscarded => "change-discarded",
            Self::ChangeEdited => "change-edited",
            Self::ChangeRequestApproved => "change-request-approved",
            Self::ChangeRequestRejected => "change-request-rejected",
            Self::ChangeRequestApprovalAdded => "change-request-approval-added",
            Self::ChangeRequestCancelled => "change-request-cancelled",
            Self::ChangeRequestSentToReview => "change-request-sent-to-review",
            Self::ChangeRequestApplied => "change-request-applied",
            Self::ChangeRequestScheduled => "change-request-scheduled",
            Self::ChangeRequestScheduledApplicationSuccess => "change-request-scheduled-application-success",
            Self::ChangeRequestScheduledApplicationFailure => "change-request-scheduled-application-failure",
            Self::ChangeRequestConfigurationUpdated => "change-request-configuration-updated",
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

    /// The event with `pre_data`, written as JSON, as what was before.
    pub fn with_pre_data<T: Serialize + ?Sized>(self, pre_data: &T) -> Result<Self, StoreError> {
        Ok(Self {
            pre_data: Some(crate::queries::to_json("pre_data", pre_data)?),
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
