//! Bodies and answers of `/api/admin/user-admin`.

use flag_store::models::{RoleRow, UserRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::UserOut;
use crate::domain::RootRole;

/// A role as Unleash lists it: `{id, name, type}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Role {
    /// Unleash's id of the role.
    id: i32,
    /// `Admin`, `Editor`, `Viewer`, ...
    name: String,
    /// `root` or `project`.
    #[serde(rename = "type")]
    #[schema(example = "root")]
    role_type: String,
}

impl From<RootRole> for Role {
    fn from(role: RootRole) -> Self {
        Self {
            id: role.id(),
            name: role.name().to_owned(),
            role_type: if role.is_root() { "root" } else { "project" }.to_owned(),
        }
    }
}

impl From<RoleRow> for Role {
    fn from(role: RoleRow) -> Self {
        Self {
            id: role.id,
            name: role.name,
            role_type: role.role_type,
        }
    }
}

/// Every user, and the root roles they can hold (Unleash's `usersSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsersResponse {
    users: Vec<UserOut>,
    /// Admin, Editor and Viewer, in id order.
    root_roles: Vec<Role>,
}

impl TryFrom<Vec<UserRow>> for UsersResponse {
    type Error = crate::error::AdminError;

    fn try_from(users: Vec<UserRow>) -> Result<Self, Self::Error> {
        Ok(Self {
            users: users
                .into_iter()
                .map(UserOut::try_from)
                .collect::<Result<_, _>>()?,
            root_roles: RootRole::ROOT.into_iter().map(Role::from).collect(),
        })
    }
}

/// Body of `POST /api/admin/user-admin` (Unleash's `createUserSchema`): an email, a username or
/// both, and a root role.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateUserRequest {
    /// Lower-cased when stored; at most 255 characters.
    #[serde(default)]
    #[schema(max_length = 255)]
    pub email: Option<String>,
    /// At most 255 characters, without `@`.
    #[serde(default)]
    #[schema(max_length = 255)]
    pub username: Option<String>,
    /// Display name, at most 255 characters.
    #[serde(default)]
    #[schema(max_length = 255)]
    pub name: Option<String>,
    /// The user's root role.
    pub root_role: RootRole,
    /// When given, it must follow Unleash's password rules.
    #[serde(default)]
    #[schema(min_length = 10, max_length = 128)]
    pub password: Option<String>,
    /// Accepted and ignored: no email is sent.
    #[serde(default)]
    pub send_email: Option<bool>,
}

/// Body of `PUT /api/admin/user-admin/{id}`: Unleash's `updateUserSchema`. Other fields are
/// ignored, as Unleash ignores them.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpdateUserRequest {
    /// Lower-cased when stored; at most 255 characters.
    #[serde(default)]
    #[schema(max_length = 255)]
    pub email: Option<String>,
    /// Display name, at most 255 characters.
    #[serde(default)]
    #[schema(max_length = 255)]
    pub name: Option<String>,
    /// The new root role.
    #[serde(default)]
    pub root_role: Option<RootRole>,
}
