//! The audit log: the newest events, a flag's events, searching them, and who wrote them; and
//! each event told in one Markdown sentence, as Unleash tells it.

pub mod types;

use chrono::NaiveDate;
use flag_store::models::Actor;
use flag_store::queries;
use flag_store::queries::events::EventFilter;
use serde_json::Value;

use crate::catalogue::events::types::{
    EventCreatorOut, EventOut, EventSearchOut, EventSearchQuery, EventsOut, EventsQuery, FeatureEventsOut,
};
use crate::identity::auth::{Access, Caller};
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may read the whole audit log.
pub const LIST: Access = Access::AdminRead;

/// The newest 100 events, or a project's newest 50, as Unleash's deprecated list answers.
pub async fn list(ctx: &Runtime, query: EventsQuery) -> Result<EventsOut, AdminError> {
    let (filter, limit) = match query.project {
        Some(project) => (
            EventFilter {
                projects: Some(vec![project]),
                ..EventFilter::default()
            },
            50,
        ),
        None => (EventFilter::default(), 100),
    };
    let (rows, total) = db::run(&ctx.store, move |conn| {
        queries::events::search(conn, &filter, 0, limit)
    })
    .await?;
    Ok(EventsOut {
        version: 1,
        events: rows.into_iter().map(EventOut::of).collect(),
        total_events: total,
    })
}

/// Who may read a flag's events.
pub const OF_FEATURE: Access = Access::Read;

/// A flag's newest 50 events.
pub async fn of_feature(
    ctx: &Runtime,
    caller: &Caller,
    feature: String,
) -> Result<FeatureEventsOut, AdminError> {
    let filter = EventFilter {
        features: Some(vec![feature.clone()]),
        with_project: !caller.principal().administers(),
        ..EventFilter::default()
    };
    let (rows, total) = db::run(&ctx.store, move |conn| {
        queries::events::search(conn, &filter, 0, 50)
    })
    .await?;
    Ok(FeatureEventsOut {
        version: 1,
        toggle_name: feature,
        events: rows.into_iter().map(EventOut::of).collect(),
        total_events: total,
    })
}

/// Who may search the audit log.
pub const SEARCH: Access = Access::Read;

/// The events a search keeps, newest first, with how many it keeps in all.
pub async fn search(
    ctx: &Runtime,
    caller: &Caller,
    query: EventSearchQuery,
) -> Result<EventSearchOut, AdminError> {
    let ids = |field: &str, text: Option<String>| -> Result<Option<Vec<i32>>, AdminError> {
        values(field, text)?
            .map(|values| {
                values
                    .into_iter()
                    .map(|value| {
                        value
                            .parse::<i32>()
                            .map_err(|_| AdminError::invalid(format!("/query/{field}"), "must list numbers"))
                    })
                    .collect()
            })
            .transpose()
    };
    let filter = EventFilter {
        query: query.query.filter(|text| !text.is_empty()),
        features: values("feature", query.feature)?,
        projects: values("project", query.project)?,
        types: values("type", query.event_type)?,
        created_by: ids("createdBy", query.created_by)?,
        environments: values("environment", query.environment)?,
        ids: ids("id", query.id)?,
        group_ids: values("groupId", query.group_id)?,
        from: day("from", query.from)?.and_then(|day| day.and_hms_opt(0, 0, 0)),
        to: day("to", query.to)?
            .and_then(|day| day.succ_opt())
            .and_then(|day| day.and_hms_opt(0, 0, 0)),
        with_project: !caller.principal().administers(),
    };
    let offset = query
        .offset
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|offset| *offset > 0)
        .unwrap_or(0);
    let limit = query
        .limit
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|limit| (1..=1000).contains(limit))
        .unwrap_or(50);
    let (rows, total) = db::run(&ctx.store, move |conn| {
        queries::events::search(conn, &filter, offset, limit)
    })
    .await?;
    let formatter = EventFormatter::new(&ctx.settings.unleash_url, Bold::Markdown);
    Ok(EventSearchOut {
        events: rows
            .into_iter()
            .map(|row| formatter.described(EventOut::of(row)))
            .collect(),
        total,
    })
}

/// Who may list who wrote the audit log.
pub const CREATORS: Access = Access::Read;

/// Everyone who wrote events, by id.
pub async fn creators(ctx: &Runtime) -> Result<Vec<EventCreatorOut>, AdminError> {
    let rows = db::run(&ctx.store, queries::events::creators).await?;
    Ok(rows
        .into_iter()
        .map(|(id, name)| EventCreatorOut {
            name: match id {
                Some(Actor::SYSTEM) => "Unleash System".into(),
                Some(Actor::ADMIN_TOKEN) => "Unleash Admin Token".into(),
                _ => name,
            },
            id: id.unwrap_or(0),
        })
        .filter(|creator| !creator.name.is_empty())
        .collect())
}

