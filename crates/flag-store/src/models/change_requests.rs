//! Change requests: the rule that a project's environment takes changes only through them, the
//! requests, their changes, reviews and comments.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::schema::{
    change_request_changes, change_request_comments, change_request_reviews, change_request_settings,
    change_requests,
};

/// An environment of a project that takes changes only through change requests.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = change_request_settings)]
pub struct ChangeRequestRuleRow {
    /// The project.
    pub project: String,
    /// The environment.
    pub environment: String,
    /// How many distinct people must approve a request.
    pub required_approvals: i32,
}

/// Where a change request is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ChangeRequestState {
    /// Its author is still adding changes; nobody else sees it.
    Draft,
    /// Sent for review.
    #[serde(rename = "In review")]
    InReview,
    /// Approved by as many people as it needs.
    Approved,
    /// Approved and set to apply itself at a time.
    Scheduled,
    /// Its changes were made.
    Applied,
    /// Withdrawn by its author or an administrator.
    Cancelled,
    /// Refused by a reviewer.
    Rejected,
}

impl ChangeRequestState {
    /// Every state, in the order of a request's life.
    pub const ALL: [Self; 7] = [
        Self::Draft,
        Self::InReview,
        Self::Approved,
        Self::Scheduled,
        Self::Applied,
        Self::Cancelled,
        Self::Rejected,
    ];

    /// The name Unleash gives it, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "Draft",
            Self::InReview => "In review",
            Self::Approved => "Approved",
            Self::Scheduled => "Scheduled",
            Self::Applied => "Applied",
            Self::Cancelled => "Cancelled",
            Self::Rejected => "Rejected",
        }
    }

    /// The state named `name`, as Unleash spells it.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|state| state.as_str() == name)
    }

    /// Whether nothing more can happen to it.
    pub fn is_closed(self) -> bool {
        matches!(self, Self::Applied | Self::Cancelled | Self::Rejected)
    }

    /// Whether a request in this state may be moved to `next`: a draft is sent for review; one
    /// in review is approved (one approval at a time, until it has enough); an approved one is
    /// applied or scheduled, a scheduled one applied now or scheduled again; any open one is
    /// rejected (once sent) or cancelled.
    pub fn may_become(self, next: Self) -> bool {
        match next {
            Self::Draft => false,
            Self::InReview => self == Self::Draft,
            Self::Approved => self == Self::InReview,
            Self::Applied | Self::Scheduled => matches!(self, Self::Approved | Self::Scheduled),
            Self::Rejected => matches!(self, Self::InReview | Self::Approved | Self::Scheduled),
            Self::Cancelled => !self.is_closed(),
        }
    }
}

/// A change request as stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = change_requests)]
pub struct ChangeRequestRow {
    /// Its id.
    pub id: i32,
    /// The project.
    pub project: String,
    /// The environment its changes are made in.
    pub environment: String,
    /// Its title, when its author gave one.
    pub title: Option<String>,
    /// Its state, as stored; read with [`ChangeRequestRow::state`].
    pub state: String,
    /// The approvals it needs.
    pub min_approvals: i32,
    /// Its author.
    pub created_by_user_id: i32,
    /// When it was made.
    pub created_at: NaiveDateTime,
    /// When it entered each state, JSON.
    pub state_timestamps: String,
    /// While scheduled: when it applies.
    pub scheduled_at: Option<NaiveDateTime>,
    /// While scheduled: who scheduled it.
    pub scheduled_by_user_id: Option<i32>,
    /// While scheduled: `pending`, or `failed`.
    pub schedule_status: Option<String>,
    /// Why a schedule failed.
    pub schedule_reason: Option<String>,
}

impl ChangeRequestRow {
    /// Its state.
    pub fn state(&self) -> Result<ChangeRequestState, StoreError> {
        ChangeRequestState::parse(&self.state).ok_or_else(|| StoreError::Corrupt {
            entity: "change request",
            key: self.id.to_string(),
            column: "state",
            source: format!("{:?} is no state", self.state).into(),
        })
    }

    /// When it entered each state.
    pub fn state_timestamps(&self) -> Result<std::collections::BTreeMap<String, String>, StoreError> {
        crate::queries::from_json(
            "change request",
            self.id,
            "state_timestamps",
            &self.state_timestamps,
        )
    }
}

/// One change of a request.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = change_request_changes)]
pub struct ChangeRow {
    /// Its id.
    pub id: i32,
    /// The request it belongs to.
    pub change_request_id: i32,
    /// The flag it changes; none for a segment's change.
    pub feature: Option<String>,
    /// The segment it changes, for a segment's change.
    pub segment_id: Option<i32>,
    /// What it does, as Unleash names the action (`updateEnabled`, `addStrategy`...).
    pub action: String,
    /// Its payload, JSON, as checked when it was added.
    pub payload: String,
    /// What it changes as it was when it was added, JSON; none for what did not exist.
    pub snapshot: Option<String>,
    /// Who added it.
    pub created_by_user_id: i32,
    /// When.
    pub created_at: NaiveDateTime,
}

impl ChangeRow {
    /// Its payload.
    pub fn payload(&self) -> Result<serde_json::Value, StoreError> {
        crate::queries::from_json("change", self.id, "payload", &self.payload)
    }

    /// What it changes as it was when it was added.
    pub fn snapshot(&self) -> Result<Option<serde_json::Value>, StoreError> {
        self.snapshot
            .as_deref()
            .map(|text| crate::queries::from_json("change", self.id, "snapshot", text))
            .transpose()
    }
}

/// A change to add to a request.
#[derive(Debug, Clone, PartialEq)]
pub struct NewChange {
    /// The flag it changes; none for a segment's change.
    pub feature: Option<String>,
    /// The segment it changes.
    pub segment_id: Option<i32>,
    /// The action.
    pub action: String,
    /// Its payload.
    pub payload: serde_json::Value,
    /// What it changes, as it is now.
    pub snapshot: Option<serde_json::Value>,
}

/// An approval or a rejection.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = change_request_reviews)]
pub struct ReviewRow {
    /// The request.
    pub change_request_id: i32,
    /// Who reviewed.
    pub user_id: i32,
    /// `approved` or `rejected`.
    pub decision: String,
    /// When.
    pub created_at: NaiveDateTime,
}

/// A comment on a request.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = change_request_comments)]
pub struct CommentRow {
    /// Its id.
    pub id: i32,
    /// The request.
    pub change_request_id: i32,
    /// What it says.
    pub text: String,
    /// Who wrote it.
    pub created_by_user_id: i32,
    /// When.
    pub created_at: NaiveDateTime,
}

/// A request with everything it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeRequestRecord {
    /// The request.
    pub request: ChangeRequestRow,
    /// Its changes, in the order they were added.
    pub changes: Vec<ChangeRow>,
    /// Its approvals and rejections, oldest first.
    pub reviews: Vec<ReviewRow>,
    /// Its comments, oldest first.
    pub comments: Vec<CommentRow>,
}
