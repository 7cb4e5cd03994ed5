//! Features: create, list, switch on and off in an environment.

use actix_web::web;
use flag_admin::catalogue::features;
use flag_admin::catalogue::features::types::{
    BulkSwitch, CloneFeature, CreateFeature, FeatureDetailOut, FeatureInEnvironmentOut, FeatureOut,
    FeatureQuery, FeatureTypeOut, FeatureTypesOut, FeaturesOut, PatchOperationSchema, SwitchQuery,
    UpdateFeature, UpdateLifetime, ValidateFeatureName,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
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
        (status = 404, description = "No such project", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<CreateFeature>,
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
        FeatureQuery,
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
    query: web::Query<FeatureQuery>,
) -> Result<web::Json<FeatureDetailOut>, ApiError> {
    Ok(web::Json(
        features::get(&state.app, &caller, path.into_inner(), query.into_inner()).await?,
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
        SwitchQuery,
    ),
    responses(
        (status = 200, description = "Switched on; no body"),
        (status = 400, description = "The flag is archived", body = ErrorBody),
        (status = 404, description = "No such feature or environment", body = ErrorBody),
    ),
)]
pub async fn on(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
    query: web::Query<SwitchQuery>,
) -> Result<Done, ApiError> {
    features::switch_with(&state.app, &caller, path.into_inner(), true, query.into_inner()).await?;
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
        SwitchQuery,
    ),
    responses(
        (status = 200, description = "Switched off; no body"),
        (status = 400, description = "The flag is archived", body = ErrorBody),
        (status = 404, description = "No such feature or environment", body = ErrorBody),
    ),
)]
pub async fn off(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
    query: web::Query<SwitchQuery>,
) -> Result<Done, ApiError> {
    features::switch_with(&state.app, &caller, path.into_inner(), false, query.into_inner()).await?;
    Ok(Done)
}