/// How a summary marks bold text: `**` in the event log's Markdown, `*` in what webhooks get,
/// as Unleash's formatter has it (its `markdown` and `simple` styles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bold {
    /// `**bold**`, for the event log.
    Markdown,
    /// `*bold*`, for webhooks.
    Simple,
}

/// Tells events as Unleash's `FeatureEventFormatterMd` does: a label per event type, and a
/// sentence from that type's template, with links into the console at `unleash_url`. A type
/// without a template is labelled with its own name and told as `**who** triggered **type**`.
#[derive(Debug, Clone)]
pub struct EventFormatter {
    unleash_url: String,
    bold: &'static str,
}

impl EventFormatter {
    /// A formatter linking to the console at `unleash_url` (a trailing `/` is dropped, as invite
    /// links drop it).
    pub fn new(unleash_url: &str, bold: Bold) -> Self {
        Self {
            unleash_url: unleash_url.trim_end_matches('/').to_owned(),
            bold: match bold {
                Bold::Markdown => "**",
                Bold::Simple => "*",
            },
        }
    }

    /// `event` with its label and summary.
    pub fn described(&self, mut event: EventOut) -> EventOut {
        let (label, summary) = self.format(&event);
        event.label = Some(label);
        event.summary = Some(summary);
        event
    }

    /// The label and the summary of `event`.
    pub fn format(&self, event: &EventOut) -> (String, String) {
        let view = View::of(event);
        let Some((_, label, template)) = TEMPLATES.iter().find(|(name, _, _)| *name == event.event_type)
        else {
            let text = format!(
                "{} triggered {}",
                self.strong(&event.created_by),
                self.strong(&event.event_type)
            );
            return (event.event_type.clone(), text);
        };
        ((*label).to_owned(), self.render(template, &view))
    }

