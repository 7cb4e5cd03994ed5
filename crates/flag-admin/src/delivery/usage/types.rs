//! What SDKs register and report (`/api/client/register`, `/api/client/metrics`, Edge's
//! `/api/client/metrics/bulk`, the frontend SDKs' `/api/frontend/client/*`), and the admin
//! views of it (`/api/admin/metrics/*`, `/api/admin/client-metrics/*`).

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize, de};
use utoipa::{IntoParams, ToSchema};

use crate::runtime::error::{AdminError, Detail};
use crate::{runtime::input::pointer_segment, runtime::input::text_problem};

/// The bounds every report is held to, whatever route it arrives on. A report past one is
/// refused with a 400 naming the field; none is ever partly taken.
#[derive(Debug, Clone, Copy)]
pub struct ReportLimits;

impl ReportLimits {
    /// Most strategies a registration (or an application in Edge's report) names.
    pub const STRATEGIES: usize = 100;
    /// Most flags in one metrics bucket.
    pub const FLAGS: usize = 10_000;
    /// Most variants counted for one flag in one report.
    pub const VARIANTS: usize = 100;
    /// Most applications in one Edge report.
    pub const APPLICATIONS: usize = 1_000;
    /// Most counts in one Edge report.
    pub const METRICS: usize = 10_000;
    /// How far a report's times may be off the server's clock and still be believed: the
    /// store's own bound, past which it prunes rows as lying ahead.
    pub const SKEW: chrono::TimeDelta = flag_store::queries::client_metrics::FUTURE_SKEW;

    /// The time a count reported for `time` is filed at, received at `now`: the report's own
    /// time when it is at most [`Self::SKEW`] ahead of the server's clock and no earlier than
    /// the hour before the current one; otherwise the server's receive time. A browser or
    /// server whose clock is off so keeps its usage (counted when it arrives, as a live
    /// report is) instead of losing it, and a bucket dated in year 9999 counts now, never as
    /// a future that stays recent.
    pub fn filed_at(time: NaiveDateTime, now: NaiveDateTime) -> NaiveDateTime {
        let previous_hour = chrono::DurationRound::duration_trunc(now, chrono::TimeDelta::hours(1))
            .unwrap_or(now)
            - chrono::TimeDelta::hours(1);
        if time > now + Self::SKEW || time < previous_hour {
            now
        } else {
            time
        }
    }

    /// When an SDK started, as recorded at `now`: its own word, unless that is more than
    /// [`Self::SKEW`] ahead of the server's clock, when it is the receive time.
    pub fn started_at(started: NaiveDateTime, now: NaiveDateTime) -> NaiveDateTime {
        if started > now + Self::SKEW { now } else { started }
    }
}

/// A problem when `count` items at `path` are more than `most`.
fn count_problem(path: &str, count: usize, most: usize) -> Option<Detail> {
    (count > most).then(|| {
        Detail::at(
            path,
            format!("{path} has {count} items; at most {most} are taken"),
        )
    })
}

/// A problem when a bucket ends before it starts.
fn reversed_problem(bucket: &Bucket) -> Option<Detail> {
    (bucket.start.0 > bucket.stop.0).then(|| {
        Detail::at(
            "/bucket/stop",
            "/bucket/stop is before /bucket/start: a bucket ends after it starts",
        )
    })
}

/// The problems of names a report gives: each at most 255 characters, without control
/// characters, and not empty.
fn name_problems<'a>(names: impl IntoIterator<Item = (String, &'a str)>) -> Vec<Detail> {
    names
        .into_iter()
        .filter_map(|(path, name)| text_problem(&path, name))
        .collect()
}

/// The problems of a bucket's flags: their number, and their flag and variant names, each
/// named by a JSON Pointer in which a name is one segment, dots and slashes included.
fn toggle_problems(toggles: &BTreeMap<String, ToggleCounts>, at: &str) -> Vec<Detail> {
    let mut details: Vec<Detail> = count_problem(at, toggles.len(), ReportLimits::FLAGS)
        .into_iter()
        .collect();
    for (name, counts) in toggles {
        let path = format!("{at}/{}", pointer_segment(name));
        details.extend(text_problem(&path, name));
        details.extend(variant_problems(
            counts.variants.as_ref(),
            &format!("{path}/variants"),
        ));
    }
    details
}