/// Updates a flag. Every field is set: one left out takes its default (no description,
/// `release`, not stale, no impression data, not archived), as in Unleash. A flag cannot be
/// renamed or moved to another project.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "Features",
    operation_id = "updateFeature",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    request_body = UpdateFeature,
    responses(
        (status = 200, description = "The flag", body = FeatureOut),
        (status = 400, description = "The body breaks the schema, or names another flag", body = ErrorBody),
        (status = 404, description = "No such flag in the project", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    ObjectBody(request): ObjectBody<UpdateFeature>,
) -> Result<web::Json<FeatureOut>, ApiError> {
    Ok(web::Json(
        features::update(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Changes a flag with a JSON Patch over `{name, description, type, project, stale, createdAt,
/// impressionData, archivedAt?, archived}`. The name, project and times cannot change; variants
/// have operations of their own, and a patch that touches them is refused (403,
/// `InvalidOperationError`).
#[utoipa::path(
    patch,
    path = "/api/admin/projects/{projectId}/features/{featureName}",
    tag = "Features",
    operation_id = "patchFeature",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    request_body = Vec<PatchOperationSchema>,
    responses(
        (status = 200, description = "The flag", body = FeatureOut),
        (status = 400, description = "The patch does not apply, or its result breaks the schema", body = ErrorBody),
        (status = 404, description = "No such flag in the project", body = ErrorBody),
    ),
)]
pub async fn patch(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    Body(operations): Body<json_patch::Patch>,
) -> Result<web::Json<FeatureOut>, ApiError> {
    Ok(web::Json(
        features::patch(&state.app, &caller, path.into_inner(), operations).await?,
    ))
}

/// Checks that a name could name a new flag: URL-friendly, and not taken by a live or an
/// archived flag.
#[utoipa::path(
    post,
    path = "/api/admin/features/validate",
    tag = "Features",
    operation_id = "validateFeature",
    request_body = ValidateFeatureName,
    responses(
        (status = 200, description = "It could; no body"),
        (status = 400, description = "The name is not URL-friendly", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn validate_name(
    state: web::Data<AppState>,
    _caller: Admitted,
    ObjectBody(request): ObjectBody<ValidateFeatureName>,
) -> Result<Done, ApiError> {
    features::validate_name(&state.app, request).await?;
    Ok(Done)
}

/// The feature types, with the days after which a flag of each is potentially stale.
#[utoipa::path(
    get,
    path = "/api/admin/feature-types",
    tag = "Features",
    operation_id = "getAllFeatureTypes",
    responses((status = 200, description = "The feature types", body = FeatureTypesOut)),
)]
pub async fn types(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<FeatureTypesOut>, ApiError> {
    Ok(web::Json(features::types(&state.app).await?))
}

/// Sets after how many days a flag of a type is potentially stale; `0` or `null` for never.
#[utoipa::path(
    put,
    path = "/api/admin/feature-types/{id}/lifetime",
    tag = "Features",
    operation_id = "updateFeatureTypeLifetime",
    params(("id" = String, Path, description = "The feature type, in any letter case")),
    request_body = UpdateLifetime,
    responses(
        (status = 200, description = "The feature type", body = FeatureTypeOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such feature type", body = ErrorBody),
    ),
)]
pub async fn set_lifetime(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateLifetime>,
) -> Result<web::Json<FeatureTypeOut>, ApiError> {
    Ok(web::Json(
        features::set_lifetime(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// A flag in one environment, with its strategies there.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}",
    tag = "Features",
    operation_id = "getFeatureEnvironment",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "The flag there", body = FeatureInEnvironmentOut),
        (status = 404, description = "No such flag, or not in that environment", body = ErrorBody),
    ),
)]
pub async fn environment(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
) -> Result<web::Json<FeatureInEnvironmentOut>, ApiError> {
    Ok(web::Json(
        features::environment(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// Switches several flags of a project on in an environment: all or none.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/on",
    tag = "Features",
    operation_id = "bulkToggleFeaturesEnvironmentOn",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("environment" = String, Path, description = "The environment"),
        SwitchQuery,
    ),
    request_body = BulkSwitch,
    responses(
        (status = 200, description = "Switched on; no body"),
        (status = 400, description = "The body breaks the schema, or a flag is archived", body = ErrorBody),
        (status = 404, description = "No such flag in the project, or environment", body = ErrorBody),
    ),
)]
pub async fn bulk_on(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    query: web::Query<SwitchQuery>,
    ObjectBody(request): ObjectBody<BulkSwitch>,
) -> Result<Done, ApiError> {
    features::switch_many(
        &state.app,
        &caller,
        path.into_inner(),
        request,
        true,
        query.into_inner(),
    )
    .await?;
    Ok(Done)
}

/// Switches several flags of a project off in an environment: all or none.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/bulk_features/environments/{environment}/off",
    tag = "Features",
    operation_id = "bulkToggleFeaturesEnvironmentOff",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("environment" = String, Path, description = "The environment"),
    ),
    request_body = BulkSwitch,
    responses(
        (status = 200, description = "Switched off; no body"),
        (status = 400, description = "The body breaks the schema, or a flag is archived", body = ErrorBody),
        (status = 404, description = "No such flag in the project, or environment", body = ErrorBody),
    ),
)]
pub async fn bulk_off(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    ObjectBody(request): ObjectBody<BulkSwitch>,
) -> Result<Done, ApiError> {
    features::switch_many(
        &state.app,
        &caller,
        path.into_inner(),
        request,
        false,
        SwitchQuery::default(),
    )
    .await?;
    Ok(Done)
}

/// The flags that could be a flag's parent: the live flags of its project without a parent of
/// their own.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{child}/parents",
    tag = "Dependencies",
    operation_id = "listParentOptions",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("child" = String, Path, description = "The flag"),
    ),
    responses((status = 200, description = "Their names, sorted; none for an unknown flag", body = Vec<String>)),
)]
pub async fn parent_options(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<Vec<String>>, ApiError> {
    let (_project, child) = path.into_inner();
    Ok(web::Json(features::parent_options(&state.app, child).await?))
}

/// The variant names of a flag, for a dependency on one of them.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/features/{parent}/parent-variants",
    tag = "Dependencies",
    operation_id = "listParentVariantOptions",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("parent" = String, Path, description = "The flag"),
    ),
    responses((status = 200, description = "Its variant names in any environment, sorted", body = Vec<String>)),
)]
pub async fn parent_variants(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<Vec<String>>, ApiError> {
    let (_project, parent) = path.into_inner();
    Ok(web::Json(features::parent_variants(&state.app, parent).await?))
}

/// Whether any flag of a project depends on another.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/dependencies",
    tag = "Dependencies",
    operation_id = "checkDependenciesExist",
    params(("projectId" = String, Path, description = "The project")),
    responses((status = 200, description = "Whether any does", body = bool, content_type = "application/json")),
)]
pub async fn has_dependencies(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<bool>, ApiError> {
    Ok(web::Json(
        features::has_dependencies(&state.app, path.into_inner()).await?,
    ))
}

/// Copies a live flag under a new name in the same project: its fields, its variants and
/// strategies in every environment (switched off there), and its parent.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/features/{featureName}/clone",
    tag = "Features",
    operation_id = "cloneFeature",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag to copy"),
    ),
    request_body = CloneFeature,
    responses(
        (status = 201, description = "The copy", body = FeatureOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such live flag in the project", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn clone(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    ObjectBody(request): ObjectBody<CloneFeature>,
) -> Result<Created<FeatureOut>, ApiError> {
    Ok(Created::new(
        features::clone(&state.app, &caller, path.into_inner(), request).await?,
    ))
}
