//! Change requests' configuration, in Unleash's shapes:
//! `/api/admin/projects/{projectId}/change-requests/config`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// One environment of a project, and whether it takes changes only through change requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestEnvironmentConfigSchema)]
pub struct ChangeRequestEnvironmentConfig {
    /// The environment.
    pub environment: String,
    /// Its type.
    #[serde(rename = "type")]
    pub environment_type: String,
    /// Whether its changes need a change request.
    pub change_request_enabled: bool,
    /// How many distinct people must approve one; `null` while change requests are off.
    pub required_approvals: Option<i32>,
}

/// Turning change requests on or off for one environment of a project.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = UpdateChangeRequestEnvironmentConfigSchema)]
pub struct UpdateChangeRequestConfigIn {
    /// Whether its changes need a change request.
    pub change_requests_enabled: bool,
    /// How many distinct people must approve one: 1 to 10 (a number outside is brought inside,
    /// as Unleash does); 1 when not given.
    #[serde(default)]
    pub required_approvals: Option<i64>,
}

/// One change to add to a request, as Unleash's `changeRequestCreateSchema`: an action on a
/// flag, with the payload the direct write of that action takes.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ChangeRequestCreateSchema)]
pub struct ChangeIn {
    /// The flag it changes; absent (or `null`) for a segment's change.
    #[serde(default)]
    pub feature: Option<String>,
    /// `updateEnabled`, `addStrategy`, `updateStrategy`, `deleteStrategy`, `reorderStrategy`,
    /// `patchVariant`, `archiveFeature`, `addDependency` or `deleteDependency` for a flag;
    /// `updateSegment` for a segment of the project.
    pub action: String,
    /// What the action takes: `{enabled}`; a strategy (with its `id` to update it); `{id}`;
    /// `[{id, sortOrder}]`; `{variants}`; nothing; a dependency `{feature, enabled?, variants?}`;
    /// a segment `{id, name, description?, project?, constraints}`.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
}

impl ChangeIn {
    /// Switching `feature` on or off.
    pub fn switch(feature: impl Into<String>, enabled: bool) -> Self {
        Self {
            feature: Some(feature.into()),
            action: "updateEnabled".into(),
            payload: serde_json::json!({ "enabled": enabled }),
        }
    }

    /// Archiving `feature`.
    pub fn archive(feature: impl Into<String>) -> Self {
        Self {
            feature: Some(feature.into()),
            action: "archiveFeature".into(),
            payload: serde_json::Value::Null,
        }
    }
}

/// One change, or several, to add to the caller's draft.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(as = ChangeRequestOneOrManyCreateSchema)]
pub enum ChangesIn {
    /// One change.
    One(ChangeIn),
    /// Several, applied in this order.
    Many(Vec<ChangeIn>),
}

impl ChangesIn {
    /// The changes, in order.
    pub fn into_vec(self) -> Vec<ChangeIn> {
        match self {
            Self::One(change) => vec![change],
            Self::Many(changes) => changes,
        }
    }
}

/// Who did something to a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestCreatedBySchema)]
pub struct ChangeRequestUser {
    /// Their id.
    pub id: i32,
    /// Their username, or their email when they have none.
    pub username: Option<String>,
    /// Always `null`: no avatars are kept.
    pub image_url: Option<String>,
}

/// One change of a request, as read.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestChangeSchema)]
pub struct ChangeOut {
    /// Its id.
    pub id: i32,
    /// The action.
    pub action: String,
    /// Its payload; for a change of something that existed, with a `snapshot` of it as it was
    /// when the change was made.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    /// Present when what it changes has moved since: it will not be applied until it is made
    /// again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
    /// Who made it.
    pub created_by: ChangeRequestUser,
    /// When.
    pub created_at: String,
}

/// A flag's changes in a request.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestFeatureSchema)]
pub struct FeatureChangesOut {
    /// The flag.
    pub name: String,
    /// Present when the flag itself moved (archived, gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
    /// Its changes, in order.
    pub changes: Vec<ChangeOut>,
}

/// A segment's change in a request, as read.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestSegmentChangeSchema)]
pub struct SegmentChangeOut {
    /// The change's id.
    pub id: i32,
    /// `updateSegment`.
    pub action: String,
    /// The segment's name now.
    pub name: String,
    /// Its payload, with a `snapshot` of the segment as it was when the change was made.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    /// Present when the segment moved since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<String>,
    /// Who made it.
    pub created_by: ChangeRequestUser,
    /// When.
    pub created_at: String,
}

/// An approval or a rejection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestApprovalSchema)]
pub struct ReviewOut {
    /// Who.
    pub created_by: ChangeRequestUser,
    /// When.
    pub created_at: String,
}

/// A comment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestCommentSchema)]
pub struct CommentOut {
    /// Its id.
    pub id: i32,
    /// What it says.
    pub text: String,
    /// Who wrote it.
    pub created_by: ChangeRequestUser,
    /// When.
    pub created_at: String,
}

/// When a scheduled request applies, and how its schedule stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestScheduleSchema)]
pub struct ScheduleOut {
    /// When it applies.
    pub scheduled_at: String,
    /// `pending`, or `failed` when it could not apply.
    pub status: String,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The same, under Unleash's older name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}

/// A change request, as Unleash's `changeRequestSchema`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ChangeRequestSchema)]
pub struct ChangeRequestOut {
    /// Its id.
    pub id: i32,
    /// Its title, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The environment its changes are made in.
    pub environment: String,
    /// The project.
    pub project: String,
    /// The distinct approvals it needs.
    pub min_approvals: i32,
    /// `Draft`, `In review`, `Approved`, `Scheduled`, `Applied`, `Cancelled` or `Rejected`.
    pub state: String,
    /// While scheduled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleOut>,
    /// Its author.
    pub created_by: ChangeRequestUser,
    /// When it was made.
    pub created_at: String,
    /// When it entered each state.
    #[schema(value_type = Object)]
    pub state_timestamps: std::collections::BTreeMap<String, String>,
    /// Its changes, by flag.
    pub features: Vec<FeatureChangesOut>,
    /// Its segments' changes.
    pub segments: Vec<SegmentChangeOut>,
    /// Its approvals.
    pub approvals: Vec<ReviewOut>,
    /// Its rejections.
    pub rejections: Vec<ReviewOut>,
    /// Its comments.
    pub comments: Vec<CommentOut>,
}

/// A state change: `{state, comment?}`, or `{state: "Scheduled", scheduledAt}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ChangeRequestStateSchema)]
pub struct ChangeStateIn {
    /// `In review`, `Approved`, `Applied`, `Scheduled`, `Cancelled` or `Rejected`.
    pub state: String,
    /// With `Scheduled`: when, RFC 3339 with a time zone, in the future.
    #[serde(default)]
    pub scheduled_at: Option<crate::runtime::domain::Timestamp>,
    /// A comment to add with it.
    #[serde(default)]
    pub comment: Option<String>,
}

/// A new title.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChangeRequestUpdateTitleSchema)]
pub struct TitleIn {
    /// The title.
    pub title: String,
}

/// A comment to add.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChangeRequestAddCommentSchema)]
pub struct CommentIn {
    /// What it says: 1 to 1,000 characters.
    pub text: String,
}

/// A scheduled request, as the list by flag answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ScheduledChangeRequestViewModelSchema)]
pub struct ScheduledOut {
    /// Its id.
    pub id: i32,
    /// Its environment.
    pub environment: String,
    /// Its title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}
