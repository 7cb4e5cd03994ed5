//! Strategies of a feature in an environment, and strategy types.

use std::collections::BTreeMap;

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::{Constraint, Variant};

use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, StrategyRow, StrategyTypeRow};
use crate::queries::{context_fields, environments, events, features, refuse_unreadable, to_json};
use crate::schema::{
    feature_environments, feature_strategies, feature_strategy_segments, segments, strategy_types,
};

/// A strategy as the admin API writes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StrategyInput {
    /// Strategy type name; must be registered.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Disabled strategies are kept but not sent to SDKs.
    pub disabled: bool,
    /// Evaluation order; appended after the others when `None`.
    pub sort_order: Option<i32>,
    /// Parameters.
    pub parameters: BTreeMap<String, String>,
    /// Constraints.
    pub constraints: Vec<Constraint>,
    /// Segment ids; each must exist.
    pub segments: Vec<i32>,
    /// Strategy variants.
    pub variants: Vec<Variant>,
}

/// Adds a strategy with a new UUID id and returns it as flag-eval reads it.
pub fn add(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    input: &StrategyInput,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<flag_eval::Strategy, StoreError> {
    crate::queries::write(conn, |conn| {
        check_target(conn, project, feature, environment, input)?;
        let sort_order = match input.sort_order {
            Some(order) => order,
            // After the others: one past the highest order, which is not their count when an
            // order was given explicitly.
            None => feature_strategies::table
                .filter(feature_strategies::feature_name.eq(feature))
                .filter(feature_strategies::environment_name.eq(environment))
                .select(diesel::dsl::max(feature_strategies::sort_order))
                .first::<Option<i32>>(conn)?
                .map_or(0, |highest| highest.saturating_add(1)),
        };
        let row = row_from(
            uuid::Uuid::new_v4().to_string(),
            feature,
            environment,
            input,
            sort_order,
            now,
        )?;
        diesel::insert_into(feature_strategies::table)
            .values(&row)
            .execute(conn)?;
        link_segments(conn, &row.id, &input.segments)?;
        let strategy = to_model(&row, &input.segments)?;
        record(
            conn,
            EventType::FeatureStrategyAdd,
            project,
            feature,
            environment,
            Some(&strategy),
            None,
            actor,
            now,
        )?;
        Ok(strategy)
    })
}

/// The strategy switching a feature on adds when it has no active strategy in the environment:
/// `flexibleRollout` to everyone, sticky on `default`, grouped by the feature's name.
pub fn default_for(feature: &str) -> StrategyInput {
    StrategyInput {
        name: "flexibleRollout".into(),
        parameters: BTreeMap::from([
            ("rollout".to_owned(), "100".to_owned()),
            ("stickiness".to_owned(), "default".to_owned()),
            ("groupId".to_owned(), feature.to_owned()),
        ]),
        ..StrategyInput::default()
    }
}

/// Whether a feature has a strategy that is not disabled in an environment.
pub fn has_active(conn: &mut DbConnection, feature: &str, environment: &str) -> Result<bool, StoreError> {
    let active: i64 = feature_strategies::table
        .filter(feature_strategies::feature_name.eq(feature))
        .filter(feature_strategies::environment_name.eq(environment))
        .filter(feature_strategies::disabled.eq(false))
        .count()
        .get_result(conn)?;
    Ok(active > 0)
}

/// As Unleash does after a strategy is removed or disabled: a feature left with no active strategy
/// in an environment where it is on is switched off there.
fn switch_off_without_active(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    if has_active(conn, feature, environment)? {
        return Ok(());
    }
    let enabled: Option<bool> = feature_environments::table
        .find((feature, environment))
        .select(feature_environments::enabled)
        .first(conn)
        .optional()?;
    if enabled == Some(true) {
        features::set_enabled(conn, project, feature, environment, false, actor, now)?;
    }
    Ok(())
}

/// Replaces a strategy's definition, keeping its id.
#[expect(
    clippy::too_many_arguments,
    reason = "the path's four keys plus what, who and when"
)]
pub fn update(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
    input: &StrategyInput,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<flag_eval::Strategy, StoreError> {
    crate::queries::write(conn, |conn| {
        check_target(conn, project, feature, environment, input)?;
        let before = get(conn, feature, environment, id)?;
        let sort_order = input
            .sort_order
            .or(before.sort_order.and_then(|order| i32::try_from(order).ok()));
        let mut row = row_from(
            id.into(),
            feature,
            environment,
            input,
            sort_order.unwrap_or(0),
            now,
        )?;
        row.created_at = feature_strategies::table
            .find(id)
            .select(feature_strategies::created_at)
            .first(conn)?;
        diesel::update(feature_strategies::table.find(id))
            .set(&row)
            .execute(conn)?;
        diesel::delete(
            feature_strategy_segments::table.filter(feature_strategy_segments::strategy_id.eq(id)),
        )
        .execute(conn)?;
        link_segments(conn, id, &input.segments)?;
        let strategy = to_model(&row, &input.segments)?;
        record(
            conn,
            EventType::FeatureStrategyUpdate,
            project,
            feature,
            environment,
            Some(&strategy),
            Some(&before),
            actor,
            now,
        )?;
        if input.disabled {
            switch_off_without_active(conn, project, feature, environment, actor, now)?;
        }
        Ok(strategy)
    })
}

/// Deletes a strategy.
pub fn delete(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    id: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        features::get(conn, project, feature)?;
        let before = get(conn, feature, environment, id)?;
        diesel::delete(feature_strategies::table.find(id)).execute(conn)?;
        record(
            conn,
            EventType::FeatureStrategyRemove,
            project,
            feature,
            environment,
            None,
            Some(&before),
            actor,
            now,
        )?;
        switch_off_without_active(conn, project, feature, environment, actor, now)
    })
}

