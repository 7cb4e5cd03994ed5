//! Webhooks, as Unleash's `webhook` addon: create, read, replace and delete them, the provider
//! they belong to, and what their deliveries did. [`crate::webhooks`] delivers.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

use flag_store::models::AddonConfig;
use flag_store::queries;
use serde_json::{Map, Value, json};

use crate::auth::Caller;
use crate::domain::ResourceName;
use crate::dto::addons::{
    AddonIn, AddonOut, AddonTypeOut, AddonsOut, DeliveriesOut, DeliveriesQuery, DeliveryOut,
};
use crate::{AdminError, Ctx, db};

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

/// Which addresses a webhook may post to. By default only public ones: a webhook must not
/// reach the server's own network (cloud metadata, databases, admin ports).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Any address at all (`UNLEASH_ALLOW_PRIVATE_URL_IN_INTEGRATION`).
    pub allow_private: bool,
    /// Hosts whose addresses may be private (`UNLEASH_ALLOW_LIST_INTEGRATION`), compared
    /// without letter case.
    pub allow_list: Vec<String>,
}

impl UrlPolicy {
    /// Whether `host` may post to `address`.
    pub fn permits(&self, host: &str, address: IpAddr) -> bool {
        self.allow_private
            || self
                .allow_list
                .iter()
                .any(|allowed| allowed.eq_ignore_ascii_case(host))
            || is_public(address)
    }

    /// Checks a webhook URL as Unleash does when it is saved: `http` or `https`, a host that
    /// resolves, and only addresses the policy permits. Resolving blocks.
    pub fn check(&self, text: &str) -> Result<url::Url, String> {
        let url = url::Url::parse(text).map_err(|error| format!("Invalid URL {text:?}: {error}"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("Invalid protocol: {}:", url.scheme()));
        }
        let host = match url.host() {
            Some(url::Host::Domain(domain)) => domain.to_ascii_lowercase(),
            Some(url::Host::Ipv4(address)) => address.to_string(),
            Some(url::Host::Ipv6(address)) => address.to_string(),
            None => return Err(format!("Invalid URL {text:?}: no host")),
        };
        let port = url.port_or_known_default().unwrap_or(80);
        let addresses: Vec<IpAddr> = (host.as_str(), port)
            .to_socket_addrs()
            .map(|addresses| addresses.map(|address| address.ip()).collect())
            .unwrap_or_default();
        if addresses.is_empty() {
            return Err(format!("Hostname did not resolve: {host}"));
        }
        if let Some(blocked) = addresses.iter().find(|address| !self.permits(&host, **address)) {
            return Err(format!("URL resolves to a non-public address: {blocked}"));
        }
        Ok(url)
    }
}

