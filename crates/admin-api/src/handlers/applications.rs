//! The admin views of what SDKs reported: applications, their instances and overview, flag
//! usage, and unknown flag names. Each view first writes what this replica has aggregated, so
//! it shows every report the replica has taken.

use actix_web::web;
use flag_admin::delivery::applications;
use flag_admin::delivery::usage::types::{
    ApplicationOut, ApplicationsOut, ApplicationsQuery, FeatureUsageOut, InstancesOut, OutdatedSdksOut,
    OverviewOut, ProjectApplicationsOut, ProjectApplicationsQuery, RawQuery, RawUsageOut, UnknownFlagsOut,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

/// Applications that registered or reported usage.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/applications",
    tag = "Metrics",
    operation_id = "getApplications",
    params(ApplicationsQuery),
    responses(
        (status = 200, description = "The applications matching, sorted by name", body = ApplicationsOut),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
    query: web::Query<ApplicationsQuery>,
) -> Result<web::Json<ApplicationsOut>, ApiError> {
    Ok(web::Json(
        applications::list(&state.app, state.app.delivery(), query.into_inner()).await?,
    ))
}

/// One application: its instances and the flags it reported in the last 24 hours.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/applications/{appName}",
    tag = "Metrics",
    operation_id = "getApplication",
    params(("appName" = String, Path, description = "The application")),
    responses(
        (status = 200, description = "The application", body = ApplicationOut),
        (status = 404, description = "No SDK reported this application", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ApplicationOut>, ApiError> {
    Ok(web::Json(
        applications::get(&state.app, state.app.delivery(), path.into_inner()).await?,
    ))
}

/// An application at a glance: where it runs, with which SDKs, and what may be wrong.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/applications/{appName}/overview",
    tag = "Metrics",
    operation_id = "getApplicationOverview",
    params(("appName" = String, Path, description = "The application")),
    responses(
        (status = 200, description = "The overview", body = OverviewOut),
        (status = 404, description = "No SDK reported this application", body = ErrorBody),
    ),
)]
pub async fn overview(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<OverviewOut>, ApiError> {
    Ok(web::Json(
        applications::overview(&state.app, state.app.delivery(), path.into_inner()).await?,
    ))
}

/// The instances of an application seen in one environment in the last 24 hours.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/instances/{appName}/environment/{environment}",
    tag = "Metrics",
    operation_id = "getApplicationEnvironmentInstances",
    params(
        ("appName" = String, Path, description = "The application"),
        ("environment" = String, Path, description = "The environment"),
    ),
    responses(
        (status = 200, description = "The instances, newest report first; empty for an unknown application", body = InstancesOut),
    ),
)]
pub async fn instances(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<InstancesOut>, ApiError> {
    let (app_name, environment) = path.into_inner();
    Ok(web::Json(
        applications::instances(&state.app, state.app.delivery(), app_name, environment).await?,
    ))
}

/// A flag's usage in the last hour per environment, and the applications that used it.
#[utoipa::path(
    get,
    path = "/api/admin/client-metrics/features/{name}",
    tag = "Metrics",
    operation_id = "getFeatureUsageSummary",
    params(("name" = String, Path, description = "The flag")),
    responses(
        (status = 200, description = "Its usage; empty for a flag no SDK reported", body = FeatureUsageOut),
    ),
)]
pub async fn feature_usage(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<FeatureUsageOut>, ApiError> {
    Ok(web::Json(
        applications::feature_usage(&state.app, state.app.delivery(), path.into_inner()).await?,
    ))
}

/// A flag's hourly usage per application and environment, zero in hours without reports.
#[utoipa::path(
    get,
    path = "/api/admin/client-metrics/features/{name}/raw",
    tag = "Metrics",
    operation_id = "getRawFeatureMetrics",
    params(("name" = String, Path, description = "The flag"), RawQuery),
    responses(
        (status = 200, description = "Hourly usage, oldest first; empty for a flag no SDK reported", body = RawUsageOut),
    ),
)]
pub async fn raw_usage(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
    query: web::Query<RawQuery>,
) -> Result<web::Json<RawUsageOut>, ApiError> {
    Ok(web::Json(
        applications::raw_usage(
            &state.app,
            state.app.delivery(),
            path.into_inner(),
            query.into_inner(),
        )
        .await?,
    ))
}

/// Flag names SDKs asked for in the last 24 hours that no flag has.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/unknown-flags",
    tag = "Metrics",
    operation_id = "getUnknownFlags",
    responses(
        (status = 200, description = "The names, sorted", body = UnknownFlagsOut),
    ),
)]
pub async fn unknown_flags(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<UnknownFlagsOut>, ApiError> {
    Ok(web::Json(
        applications::unknown_flags(&state.app, state.app.delivery()).await?,
    ))
}

/// The outdated SDK versions in use, with the applications running them.
#[utoipa::path(
    get,
    path = "/api/admin/metrics/sdks/outdated",
    tag = "Metrics",
    operation_id = "getOutdatedSdks",
    responses((status = 200, description = "The outdated SDKs", body = OutdatedSdksOut)),
)]
pub async fn outdated_sdks(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<OutdatedSdksOut>, ApiError> {
    Ok(web::Json(applications::outdated_sdks(&state.app, None).await?))
}

/// The outdated SDK versions in use by applications of a project's flags.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/sdks/outdated",
    tag = "Metrics",
    operation_id = "getOutdatedProjectSdks",
    params(("projectId" = String, Path, description = "The project")),
    responses((status = 200, description = "The outdated SDKs", body = OutdatedSdksOut)),
)]
pub async fn outdated_project_sdks(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<OutdatedSdksOut>, ApiError> {
    Ok(web::Json(
        applications::outdated_sdks(&state.app, Some(path.into_inner())).await?,
    ))
}

/// The applications that used a project's flags.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/applications",
    tag = "Metrics",
    operation_id = "getProjectApplications",
    params(("projectId" = String, Path, description = "The project"), ProjectApplicationsQuery),
    responses(
        (status = 200, description = "A page of applications, and how many there are", body = ProjectApplicationsOut),
        (status = 400, description = "The sort order is malformed", body = ErrorBody),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn of_project(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
    query: web::Query<ProjectApplicationsQuery>,
) -> Result<web::Json<ProjectApplicationsOut>, ApiError> {
    Ok(web::Json(
        applications::of_project(&state.app, path.into_inner(), query.into_inner()).await?,
    ))
}
