//! The audit log: the newest events, a flag's events, searching them, and who wrote them.

use chrono::NaiveDate;
use flag_store::models::Actor;
use flag_store::queries;
use flag_store::queries::events::EventFilter;

use crate::auth::Caller;
use crate::dto::events::{
    EventCreatorOut, EventOut, EventSearchOut, EventSearchQuery, EventsOut, EventsQuery, FeatureEventsOut,
};
use crate::{AdminError, Ctx, db};

/// The newest 100 events, or a project's newest 50, as Unleash's deprecated list answers.
pub async fn list(ctx: &Ctx, query: EventsQuery) -> Result<EventsOut, AdminError> {
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

/// A flag's newest 50 events.
pub async fn of_feature(ctx: &Ctx, caller: &Caller, feature: String) -> Result<FeatureEventsOut, AdminError> {
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

/// The events a search keeps, newest first, with how many it keeps in all.
pub async fn search(
    ctx: &Ctx,
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
    let mut filter = EventFilter {
        query: query.query.filter(|text| !text.trim().is_empty()),
        features: values("feature", query.feature)?,
        projects: values("project", query.project)?,
        types: values("type", query.event_type)?,
        created_by: ids("createdBy", query.created_by)?,
        environments: values("environment", query.environment)?,
        ids: ids("id", query.id)?,
        from: day("from", query.from)?.and_then(|day| day.and_hms_opt(0, 0, 0)),
        to: day("to", query.to)?
            .and_then(|day| day.succ_opt())
            .and_then(|day| day.and_hms_opt(0, 0, 0)),
        with_project: !caller.principal().administers(),
    };
    if values("groupId", query.group_id)?.is_some() {
        // No event here belongs to a transaction group.
        filter.ids = Some(Vec::new());
    }
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
    Ok(EventSearchOut {
        events: rows
            .into_iter()
            .map(|row| EventOut::of(row).described())
            .collect(),
        total,
    })
}

/// Everyone who wrote events, by id.
pub async fn creators(ctx: &Ctx) -> Result<Vec<EventCreatorOut>, AdminError> {
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
