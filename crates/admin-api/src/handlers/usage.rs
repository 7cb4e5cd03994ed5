//! What SDKs register and report. Each handler checks the report and adds it to the in-memory
//! aggregate ([`crate::usage`]); nothing here touches the database.

use actix_web::{HttpRequest, web};

use crate::AppState;
use crate::auth::{ClientAccess, FrontendAccess};
use crate::dto::usage::{BulkReport, MetricsReport, Registration};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::{Accepted, Text};
use crate::usage::{FlagCount, InstanceReport};

/// The SDK reporting operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(register, metrics, bulk, frontend_register, frontend_metrics))]
pub struct Api;

/// The environment usage is filed under: the token's, or `default` for a token of every
/// environment, as Unleash files it.
fn usage_environment(environment: Option<&str>) -> String {
    environment.unwrap_or("default").to_owned()
}

fn instance_id(id: Option<String>) -> String {
    id.filter(|id| !id.trim().is_empty())
        .unwrap_or_else(|| "default".into())
}

fn client_ip(request: &HttpRequest) -> Option<String> {
    Some(crate::rate_limit::client_address(request).to_string())
}

fn counts(report: MetricsReport) -> Option<(chrono::NaiveDateTime, Vec<FlagCount>)> {
    let bucket = report.bucket?;
    let counts = bucket
        .toggles
        .into_iter()
        .map(|(feature_name, counts)| FlagCount {
            feature_name,
            yes: i64::from(counts.yes),
            no: i64::from(counts.no),
            variants: counts
                .variants
                .unwrap_or_default()
                .into_iter()
                .map(|(name, n)| (name, i64::from(n)))
                .collect(),
        })
        .collect();
    Some((bucket.stop.0, counts))
}

/// Registers an SDK instance.
#[utoipa::path(
    post,
    path = "/api/client/register",
    tag = "Client",
    operation_id = "registerClientApplication",
    request_body = Registration,
    responses(
        (status = 202, description = "Registered; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "An admin or frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn register(
    state: web::Data<AppState>,
    access: ClientAccess,
    request: HttpRequest,
    Body(registration): Body<Registration>,
) -> Result<Accepted, ApiError> {
    registration.check()?;
    state.usage.instance(
        InstanceReport {
            sdk_version: registration.sdk_version,
            client_ip: client_ip(&request),
            strategies: registration.strategies,
            started: Some(registration.started.0),
            #[expect(
                clippy::cast_possible_truncation,
                reason = "checked finite and not negative; saturates"
            )]
            interval_ms: Some(registration.interval as i64),
            ..InstanceReport::new(
                registration.app_name,
                instance_id(registration.instance_id),
                usage_environment(access.environment.as_deref()),
                access.projects,
                "backend",
            )
        },
        crate::now(),
    )?;
    Ok(Accepted)
}

