//! Bodies and answers of roles, permissions, groups, project access and service accounts, in
//! Unleash's shapes (what its Terraform providers parse).

use flag_store::models::{GroupRow, PersonalTokenRow, RoleRow, UserRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::identity::teams::grants::{self, Scope};
use crate::runtime::domain::Timestamp;
use crate::runtime::input::iso;

/// A permission, as `GET /api/admin/permissions` and a role's permissions list it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = AdminPermission)]
pub struct PermissionOut {
    /// Its place in the list of permissions, from 1.
    pub id: i32,
    /// Unleash's name (`CREATE_FEATURE`).
    pub name: String,
    /// For people.
    pub display_name: String,
    /// `root`, `project` or `environment`.
    #[serde(rename = "type")]
    pub scope: String,
    /// The environment of an environment permission held by a role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl PermissionOut {
    /// The permission `name` (known), in `environment` when it is one of an environment.
    pub fn named(name: &str, environment: &str) -> Option<Self> {
        let (id, name, display_name, scope) = grants::permission(name)?;
        Some(Self {
            id,
            name: name.to_owned(),
            display_name: display_name.to_owned(),
            scope: scope.as_str().to_owned(),
            environment: (scope == Scope::Environment && !environment.is_empty())
                .then(|| environment.to_owned()),
        })
    }
}

/// One environment's permissions.
#[derive(Debug, Serialize, ToSchema)]
pub struct EnvironmentPermissionsOut {
    /// The environment.
    pub name: String,
    /// Its permissions, each naming it.
    pub permissions: Vec<PermissionOut>,
}

/// Every permission, by scope.
#[derive(Debug, Serialize, ToSchema)]
pub struct PermissionLists {
    /// Root permissions.
    pub root: Vec<PermissionOut>,
    /// Project permissions.
    pub project: Vec<PermissionOut>,
    /// Environment permissions, per environment.
    pub environments: Vec<EnvironmentPermissionsOut>,
}

/// `GET /api/admin/permissions`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PermissionsOut {
    /// Always 1.
    pub version: i32,
    /// The permissions.
    pub permissions: PermissionLists,
}

/// A role: `{id, name, type, description}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = TeamRole)]
pub struct RoleOut {
    /// Its id.
    pub id: i32,
    /// `root`, `root-custom`, `project` or `custom`.
    #[serde(rename = "type")]
    pub role_type: String,
    /// Its name.
    pub name: String,
    /// Free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl From<RoleRow> for RoleOut {
    fn from(role: RoleRow) -> Self {
        Self {
            id: role.id,
            role_type: role.role_type,
            name: role.name,
            description: role.description,
        }
    }
}

/// A role with its permissions: `GET /api/admin/roles/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RoleWithPermissionsOut {
    /// The role.
    #[serde(flatten)]
    pub role: RoleOut,
    /// What it holds.
    pub permissions: Vec<PermissionOut>,
}

/// `GET /api/admin/roles`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RolesOut {
    /// Always 1.
    pub version: i32,
    /// Every role.
    pub roles: Vec<RoleOut>,
}

/// The answer to a role written: one role under `roles`, as Unleash answers it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RoleWrittenOut {
    /// Always 1.
    pub version: i32,
    /// The role.
    pub roles: RoleOut,
}

/// The kind of custom role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
pub enum CustomRoleType {
    /// Root permissions, held everywhere.
    #[serde(rename = "root-custom")]
    Root,
    /// Project and environment permissions, held in the projects the role is given in.
    #[serde(rename = "custom")]
    Project,
}

impl CustomRoleType {
    /// The kind Unleash names `name` (`root-custom` or `custom`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "root-custom" => Some(Self::Root),
            "custom" => Some(Self::Project),
            _ => None,
        }
    }

    /// Unleash's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Root => "root-custom",
            Self::Project => "custom",
        }
    }
}

/// A permission named in a role's body.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct PermissionIn {
    /// Unleash's name (`CREATE_FEATURE`).
    pub name: String,
    /// The environment, for an environment permission.
    #[serde(default)]
    pub environment: Option<String>,
}

