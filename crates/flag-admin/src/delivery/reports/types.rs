//! Unleash Edge's own calls: token validation and its report about itself.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::identity::auth::ValidToken;

/// `POST /edge/validate`'s body.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ValidateRequest {
    /// Tokens to check.
    pub tokens: Vec<String>,
}

/// `POST /edge/validate`'s answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ValidTokens {
    /// The valid tokens among those asked about, with what they grant.
    pub tokens: Vec<ValidToken>,
}

/// The part of Edge's instance report this server keeps.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EdgeInstance {
    /// The Edge instance: at most 255 characters, without control characters.
    #[schema(max_length = 255)]
    pub identifier: String,
    /// Its application name (`unleash-edge`): at most 255 characters, without control
    /// characters.
    #[schema(max_length = 255)]
    pub app_name: String,
    /// Its version.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub edge_version: Option<String>,
}
