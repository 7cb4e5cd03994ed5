//! The edge's store: an upstream's client-features documents written in, so that the server's
//! own reads ([`crate::queries::evaluation::client_features`]) answer what the upstream answers.
//!
//! An edge keeps no state of its own: each document it receives for an environment and a set of
//! projects replaces what its store holds there. Rows are written as the document states them,
//! without the admin API's checks (a custom strategy type, a constraint on an unknown field or
//! a parent in a project the token does not see are the upstream's business), and the write
//! records one `features-imported` event, so the store's revision moves exactly when what SDKs
//! read does.

use std::collections::{HashMap, HashSet};

use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::{ClientFeatures, Feature};

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{
    Actor, EnvironmentRow, EventType, FeatureEnvironmentRow, FeatureRow, NewEvent, ProjectRow, SegmentRow,
    StrategyRow,
};
use crate::queries::{events, to_json};
use crate::schema::{
    environments, feature_dependencies, feature_environments, feature_strategies, feature_strategy_segments,
    features, project_environments, projects, segments,
};

/// What a document covers: one environment, and every project or only some.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The environment.
    pub environment: String,
    /// The projects; `None` for every project.
    pub projects: Option<Vec<String>>,
}

impl Scope {
    fn covers(&self, project: &str) -> bool {
        self.projects
            .as_ref()
            .is_none_or(|projects| projects.iter().any(|covered| covered == project))
    }
}

/// A fingerprint of each flag of the document last written for a scope, so the next write
/// compares without keeping the document.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprints(HashMap<String, u64>);

impl Fingerprints {
    /// The fingerprint of `feature`: a hash of its JSON, stable within the process.
    fn of(feature: &Feature) -> u64 {
        use std::hash::{BuildHasher as _, Hasher as _};
        let mut hasher = FINGERPRINT.build_hasher();
        hasher.write(&serde_json::to_vec(feature).unwrap_or_default());
        hasher.finish()
    }

    /// How many flags it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One hashing key for the process's fingerprints.
static FINGERPRINT: std::sync::LazyLock<std::collections::hash_map::RandomState> =
    std::sync::LazyLock::new(std::collections::hash_map::RandomState::new);

/// What writing a document changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mirrored {
    /// Flags written (new or changed).
    pub written: usize,
    /// Flags the document no longer holds, archived.
    pub removed: usize,
    /// Segments written (new or changed) or removed.
    pub segments: usize,
}

impl Mirrored {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        self.written + self.removed + self.segments > 0
    }
}

