//! Bodies and answers of `/api/admin/user-admin`.

use flag_store::models::{RoleRow, UserRow};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::runtime::domain::{AnyRootRole, RootRole};
use crate::runtime::input::iso;

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

impl Role {
    /// Unleash's id of the role.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }
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

impl UsersResponse {
    /// Every user.
    pub fn users(&self) -> &[UserOut] {
        &self.users
    }

    /// The root roles users can hold, in id order.
    pub fn root_roles(&self) -> &[Role] {
        &self.root_roles
    }
}

impl UsersResponse {
    /// `users`, with the root roles they can hold: the built-in ones, then the custom root
    /// roles among `roles`.
    pub fn new(users: Vec<UserRow>, roles: Vec<RoleRow>) -> Self {
        Self {
            users: users.into_iter().map(UserOut::from).collect(),
            root_roles: RootRole::ROOT
                .into_iter()
                .map(Role::from)
                .chain(
                    roles
                        .into_iter()
                        .filter(|role| role.role_type == "root-custom")
                        .map(Role::from),
                )
                .collect(),
        }
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
    /// The user's root role: built in, or a custom root role.
    pub root_role: AnyRootRole,
    /// When given, it must follow Unleash's password rules.
    #[serde(default)]
    #[schema(min_length = 10, max_length = 128)]
    pub password: Option<String>,
    /// Accepted and ignored: no email is sent.
    #[serde(default)]
    pub send_email: Option<bool>,
}

/// Body of `POST /api/admin/user-admin/{id}/change-password`: Unleash's `passwordSchema`. An
/// admin sets the password, so `oldPassword` and `confirmPassword` are accepted and not read, as
/// Unleash does.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PasswordRequest {
    /// The new password; it must follow Unleash's rules.
    pub password: String,
    /// For users changing their own password; not read here.
    #[serde(default)]
    pub old_password: Option<String>,
    /// For users changing their own password; not read here.
    #[serde(default)]
    pub confirm_password: Option<String>,
}

/// The passwords are left out.
impl std::fmt::Debug for PasswordRequest {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PasswordRequest").finish_non_exhaustive()
    }
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
    /// The new root role: built in, or a custom root role.
    #[serde(default)]
    pub root_role: Option<AnyRootRole>,
}

impl UpdateUserRequest {
    /// A change of root role alone, to the role with the id `role`, read as a body's `rootRole`
    /// number is; when it is no root role, why, as a body is told.
    pub fn role_change(role: i64) -> Result<Self, String> {
        Ok(Self {
            email: None,
            name: None,
            root_role: Some(AnyRootRole::from_id(role)?),
        })
    }
}

/// The user as Unleash returns it (Unleash's `userSchema`), never with a password or its hash.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserOut {
    /// The user's id.
    id: i32,
    /// Display name.
    name: Option<String>,
    /// Login name; absent when the user has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String)]
    username: Option<String>,
    /// Email, lower-cased.
    email: Option<String>,
    /// A Gravatar address made from the email or username.
    image_url: String,
    /// Last login.
    #[schema(format = DateTime)]
    seen_at: Option<String>,
    /// Failed logins since the last success.
    login_attempts: i32,
    #[schema(format = DateTime)]
    created_at: String,
    /// Always `User`.
    #[schema(example = "User")]
    account_type: &'static str,
    /// Always null: there is no SCIM.
    scim_id: Option<String>,
    /// Always null: there are no paid seats.
    seat_type: Option<String>,
    /// Always null: not asked at signup.
    company_role: Option<String>,
    /// Always null: not asked at signup.
    product_updates_email_consent: Option<bool>,
    /// 1 (Admin), 2 (Editor), 3 (Viewer), or the id of the custom root role they hold.
    root_role: i32,
    /// Their built-in root role.
    #[serde(skip)]
    built_in: RootRole,
}

/// The Gravatar address Unleash makes for a user: the SHA-256 of their email, else username,
/// else id, an address (anything with `@`) lower-cased and trimmed first, as Gravatar asks.
pub fn image_url(email: Option<&str>, username: Option<&str>, id: i32) -> String {
    let key = email
        .filter(|email| !email.is_empty())
        .or(username.filter(|username| !username.is_empty()))
        .map_or_else(
            || id.to_string(),
            |key| {
                if key.contains('@') {
                    key.trim().to_lowercase()
                } else {
                    key.to_owned()
                }
            },
        );
    format!(
        "https://gravatar.com/avatar/{}?s=42&d=retro&r=g",
        hex::encode(Sha256::digest(key))
    )
}
impl UserOut {
    /// Their id.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// Their display name.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Their login name.
    pub fn username(&self) -> Option<&str> {
        self.username.as_deref()
    }

    /// Their email.
    pub fn email(&self) -> Option<&str> {
        self.email.as_deref()
    }

    /// Their root role's id: built in, or custom.
    pub fn root_role(&self) -> i32 {
        self.root_role
    }

    /// Their built-in root role.
    pub fn built_in_role(&self) -> RootRole {
        self.built_in
    }
}

impl From<UserRow> for UserOut {
    /// The store has read the root role: a stored one that is none fails the read, never reads
    /// as a default role.
    fn from(user: UserRow) -> Self {
        Self {
            image_url: image_url(user.email.as_deref(), user.username.as_deref(), user.id),
            id: user.id,
            name: user.name,
            username: user.username,
            email: user.email,
            seen_at: user.seen_at.map(iso),
            login_attempts: user.login_attempts,
            created_at: iso(user.created_at),
            account_type: "User",
            scim_id: None,
            seat_type: None,
            company_role: None,
            product_updates_email_consent: None,
            root_role: user.custom_root_role.unwrap_or(user.root_role.id()),
            built_in: user.root_role,
        }
    }
}
