//! Global environments.

use std::collections::HashMap;

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::dsl::{count_star, max};
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EnvironmentRow, EventType, NewEvent};
use crate::queries::events;
use crate::schema::{api_tokens, environments, feature_environments, features, project_environments};

/// What Unleash counts for each environment in its list of environments.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EnvironmentCounts {
    /// Projects that use the environment.
    pub projects: i64,
    /// API tokens for the environment, of every type and expired ones included.
    pub api_tokens: i64,
    /// Flags on in the environment, archived ones included, as Unleash counts them.
    pub enabled_flags: i64,
}

/// All environments, by sort order, then age, then name: Unleash orders by sort order and
/// creation time, and the name keeps the order total.
pub fn list(conn: &mut DbConnection) -> Result<Vec<EnvironmentRow>, StoreError> {
    Ok(environments::table
        .order((
            environments::sort_order.asc(),
            environments::created_at.asc(),
            environments::name.asc(),
        ))
        .select(EnvironmentRow::as_select())
        .load(conn)?)
}

/// All environments in [`list`]'s order, each with its counts: four queries, whatever the number
/// of environments, projects, tokens or flags.
pub fn list_with_counts(
    conn: &mut DbConnection,
) -> Result<Vec<(EnvironmentRow, EnvironmentCounts)>, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let projects: HashMap<String, i64> = project_environments::table
            .group_by(project_environments::environment_name)
            .select((project_environments::environment_name, count_star()))
            .load::<(String, i64)>(conn)?
            .into_iter()
            .collect();
        let tokens: HashMap<String, i64> = api_tokens::table
            .group_by(api_tokens::environment)
            .select((api_tokens::environment, count_star()))
            .load::<(String, i64)>(conn)?
            .into_iter()
            .collect();
        let enabled: HashMap<String, i64> = feature_environments::table
            .filter(feature_environments::enabled.eq(true))
            .group_by(feature_environments::environment_name)
            .select((feature_environments::environment_name, count_star()))
            .load::<(String, i64)>(conn)?
            .into_iter()
            .collect();
        let count = |counts: &HashMap<String, i64>, name: &str| counts.get(name).copied().unwrap_or(0);
        Ok(list(conn)?
            .into_iter()
            .map(|row| {
                let counts = EnvironmentCounts {
                    projects: count(&projects, &row.name),
                    api_tokens: count(&tokens, &row.name),
                    enabled_flags: count(&enabled, &row.name),
                };
                (row, counts)
            })
            .collect())
    })
}

/// The sort order a new environment takes when it names none: one past the largest, so it sorts
/// last, as in Unleash; 1 when there is no environment.
fn next_sort_order(conn: &mut DbConnection) -> Result<i32, StoreError> {
    let largest: Option<i32> = environments::table
        .select(max(environments::sort_order))
        .first(conn)?;
    Ok(largest.map_or(1, |largest| largest.saturating_add(1)))
}

/// One environment.
pub fn get(conn: &mut DbConnection, name: &str) -> Result<EnvironmentRow, StoreError> {
    environments::table
        .find(name)
        .select(EnvironmentRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("environment", name))
}

/// Creates an environment; a taken name is a conflict.
pub fn create(
    conn: &mut DbConnection,
    row: &EnvironmentRow,
    actor: &Actor,
) -> Result<EnvironmentRow, StoreError> {
    events::insert_with_event!(
        conn,
        environments::table,
        row,
        NewEvent {
            environment: Some(row.name.clone()),
            ..NewEvent::new(EventType::EnvironmentCreated, actor, row.created_at)
                .with_data(&serde_json::json!({"name": row.name, "type": row.environment_type}))?
        }
    )
}

/// Creates an environment sorted after every other one, reading the last place and taking the
/// next in one write, so two created at once never share a place.
pub fn create_last(
    conn: &mut DbConnection,
    mut row: EnvironmentRow,
    actor: &Actor,
) -> Result<EnvironmentRow, StoreError> {
    crate::queries::write(conn, |conn| {
        row.sort_order = next_sort_order(conn)?;
        create(conn, &row, actor)
    })
}