    /// Fills the `{{name}}` holes of `template` as Mustache does, without escaping: a hole whose
    /// value is missing or null stays empty.
    fn render(&self, template: &str, view: &View<'_>) -> String {
        let mut out = String::with_capacity(template.len() * 2);
        let mut rest = template;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let Some(end) = rest[start..].find("}}") else {
                rest = &rest[start..];
                break;
            };
            let name = rest[start + 2..start + end].trim();
            out.push_str(&self.hole(name, view));
            rest = &rest[start + end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// The text of the hole `name`.
    fn hole(&self, name: &str, view: &View<'_>) -> String {
        let text = |value: Option<String>| value.unwrap_or_default();
        match name {
            "b" => self.bold.to_owned(),
            "user" => view.event.created_by.clone(),
            "feature" => text(self.feature_link(view)),
            "project" => text(self.project_link(view)),
            "strategyTitle" => view.strategy_title().map(mustache_text).unwrap_or_default(),
            "strategyChangeText" => text(self.strategy_change_text(view)),
            "changeRequest" => text(self.change_request_link(view)),
            _ => name
                .strip_prefix("event.")
                .and_then(|path| view.lookup(path))
                .map(mustache_text)
                .unwrap_or_default(),
        }
    }

    /// `text` in bold; a bold marker alone when `text` is empty, as Unleash's `bold()` has it.
    fn strong(&self, text: &str) -> String {
        if text.is_empty() {
            self.bold.to_owned()
        } else {
            format!("{0}{text}{0}", self.bold)
        }
    }

    /// A value in bold the way Unleash's `bold()` takes one: a falsy value gives the marker alone.
    fn strong_value(&self, value: Option<&Value>) -> String {
        if truthy(value) {
            self.strong(&template_text(value))
        } else {
            self.bold.to_owned()
        }
    }

    /// `[flag](<url>/projects/<project>/features/<flag>)`, or the project's archive for an
    /// archived flag.
    fn feature_link(&self, view: &View<'_>) -> Option<String> {
        let feature = view
            .event
            .feature_name
            .as_deref()
            .filter(|name| !name.is_empty())?;
        let project = view.event.project.as_deref();
        let url = if view.event.event_type == "feature-archived" {
            match project.filter(|project| !project.is_empty()) {
                Some(project) => format!("{}/projects/{project}/archive", self.unleash_url),
                None => format!("{}/archive", self.unleash_url),
            }
        } else {
            // Unleash writes a missing project into the link as `null`.
            let project = project.unwrap_or("null");
            format!("{}/projects/{project}/features/{feature}", self.unleash_url)
        };
        Some(format!("[{feature}]({url})"))
    }

    /// `[project](<url>/projects/<project>)`.
    fn project_link(&self, view: &View<'_>) -> Option<String> {
        let project = view
            .event
            .project
            .as_deref()
            .filter(|project| !project.is_empty())?;
        Some(format!("[{project}]({}/projects/{project})", self.unleash_url))
    }

    /// The change request an event belongs to, linked, with its flag, environment and project.
    fn change_request_link(&self, view: &View<'_>) -> Option<String> {
        let id = [
            view.lookup("data.changeRequestId"),
            view.lookup("preData.changeRequestId"),
        ]
        .into_iter()
        .find(|value| truthy(*value))
        .flatten()?;
        let project = view
            .event
            .project
            .as_deref()
            .filter(|project| !project.is_empty())?;
        let id = template_text(Some(id));
        let url = format!("{}/projects/{project}/change-requests/{id}", self.unleash_url);
        let mut text = self.strong(&format!("[#{id}]({url})"));
        if let Some(feature) = self.feature_link(view) {
            text.push_str(&format!(" for feature flag {}", self.strong(&feature)));
        }
        if let Some(environment) = view.event.environment.as_deref().filter(|name| !name.is_empty()) {
            text.push_str(&format!(" in the {} environment", self.strong(environment)));
        }
        if let Some(link) = self.project_link(view) {
            text.push_str(&format!(" in project {}", self.strong(&link)));
        }
        Some(text)
    }

    /// What a strategy update changed, for `feature-strategy-update` only.
    fn strategy_change_text(&self, view: &View<'_>) -> Option<String> {
        if view.event.event_type != "feature-strategy-update" {
            return None;
        }
        let data = view.event.data.as_ref().filter(|data| truthy(Some(data)));
        let pre_data = view.event.pre_data.as_ref().filter(|data| truthy(Some(data)));
        let strategy = data.or(pre_data)?;
        let changes: Vec<String> = match strategy.get("name").and_then(Value::as_str) {
            Some("flexibleRollout") => {
                let change = |name: &str, label: &str, suffix: &str| {
                    let (before, after) = (parameter(pre_data, name), parameter(data, name));
                    if strictly_equal(before, after) {
                        String::new()
                    } else if truthy(before) {
                        format!(
                            " {label} from {}{suffix} to {}{suffix}",
                            template_text(before),
                            template_text(after)
                        )
                    } else {
                        format!(" {label} to {}{suffix}", template_text(after))
                    }
                };
                vec![
                    change("stickiness", "stickiness", ""),
                    change("rollout", "rollout", "%"),
                    change("groupId", "groupId", ""),
                    constraints_change(pre_data, data),
                    segments_change(pre_data, data),
                ]
            }
            Some("default") => vec![
                constraints_change(pre_data, data),
                segments_change(pre_data, data),
            ],
            Some(name @ ("remoteAddress" | "applicationHostname")) => {
                let property = if name == "remoteAddress" {
                    "IPs"
                } else {
                    "hostNames"
                };
                let shown = |values: Option<&Value>| {
                    let empty = match values {
                        Some(Value::String(text)) => text.is_empty(),
                        Some(Value::Array(items)) => items.is_empty(),
                        _ => false,
                    };
                    if empty {
                        format!("empty set of {property}")
                    } else {
                        format!("[{}]", template_text(values))
                    }
                };
                let (before, after) = (parameter(pre_data, property), parameter(data, property));
                let values = if strictly_equal(before, after) {
                    String::new()
                } else if pre_data.is_none() {
                    format!(" {property} to {}", shown(after))
                } else {
                    format!(" {property} from {} to {}", shown(before), shown(after))
                };
                vec![
                    values,
                    constraints_change(pre_data, data),
                    segments_change(pre_data, data),
                ]
            }
            _ => Vec::new(),
        };
        let changes: Vec<String> = changes.into_iter().filter(|text| !text.is_empty()).collect();
        Some(format!(
            "by updating strategy {} in {}{}",
            self.strong_value(view.strategy_title()),
            self.strong_value(view.environment.as_ref()),
            changes.join(";")
        ))
    }
}

/// An event as the templates read it: its JSON form, as Unleash's templates see `event`.
struct View<'a> {
    event: &'a EventOut,
    json: Value,
    environment: Option<Value>,
}

impl<'a> View<'a> {
    fn of(event: &'a EventOut) -> Self {
        Self {
            event,
            json: serde_json::to_value(event).unwrap_or(Value::Null),
            environment: event.environment.clone().map(Value::String),
        }
    }

