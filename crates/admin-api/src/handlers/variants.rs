//! `PUT /api/admin/projects/{projectId}/features/{featureName}/variants-batch`, the
//! per-environment overwrite and JSON Patch, and reading variants back.

use actix_web::web;
use flag_admin::catalogue::features::types::PatchOperationSchema;
use flag_admin::catalogue::variants;
use flag_admin::catalogue::variants::types::{FeatureVariantsResponse, PushVariantsRequest, VariantSchema};
use serde_json::Value;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::state::AppState;

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
        (status = 404, description = "No such feature in the project, or no such environment", body = ErrorBody),
    ),
)]
pub async fn variants_batch(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    Body(body): Body<Value>,
) -> Result<web::Json<FeatureVariantsResponse>, ApiError> {
    let (project, feature) = path.into_inner();
    Ok(web::Json(
        variants::batch(&state.app, &caller, project, feature, body).await?,
    ))
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
        (status = 404, description = "No such feature in the project, or no such environment", body = ErrorBody),
    ),
)]
pub async fn environment_variants(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
) -> Result<web::Json<FeatureVariantsResponse>, ApiError> {
    Ok(web::Json(
        variants::get(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// Overwrite a feature's variants in one environment.
///
/// Environment variants are deprecated in favour of strategy variants: as in Unleash, only a
/// feature that already has variants in some environment takes them (403 otherwise).
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "Variants",
    operation_id = "overwriteEnvironmentFeatureVariants",
    params(
        ("projectId" = String, Path, description = "The project the feature belongs to"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
    ),
    request_body = Vec<VariantSchema>,
    responses(
        (status = 200, description = "The variants as stored: sorted by name, defaults filled in and weights normalised", body = FeatureVariantsResponse),
        (status = 400, description = "The body breaks the schema or a variant rule", body = ErrorBody),
        (status = 404, description = "No such feature in the project, or no such environment", body = ErrorBody),
    ),
)]
pub async fn overwrite_environment_variants(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
    Body(body): Body<Value>,
) -> Result<web::Json<FeatureVariantsResponse>, ApiError> {
    Ok(web::Json(
        variants::overwrite(&state.app, &caller, path.into_inner(), body).await?,
    ))
}

/// Change a feature's variants in one environment with a JSON Patch.
///
/// The patch applies to the variants as `GET` answers them, sorted by name. As in Unleash,
/// only a feature that already has variants in some environment takes them (403 otherwise).
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
    tag = "Variants",
    operation_id = "patchEnvironmentsFeatureVariants",
    params(
        ("projectId" = String, Path, description = "The project the feature belongs to"),
        ("featureName" = String, Path, description = "The feature"),
        ("environment" = String, Path, description = "The environment"),
    ),
    request_body = Vec<PatchOperationSchema>,
    responses(
        (status = 200, description = "The variants as stored: sorted by name, defaults filled in and weights normalised", body = FeatureVariantsResponse),
        (status = 400, description = "The patch does not apply, or its result breaks the schema or a variant rule", body = ErrorBody),
        (status = 404, description = "No such feature in the project, or no such environment", body = ErrorBody),
    ),
)]
pub async fn patch_environment_variants(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
    Body(operations): Body<json_patch::Patch>,
) -> Result<web::Json<FeatureVariantsResponse>, ApiError> {
    Ok(web::Json(
        variants::patch(&state.app, &caller, path.into_inner(), operations).await?,
    ))
}
