//! Webhooks (Unleash's addons) and the record of their deliveries.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::Serialize;

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::{addons, integration_events};

/// A webhook (one of Unleash's addons), as stored: its lists and parameters as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = addons, check_for_backend(crate::connection::MultiBackend))]
pub struct AddonRow {
    /// Its id.
    pub id: i32,
    /// `webhook`.
    pub provider: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it delivers.
    pub enabled: bool,
    /// The provider's parameters, a JSON object.
    pub parameters: String,
    /// The event types it delivers, a JSON list.
    pub events: String,
    /// The projects it listens to, a JSON list; empty for every project.
    pub projects: String,
    /// The environments it listens to, a JSON list; empty for every environment.
    pub environments: String,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A webhook's settings, as parsed: what a create writes and an update replaces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddonConfig {
    /// `webhook`.
    pub provider: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it delivers.
    pub enabled: bool,
    /// The provider's parameters: strings, numbers or booleans.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// The event types it delivers.
    pub events: Vec<String>,
    /// The projects it listens to; empty for every project.
    pub projects: Vec<String>,
    /// The environments it listens to; empty for every environment.
    pub environments: Vec<String>,
}

/// A stored webhook, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addon {
    /// Its id.
    pub id: i32,
    /// Its settings.
    pub config: AddonConfig,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl TryFrom<AddonRow> for Addon {
    type Error = StoreError;

    fn try_from(row: AddonRow) -> Result<Self, StoreError> {
        let id = row.id;
        Ok(Self {
            id,
            config: AddonConfig {
                provider: row.provider,
                description: row.description,
                enabled: row.enabled,
                parameters: from_json("addon", id, "parameters", &row.parameters)?,
                events: from_json("addon", id, "events", &row.events)?,
                projects: from_json("addon", id, "projects", &row.projects)?,
                environments: from_json("addon", id, "environments", &row.environments)?,
            },
            created_at: row.created_at,
        })
    }
}

/// What one delivery to a webhook did.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = integration_events, check_for_backend(crate::connection::MultiBackend))]
pub struct IntegrationEventRow {
    /// Its id: increasing.
    pub id: i32,
    /// The webhook.
    pub integration_id: i32,
    /// When the delivery ended, UTC.
    pub created_at: NaiveDateTime,
    /// `success`, `failed` or `successWithErrors`.
    pub state: String,
    /// What happened, in words.
    pub state_details: String,
    /// The audit event delivered, JSON.
    pub event: String,
    /// The request: URL, content type and body, JSON.
    pub details: String,
}

/// A delivery to record.
#[derive(Debug, Clone, PartialEq, Eq, Insertable)]
#[diesel(table_name = integration_events)]
pub struct NewIntegrationEvent {
    /// The webhook.
    pub integration_id: i32,
    /// When the delivery ended, UTC.
    pub created_at: NaiveDateTime,
    /// `success`, `failed` or `successWithErrors`.
    pub state: String,
    /// What happened, in words.
    pub state_details: String,
    /// The audit event delivered, JSON.
    pub event: String,
    /// The request: URL, content type and body, JSON.
    pub details: String,
}