    /// The value at a dotted path of the event, as Mustache looks one up.
    fn lookup(&self, path: &str) -> Option<&Value> {
        path.split('.').try_fold(&self.json, |value, key| {
            value.as_object().and_then(|object| object.get(key))
        })
    }

    /// The strategy's title, else its name, before the change first: the first truthy of
    /// `preData.title || data.title || preData.name || data.name`, or the last of them.
    fn strategy_title(&self) -> Option<&Value> {
        let candidates = [
            self.lookup("preData.title"),
            self.lookup("data.title"),
            self.lookup("preData.name"),
            self.lookup("data.name"),
        ];
        candidates
            .iter()
            .copied()
            .find(|value| truthy(*value))
            .unwrap_or(candidates[3])
    }
}

/// A parameter of a strategy, if it has one.
fn parameter<'a>(strategy: Option<&'a Value>, name: &str) -> Option<&'a Value> {
    strategy
        .and_then(|strategy| strategy.get("parameters"))
        .and_then(|parameters| parameters.get(name))
}

/// How the constraints of a strategy changed: ` constraints from [...] to [...]`, or nothing.
fn constraints_change(before: Option<&Value>, after: Option<&Value>) -> String {
    let shown = |strategy: Option<&Value>| {
        let constraints = strategy
            .and_then(|strategy| strategy.get("constraints"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if constraints.is_empty() {
            return "empty set of constraints".to_owned();
        }
        let described: Vec<String> = constraints.iter().map(constraint_text).collect();
        format!("[{}]", described.join(", "))
    };
    let (before, after) = (shown(before), shown(after));
    if before == after {
        String::new()
    } else {
        format!(" constraints from {before} to {after}")
    }
}

/// One constraint in words: `userId is one of (a,b)`, `version not is a SemVer greater than 1.0.0`.
fn constraint_text(constraint: &Value) -> String {
    let field = |name: &str| constraint.get(name);
    let value = match constraint.as_object().and_then(|object| object.get("value")) {
        Some(value) => template_text(Some(value)),
        None => match field("values").and_then(Value::as_array) {
            Some(values) => format!("({})", joined(values)),
            None => "(undefined)".to_owned(),
        },
    };
    let operator = template_text(field("operator"));
    let described = match operator.as_str() {
        "IN" => "is one of",
        "NOT_IN" => "is not one of",
        "STR_CONTAINS" => "is a string that contains",
        "STR_STARTS_WITH" => "is a string that starts with",
        "STR_ENDS_WITH" => "is a string that ends with",
        "NUM_EQ" => "is a number equal to",
        "NUM_GT" => "is a number greater than",
        "NUM_GTE" => "is a number greater than or equal to",
        "NUM_LT" => "is a number less than",
        "NUM_LTE" => "is a number less than or equal to",
        "DATE_BEFORE" => "is a date before",
        "DATE_AFTER" => "is a date after",
        "SEMVER_EQ" => "is a SemVer equal to",
        "SEMVER_GT" => "is a SemVer greater than",
        "SEMVER_LT" => "is a SemVer less than",
        "SEMVER_GTE" => "is a SemVer greater than or equal to",
        "SEMVER_LTE" => "is a SemVer less than or equal to",
        "REGEX" => "matches regex",
        other => other,
    };
    format!(
        "{} {}{described} {value}",
        template_text(field("contextName")),
        if truthy(field("inverted")) { "not " } else { "" }
    )
}

/// How the segments of a strategy changed: ` segments from (1) to (1,2)`, or nothing.
fn segments_change(before: Option<&Value>, after: Option<&Value>) -> String {
    let shown = |strategy: Option<&Value>| match strategy
        .and_then(|strategy| strategy.get("segments"))
        .and_then(Value::as_array)
    {
        Some(segments) if !segments.is_empty() => format!("({})", joined(segments)),
        _ => "empty set of segments".to_owned(),
    };
    let (before, after) = (shown(before), shown(after));
    if before == after {
        String::new()
    } else {
        format!(" segments from {before} to {after}")
    }
}

/// Whether JavaScript takes `value` as true: not missing, null, false, 0 or "".
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(value)) => *value,
        Some(Value::Number(number)) => number.as_f64().is_some_and(|number| number != 0.0),
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}