/// Enables every strategy of a feature in an environment, as switching on with
/// `shouldActivateDisabledStrategies` does: one `feature-strategy-update` for each that was
/// disabled.
pub fn enable_all(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    for before in list(conn, feature, environment)? {
        if before.disabled != Some(true) {
            continue;
        }
        let Some(id) = before.id.clone() else { continue };
        diesel::update(feature_strategies::table.find(&id))
            .set(feature_strategies::disabled.eq(false))
            .execute(conn)?;
        let after = flag_eval::Strategy {
            disabled: Some(false),
            ..before.clone()
        };
        record(
            conn,
            EventType::FeatureStrategyUpdate,
            project,
            feature,
            environment,
            Some(&after),
            Some(&before),
            actor,
            now,
        )?;
    }
    Ok(())
}

/// Sets the evaluation order of some of a feature's strategies in an environment. Every id must
/// be one of them; the change is recorded as `strategy-order-changed` with the order before and
/// after.
pub fn set_sort_order(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    orders: &[(String, i32)],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        features::environment(conn, feature, environment).map_err(|_| StoreError::NotFound {
            entity: "environment of feature",
            key: format!("{environment} of {feature}"),
        })?;
        let before = list(conn, feature, environment)?;
        let ids = |strategies: &[flag_eval::Strategy]| -> Vec<String> {
            strategies
                .iter()
                .filter_map(|strategy| strategy.id.clone())
                .collect()
        };
        let known = ids(&before);
        if orders.iter().any(|(id, _)| !known.contains(id)) {
            return Err(StoreError::Rejected {
                message: "trying to change strategies for environment via update sortOrder".into(),
            });
        }
        for (id, order) in orders {
            diesel::update(feature_strategies::table.find(id))
                .set(feature_strategies::sort_order.eq(order))
                .execute(conn)?;
        }
        let after = list(conn, feature, environment)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                environment: Some(environment.into()),
                feature_name: Some(feature.into()),
                data: Some(to_json("data", &serde_json::json!({"strategyIds": ids(&after)}))?),
                pre_data: Some(to_json(
                    "pre_data",
                    &serde_json::json!({"strategyIds": ids(&before)}),
                )?),
                ..NewEvent::new(EventType::StrategyOrderChanged, actor, now)
            },
        )
    })
}