/// The problems of one flag's variant counts: their number and their names.
fn variant_problems(variants: Option<&BTreeMap<String, u32>>, at: &str) -> Vec<Detail> {
    let Some(variants) = variants else {
        return Vec::new();
    };
    let mut details: Vec<Detail> = count_problem(at, variants.len(), ReportLimits::VARIANTS)
        .into_iter()
        .collect();
    for variant in variants.keys() {
        details.extend(text_problem(
            &format!("{at}/{}", pointer_segment(variant)),
            variant,
        ));
    }
    details
}

/// A time as SDKs send it: an RFC 3339 string or milliseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ToSchema)]
#[schema(value_type = String, format = DateTime)]
pub struct SdkTime(pub NaiveDateTime);

impl<'de> Deserialize<'de> for SdkTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Millis(i64),
        }
        let time = match Raw::deserialize(deserializer)? {
            Raw::Text(text) => flag_eval::parse_time_strict(&text).ok_or_else(|| {
                de::Error::custom(format!("{text:?} is not an RFC 3339 date-time with a time zone"))
            })?,
            Raw::Millis(millis) => DateTime::<Utc>::from_timestamp_millis(millis)
                .ok_or_else(|| de::Error::custom(format!("{millis} is not a time in milliseconds")))?,
        };
        // Years both backends store, and JavaScript's dates reach.
        if !(1..=9999).contains(&chrono::Datelike::year(&time)) {
            return Err(de::Error::custom(format!(
                "{time} is outside the years 1 to 9999"
            )));
        }
        Ok(Self(time.naive_utc()))
    }
}

/// `POST /api/client/register` (Unleash's `clientApplicationSchema`); fields Unleash does not
/// store are accepted and ignored.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    /// The application.
    pub app_name: String,
    /// The instance; `default` when absent or empty.
    #[serde(default)]
    pub instance_id: Option<String>,
    /// `unleash-node-sdk:6.12.1` and the like.
    #[serde(default)]
    pub sdk_version: Option<String>,
    /// The strategies the SDK implements.
    pub strategies: Vec<String>,
    /// When the SDK started.
    pub started: SdkTime,
    /// The SDK's poll interval in milliseconds.
    pub interval: f64,
}

impl Registration {
    /// 400 unless `appName` is set, every name is text of at most 255 characters, it names at
    /// most [`ReportLimits::STRATEGIES`] strategies, and `interval` is a duration. A start
    /// ahead of the server's clock is taken ([`ReportLimits::started_at`]).
    pub fn check(&self) -> Result<(), AdminError> {
        let mut details = name_problems(
            reporter_names(&self.app_name, self.instance_id.as_deref())
                .chain(
                    self.sdk_version
                        .as_deref()
                        .map(|version| ("/sdkVersion".to_owned(), version)),
                )
                .chain(
                    self.strategies
                        .iter()
                        .enumerate()
                        .map(|(index, name)| (format!("/strategies/{index}"), name.as_str())),
                ),
        );
        if !(self.interval.is_finite() && self.interval >= 0.0) {
            details.push(Detail::at(
                "/interval",
                "/interval must be a number of milliseconds, 0 or more",
            ));
        }
        details.extend(count_problem(
            "/strategies",
            self.strategies.len(),
            ReportLimits::STRATEGIES,
        ));
        AdminError::check(details)
    }
}

/// One flag's counts in a metrics bucket.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ToggleCounts {
    /// Evaluations that were on.
    #[serde(default)]
    pub yes: u32,
    /// Evaluations that were off.
    #[serde(default)]
    pub no: u32,
    /// Counts by variant name.
    #[serde(default)]
    pub variants: Option<BTreeMap<String, u32>>,
}

/// The window a report covers and its counts.
#[derive(Debug, Deserialize, ToSchema)]
pub struct Bucket {
    /// Its start.
    pub start: SdkTime,
    /// Its end; the counts are filed under the hour it falls in.
    pub stop: SdkTime,
    /// Counts by flag name.
    pub toggles: BTreeMap<String, ToggleCounts>,
}

