//! Archiving features, reviving them, deleting archived ones, and marking several stale: the
//! batch operations of a project, with Unleash's rules on projects and dependencies.

use std::collections::BTreeSet;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{Actor, EventType, FeatureRow, NewEvent};
use crate::queries::{events, features, lifecycle, tags, to_json};
use crate::schema::{feature_dependencies, feature_environments, features as features_table};

/// What archiving some features would do: the listed parents whose children are not listed
/// (which forbids it), and whether any dependency would go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveImpact {
    /// Listed features that other, unlisted features depend on.
    pub parents_with_children: Vec<String>,
    /// Whether any listed feature is a parent or a child in a dependency.
    pub has_dependencies: bool,
}

/// What archiving `names` would do.
pub fn impact(conn: &mut DbConnection, names: &[String]) -> Result<ArchiveImpact, StoreError> {
    let links: Vec<(String, String)> = feature_dependencies::table
        .filter(
            feature_dependencies::parent
                .eq_any(names)
                .or(feature_dependencies::child.eq_any(names)),
        )
        .select((feature_dependencies::child, feature_dependencies::parent))
        .load(conn)?;
    let parents_with_children: BTreeSet<String> = links
        .iter()
        .filter(|(child, parent)| names.contains(parent) && !names.contains(child))
        .map(|(_, parent)| parent.clone())
        .collect();
    Ok(ArchiveImpact {
        parents_with_children: parents_with_children.into_iter().collect(),
        has_dependencies: !links.is_empty(),
    })
}

/// The existing features among `names`, all of which must belong to `project`.
fn of_project(
    conn: &mut DbConnection,
    project: &str,
    names: &[String],
) -> Result<Vec<FeatureRow>, StoreError> {
    let rows = features::named(conn, names)?;
    let others: BTreeSet<&str> = rows
        .iter()
        .filter(|row| row.project_id != project)
        .map(|row| row.project_id.as_str())
        .collect();
    if !others.is_empty() {
        return Err(StoreError::InvalidOperation {
            message: format!(
                "The operation could not be completed. The features exist, but the provided project ids (\"{}\") does not match the project provided in request URL (\"{project}\").",
                others.into_iter().collect::<Vec<_>>().join(",")
            ),
        });
    }
    Ok(rows)
}

/// Refuses to archive or delete `names` while unlisted features depend on one of them.
fn refuse_orphans(conn: &mut DbConnection, names: &[String]) -> Result<(), StoreError> {
    if impact(conn, names)?.parents_with_children.is_empty() {
        return Ok(());
    }
    Err(StoreError::InvalidOperation {
        message: if names.len() == 1 {
            "You can not archive/delete this feature since other features depend on it.".into()
        } else {
            "You can not archive/delete those features since other features depend on them.".into()
        },
    })
}

/// Archives the live features among `names`, which must belong to `project` and have no child
/// outside the list: each loses its own parent dependency and enters the `archived` stage.
/// Unknown and already archived names are skipped.
pub fn archive(
    conn: &mut DbConnection,
    project: &str,
    names: &[String],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let rows = of_project(conn, project, names)?;
        refuse_orphans(conn, names)?;
        for row in rows.iter().filter(|row| row.archived_at.is_none()) {
            let removed = diesel::delete(feature_dependencies::table.find(&row.name)).execute(conn)?;
            if removed > 0 {
                events::record(
                    conn,
                    &NewEvent {
                        project: Some(project.into()),
                        feature_name: Some(row.name.clone()),
                        ..NewEvent::new(EventType::FeatureDependenciesRemoved, actor, now)
                    },
                )?;
            }
            diesel::update(features_table::table.find(&row.name))
                .set(features_table::archived_at.eq(Some(now)))
                .execute(conn)?;
            events::record(
                conn,
                &NewEvent {
                    project: Some(row.project_id.clone()),
                    feature_name: Some(row.name.clone()),
                    ..NewEvent::new(EventType::FeatureArchived, actor, now)
                },
            )?;
            lifecycle::enter(conn, &row.name, "archived", now)?;
        }
        Ok(())
    })
}

/// Revives the archived features among `names`, which must belong to `project`: each comes
/// back switched off in every environment, with its strategies, variants and tags, and starts
/// its lifecycle again. Other names are skipped.
pub fn revive(
    conn: &mut DbConnection,
    project: &str,
    names: &[String],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        crate::queries::projects::get(conn, project)?;
        let rows = of_project(conn, project, names)?;
        for row in rows.iter().filter(|row| row.archived_at.is_some()) {
            revive_one(conn, row, actor, now)?;
        }
        Ok(())
    })
}

/// Revives one feature, archived or not, as `POST /api/admin/archive/revive/{name}` does.
pub fn revive_named(
    conn: &mut DbConnection,
    name: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let row = features::find(conn, name)?.ok_or_else(|| StoreError::NotFound {
            entity: "feature",
            key: name.to_owned(),
        })?;
        revive_one(conn, &row, actor, now)
    })
}

fn revive_one(
    conn: &mut DbConnection,
    row: &FeatureRow,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    diesel::update(features_table::table.find(&row.name))
        .set(features_table::archived_at.eq(None::<NaiveDateTime>))
        .execute(conn)?;
    diesel::update(feature_environments::table.filter(feature_environments::feature_name.eq(&row.name)))
        .set(feature_environments::enabled.eq(false))
        .execute(conn)?;
    events::record(
        conn,
        &NewEvent {
            project: Some(row.project_id.clone()),
            feature_name: Some(row.name.clone()),
            ..NewEvent::new(EventType::FeatureRevived, actor, now)
        },
    )?;
    lifecycle::restart(conn, &row.name, now)
}

/// Deletes the archived features among `names` for good, which must belong to `project` when
/// it is given; live and unknown names are skipped. Each deletion is recorded with the feature
/// and its tags as they were; the name is free again.
pub fn delete(
    conn: &mut DbConnection,
    project: Option<&str>,
    names: &[String],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let rows = match project {
            Some(project) => of_project(conn, project, names)?,
            None => features::named(conn, names)?,
        };
        let archived: Vec<&FeatureRow> = rows.iter().filter(|row| row.archived_at.is_some()).collect();
        if archived.is_empty() {
            return Ok(());
        }
        refuse_orphans(conn, names)?;
        for row in archived {
            let feature_tags = tags::of_feature(conn, &row.name)?;
            diesel::delete(features_table::table.find(&row.name)).execute(conn)?;
            events::record(
                conn,
                &NewEvent {
                    project: Some(row.project_id.clone()),
                    feature_name: Some(row.name.clone()),
                    pre_data: Some(to_json("pre_data", &features::feature_json(row))?),
                    ..NewEvent::new(EventType::FeatureDeleted, actor, now)
                }
                .with_tags(&feature_tags)?,
            )?;
        }
        Ok(())
    })
}

/// Marks the features among `names` stale or not, which must belong to `project`; unknown
/// names are skipped, and only features whose staleness changes are written and recorded.
pub fn set_stale(
    conn: &mut DbConnection,
    project: &str,
    names: &[String],
    stale: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let rows = of_project(conn, project, names)?;
        for row in rows.iter().filter(|row| row.stale != stale) {
            diesel::update(features_table::table.find(&row.name))
                .set(features_table::stale.eq(stale))
                .execute(conn)?;
            features::record_stale(conn, project, &row.name, stale, actor, now)?;
        }
        Ok(())
    })
}
