//! Features: create, list, switch on and off in an environment.

use actix_web::web;
use flag_store::models::FeatureRow;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::Permission;
use crate::dto::features::{
    CreateFeature, FeatureDetailOut, FeatureEnvironmentOut, FeatureEnvironmentSummary, FeatureListItem,
    FeatureOut, FeaturesOut,
};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, Done};

/// The features' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(create, list, get, on, off))]
pub struct Api;

/// Creates a feature in a project.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features",
    tag = "Features",
    operation_id = "createFeature",
    params(("projectId" = String, Path, description = "The project")),
    request_body = CreateFeature,
    responses(
        (status = 201, description = "The feature", body = FeatureOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 403, description = "Not allowed, or a token limited to some environments", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
    Body(request): Body<CreateFeature>,
) -> Result<Created<FeatureOut>, ApiError> {
    principal.require_write(Permission::CreateFeature, None)?;
    let row = FeatureRow {
        name: request.name.into_string(),
        project_id: path.into_inner(),
        feature_type: request.feature_type.as_str().to_owned(),
        description: request.description,
        impression_data: request.impression_data,
        stale: false,
        archived_at: None,
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::features::create(conn, &row, &actor)
    })
    .await?;
    Ok(Created::new(FeatureOut::from(row)))
}

/// A project's features.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features",
    tag = "Features",
    operation_id = "getFeatures",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "The features", body = FeaturesOut),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<web::Json<FeaturesOut>, ApiError> {
    let project = path.into_inner();
    let (rows, states) = crate::db::run(&state.store, move |conn| {
        queries::projects::get(conn, &project)?;
        Ok((
            queries::features::list(conn, &project)?,
            queries::features::environments_of_project(conn, &project)?,
        ))
    })
    .await?;
    let mut by_feature: std::collections::HashMap<String, Vec<FeatureEnvironmentSummary>> =
        std::collections::HashMap::new();
    for state in states
        .into_iter()
        .filter(|state| principal.may_read(&state.environment_name))
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
    Ok(web::Json(FeaturesOut {
        version: 1,
        features: rows
            .into_iter()
            .map(|row| FeatureListItem {
                environments: by_feature.remove(&row.name).unwrap_or_default(),
                feature: FeatureOut::from(row),
            })
            .collect(),
    }))
}

/// A feature with its state, strategies and variants in each environment of its project that
/// the caller may read.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "Features",
    operation_id = "getFeature",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The feature"),
    ),
    responses(
        (status = 200, description = "The feature", body = FeatureDetailOut),
        (status = 404, description = "No such feature in the project", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
) -> Result<web::Json<FeatureDetailOut>, ApiError> {
    let (project, name) = path.into_inner();
    let detail = crate::db::run(&state.store, move |conn| {
        let row = queries::features::get(conn, &project, &name)?;
        let mut environments = Vec::new();
        let readable = queries::features::environments_of(conn, &name)?
            .into_iter()
            .filter(|state| principal.may_read(&state.environment_name));
        for state in readable {
            environments.push(FeatureEnvironmentOut {
                strategies: queries::strategies::list(conn, &name, &state.environment_name)?,
                variants: state.variants()?,
                last_seen_at: state.last_seen_at.map(crate::dto::iso),
                name: state.environment_name,
                enabled: state.enabled,
            });
        }
        Ok(FeatureDetailOut {
            feature: FeatureOut::from(row),
            environments,
        })
    })
    .await?;
    Ok(web::Json(detail))
}

/// Switches a feature on in an environment. Like Unleash, a feature with no strategy there
/// stays without one.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on",
    tag = "Features",
    operation_id = "toggleFeatureEnvironmentOn",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "Switched on; no body"),
        (status = 403, description = "Not allowed in this environment", body = ErrorBody),
        (status = 404, description = "No such feature or environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn on(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
) -> Result<Done, ApiError> {
    switch(&state, &principal, path.into_inner(), true).await
}

/// Switches a feature off in an environment.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
    tag = "Features",
    operation_id = "toggleFeatureEnvironmentOff",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "Switched off; no body"),
        (status = 403, description = "Not allowed in this environment", body = ErrorBody),
        (status = 404, description = "No such feature or environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn off(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
) -> Result<Done, ApiError> {
    switch(&state, &principal, path.into_inner(), false).await
}

async fn switch(
    state: &AppState,
    principal: &Principal,
    (project, feature, environment): (String, String, String),
    enabled: bool,
) -> Result<Done, ApiError> {
    principal.require_write(Permission::UpdateFeatureEnvironment, Some(&environment))?;
    let actor = principal.actor().to_owned();
    let now = crate::now();
    crate::db::run(&state.store, move |conn| {
        queries::features::set_enabled(conn, &project, &feature, &environment, enabled, &actor, now)
    })
    .await?;
    Ok(Done)
}