/// A strategy by id, with the feature and environment it belongs to.
pub fn by_id(conn: &mut DbConnection, id: &str) -> Result<(StrategyRow, flag_eval::Strategy), StoreError> {
    let row: StrategyRow = feature_strategies::table
        .find(id)
        .select(StrategyRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("strategy", id))?;
    let strategy = with_segments(conn, std::slice::from_ref(&row))?
        .pop()
        .ok_or_else(|| StoreError::NotFound {
            entity: "strategy",
            key: id.to_owned(),
        })?;
    Ok((row, strategy))
}

/// One strategy of a feature in an environment.
pub fn get(
    conn: &mut DbConnection,
    feature: &str,
    environment: &str,
    id: &str,
) -> Result<flag_eval::Strategy, StoreError> {
    let row: StrategyRow = feature_strategies::table
        .find(id)
        .filter(feature_strategies::feature_name.eq(feature))
        .filter(feature_strategies::environment_name.eq(environment))
        .select(StrategyRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("strategy", id))?;
    let segment_ids: Vec<i32> = feature_strategy_segments::table
        .filter(feature_strategy_segments::strategy_id.eq(id))
        .order(feature_strategy_segments::segment_id.asc())
        .select(feature_strategy_segments::segment_id)
        .load(conn)?;
    to_model(&row, &segment_ids)
}

/// A feature's strategies in an environment, in evaluation order.
pub fn list(
    conn: &mut DbConnection,
    feature: &str,
    environment: &str,
) -> Result<Vec<flag_eval::Strategy>, StoreError> {
    let rows: Vec<StrategyRow> = feature_strategies::table
        .filter(feature_strategies::feature_name.eq(feature))
        .filter(feature_strategies::environment_name.eq(environment))
        .order((feature_strategies::sort_order.asc(), feature_strategies::id.asc()))
        .select(StrategyRow::as_select())
        .load(conn)?;
    with_segments(conn, &rows)
}

/// A feature's strategies in every environment, each environment's in evaluation order, in two
/// queries whatever the number of environments.
pub fn by_environment(
    conn: &mut DbConnection,
    feature: &str,
) -> Result<std::collections::HashMap<String, Vec<flag_eval::Strategy>>, StoreError> {
    let rows: Vec<StrategyRow> = feature_strategies::table
        .filter(feature_strategies::feature_name.eq(feature))
        .order((
            feature_strategies::environment_name.asc(),
            feature_strategies::sort_order.asc(),
            feature_strategies::id.asc(),
        ))
        .select(StrategyRow::as_select())
        .load(conn)?;
    let strategies = with_segments(conn, &rows)?;
    let mut by_environment: std::collections::HashMap<String, Vec<flag_eval::Strategy>> =
        std::collections::HashMap::new();
    for (row, strategy) in rows.into_iter().zip(strategies) {
        by_environment
            .entry(row.environment_name)
            .or_default()
            .push(strategy);
    }
    Ok(by_environment)
}

/// `rows` as flag-eval reads them, with the segments each names, read in one query.
fn with_segments(
    conn: &mut DbConnection,
    rows: &[StrategyRow],
) -> Result<Vec<flag_eval::Strategy>, StoreError> {
    let ids: Vec<&String> = rows.iter().map(|row| &row.id).collect();
    let links: Vec<(String, i32)> = feature_strategy_segments::table
        .filter(feature_strategy_segments::strategy_id.eq_any(ids))
        .order(feature_strategy_segments::segment_id.asc())
        .select((
            feature_strategy_segments::strategy_id,
            feature_strategy_segments::segment_id,
        ))
        .load(conn)?;
    rows.iter()
        .map(|row| {
            let segment_ids: Vec<i32> = links
                .iter()
                .filter(|(id, _)| *id == row.id)
                .map(|(_, segment)| *segment)
                .collect();
            to_model(row, &segment_ids)
        })
        .collect()
}

