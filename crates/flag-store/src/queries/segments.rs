//! Segments.

use diesel::prelude::*;

use crate::connection::{DbConnection, MultiBackend};

use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, NewSegment, SegmentRow};
use crate::queries::{context_fields, events, refuse_unreadable, to_json};
use crate::schema::{feature_strategies, feature_strategy_segments, features, segments};

/// Creates a segment; a taken name is a conflict, and a project that does not exist is
/// [`StoreError::Rejected`], like a missing parent in [`crate::queries::dependencies::set`]: the
/// caller named it in what it asked to write.
pub fn create(
    conn: &mut DbConnection,
    segment: &NewSegment,
    actor: &Actor,
) -> Result<SegmentRow, StoreError> {
    let constraints: Vec<flag_eval::Constraint> =
        crate::queries::from_json("segment", &segment.name, "constraints", &segment.constraints)
            .map_err(refuse_unreadable)?;
    crate::queries::write(conn, |conn| {
        context_fields::check_legal_values(conn, &constraints)?;
        // The project is the segments table's only foreign key, so a foreign-key violation can
        // only mean that it does not exist.
        let row: SegmentRow = diesel::insert_into(segments::table)
            .values(segment)
            .returning(<SegmentRow as Selectable<MultiBackend>>::construct_selection())
            .get_result(conn)
            .map_err(StoreError::on_missing_reference(|| StoreError::Rejected {
                message: format!(
                    "no project {} exists",
                    segment.project_id.as_deref().unwrap_or_default()
                ),
            }))?;
        events::record(
            conn,
            &NewEvent {
                project: row.project_id.clone(),
                data: Some(to_json("data", &segment_json(&row)?)?),
                ..NewEvent::new(EventType::SegmentCreated, actor, row.created_at)
            },
        )?;
        Ok(row)
    })
}

/// All segments, by id.
pub fn list(conn: &mut DbConnection) -> Result<Vec<SegmentRow>, StoreError> {
    Ok(segments::table
        .order(segments::id.asc())
        .select(SegmentRow::as_select())
        .load(conn)?)
}

/// How many flags, and in how many projects, use a segment or a context field: live flags only,
/// as Unleash counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Distinct live flags with a strategy that uses it.
    pub features: i64,
    /// Distinct projects of those flags.
    pub projects: i64,
}

/// Every segment, sorted by name as Unleash lists them, with its usage.
pub fn list_with_usage(conn: &mut DbConnection) -> Result<Vec<(SegmentRow, Usage)>, StoreError> {
    use diesel::dsl::count;
    let counts: Vec<(i32, i64, i64)> = feature_strategy_segments::table
        .inner_join(feature_strategies::table.inner_join(features::table))
        .filter(features::archived_at.is_null())
        .group_by(feature_strategy_segments::segment_id)
        .select((
            feature_strategy_segments::segment_id,
            count(features::name).aggregate_distinct(),
            count(features::project_id).aggregate_distinct(),
        ))
        .load(conn)?;
    let counts: std::collections::HashMap<i32, Usage> = counts
        .into_iter()
        .map(|(id, features, projects)| (id, Usage { features, projects }))
        .collect();
    let mut rows: Vec<(SegmentRow, Usage)> = list(conn)?
        .into_iter()
        .map(|row| {
            let usage = counts.get(&row.id).copied().unwrap_or_default();
            (row, usage)
        })
        .collect();
    rows.sort_by(|(left, _), (right, _)| crate::queries::name_order(&left.name, &right.name));
    Ok(rows)
}

/// One segment.
pub fn get(conn: &mut DbConnection, id: i32) -> Result<SegmentRow, StoreError> {
    segments::table
        .find(id)
        .select(SegmentRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("segment", id.to_string()))
}

/// A stored segment as flag-eval reads it.
pub fn to_model(row: &SegmentRow) -> Result<flag_eval::Segment, StoreError> {
    Ok(flag_eval::Segment {
        id: i64::from(row.id),
        name: row.name.clone(),
        constraints: row.constraints()?,
    })
}

/// A segment as Unleash writes it in events and reads: `{id, name, description, project?,
/// constraints, createdBy, createdAt}`, the project left out when global.
pub fn segment_json(row: &SegmentRow) -> Result<serde_json::Value, StoreError> {
    let mut object = serde_json::Map::new();
    object.insert("id".into(), row.id.into());
    object.insert("name".into(), row.name.clone().into());
    object.insert("description".into(), row.description.clone().into());
    if let Some(project) = &row.project_id {
        object.insert("project".into(), project.clone().into());
    }
    object.insert(
        "constraints".into(),
        serde_json::to_value(row.constraints()?).map_err(|source| StoreError::Encode {
            column: "constraints",
            source,
        })?,
    );
    object.insert("createdBy".into(), row.created_by.clone().into());
    object.insert("createdAt".into(), crate::time::iso(row.created_at).into());
    Ok(serde_json::Value::Object(object))
}

/// A strategy that uses a segment or a context field: `(strategy id, project, flag, strategy
/// type, environment)`.
pub type StrategyUse = (String, String, String, String, String);

