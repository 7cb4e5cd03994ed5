//! API tokens: `/api/admin/api-tokens`.

use flag_store::StoreError;
use flag_store::models::ApiTokenRow;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::{Timestamp, TokenType};
use crate::dto::iso;

/// How a token's secret names its projects: the one project, or `[]` for several.
pub fn project_part(projects: &[String]) -> String {
    match projects {
        [single] => single.clone(),
        _ => "[]".into(),
    }
}

/// A token in the list. The secret is never shown again: only its verifier is kept, and `secret`
/// shows the public part (`<project>:<environment>.`) followed by `***`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenOut {
    /// Its id.
    pub id: i32,
    /// The public part of its secret, then `***`: `*:development.***`.
    pub secret: String,
    /// Its name.
    pub token_name: String,
    /// Its name again, as Unleash lists it.
    pub username: String,
    /// `admin`, `client`, `backend` or `frontend`.
    #[serde(rename = "type")]
    pub token_type: String,
    /// The environment it is limited to, or `*`.
    pub environment: String,
    /// Its one project, or `[]` when it has several.
    pub project: String,
    /// The projects it is limited to, or `["*"]`.
    pub projects: Vec<String>,
    /// When it stops working.
    pub expires_at: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// When it was last used.
    pub seen_at: Option<String>,
    /// Always `null`.
    pub alias: Option<String>,
}

impl TryFrom<ApiTokenRow> for TokenOut {
    type Error = StoreError;

    fn try_from(row: ApiTokenRow) -> Result<Self, StoreError> {
        let projects = row.projects()?;
        let project = project_part(&projects);
        Ok(Self {
            secret: format!("{project}:{}.***", row.environment),
            project,
            projects,
            id: row.id,
            username: row.token_name.clone(),
            token_name: row.token_name,
            token_type: row.token_type,
            environment: row.environment,
            expires_at: row.expires_at.map(iso),
            created_at: iso(row.created_at),
            seen_at: row.seen_at.map(iso),
            alias: None,
        })
    }
}

/// `GET /api/admin/api-tokens`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokensOut {
    /// Every token.
    pub tokens: Vec<TokenOut>,
}

/// A token just created: the only answer that shows its secret.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedTokenOut {
    /// The secret to send in `Authorization`.
    pub secret: String,
    /// Its name.
    pub token_name: String,
    /// `client`, `backend` or `frontend`.
    #[serde(rename = "type")]
    pub token_type: String,
    /// The environment it is limited to.
    pub environment: String,
    /// Its one project, or `[]` when it has several.
    pub project: String,
    /// Its projects.
    pub projects: Vec<String>,
    /// When it stops working.
    pub expires_at: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// Always `null` at creation.
    pub seen_at: Option<String>,
    /// Always `null`.
    pub alias: Option<String>,
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

/// Body of `PUT /api/admin/api-tokens/{token}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateToken {
    /// When the token stops working; a time in the past revokes it.
    #[schema(value_type = String, format = DateTime)]
    pub expires_at: Timestamp,
}
