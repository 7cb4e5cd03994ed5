//! Unleash's export document (`POST /api/admin/features-batch/export`) and its import: flags
//! with their strategies, variants and switch in one environment, tags, segments named by their
//! strategies, context fields they use, and dependencies.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::{Constraint, Variant};
use serde::{Deserialize, Serialize};

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{
    Actor, ContextFieldRow, EventType, FeatureRow, LegalValue, NewEvent, TagRef, TagTypeRow,
};
use crate::queries::strategies::StrategyInput;
use crate::queries::{
    context_fields, dependencies, events, features, lifecycle, projects, segments, strategies, tags,
};
use crate::schema::{feature_strategies, feature_tags, segments as segments_table};

/// A flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedFeature {
    /// Its name.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Its type.
    #[serde(rename = "type", default = "release")]
    pub feature_type: String,
    /// Its project in the source.
    #[serde(default)]
    pub project: Option<String>,
    /// Marked stale.
    #[serde(default)]
    pub stale: bool,
    /// Whether SDKs emit impression events.
    #[serde(default)]
    pub impression_data: bool,
    /// Archived in the source.
    #[serde(default)]
    pub archived: bool,
}

fn release() -> String {
    "release".into()
}

/// A strategy of a flag in the exported environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedStrategy {
    /// Its strategy type.
    pub name: String,
    /// Its id in the source.
    #[serde(default)]
    pub id: Option<String>,
    /// Its flag.
    pub feature_name: String,
    /// Display title.
    #[serde(default)]
    pub title: Option<String>,
    /// Parameters, as strings.
    #[serde(default)]
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// Constraints.
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    /// Strategy variants.
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// Disabled.
    #[serde(default)]
    pub disabled: Option<bool>,
    /// Segment ids in the source; `segments` names them.
    #[serde(default)]
    pub segments: Vec<i64>,
    /// Its place among the flag's strategies in the environment; Unleash lists strategies by
    /// flag, not in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<i32>,
}

/// A flag's state in the exported environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedEnvironment {
    /// On or off.
    pub enabled: bool,
    /// The flag.
    pub feature_name: String,
    /// The environment.
    pub environment: String,
    /// Its variants there.
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// The flag again, as Unleash writes it.
    #[serde(default)]
    pub name: Option<String>,
}

/// A context field the exported flags use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedContextField {
    /// Its name.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Usable for stickiness.
    #[serde(default)]
    pub stickiness: bool,
    /// Display order.
    #[serde(default)]
    pub sort_order: i32,
    /// Allowed values.
    #[serde(default)]
    pub legal_values: Vec<LegalValue>,
}

/// A tag on a flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportedTag {
    /// The flag.
    pub feature_name: String,
    /// The tag type.
    pub tag_type: String,
    /// The value.
    pub tag_value: String,
    /// Who tagged it in the source.
    #[serde(default)]
    pub created_by_user_id: Option<i32>,
}

/// A segment the exported strategies name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedSegment {
    /// Its id in the source.
    pub id: i64,
    /// Its name, by which the import finds it.
    pub name: String,
}

/// A tag type the exported tags use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedTagType {
    /// Its name.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// An icon name.
    #[serde(default)]
    pub icon: Option<String>,
    /// `#rrggbb`.
    #[serde(default)]
    pub color: Option<String>,
}

/// A parent a flag depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedParent {
    /// The parent.
    pub feature: String,
    /// Whether the parent must be on.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Parent variants that satisfy it.
    #[serde(default)]
    pub variants: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A flag's parents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedDependencies {
    /// The child.
    pub feature: String,
    /// Its parents.
    pub dependencies: Vec<ExportedParent>,
}

/// The export document, as Unleash writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportDocument {
    /// The flags.
    pub features: Vec<ExportedFeature>,
    /// Their strategies in the environment.
    pub feature_strategies: Vec<ExportedStrategy>,
    /// Their state in the environment.
    #[serde(default)]
    pub feature_environments: Vec<ExportedEnvironment>,
    /// The context fields they use.
    #[serde(default)]
    pub context_fields: Vec<ExportedContextField>,
    /// Their tags.
    #[serde(default)]
    pub feature_tags: Vec<ExportedTag>,
    /// The segments their strategies name.
    #[serde(default)]
    pub segments: Vec<ExportedSegment>,
    /// The tag types their tags use.
    pub tag_types: Vec<ExportedTagType>,
    /// Their parents.
    #[serde(default)]
    pub dependencies: Vec<ExportedDependencies>,
    /// Links: none are kept here.
    #[serde(default)]
    pub links: Vec<serde_json::Value>,
}