/// Makes what the store holds for `scope` what `document` holds, in one transaction.
///
/// `previous` fingerprints the document last written for the same scope: a flag equal to its
/// entry there and still live in the store is not written again, so a change upstream costs
/// the rows of the flags it changed. Returns what changed and the fingerprints of `document`. Flags of the scope's projects that the document lacks are archived
/// (they were archived or deleted upstream); segments no strategy names and the document lacks
/// are deleted. Nothing is recorded when nothing changed.
pub fn apply(
    conn: &mut DbConnection,
    scope: &Scope,
    document: &ClientFeatures,
    previous: &Fingerprints,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(Mirrored, Fingerprints), StoreError> {
    let fingerprints = Fingerprints(
        document
            .features
            .iter()
            .map(|feature| (feature.name.clone(), Fingerprints::of(feature)))
            .collect(),
    );
    let done = crate::queries::write(conn, |conn| {
        crate::queries::history::not_kept();
        let mut done = Mirrored::default();
        ensure_environment(conn, &scope.environment, now)?;
        done.segments += write_segments(conn, document, now)?;
        let live: HashMap<String, String> = features::table
            .filter(features::archived_at.is_null())
            .select((features::name, features::project_id))
            .load::<(String, String)>(conn)?
            .into_iter()
            .collect();
        let mut projects_ready: HashSet<String> = HashSet::new();
        let mut known = Known {
            segments: segments::table
                .select(segments::id)
                .load::<i32>(conn)?
                .into_iter()
                .collect(),
            strategy_types: HashSet::new(),
        };
        let mut written: Vec<&Feature> = Vec::new();
        for feature in &document.features {
            let unchanged = previous
                .0
                .get(&feature.name)
                .is_some_and(|held| Some(held) == fingerprints.0.get(&feature.name))
                && live.contains_key(&feature.name);
            if unchanged {
                continue;
            }
            let project = feature.project.clone().unwrap_or_else(|| "default".into());
            if projects_ready.insert(project.clone()) {
                ensure_project(conn, &project, &scope.environment, now)?;
            }
            write_feature(conn, &project, &scope.environment, feature, &mut known, now)?;
            written.push(feature);
        }
        // Dependencies once every flag of the document is in: a parent may come after its child.
        for feature in &written {
            write_dependency(conn, feature, now)?;
        }
        done.written = written.len();
        let listed: HashSet<&str> = document
            .features
            .iter()
            .map(|feature| feature.name.as_str())
            .collect();
        let gone: Vec<&String> = live
            .iter()
            .filter(|(name, project)| scope.covers(project) && !listed.contains(name.as_str()))
            .map(|(name, _)| name)
            .collect();
        for name in &gone {
            diesel::update(features::table.find(name.as_str()))
                .set(features::archived_at.eq(Some(now)))
                .execute(conn)?;
        }
        done.removed = gone.len();
        done.segments += remove_unused_segments(conn, document)?;
        if done.changed() {
            events::record(
                conn,
                &NewEvent {
                    environment: Some(scope.environment.clone()),
                    data: Some(to_json(
                        "data",
                        &serde_json::json!({
                            "source": "upstream",
                            "environment": scope.environment,
                            "projects": scope.projects,
                            "written": done.written,
                            "removed": done.removed,
                            "segments": done.segments,
                        }),
                    )?),
                    ..NewEvent::new(EventType::FeaturesImported, actor, now)
                },
            )?;
        }
        Ok(done)
    })?;
    Ok((done, fingerprints))
}

fn ensure_environment(conn: &mut DbConnection, name: &str, now: NaiveDateTime) -> Result<(), StoreError> {
    let known: i64 = environments::table
        .filter(environments::name.eq(name))
        .count()
        .get_result(conn)?;
    if known == 0 {
        let last: Option<i32> = environments::table
            .select(diesel::dsl::max(environments::sort_order))
            .first(conn)?;
        diesel::insert_into(environments::table)
            .values(&EnvironmentRow {
                name: name.into(),
                environment_type: "production".into(),
                sort_order: last.map_or(1, |last| last.saturating_add(1)),
                enabled: true,
                created_at: now,
            })
            .execute(conn)?;
    }
    Ok(())
}

fn ensure_project(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let known: i64 = projects::table
        .filter(projects::id.eq(project))
        .count()
        .get_result(conn)?;
    if known == 0 {
        diesel::insert_into(projects::table)
            .values(&ProjectRow {
                id: project.into(),
                name: project.into(),
                description: None,
                created_at: now,
            })
            .execute(conn)?;
    }
    let linked: i64 = project_environments::table
        .find((project, environment))
        .count()
        .get_result(conn)?;
    if linked == 0 {
        diesel::insert_into(project_environments::table)
            .values((
                project_environments::project_id.eq(project),
                project_environments::environment_name.eq(environment),
            ))
            .execute(conn)?;
    }
    Ok(())
}

/// What one write has read or made already, so each flag it writes does not ask again.
struct Known {
    /// The segments the store holds (the document's are written first).
    segments: HashSet<i32>,
    /// The strategy types registered during this write.
    strategy_types: HashSet<String>,
}

/// Writes `feature` live in `project`, with its state and strategies in `environment`.
fn write_feature(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    feature: &Feature,
    known: &mut Known,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let row = FeatureRow {
        name: feature.name.clone(),
        project_id: project.into(),
        feature_type: feature.feature_type.clone().unwrap_or_else(|| "release".into()),
        description: feature.description.clone(),
        impression_data: feature.impression_data.unwrap_or(false),
        stale: feature.stale.unwrap_or(false),
        archived_at: None,
        created_at: now,
        created_by_user_id: None,
    };
    let exists: i64 = features::table
        .filter(features::name.eq(&feature.name))
        .count()
        .get_result(conn)?;
    if exists == 0 {
        diesel::insert_into(features::table).values(&row).execute(conn)?;
    } else {
        diesel::update(features::table.find(&feature.name))
            .set((
                features::project_id.eq(&row.project_id),
                features::feature_type.eq(&row.feature_type),
                features::description.eq(&row.description),
                features::impression_data.eq(row.impression_data),
                features::stale.eq(row.stale),
                features::archived_at.eq(None::<NaiveDateTime>),
            ))
            .execute(conn)?;
    }
    let variants = to_json("variants", &feature.variants)?;
    diesel::delete(feature_environments::table.find((&feature.name, environment))).execute(conn)?;
    diesel::insert_into(feature_environments::table)
        .values(&FeatureEnvironmentRow {
            feature_name: feature.name.clone(),
            environment_name: environment.into(),
            enabled: feature.enabled,
            variants,
            last_seen_at: None,
        })
        .execute(conn)?;
    diesel::delete(
        feature_strategies::table
            .filter(feature_strategies::feature_name.eq(&feature.name))
            .filter(feature_strategies::environment_name.eq(environment)),
    )
    .execute(conn)?;
    for (index, strategy) in feature.strategies.iter().enumerate() {
        if known.strategy_types.insert(strategy.name.clone()) {
            crate::queries::import::register_type(conn, &strategy.name, now)?;
        }
        // Kept in the document's order, which is the order SDKs evaluate in; the id is the
        // edge's own, unique whatever the upstream's ids are.
        let id = format!("{environment}/{}/{index}", feature.name);
        let row = StrategyRow {
            id: id.clone(),
            feature_name: feature.name.clone(),
            environment_name: environment.into(),
            strategy_name: strategy.name.clone(),
            title: strategy.title.clone(),
            disabled: strategy.disabled.unwrap_or(false),
            sort_order: i32::try_from(index).unwrap_or(i32::MAX),
            parameters: to_json("parameters", &strategy.parameters)?,
            constraints: to_json("constraints", &strategy.constraints)?,
            variants: to_json("variants", &strategy.variants)?,
            created_at: now,
        };
        diesel::insert_into(feature_strategies::table)
            .values(&row)
            .execute(conn)?;
        let mut linked: Vec<i32> = strategy
            .segments
            .iter()
            .filter_map(|segment| i32::try_from(*segment).ok())
            .filter(|segment| known.segments.contains(segment))
            .collect();
        linked.sort_unstable();
        linked.dedup();
        for segment in linked {
            diesel::insert_into(feature_strategy_segments::table)
                .values((
                    feature_strategy_segments::strategy_id.eq(&id),
                    feature_strategy_segments::segment_id.eq(segment),
                ))
                .execute(conn)?;
        }
    }
    Ok(())
}

/// Sets `feature`'s parent as the document states it; a parent the store does not hold (one in a
/// project the document does not cover) is kept as an archived flag, so SDKs find the
/// dependency and no parent, as the upstream's SDKs do.
fn write_dependency(
    conn: &mut DbConnection,
    feature: &Feature,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    diesel::delete(feature_dependencies::table.find(&feature.name)).execute(conn)?;
    let Some(dependency) = feature.dependencies.first() else {
        return Ok(());
    };
    let known: i64 = features::table
        .filter(features::name.eq(&dependency.feature))
        .count()
        .get_result(conn)?;
    if known == 0 {
        diesel::insert_into(features::table)
            .values(&FeatureRow {
                name: dependency.feature.clone(),
                project_id: feature.project.clone().unwrap_or_else(|| "default".into()),
                feature_type: "release".into(),
                description: None,
                impression_data: false,
                stale: false,
                archived_at: Some(now),
                created_at: now,
                created_by_user_id: None,
            })
            .execute(conn)?;
    }
    let enabled = dependency.enabled.unwrap_or(true);
    diesel::insert_into(feature_dependencies::table)
        .values((
            feature_dependencies::child.eq(&feature.name),
            feature_dependencies::parent.eq(&dependency.feature),
            feature_dependencies::enabled.eq(enabled),
            feature_dependencies::variants.eq(to_json(
                "variants",
                &dependency.variants.clone().unwrap_or_default(),
            )?),
        ))
        .execute(conn)?;
    Ok(())
}

/// Writes the document's segments under their own ids; returns how many were new or changed.
fn write_segments(
    conn: &mut DbConnection,
    document: &ClientFeatures,
    now: NaiveDateTime,
) -> Result<usize, StoreError> {
    let stored: HashMap<i32, SegmentRow> = segments::table
        .select(SegmentRow::as_select())
        .load(conn)?
        .into_iter()
        .map(|row| (row.id, row))
        .collect();
    let mut written = 0;
    for segment in &document.segments {
        let Ok(id) = i32::try_from(segment.id) else {
            continue;
        };
        // The upstream's name (unique there as here), or one made of the id when the client API
        // leaves names out.
        let name = if segment.name.is_empty() {
            format!("segment-{id}")
        } else {
            segment.name.clone()
        };
        let constraints = to_json("constraints", &segment.constraints)?;
        match stored.get(&id) {
            Some(row) if row.name == name && row.constraints == constraints => {}
            Some(_) => {
                diesel::update(segments::table.find(id))
                    .set((segments::name.eq(&name), segments::constraints.eq(&constraints)))
                    .execute(conn)?;
                written += 1;
            }
            None => {
                diesel::insert_into(segments::table)
                    .values(&SegmentRow {
                        id,
                        name,
                        description: None,
                        project_id: None,
                        constraints,
                        created_by: None,
                        created_at: now,
                    })
                    .execute(conn)?;
                written += 1;
            }
        }
    }
    Ok(written)
}

/// Deletes the segments that no strategy names and the document lacks.
fn remove_unused_segments(conn: &mut DbConnection, document: &ClientFeatures) -> Result<usize, StoreError> {
    let listed: HashSet<i64> = document.segments.iter().map(|segment| segment.id).collect();
    let used: HashSet<i32> = feature_strategy_segments::table
        .select(feature_strategy_segments::segment_id)
        .load::<i32>(conn)?
        .into_iter()
        .collect();
    let unused: Vec<i32> = segments::table
        .select(segments::id)
        .load::<i32>(conn)?
        .into_iter()
        .filter(|id| !used.contains(id) && !listed.contains(&i64::from(*id)))
        .collect();
    if unused.is_empty() {
        return Ok(0);
    }
    diesel::delete(segments::table.filter(segments::id.eq_any(&unused))).execute(conn)?;
    Ok(unused.len())
}