/// `POST /api/client/metrics` (Unleash's `clientMetricsSchema`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricsReport {
    /// The application.
    pub app_name: String,
    /// The instance; `default` when absent or empty.
    #[serde(default)]
    pub instance_id: Option<String>,
    /// The counts; a report without them only marks the instance as seen.
    #[serde(default)]
    pub bucket: Option<Bucket>,
}

/// The names every report carries, each with where it stands: the application, and the
/// instance when one is given.
fn reporter_names<'a>(
    app_name: &'a str,
    instance_id: Option<&'a str>,
) -> impl Iterator<Item = (String, &'a str)> {
    [("/appName".to_owned(), app_name)].into_iter().chain(
        instance_id
            .filter(|id| !id.is_empty())
            .map(|id| ("/instanceId".to_owned(), id)),
    )
}

impl MetricsReport {
    /// 400 unless `appName` is set, every name is text of at most 255 characters, the bucket
    /// holds at most [`ReportLimits::FLAGS`] flags of at most [`ReportLimits::VARIANTS`]
    /// variants each, and it does not end before it starts. Times off the server's clock are
    /// taken and filed at the receive time ([`ReportLimits::filed_at`]).
    pub fn check(&self) -> Result<(), AdminError> {
        let mut details = name_problems(reporter_names(&self.app_name, self.instance_id.as_deref()));
        if let Some(bucket) = &self.bucket {
            details.extend(toggle_problems(&bucket.toggles, "/bucket/toggles"));
            details.extend(reversed_problem(bucket));
        }
        AdminError::check(details)
    }
}

/// An application in Edge's bulk report (Unleash's `bulkRegistrationSchema`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkApplication {
    /// The application.
    pub app_name: String,
    /// The instance.
    pub instance_id: String,
    /// The environment it runs in.
    pub environment: String,
    /// `unleash-node-sdk:6.12.1` and the like.
    #[serde(default)]
    pub sdk_version: Option<String>,
    /// `backend` or `frontend`.
    #[serde(default)]
    pub sdk_type: Option<String>,
    /// The strategies it implements.
    #[serde(default)]
    pub strategies: Vec<String>,
    /// When it started.
    #[serde(default)]
    pub started: Option<SdkTime>,
    /// Its poll interval.
    #[serde(default)]
    pub interval: Option<f64>,
}

/// A flag's counts in Edge's bulk report (Unleash's `clientMetricsEnvSchema`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkMetric {
    /// The flag.
    pub feature_name: String,
    /// The application.
    pub app_name: String,
    /// The environment; counts for another environment than the token's are dropped.
    pub environment: String,
    /// The start of the hour they belong to.
    pub timestamp: SdkTime,
    /// Evaluations that were on.
    #[serde(default)]
    pub yes: u32,
    /// Evaluations that were off.
    #[serde(default)]
    pub no: u32,
    /// Counts by variant name.
    #[serde(default)]
    pub variants: Option<BTreeMap<String, u32>>,
}

/// `POST /api/client/metrics/bulk` (Unleash's `bulkMetricsSchema`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BulkReport {
    /// Applications Edge has seen.
    pub applications: Vec<BulkApplication>,
    /// Their counts.
    pub metrics: Vec<BulkMetric>,
}