/// The strategies of live flags that use segment `id`.
pub fn strategies_using(conn: &mut DbConnection, id: i32) -> Result<Vec<StrategyUse>, StoreError> {
    use crate::schema::{feature_strategies, feature_strategy_segments, features};
    Ok(feature_strategy_segments::table
        .inner_join(feature_strategies::table.inner_join(features::table))
        .filter(feature_strategy_segments::segment_id.eq(id))
        .filter(features::archived_at.is_null())
        .order((features::name.asc(), feature_strategies::id.asc()))
        .select((
            feature_strategies::id,
            features::project_id,
            features::name,
            feature_strategies::strategy_name,
            feature_strategies::environment_name,
        ))
        .load(conn)?)
}

/// For each segment used by live flags: the projects and the flags that use it.
pub fn usage(conn: &mut DbConnection) -> Result<std::collections::HashMap<i32, (usize, usize)>, StoreError> {
    use crate::schema::{feature_strategies, feature_strategy_segments, features};
    let rows: Vec<(i32, String, String)> = feature_strategy_segments::table
        .inner_join(feature_strategies::table.inner_join(features::table))
        .filter(features::archived_at.is_null())
        .select((
            feature_strategy_segments::segment_id,
            features::project_id,
            features::name,
        ))
        .load(conn)?;
    let mut sets: std::collections::HashMap<
        i32,
        (
            std::collections::BTreeSet<String>,
            std::collections::BTreeSet<String>,
        ),
    > = std::collections::HashMap::new();
    for (segment, project, feature) in rows {
        let entry = sets.entry(segment).or_default();
        entry.0.insert(project);
        entry.1.insert(feature);
    }
    Ok(sets
        .into_iter()
        .map(|(segment, (projects, features))| (segment, (projects.len(), features.len())))
        .collect())
}

/// The segments strategy `strategy_id` uses, by id; none for an unknown strategy.
pub fn of_strategy(conn: &mut DbConnection, strategy_id: &str) -> Result<Vec<SegmentRow>, StoreError> {
    use crate::schema::feature_strategy_segments;
    Ok(segments::table
        .inner_join(feature_strategy_segments::table)
        .filter(feature_strategy_segments::strategy_id.eq(strategy_id))
        .order(segments::id.asc())
        .select(SegmentRow::as_select())
        .load(conn)?)
}

/// Whether a segment has this name.
pub fn name_taken(conn: &mut DbConnection, name: &str) -> Result<bool, StoreError> {
    let count: i64 = segments::table
        .filter(segments::name.eq(name))
        .count()
        .get_result(conn)?;
    Ok(count > 0)
}

/// Replaces segment `id`'s name, description, project and constraints. A taken name is a
/// conflict; a project is refused while strategies of other projects use the segment.
pub fn update(
    conn: &mut DbConnection,
    id: i32,
    changes: &NewSegment,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<SegmentRow, StoreError> {
    let constraints: Vec<flag_eval::Constraint> =
        crate::queries::from_json("segment", &changes.name, "constraints", &changes.constraints)
            .map_err(refuse_unreadable)?;
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        if changes.name != before.name && name_taken(conn, &changes.name)? {
            return Err(StoreError::Conflict {
                entity: "segment",
                key: "name".into(),
            });
        }
        context_fields::check_legal_values(conn, &constraints)?;
        if let Some(project) = &changes.project_id {
            crate::queries::projects::get(conn, project).map_err(|_| StoreError::Rejected {
                message: format!("no project {project} exists"),
            })?;
            let others: std::collections::BTreeSet<String> = strategies_using(conn, id)?
                .into_iter()
                .map(|(_, used_in, ..)| used_in)
                .filter(|used_in| used_in != project)
                .collect();
            if !others.is_empty() {
                return Err(StoreError::Rejected {
                    message: format!(
                        "Invalid project. Segment is being used by strategies in other projects: {}",
                        others.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }
        diesel::update(segments::table.find(id))
            .set((
                segments::name.eq(&changes.name),
                segments::description.eq(&changes.description),
                segments::project_id.eq(&changes.project_id),
                segments::constraints.eq(&changes.constraints),
            ))
            .execute(conn)?;
        let after = get(conn, id)?;
        events::record(
            conn,
            &NewEvent {
                project: after.project_id.clone(),
                data: Some(to_json("data", &segment_json(&after)?)?),
                pre_data: Some(to_json("pre_data", &segment_json(&before)?)?),
                ..NewEvent::new(EventType::SegmentUpdated, actor, now)
            },
        )?;
        Ok(after)
    })
}

/// Deletes segment `id`, which no strategy of a live flag may use; archived flags' strategies
/// lose it.
pub fn delete(
    conn: &mut DbConnection,
    id: i32,
    actor: &Actor,
    now: chrono::NaiveDateTime,
) -> Result<(), StoreError> {
    use crate::schema::feature_strategy_segments;
    crate::queries::write(conn, |conn| {
        let before = get(conn, id)?;
        let users = strategies_using(conn, id)?.len();
        if users > 0 {
            return Err(StoreError::InUse {
                message: format!(
                    "segment {} is used by {users} {}: remove it from them first",
                    before.name,
                    if users == 1 { "strategy" } else { "strategies" }
                ),
            });
        }
        diesel::delete(feature_strategy_segments::table.filter(feature_strategy_segments::segment_id.eq(id)))
            .execute(conn)?;
        diesel::delete(segments::table.find(id)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                project: before.project_id.clone(),
                pre_data: Some(to_json("pre_data", &segment_json(&before)?)?),
                ..NewEvent::new(EventType::SegmentDeleted, actor, now)
            },
        )
    })
}
