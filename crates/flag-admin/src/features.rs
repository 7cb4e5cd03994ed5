//! Features: create, list, read, and switch on and off in an environment.

use std::collections::HashMap;

use flag_store::models::FeatureRow;
use flag_store::queries;

use crate::auth::Caller;
use crate::dto::features::{
    CreateFeature, FeatureDetailOut, FeatureEnvironmentOut, FeatureEnvironmentSummary, FeatureListItem,
    FeatureOut, FeaturesOut,
};
use crate::{AdminError, Ctx, db};

/// Creates a feature in `project`.
pub async fn create(
    ctx: &Ctx,
    caller: &Caller,
    project: String,
    request: CreateFeature,
) -> Result<FeatureOut, AdminError> {
    let row = FeatureRow {
        name: request.name.into_string(),
        project_id: project,
        feature_type: request.feature_type.as_str().to_owned(),
        description: request.description,
        impression_data: request.impression_data,
        stale: false,
        archived_at: None,
        created_at: crate::now(),
        created_by_user_id: Some(caller.actor().user_id),
    };
    let row = db::write_as(&ctx.store, caller, row, queries::features::create).await?;
    Ok(FeatureOut::from(row))
}

/// The features of `project`, each with its switch in the environments the caller may read.
pub async fn list(ctx: &Ctx, caller: &Caller, project: String) -> Result<FeaturesOut, AdminError> {
    let (rows, states) = db::run(&ctx.store, move |conn| {
        queries::projects::get(conn, &project)?;
        Ok((
            queries::features::list(conn, &project)?,
            queries::features::environments_of_project(conn, &project)?,
        ))
    })
    .await?;
    let mut by_feature: HashMap<String, Vec<FeatureEnvironmentSummary>> = HashMap::new();
    for state in states
        .into_iter()
        .filter(|state| caller.may_read(&state.environment_name))
    {
        by_feature
            .entry(state.feature_name)
            .or_default()
            .push(FeatureEnvironmentSummary {
                name: state.environment_name,
                enabled: state.enabled,
                last_seen_at: state.last_seen_at.map(crate::dto::iso),
            });
    }
    Ok(FeaturesOut {
        version: 1,
        features: rows
            .into_iter()
            .map(|row| FeatureListItem {
                environments: by_feature.remove(&row.name).unwrap_or_default(),
                feature: FeatureOut::from(row),
            })
            .collect(),
    })
}

/// A feature with its state, strategies and variants in each environment of its project that
/// the caller may read; three queries, whatever the number of environments.
pub async fn get(
    ctx: &Ctx,
    caller: &Caller,
    project: String,
    name: String,
) -> Result<FeatureDetailOut, AdminError> {
    let (row, states, mut strategies) = db::run(&ctx.store, move |conn| {
        let row = queries::features::get(conn, &project, &name)?;
        let states = queries::features::environments_of(conn, &name)?;
        let strategies = queries::strategies::by_environment(conn, &name)?;
        Ok((row, states, strategies))
    })
    .await?;
    let environments = states
        .into_iter()
        .filter(|state| caller.may_read(&state.environment_name))
        .map(|state| {
            Ok(FeatureEnvironmentOut {
                strategies: strategies.remove(&state.environment_name).unwrap_or_default(),
                variants: state.variants()?,
                last_seen_at: state.last_seen_at.map(crate::dto::iso),
                name: state.environment_name,
                enabled: state.enabled,
            })
        })
        .collect::<Result<_, AdminError>>()?;
    Ok(FeatureDetailOut {
        feature: FeatureOut::from(row),
        environments,
    })
}

/// Switches `feature` of `project` on or off in `environment`. Like Unleash, a feature with no
/// strategy there stays without one.
pub async fn switch(
    ctx: &Ctx,
    caller: &Caller,
    (project, feature, environment): (String, String, String),
    enabled: bool,
) -> Result<(), AdminError> {
    caller.require_in(&environment)?;
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::features::set_enabled(conn, &project, &feature, &environment, enabled, &actor, now)
    })
    .await
}
