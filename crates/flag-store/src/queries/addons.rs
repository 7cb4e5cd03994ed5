//! Webhooks (Unleash's addons), what their deliveries did, and the hand-over of audit events to
//! them.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::{DbConnection, MultiBackend};
use crate::error::StoreError;
use crate::models::{
    Actor, Addon, AddonConfig, AddonRow, EventRow, EventType, IntegrationEventRow, NewEvent,
    NewIntegrationEvent,
};
use crate::queries::{events, to_json};
use crate::schema::{addons, events as event_table, integration_events};

/// Deliveries kept per webhook: older ones are dropped as new ones are recorded.
pub const KEPT_DELIVERIES: i64 = 100;

/// Every webhook, by id.
pub fn list(conn: &mut DbConnection) -> Result<Vec<Addon>, StoreError> {
    addons::table
        .order(addons::id.asc())
        .select(AddonRow::as_select())
        .load(conn)?
        .into_iter()
        .map(Addon::try_from)
        .collect()
}

/// One webhook.
pub fn get(conn: &mut DbConnection, id: i32) -> Result<Addon, StoreError> {
    addons::table
        .find(id)
        .select(AddonRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("addon", id.to_string()))
        .and_then(Addon::try_from)
}

/// The columns `config` sets.
#[allow(clippy::type_complexity, reason = "diesel's tuple of assignments")]
fn columns(
    config: &AddonConfig,
) -> Result<
    (
        diesel::dsl::Eq<addons::provider, String>,
        diesel::dsl::Eq<addons::description, Option<String>>,
        diesel::dsl::Eq<addons::enabled, bool>,
        diesel::dsl::Eq<addons::parameters, String>,
        diesel::dsl::Eq<addons::events, String>,
        diesel::dsl::Eq<addons::projects, String>,
        diesel::dsl::Eq<addons::environments, String>,
    ),
    StoreError,
> {
    Ok((
        addons::provider.eq(config.provider.clone()),
        addons::description.eq(config.description.clone()),
        addons::enabled.eq(config.enabled),
        addons::parameters.eq(to_json("addons.parameters", &config.parameters)?),
        addons::events.eq(to_json("addons.events", &config.events)?),
        addons::projects.eq(to_json("addons.projects", &config.projects)?),
        addons::environments.eq(to_json("addons.environments", &config.environments)?),
    ))
}

/// A webhook as its audit events record it: everything but its parameters, which hold secrets.
fn event_json(addon: &Addon) -> serde_json::Value {
    serde_json::json!({
        "id": addon.id,
        "provider": addon.config.provider,
        "enabled": addon.config.enabled,
        "description": addon.config.description,
        "events": addon.config.events,
        "projects": addon.config.projects,
        "environments": addon.config.environments,
        "createdAt": addon.created_at.and_utc().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    })
}

/// Creates a webhook.
pub fn create(
    conn: &mut DbConnection,
    config: &AddonConfig,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<Addon, StoreError> {
    crate::queries::write(conn, |conn| {
        let row: AddonRow = diesel::insert_into(addons::table)
            .values((columns(config)?, addons::created_at.eq(now)))
            .returning(<AddonRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)?;
        let addon = Addon::try_from(row)?;
        events::record(
            conn,
            &NewEvent::new(EventType::AddonConfigCreated, actor, now).with_data(&event_json(&addon))?,
        )?;
        Ok(addon)
    })
}

/// Replaces a webhook's settings.
pub fn update(
    conn: &mut DbConnection,
    id: i32,
    config: &AddonConfig,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<Addon, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        diesel::update(addons::table.find(id))
            .set(columns(config)?)
            .execute(conn)?;
        let after = Addon {
            config: config.clone(),
            ..before.clone()
        };
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(to_json("pre_data", &event_json(&before))?),
                ..NewEvent::new(EventType::AddonConfigUpdated, actor, now).with_data(&event_json(&after))?
            },
        )?;
        Ok(after)
    })
}

/// Deletes a webhook with the record of its deliveries.
pub fn delete(conn: &mut DbConnection, id: i32, actor: &Actor, now: NaiveDateTime) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        diesel::delete(integration_events::table.filter(integration_events::integration_id.eq(id)))
            .execute(conn)?;
        diesel::delete(addons::table.find(id)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(to_json("pre_data", &event_json(&before))?),
                ..NewEvent::new(EventType::AddonConfigDeleted, actor, now)
            },
        )
    })
}

/// Whether any audit event waits to be handed to webhooks: a plain read, so that a poll that
/// finds nothing takes no write lock.
pub fn any_unannounced(conn: &mut DbConnection) -> Result<bool, StoreError> {
    let pending: i64 = event_table::table
        .filter(event_table::announced.eq(false))
        .select(event_table::id)
        .limit(1)
        .count()
        .get_result(conn)?;
    Ok(pending > 0)
}

/// Takes up to `limit` audit events no webhook has been handed yet, oldest first, and marks them
/// handed over, in one statement: of several replicas taking at once, each event goes to one.
pub fn take_unannounced(conn: &mut DbConnection, limit: i64) -> Result<Vec<EventRow>, StoreError> {
    crate::queries::write(conn, |conn| {
        let pending: Vec<i32> = event_table::table
            .filter(event_table::announced.eq(false))
            .order(event_table::id.asc())
            .limit(limit)
            .select(event_table::id)
            .load(conn)?;
        if pending.is_empty() {
            return Ok(Vec::new());
        }
        let mut taken: Vec<EventRow> = diesel::update(
            event_table::table
                .filter(event_table::id.eq_any(pending))
                // Checked again on each row: a replica that waited for another's lock skips the
                // rows the other took.
                .filter(event_table::announced.eq(false)),
        )
        .set(event_table::announced.eq(true))
        .returning(<EventRow as Selectable<MultiBackend>>::construct_selection())
        .get_results(conn)?;
        taken.sort_by_key(|event| event.id);
        Ok(taken)
    })
}

/// Records what a delivery did, dropping the webhook's deliveries beyond the newest
/// [`KEPT_DELIVERIES`]. A webhook deleted meanwhile records nothing.
pub fn record_delivery(conn: &mut DbConnection, delivery: &NewIntegrationEvent) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let exists: i64 = addons::table
            .find(delivery.integration_id)
            .count()
            .get_result(conn)?;
        if exists == 0 {
            return Ok(());
        }
        diesel::insert_into(integration_events::table)
            .values(delivery)
            .execute(conn)?;
        let kept: Vec<i32> = integration_events::table
            .filter(integration_events::integration_id.eq(delivery.integration_id))
            .order(integration_events::id.desc())
            .limit(KEPT_DELIVERIES)
            .select(integration_events::id)
            .load(conn)?;
        if let Some(oldest) = kept.last() {
            diesel::delete(
                integration_events::table
                    .filter(integration_events::integration_id.eq(delivery.integration_id))
                    .filter(integration_events::id.lt(oldest)),
            )
            .execute(conn)?;
        }
        Ok(())
    })
}

/// A webhook's deliveries, newest first, `limit` of them after skipping `offset`; none for an
/// unknown webhook, as Unleash answers.
pub fn deliveries(
    conn: &mut DbConnection,
    id: i32,
    offset: i64,
    limit: i64,
) -> Result<Vec<IntegrationEventRow>, StoreError> {
    Ok(integration_events::table
        .filter(integration_events::integration_id.eq(id))
        .order(integration_events::id.desc())
        .offset(offset)
        .limit(limit)
        .select(IntegrationEventRow::as_select())
        .load(conn)?)
}