/// Body of `POST /api/admin/roles` and `PUT /api/admin/roles/{id}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct RoleIn {
    /// Its name, unique.
    pub name: String,
    /// `root-custom` or `custom` (the default).
    #[serde(rename = "type", default)]
    pub role_type: Option<CustomRoleType>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// What it holds.
    #[serde(default, deserialize_with = "crate::runtime::input::objects")]
    pub permissions: Vec<PermissionIn>,
}

/// A user as a group lists its members.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberUserOut {
    /// User id.
    pub id: i32,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Login name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Email.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Whether it is a service account.
    #[serde(rename = "isAPI")]
    pub is_api: bool,
}

impl From<&UserRow> for MemberUserOut {
    fn from(user: &UserRow) -> Self {
        Self {
            id: user.id,
            name: user.name.clone(),
            username: user.username.clone(),
            email: user.email.clone(),
            is_api: user.is_service,
        }
    }
}

/// A member of a group.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupMemberOut {
    /// The user.
    pub user: MemberUserOut,
    /// When they joined.
    pub joined_at: String,
    /// Who added them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// A group: `GET /api/admin/groups/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupOut {
    /// Its id.
    pub id: i32,
    /// Its name.
    pub name: String,
    /// Free text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The single sign-on groups whose members it holds.
    #[serde(rename = "mappingsSSO")]
    pub mappings_sso: Vec<String>,
    /// The root role its members hold, if any.
    pub root_role: Option<i32>,
    /// Its members, in the order they were given.
    pub users: Vec<GroupMemberOut>,
    /// How many members.
    pub user_count: usize,
    /// When it was made.
    pub created_at: String,
    /// Who made it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

impl GroupOut {
    /// The group with `members`.
    pub fn new(group: GroupRow, members: Vec<GroupMemberOut>) -> Result<Self, flag_store::StoreError> {
        Ok(Self {
            mappings_sso: group.mappings_sso()?,
            id: group.id,
            name: group.name,
            description: group.description,
            root_role: group.root_role_id,
            user_count: members.len(),
            users: members,
            created_at: iso(group.created_at),
            created_by: group.created_by,
        })
    }
}

/// `GET /api/admin/groups`.
#[derive(Debug, Serialize, ToSchema)]
pub struct GroupsOut {
    /// Every group, by name.
    pub groups: Vec<GroupOut>,
}

/// A user named in a group's body: `{user: {id}}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct MemberIn {
    /// The user.
    #[serde(deserialize_with = "crate::runtime::input::object")]
    pub user: UserRef,
}

/// A user by id.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct UserRef {
    /// User id.
    pub id: i32,
}

/// Body of `POST /api/admin/groups` and `PUT /api/admin/groups/{id}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupIn {
    /// Its name, unique.
    pub name: String,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// Single sign-on groups whose members it holds.
    #[serde(rename = "mappingsSSO", default)]
    pub mappings_sso: Option<Vec<String>>,
    /// A root role its members hold.
    #[serde(default)]
    pub root_role: Option<i32>,
    /// Its members.
    #[serde(default, deserialize_with = "crate::runtime::input::optional_objects")]
    pub users: Option<Vec<MemberIn>>,
}

/// A user or service account holding roles in a project.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessUserOut {
    /// The user.
    #[serde(flatten)]
    pub user: MemberUserOut,
    /// The first role held.
    pub role_id: i32,
    /// Every role held there.
    pub roles: Vec<i32>,
    /// When the first was given.
    pub added_at: String,
}

/// A group holding roles in a project.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessGroupOut {
    /// Group id.
    pub id: i32,
    /// Its name.
    pub name: String,
    /// The first role held.
    pub role_id: i32,
    /// Every role held there.
    pub roles: Vec<i32>,
    /// When the first was given.
    pub added_at: String,
    /// Its members.
    pub user_count: usize,
}

/// `GET /api/admin/projects/{projectId}/access`.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProjectAccessOut {
    /// The project roles there are.
    pub roles: Vec<RoleOut>,
    /// Users and service accounts holding roles there.
    pub users: Vec<AccessUserOut>,
    /// Groups holding roles there.
    pub groups: Vec<AccessGroupOut>,
}

