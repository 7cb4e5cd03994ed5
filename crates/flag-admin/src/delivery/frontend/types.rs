//! The frontend API's answers (`/api/frontend`) and the UI configuration that sets its origins.

use flag_eval::Payload;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The variant a browser SDK gets (Unleash's `variantSchema` in the frontend API).
#[derive(Debug, Serialize, ToSchema)]
pub struct FrontendVariant<'a> {
    /// The variant's name, or `disabled`.
    pub name: &'a str,
    /// Whether a variant was chosen.
    pub enabled: bool,
    /// Its payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub payload: Option<&'a Payload>,
    /// Whether the flag is enabled (always, since only enabled flags are listed).
    pub feature_enabled: bool,
    /// The same, as newer SDKs read it.
    #[serde(rename = "featureEnabled")]
    pub feature_enabled_camel: bool,
}

/// One enabled flag (Unleash's `frontendApiFeatureSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FrontendToggle<'a> {
    /// The flag.
    pub name: &'a str,
    /// Always true: only enabled flags are listed.
    pub enabled: bool,
    /// Its variant for this context.
    pub variant: FrontendVariant<'a>,
    /// Whether the SDK should emit impression events.
    pub impression_data: bool,
}

/// `GET` and `POST /api/frontend` (Unleash's `frontendApiFeaturesSchema`).
#[derive(Debug, Serialize, ToSchema)]
pub struct FrontendFeatures<'a> {
    /// The flags enabled for the context, in the playground's order.
    pub toggles: Vec<FrontendToggle<'a>>,
}

/// `POST /api/frontend`'s body.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct FrontendRequest {
    /// The context; empty when absent.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub context: serde_json::Map<String, serde_json::Value>,
}

/// `POST /api/admin/ui-config/cors`'s body (Unleash's `setCorsSchema`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SetCors {
    /// Origins the frontend API answers, each `*` or `scheme://host[:port]`.
    pub frontend_api_origins: Vec<String>,
}

/// The server's version as the UI shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionInfo {
    /// This version.
    pub current: CurrentVersion,
    /// The latest version known: none, since nothing is looked up.
    #[schema(value_type = std::collections::BTreeMap<String, String>)]
    pub latest: LatestVersion,
    /// Always true: no newer version is looked up.
    pub is_latest: bool,
}

/// This server's version, under the edition's key as Unleash writes it: an empty `enterprise`
/// tells Unleash's web UI that no enterprise feature is there to ask for.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentVersion {
    /// The open-source edition's version.
    pub oss: String,
    /// Always empty.
    pub enterprise: String,
}

/// The latest version known: always `{}`, since nothing is looked up.
#[derive(Debug, Default, Serialize)]
pub struct LatestVersion {}

/// `GET /api/admin/ui-config`: Unleash's `uiConfigSchema` as its open-source edition fills it,
/// so Unleash's own web UI runs in its open-source mode.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiConfig {
    /// `Open Source`.
    pub environment: &'static str,
    /// The web UI's feature switches: all off.
    #[schema(value_type = Object)]
    pub flags: serde_json::Value,
    /// The server's version.
    pub version: String,
    /// Whether email is set up; it is not.
    pub email_enabled: bool,
    /// The public URL.
    pub unleash_url: String,
    /// The path the UI is served under.
    pub base_uri_path: String,
    /// `open-source`: users log in with a password.
    pub authentication_type: &'static str,
    /// Origins the frontend API answers.
    pub frontend_api_origins: Vec<String>,
    /// Version details.
    pub version_info: VersionInfo,
    /// Whether a Prometheus API is set up for the UI's charts; it is not.
    #[serde(rename = "prometheusAPIAvailable")]
    pub prometheus_api_available: bool,
    /// `disabled`.
    pub impact_metrics: &'static str,
    /// The limits the UI checks forms against.
    pub resource_limits: ResourceLimits,
    /// Whether password logins are off (only ever while single sign-on is on).
    pub disable_password_auth: bool,
    /// Whether the OpenID Connect settings come from the environment, so the UI shows them
    /// read-only.
    pub oidc_configured_through_env: bool,
    /// Whether the server is in maintenance mode; it never is.
    pub maintenance_mode: bool,
    /// Sessions a user may have at once before the UI warns: 0, no warning.
    pub max_sessions_count: u32,
    /// Context for the UI's own flags: none.
    #[schema(value_type = Object)]
    pub unleash_context: serde_json::Value,
    /// Always false.
    pub stories_page_enabled: bool,
}

/// The limits Unleash's web UI checks its forms against, as Unleash's defaults.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(clippy::struct_field_names, reason = "the names are Unleash's")]
pub struct ResourceLimits {
    /// Values across a segment's constraints.
    pub segment_values: u32,
    /// Segments on one strategy.
    pub strategy_segments: u32,
    /// Signal endpoints.
    pub signal_endpoints: u32,
    /// Actions of an action set.
    pub action_set_actions: u32,
    /// Action sets of a project.
    pub action_sets_per_project: u32,
    /// Filters of an action set.
    pub action_set_filters: u32,
    /// Values of an action set's filter.
    pub action_set_filter_values: u32,
    /// Tokens of a signal endpoint.
    pub signal_tokens_per_endpoint: u32,
    /// Strategies of a flag in one environment.
    pub feature_environment_strategies: u32,
    /// Values of one constraint.
    pub constraint_values: u32,
    /// Constraints of one strategy.
    pub constraints: u32,
    /// Environments.
    pub environments: u32,
    /// Projects.
    pub projects: u32,
    /// API tokens.
    pub api_tokens: u32,
    /// Segments.
    pub segments: u32,
    /// Flags.
    pub feature_flags: u32,
    /// Release templates.
    pub release_templates: u32,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        Self {
            segment_values: 1000,
            strategy_segments: 5,
            signal_endpoints: 5,
            action_set_actions: 10,
            action_sets_per_project: 5,
            action_set_filters: 5,
            action_set_filter_values: 25,
            signal_tokens_per_endpoint: 5,
            feature_environment_strategies: 30,
            constraint_values: 250,
            constraints: 30,
            environments: 50,
            projects: 500,
            api_tokens: 2000,
            segments: 300,
            feature_flags: 5000,
            release_templates: 10,
        }
    }
}