/// Whether an address is on the public internet: not loopback, private, link-local, shared,
/// documentation, benchmarking, multicast or reserved space (Unleash's list).
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn in_v4(address: Ipv4Addr, network: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(address) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

fn is_public_v4(address: Ipv4Addr) -> bool {
    const BLOCKED: [([u8; 4], u32); 14] = [
        ([127, 0, 0, 0], 8),
        ([10, 0, 0, 0], 8),
        ([172, 16, 0, 0], 12),
        ([192, 168, 0, 0], 16),
        ([169, 254, 0, 0], 16),
        ([0, 0, 0, 0], 8),
        ([100, 64, 0, 0], 10),
        ([192, 0, 0, 0], 24),
        ([192, 0, 2, 0], 24),
        ([198, 18, 0, 0], 15),
        ([198, 51, 100, 0], 24),
        ([203, 0, 113, 0], 24),
        ([224, 0, 0, 0], 4),
        ([240, 0, 0, 0], 4),
    ];
    !BLOCKED
        .iter()
        .any(|(network, prefix)| in_v4(address, *network, *prefix))
}

fn is_public_v6(address: Ipv6Addr) -> bool {
    const BLOCKED: [(u128, u32); 8] = [
        (1, 128),                                        // ::1
        (0, 128),                                        // ::
        (0xfe80 << 112, 10),                             // link-local
        (0xfc00 << 112, 7),                              // unique local
        (0xff00 << 112, 8),                              // multicast
        (0x2001_0db8 << 96, 32),                         // documentation
        (0x2002 << 112, 16),                             // 6to4
        (0x0064_ff9b_0000_0000_0000_0000_0000_0000, 96), // NAT64
    ];
    let bits = u128::from(address);
    !BLOCKED.iter().any(|(network, prefix)| {
        let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
        bits & mask == network & mask
    })
}

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

/// Every webhook, sensitive parameters masked, and the providers.
pub async fn list(ctx: &Ctx) -> Result<AddonsOut, AdminError> {
    let addons = db::run(&ctx.store, queries::addons::list).await?;
    Ok(AddonsOut {
        addons: addons
            .into_iter()
            .map(|addon| AddonOut::of(addon).stored().masked(&SENSITIVE))
            .collect(),
        providers: providers(),
    })
}

/// One webhook, sensitive parameters masked.
pub async fn get(ctx: &Ctx, id: i32) -> Result<AddonOut, AdminError> {
    let addon = db::run(&ctx.store, move |conn| queries::addons::get(conn, id)).await?;
    Ok(AddonOut::of(addon).stored().masked(&SENSITIVE))
}

/// Creates a webhook; the answer shows its parameters as given.
pub async fn create(ctx: &Ctx, caller: &Caller, request: AddonIn) -> Result<AddonOut, AdminError> {
    let config = parse(request)?;
    check_url(ctx, &config).await?;
    let actor = caller.actor();
    let now = crate::now();
    let addon = db::run(&ctx.store, move |conn| {
        queries::addons::create(conn, &config, &actor, now)
    })
    .await?;
    Ok(AddonOut::of(addon).created())
}

/// Replaces a webhook's settings. A sensitive parameter given as [`MASKED`] keeps its stored
/// value; the answer shows the parameters as stored.
pub async fn update(ctx: &Ctx, caller: &Caller, id: i32, request: AddonIn) -> Result<AddonOut, AdminError> {
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
    let actor = caller.actor();
    let now = crate::now();
    let addon = db::run(&ctx.store, move |conn| {
        queries::addons::update(conn, id, &config, &actor, now)
    })
    .await?;
    Ok(AddonOut::of(addon).stored())
}

/// Deletes a webhook.
pub async fn delete(ctx: &Ctx, caller: &Caller, id: i32) -> Result<(), AdminError> {
    let actor = caller.actor();
    let now = crate::now();
    db::run(&ctx.store, move |conn| {
        queries::addons::delete(conn, id, &actor, now)
    })
    .await
}

/// A webhook's deliveries, newest first: `limit` 1 to 100 (50 otherwise) after `offset`.
pub async fn deliveries(ctx: &Ctx, id: i32, query: DeliveriesQuery) -> Result<DeliveriesOut, AdminError> {
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
async fn check_url(ctx: &Ctx, config: &AddonConfig) -> Result<(), AdminError> {
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
        crate::webhooks::check_template(&template)
            .map_err(|message| AdminError::invalid("/parameters/bodyTemplate", message))?;
    }
    if let Some(headers) = text(&request.parameters, "customHeaders")
        && headers.len() > 1
        && headers != MASKED
    {
        crate::webhooks::parse_headers(&headers)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_reserved_addresses_are_not_public() -> Result<(), std::net::AddrParseError> {
        for address in [
            "127.0.0.1",
            "10.1.2.3",
            "172.31.255.255",
            "192.168.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "64:ff9b::1",
        ] {
            let address: IpAddr = address.parse()?;
            assert!(!is_public(address), "{address} counted as public");
        }
        for address in ["93.184.216.34", "172.32.0.1", "8.8.8.8", "2606:4700::1111"] {
            let address: IpAddr = address.parse()?;
            assert!(is_public(address), "{address} counted as private");
        }
        Ok(())
    }

    #[test]
    fn the_policy_refuses_private_hosts_unless_allowed() {
        let strict = UrlPolicy::default();
        assert_eq!(
            strict.check("http://127.0.0.1:9/hook").err().as_deref(),
            Some("URL resolves to a non-public address: 127.0.0.1")
        );
        assert_eq!(
            strict.check("ftp://example.com/").err().as_deref(),
            Some("Invalid protocol: ftp:")
        );
        assert!(
            strict
                .check("not a url")
                .is_err_and(|error| error.starts_with("Invalid URL"))
        );
        let listed = UrlPolicy {
            allow_private: false,
            allow_list: vec!["LOCALHOST".into()],
        };
        assert!(listed.check("http://localhost:9/hook").is_ok());
        assert!(listed.check("http://127.0.0.1:9/hook").is_err());
        let open = UrlPolicy {
            allow_private: true,
            allow_list: Vec::new(),
        };
        assert!(open.check("http://127.0.0.1:9/hook").is_ok());
    }
}
