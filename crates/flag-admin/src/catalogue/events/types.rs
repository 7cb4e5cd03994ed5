//! The audit log as Unleash shows it.

use flag_store::models::EventRow;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::runtime::input::iso;

/// One event.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventOut {
    /// Its id: increasing.
    pub id: i32,
    /// Its type (`feature-created`...).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Who wrote: an email or username, or an admin token's name.
    pub created_by: String,
    /// When.
    pub created_at: String,
    /// The user's id: -42 for an admin token, -1337 for the server.
    pub created_by_user_id: Option<i32>,
    /// The value after, as Unleash records it: the whole object, `{variants}` for variants.
    #[schema(value_type = Option<Value>)]
    pub data: Option<serde_json::Value>,
    /// The value before: any JSON value.
    #[schema(value_type = Option<Value>)]
    pub pre_data: Option<serde_json::Value>,
    /// The flag's tags then.
    #[schema(value_type = Vec<Object>)]
    pub tags: serde_json::Value,
    /// The flag concerned.
    pub feature_name: Option<String>,
    /// The project concerned.
    pub project: Option<String>,
    /// The environment concerned.
    pub environment: Option<String>,
    /// `transaction` for an event written with others in one transaction; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_type: Option<String>,
    /// The transaction's id, a ULID its events share; absent when `groupType` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// A short name of what happened (`Flag tagged`), or the type when Unleash has none; in
    /// searches only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// What happened, one Markdown sentence linking to the flag and project; in searches only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl EventOut {
    /// `row` as Unleash shows it; stored JSON that does not read is shown as `null`.
    pub fn of(row: EventRow) -> Self {
        let json = |text: Option<String>| text.and_then(|text| serde_json::from_str(&text).ok());
        Self {
            id: row.id,
            event_type: row.event_type,
            created_by: row.created_by,
            created_at: iso(row.created_at),
            created_by_user_id: row.created_by_user_id,
            data: json(row.data),
            pre_data: json(row.pre_data),
            tags: json(row.tags).unwrap_or_else(|| serde_json::Value::Array(Vec::new())),
            feature_name: row.feature_name,
            project: row.project,
            environment: row.environment,
            group_type: row.group_type,
            group_id: row.group_id,
            label: None,
            summary: None,
        }
    }
}

/// `GET /api/admin/events`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EventsOut {
    /// Always 1.
    pub version: u32,
    /// The newest events.
    pub events: Vec<EventOut>,
    /// How many events there are.
    pub total_events: i64,
}

/// `GET /api/admin/events/{featureName}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureEventsOut {
    /// Always 1.
    pub version: u32,
    /// The flag.
    pub toggle_name: String,
    /// Its newest events.
    pub events: Vec<EventOut>,
    /// How many events it has.
    pub total_events: i64,
}

/// `GET /api/admin/search/events`.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventSearchOut {
    /// The page of events, newest first.
    pub events: Vec<EventOut>,
    /// How many match.
    pub total: i64,
}

/// Someone who wrote events.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventCreatorOut {
    /// The user's id: -42 for admin tokens, -1337 for the server, 0 when unknown.
    pub id: i32,
    /// Their name.
    pub name: String,
}

/// Query of `GET /api/admin/events`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only this project's events.
    #[serde(default)]
    pub project: Option<String>,
}

/// Query of `GET /api/admin/search/events`: the filters are `IS:value` or
/// `IS_ANY_OF:value,value`, the dates `IS:yyyy-MM-dd`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct EventSearchQuery {
    /// Text in the events' data, data before or tags, in any letter case; `%` and `_` are
    /// wildcards.
    #[serde(default)]
    pub query: Option<String>,
    /// Flags.
    #[serde(default)]
    pub feature: Option<String>,
    /// Projects.
    #[serde(default)]
    pub project: Option<String>,
    /// Event types.
    #[serde(default, rename = "type")]
    pub event_type: Option<String>,
    /// Users, by id.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Environments.
    #[serde(default)]
    pub environment: Option<String>,
    /// Event ids.
    #[serde(default)]
    pub id: Option<String>,
    /// Transaction groups, by id.
    #[serde(default)]
    pub group_id: Option<String>,
    /// From this day on.
    #[serde(default)]
    pub from: Option<String>,
    /// Up to and including this day.
    #[serde(default)]
    pub to: Option<String>,
    /// Events to skip; 0 by default.
    #[serde(default)]
    pub offset: Option<String>,
    /// Events to answer, 1 to 1000; 50 by default.
    #[serde(default)]
    pub limit: Option<String>,
}

/// One difference between an event's value before and after, at a JSON Pointer (`""` for the
/// whole value).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Where, as a JSON Pointer: `/strategies/0/parameters/rollout`.
    pub path: String,
    /// The value there before; `None` where there was none.
    pub before: Option<serde_json::Value>,
    /// The value there after; `None` where it was removed.
    pub after: Option<serde_json::Value>,
}

impl EventOut {
    /// What the event changed, path by path: the smallest set of additions, removals and
    /// replacements that turns its value before into its value after (JSON Patch's diff). An
    /// event with only one of the two is one change of the whole value.
    pub fn changes(&self) -> Vec<Change> {
        let present = |value: &Option<serde_json::Value>| value.clone().filter(|value| !value.is_null());
        match (present(&self.pre_data), present(&self.data)) {
            (Some(before), Some(after)) => json_patch::diff(&before, &after)
                .0
                .into_iter()
                .map(|operation| {
                    let path = operation.path().to_string();
                    let was = before.pointer(&path).cloned();
                    let now = match operation {
                        json_patch::PatchOperation::Remove(_) => None,
                        _ => after.pointer(&path).cloned(),
                    };
                    Change {
                        path,
                        before: was,
                        after: now,
                    }
                })
                .collect(),
            (None, None) => Vec::new(),
            (before, after) => vec![Change {
                path: String::new(),
                before,
                after,
            }],
        }
    }
}
