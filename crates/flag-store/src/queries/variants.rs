//! Feature variants per environment.

use std::collections::BTreeSet;

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::Variant;

use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent};
use crate::queries::{events, features, name_order, to_json};
use crate::schema::feature_environments;

/// Replaces a feature's variants in every listed environment, all or none.
///
/// The feature must belong to `project`, and have a row in each environment (otherwise
/// [`StoreError::NotFound`] and nothing is written). An environment listed twice is written once.
/// For each environment, the old list, the new list and an audit event whose `pre_data` is the old
/// list are written in one immediate transaction, so concurrent writers never interleave and the
/// audit chain has no gap. Returns the stored list, sorted by name as Unleash stores it.
pub fn set_variants_batch(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environments: &[String],
    variants: &[Variant],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<Vec<Variant>, StoreError> {
    let mut sorted = variants.to_vec();
    sorted.sort_by(|left, right| name_order(&left.name, &right.name));
    let new_json = to_json("variants", &sorted)?;
    crate::queries::write(conn, |conn| {
        features::get(conn, project, feature)?;
        let mut seen = BTreeSet::new();
        for environment in environments
            .iter()
            .filter(|environment| seen.insert(environment.as_str()))
        {
            let old_json = features::environment(conn, feature, environment)?.variants;
            write_environment(
                conn,
                (project, feature, environment),
                &new_json,
                old_json,
                actor,
                now,
            )?;
        }
        Ok(sorted)
    })
}

/// Stores `new_json` as the variants of `feature` in `environment`, with the audit event whose
/// `pre_data` is `old_json`; inside the caller's write.
fn write_environment(
    conn: &mut DbConnection,
    (project, feature, environment): (&str, &str, &str),
    new_json: &str,
    old_json: String,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    diesel::update(feature_environments::table.find((feature, environment)))
        .set(feature_environments::variants.eq(new_json))
        .execute(conn)?;
    events::record(
        conn,
        &NewEvent {
            event_type: EventType::FeatureEnvironmentVariantsUpdated,
            created_by: actor.name.clone(),
            created_by_user_id: Some(actor.user_id),
            tags: None,
            created_at: now,
            project: Some(project.into()),
            environment: Some(environment.into()),
            feature_name: Some(feature.into()),
            data: Some(event_json(new_json)),
            pre_data: Some(event_json(&old_json)),
        },
    )?;
    Ok(())
}

/// A stored variants list as Unleash records it in an event: `{"variants": [...]}`.
fn event_json(variants_json: &str) -> String {
    format!("{{\"variants\":{variants_json}}}")
}

/// The variants of a feature in one environment as a change finds them.
#[derive(Debug)]
pub struct CurrentVariants {
    /// The environment's variants, sorted by name.
    pub variants: Vec<Variant>,
    /// Whether the feature has variants in any environment.
    pub feature_has_variants: bool,
}

/// Changes a feature's variants in one environment as `change` decides from the current ones,
/// reading and writing in one write transaction, so concurrent changes never lose one another.
/// The feature must belong to `project` and have a row in `environment`. When `change` refuses,
/// nothing is written and its error is answered inside `Ok`; otherwise the new list is stored
/// sorted by name, with an audit event whose `pre_data` is the old list, and returned.
pub fn change_in_environment<E>(
    conn: &mut DbConnection,
    (project, feature, environment): (&str, &str, &str),
    actor: &Actor,
    now: NaiveDateTime,
    change: impl FnOnce(CurrentVariants) -> Result<Vec<Variant>, E>,
) -> Result<Result<Vec<Variant>, E>, StoreError> {
    let mut refusal = None;
    let written = crate::queries::write(conn, |conn| {
        features::get(conn, project, feature)?;
        let row = features::environment(conn, feature, environment)?;
        let old_json = row.variants.clone();
        let all: Vec<String> = feature_environments::table
            .filter(feature_environments::feature_name.eq(feature))
            .select(feature_environments::variants)
            .load(conn)?;
        let current = CurrentVariants {
            variants: row.variants()?,
            feature_has_variants: all.iter().any(|variants| variants.trim() != "[]"),
        };
        let mut sorted = match change(current) {
            Ok(variants) => variants,
            Err(error) => {
                refusal = Some(error);
                return Err(StoreError::Rejected {
                    message: "the change was refused".into(),
                });
            }
        };
        sorted.sort_by(|left, right| name_order(&left.name, &right.name));
        let new_json = to_json("variants", &sorted)?;
        write_environment(
            conn,
            (project, feature, environment),
            &new_json,
            old_json,
            actor,
            now,
        )?;
        Ok(sorted)
    });
    match (refusal, written) {
        (Some(refusal), _) => Ok(Err(refusal)),
        (None, written) => written.map(Ok),
    }
}

/// A feature's variants in one environment, sorted by name. The feature must belong to `project`.
pub fn get(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
    environment: &str,
) -> Result<Vec<Variant>, StoreError> {
    features::get(conn, project, feature)?;
    features::environment(conn, feature, environment)?.variants()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_sort_like_locale_compare() {
        let mut names = vec!["b", "B", "a", "C", "a2"];
        names.sort_by(|l, r| name_order(l, r));
        assert_eq!(names, ["a", "a2", "b", "B", "C"]);
    }
}
