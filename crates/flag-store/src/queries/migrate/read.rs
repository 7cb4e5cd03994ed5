//! The store read as an [`Installation`], in a few queries per kind, whatever the number of flags.

use std::collections::{BTreeMap, HashMap};

use diesel::prelude::*;

use super::{
    Addon, ContextField, Dependency, Environment, Event, Flag, FlagEnvironment, Installation, Project,
    Segment, Strategy, StrategyType, Tag, TagType, Token, User,
};
use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{
    DependencyRow, EventRow, FeatureEnvironmentRow, FeatureRow, ProjectRow, RootRole, StrategyRow,
};
use crate::queries::{
    addons, api_tokens, context_fields, environments, from_json, projects, segments, strategies, tags, users,
};
use crate::schema::{
    events, feature_dependencies, feature_environments, feature_strategies, feature_strategy_segments,
    features, project_environments,
};

/// Everything the store holds, in one snapshot.
pub fn read(conn: &mut DbConnection) -> Result<Installation, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let segments = read_segments(conn)?;
        let segment_names: HashMap<i32, String> = segments
            .iter()
            .filter_map(|segment| Some((segment.id?, segment.name.clone())))
            .collect();
        Ok(Installation {
            environments: environments::list(conn)?
                .into_iter()
                .map(|row| Environment {
                    name: row.name,
                    environment_type: row.environment_type,
                    sort_order: row.sort_order,
                    enabled: row.enabled,
                })
                .collect(),
            projects: read_projects(conn)?,
            context_fields: context_fields::list(conn)?
                .into_iter()
                .map(|row| {
                    Ok(ContextField {
                        legal_values: row.legal_values()?,
                        name: row.name,
                        description: row.description,
                        stickiness: row.stickiness,
                        sort_order: row.sort_order,
                        created_at: Some(row.created_at),
                    })
                })
                .collect::<Result<_, StoreError>>()?,
            strategy_types: strategies::list_types(conn)?
                .into_iter()
                .map(|row| {
                    Ok(StrategyType {
                        parameters: row.parameters()?,
                        name: row.name,
                        title: row.title,
                        description: row.description,
                        built_in: row.built_in,
                        deprecated: row.deprecated,
                    })
                })
                .collect::<Result<_, StoreError>>()?,
            tag_types: tags::types(conn)?
                .into_iter()
                .map(|row| TagType {
                    name: row.name,
                    description: row.description,
                    icon: row.icon,
                    color: row.color,
                })
                .collect(),
            tags: tags::list(conn, None)?
                .into_iter()
                .map(|tag| Tag {
                    tag_type: tag.tag_type,
                    value: tag.value,
                })
                .collect(),
            flags: read_flags(conn, &segment_names)?,
            segments,
            addons: addons::list(conn)?
                .into_iter()
                .map(|addon| Addon {
                    id: Some(addon.id),
                    provider: addon.config.provider,
                    description: addon.config.description,
                    enabled: addon.config.enabled,
                    parameters: addon.config.parameters,
                    events: addon.config.events,
                    projects: addon.config.projects,
                    environments: addon.config.environments,
                })
                .collect(),
            tokens: api_tokens::list(conn)?
                .into_iter()
                .map(|row| Token {
                    name: row.token_name,
                    secret_hash: row.secret_hash,
                    token_type: row.token_type,
                    environment: row.environment,
                    projects: row.projects.into_vec(),
                    expires_at: row.expires_at,
                    created_at: Some(row.created_at),
                })
                .collect(),
            users: users::list(conn)?
                .into_iter()
                .map(|row| User {
                    id: Some(row.id),
                    name: row.name,
                    username: row.username,
                    email: row.email,
                    root_role: root_role(row.root_role),
                    password_hash: row.password_hash,
                    created_at: Some(row.created_at),
                    seen_at: row.seen_at,
                })
                .collect(),
            events: events::table
                .order(events::id.asc())
                .select(EventRow::as_select())
                .load(conn)?
                .into_iter()
                .map(|row| Event {
                    created_at: row.created_at,
                    event_type: row.event_type,
                    created_by: row.created_by,
                    created_by_user_id: row.created_by_user_id,
                    project: row.project,
                    environment: row.environment,
                    feature_name: row.feature_name,
                    data: row.data,
                    pre_data: row.pre_data,
                    tags: row.tags,
                })
                .collect(),
        })
    })
}

/// Users hold root roles only.
fn root_role(role: RootRole) -> RootRole {
    match role {
        RootRole::Owner | RootRole::Member => RootRole::Viewer,
        root => root,
    }
}

fn read_projects(conn: &mut DbConnection) -> Result<Vec<Project>, StoreError> {
    let mut enabled: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (project, environment) in project_environments::table
        .select((
            project_environments::project_id,
            project_environments::environment_name,
        ))
        .load::<(String, String)>(conn)?
    {
        enabled.entry(project).or_default().push(environment);
    }
    Ok(projects::list(conn)?
        .into_iter()
        .map(|row: ProjectRow| {
            let mut environments = enabled.remove(&row.id).unwrap_or_default();
            environments.sort();
            Project {
                id: row.id,
                name: row.name,
                description: row.description,
                created_at: Some(row.created_at),
                environments,
            }
        })
        .collect())
}