/// Which flags to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// These, archived ones included; unknown names are skipped.
    Named(Vec<String>),
    /// The flags with a tag of this value, of any type.
    Tagged(String),
    /// The live flags of a project.
    Project(String),
    /// Every live flag.
    All,
}

/// The export document of the selected flags in `environment`.
pub fn export(
    conn: &mut DbConnection,
    selection: &Selection,
    environment: &str,
) -> Result<ExportDocument, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let all = features::all(conn)?;
        let chosen: Vec<&FeatureRow> = match selection {
            Selection::Named(names) => all.iter().filter(|row| names.contains(&row.name)).collect(),
            Selection::Tagged(value) => {
                let names: BTreeSet<String> = feature_tags::table
                    .filter(feature_tags::tag_value.eq(value))
                    .select(feature_tags::feature_name)
                    .load::<String>(conn)?
                    .into_iter()
                    .collect();
                all.iter().filter(|row| names.contains(&row.name)).collect()
            }
            Selection::Project(project) => all
                .iter()
                .filter(|row| row.project_id == *project && row.archived_at.is_none())
                .collect(),
            Selection::All => all.iter().filter(|row| row.archived_at.is_none()).collect(),
        };
        let mut document = ExportDocument {
            features: Vec::new(),
            feature_strategies: Vec::new(),
            feature_environments: Vec::new(),
            context_fields: Vec::new(),
            feature_tags: Vec::new(),
            segments: Vec::new(),
            tag_types: Vec::new(),
            dependencies: Vec::new(),
            links: Vec::new(),
        };
        let mut segment_ids: BTreeSet<i64> = BTreeSet::new();
        let mut used_fields: BTreeSet<String> = BTreeSet::new();
        let mut used_types: BTreeSet<String> = BTreeSet::new();
        for row in chosen {
            document.features.push(ExportedFeature {
                name: row.name.clone(),
                description: row.description.clone(),
                feature_type: row.feature_type.clone(),
                project: Some(row.project_id.clone()),
                stale: row.stale,
                impression_data: row.impression_data,
                archived: row.archived_at.is_some(),
            });
            for (sort_order, strategy) in (0..).zip(strategies::list(conn, &row.name, environment)?) {
                segment_ids.extend(strategy.segments.iter().copied());
                for constraint in &strategy.constraints {
                    used_fields.insert(constraint.context_name.clone());
                }
                document.feature_strategies.push(ExportedStrategy {
                    name: strategy.name,
                    id: strategy.id,
                    feature_name: row.name.clone(),
                    title: strategy.title,
                    parameters: strategy
                        .parameters
                        .iter()
                        .map(|(key, value)| (key.to_owned(), serde_json::Value::String(value.to_owned())))
                        .collect(),
                    constraints: strategy.constraints,
                    variants: strategy.variants,
                    disabled: strategy.disabled,
                    segments: strategy.segments,
                    sort_order: Some(sort_order),
                });
            }
            if let Ok(state) = features::environment(conn, &row.name, environment) {
                document.feature_environments.push(ExportedEnvironment {
                    enabled: state.enabled,
                    feature_name: row.name.clone(),
                    environment: environment.to_owned(),
                    variants: state.variants()?,
                    name: Some(row.name.clone()),
                });
            }
            for tag in tags::of_feature(conn, &row.name)? {
                used_types.insert(tag.tag_type.clone());
                document.feature_tags.push(ExportedTag {
                    feature_name: row.name.clone(),
                    tag_type: tag.tag_type,
                    tag_value: tag.value,
                    created_by_user_id: None,
                });
            }
            if let Some(parent) = dependencies::of(conn, &row.name)? {
                document.dependencies.push(ExportedDependencies {
                    feature: row.name.clone(),
                    dependencies: vec![ExportedParent {
                        variants: parent.variants()?,
                        feature: parent.parent,
                        enabled: parent.enabled,
                    }],
                });
            }
        }
        for field in context_fields::list(conn)? {
            if used_fields.contains(&field.name) {
                document.context_fields.push(ExportedContextField {
                    legal_values: field.legal_values()?,
                    name: field.name,
                    description: field.description,
                    stickiness: field.stickiness,
                    sort_order: field.sort_order,
                });
            }
        }
        document
            .context_fields
            .sort_by(|left, right| left.name.cmp(&right.name));
        for row in segments::list(conn)? {
            if segment_ids.contains(&i64::from(row.id)) {
                document.segments.push(ExportedSegment {
                    id: i64::from(row.id),
                    name: row.name,
                });
            }
        }
        document
            .segments
            .sort_by(|left, right| left.name.cmp(&right.name));
        for kind in tags::types(conn)? {
            if used_types.contains(&kind.name) {
                document.tag_types.push(ExportedTagType {
                    name: kind.name,
                    description: kind.description,
                    icon: kind.icon,
                    color: kind.color,
                });
            }
        }
        Ok(document)
    })
}