impl BulkReport {
    /// 400 unless every name is text of at most 255 characters, it holds at most
    /// [`ReportLimits::APPLICATIONS`] applications of at most [`ReportLimits::STRATEGIES`]
    /// strategies and [`ReportLimits::METRICS`] counts of at most [`ReportLimits::VARIANTS`]
    /// variants. Times off the server's clock are taken and filed at the receive time
    /// ([`ReportLimits::filed_at`]).
    pub fn check(&self) -> Result<(), AdminError> {
        let mut details: Vec<Detail> = count_problem(
            "/applications",
            self.applications.len(),
            ReportLimits::APPLICATIONS,
        )
        .into_iter()
        .chain(count_problem(
            "/metrics",
            self.metrics.len(),
            ReportLimits::METRICS,
        ))
        .collect();
        for (index, application) in self.applications.iter().enumerate() {
            let at = format!("/applications/{index}");
            details.extend(count_problem(
                &format!("{at}/strategies"),
                application.strategies.len(),
                ReportLimits::STRATEGIES,
            ));
        }
        for (index, metric) in self.metrics.iter().enumerate() {
            let at = format!("/metrics/{index}");
            details.extend(variant_problems(
                metric.variants.as_ref(),
                &format!("{at}/variants"),
            ));
        }
        // Past the counts, the names are not worth reading one by one.
        if !details.is_empty() {
            return AdminError::check(details);
        }
        let mut names = Vec::new();
        for (index, application) in self.applications.iter().enumerate() {
            let at = format!("/applications/{index}");
            names.push((format!("{at}/appName"), application.app_name.as_str()));
            names.push((format!("{at}/instanceId"), application.instance_id.as_str()));
            names.push((format!("{at}/environment"), application.environment.as_str()));
            if let Some(version) = &application.sdk_version {
                names.push((format!("{at}/sdkVersion"), version.as_str()));
            }
            for (position, strategy) in application.strategies.iter().enumerate() {
                names.push((format!("{at}/strategies/{position}"), strategy.as_str()));
            }
        }
        for (index, metric) in self.metrics.iter().enumerate() {
            let at = format!("/metrics/{index}");
            names.push((format!("{at}/featureName"), metric.feature_name.as_str()));
            names.push((format!("{at}/appName"), metric.app_name.as_str()));
            names.push((format!("{at}/environment"), metric.environment.as_str()));
        }
        AdminError::check(name_problems(names))
    }
}

/// Query string of `GET /api/admin/metrics/applications`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ApplicationsQuery {
    /// Comma-separated terms; an application matches when its name contains one.
    #[serde(default)]
    pub query: Option<String>,
    /// Applications to skip; 0 when absent or not a number.
    #[serde(default)]
    pub offset: Option<String>,
    /// Most applications to list, 1 to 1,000; 1,000 when absent or out of range.
    #[serde(default)]
    pub limit: Option<String>,
    /// Accepted and ignored, as Unleash ignores it: applications are sorted by name.
    #[serde(default)]
    pub sort_by: Option<String>,
    /// `asc` (the default) or `desc`.
    #[serde(default)]
    pub sort_order: Option<String>,
}

/// Query string of `GET /api/admin/client-metrics/features/{name}/raw`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RawQuery {
    /// Hours to cover, 1 to 48; 24 when absent or out of range.
    #[serde(default)]
    pub hours_back: Option<String>,
}

/// Where an application is used.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApplicationUsage {
    /// A project its tokens could see, `*` for all.
    pub project: String,
    /// Environments it reported from.
    pub environments: Vec<String>,
}

/// An application in the list (Unleash's `applicationSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationItem {
    /// Its name.
    pub app_name: String,
    /// The SDK of its latest instance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sdk_version: Option<String>,
    /// First report.
    pub created_at: String,
    /// Latest registration or report.
    pub updated_at: String,
    /// A description.
    pub description: Option<String>,
    /// The strategies its first registration named.
    pub strategies: Vec<String>,
    /// Who created it: SDKs register applications as the system user.
    pub created_by: &'static str,
    /// A link.
    pub url: Option<String>,
    /// A colour.
    pub color: Option<String>,
    /// An icon.
    pub icon: Option<String>,
    /// The first project it is used in, as Unleash's list shows it.
    pub project: Option<String>,
    /// The first environment it is used in there.
    pub environment: Option<String>,
    /// Where it is used.
    pub usage: Vec<ApplicationUsage>,
}

/// `GET /api/admin/metrics/applications` (Unleash's `applicationsSchema`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ApplicationsOut {
    /// The applications matching, this page of them.
    pub applications: Vec<ApplicationItem>,
    /// How many match.
    pub total: i64,
}

/// A strategy an application registered: the strategy type of that name, or the name with
/// `notFound` when the server has none, as Unleash answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ApplicationStrategy {
    /// The strategy type.
    Known(crate::catalogue::strategy_types::types::StrategyTypeOut),
    /// No strategy type has this name.
    #[serde(rename_all = "camelCase")]
    NotFound {
        /// Its name.
        name: String,
        /// Always true.
        not_found: bool,
    },
}