fn read_segments(conn: &mut DbConnection) -> Result<Vec<Segment>, StoreError> {
    segments::list(conn)?
        .into_iter()
        .map(|row| {
            Ok(Segment {
                constraints: row.constraints()?,
                id: Some(row.id),
                name: row.name,
                description: row.description,
                project: row.project_id,
                created_by: row.created_by,
                created_at: Some(row.created_at),
            })
        })
        .collect()
}

/// A strategy's parameters as strings, as Unleash's admin API shows them.
pub(super) fn parameters(row: &StrategyRow) -> Result<BTreeMap<String, String>, StoreError> {
    let values: BTreeMap<String, serde_json::Value> =
        from_json("strategy", &row.id, "parameters", &row.parameters)?;
    Ok(values
        .into_iter()
        .map(|(name, value)| (name, flag_eval::parameter_text(value)))
        .collect())
}

fn read_flags(
    conn: &mut DbConnection,
    segment_names: &HashMap<i32, String>,
) -> Result<Vec<Flag>, StoreError> {
    let rows: Vec<FeatureRow> = features::table
        .order(features::name.asc())
        .select(FeatureRow::as_select())
        .load(conn)?;
    let mut states: HashMap<String, Vec<FeatureEnvironmentRow>> = HashMap::new();
    for row in feature_environments::table
        .order((
            feature_environments::feature_name,
            feature_environments::environment_name,
        ))
        .select(FeatureEnvironmentRow::as_select())
        .load::<FeatureEnvironmentRow>(conn)?
    {
        states.entry(row.feature_name.clone()).or_default().push(row);
    }
    let mut strategy_segments: HashMap<String, Vec<String>> = HashMap::new();
    for (strategy, segment) in feature_strategy_segments::table
        .select((
            feature_strategy_segments::strategy_id,
            feature_strategy_segments::segment_id,
        ))
        .load::<(String, i32)>(conn)?
    {
        if let Some(name) = segment_names.get(&segment) {
            strategy_segments.entry(strategy).or_default().push(name.clone());
        }
    }
    let mut strategies: HashMap<(String, String), Vec<Strategy>> = HashMap::new();
    for row in feature_strategies::table
        .order((
            feature_strategies::feature_name,
            feature_strategies::environment_name,
            feature_strategies::sort_order,
            feature_strategies::created_at,
            feature_strategies::id,
        ))
        .select(StrategyRow::as_select())
        .load::<StrategyRow>(conn)?
    {
        let mut segments = strategy_segments.remove(&row.id).unwrap_or_default();
        segments.sort();
        let strategy = Strategy {
            parameters: parameters(&row)?,
            constraints: row.constraints()?,
            variants: row.variants()?,
            segments,
            id: row.id,
            name: row.strategy_name,
            title: row.title,
            disabled: row.disabled,
        };
        strategies
            .entry((row.feature_name, row.environment_name))
            .or_default()
            .push(strategy);
    }
    let mut flag_tags: HashMap<String, Vec<Tag>> = HashMap::new();
    for (feature, tag) in tags::of_all_features(conn)? {
        flag_tags.entry(feature).or_default().push(Tag {
            tag_type: tag.tag_type,
            value: tag.value,
        });
    }
    let mut parents: HashMap<String, DependencyRow> = feature_dependencies::table
        .select(DependencyRow::as_select())
        .load::<DependencyRow>(conn)?
        .into_iter()
        .map(|row| (row.child.clone(), row))
        .collect();
    rows.into_iter()
        .map(|row| {
            let environments = states
                .remove(&row.name)
                .unwrap_or_default()
                .into_iter()
                .map(|state| {
                    Ok(FlagEnvironment {
                        variants: state.variants()?,
                        strategies: strategies
                            .remove(&(row.name.clone(), state.environment_name.clone()))
                            .unwrap_or_default(),
                        environment: state.environment_name,
                        enabled: state.enabled,
                    })
                })
                .collect::<Result<_, StoreError>>()?;
            let mut tags = flag_tags.remove(&row.name).unwrap_or_default();
            tags.sort();
            let dependency = parents
                .remove(&row.name)
                .map(|parent| {
                    Ok::<_, StoreError>(Dependency {
                        variants: parent.variants()?,
                        parent: parent.parent,
                        enabled: parent.enabled,
                    })
                })
                .transpose()?;
            Ok(Flag {
                name: row.name,
                project: row.project_id,
                flag_type: row.feature_type,
                description: row.description,
                stale: row.stale,
                impression_data: row.impression_data,
                created_at: Some(row.created_at),
                created_by_user_id: row.created_by_user_id,
                archived_at: row.archived_at,
                tags,
                dependency,
                environments,
            })
        })
        .collect()
}
