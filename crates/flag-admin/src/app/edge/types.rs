//! What the edge reads from its upstream and shows an operator.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, NaiveDateTime, Utc};
use flag_store::queries::client_metrics::Batch;
use serde::{Deserialize, Serialize};

/// A token as the upstream's `POST /edge/validate` describes it (Unleash's `EdgeToken`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpstreamToken {
    /// The secret.
    pub token: String,
    /// `client`, `backend` or `frontend`.
    #[serde(rename = "type")]
    pub token_type: String,
    /// Its environment; `*` or none for every environment.
    #[serde(default)]
    pub environment: Option<String>,
    /// Its projects; `["*"]` for all.
    #[serde(default)]
    pub projects: Vec<String>,
}

/// A frontend token trusted without asking the upstream, as `--pretrusted-tokens` gives it:
/// `<token>@<environment>`, for that environment and every project. `Debug` never shows the
/// secret.
#[derive(Clone, PartialEq, Eq)]
pub struct PretrustedToken {
    /// The secret.
    pub token: String,
    /// The environment it answers for.
    pub environment: String,
}

impl FromStr for PretrustedToken {
    type Err = String;

    /// Reads `<token>@<environment>`; the message never repeats the secret.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().rsplit_once('@') {
            Some((token, environment)) if !token.trim().is_empty() && !environment.trim().is_empty() => {
                Ok(Self {
                    token: token.trim().to_owned(),
                    environment: environment.trim().to_owned(),
                })
            }
            _ => Err("a pretrusted token is written `<token>@<environment>`, with neither part empty".into()),
        }
    }
}

impl fmt::Debug for PretrustedToken {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "PretrustedToken(<redacted>@{})", self.environment)
    }
}

/// A token the edge serves, as `/internal-backstage/tokens` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackstageToken {
    /// The token with its secret part masked.
    pub token: String,
    /// `client`, `backend` or `frontend`.
    #[serde(rename = "type")]
    pub token_type: String,
    /// Its environment.
    pub environment: Option<String>,
    /// Its projects.
    pub projects: Vec<String>,
    /// `Validated`.
    pub status: String,
    /// When the upstream last confirmed it.
    pub validated_at: DateTime<Utc>,
}

/// One followed scope, as `/internal-backstage/ready` and the log describe it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeStatus {
    /// The environment.
    pub environment: String,
    /// The projects; none for all.
    pub projects: Option<Vec<String>>,
    /// Where the flags served come from: `upstream`, `backup` or none yet.
    pub source: Option<String>,
    /// Since when.
    pub since: Option<DateTime<Utc>>,
    /// The last failure reaching the upstream, if any.
    pub last_failure: Option<String>,
    /// When it happened.
    pub last_failure_at: Option<DateTime<Utc>>,
    /// The last document that could not be kept, if the last write failed.
    pub write_failure: Option<String>,
}

/// What the edge serves, from where, and since when.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EdgeStatus {
    /// The upstream's URL.
    pub upstream: String,
    /// When the edge started.
    pub started: DateTime<Utc>,
    /// Whether every followed scope has flags to serve.
    pub ready: bool,
    /// The followed scopes.
    pub scopes: Vec<ScopeStatus>,
    /// How many tokens it serves.
    pub tokens: usize,
    /// Usage rows sent upstream since the start.
    pub usage_rows_forwarded: u64,
    /// Usage sends that failed since the start (their rows are kept and sent again).
    pub usage_send_failures: u64,
}

/// `token` with its secret part masked, as Edge shows tokens: the scope before the `.` and the
/// first characters after it.
pub fn masked(token: &str) -> String {
    match token.split_once('.') {
        Some((scope, secret)) => {
            let shown: String = secret.chars().take(6).collect();
            format!("{scope}.{shown}****")
        }
        None => {
            let shown: String = token.chars().take(6).collect();
            format!("{shown}****")
        }
    }
}

/// How the log and the readiness answer name a source of flags.
pub fn source_name(source: flag_client::Source) -> &'static str {
    match source {
        flag_client::Source::Server => "upstream",
        flag_client::Source::Backup => "backup",
        flag_client::Source::Bootstrap => "bootstrap",
    }
}

/// An application in Unleash's bulk report (`bulkRegistrationSchema`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct BulkApplicationOut {
    app_name: String,
    instance_id: String,
    environment: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    sdk_version: Option<String>,
    sdk_type: String,
    strategies: Vec<String>,
    /// Unleash refuses a backend registration without `started` and `interval`: an instance
    /// that only reported counts is said to have started when it was first heard from.
    started: String,
    interval: i64,
}

/// A flag's counts in Unleash's bulk report (`clientMetricsEnvSchema`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct BulkMetricOut {
    feature_name: String,
    app_name: String,
    environment: String,
    timestamp: String,
    yes: i64,
    no: i64,
    variants: BTreeMap<String, i64>,
}