/// JavaScript's `===` between two values read from different objects: objects and arrays are
/// never the same one.
fn strictly_equal(left: Option<&Value>, right: Option<&Value>) -> bool {
    match (left, right) {
        (None, None) | (Some(Value::Null), Some(Value::Null)) => true,
        (Some(Value::Bool(left)), Some(Value::Bool(right))) => left == right,
        (Some(Value::Number(left)), Some(Value::Number(right))) => left.as_f64() == right.as_f64(),
        (Some(Value::String(left)), Some(Value::String(right))) => left == right,
        _ => false,
    }
}

/// What a JavaScript template literal makes of `value`: `undefined` and `null` spelt out.
fn template_text(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        Some(Value::Null) => "null".to_owned(),
        Some(value) => mustache_text(value),
    }
}

/// What Mustache, without escaping, makes of `value`: JavaScript's `String(value)`, with null
/// as nothing and a list joined by commas.
fn mustache_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::Bool(value) => value.to_string(),
        Value::Number(number) => match (number.as_i64(), number.as_f64()) {
            (Some(integer), _) => integer.to_string(),
            (None, Some(float)) if float.fract() == 0.0 && float.abs() < 1e21 => format!("{float:.0}"),
            _ => number.to_string(),
        },
        Value::String(text) => text.clone(),
        Value::Array(items) => joined(items),
        Value::Object(_) => "[object Object]".to_owned(),
    }
}

/// JavaScript's `items.join(",")`.
fn joined(items: &[Value]) -> String {
    items.iter().map(mustache_text).collect::<Vec<_>>().join(",")
}

