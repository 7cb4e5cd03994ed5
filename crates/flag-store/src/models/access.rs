//! Custom roles' permissions, groups and their members, who holds which role in a project,
//! personal access tokens, and sealed secrets.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::schema::{
    group_users, groups, personal_access_tokens, project_access, role_permissions, sealed_secrets,
};

/// One permission of a custom role: an environment permission names its environment, the
/// others the empty string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Queryable, Selectable, Insertable)]
#[diesel(table_name = role_permissions, check_for_backend(crate::connection::MultiBackend))]
pub struct RolePermissionRow {
    /// The role.
    pub role_id: i32,
    /// Unleash's name of the permission (`CREATE_FEATURE`).
    pub permission: String,
    /// Its environment, or `""`.
    pub environment: String,
}

/// A group of users.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = groups, check_for_backend(crate::connection::MultiBackend))]
pub struct GroupRow {
    /// Group id.
    pub id: i32,
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The single sign-on groups it maps, JSON `[name]`; read with [`GroupRow::mappings_sso`].
    pub mappings_sso: String,
    /// The root role its members hold, when it gives one.
    pub root_role_id: Option<i32>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Who created it.
    pub created_by: Option<String>,
}

impl GroupRow {
    /// The single sign-on groups it maps.
    pub fn mappings_sso(&self) -> Result<Vec<String>, StoreError> {
        crate::queries::from_json("group", self.id, "mappings_sso", &self.mappings_sso)
    }
}

/// A group before it is stored.
#[derive(Debug, Clone, Insertable, AsChangeset)]
#[diesel(table_name = groups, treat_none_as_null = true)]
pub struct NewGroup {
    /// Unique name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// JSON `[name]`.
    pub mappings_sso: String,
    /// The root role its members hold.
    pub root_role_id: Option<i32>,
}

impl NewGroup {
    /// A group with its single sign-on mappings written as the store keeps them.
    pub fn new(
        name: String,
        description: Option<String>,
        mappings_sso: &[String],
        root_role_id: Option<i32>,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            description,
            mappings_sso: crate::queries::to_json("mappings_sso", mappings_sso)?,
            root_role_id,
        })
    }
}

/// A member of a group.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = group_users, check_for_backend(crate::connection::MultiBackend))]
pub struct GroupUserRow {
    /// The group.
    pub group_id: i32,
    /// The user.
    pub user_id: i32,
    /// When they joined, UTC.
    pub created_at: NaiveDateTime,
    /// Who added them.
    pub created_by: Option<String>,
}

/// A role held in a project, by a user or a group (exactly one of them).
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = project_access, check_for_backend(crate::connection::MultiBackend))]
pub struct ProjectAccessRow {
    /// Row id.
    pub id: i32,
    /// The project.
    pub project_id: String,
    /// The role.
    pub role_id: i32,
    /// The user or service account holding it.
    pub user_id: Option<i32>,
    /// The group holding it.
    pub group_id: Option<i32>,
    /// When it was given, UTC.
    pub created_at: NaiveDateTime,
}

/// Who holds a role in a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Holder {
    /// A user or service account, by id.
    User(i32),
    /// A group, by id.
    Group(i32),
}

impl ProjectAccessRow {
    /// Who holds the role.
    pub fn holder(&self) -> Result<Holder, StoreError> {
        match (self.user_id, self.group_id) {
            (Some(user), None) => Ok(Holder::User(user)),
            (None, Some(group)) => Ok(Holder::Group(group)),
            _ => Err(StoreError::Corrupt {
                entity: "project access",
                key: self.id.to_string(),
                column: "user_id",
                source: "exactly one of user_id and group_id must be set".into(),
            }),
        }
    }
}

/// A personal access token: only a SHA-256 verifier of its secret is stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = personal_access_tokens, check_for_backend(crate::connection::MultiBackend))]
pub struct PersonalTokenRow {
    /// Token id.
    pub id: i32,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// What it is for.
    pub description: String,
    /// The user or service account it acts as.
    pub user_id: i32,
    /// When it stops working, UTC.
    pub expires_at: NaiveDateTime,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last use, UTC.
    pub seen_at: Option<NaiveDateTime>,
}

/// A personal access token before it is stored.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = personal_access_tokens)]
pub struct NewPersonalToken {
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// What it is for.
    pub description: String,
    /// The user or service account it acts as.
    pub user_id: i32,
    /// When it stops working, UTC.
    pub expires_at: NaiveDateTime,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A secret sealed under the operator's key; the key itself is never stored.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = sealed_secrets, check_for_backend(crate::connection::MultiBackend))]
pub struct SealedSecretRow {
    /// Whose secret: `api-token:<verifier>` or `oidc-client-secret`.
    pub owner: String,
    /// The sealed value.
    pub sealed: String,
}
