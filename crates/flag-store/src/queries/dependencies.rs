//! Feature dependencies: one parent per child, in the same project, without chains.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, DependencyRow, EventType, FeatureRow, NewEvent};
use crate::queries::{events, features, to_json};
use crate::schema::{feature_dependencies, features as features_table};

/// Makes `child` depend on `parent`, replacing any earlier parent.
#[expect(
    clippy::too_many_arguments,
    reason = "the dependency's keys plus who and when"
)]
pub fn set(
    conn: &mut DbConnection,
    project: &str,
    child: &str,
    parent: &str,
    enabled: bool,
    variants: &[String],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        features::get(conn, project, child)?;
        let rejected = |message: String| StoreError::InvalidOperation { message };
        if child == parent {
            return Err(rejected(format!("feature {child} cannot depend on itself")));
        }
        let parent_row: Option<FeatureRow> = features_table::table
            .find(parent)
            .filter(features_table::archived_at.is_null())
            .select(FeatureRow::as_select())
            .first(conn)
            .optional()?;
        let Some(parent_row) = parent_row else {
            return Err(rejected(format!("no active feature {parent} exists")));
        };
        if parent_row.project_id != project {
            return Err(rejected(format!("feature {parent} is not in project {project}")));
        }
        let parent_has_parent: i64 = feature_dependencies::table
            .filter(feature_dependencies::child.eq(parent))
            .count()
            .get_result(conn)?;
        let child_has_children: i64 = feature_dependencies::table
            .filter(feature_dependencies::parent.eq(child))
            .count()
            .get_result(conn)?;
        if parent_has_parent > 0 || child_has_children > 0 {
            return Err(rejected(
                "dependencies cannot form chains: a parent cannot have a parent".into(),
            ));
        }
        let row = DependencyRow {
            child: child.into(),
            parent: parent.into(),
            enabled,
            variants: to_json("variants", variants)?,
        };
        diesel::delete(feature_dependencies::table.find(child)).execute(conn)?;
        diesel::insert_into(feature_dependencies::table)
            .values(&row)
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                feature_name: Some(child.into()),
                data: Some(to_json(
                    "data",
                    &serde_json::json!({"feature": parent, "enabled": enabled, "variants": variants}),
                )?),
                ..NewEvent::new(EventType::FeatureDependencyAdded, actor, now)
            },
        )
    })
}

/// Removes `child`'s dependency; removing one that does not exist is not an error.
pub fn remove(
    conn: &mut DbConnection,
    project: &str,
    child: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        features::get(conn, project, child)?;
        diesel::delete(feature_dependencies::table.find(child)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                feature_name: Some(child.into()),
                ..NewEvent::new(EventType::FeatureDependenciesRemoved, actor, now)
            },
        )
    })
}

/// `child`'s dependency, if it has one.
pub fn of(conn: &mut DbConnection, child: &str) -> Result<Option<DependencyRow>, StoreError> {
    Ok(feature_dependencies::table
        .find(child)
        .select(DependencyRow::as_select())
        .first(conn)
        .optional()?)
}

/// The flags that could be `child`'s parent, sorted: the live flags of its project other than
/// itself that have no parent of their own. An unknown child has none.
pub fn parent_options(conn: &mut DbConnection, child: &str) -> Result<Vec<String>, StoreError> {
    let Some(row) = features::find(conn, child)? else {
        return Ok(Vec::new());
    };
    let with_parent: Vec<String> = feature_dependencies::table
        .select(feature_dependencies::child)
        .load(conn)?;
    Ok(features_table::table
        .filter(features_table::project_id.eq(&row.project_id))
        .filter(features_table::archived_at.is_null())
        .filter(features_table::name.ne(child))
        .order(features_table::name.asc())
        .select(features_table::name)
        .load::<String>(conn)?
        .into_iter()
        .filter(|name| !with_parent.contains(name))
        .collect())
}

/// Whether any flag of `project` depends on another.
pub fn exist_in(conn: &mut DbConnection, project: &str) -> Result<bool, StoreError> {
    let count: i64 = feature_dependencies::table
        .inner_join(features_table::table.on(features_table::name.eq(feature_dependencies::child)))
        .filter(features_table::project_id.eq(project))
        .count()
        .get_result(conn)?;
    Ok(count > 0)
}

/// The children of every flag that has any, as `(parent, child)`, by parent then child.
pub fn children(conn: &mut DbConnection) -> Result<Vec<(String, String)>, StoreError> {
    Ok(feature_dependencies::table
        .order((
            feature_dependencies::parent.asc(),
            feature_dependencies::child.asc(),
        ))
        .select((feature_dependencies::parent, feature_dependencies::child))
        .load(conn)?)
}

/// The flags that depend on `parent`, by name.
pub fn children_of(conn: &mut DbConnection, parent: &str) -> Result<Vec<String>, StoreError> {
    Ok(feature_dependencies::table
        .filter(feature_dependencies::parent.eq(parent))
        .order(feature_dependencies::child.asc())
        .select(feature_dependencies::child)
        .load(conn)?)
}