/// A finding of an import's check: what and which items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What.
    pub message: String,
    /// Which.
    pub affected_items: Vec<String>,
}

/// What importing a document would do: errors stop it, warnings do not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    /// What stops the import.
    pub errors: Vec<Finding>,
    /// What the import will do that may surprise.
    pub warnings: Vec<Finding>,
}

/// The names of the flags a document holds, repeats included.
fn document_names(document: &ExportDocument) -> Vec<String> {
    document
        .features
        .iter()
        .map(|feature| feature.name.clone())
        .collect()
}

/// The flags among `existing` that belong to another project than `project`, archived ones
/// too: an import may not move them.
fn in_other_projects<'a>(
    existing: &'a [FeatureRow],
    project: &'a str,
) -> impl Iterator<Item = &'a FeatureRow> {
    existing.iter().filter(move |row| row.project_id != project)
}

/// Checks importing `document` into `project` and `environment`, writing nothing.
pub fn check(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    document: &ExportDocument,
) -> Result<Check, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        projects::get(conn, project)?;
        crate::queries::environments::get(conn, environment)?;
        let mut check = Check::default();
        let known_types: Vec<crate::models::StrategyTypeRow> = strategies::list_types(conn)?;
        let unknown: Vec<String> = document
            .feature_strategies
            .iter()
            .filter(|strategy| !known_types.iter().any(|kind| kind.name == strategy.name))
            .map(|strategy| strategy.name.clone())
            .collect();
        if !unknown.is_empty() {
            check.errors.push(Finding {
                message: "We detected the following custom strategy that needs to be created first:".into(),
                affected_items: unknown,
            });
        }
        let mut mismatched = Vec::new();
        for field in &document.context_fields {
            if let Ok(existing) = context_fields::get(conn, &field.name) {
                let legal = existing.legal_values()?;
                if !field
                    .legal_values
                    .iter()
                    .all(|value| legal.iter().any(|known| known.value == value.value))
                {
                    mismatched.push(field.name.clone());
                }
            }
        }
        if !mismatched.is_empty() {
            check.errors.push(Finding {
                message: "We detected the following context fields that do not have matching legal values with the imported ones:".into(),
                affected_items: mismatched,
            });
        }
        let names = document_names(document);
        let existing = features::named(conn, &names)?;
        let elsewhere: Vec<String> = in_other_projects(&existing, project)
            .map(|row| format!("{} (in project {})", row.name, row.project_id))
            .collect();
        if !elsewhere.is_empty() {
            check.errors.push(Finding {
                message: format!(
                    "You cannot import a features that already exist in other projects. You already have the following features defined outside of project {project}:"
                ),
                affected_items: elsewhere,
            });
        }
        let mut seen = BTreeSet::new();
        let duplicates: BTreeSet<String> = names.iter().filter(|name| !seen.insert(*name)).cloned().collect();
        if !duplicates.is_empty() {
            check.errors.push(Finding {
                message: "We detected the following features are duplicate in your import data:".into(),
                affected_items: duplicates.into_iter().collect(),
            });
        }
        let missing_segments: Vec<String> = document
            .segments
            .iter()
            .filter(|segment| {
                segments_table::table
                    .filter(segments_table::name.eq(&segment.name))
                    .count()
                    .get_result::<i64>(conn)
                    .is_ok_and(|count| count == 0)
            })
            .map(|segment| segment.name.clone())
            .collect();
        if !missing_segments.is_empty() {
            check.errors.push(Finding {
                message: "We detected the following segments that need to be created first:".into(),
                affected_items: missing_segments,
            });
        }
        let mut missing_parents = Vec::new();
        for child in &document.dependencies {
            for parent in &child.dependencies {
                if !names.contains(&parent.feature) && features::find(conn, &parent.feature)?.is_none() {
                    missing_parents.push(parent.feature.clone());
                }
            }
        }
        if !missing_parents.is_empty() {
            check.errors.push(Finding {
                message: "We detected the following dependencies that need to be created first:".into(),
                affected_items: missing_parents,
            });
        }
        let custom: BTreeSet<String> = document
            .feature_strategies
            .iter()
            .filter(|strategy| {
                known_types
                    .iter()
                    .any(|kind| kind.name == strategy.name && !kind.built_in)
            })
            .map(|strategy| strategy.name.clone())
            .collect();
        if !custom.is_empty() {
            check.warnings.push(Finding {
                message: "The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:".into(),
                affected_items: custom.into_iter().collect(),
            });
        }
        let archived: Vec<String> = existing
            .iter()
            .filter(|row| row.archived_at.is_some())
            .map(|row| row.name.clone())
            .collect();
        if !archived.is_empty() {
            check.warnings.push(Finding {
                message: "The following features will not be imported as they are currently archived. To import them, please unarchive them first:".into(),
                affected_items: archived,
            });
        }
        let overwritten: Vec<String> = existing
            .iter()
            .filter(|row| row.archived_at.is_none() && row.project_id == project)
            .map(|row| row.name.clone())
            .collect();
        if !overwritten.is_empty() {
            check.warnings.push(Finding {
                message: "The following features already exist in this project and will be overwritten:"
                    .into(),
                affected_items: overwritten,
            });
        }
        Ok(check)
    })
}

