//! The signed-in caller as Unleash's web UI reads it: `GET /api/admin/user` and its profile.

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::identity::users::types::UserOut;

/// One permission: at the root when it names no project.
#[derive(Debug, Serialize, ToSchema)]
pub struct PermissionOut {
    /// Its name, such as `ADMIN` or `UPDATE_FEATURE`.
    pub permission: &'static str,
    /// The projects it holds in; `*` for every one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<&'static str>,
    /// The environments it holds in; `*` for every one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<&'static str>,
}

/// `GET /api/admin/user`.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeOut {
    /// The user.
    pub user: UserOut,
    /// What they may do.
    pub permissions: Vec<PermissionOut>,
    /// Answers to feedback prompts: none are asked here.
    #[schema(value_type = Vec<Object>)]
    pub feedback: Vec<serde_json::Value>,
    /// The one-time dialogs they closed.
    pub splash: BTreeMap<String, bool>,
}

/// A role.
#[derive(Debug, Serialize, ToSchema)]
pub struct RoleOut {
    /// Its id.
    pub id: i32,
    /// Its name.
    pub name: &'static str,
    /// `root` or `project`.
    #[serde(rename = "type")]
    pub role_type: &'static str,
    /// What it allows.
    pub description: &'static str,
}

/// `GET /api/admin/user/profile`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProfileOut {
    /// The projects the user works in.
    pub projects: Vec<String>,
    /// The user's groups: none here.
    #[schema(value_type = Vec<Object>)]
    pub groups: Vec<serde_json::Value>,
    /// The user's root role.
    pub root_role: RoleOut,
    /// The reports the user is subscribed to.
    pub subscriptions: Vec<String>,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub features: Vec<serde_json::Value>,
    /// Whether the user has a password to change.
    pub can_change_password: bool,
}
