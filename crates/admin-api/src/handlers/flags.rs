//! Features: create, list, switch on and off in an environment.

use actix_web::web;
use flag_admin::dto::features::{CreateFeature, FeatureDetailOut, FeatureOut, FeaturesOut};
use flag_admin::features;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Created, Done};
use crate::state::AppState;

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
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    Body(request): Body<CreateFeature>,
) -> Result<Created<FeatureOut>, ApiError> {
    Ok(Created::new(
        features::create(&state.app, &caller, path.into_inner(), request).await?,
    ))
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
)]
pub async fn list(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<FeaturesOut>, ApiError> {
    Ok(web::Json(
        features::list(&state.app, &caller, path.into_inner()).await?,
    ))
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
)]
pub async fn get(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<FeatureDetailOut>, ApiError> {
    let (project, name) = path.into_inner();
    Ok(web::Json(
        features::get(&state.app, &caller, project, name).await?,
    ))
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
)]
pub async fn on(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
) -> Result<Done, ApiError> {
    features::switch(&state.app, &caller, path.into_inner(), true).await?;
    Ok(Done)
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
)]
pub async fn off(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
) -> Result<Done, ApiError> {
    features::switch(&state.app, &caller, path.into_inner(), false).await?;
    Ok(Done)
}