/// A stored strategy as flag-eval reads it.
pub fn to_model(row: &StrategyRow, segment_ids: &[i32]) -> Result<flag_eval::Strategy, StoreError> {
    Ok(flag_eval::Strategy {
        name: row.strategy_name.clone(),
        id: Some(row.id.clone()),
        title: row.title.clone(),
        disabled: Some(row.disabled),
        sort_order: Some(i64::from(row.sort_order)),
        parameters: row.parameters()?,
        constraints: row.constraints()?,
        segments: segment_ids.iter().map(|id| i64::from(*id)).collect(),
        variants: row.variants()?,
    })
}

fn check_target(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
    input: &StrategyInput,
) -> Result<(), StoreError> {
    features::get(conn, project, feature)?;
    // The environment must exist, not be enabled in the project: Unleash keeps a strategy added
    // there, and the playground shows it.
    environments::get(conn, environment)?;
    context_fields::check_legal_values(conn, &input.constraints)?;
    let known: i64 = strategy_types::table
        .filter(strategy_types::name.eq(&input.name))
        .count()
        .get_result(conn)?;
    if known == 0 {
        return Err(StoreError::Rejected {
            message: format!("could not find strategy type with name {}", input.name),
        });
    }
    for id in &input.segments {
        let exists: i64 = segments::table
            .filter(segments::id.eq(id))
            .count()
            .get_result(conn)?;
        if exists == 0 {
            return Err(StoreError::not_found("segment", id.to_string()));
        }
    }
    Ok(())
}

fn row_from(
    id: String,
    feature: &str,
    environment: &str,
    input: &StrategyInput,
    sort_order: i32,
    now: NaiveDateTime,
) -> Result<StrategyRow, StoreError> {
    Ok(StrategyRow {
        id,
        feature_name: feature.into(),
        environment_name: environment.into(),
        strategy_name: input.name.clone(),
        title: input.title.clone(),
        disabled: input.disabled,
        sort_order,
        parameters: to_json("parameters", &input.parameters)?,
        constraints: to_json("constraints", &input.constraints)?,
        variants: to_json("variants", &input.variants)?,
        created_at: now,
    })
}

fn link_segments(conn: &mut DbConnection, strategy: &str, segment_ids: &[i32]) -> Result<(), StoreError> {
    let mut unique = segment_ids.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let rows: Vec<_> = unique
        .iter()
        .map(|id| {
            (
                feature_strategy_segments::strategy_id.eq(strategy),
                feature_strategy_segments::segment_id.eq(*id),
            )
        })
        .collect();
    crate::connection::insert_rows!(conn, feature_strategy_segments::table, &rows)?;
    Ok(())
}

#[expect(
    clippy::too_many_arguments,
    reason = "an audit record names every key of the change"
)]
fn record(
    conn: &mut DbConnection,
    event_type: EventType,
    project: &str,
    feature: &str,
    environment: &str,
    after: Option<&flag_eval::Strategy>,
    before: Option<&flag_eval::Strategy>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    events::record(
        conn,
        &NewEvent {
            event_type,
            created_by: actor.name.clone(),
            created_by_user_id: Some(actor.user_id),
            tags: None,
            created_at: now,
            project: Some(project.into()),
            environment: Some(environment.into()),
            feature_name: Some(feature.into()),
            data: after
                .map(|strategy| to_json("data", &event_json(strategy)))
                .transpose()?,
            pre_data: before
                .map(|strategy| to_json("pre_data", &event_json(strategy)))
                .transpose()?,
        },
    )
}

/// A strategy as Unleash records it in an event: every field, `title` null, `variants` and
/// `segments` empty when it has none.
fn event_json(strategy: &flag_eval::Strategy) -> serde_json::Value {
    serde_json::json!({
        "id": strategy.id,
        "name": strategy.name,
        "title": strategy.title,
        "disabled": strategy.disabled.unwrap_or(false),
        "constraints": strategy.constraints,
        "parameters": strategy.parameters,
        "variants": strategy.variants,
        "sortOrder": strategy.sort_order,
        "segments": strategy.segments,
    })
}