/// Unleash's label and template for each event type it tells in words (its `EVENT_MAP`).
const TEMPLATES: &[(&str, &str, &str)] = &[
    (
        "addon-config-created",
        "Integration configuration created",
        "{{b}}{{user}}{{b}} created a new {{b}}{{event.data.provider}}{{b}} integration configuration",
    ),
    (
        "addon-config-deleted",
        "Integration configuration deleted",
        "{{b}}{{user}}{{b}} deleted a {{b}}{{event.preData.provider}}{{b}} integration configuration",
    ),
    (
        "addon-config-updated",
        "Integration configuration updated",
        "{{b}}{{user}}{{b}} updated a {{b}}{{event.preData.provider}}{{b}} integration configuration",
    ),
    (
        "api-token-created",
        "API token created",
        "{{b}}{{user}}{{b}} created API token {{b}}{{event.data.username}}{{b}}",
    ),
    (
        "api-token-deleted",
        "API token deleted",
        "{{b}}{{user}}{{b}} deleted API token {{b}}{{event.preData.username}}{{b}}",
    ),
    (
        "change-added",
        "Change added",
        "{{b}}{{user}}{{b}} added a change to change request {{changeRequest}}",
    ),
    (
        "change-discarded",
        "Change discarded",
        "{{b}}{{user}}{{b}} discarded a change in change request {{changeRequest}}",
    ),
    (
        "change-edited",
        "Change edited",
        "{{b}}{{user}}{{b}} edited a change in change request {{changeRequest}}",
    ),
    (
        "change-request-applied",
        "Change request applied",
        "{{b}}{{user}}{{b}} applied change request {{changeRequest}}",
    ),
    (
        "change-request-approval-added",
        "Change request approval added",
        "{{b}}{{user}}{{b}} added an approval to change request {{changeRequest}}",
    ),
    (
        "change-request-approved",
        "Change request approved",
        "{{b}}{{user}}{{b}} approved change request {{changeRequest}}",
    ),
    (
        "change-request-cancelled",
        "Change request cancelled",
        "{{b}}{{user}}{{b}} cancelled change request {{changeRequest}}",
    ),
    (
        "change-request-created",
        "Change request created",
        "{{b}}{{user}}{{b}} created change request {{changeRequest}}",
    ),
    (
        "change-request-discarded",
        "Change request discarded",
        "{{b}}{{user}}{{b}} discarded change request {{changeRequest}}",
    ),
    (
        "change-request-rejected",
        "Change request rejected",
        "{{b}}{{user}}{{b}} rejected change request {{changeRequest}}",
    ),
    (
        "change-request-sent-to-review",
        "Change request sent to review",
        "{{b}}{{user}}{{b}} sent to review change request {{changeRequest}}",
    ),
    (
        "change-request-scheduled",
        "Change request scheduled",
        "{{b}}{{user}}{{b}} scheduled change request {{changeRequest}} to be applied at {{event.data.scheduledDate}}.",
    ),
    (
        "change-request-scheduled-application-success",
        "Scheduled change request applied successfully",
        "{{b}}Successfully{{b}} applied the scheduled change request {{changeRequest}} by {{b}}{{user}}{{b}}.",
    ),
    (
        "change-request-scheduled-application-failure",
        "Scheduled change request failed",
        "{{b}}Failed{{b}} to apply the scheduled change request {{changeRequest}} by {{b}}{{user}}{{b}}.",
    ),
    (
        "change-request-schedule-suspended",
        "Change request suspended",
        "Change request {{changeRequest}} was suspended for the following reason: {{event.data.reason}}",
    ),
    (
        "context-field-created",
        "Context field created",
        "{{b}}{{user}}{{b}} created context field {{b}}{{event.data.name}}{{b}}",
    ),
    (
        "context-field-deleted",
        "Context field deleted",
        "{{b}}{{user}}{{b}} deleted context field {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "context-field-updated",
        "Context field updated",
        "{{b}}{{user}}{{b}} updated context field {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "feature-archived",
        "Flag archived",
        "{{b}}{{user}}{{b}} archived {{b}}{{event.featureName}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-created",
        "Flag created",
        "{{b}}{{user}}{{b}} created {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-deleted",
        "Flag deleted",
        "{{b}}{{user}}{{b}} deleted {{b}}{{event.featureName}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-environment-disabled",
        "Flag disabled",
        "{{b}}{{user}}{{b}} disabled {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-environment-enabled",
        "Flag enabled",
        "{{b}}{{user}}{{b}} enabled {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-environment-variants-updated",
        "Flag variants updated",
        "{{b}}{{user}}{{b}} updated variants for {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-metadata-updated",
        "Flag metadata updated",
        "{{b}}{{user}}{{b}} updated {{b}}{{feature}}{{b}} metadata in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-completed",
        "Flag marked as completed",
        "{{b}}{{feature}}{{b}} was marked as completed in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-potentially-stale-on",
        "Flag potentially stale",
        "{{b}}{{feature}}{{b}} was marked as potentially stale in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-project-change",
        "Flag moved to a new project",
        "{{b}}{{user}}{{b}} moved {{b}}{{feature}}{{b}} from {{b}}{{event.data.oldProject}}{{b}} to {{b}}{{project}}{{b}}",
    ),
    (
        "feature-revived",
        "Flag revived",
        "{{b}}{{user}}{{b}} revived {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-stale-off",
        "Flag stale marking removed",
        "{{b}}{{user}}{{b}} removed the stale marking on {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-stale-on",
        "Flag marked as stale",
        "{{b}}{{user}}{{b}} marked {{b}}{{feature}}{{b}} as stale in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-strategy-add",
        "Flag strategy added",
        "{{b}}{{user}}{{b}} added strategy {{b}}{{strategyTitle}}{{b}} to {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-strategy-remove",
        "Flag strategy removed",
        "{{b}}{{user}}{{b}} removed strategy {{b}}{{strategyTitle}}{{b}} from {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-strategy-update",
        "Flag strategy updated",
        "{{b}}{{user}}{{b}} updated {{b}}{{feature}}{{b}} in project {{b}}{{project}}{{b}} {{strategyChangeText}}",
    ),
    (
        "feature-tagged",
        "Flag tagged",
        "{{b}}{{user}}{{b}} tagged {{b}}{{feature}}{{b}} with {{b}}{{event.data.type}}:{{event.data.value}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "feature-untagged",
        "Flag untagged",
        "{{b}}{{user}}{{b}} untagged {{b}}{{feature}}{{b}} with {{b}}{{event.preData.type}}:{{event.preData.value}}{{b}} in project {{b}}{{project}}{{b}}",
    ),
    (
        "group-created",
        "Group created",
        "{{b}}{{user}}{{b}} created group {{b}}{{event.data.name}}{{b}}",
    ),
    (
        "group-deleted",
        "Group deleted",
        "{{b}}{{user}}{{b}} deleted group {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "group-updated",
        "Group updated",
        "{{b}}{{user}}{{b}} updated group {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "banner-created",
        "Banner created",
        "{{b}}{{user}}{{b}} created banner {{b}}{{event.data.message}}{{b}}",
    ),
    (
        "banner-deleted",
        "Banner deleted",
        "{{b}}{{user}}{{b}} deleted banner {{b}}{{event.preData.message}}{{b}}",
    ),
    (
        "banner-updated",
        "Banner updated",
        "{{b}}{{user}}{{b}} updated banner {{b}}{{event.preData.message}}{{b}}",
    ),
    (
        "project-created",
        "Project created",
        "{{b}}{{user}}{{b}} created project {{b}}{{project}}{{b}}",
    ),
    (
        "project-archived",
        "Project archived",
        "{{b}}{{user}}{{b}} archived project {{b}}{{event.project}}{{b}}",
    ),
    (
        "project-deleted",
        "Project deleted",
        "{{b}}{{user}}{{b}} deleted project {{b}}{{event.project}}{{b}}",
    ),
    (
        "segment-created",
        "Segment created",
        "{{b}}{{user}}{{b}} created segment {{b}}{{event.data.name}}{{b}}",
    ),
    (
        "segment-deleted",
        "Segment deleted",
        "{{b}}{{user}}{{b}} deleted segment {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "segment-updated",
        "Segment updated",
        "{{b}}{{user}}{{b}} updated segment {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "service-account-created",
        "Service account created",
        "{{b}}{{user}}{{b}} created service account {{b}}{{event.data.name}}{{b}}",
    ),
    (
        "service-account-token-created",
        "Service account token created",
        "{{b}}{{user}}{{b}} created a token for service account {{b}}{{event.data.ownerId}}{{b}}",
    ),
    (
        "service-account-token-deleted",
        "Service account token deleted",
        "{{b}}{{user}}{{b}} deleted a token for service account {{b}}{{event.data.ownerId}}{{b}}",
    ),
    (
        "service-account-deleted",
        "Service account deleted",
        "{{b}}{{user}}{{b}} deleted service account {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "service-account-updated",
        "Service account updated",
        "{{b}}{{user}}{{b}} updated service account {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "user-created",
        "User created",
        "{{b}}{{user}}{{b}} created user {{b}}{{event.data.name}}{{b}}",
    ),
    (
        "user-deleted",
        "User deleted",
        "{{b}}{{user}}{{b}} deleted user {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "user-updated",
        "User updated",
        "{{b}}{{user}}{{b}} updated user {{b}}{{event.preData.name}}{{b}}",
    ),
    (
        "release-plan-added",
        "Release plan added",
        "{{b}}{{user}}{{b}} added release plan {{b}}{{event.data.name}}{{b}} to {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "release-plan-removed",
        "Release plan removed",
        "{{b}}{{user}}{{b}} removed release plan {{b}}{{event.preData.name}}{{b}} from {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "release-plan-milestone-started",
        "Release plan milestone started",
        "{{b}}{{user}}{{b}} started milestone {{b}}{{event.data.milestoneName}}{{b}} in release plan {{b}}{{event.data.name}}{{b}} for {{b}}{{feature}}{{b}} for the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "release-plan-progressions-paused",
        "Release plan progressions paused",
        "{{b}}Release plan progressions paused{{b}} by safeguard for {{b}}{{feature}}{{b}} in the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "release-plan-progressions-resumed",
        "Release plan progressions resumed",
        "{{b}}{{user}}{{b}} resumed release plan progressions for {{b}}{{feature}}{{b}} in the {{b}}{{event.environment}}{{b}} environment in project {{b}}{{project}}{{b}}",
    ),
    (
        "user-access-request-registered",
        "User access request registered",
        "{{b}}{{event.data.email}}{{b}} requested access to Unleash",
    ),
    (
        "user-access-request-approved",
        "User access request approved",
        "{{b}}{{user}}{{b}} approved access request for {{b}}{{event.data.email}}{{b}}",
    ),
    (
        "user-access-request-rejected",
        "User access request rejected",
        "{{b}}{{user}}{{b}} rejected access request for {{b}}{{event.data.email}}{{b}}",
    ),
];

