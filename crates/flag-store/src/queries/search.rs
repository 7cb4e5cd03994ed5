//! What a flag search reads: every flag with what the search filters and shows of it, in a few
//! queries whatever the number of flags.

use std::collections::HashMap;

use chrono::NaiveDateTime;
use diesel::dsl::count_star;
use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{
    EnvironmentRow, FeatureEnvironmentRow, FeatureRow, FeatureTypeRow, LifecycleRow, TagRef, TagTypeRow,
    UserRow,
};
use crate::queries::{environments, feature_types, features, lifecycle, tags};
use crate::schema::{
    client_usage, feature_dependencies, feature_strategies, feature_strategy_segments, segments,
};

/// A flag's strategies in one environment: how many, and how many are enabled. A flag has
/// strategies there when it has any, disabled ones included, as Unleash's search says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StrategyCounts {
    /// All of them.
    pub total: usize,
    /// Those not disabled.
    pub enabled: usize,
}

impl StrategyCounts {
    /// Whether there are strategies, disabled ones included.
    pub fn any(&self) -> bool {
        self.total > 0
    }

    /// Whether some strategy is not disabled.
    pub fn any_enabled(&self) -> bool {
        self.enabled > 0
    }
}

/// Each flag's strategies per environment, counted in the database (at most two rows per flag
/// and environment, disabled strategies and the others, however many there are); only the
/// flags of `project` when one is named.
pub fn strategy_counts(
    conn: &mut DbConnection,
    project: Option<&str>,
) -> Result<HashMap<(String, String), StrategyCounts>, StoreError> {
    let mut query = feature_strategies::table
        .inner_join(crate::schema::features::table)
        .group_by((
            feature_strategies::feature_name,
            feature_strategies::environment_name,
            feature_strategies::disabled,
        ))
        .select((
            feature_strategies::feature_name,
            feature_strategies::environment_name,
            feature_strategies::disabled,
            count_star(),
        ))
        .into_boxed();
    if let Some(project) = project {
        query = query.filter(crate::schema::features::project_id.eq(project.to_owned()));
    }
    let mut strategies: HashMap<(String, String), StrategyCounts> = HashMap::new();
    for (feature, environment, disabled, count) in query.load::<(String, String, bool, i64)>(conn)? {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        let counts = strategies.entry((feature, environment)).or_default();
        counts.total = counts.total.saturating_add(count);
        if !disabled {
            counts.enabled = counts.enabled.saturating_add(count);
        }
    }
    Ok(strategies)
}

/// Everything a flag search filters on and shows.
#[derive(Debug, Default)]
pub struct Catalogue {
    /// Every flag, live and archived, by name.
    pub features: Vec<FeatureRow>,
    /// Each flag's rows in its environments.
    pub states: HashMap<String, Vec<FeatureEnvironmentRow>>,
    /// The environments.
    pub environments: Vec<EnvironmentRow>,
    /// Each flag's strategies, by environment.
    pub strategies: HashMap<(String, String), StrategyCounts>,
    /// The names of the segments each flag's strategies use.
    pub segments: HashMap<String, Vec<String>>,
    /// Each flag's tags.
    pub tags: HashMap<String, Vec<TagRef>>,
    /// The tag types, for their colours.
    pub tag_types: Vec<TagTypeRow>,
    /// Each flag's lifecycle stages.
    pub stages: HashMap<String, Vec<LifecycleRow>>,
    /// The flags that are parents, and those that are children.
    pub parents: Vec<String>,
    /// The flags that depend on another.
    pub children: Vec<String>,
    /// Evaluations since the time asked for, by flag and environment: `(yes, no)`.
    pub usage: HashMap<(String, String), (i64, i64)>,
    /// The feature types, for their lifetimes.
    pub types: Vec<FeatureTypeRow>,
    /// The users who created flags.
    pub creators: Vec<UserRow>,
}

/// Reads the catalogue, with usage since `since`.
pub fn catalogue(conn: &mut DbConnection, since: NaiveDateTime) -> Result<Catalogue, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let all = features::all(conn)?;
        let mut states: HashMap<String, Vec<FeatureEnvironmentRow>> = HashMap::new();
        for state in crate::schema::feature_environments::table
            .select(FeatureEnvironmentRow::as_select())
            .load::<FeatureEnvironmentRow>(conn)?
        {
            states.entry(state.feature_name.clone()).or_default().push(state);
        }
        let strategies = strategy_counts(conn, None)?;
        let mut segment_names: HashMap<String, Vec<String>> = HashMap::new();
        for (feature, name) in feature_strategy_segments::table
            .inner_join(feature_strategies::table)
            .inner_join(segments::table)
            .select((feature_strategies::feature_name, segments::name))
            .distinct()
            .order((feature_strategies::feature_name.asc(), segments::name.asc()))
            .load::<(String, String)>(conn)?
        {
            segment_names.entry(feature).or_default().push(name);
        }
        let mut tag_map: HashMap<String, Vec<TagRef>> = HashMap::new();
        for (feature, tag) in tags::of_all_features(conn)? {
            tag_map.entry(feature).or_default().push(tag);
        }
        let mut stages: HashMap<String, Vec<LifecycleRow>> = HashMap::new();
        for row in lifecycle::all(conn)? {
            stages.entry(row.feature_name.clone()).or_default().push(row);
        }
        let links: Vec<(String, String)> = feature_dependencies::table
            .select((feature_dependencies::parent, feature_dependencies::child))
            .load(conn)?;
        let mut usage: HashMap<(String, String), (i64, i64)> = HashMap::new();
        for (feature, environment, yes, no) in client_usage::table
            .filter(client_usage::hour.ge(since))
            .select((
                client_usage::feature_name,
                client_usage::environment,
                client_usage::yes,
                client_usage::no,
            ))
            .load::<(String, String, i64, i64)>(conn)?
        {
            let entry = usage.entry((feature, environment)).or_default();
            entry.0 += yes;
            entry.1 += no;
        }
        let mut creator_ids: Vec<i32> = all.iter().filter_map(|row| row.created_by_user_id).collect();
        creator_ids.sort_unstable();
        creator_ids.dedup();
        Ok(Catalogue {
            states,
            environments: environments::list(conn)?,
            strategies,
            segments: segment_names,
            tags: tag_map,
            tag_types: tags::types(conn)?,
            stages,
            parents: links.iter().map(|(parent, _)| parent.clone()).collect(),
            children: links.into_iter().map(|(_, child)| child).collect(),
            usage,
            types: feature_types::list(conn)?,
            creators: crate::queries::users::with_ids(conn, &creator_ids)?,
            features: all,
        })
    })
}