/// All strategy types, by sort order and then by name, as Unleash lists them: its built-in types
/// first, in its order, then the custom ones.
pub fn list_types(conn: &mut DbConnection) -> Result<Vec<StrategyTypeRow>, StoreError> {
    Ok(strategy_types::table
        .order((strategy_types::sort_order.asc(), strategy_types::name.asc()))
        .select(StrategyTypeRow::as_select())
        .load(conn)?)
}

/// Registers a custom strategy type; a taken name is a conflict, and parameters that
/// [`StrategyTypeRow::parameters`] cannot read are [`StoreError::Rejected`].
pub fn register_type(
    conn: &mut DbConnection,
    row: &StrategyTypeRow,
    actor: &Actor,
) -> Result<StrategyTypeRow, StoreError> {
    row.parameters().map_err(refuse_unreadable)?;
    events::insert_with_event!(
        conn,
        strategy_types::table,
        row,
        NewEvent::new(EventType::StrategyCreated, actor, row.created_at).with_data(&serde_json::json!({
            "name": row.name,
            "title": row.title,
            "description": row.description,
            "parameters": row.parameters()?,
            "editable": true,
            "deprecated": false,
        }))?
    )
}

/// One strategy type.
pub fn get_type(conn: &mut DbConnection, name: &str) -> Result<StrategyTypeRow, StoreError> {
    strategy_types::table
        .find(name)
        .select(StrategyTypeRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("strategy type", name))
}

/// Refuses a change to a built-in strategy type.
fn refuse_built_in(row: &StrategyTypeRow) -> Result<(), StoreError> {
    if row.built_in {
        return Err(StoreError::Rejected {
            message: format!(
                "{} is a built-in strategy type: it cannot be changed or deleted",
                row.name
            ),
        });
    }
    Ok(())
}

/// Replaces a custom strategy type's title, description and parameters.
pub fn update_type(
    conn: &mut DbConnection,
    row: &StrategyTypeRow,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<StrategyTypeRow, StoreError> {
    row.parameters().map_err(refuse_unreadable)?;
    crate::queries::write(conn, |conn| {
        let before = get_type(conn, &row.name)?;
        refuse_built_in(&before)?;
        diesel::update(strategy_types::table.find(&row.name))
            .set((
                strategy_types::title.eq(&row.title),
                strategy_types::description.eq(&row.description),
                strategy_types::parameters.eq(&row.parameters),
            ))
            .execute(conn)?;
        let after = get_type(conn, &row.name)?;
        events::record(
            conn,
            &NewEvent::new(EventType::StrategyUpdated, actor, now).with_data(&serde_json::json!({
                "name": after.name,
                "title": after.title,
                "description": after.description,
                "parameters": after.parameters()?,
                "editable": true,
                "deprecated": after.deprecated,
            }))?,
        )?;
        Ok(after)
    })
}

/// Deletes a custom strategy type that no strategy uses.
pub fn delete_type(
    conn: &mut DbConnection,
    name: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get_type(conn, name)?;
        refuse_built_in(&before)?;
        let users: i64 = feature_strategies::table
            .filter(feature_strategies::strategy_name.eq(name))
            .count()
            .get_result(conn)?;
        if users > 0 {
            return Err(StoreError::InUse {
                message: format!("strategy type {name} is used by {users} strategies: remove them first"),
            });
        }
        diesel::delete(strategy_types::table.find(name)).execute(conn)?;
        events::record(
            conn,
            &NewEvent::new(EventType::StrategyDeleted, actor, now)
                .with_data(&serde_json::json!({"name": name}))?,
        )
    })
}

/// Deprecates a strategy type, or reactivates it: deprecated types are still evaluated.
pub fn set_deprecated(
    conn: &mut DbConnection,
    name: &str,
    deprecated: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        get_type(conn, name)?;
        diesel::update(strategy_types::table.find(name))
            .set(strategy_types::deprecated.eq(deprecated))
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent::new(
                if deprecated {
                    EventType::StrategyDeprecated
                } else {
                    EventType::StrategyReactivated
                },
                actor,
                now,
            )
            .with_data(&serde_json::json!({"name": name}))?,
        )
    })
}