/// An SDK instance of an application.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceOut {
    /// The application.
    pub app_name: String,
    /// The instance.
    pub instance_id: String,
    /// Its SDK.
    pub sdk_version: Option<String>,
    /// `backend` or `frontend`.
    pub sdk_type: String,
    /// Its address.
    pub client_ip: Option<String>,
    /// Latest report.
    pub last_seen: String,
    /// First report.
    pub created_at: String,
    /// The environment of its token.
    pub environment: String,
}

/// A live flag an application reported, as Unleash's flag store reads it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SeenFlag {
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Its flag type.
    #[serde(rename = "type")]
    pub feature_type: String,
    /// Its project.
    pub project: String,
    /// Whether it is marked stale.
    pub stale: bool,
    /// When it was created.
    pub created_at: String,
    /// When SDKs last used it, in any environment.
    pub last_seen_at: Option<String>,
    /// Whether SDKs emit impression events.
    pub impression_data: bool,
    /// Always null: archived flags are not found.
    pub archived_at: Option<String>,
    /// Always false.
    pub archived: bool,
}

/// A flag an application reported: the live flag, or the name with `notFound` when no live
/// flag has it any more, as Unleash answers it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum SeenToggle {
    /// The flag.
    Known(SeenFlag),
    /// No live flag has this name.
    #[serde(rename_all = "camelCase")]
    NotFound {
        /// Its name.
        name: String,
        /// Always true.
        not_found: bool,
    },
}

/// Links of an application.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApplicationLinks {
    /// This application.
    #[serde(rename = "self")]
    pub this: String,
}

/// `GET /api/admin/metrics/applications/{appName}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplicationOut {
    /// Its name.
    pub app_name: String,
    /// First report.
    pub created_at: String,
    /// A description.
    pub description: Option<String>,
    /// A link.
    pub url: Option<String>,
    /// A colour.
    pub color: Option<String>,
    /// An icon.
    pub icon: Option<String>,
    /// The strategies its first registration named.
    pub strategies: Vec<ApplicationStrategy>,
    /// Its instances in every environment, newest report first.
    pub instances: Vec<InstanceOut>,
    /// Flags it reported in the last 24 hours.
    pub seen_toggles: Vec<SeenToggle>,
    /// Links.
    pub links: ApplicationLinks,
}

/// Problems in one environment of an application.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentIssues {
    /// Flags it reported that no longer exist.
    pub missing_features: Vec<String>,
    /// SDK versions below those Unleash supports.
    pub outdated_sdks: Vec<String>,
}

/// One environment of an application's overview.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewEnvironment {
    /// The environment.
    pub name: String,
    /// Instances seen there in the last 24 hours.
    pub instance_count: usize,
    /// Their SDKs, sorted.
    pub sdks: Vec<String>,
    /// Those of frontend SDKs.
    pub frontend_sdks: Vec<String>,
    /// Those of backend SDKs.
    pub backend_sdks: Vec<String>,
    /// The latest report there.
    pub last_seen: Option<String>,
    /// Problems.
    pub issues: EnvironmentIssues,
}

/// Problems of an application as a whole.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewIssues {
    /// Strategies it registered that the server does not know.
    pub missing_strategies: Vec<String>,
}

/// `GET /api/admin/metrics/applications/{appName}/overview` (Unleash's
/// `applicationOverviewSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverviewOut {
    /// Projects of the flags it reported.
    pub projects: Vec<String>,
    /// Distinct existing flags it reported.
    pub feature_count: usize,
    /// Environments it reported from.
    pub environments: Vec<OverviewEnvironment>,
    /// Problems.
    pub issues: OverviewIssues,
}

/// An instance in `GET /api/admin/metrics/instances/{appName}/environment/{environment}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentInstance {
    /// The instance.
    pub instance_id: String,
    /// Its SDK.
    pub sdk_version: Option<String>,
    /// Its address.
    pub client_ip: Option<String>,
    /// Latest report.
    pub last_seen: String,
}

/// Unleash's `applicationEnvironmentInstancesSchema`.
#[derive(Debug, Serialize, ToSchema)]
pub struct InstancesOut {
    /// Instances seen in the last 24 hours, newest first, at most 1,000.
    pub instances: Vec<EnvironmentInstance>,
}