/// Unleash's bulk report (`bulkMetricsSchema`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BulkReportOut {
    applications: Vec<BulkApplicationOut>,
    metrics: Vec<BulkMetricOut>,
}

fn iso(time: NaiveDateTime) -> String {
    time.and_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `batch` as bulk reports, one per environment. An application alone (no instance names it)
/// travels with the instances that do; the upstream learns of applications from them.
pub fn bulk_reports(batch: Batch) -> Vec<(String, BulkReportOut)> {
    let strategies: BTreeMap<String, Vec<String>> = batch
        .applications
        .into_iter()
        .map(|application| (application.app_name, application.strategies))
        .collect();
    let mut reports: BTreeMap<String, BulkReportOut> = BTreeMap::new();
    for instance in batch.instances {
        let report = reports.entry(instance.environment.clone()).or_default();
        report.applications.push(BulkApplicationOut {
            strategies: strategies.get(&instance.app_name).cloned().unwrap_or_default(),
            app_name: instance.app_name,
            instance_id: instance.instance_id,
            environment: instance.environment,
            sdk_version: instance.sdk_version,
            sdk_type: instance.sdk_type,
            started: iso(instance.started.unwrap_or(instance.created_at)),
            interval: instance.interval_ms.unwrap_or(0),
        });
    }
    for count in batch.usage {
        let report = reports.entry(count.environment.clone()).or_default();
        report.metrics.push(BulkMetricOut {
            feature_name: count.feature_name,
            app_name: count.app_name,
            environment: count.environment,
            timestamp: iso(count.hour),
            yes: count.yes,
            no: count.no,
            variants: count.variants,
        });
    }
    reports.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pretrusted_token_is_a_secret_at_an_environment_and_never_shown() {
        let trusted: Result<PretrustedToken, String> = " *:production.abc@production ".parse();
        assert_eq!(
            trusted,
            Ok(PretrustedToken {
                token: "*:production.abc".into(),
                environment: "production".into(),
            })
        );
        let shown = format!(
            "{:?}",
            trusted.unwrap_or_else(|_| PretrustedToken {
                token: String::new(),
                environment: String::new(),
            })
        );
        assert_eq!(shown, "PretrustedToken(<redacted>@production)");
        for refused in ["abc", "abc@", "@production", " @ ", ""] {
            let error = refused.parse::<PretrustedToken>().err().unwrap_or_default();
            assert!(error.contains("`<token>@<environment>`"), "{refused}: {error}");
        }
    }

    #[test]
    fn a_batch_becomes_one_bulk_report_per_environment() -> Result<(), serde_json::Error> {
        use flag_store::models::ClientInstanceRow;
        use flag_store::queries::client_metrics::{SeenApplication, UsageCount};
        use serde::de::Error as _;
        let hour = chrono::NaiveDate::from_ymd_opt(2026, 11, 29)
            .and_then(|day| day.and_hms_opt(10, 0, 0))
            .unwrap_or_default();
        let mut instance = ClientInstanceRow::new(
            "web".into(),
            "i-1".into(),
            "production".into(),
            None,
            "backend",
            hour,
        )
        .map_err(serde_json::Error::custom)?;
        instance.sdk_version = Some("unleash-node-sdk:6.12.1".into());
        instance.interval_ms = Some(15_000);
        let count = |environment: &str| UsageCount {
            feature_name: "checkout".into(),
            app_name: "web".into(),
            environment: environment.into(),
            hour,
            projects: None,
            yes: 3,
            no: 1,
            variants: [("blue".to_owned(), 2)].into(),
            reported_at: hour,
        };
        let reports = bulk_reports(Batch {
            applications: vec![SeenApplication {
                app_name: "web".into(),
                strategies: vec!["default".into()],
                seen_at: hour,
            }],
            instances: vec![instance],
            usage: vec![count("production"), count("development")],
        });
        let environments: Vec<&str> = reports
            .iter()
            .map(|(environment, _)| environment.as_str())
            .collect();
        assert_eq!(environments, ["development", "production"]);
        let production = serde_json::to_value(&reports[1].1)?;
        assert_eq!(
            production,
            serde_json::json!({
                "applications": [{"appName": "web", "instanceId": "i-1", "environment": "production",
                                  "sdkVersion": "unleash-node-sdk:6.12.1", "sdkType": "backend",
                                  "strategies": ["default"], "started": "2026-11-29T10:00:00.000Z",
                                  "interval": 15000}],
                "metrics": [{"featureName": "checkout", "appName": "web", "environment": "production",
                             "timestamp": "2026-11-29T10:00:00.000Z", "yes": 3, "no": 1, "variants": {"blue": 2}}]
            })
        );
        Ok(())
    }

    #[test]
    fn a_masked_token_keeps_its_scope_and_hides_its_secret() {
        assert_eq!(
            masked("default:production.abcdef123456"),
            "default:production.abcdef****"
        );
        assert_eq!(masked("opaque-secret-value"), "opaque****");
    }
}
