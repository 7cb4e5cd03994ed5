//! Context field definitions.

use crate::connection::DbConnection;
use diesel::prelude::*;
use flag_eval::{Constraint, Operator};

use crate::error::StoreError;
use crate::models::{Actor, ContextFieldRow, EventType, NewEvent};
use crate::queries::{events, refuse_unreadable};
use crate::schema::context_fields;

/// All fields, by sort order then name.
pub fn list(conn: &mut DbConnection) -> Result<Vec<ContextFieldRow>, StoreError> {
    Ok(context_fields::table
        .order((context_fields::sort_order.asc(), context_fields::name.asc()))
        .select(ContextFieldRow::as_select())
        .load(conn)?)
}

/// Creates a field; a taken name is a conflict, and legal values that
/// [`ContextFieldRow::legal_values`] cannot read are [`StoreError::Rejected`].
pub fn create(
    conn: &mut DbConnection,
    row: &ContextFieldRow,
    actor: &Actor,
) -> Result<ContextFieldRow, StoreError> {
    row.legal_values().map_err(refuse_unreadable)?;
    events::insert_with_event!(
        conn,
        context_fields::table,
        row,
        NewEvent::new(EventType::ContextFieldCreated, actor, row.created_at).with_data(
            &serde_json::json!({
                "name": row.name,
                "description": row.description,
                "legalValues": row.legal_values()?,
                "stickiness": row.stickiness,
            })
        )?
    )
}

/// Checks each constraint against its context field's legal values, as Unleash does for strategy
/// and segment constraints: when the field lists any, every value of a list operator, and the
/// value of a number, date or version operator, must be one of them. A constraint on a field
/// without legal values, or on an unknown field, passes. A value outside them is
/// [`StoreError::Rejected`], naming the constraint, the value and the field.
pub fn check_legal_values(conn: &mut DbConnection, constraints: &[Constraint]) -> Result<(), StoreError> {
    for (index, constraint) in constraints.iter().enumerate() {
        let field = context_fields::table
            .find(&constraint.context_name)
            .select(ContextFieldRow::as_select())
            .first(conn)
            .optional()?;
        let Some(field) = field else {
            continue;
        };
        let legal = field.legal_values()?;
        if legal.is_empty() {
            continue;
        }
        let single = Operator::parse(&constraint.operator).is_some_and(|operator| {
            matches!(
                operator,
                Operator::NumEq
                    | Operator::NumGt
                    | Operator::NumGte
                    | Operator::NumLt
                    | Operator::NumLte
                    | Operator::DateAfter
                    | Operator::DateBefore
                    | Operator::SemverEq
                    | Operator::SemverGt
                    | Operator::SemverGte
                    | Operator::SemverLt
                    | Operator::SemverLte
            )
        });
        let mut candidates: Box<dyn Iterator<Item = &String>> = if single {
            Box::new(constraint.value.iter())
        } else {
            Box::new(constraint.values.iter())
        };
        if let Some(outside) = candidates.find(|value| !legal.iter().any(|allowed| &allowed.value == *value))
        {
            return Err(StoreError::Rejected {
                message: format!(
                    "constraints/{index}: {outside:?} is not a legal value of the context field {}",
                    field.name
                ),
            });
        }
    }
    Ok(())
}

/// One field.
pub fn get(conn: &mut DbConnection, name: &str) -> Result<ContextFieldRow, StoreError> {
    context_fields::table
        .find(name)
        .select(ContextFieldRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("context field", name))
}

/// A field as Unleash writes it in events: `{name, description, stickiness, sortOrder,
/// legalValues, createdAt}`.
pub fn field_json(row: &ContextFieldRow) -> Result<serde_json::Value, StoreError> {
    Ok(serde_json::json!({
        "name": row.name,
        "description": row.description,
        "stickiness": row.stickiness,
        "sortOrder": row.sort_order,
        "legalValues": row.legal_values()?,
        "createdAt": crate::time::iso(row.created_at),
    }))
}

