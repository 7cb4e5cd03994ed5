//! What SDKs, Edge and browsers report: registrations, usage counts and Edge's report about
//! itself. Every report passes the same checks, whatever route it came by (names and versions
//! at most 255 characters without control characters, headers included), and then goes to the
//! usage pipeline ([`crate::delivery::usage`]); nothing here touches the database.

pub mod types;

use std::net::IpAddr;

use chrono::NaiveDateTime;

use crate::AdminError;
use crate::delivery::Delivery;
use crate::delivery::reports::types::EdgeInstance;
use crate::delivery::usage::types::{BulkReport, MetricsReport, Registration, ReportLimits};
use crate::delivery::usage::{FlagCount, InstanceReport};
use crate::identity::auth::{Access, ClientAccess, FrontendAccess};
use crate::runtime::input::text_problem;

/// The environment usage is filed under: the token's, or `default` for a token of every
/// environment, as Unleash files it.
fn usage_environment(environment: Option<&str>) -> String {
    environment.unwrap_or("default").to_owned()
}

fn instance_id(id: Option<String>) -> String {
    id.filter(|id| !id.trim().is_empty())
        .unwrap_or_else(|| "default".into())
}

/// A report's counts, with the time they are filed at when received at `now`.
fn counts(report: MetricsReport, now: NaiveDateTime) -> Option<(NaiveDateTime, Vec<FlagCount>)> {
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
    Some((ReportLimits::filed_at(bucket.stop.0, now), counts))
}

/// Who may register an SDK instance: client and backend tokens.
pub const REGISTER: Access = Access::Client;

/// Registers a server-side SDK instance, reported from `address`.
pub fn register(
    delivery: &Delivery,
    access: ClientAccess,
    address: IpAddr,
    registration: Registration,
) -> Result<(), AdminError> {
    registration.check()?;
    let now = delivery.clock.now();
    delivery.usage.instance(
        InstanceReport {
            sdk_version: registration.sdk_version,
            client_ip: Some(address.to_string()),
            strategies: registration.strategies,
            started: Some(ReportLimits::started_at(registration.started.0, now)),
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
        now,
    )
}

/// Who may report an SDK's usage: client and backend tokens.
pub const METRICS: Access = Access::Client;

/// Takes a server-side SDK's usage counts, reported from `address`, filed under the token's
/// environment and the hour of the bucket's end (or of the receive time, when the sender's clock
/// is off: [`ReportLimits::filed_at`]). Counts for flags outside the token's projects are
/// dropped.
pub fn metrics(
    delivery: &Delivery,
    access: ClientAccess,
    address: IpAddr,
    report: MetricsReport,
) -> Result<(), AdminError> {
    report.check()?;
    let now = delivery.clock.now();
    let environment = usage_environment(access.environment.as_deref());
    let app_name = report.app_name.clone();
    delivery.usage.instance(
        InstanceReport {
            client_ip: Some(address.to_string()),
            ..InstanceReport::new(
                app_name.clone(),
                instance_id(report.instance_id.clone()),
                environment.clone(),
                access.projects.clone(),
                "backend",
            )
        },
        now,
    )?;
    if let Some((stop, counts)) = counts(report, now) {
        delivery
            .usage
            .count(&app_name, &environment, access.projects.as_deref(), stop, counts);
    }
    Ok(())
}

/// Who may report the usage of several SDKs at once: client and backend tokens.
pub const BULK: Access = Access::Client;

/// Takes Unleash Edge's report: the applications behind it and their counts. Counts for
/// another environment than the token's, or for flags outside its projects, are dropped.
pub fn bulk(delivery: &Delivery, access: ClientAccess, report: BulkReport) -> Result<(), AdminError> {
    report.check()?;
    let accepted = usage_environment(access.environment.as_deref());
    let now = delivery.clock.now();
    for application in report.applications {
        let sdk_type = if application.sdk_type.as_deref() == Some("frontend") {
            "frontend"
        } else {
            "backend"
        };
        delivery.usage.instance(
            InstanceReport {
                sdk_version: application.sdk_version,
                strategies: application.strategies,
                started: application
                    .started
                    .map(|started| ReportLimits::started_at(started.0, now)),
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
        delivery.usage.count(
            &metric.app_name,
            &metric.environment,
            access.projects.as_deref(),
            ReportLimits::filed_at(metric.timestamp.0, now),
            [count],
        );
    }
    Ok(())
}

/// Who may register a browser SDK: frontend tokens.
pub const FRONTEND_REGISTER: Access = Access::Frontend;

/// Checks a frontend SDK's registration, which is answered as Unleash answers it; frontend
/// instances are recorded from their metrics.
pub fn frontend_register(registration: &Registration) -> Result<(), AdminError> {
    registration.check()
}

/// Who may report a browser SDK's usage: frontend tokens.
pub const FRONTEND_METRICS: Access = Access::Frontend;

/// Takes a frontend SDK's usage counts, filed under the token's environment. The instance is
/// recorded when the report names it and the request says which SDK sent it (`sdk`, from the
/// `Unleash-Sdk` header), which is checked as a name in the body is.
pub fn frontend_metrics(
    delivery: &Delivery,
    access: FrontendAccess,
    sdk: Option<&str>,
    report: MetricsReport,
) -> Result<(), AdminError> {
    report.check()?;
    let now = delivery.clock.now();
    if let Some(sdk) = sdk {
        AdminError::check(text_problem("Unleash-Sdk", sdk).into_iter().collect())?;
    }
    if let (Some(instance), Some(sdk)) = (report.instance_id.clone(), sdk) {
        delivery.usage.instance(
            InstanceReport {
                sdk_version: Some(sdk.to_owned()),
                ..InstanceReport::new(
                    report.app_name.clone(),
                    instance_id(Some(instance)),
                    access.environment.clone(),
                    access.projects.clone(),
                    "frontend",
                )
            },
            now,
        )?;
    }
    let app_name = report.app_name.clone();
    if let Some((stop, counts)) = counts(report, now) {
        delivery.usage.count(
            &app_name,
            &access.environment,
            access.projects.as_deref(),
            stop,
            counts,
        );
    }
    Ok(())
}

/// Who may report an Edge instance: client and backend tokens.
pub const EDGE_INSTANCE: Access = Access::Client;

/// Records Edge's report about itself as an instance of its application in the token's
/// environment; its names follow the rule every report's do.
pub fn edge_instance(
    delivery: &Delivery,
    access: ClientAccess,
    instance: EdgeInstance,
) -> Result<(), AdminError> {
    let mut details: Vec<_> = [
        ("/identifier", instance.identifier.as_str()),
        ("/appName", instance.app_name.as_str()),
    ]
    .into_iter()
    .filter_map(|(path, text)| text_problem(path, text))
    .collect();
    if let Some(version) = &instance.edge_version {
        details.extend(text_problem("/edgeVersion", version));
    }
    AdminError::check(details)?;
    delivery.usage.instance(
        InstanceReport {
            sdk_version: instance
                .edge_version
                .map(|version| format!("unleash-edge:{version}")),
            ..InstanceReport::new(
                instance.app_name,
                instance.identifier,
                usage_environment(access.environment.as_deref()),
                access.projects,
                "backend",
            )
        },
        delivery.clock.now(),
    )
}
