//! Loading a client-features document (what Unleash's `GET /api/client/features` returns) into
//! one project and environment, so Unleash users can move their flags over.

use std::collections::HashMap;

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::ClientFeatures;

use crate::error::StoreError;
use crate::models::{Actor, FeatureRow, NewSegment, StrategyTypeRow};
use crate::queries::strategies::StrategyInput;
use crate::queries::{dependencies, features, projects, segments, strategies, to_json, variants};
use crate::schema::{feature_strategies, segments as segments_table, strategy_types};

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Features created.
    pub created: usize,
    /// Features that existed and were updated.
    pub updated: usize,
    /// Segments created.
    pub segments: usize,
}

/// Imports every feature of `document` into `project`, setting its state, strategies (replacing
/// those in `environment`), variants and dependency there. Segments are matched by name and
/// created when missing; unknown strategy types are registered as custom. One transaction.
pub fn client_features(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    document: &ClientFeatures,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<ImportReport, StoreError> {
    crate::queries::write(conn, |conn| {
        projects::get(conn, project)?;
        let mut report = ImportReport::default();
        let mut segment_ids = HashMap::new();
        for segment in &document.segments {
            // The client API leaves segment names out; such a segment is kept as `segment-<id>`,
            // and found again under that name by the next import.
            let name = if segment.name.is_empty() {
                format!("segment-{}", segment.id)
            } else {
                segment.name.clone()
            };
            let existing: Option<i32> = segments_table::table
                .filter(segments_table::name.eq(&name))
                .select(segments_table::id)
                .first(conn)
                .optional()?;
            let id = match existing {
                Some(id) => id,
                None => {
                    report.segments += 1;
                    segments::create(
                        conn,
                        &NewSegment {
                            name,
                            description: None,
                            project_id: None,
                            constraints: to_json("constraints", &segment.constraints)?,
                            created_by: Some(actor.name.clone()),
                            created_at: now,
                        },
                        actor,
                    )?
                    .id
                }
            };
            segment_ids.insert(segment.id, id);
        }
        for feature in &document.features {
            match features::get(conn, project, &feature.name) {
                Ok(_) => report.updated += 1,
                Err(StoreError::NotFound { .. }) => {
                    features::create(
                        conn,
                        &FeatureRow {
                            name: feature.name.clone(),
                            project_id: project.into(),
                            feature_type: feature.feature_type.clone().unwrap_or_else(|| "release".into()),
                            description: feature.description.clone(),
                            impression_data: feature.impression_data.unwrap_or(false),
                            stale: feature.stale.unwrap_or(false),
                            archived_at: None,
                            created_at: now,
                            created_by_user_id: Some(actor.user_id),
                        },
                        actor,
                    )?;
                    report.created += 1;
                }
                Err(other) => return Err(other),
            }
            diesel::delete(
                feature_strategies::table
                    .filter(feature_strategies::feature_name.eq(&feature.name))
                    .filter(feature_strategies::environment_name.eq(environment)),
            )
            .execute(conn)?;
            for (order, strategy) in feature.strategies.iter().enumerate() {
                register_type(conn, &strategy.name, now)?;
                let input = StrategyInput {
                    name: strategy.name.clone(),
                    title: strategy.title.clone(),
                    disabled: strategy.disabled.unwrap_or(false),
                    sort_order: Some(i32::try_from(order).unwrap_or(i32::MAX)),
                    parameters: strategy.parameters.clone().into(),
                    constraints: strategy.constraints.clone(),
                    segments: strategy
                        .segments
                        .iter()
                        .filter_map(|id| segment_ids.get(id).copied())
                        .collect(),
                    variants: strategy.variants.clone(),
                };
                strategies::add(conn, project, &feature.name, environment, &input, actor, now)?;
            }
            // Stored as Unleash stores variants, and as the admin API writes them: a variant
            // without a stickiness is sticky on `default`.
            let mut flag_variants = feature.variants.clone();
            for variant in &mut flag_variants {
                variant.stickiness.get_or_insert_with(|| "default".into());
            }
            variants::set_variants_batch(
                conn,
                project,
                &feature.name,
                &[environment.into()],
                &flag_variants,
                actor,
                now,
            )?;
            features::write_enabled(
                conn,
                project,
                &feature.name,
                environment,
                feature.enabled,
                actor,
                now,
            )?;
        }
        for feature in &document.features {
            if let Some(dependency) = feature.dependencies.first() {
                dependencies::set(
                    conn,
                    project,
                    &feature.name,
                    &dependency.feature,
                    dependency.enabled.unwrap_or(true),
                    dependency.variants.as_deref().unwrap_or_default(),
                    actor,
                    now,
                )?;
            }
        }
        Ok(report)
    })
}

/// Registers `name` as a custom strategy type when no type has that name.
pub(crate) fn register_type(
    conn: &mut DbConnection,
    name: &str,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let known: i64 = strategy_types::table
        .filter(strategy_types::name.eq(name))
        .count()
        .get_result(conn)?;
    if known == 0 {
        diesel::insert_into(strategy_types::table)
            .values(&StrategyTypeRow {
                name: name.into(),
                title: None,
                description: Some("registered by an import".into()),
                parameters: "[]".into(),
                built_in: false,
                created_at: now,
                deprecated: false,
                display_name: None,
                sort_order: StrategyTypeRow::CUSTOM_SORT_ORDER,
            })
            .execute(conn)?;
    }
    Ok(())
}