/// Imports `document` into `project` and `environment` in one transaction, refused whole when
/// its check finds an error. Flags archived here are skipped; the others are created or updated,
/// their tags and their strategies in `environment` replaced, their variants there set when the
/// document has any, their switch there set, and their parents set. Applying the same document
/// twice leaves the second time nothing to change but strategy ids.
pub fn import(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    document: &ExportDocument,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let existing = features::named(conn, &document_names(document))?;
        let elsewhere: Vec<&str> = in_other_projects(&existing, project)
            .map(|row| row.name.as_str())
            .collect();
        if !elsewhere.is_empty() {
            return Err(StoreError::Rejected {
                message: format!(
                    "These features exist already in other projects: {}",
                    elsewhere.join(", ")
                ),
            });
        }
        let found = check(conn, project, environment, document)?;
        if let Some(error) = found.errors.first() {
            return Err(StoreError::Rejected {
                message: format!("{} {}", error.message, error.affected_items.join(", ")),
            });
        }
        let archived: BTreeSet<String> = features::named(
            conn,
            &document
                .features
                .iter()
                .map(|feature| feature.name.clone())
                .collect::<Vec<_>>(),
        )?
        .into_iter()
        .filter(|row| row.archived_at.is_some())
        .map(|row| row.name)
        .collect();
        let imported: Vec<&ExportedFeature> = document
            .features
            .iter()
            .filter(|feature| !archived.contains(&feature.name))
            .collect();
        for feature in &imported {
            let metadata = features::FeatureMetadata {
                feature_type: feature.feature_type.clone(),
                description: feature.description.clone().filter(|text| !text.is_empty()),
                stale: feature.stale,
                impression_data: feature.impression_data,
                archived: false,
            };
            if features::find(conn, &feature.name)?.is_some() {
                features::update_metadata(conn, project, &feature.name, &metadata, false, actor, now)?;
            } else {
                features::create(
                    conn,
                    &FeatureRow {
                        name: feature.name.clone(),
                        project_id: project.to_owned(),
                        feature_type: metadata.feature_type,
                        description: metadata.description,
                        impression_data: metadata.impression_data,
                        stale: metadata.stale,
                        archived_at: None,
                        created_at: now,
                        created_by_user_id: Some(actor.user_id),
                    },
                    actor,
                )?;
            }
        }
        let is_imported = |name: &str| imported.iter().any(|feature| feature.name == name);
        for state in &document.feature_environments {
            if is_imported(&state.feature_name) && !state.variants.is_empty() {
                crate::queries::variants::set_variants_batch(
                    conn,
                    project,
                    &state.feature_name,
                    &[environment.to_owned()],
                    &state.variants,
                    actor,
                    now,
                )?;
            }
        }
        for kind in &document.tag_types {
            if !tags::type_exists(conn, &kind.name)? {
                let row = TagTypeRow {
                    name: kind.name.clone(),
                    description: kind.description.clone(),
                    icon: kind.icon.clone(),
                    color: kind.color.clone(),
                    created_at: now,
                };
                tags::create_type(conn, &row, &tags::type_json(&row), actor)?;
            }
        }
        for feature in &imported {
            diesel::delete(feature_tags::table.filter(feature_tags::feature_name.eq(&feature.name)))
                .execute(conn)?;
            let added: Vec<TagRef> = document
                .feature_tags
                .iter()
                .filter(|tag| tag.feature_name == feature.name)
                .map(|tag| TagRef {
                    tag_type: tag.tag_type.clone(),
                    value: tag.tag_value.clone(),
                })
                .collect();
            if !added.is_empty() {
                tags::change(conn, &feature.name, &added, &[], actor, now)?;
            }
        }
        for field in &document.context_fields {
            if context_fields::get(conn, &field.name).is_err() {
                let row = ContextFieldRow::new(
                    field.name.clone(),
                    field.description.clone(),
                    field.stickiness,
                    field.sort_order,
                    &field.legal_values,
                    now,
                )?;
                context_fields::create(conn, &row, actor)?;
            }
        }
        let mut segment_ids: HashMap<i64, i32> = HashMap::new();
        for segment in &document.segments {
            let local: Option<i32> = segments_table::table
                .filter(segments_table::name.eq(&segment.name))
                .select(segments_table::id)
                .first(conn)
                .optional()?;
            if let Some(local) = local {
                segment_ids.insert(segment.id, local);
            }
        }
        for feature in &imported {
            diesel::delete(
                feature_strategies::table
                    .filter(feature_strategies::feature_name.eq(&feature.name))
                    .filter(feature_strategies::environment_name.eq(environment)),
            )
            .execute(conn)?;
        }
        // Unleash lists strategies by flag, each with its place: a stable sort by place keeps
        // each flag's strategies in their order.
        let mut chosen: Vec<&ExportedStrategy> = document
            .feature_strategies
            .iter()
            .filter(|strategy| is_imported(&strategy.feature_name))
            .collect();
        chosen.sort_by_key(|strategy| strategy.sort_order.unwrap_or(i32::MAX));
        for (order, strategy) in chosen.into_iter().enumerate() {
            let input = StrategyInput {
                name: strategy.name.clone(),
                title: strategy.title.clone(),
                disabled: strategy.disabled.unwrap_or(false),
                sort_order: Some(i32::try_from(order).unwrap_or(i32::MAX)),
                parameters: strategy
                    .parameters
                    .iter()
                    .map(|(key, value)| (key.clone(), flag_eval::parameter_text(value.clone())))
                    .collect(),
                constraints: strategy.constraints.clone(),
                segments: strategy
                    .segments
                    .iter()
                    .filter_map(|id| segment_ids.get(id).copied())
                    .collect(),
                variants: strategy.variants.clone(),
            };
            strategies::add(
                conn,
                project,
                &strategy.feature_name,
                environment,
                &input,
                actor,
                now,
            )?;
        }
        for state in &document.feature_environments {
            if is_imported(&state.feature_name) {
                features::write_enabled(
                    conn,
                    project,
                    &state.feature_name,
                    environment,
                    state.enabled,
                    actor,
                    now,
                )?;
            }
        }
        for child in &document.dependencies {
            if !is_imported(&child.feature) {
                continue;
            }
            for parent in &child.dependencies {
                dependencies::set(
                    conn,
                    project,
                    &child.feature,
                    &parent.feature,
                    parent.enabled,
                    &parent.variants,
                    actor,
                    now,
                )?;
            }
        }
        for feature in &imported {
            lifecycle::enter(conn, &feature.name, "initial", now)?;
        }
        events::record(
            conn,
            &NewEvent {
                project: Some(project.to_owned()),
                environment: Some(environment.to_owned()),
                ..NewEvent::new(EventType::FeaturesImported, actor, now)
            },
        )
    })
}
