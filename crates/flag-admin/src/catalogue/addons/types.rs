//! Webhooks, as Unleash's addons: `/api/admin/addons`.

use flag_store::models::{Addon, IntegrationEventRow};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

use crate::runtime::input::iso;

/// Body of `POST /api/admin/addons` and `PUT /api/admin/addons/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddonIn {
    /// The provider: `webhook`.
    pub provider: String,
    /// Free text; `null` is the empty text.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether it delivers.
    pub enabled: bool,
    /// The provider's parameters: strings, numbers or booleans. A sensitive parameter given as
    /// `*****` keeps its stored value.
    #[schema(value_type = Object)]
    pub parameters: Map<String, Value>,
    /// The event types it delivers.
    pub events: Vec<String>,
    /// The projects it listens to; empty (or `*`) for every project.
    #[serde(default)]
    pub projects: Vec<String>,
    /// The environments it listens to; empty (or `*`) for every environment.
    #[serde(default)]
    pub environments: Vec<String>,
}

/// A webhook.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddonOut {
    /// Its id.
    pub id: i32,
    /// `webhook`.
    pub provider: String,
    /// Whether it delivers.
    pub enabled: bool,
    /// Free text.
    pub description: Option<String>,
    /// Its parameters; in lists and reads, each sensitive one is `*****`.
    #[schema(value_type = Object)]
    pub parameters: Map<String, Value>,
    /// The event types it delivers.
    pub events: Vec<String>,
    /// The projects it listens to; empty for every project.
    pub projects: Vec<String>,
    /// The environments it listens to; empty for every environment.
    pub environments: Vec<String>,
    /// When it was created; left out of the answer to a create, as Unleash leaves it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
}

impl AddonOut {
    /// `addon` with its parameters as given: what a create and an update answer.
    pub fn of(addon: Addon) -> Self {
        Self {
            id: addon.id,
            provider: addon.config.provider,
            enabled: addon.config.enabled,
            description: addon.config.description,
            parameters: addon.config.parameters,
            events: addon.config.events,
            projects: addon.config.projects,
            environments: addon.config.environments,
            created_at: Some(iso(addon.created_at)),
        }
    }

    /// With its parameters in the order PostgreSQL's `jsonb` gives Unleash's reads: shorter
    /// names first, then by bytes.
    pub fn stored(mut self) -> Self {
        let mut entries: Vec<(String, Value)> = std::mem::take(&mut self.parameters).into_iter().collect();
        entries.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        self.parameters = entries.into_iter().collect();
        self
    }

    /// Without the creation time.
    pub fn created(mut self) -> Self {
        self.created_at = None;
        self
    }

    /// With each parameter named in `sensitive` replaced by `*****`.
    pub fn masked(mut self, sensitive: &[&str]) -> Self {
        for (name, value) in &mut self.parameters {
            if sensitive.contains(&name.as_str()) {
                *value = Value::String(crate::catalogue::addons::MASKED.to_owned());
            }
        }
        self
    }
}

/// One setting a provider takes (the schema of `AddonTypeOut::parameters`' items).
#[derive(Debug, ToSchema)]
#[allow(
    dead_code,
    reason = "schema-only: the parameters are written in Unleash's key order"
)]
pub struct AddonParameterOut {
    /// Its name in `parameters`.
    name: String,
    /// Its label.
    #[schema(rename = "displayName")]
    display_name: String,
    /// An example value.
    placeholder: Option<String>,
    /// What it does.
    description: String,
    /// `url`, `text` or `textfield`.
    #[schema(rename = "type")]
    parameter_type: String,
    /// Whether a webhook must set it.
    required: bool,
    /// Whether reads show it as `*****`.
    sensitive: bool,
}

/// A provider: what a webhook of it takes and which events it can deliver.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AddonTypeOut {
    /// `webhook`.
    pub name: &'static str,
    /// Its label.
    pub display_name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// Where it is documented.
    pub documentation_url: &'static str,
    /// How to use it.
    pub how_to: &'static str,
    /// Its settings, each with its keys in Unleash's order.
    #[schema(value_type = Vec<AddonParameterOut>)]
    pub parameters: Vec<Value>,
    /// The event types it can deliver.
    pub events: Vec<&'static str>,
}

/// `GET /api/admin/addons`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AddonsOut {
    /// Every webhook, sensitive parameters masked.
    pub addons: Vec<AddonOut>,
    /// The providers this server delivers to.
    pub providers: Vec<AddonTypeOut>,
}

/// Paging of `GET /api/admin/addons/{id}/events`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveriesQuery {
    /// How many, 1 to 100; 50 otherwise.
    pub limit: Option<String>,
    /// How many of the newest to skip; 0 otherwise.
    pub offset: Option<String>,
}

/// One delivery to a webhook.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryOut {
    /// Its id, as a string of digits.
    pub id: String,
    /// The webhook.
    pub integration_id: i32,
    /// When it ended.
    pub created_at: String,
    /// `success`, `failed` or `successWithErrors`.
    pub state: String,
    /// What happened.
    pub state_details: String,
    /// The audit event delivered.
    #[schema(value_type = Object)]
    pub event: Value,
    /// The request: `url`, `contentType` and `body`.
    #[schema(value_type = Object)]
    pub details: Value,
}

impl DeliveryOut {
    /// `row` as Unleash shows it; stored JSON that does not read is shown as `null`.
    pub fn of(row: IntegrationEventRow) -> Self {
        Self {
            id: row.id.to_string(),
            integration_id: row.integration_id,
            created_at: iso(row.created_at),
            state: row.state,
            state_details: row.state_details,
            event: serde_json::from_str(&row.event).unwrap_or(Value::Null),
            details: serde_json::from_str(&row.details).unwrap_or(Value::Null),
        }
    }
}

/// `GET /api/admin/addons/{id}/events`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveriesOut {
    /// The newest deliveries first.
    pub integration_events: Vec<DeliveryOut>,
}
