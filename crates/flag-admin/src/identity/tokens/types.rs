//! API tokens: `/api/admin/api-tokens`.

use flag_store::models::ApiTokenRow;
use serde::de::IntoDeserializer;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::runtime::domain::{Timestamp, TokenType, TokenTypeSchema};
use crate::runtime::input::iso;

/// How a token's secret names its projects: the one project, or `[]` for several.
pub fn project_part(projects: &[String]) -> String {
    match projects {
        [single] => single.clone(),
        _ => "[]".into(),
    }
}

pub use flag_store::queries::api_tokens::project_field;

/// A token in a list. The secret is never shown again: only its verifier is kept, and `secret`
/// shows the public part (`<project>:<environment>.`) followed by `***`. The keys are Unleash's
/// `apiTokenSchema`, which allows no others: generated clients refuse an answer with more.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenOut {
    /// Its id, for the console's delete form; Unleash's answer has no id, so neither has ours.
    #[serde(skip)]
    pub id: i32,
    /// The public part of its secret, then `***`: `*:development.***`.
    pub secret: String,
    /// Its name.
    pub token_name: String,
    /// `admin`, `client` or `frontend`: a backend token reads as `client`, as Unleash lists it.
    #[serde(rename = "type")]
    pub token_type: String,
    /// Its projects joined with commas: `*` for every project.
    pub project: String,
    /// The projects it is limited to, or `["*"]`.
    pub projects: Vec<String>,
    /// The environment it is limited to, or `*`.
    pub environment: String,
    /// When it stops working; absent when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// Always `null`.
    pub alias: Option<String>,
    /// When it was last used; absent before its first use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seen_at: Option<String>,
    /// Always false: the secret has Unleash's first format, `<project>:<environment>.<random>`.
    pub secure: bool,
}

impl From<ApiTokenRow> for TokenOut {
    fn from(row: ApiTokenRow) -> Self {
        let projects = row.projects.into_vec();
        // Unleash's token store reads a backend token back as a client token ("backend token
        // type needs to be supported in Edge before being able to return them in the API").
        let token_type = match row.token_type {
            TokenType::Backend => TokenType::Client,
            other => other,
        };
        Self {
            id: row.id,
            secret: format!("{}:{}.***", project_part(&projects), row.environment),
            token_name: row.token_name,
            token_type: token_type.as_str().to_owned(),
            project: project_field(&projects),
            projects,
            environment: row.environment,
            expires_at: row.expires_at.map(iso),
            created_at: iso(row.created_at),
            alias: None,
            seen_at: row.seen_at.map(iso),
            secure: false,
        }
    }
}

/// `GET /api/admin/api-tokens`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokensOut {
    /// Every token.
    pub tokens: Vec<TokenOut>,
}

/// A token just created: the only answer that shows its secret. As in Unleash, it has the type
/// as created, no `seenAt`, and `expiresAt` only when one was given.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedTokenOut {
    /// The secret to send in `Authorization`.
    pub secret: String,
    /// Its name.
    pub token_name: String,
    /// `client`, `backend` or `frontend`, as it was asked for.
    #[serde(rename = "type")]
    pub token_type: String,
    /// Its projects joined with commas: `*` for every project.
    pub project: String,
    /// Its projects.
    pub projects: Vec<String>,
    /// The environment it is limited to.
    pub environment: String,
    /// When it stops working; absent when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// Always `null`.
    pub alias: Option<String>,
    /// Always false: the secret has Unleash's first format.
    pub secure: bool,
}

/// Body of `POST /api/admin/api-tokens`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreateToken {
    /// Its name, not empty; `username` stands in for it when it is absent.
    #[serde(default)]
    pub token_name: Option<String>,
    /// The older name of `tokenName`, which scripts written for earlier Unleash versions send.
    #[serde(default)]
    pub username: Option<String>,
    /// `client`, `backend` or `frontend`, in any letter case; admin tokens are not made here.
    #[serde(rename = "type")]
    #[schema(value_type = TokenTypeSchema)]
    pub token_type: TokenType,
    /// The environment it is limited to; `development` when absent.
    #[serde(default)]
    pub environment: Option<String>,
    /// The projects it is limited to; every project when absent.
    #[serde(default)]
    pub projects: Option<Vec<String>>,
    /// One project, as older clients send it.
    #[serde(default)]
    pub project: Option<String>,
    /// When it stops working.
    #[serde(default)]
    pub expires_at: Option<Timestamp>,
}

impl CreateToken {
    /// A token named `token_name` of the type `token_type` (read as a body's `type` is), for
    /// `environment` and every project (`*`); when the type does not read, why, as a body is
    /// told.
    pub fn new(token_name: String, token_type: &str, environment: String) -> Result<Self, String> {
        let token_type = TokenType::deserialize(token_type.into_deserializer())
            .map_err(|error: serde::de::value::Error| error.to_string())?;
        Ok(Self {
            token_name: Some(token_name),
            username: None,
            token_type,
            environment: Some(environment),
            projects: Some(vec!["*".to_owned()]),
            project: None,
            expires_at: None,
        })
    }
}

/// Body of `PUT /api/admin/api-tokens/{token}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateToken {
    /// When the token stops working; a time in the past revokes it.
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: Timestamp,
}
