//! `PUT /api/admin/projects/{projectId}/features/{featureName}/variants-batch` and reading
//! variants back.

use actix_web::web;
use flag_store::queries;
use serde_json::Value;

use crate::AppState;
use crate::auth::Principal;
use crate::domain::Permission;
use crate::dto::variants::{FeatureVariantsResponse, PushVariantsRequest, VariantsPush};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;

/// Variants' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(variants_batch, environment_variants))]
pub struct Api;

/// Overwrite a feature's variants in several environments, all or none.
///
/// Answers with the variants as sent, defaults filled in and weights normalised.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/variants-batch",
    tag = "Variants",
    operation_id = "overwriteFeatureVariantsOnEnvironments",
    params(
        ("projectId" = String, Path, description = "The project the feature belongs to"),
        ("featureName" = String, Path, description = "The feature"),
    ),
    request_body = PushVariantsRequest,
    responses(
        (status = 200, description = "The variants as sent, in the client's key order, with `weightType` and `stickiness` filled in and weights normalised", body = FeatureVariantsResponse),
        (status = 400, description = "The body breaks the schema or a variant rule, or names no environment", body = ErrorBody),
        (status = 403, description = "A Viewer, or a token limited to other environments", body = ErrorBody),
        (status = 404, description = "No such feature in the project, or no such environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn variants_batch(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String)>,
    Body(body): Body<Value>,
) -> Result<web::Json<FeatureVariantsResponse>, ApiError> {
    let (project, feature) = path.into_inner();
    let mut push = VariantsPush::parse(body)?;
    for environment in push.environments() {
        principal.require_write(Permission::UpdateFeatureEnvironmentVariants, Some(environment))?;
    }
    push.normalise()?;

    let actor = principal.actor().to_owned();
    let now = crate::now();
    let environments = push.environments().to_vec();
    let stored = push.variants().to_vec();
    crate::db::run(&state.store, move |conn| {
        queries::variants::set_variants_batch(conn, &project, &feature, &environments, &stored, &actor, now)
    })
    .await?;
    Ok(web::Json(push.into_answer()))
}

/// A feature's variants in one environment.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "Variants",
    operation_id = "getEnvironmentFeatureVariants",
    params(
        ("projectId" = String, Path, description = "The project the feature belongs to"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "The feature's variants in the environment, sorted by name", body = FeatureVariantsResponse),
        (status = 403, description = "A token limited to other environments", body = ErrorBody),
        (status = 404, description = "No such feature in the project, or no such environment", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn environment_variants(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<(String, String, String)>,
) -> Result<web::Json<FeatureVariantsResponse>, ApiError> {
    let (project, feature, environment) = path.into_inner();
    principal.require_read(Permission::ReadFeatureEnvironmentVariants, &environment)?;
    let variants = crate::db::run(&state.store, move |conn| {
        queries::variants::get(conn, &project, &feature, &environment)
    })
    .await?;
    Ok(web::Json(FeatureVariantsResponse::from(variants)))
}
