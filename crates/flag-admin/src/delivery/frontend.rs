//! The frontend API: flags evaluated on the server for a browser or mobile SDK's context, from
//! the compiled engine cache, with no database work per request; and the UI configuration that
//! holds its allowed origins.

pub mod types;

use std::net::IpAddr;

use flag_eval::Context;
use flag_store::queries::{self, evaluation::ProjectScope};

use crate::delivery::Delivery;
use crate::delivery::frontend::types::{
    CurrentVersion, FrontendFeatures, FrontendToggle, FrontendVariant, LatestVersion, ResourceLimits,
    SetCors, UiConfig, VersionInfo,
};
use crate::identity::Identity;
use crate::identity::auth::{Access, Caller, FRONTEND_ORIGINS, FrontendAccess};
use crate::{AdminError, runtime::Runtime};
use crate::{
    delivery::playground::types::MAX_CONTEXT_FIELDS, delivery::playground::types::MAX_CONTEXT_VALUE_BYTES,
    runtime::input::pointer_segment,
};

/// A context from `(name, value)` pairs, as Unleash builds it for the frontend API: the known
/// fields by name, `properties[name]` and every other name as a property, `currentTime` ignored
/// (date rules use the server's clock, which reads `now`), `caller_address` when none is given,
/// and a fresh session id when none is given. At most [`MAX_CONTEXT_FIELDS`] fields, each name
/// and value at most [`MAX_CONTEXT_VALUE_BYTES`], as in the playground.
pub fn context_from(
    pairs: impl IntoIterator<Item = (String, String)>,
    caller_address: IpAddr,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Context, AdminError> {
    let mut context = Context::default();
    for (index, (name, value)) in pairs.into_iter().enumerate() {
        // The playground's limits: a context cannot make one request costly.
        if index >= MAX_CONTEXT_FIELDS {
            return Err(AdminError::invalid(
                "/context",
                format!("/context has more than {MAX_CONTEXT_FIELDS} fields and properties"),
            ));
        }
        if name.len() > MAX_CONTEXT_VALUE_BYTES || value.len() > MAX_CONTEXT_VALUE_BYTES {
            let path = format!("/context/{}", pointer_segment(&name));
            return Err(AdminError::invalid(
                &path,
                format!("{path} is longer than {MAX_CONTEXT_VALUE_BYTES} bytes"),
            ));
        }
        if value.is_empty() {
            continue;
        }
        match name.as_str() {
            "userId" => context.user_id = Some(value),
            "sessionId" => context.session_id = Some(value),
            "remoteAddress" => context.remote_address = Some(value),
            "appName" => context.app_name = Some(value),
            "environment" => context.environment = Some(value),
            _ => {
                let property = name
                    .strip_prefix("properties[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .unwrap_or(&name);
                context.properties.insert(property.to_owned(), value);
            }
        }
    }
    if context.remote_address.is_none() {
        context.remote_address = Some(caller_address.to_string());
    }
    let seed = getrandom::u64().map_err(|error| AdminError::Internal(format!("no randomness: {error}")))?;
    if context.session_id.is_none() {
        context.session_id = Some(format!("{seed:016x}"));
    }
    Ok(context.at(now).with_random_seed(seed))
}

/// The `(name, value)` pairs of a JSON context: strings as they are, numbers and booleans as
/// text, `properties` flattened; anything else is a 400.
pub fn json_pairs(
    context: serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<(String, String)>, AdminError> {
    fn text(path: &str, value: serde_json::Value) -> Result<Option<String>, AdminError> {
        match value {
            serde_json::Value::Null => Ok(None),
            serde_json::Value::String(text) => Ok(Some(text)),
            serde_json::Value::Number(number) => Ok(Some(number.to_string())),
            serde_json::Value::Bool(flag) => Ok(Some(flag.to_string())),
            _ => Err(AdminError::invalid(path, format!("{path} must be a string"))),
        }
    }
    let mut pairs = Vec::with_capacity(context.len());
    for (name, value) in context {
        if name == "properties" {
            let serde_json::Value::Object(properties) = value else {
                return Err(AdminError::invalid(
                    "/context/properties",
                    "/context/properties must be an object",
                ));
            };
            for (property, value) in properties {
                if let Some(value) = text(&format!("/context/properties/{property}"), value)? {
                    pairs.push((format!("properties[{property}]"), value));
                }
            }
        } else if let Some(value) = text(&format!("/context/{name}"), value)? {
            pairs.push((name, value));
        }
    }
    Ok(pairs)
}

/// Who may evaluate the flags for a browser SDK: frontend tokens.
pub const EVALUATE: Access = Access::Frontend;

/// Who is told that a path of Unleash's frontend API is not served here (its client features,
/// health and metrics): frontend tokens, as Unleash admits them before it refuses. No operation
/// answers these paths; the declaration is theirs alone.
pub const NOT_SERVED: Access = Access::Frontend;

/// Evaluates every flag of the token's environment and projects for `context`: the enabled
/// ones as JSON.
pub async fn evaluate(
    ctx: &Runtime,
    delivery: &Delivery,
    access: &FrontendAccess,
    context: &Context,
) -> Result<Vec<u8>, AdminError> {
    let scope = access
        .projects
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    let compiled =
        crate::delivery::engines::compile(ctx, delivery, &scope, std::slice::from_ref(&access.environment))
            .await?;
    let Some(compiled) = compiled.first() else {
        return Err(AdminError::Internal("no compiled environment".into()));
    };
    let toggles = compiled
        .features()
        .filter_map(|feature| {
            let variant = compiled.engine.variant(&feature.name, context);
            variant.feature_enabled.then(|| FrontendToggle {
                name: &feature.name,
                enabled: true,
                impression_data: feature.impression_data.unwrap_or(false),
                variant: FrontendVariant {
                    name: variant.name,
                    enabled: variant.enabled,
                    payload: variant.payload,
                    feature_enabled: true,
                    feature_enabled_camel: true,
                },
            })
        })
        .collect();
    let body = serde_json::to_vec(&FrontendFeatures { toggles })
        .map_err(|error| AdminError::Internal(format!("cannot serialise frontend features: {error}")))?;
    Ok(body)
}

/// Who may read the web UI's configuration.
pub const UI_CONFIG: Access = Access::Read;

/// What the UI needs to know about the server, with the frontend API's origins.
pub async fn ui_config(ctx: &Runtime, identity: &Identity) -> Result<UiConfig, AdminError> {
    let origins = crate::identity::auth::frontend_origins(ctx, identity).await?;
    let version = env!("CARGO_PKG_VERSION").to_owned();
    Ok(UiConfig {
        environment: "Open Source",
        flags: serde_json::json!({}),
        email_enabled: false,
        unleash_url: ctx.settings.unleash_url.clone(),
        base_uri_path: String::new(),
        authentication_type: "open-source",
        frontend_api_origins: origins.to_vec(),
        version_info: VersionInfo {
            current: CurrentVersion {
                oss: version.clone(),
                enterprise: String::new(),
            },
            latest: LatestVersion::default(),
            is_latest: true,
        },
        version,
        prometheus_api_available: false,
        impact_metrics: "disabled",
        resource_limits: ResourceLimits::default(),
        disable_password_auth: !crate::identity::oidc::login_options(ctx).await?.password,
        oidc_configured_through_env: crate::identity::oidc::configured_through_env(ctx),
        maintenance_mode: false,
        max_sessions_count: 0,
        unleash_context: serde_json::json!({}),
        stories_page_enabled: false,
    })
}

/// Whether `origin` is `*` or a bare origin (`scheme://host[:port]`, no path, no trailing
/// slash), as Unleash checks it.
fn valid_origin(origin: &str) -> bool {
    if origin == "*" {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    // As a browser sends it: lower case, without the scheme's default port.
    let default_port = match scheme {
        "https" => Some(":443"),
        "http" => Some(":80"),
        _ => None,
    };
    !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c))
        && !rest.is_empty()
        && !rest.contains(['/', '*', '?', '#', '@', ' '])
        && !rest.chars().any(|c| c.is_ascii_uppercase())
        && default_port.is_none_or(|port| !rest.ends_with(port))
}

/// Who may set the origins the frontend API answers.
pub const SET_CORS: Access = Access::Admin;

/// Sets the origins the frontend API answers; every replica applies it on its next request.
pub async fn set_cors(ctx: &Runtime, caller: &Caller, request: SetCors) -> Result<(), AdminError> {
    if let Some((index, origin)) = request
        .frontend_api_origins
        .iter()
        .enumerate()
        .find(|(_, origin)| !valid_origin(origin))
    {
        return Err(AdminError::invalid(
            format!("/frontendApiOrigins/{index}"),
            format!("invalid origin: {origin}"),
        ));
    }
    let origins = request.frontend_api_origins;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::settings::put(conn, FRONTEND_ORIGINS, &origins, actor, now)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::valid_origin;

    #[test]
    fn origins_are_star_or_bare() {
        for good in ["*", "https://app.example.com", "http://localhost:3000"] {
            assert!(valid_origin(good), "{good}");
        }
        for bad in [
            "",
            "app.example.com",
            "https://app.example.com/",
            "https://*.example.com",
            "https://",
            "HTTPS://app.example.com",
            "https://App.example.com",
            "https://app.example.com:443",
        ] {
            assert!(!valid_origin(bad), "{bad}");
        }
    }
}