/// Takes an SDK's usage counts, filed under the token's environment and the hour of the
/// bucket's end. Counts for flags outside the token's projects are dropped.
#[utoipa::path(
    post,
    path = "/api/client/metrics",
    tag = "Client",
    operation_id = "registerClientMetrics",
    request_body = MetricsReport,
    responses(
        (status = 202, description = "Taken; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "An admin or frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn metrics(
    state: web::Data<AppState>,
    access: ClientAccess,
    request: HttpRequest,
    Body(report): Body<MetricsReport>,
) -> Result<Accepted, ApiError> {
    report.check()?;
    let environment = usage_environment(access.environment.as_deref());
    let app_name = report.app_name.clone();
    state.usage.instance(
        InstanceReport {
            client_ip: client_ip(&request),
            ..InstanceReport::new(
                app_name.clone(),
                instance_id(report.instance_id.clone()),
                environment.clone(),
                access.projects.clone(),
                "backend",
            )
        },
        crate::now(),
    )?;
    if let Some((stop, counts)) = counts(report) {
        state
            .usage
            .count(&app_name, &environment, access.projects.as_deref(), stop, counts);
    }
    Ok(Accepted)
}

/// Takes Unleash Edge's report: the applications behind it and their counts. Counts for
/// another environment than the token's, or for flags outside its projects, are dropped.
#[utoipa::path(
    post,
    path = "/api/client/metrics/bulk",
    tag = "Client",
    operation_id = "clientBulkMetrics",
    request_body = BulkReport,
    responses(
        (status = 202, description = "Taken; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "An admin or frontend token", body = ErrorBody),
        (status = 413, description = "The body is larger than the limit", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn bulk(
    state: web::Data<AppState>,
    access: ClientAccess,
    Body(report): Body<BulkReport>,
) -> Result<Accepted, ApiError> {
    report.check()?;
    let accepted = usage_environment(access.environment.as_deref());
    let now = crate::now();
    for application in report.applications {
        let sdk_type = if application.sdk_type.as_deref() == Some("frontend") {
            "frontend"
        } else {
            "backend"
        };
        state.usage.instance(
            InstanceReport {
                sdk_version: application.sdk_version,
                strategies: application.strategies,
                started: application.started.map(|started| started.0),
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "saturates; a negative interval is dropped"
                )]
                interval_ms: application
                    .interval
                    .filter(|interval| interval.is_finite() && *interval >= 0.0)
                    .map(|interval| interval as i64),
                ..InstanceReport::new(
                    application.app_name,
                    instance_id(Some(application.instance_id)),
                    application.environment,
                    access.projects.clone(),
                    sdk_type,
                )
            },
            now,
        )?;
    }
    for metric in report.metrics {
        if metric.environment != accepted {
            continue;
        }
        let count = FlagCount {
            feature_name: metric.feature_name,
            yes: i64::from(metric.yes),
            no: i64::from(metric.no),
            variants: metric
                .variants
                .unwrap_or_default()
                .into_iter()
                .map(|(name, n)| (name, i64::from(n)))
                .collect(),
        };
        state.usage.count(
            &metric.app_name,
            &metric.environment,
            access.projects.as_deref(),
            metric.timestamp.0,
            [count],
        );
    }
    Ok(Accepted)
}

/// A frontend SDK's registration: checked and answered as Unleash answers it; frontend
/// instances are recorded from their metrics.
#[utoipa::path(
    post,
    path = "/api/frontend/client/register",
    tag = "Frontend API",
    operation_id = "registerFrontendClient",
    request_body = Registration,
    responses(
        (status = 200, description = "Taken; the body is `OK`", body = String, content_type = "text/plain"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "Not a frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn frontend_register(
    _access: FrontendAccess,
    Body(registration): Body<Registration>,
) -> Result<Text, ApiError> {
    registration.check()?;
    Ok(Text::new("text/plain; charset=utf-8", "OK".into()))
}

/// A frontend SDK's usage counts, filed under the token's environment. The instance is
/// recorded when the report names it and the request carries an `Unleash-Sdk` header.
#[utoipa::path(
    post,
    path = "/api/frontend/client/metrics",
    tag = "Frontend API",
    operation_id = "registerFrontendClientMetrics",
    request_body = MetricsReport,
    responses(
        (status = 200, description = "Taken; the body is `OK`", body = String, content_type = "text/plain"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "Not a frontend token", body = ErrorBody),
    ),
    security(("apiKey" = []))
)]
pub async fn frontend_metrics(
    state: web::Data<AppState>,
    access: FrontendAccess,
    request: HttpRequest,
    Body(report): Body<MetricsReport>,
) -> Result<Text, ApiError> {
    report.check()?;
    let sdk = request
        .headers()
        .get("Unleash-Sdk")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    if let (Some(instance), Some(sdk)) = (report.instance_id.clone(), sdk) {
        state.usage.instance(
            InstanceReport {
                sdk_version: Some(sdk),
                ..InstanceReport::new(
                    report.app_name.clone(),
                    instance_id(Some(instance)),
                    access.environment.clone(),
                    access.projects.clone(),
                    "frontend",
                )
            },
            crate::now(),
        )?;
    }
    let app_name = report.app_name.clone();
    if let Some((stop, counts)) = counts(report) {
        state.usage.count(
            &app_name,
            &access.environment,
            access.projects.as_deref(),
            stop,
            counts,
        );
    }
    Ok(Text::new("text/plain; charset=utf-8", "OK".into()))
}