/// One role's holders in `PUT /api/admin/projects/{projectId}/access`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct RoleHoldersIn {
    /// The project role.
    pub id: i32,
    /// Users and service accounts.
    #[serde(default)]
    pub users: Vec<i32>,
    /// Groups.
    #[serde(default)]
    pub groups: Vec<i32>,
}

/// Body of `PUT /api/admin/projects/{projectId}/access`: the whole access, replacing what was.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct ProjectAccessIn {
    /// Each role with its holders.
    #[serde(deserialize_with = "crate::runtime::input::objects")]
    pub roles: Vec<RoleHoldersIn>,
}

/// Body of `POST /api/admin/projects/{projectId}/role/{roleId}/access`: holders to add.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct AddAccessIn {
    /// Users to add, `[{id}]`.
    #[serde(default, deserialize_with = "crate::runtime::input::objects")]
    pub users: Vec<UserRef>,
    /// Groups to add, `[{id}]`.
    #[serde(default, deserialize_with = "crate::runtime::input::objects")]
    pub groups: Vec<UserRef>,
}

/// A personal access token.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatOut {
    /// Its id.
    pub id: i32,
    /// What it is for.
    pub description: String,
    /// When it stops working.
    pub expires_at: String,
    /// When it was made.
    pub created_at: String,
    /// Last use.
    pub seen_at: Option<String>,
    /// Whose it is.
    pub user_id: i32,
    /// The secret: only in the answer to its creation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl From<PersonalTokenRow> for PatOut {
    fn from(row: PersonalTokenRow) -> Self {
        Self {
            id: row.id,
            description: row.description,
            expires_at: iso(row.expires_at),
            created_at: iso(row.created_at),
            seen_at: row.seen_at.map(iso),
            user_id: row.user_id,
            secret: None,
        }
    }
}

/// `GET /api/admin/service-account/{id}/token`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PatsOut {
    /// The tokens, oldest first.
    pub pats: Vec<PatOut>,
}

/// Body of `POST /api/admin/service-account/{id}/token`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PatIn {
    /// What it is for.
    pub description: String,
    /// When it stops working: required, and in the future.
    #[schema(value_type = Timestamp)]
    pub expires_at: Timestamp,
}

impl PatIn {
    /// A token described by `description` that expires at `expires_at`, read as a body's
    /// `expiresAt` is; when it does not read, why.
    pub fn new(description: String, expires_at: &str) -> Result<Self, String> {
        Ok(Self {
            description,
            expires_at: Timestamp::read(expires_at)?,
        })
    }
}

/// A service account.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountOut {
    /// Its id.
    pub id: i32,
    /// Display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Unique login name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Its root role's id (built in or custom).
    pub root_role: i32,
    /// Always true.
    #[serde(rename = "isAPI")]
    pub is_api: bool,
    /// When it was made.
    pub created_at: String,
    /// Last use of one of its tokens.
    pub seen_at: Option<String>,
}

impl From<&UserRow> for ServiceAccountOut {
    fn from(row: &UserRow) -> Self {
        Self {
            id: row.id,
            name: row.name.clone(),
            username: row.username.clone(),
            root_role: row.custom_root_role.unwrap_or(row.root_role.id()),
            is_api: true,
            created_at: iso(row.created_at),
            seen_at: row.seen_at.map(iso),
        }
    }
}

/// `GET /api/admin/service-account`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountsOut {
    /// Every service account.
    pub service_accounts: Vec<ServiceAccountOut>,
    /// The root roles one can hold.
    pub root_roles: Vec<RoleOut>,
}

/// Body of `POST /api/admin/service-account`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountIn {
    /// Unique login name.
    pub username: String,
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Root role: 1, 2, 3 or a custom root role's id.
    pub root_role: i32,
}

/// Body of `PUT /api/admin/service-account/{id}`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountUpdate {
    /// Display name.
    #[serde(default)]
    pub name: Option<String>,
    /// Root role.
    #[serde(default)]
    pub root_role: Option<i32>,
}