/// Replaces field `row.name`'s description, stickiness, order and legal values, recording the
/// change unless nothing changed.
pub fn update(
    conn: &mut DbConnection,
    row: &ContextFieldRow,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<ContextFieldRow, StoreError> {
    row.legal_values().map_err(refuse_unreadable)?;
    crate::queries::write(conn, |conn| {
        let before = get(conn, &row.name)?;
        diesel::update(context_fields::table.find(&row.name))
            .set((
                context_fields::description.eq(&row.description),
                context_fields::stickiness.eq(row.stickiness),
                context_fields::sort_order.eq(row.sort_order),
                context_fields::legal_values.eq(&row.legal_values),
            ))
            .execute(conn)?;
        let after = get(conn, &row.name)?;
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(crate::queries::to_json("pre_data", &field_json(&before)?)?),
                ..NewEvent::new(EventType::ContextFieldUpdated, actor, now).with_data(&field_json(&after)?)?
            },
        )?;
        Ok(after)
    })
}

/// Deletes field `name`, which no strategy of a live flag may constrain on.
pub fn delete(
    conn: &mut DbConnection,
    name: &str,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, name)?;
        if !strategies_using(conn, name)?.is_empty() {
            return Err(StoreError::InUse {
                message: "This context field is in use by existing flags. To delete it, first remove its usage from all flags."
                    .into(),
            });
        }
        diesel::delete(context_fields::table.find(name)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(crate::queries::to_json("pre_data", &field_json(&before)?)?),
                ..NewEvent::new(EventType::ContextFieldDeleted, actor, now)
            },
        )
    })
}

/// Every field, sorted by name as Unleash lists them, with how many live flags (and in how many
/// projects) have a strategy constraint on it. The constraints are read once, each only for its
/// fields' names.
pub fn list_with_usage(
    conn: &mut DbConnection,
) -> Result<Vec<(ContextFieldRow, crate::queries::segments::Usage)>, StoreError> {
    use std::collections::{HashMap, HashSet};

    use crate::queries::segments::Usage;
    use crate::schema::{feature_strategies, features};

    /// A constraint, only as far as naming its field.
    #[derive(serde::Deserialize)]
    struct Named {
        #[serde(rename = "contextName")]
        context_name: String,
    }
    let constrained: Vec<(String, String, String)> = feature_strategies::table
        .inner_join(features::table)
        .filter(features::archived_at.is_null())
        .filter(feature_strategies::constraints.ne("[]"))
        .select((
            features::name,
            features::project_id,
            feature_strategies::constraints,
        ))
        .load(conn)?;
    let mut users: HashMap<String, (HashSet<String>, HashSet<String>)> = HashMap::new();
    for (feature, project, constraints) in constrained {
        // A row that cannot be read is reported where it is read for evaluation; here it
        // simply uses nothing.
        let Ok(named) = serde_json::from_str::<Vec<Named>>(&constraints) else {
            continue;
        };
        for Named { context_name } in named {
            let (features, projects) = users.entry(context_name).or_default();
            features.insert(feature.clone());
            projects.insert(project.clone());
        }
    }
    let mut rows: Vec<(ContextFieldRow, Usage)> = list(conn)?
        .into_iter()
        .map(|row| {
            let usage = users
                .get(&row.name)
                .map(|(features, projects)| Usage {
                    features: i64::try_from(features.len()).unwrap_or(i64::MAX),
                    projects: i64::try_from(projects.len()).unwrap_or(i64::MAX),
                })
                .unwrap_or_default();
            (row, usage)
        })
        .collect();
    rows.sort_by(|(left, _), (right, _)| crate::queries::name_order(&left.name, &right.name));
    Ok(rows)
}

/// The strategies of live flags with a constraint on field `name`.
pub fn strategies_using(
    conn: &mut DbConnection,
    name: &str,
) -> Result<Vec<crate::queries::segments::StrategyUse>, StoreError> {
    use crate::models::StrategyRow;
    use crate::schema::{feature_strategies, features};
    let rows: Vec<(StrategyRow, String)> = feature_strategies::table
        .inner_join(features::table)
        .filter(features::archived_at.is_null())
        .filter(feature_strategies::constraints.like(format!("%{}%", name.replace(['%', '_'], ""))))
        .order((features::name.asc(), feature_strategies::id.asc()))
        .select((StrategyRow::as_select(), features::project_id))
        .load(conn)?;
    let mut using = Vec::new();
    for (row, project) in rows {
        if row
            .constraints()?
            .iter()
            .any(|constraint| constraint.context_name == name)
        {
            using.push((
                row.id,
                project,
                row.feature_name,
                row.strategy_name,
                row.environment_name,
            ));
        }
    }
    Ok(using)
}
