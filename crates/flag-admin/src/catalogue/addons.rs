//! Webhooks, as Unleash's `webhook` addon: create, read, replace and delete them, the provider
//! they belong to, and what their deliveries did. [`crate::catalogue::webhooks`] delivers.

pub mod types;

use flag_store::models::AddonConfig;
use flag_store::queries;
use serde_json::{Map, Value, json};

use crate::catalogue::addons::types::{
    AddonIn, AddonOut, AddonTypeOut, AddonsOut, DeliveriesOut, DeliveriesQuery, DeliveryOut,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::runtime::domain::ResourceName;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// What reads show in place of a sensitive parameter; given back in an update, it keeps the
/// stored value.
pub const MASKED: &str = "*****";

/// The only provider: a POST of each chosen event to a URL.
pub const WEBHOOK: &str = "webhook";

/// The webhook's parameters that reads mask: the URL and both kinds of header may hold secrets.
pub const SENSITIVE: [&str; 3] = ["url", "authorization", "customHeaders"];

/// The events a webhook can deliver, as Unleash's webhook provider lists them.
pub const EVENTS: [&str; 33] = [
    "feature-created",
    "feature-updated",
    "feature-archived",
    "feature-revived",
    "feature-stale-on",
    "feature-stale-off",
    "feature-completed",
    "feature-environment-enabled",
    "feature-environment-disabled",
    "feature-strategy-remove",
    "feature-strategy-update",
    "feature-strategy-add",
    "feature-metadata-updated",
    "feature-variants-updated",
    "feature-project-change",
    "feature-tagged",
    "feature-untagged",
    "change-request-created",
    "change-request-discarded",
    "change-added",
    "change-discarded",
    "change-request-approved",
    "change-request-approval-added",
    "change-request-cancelled",
    "change-request-sent-to-review",
    "change-request-applied",
    "change-request-scheduled",
    "change-request-scheduled-application-success",
    "change-request-scheduled-application-failure",
    "change-request-schedule-suspended",
    "feature-potentially-stale-on",
    "release-plan-progressions-paused",
    "release-plan-progressions-resumed",
];

/// The webhook provider, as `GET /api/admin/addons` lists it.
pub fn providers() -> Vec<AddonTypeOut> {
    // Each parameter's keys in the order Unleash's definition gives them.
    let parameters = vec![
        json!({
            "name": "url",
            "displayName": "Webhook URL",
            "description": "(Required) Unleash will perform a HTTP Post to the specified URL (one retry if first attempt fails)",
            "type": "url",
            "required": true,
            "sensitive": true,
        }),
        json!({
            "name": "contentType",
            "displayName": "Content-Type",
            "placeholder": "application/json",
            "description": "(Optional) The Content-Type header to use. Defaults to \"application/json\".",
            "type": "text",
            "required": false,
            "sensitive": false,
        }),
        json!({
            "name": "authorization",
            "displayName": "Authorization",
            "placeholder": "",
            "description": "(Optional) The Authorization header to use. Not used if left blank.",
            "type": "text",
            "required": false,
            "sensitive": true,
        }),
        json!({
            "name": "customHeaders",
            "displayName": "Extra HTTP Headers",
            "placeholder": "{\n\"ISTIO_USER_KEY\": \"hunter2\",\n\"SOME_OTHER_CUSTOM_HTTP_HEADER\": \"SOMEVALUE\"\n}",
            "description": "(Optional) Used to add extra HTTP Headers to the request the plugin fires off. This must be a valid json object of key-value pairs where both the key and the value are strings",
            "required": false,
            "sensitive": true,
            "type": "textfield",
        }),
        json!({
            "name": "bodyTemplate",
            "displayName": "Body template",
            "placeholder": "{\n  \"event\": \"{{event.type}}\",\n  \"createdBy\": \"{{event.createdBy}}\",\n  \"featureToggle\": \"{{event.data.name}}\",\n  \"timestamp\": \"{{event.data.createdAt}}\",\n  \"json\": {{{eventJson}}}\n}",
            "description": "(Optional) You may format the body using a mustache template. If you don't specify anything, the format will be similar to the [events format](https://docs.getunleash.io/concepts/events). You can use `{{{eventJson}}}` to include the entire serialized event, or `\"{{eventMarkdown}}\"` for the formatted description.",
            "type": "textfield",
            "required": false,
            "sensitive": false,
        }),
    ];
    vec![AddonTypeOut {
        name: WEBHOOK,
        display_name: "Webhook",
        description: "A Webhook is a generic way to post messages from Unleash to third party services.",
        documentation_url: "https://docs.getunleash.io/integrate/webhook",
        how_to: "The Webhook Addon introduces a generic way to post messages from Unleash to third party \
                 services. Unleash allows you to define a webhook which listens for changes in Unleash and \
                 posts them to a third party services.",
        parameters,
        events: EVENTS.to_vec(),
    }]
}

/// Who may list the webhooks.
pub const LIST: Access = Access::Read;

/// Every webhook, sensitive parameters masked, and the providers.
pub async fn list(ctx: &Runtime) -> Result<AddonsOut, AdminError> {
    let addons = db::run(&ctx.store, queries::addons::list).await?;
    Ok(AddonsOut {
        addons: addons
            .into_iter()
            .map(|addon| AddonOut::of(addon).stored().masked(&SENSITIVE))
            .collect(),
        providers: providers(),
    })
}

/// Who may read a webhook.
pub const GET: Access = Access::Read;

/// One webhook, sensitive parameters masked.
pub async fn get(ctx: &Runtime, id: i32) -> Result<AddonOut, AdminError> {
    let addon = db::run(&ctx.store, move |conn| queries::addons::get(conn, id)).await?;
    Ok(AddonOut::of(addon).stored().masked(&SENSITIVE))
}

/// Who may create a webhook.
pub const CREATE: Access = Access::Root(Permission::CreateAddon);

/// Creates a webhook; the answer shows its parameters as given.
pub async fn create(ctx: &Runtime, caller: &Caller, request: AddonIn) -> Result<AddonOut, AdminError> {
    let config = parse(request)?;
    check_url(ctx, &config).await?;
    let addon = caller
        .write(ctx, move |conn, actor, now| {
            queries::addons::create(conn, &config, actor, now)
        })
        .await?;
    Ok(AddonOut::of(addon).created())
}

/// Who may change a webhook.
pub const UPDATE: Access = Access::Root(Permission::UpdateAddon);

/// Replaces a webhook's settings. A sensitive parameter given as [`MASKED`] keeps its stored
/// value; the answer shows the parameters as stored.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    id: i32,
    request: AddonIn,
) -> Result<AddonOut, AdminError> {
    let existing = db::run(&ctx.store, move |conn| queries::addons::get(conn, id)).await?;
    let mut config = parse(request)?;
    check_url(ctx, &config).await?;
    // A masked value stands for the stored one; with none stored, it stands for nothing.
    config.parameters = std::mem::take(&mut config.parameters)
        .into_iter()
        .filter_map(|(name, value)| {
            if value.as_str() == Some(MASKED) {
                let stored = existing.config.parameters.get(&name).cloned()?;
                Some((name, stored))
            } else {
                Some((name, value))
            }
        })
        .collect();
    let addon = caller
        .write(ctx, move |conn, actor, now| {
            queries::addons::update(conn, id, &config, actor, now)
        })
        .await?;
    Ok(AddonOut::of(addon).stored())
}

