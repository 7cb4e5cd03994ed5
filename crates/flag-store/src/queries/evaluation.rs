//! Reads that feed flag-eval: the playground's input and the SDKs' client-features document.
//!
//! Each is a fixed number of queries (six), whatever the number of features.

use std::collections::HashMap;

use crate::connection::DbConnection;
use diesel::prelude::*;
use flag_eval::{ClientFeatures, Dependency, Feature};

use crate::error::StoreError;
use crate::models::{DependencyRow, FeatureEnvironmentRow, FeatureRow, SegmentRow, StrategyRow};
use crate::queries::{segments, strategies};
use crate::schema::{
    feature_dependencies, feature_environments, feature_strategies, feature_strategy_segments, features,
    segments as segments_table,
};

/// Which projects to read: what a playground request or an API token is limited to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProjectScope {
    /// Every project.
    All,
    /// Only these (an empty list means none).
    Only(Vec<String>),
}

/// Everything the playground evaluates for one environment: the non-archived features of the
/// chosen projects, sorted by project then name, with their state in that environment (off and
/// with no variants where the project lacks the environment, but with any strategies added there
/// all the same), strategies in evaluation order, disabled ones included, dependencies, and all
/// segments.
pub fn playground_input(
    conn: &mut DbConnection,
    scope: &ProjectScope,
    environment: &str,
) -> Result<ClientFeatures, StoreError> {
    load(conn, scope, environment, true)
}

/// The document SDKs poll (`GET /api/client/features`): as [`playground_input`], without
/// disabled strategies.
pub fn client_features(
    conn: &mut DbConnection,
    scope: &ProjectScope,
    environment: &str,
) -> Result<ClientFeatures, StoreError> {
    load(conn, scope, environment, false)
}

fn load(
    conn: &mut DbConnection,
    scope: &ProjectScope,
    environment: &str,
    with_disabled: bool,
) -> Result<ClientFeatures, StoreError> {
    let features = flags(
        conn,
        environment,
        &Flags {
            scope,
            names: None,
            archived: false,
        },
        with_disabled,
    )?;
    let segment_rows: Vec<SegmentRow> = segments_table::table
        .order(segments_table::id.asc())
        .select(SegmentRow::as_select())
        .load(conn)?;
    Ok(ClientFeatures {
        version: 2,
        features: features.into_iter().map(|(_, feature)| feature).collect(),
        segments: segment_rows
            .iter()
            .map(segments::to_model)
            .collect::<Result<_, _>>()?,
    })
}

/// Which flags [`flags`] reads.
pub(crate) struct Flags<'a> {
    /// Of these projects.
    pub scope: &'a ProjectScope,
    /// Only these, when given.
    pub names: Option<&'a [String]>,
    /// Archived ones too.
    pub archived: bool,
}

/// What [`flags`] tells of each flag besides its definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct State {
    /// It is archived.
    pub archived: bool,
    /// Its project has the environment: it has a state there.
    pub in_project: bool,
}

