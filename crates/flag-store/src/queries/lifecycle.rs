//! Each flag's lifecycle: the stages it entered, each once, as Unleash records them.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::LifecycleRow;
use crate::schema::feature_lifecycles;

/// The stages, in the order a flag passes through them.
pub const STAGES: [&str; 5] = ["initial", "pre-live", "live", "completed", "archived"];

/// Records that `feature` entered `stage` at `now`, unless it already had.
pub fn enter(
    conn: &mut DbConnection,
    feature: &str,
    stage: &str,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let known: i64 = feature_lifecycles::table
        .filter(feature_lifecycles::feature_name.eq(feature))
        .filter(feature_lifecycles::stage.eq(stage))
        .count()
        .get_result(conn)?;
    if known == 0 {
        diesel::insert_into(feature_lifecycles::table)
            .values(&LifecycleRow {
                feature_name: feature.to_owned(),
                stage: stage.to_owned(),
                status: None,
                status_value: None,
                created_at: now,
            })
            .execute(conn)?;
    }
    Ok(())
}

/// Starts `feature`'s lifecycle again at `initial`, as a revived flag does.
pub fn restart(conn: &mut DbConnection, feature: &str, now: NaiveDateTime) -> Result<(), StoreError> {
    diesel::delete(feature_lifecycles::table.filter(feature_lifecycles::feature_name.eq(feature)))
        .execute(conn)?;
    enter(conn, feature, "initial", now)
}

/// Marks `feature` completed, with whether it was kept or discarded and the variant kept.
pub fn complete(
    conn: &mut DbConnection,
    feature: &str,
    status: &str,
    status_value: Option<&str>,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    uncomplete(conn, feature)?;
    diesel::insert_into(feature_lifecycles::table)
        .values(&LifecycleRow {
            feature_name: feature.to_owned(),
            stage: "completed".to_owned(),
            status: Some(status.to_owned()),
            status_value: status_value.map(str::to_owned),
            created_at: now,
        })
        .execute(conn)?;
    Ok(())
}

/// Takes back `feature`'s completion.
pub fn uncomplete(conn: &mut DbConnection, feature: &str) -> Result<(), StoreError> {
    diesel::delete(
        feature_lifecycles::table
            .filter(feature_lifecycles::feature_name.eq(feature))
            .filter(feature_lifecycles::stage.eq("completed")),
    )
    .execute(conn)?;
    Ok(())
}

/// Sorts stages by flag, then as Unleash lists them: in [`STAGES`] order, whatever the order
/// they were entered in within one instant (a flag created and used at once enters two).
fn in_stage_order(mut rows: Vec<LifecycleRow>) -> Vec<LifecycleRow> {
    let rank = |stage: &str| {
        STAGES
            .iter()
            .position(|known| *known == stage)
            .unwrap_or(STAGES.len())
    };
    rows.sort_by(|left, right| {
        left.feature_name
            .cmp(&right.feature_name)
            .then_with(|| rank(&left.stage).cmp(&rank(&right.stage)))
            .then_with(|| left.created_at.cmp(&right.created_at))
    });
    rows
}

/// The stages `features` entered, in stage order for each.
pub fn of(conn: &mut DbConnection, features: &[String]) -> Result<Vec<LifecycleRow>, StoreError> {
    Ok(in_stage_order(
        feature_lifecycles::table
            .filter(feature_lifecycles::feature_name.eq_any(features))
            .select(LifecycleRow::as_select())
            .load(conn)?,
    ))
}

/// Every flag's stages, in stage order for each.
pub fn all(conn: &mut DbConnection) -> Result<Vec<LifecycleRow>, StoreError> {
    Ok(in_stage_order(
        feature_lifecycles::table
            .select(LifecycleRow::as_select())
            .load(conn)?,
    ))
}

/// Marks `feature` of `project` completed (kept or discarded, with the variant kept) and
/// records `feature-completed`; a flag already completed keeps its first status.
pub fn mark_completed(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    status: &str,
    status_value: Option<&str>,
    actor: &crate::models::Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        crate::queries::features::get(conn, project, feature)?;
        let completed: i64 = feature_lifecycles::table
            .filter(feature_lifecycles::feature_name.eq(feature))
            .filter(feature_lifecycles::stage.eq("completed"))
            .count()
            .get_result(conn)?;
        if completed == 0 {
            complete(conn, feature, status, status_value, now)?;
        }
        let mut data = serde_json::json!({"status": status, "kept": status == "kept"});
        if let Some(value) = status_value {
            data["statusValue"] = value.into();
        }
        crate::queries::events::record(
            conn,
            &crate::models::NewEvent {
                project: Some(project.into()),
                feature_name: Some(feature.into()),
                ..crate::models::NewEvent::new(crate::models::EventType::FeatureCompleted, actor, now)
                    .with_data(&data)?
            },
        )
    })
}

/// Takes back `feature`'s completion and records `feature-uncompleted`.
pub fn mark_uncompleted(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    actor: &crate::models::Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        crate::queries::features::get(conn, project, feature)?;
        uncomplete(conn, feature)?;
        crate::queries::events::record(
            conn,
            &crate::models::NewEvent {
                project: Some(project.into()),
                feature_name: Some(feature.into()),
                ..crate::models::NewEvent::new(crate::models::EventType::FeatureUncompleted, actor, now)
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_entered_at_once_come_in_unleash_order() {
        let at = chrono::DateTime::UNIX_EPOCH.naive_utc();
        let row = |feature: &str, stage: &str, seconds: i64| LifecycleRow {
            feature_name: feature.into(),
            stage: stage.into(),
            status: None,
            status_value: None,
            created_at: at + chrono::TimeDelta::seconds(seconds),
        };
        let sorted = in_stage_order(vec![
            row("b", "live", 5),
            row("b", "pre-live", 5),
            row("a", "completed", 9),
            row("b", "initial", 1),
            row("a", "live", 2),
        ]);
        let order: Vec<(&str, &str)> = sorted
            .iter()
            .map(|row| (row.feature_name.as_str(), row.stage.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("a", "live"),
                ("a", "completed"),
                ("b", "initial"),
                ("b", "pre-live"),
                ("b", "live")
            ]
        );
    }
}
