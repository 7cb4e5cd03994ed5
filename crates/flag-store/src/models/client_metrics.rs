//! What SDKs report: applications, their instances, hourly usage and unknown flag names.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::{client_applications, client_instances, client_usage, unknown_flags};

/// An application SDKs registered or reported metrics for.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = client_applications, check_for_backend(crate::connection::MultiBackend))]
pub struct ClientApplicationRow {
    /// The SDKs' `appName`.
    pub app_name: String,
    /// The strategies its first registration named, a JSON list.
    pub strategies: String,
    /// A description.
    pub description: Option<String>,
    /// A link.
    pub url: Option<String>,
    /// A colour.
    pub color: Option<String>,
    /// An icon name.
    pub icon: Option<String>,
    /// First report, UTC.
    pub created_at: NaiveDateTime,
    /// Latest report, UTC.
    pub seen_at: NaiveDateTime,
}

impl ClientApplicationRow {
    /// The strategies, decoded from `strategies`.
    pub fn strategies(&self) -> Result<Vec<String>, StoreError> {
        from_json(
            "client application",
            &self.app_name,
            "strategies",
            &self.strategies,
        )
    }
}

/// One SDK instance of an application in one environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = client_instances, check_for_backend(crate::connection::MultiBackend))]
pub struct ClientInstanceRow {
    /// The application.
    pub app_name: String,
    /// The SDK's `instanceId`.
    pub instance_id: String,
    /// The environment of the token it reported with.
    pub environment: String,
    /// `unleash-node-sdk:6.12.1` and the like.
    pub sdk_version: Option<String>,
    /// `backend` or `frontend`.
    pub sdk_type: String,
    /// The address it reported from.
    pub client_ip: Option<String>,
    /// The projects of its token, a JSON list; `["*"]` for all.
    pub projects: String,
    /// When the SDK says it started.
    pub started: Option<NaiveDateTime>,
    /// Its poll interval, in milliseconds.
    pub interval_ms: Option<i64>,
    /// First report, UTC.
    pub created_at: NaiveDateTime,
    /// Latest report, UTC.
    pub last_seen: NaiveDateTime,
}

impl ClientInstanceRow {
    /// An instance of `app_name` in `environment`, heard from `at`, reporting with a token of
    /// `projects` (`None` for all); the store writes the projects as JSON and keeps the time to
    /// the microsecond. What the instance says of itself is added by the caller.
    pub fn new(
        app_name: String,
        instance_id: String,
        environment: String,
        projects: Option<&[String]>,
        sdk_type: &str,
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        let at = crate::time::stored(at);
        Ok(Self {
            app_name,
            instance_id,
            environment,
            sdk_version: None,
            sdk_type: sdk_type.to_owned(),
            client_ip: None,
            projects: crate::queries::to_json(
                "client_instances.projects",
                projects.unwrap_or(&["*".to_owned()]),
            )?,
            started: None,
            interval_ms: None,
            created_at: at,
            last_seen: at,
        })
    }
}

impl ClientInstanceRow {
    /// The projects, decoded from `projects`.
    pub fn projects(&self) -> Result<Vec<String>, StoreError> {
        from_json(
            "client instance",
            format_args!("{} of {}", self.instance_id, self.app_name),
            "projects",
            &self.projects,
        )
    }
}

/// Evaluations of a flag by an application in an environment during one hour.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = client_usage, check_for_backend(crate::connection::MultiBackend))]
pub struct UsageRow {
    /// The flag.
    pub feature_name: String,
    /// The application.
    pub app_name: String,
    /// The environment.
    pub environment: String,
    /// The start of the hour, UTC.
    pub hour: NaiveDateTime,
    /// Evaluations that were on.
    pub yes: i64,
    /// Evaluations that were off.
    pub no: i64,
    /// Counts by variant name, a JSON object.
    pub variants: String,
}

impl UsageRow {
    /// The variant counts, decoded from `variants`.
    pub fn variants(&self) -> Result<BTreeMap<String, i64>, StoreError> {
        from_json(
            "client usage",
            format_args!(
                "{} by {} in {}",
                self.feature_name, self.app_name, self.environment
            ),
            "variants",
            &self.variants,
        )
    }
}

/// A flag name an SDK asked for that no flag has.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = unknown_flags, check_for_backend(crate::connection::MultiBackend))]
pub struct UnknownFlagRow {
    /// The name asked for.
    pub name: String,
    /// The application that asked.
    pub app_name: String,
    /// The environment it asked in.
    pub environment: String,
    /// When it last asked, UTC.
    pub seen_at: NaiveDateTime,
}