/// The flags `which` names as the engine reads them in `environment`, sorted by project then
/// name, each with its [`State`]: five queries, whatever the number of flags.
pub(crate) fn flags(
    conn: &mut DbConnection,
    environment: &str,
    which: &Flags<'_>,
    with_disabled: bool,
) -> Result<Vec<(State, Feature)>, StoreError> {
    let mut query = features::table
        .order((features::project_id.asc(), features::name.asc()))
        .select(FeatureRow::as_select())
        .into_boxed();
    if !which.archived {
        query = query.filter(features::archived_at.is_null());
    }
    if let ProjectScope::Only(projects) = which.scope {
        query = query.filter(features::project_id.eq_any(projects));
    }
    let mut states_query = feature_environments::table
        .filter(feature_environments::environment_name.eq(environment))
        .select(FeatureEnvironmentRow::as_select())
        .into_boxed();
    let mut links_query = feature_strategy_segments::table
        .inner_join(feature_strategies::table)
        .filter(feature_strategies::environment_name.eq(environment))
        .order(feature_strategy_segments::segment_id.asc())
        .select((
            feature_strategy_segments::strategy_id,
            feature_strategy_segments::segment_id,
        ))
        .into_boxed();
    let mut strategy_query = feature_strategies::table
        .filter(feature_strategies::environment_name.eq(environment))
        .order((
            feature_strategies::feature_name.asc(),
            feature_strategies::sort_order.asc(),
            feature_strategies::id.asc(),
        ))
        .select(StrategyRow::as_select())
        .into_boxed();
    let mut dependencies_query = feature_dependencies::table
        .select(DependencyRow::as_select())
        .into_boxed();
    if let Some(names) = which.names {
        query = query.filter(features::name.eq_any(names));
        states_query = states_query.filter(feature_environments::feature_name.eq_any(names));
        links_query = links_query.filter(feature_strategies::feature_name.eq_any(names));
        strategy_query = strategy_query.filter(feature_strategies::feature_name.eq_any(names));
        dependencies_query = dependencies_query.filter(feature_dependencies::child.eq_any(names));
    }
    if !with_disabled {
        strategy_query = strategy_query.filter(feature_strategies::disabled.eq(false));
    }

    let states: HashMap<String, FeatureEnvironmentRow> = states_query
        .load(conn)?
        .into_iter()
        .map(|row| (row.feature_name.clone(), row))
        .collect();

    let mut segment_links: HashMap<String, Vec<i32>> = HashMap::new();
    let links: Vec<(String, i32)> = links_query.load(conn)?;
    for (strategy, segment) in links {
        segment_links.entry(strategy).or_default().push(segment);
    }

    // Rows are read one at a time (at 10,000 flags, holding them all took megabytes) and come
    // ordered by feature: each feature's strategies gather in a reused buffer, then move into a
    // list of exactly their number, which the compiled engine keeps.
    let mut strategies_by_feature: HashMap<String, Vec<flag_eval::Strategy>> = HashMap::new();
    let mut run: Vec<flag_eval::Strategy> = Vec::new();
    let mut run_feature: Option<String> = None;
    for row in strategy_query.load_iter::<StrategyRow, diesel::connection::DefaultLoadingMode>(conn)? {
        let row = row?;
        let segment_ids = segment_links.get(&row.id).map(Vec::as_slice).unwrap_or_default();
        let strategy = strategies::to_model(&row, segment_ids)?;
        if run_feature.as_deref() != Some(row.feature_name.as_str())
            && let Some(feature) = run_feature.replace(row.feature_name)
        {
            strategies_by_feature.insert(feature, exactly(&mut run));
        }
        run.push(strategy);
    }
    if let Some(feature) = run_feature {
        strategies_by_feature.insert(feature, exactly(&mut run));
    }

    let dependencies: HashMap<String, DependencyRow> = dependencies_query
        .load(conn)?
        .into_iter()
        .map(|row| (row.child.clone(), row))
        .collect();

    // Read last, one row at a time, once everything it is joined with is at hand.
    let mut features_out = Vec::new();
    for row in query.load_iter::<FeatureRow, diesel::connection::DefaultLoadingMode>(conn)? {
        let row = row?;
        let state = states.get(&row.name);
        let dependency = dependencies
            .get(&row.name)
            .map(|dependency| -> Result<Dependency, StoreError> {
                let variants = dependency.variants()?;
                Ok(Dependency {
                    feature: dependency.parent.clone(),
                    enabled: Some(dependency.enabled),
                    // As Unleash writes it: a list, empty when none were named, on an enabled
                    // parent; none on a disabled one.
                    variants: dependency.enabled.then_some(variants),
                })
            })
            .transpose()?;
        let feature = Feature {
            enabled: state.is_some_and(|state| state.enabled),
            variants: match state {
                Some(state) => state.variants()?,
                None => Vec::new(),
            },
            // Strategies added in an environment the project has not enabled are kept and shown,
            // as Unleash shows them; the feature is off there.
            strategies: strategies_by_feature
                .remove(row.name.as_str())
                .unwrap_or_default(),
            dependencies: dependency.into_iter().collect(),
            feature_type: Some(row.feature_type),
            description: row.description,
            project: Some(row.project_id),
            stale: Some(row.stale),
            impression_data: Some(row.impression_data),
            name: row.name,
        };
        features_out.push((
            State {
                archived: row.archived_at.is_some(),
                in_project: state.is_some(),
            },
            feature,
        ));
    }
    Ok(features_out)
}

/// Moves everything out of `buffer` into a list with no spare room, leaving `buffer` empty with
/// its room for the next use.
fn exactly<T>(buffer: &mut Vec<T>) -> Vec<T> {
    let mut exact = Vec::with_capacity(buffer.len());
    exact.append(buffer);
    exact
}