/// Turns an environment on or off globally.
pub fn set_enabled(
    conn: &mut DbConnection,
    name: &str,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let updated = diesel::update(environments::table.find(name))
            .set(environments::enabled.eq(enabled))
            .execute(conn)?;
        if updated == 0 {
            return Err(StoreError::not_found("environment", name));
        }
        let event_type = if enabled {
            EventType::EnvironmentEnabled
        } else {
            EventType::EnvironmentDisabled
        };
        events::record(
            conn,
            &NewEvent {
                environment: Some(name.into()),
                ..NewEvent::new(event_type, actor, now)
            },
        )
    })
}

/// Sets the sort order of the named environments; unknown names are skipped, as in Unleash.
pub fn set_sort_orders(conn: &mut DbConnection, orders: &[(String, i32)]) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        for (name, order) in orders {
            diesel::update(environments::table.find(name))
                .set(environments::sort_order.eq(order))
                .execute(conn)?;
        }
        Ok(())
    })
}

/// For each environment, how many flags of `project` are on there, archived ones included, as
/// Unleash counts them.
pub fn enabled_flags_of_project(
    conn: &mut DbConnection,
    project: &str,
) -> Result<HashMap<String, i64>, StoreError> {
    Ok(feature_environments::table
        .inner_join(features::table)
        .filter(features::project_id.eq(project))
        .filter(feature_environments::enabled.eq(true))
        .group_by(feature_environments::environment_name)
        .select((feature_environments::environment_name, count_star()))
        .load::<(String, i64)>(conn)?
        .into_iter()
        .collect())
}

/// Changes an environment's type, and its place when `sort_order` is given.
pub fn update(
    conn: &mut DbConnection,
    name: &str,
    environment_type: &str,
    sort_order: Option<i32>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<EnvironmentRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, name)?;
        diesel::update(environments::table.find(name))
            .set((
                environments::environment_type.eq(environment_type),
                environments::sort_order.eq(sort_order.unwrap_or(before.sort_order)),
            ))
            .execute(conn)?;
        let after = get(conn, name)?;
        let shown = |row: &EnvironmentRow| serde_json::json!({"name": row.name, "type": row.environment_type, "sortOrder": row.sort_order});
        events::record(
            conn,
            &NewEvent {
                environment: Some(name.to_owned()),
                ..NewEvent::new(EventType::EnvironmentUpdated, actor, now)
                    .with_data(&shown(&after))?
                    .with_pre_data(&shown(&before))?
            },
        )?;
        Ok(after)
    })
}

/// Deletes an environment, with every flag's state and strategies in it and the API tokens
/// bound to it; the last environment stays.
pub fn delete(
    conn: &mut DbConnection,
    name: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, name)?;
        let count: i64 = environments::table.count().get_result(conn)?;
        if count <= 1 {
            return Err(StoreError::InvalidOperation {
                message: "the last environment cannot be deleted".into(),
            });
        }
        // Recorded first, while the rules that protect the environment are still there.
        events::record(
            conn,
            &NewEvent {
                environment: Some(name.to_owned()),
                ..NewEvent::new(EventType::EnvironmentDeleted, actor, now).with_pre_data(
                    &serde_json::json!({"name": before.name, "type": before.environment_type}),
                )?
            },
        )?;
        let tokens: Vec<crate::models::ApiTokenRow> = api_tokens::table
            .filter(api_tokens::environment.eq(name))
            .select(crate::models::ApiTokenRow::as_select())
            .load(conn)?;
        for token in tokens {
            crate::queries::api_tokens::delete(conn, token.id, actor, now)?;
        }
        diesel::delete(environments::table.find(name)).execute(conn)?;
        Ok(())
    })
}