/// Who may delete a webhook.
pub const DELETE: Access = Access::Root(Permission::DeleteAddon);

/// Deletes a webhook.
pub async fn delete(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::addons::delete(conn, id, actor, now)
        })
        .await
}

/// Who may read a webhook's deliveries.
pub const DELIVERIES: Access = Access::AdminRead;

/// A webhook's deliveries, newest first: `limit` 1 to 100 (50 otherwise) after `offset`.
pub async fn deliveries(ctx: &Runtime, id: i32, query: DeliveriesQuery) -> Result<DeliveriesOut, AdminError> {
    let limit = query
        .limit
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|limit| (1..=100).contains(limit))
        .unwrap_or(50);
    let offset = query
        .offset
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|offset| *offset > 0)
        .unwrap_or(0);
    let rows = db::run(&ctx.store, move |conn| {
        queries::addons::deliveries(conn, id, offset, limit)
    })
    .await?;
    Ok(DeliveriesOut {
        integration_events: rows.into_iter().map(DeliveryOut::of).collect(),
    })
}

/// Checks the URL, when it is not the masked one an update keeps, where blocking is allowed.
async fn check_url(ctx: &Runtime, config: &AddonConfig) -> Result<(), AdminError> {
    let Some(url) = config
        .parameters
        .get("url")
        .and_then(Value::as_str)
        .filter(|url| *url != MASKED)
        .map(str::to_owned)
    else {
        return Ok(());
    };
    // Resolving may wait on DNS for seconds: on a thread of its own, so that it holds up
    // neither the request threads nor the pool database work runs on.
    let policy = ctx.settings.webhook_urls.clone();
    let (answer, checked) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("webhook-url-check".into())
        .spawn(move || {
            let _ = answer.send(policy.check(&url));
        })?;
    checked
        .await
        .map_err(|_| AdminError::Internal("the URL check ended without an answer".into()))?
        .map(drop)
        .map_err(|message| AdminError::invalid("/parameters/url", message))
}