/// Usage of a flag in one environment, or by one application in one hour (Unleash's
/// `featureEnvironmentMetricsSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageOut {
    /// The flag, in raw rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feature_name: Option<String>,
    /// The application, in raw rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_name: Option<String>,
    /// The environment.
    pub environment: String,
    /// The start of the hour.
    pub timestamp: String,
    /// Evaluations that were on.
    pub yes: i64,
    /// Evaluations that were off.
    pub no: i64,
    /// Counts by variant: in raw rows always (`{}` in hours without reports); absent in the
    /// last hour's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variants: Option<BTreeMap<String, i64>>,
}

/// `GET /api/admin/client-metrics/features/{name}` (Unleash's `featureUsageSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeatureUsageOut {
    /// Always 1.
    pub version: u32,
    /// Always `stable`.
    pub maturity: &'static str,
    /// The flag.
    pub feature_name: String,
    /// Counts of the last hour, per environment.
    pub last_hour_usage: Vec<UsageOut>,
    /// Applications that reported it in the last 24 hours, sorted.
    pub seen_applications: Vec<String>,
}

/// `GET /api/admin/client-metrics/features/{name}/raw` (Unleash's `featureMetricsSchema`).
#[derive(Debug, Serialize, ToSchema)]
pub struct RawUsageOut {
    /// Always 1.
    pub version: u32,
    /// Always `stable`.
    pub maturity: &'static str,
    /// For every environment that reported, every application that did (at most 100), and
    /// every hour, newest first: zero where no report came, as Unleash answers.
    pub data: Vec<UsageOut>,
}

/// Where an unknown flag was asked for.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlagEnvironment {
    /// The environment.
    pub environment: String,
    /// When, by the SDK's clock.
    pub seen_at: String,
}

/// An application that asked for an unknown flag.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlagReport {
    /// The application.
    pub app_name: String,
    /// Where it asked.
    pub environments: Vec<UnknownFlagEnvironment>,
}

/// A flag name SDKs asked for that no flag has (Unleash's `unknownFlagSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlagOut {
    /// The name.
    pub name: String,
    /// The latest time any SDK asked.
    pub last_seen_at: String,
    /// The latest audit event about a flag of this name; none here, since none exists.
    pub last_event_at: Option<String>,
    /// Who asked, and where.
    pub reports: Vec<UnknownFlagReport>,
}

/// `GET /api/admin/metrics/unknown-flags`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnknownFlagsOut {
    /// Names asked for in the last 24 hours, by name, at most 1,000.
    pub unknown_flags: Vec<UnknownFlagOut>,
}

/// SDK versions Unleash calls outdated, with the applications that run them.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OutdatedSdkOut {
    /// `name:version`, as the SDK reported it.
    pub sdk_version: String,
    /// The applications, by name.
    pub applications: Vec<String>,
}

/// `GET /api/admin/metrics/sdks/outdated`.
#[derive(Debug, Serialize, ToSchema)]
pub struct OutdatedSdksOut {
    /// The outdated SDK versions in use.
    pub sdks: Vec<OutdatedSdkOut>,
}

/// An SDK an application of a project runs.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectApplicationSdkOut {
    /// The SDK's name.
    pub name: String,
    /// Its versions in use.
    pub versions: Vec<String>,
}

/// An application that used a project's flags.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectApplicationOut {
    /// Its name.
    pub name: String,
    /// The environments it reported from.
    pub environments: Vec<String>,
    /// Its instances.
    pub instances: Vec<String>,
    /// The SDKs it runs.
    pub sdks: Vec<ProjectApplicationSdkOut>,
}

/// `GET /api/admin/projects/{projectId}/applications`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectApplicationsOut {
    /// How many applications match.
    pub total: usize,
    /// A page of them, by name.
    pub applications: Vec<ProjectApplicationOut>,
}

/// Query of `GET /api/admin/projects/{projectId}/applications`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct ProjectApplicationsQuery {
    /// Text in the application's name.
    #[serde(default)]
    pub query: Option<String>,
    /// Applications to skip.
    #[serde(default)]
    pub offset: Option<String>,
    /// Applications to answer; 50 by default, at most 1000.
    #[serde(default)]
    pub limit: Option<String>,
    /// `name` (the default).
    #[serde(default)]
    pub sort_by: Option<String>,
    /// `asc` (the default) or `desc`.
    #[serde(default)]
    pub sort_order: Option<String>,
}
