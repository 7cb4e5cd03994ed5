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

/// This server's version, under the edition's key as Unleash writes it (`{"oss": "0.1.0"}`).
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentVersion {
    /// The open-source edition's version.
    pub oss: String,
}

/// The latest version known: always `{}`, since nothing is looked up.
#[derive(Debug, Default, Serialize)]
pub struct LatestVersion {}

/// `GET /api/admin/ui-config` (Unleash's `uiConfigSchema`, the parts this server has).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UiConfig {
    /// The server's version.
    pub version: String,
    /// The public URL.
    pub unleash_url: String,
    /// The path the UI is served under.
    pub base_uri_path: String,
    /// Version details.
    pub version_info: VersionInfo,
    /// `password`: users log in with a password.
    pub authentication_type: &'static str,
    /// Whether email is set up; it is not.
    pub email_enabled: bool,
    /// Whether password logins are off; they are not.
    pub disable_password_auth: bool,
    /// Whether the server is in maintenance mode; it never is.
    pub maintenance_mode: bool,
    /// Origins the frontend API answers.
    pub frontend_api_origins: Vec<String>,
}