/// A request as stored settings, checked as Unleash checks them (the provider, its required
/// parameters), and stricter where a delivery would otherwise fail later: the body template
/// must compile and extra headers must be a JSON object of strings.
fn parse(request: AddonIn) -> Result<AddonConfig, AdminError> {
    let provider = ResourceName::try_from(request.provider.as_str()).map_err(|_| {
        if request.provider.trim().is_empty() {
            AdminError::invalid(
                "/provider",
                "No addon provider supplied. The property was either missing or an empty value.",
            )
        } else {
            AdminError::invalid(
                "/provider",
                format!("Unknown addon provider {}", request.provider),
            )
        }
    })?;
    if provider.as_str() != WEBHOOK {
        return Err(AdminError::invalid(
            "/provider",
            format!("Unknown addon provider {}", provider.as_str()),
        ));
    }
    let mut details = Vec::new();
    for (name, value) in &request.parameters {
        if !matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
            details.push(crate::Detail::at(
                format!("/parameters/{name}"),
                format!("\"parameters.{name}\" must be a string, a number or a boolean"),
            ));
        }
    }
    AdminError::check(details)?;
    let providers = providers();
    let missing: Vec<&str> = providers
        .iter()
        .flat_map(|provider| &provider.parameters)
        .filter(|parameter| parameter["required"] == true)
        .filter_map(|parameter| parameter["name"].as_str())
        .filter(|name| !request.parameters.contains_key(*name))
        .collect();
    if !missing.is_empty() {
        return Err(AdminError::bad_request(format!(
            "Missing required parameters: {} ",
            missing.join(",")
        )));
    }
    if let Some(template) = text(&request.parameters, "bodyTemplate") {
        crate::catalogue::webhooks::check_template(&template)
            .map_err(|message| AdminError::invalid("/parameters/bodyTemplate", message))?;
    }
    if let Some(headers) = text(&request.parameters, "customHeaders")
        && headers.len() > 1
        && headers != MASKED
    {
        crate::catalogue::webhooks::parse_headers(&headers)
            .map_err(|message| AdminError::invalid("/parameters/customHeaders", message))?;
    }
    Ok(AddonConfig {
        provider: provider.into_string(),
        description: request.description,
        enabled: request.enabled,
        parameters: request.parameters,
        events: request.events,
        projects: request.projects,
        environments: request.environments,
    })
}

/// A parameter as text: strings as they are, numbers and booleans as JSON writes them.
pub fn text(parameters: &Map<String, Value>, name: &str) -> Option<String> {
    match parameters.get(name)? {
        Value::String(text) => Some(text.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Who may send a webhook a sample event.
pub const SEND_SAMPLE: Access = Access::Root(Permission::UpdateAddon);

/// Sends webhook `id` a sample `feature-created` event now, as its deliveries are sent (its
/// template, headers, address policy, one retry), records the delivery in its list, and answers
/// it. The sample is not written to the audit log.
pub async fn send_sample(ctx: &Runtime, id: i32) -> Result<DeliveryOut, AdminError> {
    let addon = db::run(&ctx.store, move |conn| queries::addons::get(conn, id)).await?;
    let now = ctx.now();
    let sample = flag_store::models::EventRow {
        id: 0,
        event_type: "feature-created".into(),
        created_by: "halyard-sample".into(),
        created_at: now,
        project: Some("default".into()),
        environment: None,
        feature_name: Some("sample-flag".into()),
        data: Some(json!({"name": "sample-flag", "project": "default", "type": "release"}).to_string()),
        pre_data: None,
        created_by_user_id: Some(-1337),
        tags: Some("[]".into()),
        group_type: None,
        group_id: None,
    };
    let formatter = crate::catalogue::events::EventFormatter::new(
        &ctx.settings.unleash_url,
        crate::catalogue::events::Bold::Simple,
    );
    let policy = ctx.settings.webhook_urls.clone();
    let clock = ctx.settings.clock.clone();
    let record = tokio::task::spawn_blocking(move || {
        match crate::catalogue::webhooks::Delivery::build(&addon, sample, &formatter) {
            Ok(delivery) => crate::catalogue::webhooks::send(
                &crate::catalogue::webhooks::agent(policy),
                &delivery,
                &clock,
            ),
            Err(message) => flag_store::models::NewIntegrationEvent {
                integration_id: addon.id,
                created_at: clock.now(),
                state: "failed".into(),
                state_details: message,
                event: String::new(),
                details: json!({}).to_string(),
            },
        }
    })
    .await
    .map_err(|error| AdminError::Internal(format!("the sample delivery stopped: {error}")))?;
    let recorded = record.clone();
    db::run(&ctx.store, move |conn| {
        queries::addons::record_delivery(conn, &recorded)
    })
    .await?;
    let rows = db::run(&ctx.store, move |conn| {
        queries::addons::deliveries(conn, id, 0, 1)
    })
    .await?;
    rows.into_iter()
        .next()
        .map(DeliveryOut::of)
        .ok_or_else(|| AdminError::Internal("the sample delivery was not recorded".into()))
}