/// The values of a filter `IS:value` or `IS_ANY_OF:value,value`, trimmed.
fn values(field: &str, text: Option<String>) -> Result<Option<Vec<String>>, AdminError> {
    let Some(text) = text else { return Ok(None) };
    let list = text
        .strip_prefix("IS_ANY_OF:")
        .or_else(|| text.strip_prefix("IS:"))
        .ok_or_else(|| {
            AdminError::invalid(
                format!("/query/{field}"),
                format!(
                    "The `/query/{field}` property must start with IS: or IS_ANY_OF:. You sent {text:?}."
                ),
            )
        })?;
    Ok(Some(
        list.split(',')
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(str::to_owned)
            .collect(),
    ))
}

/// The day of a filter `IS:yyyy-MM-dd`.
fn day(field: &str, text: Option<String>) -> Result<Option<NaiveDate>, AdminError> {
    let Some(text) = text else { return Ok(None) };
    text.strip_prefix("IS:")
        .and_then(|day| NaiveDate::parse_from_str(day.trim(), "%Y-%m-%d").ok())
        .map(Some)
        .ok_or_else(|| {
            AdminError::invalid(
                format!("/query/{field}"),
                format!("The `/query/{field}` property must be IS:yyyy-MM-dd. You sent {text:?}."),
            )
        })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Bold, EventFormatter};
    use crate::catalogue::events::types::EventOut;

    /// A `feature-strategy-update` of `new-feature` in `production`, as Unleash's formatter tests
    /// build them (src/lib/addons/feature-event-formatter-md.test.ts).
    fn strategy_update(data: Value, pre_data: Value) -> EventOut {
        EventOut {
            id: 920,
            event_type: "feature-strategy-update".into(),
            created_by: "user@company.com".into(),
            created_at: "2022-06-01T10:03:11.549Z".into(),
            created_by_user_id: Some(-1337),
            data: Some(data),
            pre_data: Some(pre_data),
            tags: json!([]),
            feature_name: Some("new-feature".into()),
            project: Some("my-other-project".into()),
            environment: Some("production".into()),
            group_type: None,
            group_id: None,
            label: None,
            summary: None,
        }
    }

    const UPDATED: &str = "*user@company.com* updated \
        *[new-feature](unleashUrl/projects/my-other-project/features/new-feature)* in project \
        *[my-other-project](unleashUrl/projects/my-other-project)* by updating strategy";

    #[test]
    fn strategy_updates_are_told_as_unleash_snapshots_them() {
        let formatter = EventFormatter::new("unleashUrl", Bold::Simple);
        let in_x_or_y = json!([{"values": ["x", "y"], "inverted": false, "operator": "IN", "contextName": "appName", "caseInsensitive": false}]);
        let rollout = |rollout: &str, stickiness: &str| json!({"groupId": "new-feature", "rollout": rollout, "stickiness": stickiness});
        let cases = [
            (
                json!({"name": "flexibleRollout", "constraints": in_x_or_y, "parameters": rollout("32", "random")}),
                json!({"name": "flexibleRollout", "constraints": [], "parameters": rollout("67", "default")}),
                " *flexibleRollout* in *production* stickiness from default to random; rollout from 67% to \
                 32%; constraints from empty set of constraints to [appName is one of (x,y)]",
            ),
            (
                json!({"name": "flexibleRollout", "constraints": [], "parameters": rollout("67", "default")}),
                json!({"name": "flexibleRollout", "constraints": [], "parameters": rollout("67", "default")}),
                " *flexibleRollout* in *production*",
            ),
            (
                json!({"name": "remoteAddress", "constraints": in_x_or_y, "parameters": {"IPs": "127.0.0.1"}}),
                json!({"name": "remoteAddress", "constraints": [], "parameters": {"IPs": ""}}),
                " *remoteAddress* in *production* IPs from empty set of IPs to [127.0.0.1]; constraints \
                 from empty set of constraints to [appName is one of (x,y)]",
            ),
            (
                json!({"name": "default", "constraints": [{"contextName": "appName", "operator": "NUM_EQ", "value": "4"}], "parameters": {}, "segments": [1, 2]}),
                json!({"name": "default", "constraints": [], "parameters": {}, "segments": []}),
                " *default* in *production* constraints from empty set of constraints to [appName is a \
                 number equal to 4]; segments from empty set of segments to (1,2)",
            ),
        ];
        for (data, pre_data, change) in cases {
            let (label, text) = formatter.format(&strategy_update(data, pre_data));
            assert_eq!(label, "Flag strategy updated");
            assert_eq!(text, format!("{UPDATED}{change}"));
        }
    }

    #[test]
    fn holes_without_a_value_stay_empty_and_unknown_types_are_triggered() {
        let formatter = EventFormatter::new("http://localhost:4242/", Bold::Markdown);
        let mut event = strategy_update(json!(null), json!(null));
        event.event_type = "api-token-created".into();
        event.data = Some(json!({"tokenName": "ios"}));
        // Unleash's template reads `data.username`, which its tokens no longer have.
        assert_eq!(
            formatter.format(&event),
            (
                "API token created".into(),
                "**user@company.com** created API token ****".into()
            )
        );
        event.event_type = "tag-type-created".into();
        assert_eq!(
            formatter.format(&event),
            (
                "tag-type-created".into(),
                "**user@company.com** triggered **tag-type-created**".into()
            )
        );
        event.event_type = "feature-archived".into();
        assert_eq!(
            formatter.format(&event).1,
            "**user@company.com** archived **new-feature** in project \
             **[my-other-project](http://localhost:4242/projects/my-other-project)**"
        );
    }
}
