//! Users, their roles, login sessions and logins through an OpenID provider in progress.

use std::fmt;

use chrono::NaiveDateTime;
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromStaticSqlRow, Queryable};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Integer;
use diesel::sqlite::Sqlite;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::connection::MultiBackend;
use crate::error::StoreError;
use crate::schema::{login_sessions, oidc_logins, roles, users};

/// A role.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = roles, check_for_backend(crate::connection::MultiBackend))]
pub struct RoleRow {
    /// Role id: Admin 1, Editor 2, Viewer 3, Owner 4, Member 5.
    pub id: i32,
    /// Role name.
    pub name: String,
    /// `root` or `project`.
    pub role_type: String,
    /// Free text.
    pub description: Option<String>,
}

/// A user.
///
/// The root role is read typed as the row is loaded; a stored id that is not a root role fails
/// the load with [`StoreError::Corrupt`] naming the user, never reads as a default role.
#[derive(Debug, Clone, PartialEq, Eq, Selectable)]
#[diesel(table_name = users, check_for_backend(crate::connection::MultiBackend))]
pub struct UserRow {
    /// User id.
    pub id: i32,
    /// Display name.
    pub name: Option<String>,
    /// Unique login name.
    pub username: Option<String>,
    /// Unique email, lower-cased.
    pub email: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// Root role: Admin, Editor or Viewer.
    pub root_role: RootRole,
    /// Failed logins since the last success.
    pub login_attempts: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last login, UTC.
    pub seen_at: Option<NaiveDateTime>,
    /// A service account: it cannot log in, and acts through personal access tokens.
    pub is_service: bool,
    /// A custom root role, whose permissions add to `root_role`'s.
    pub custom_root_role: Option<i32>,
}

/// A user row as the database holds it, its root role not read yet: what [`UserRow`] is read
/// from, and what a copy of the database copies as it is.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = users, check_for_backend(crate::connection::MultiBackend))]
pub(crate) struct StoredUser {
    id: i32,
    name: Option<String>,
    username: Option<String>,
    email: Option<String>,
    password_hash: Option<String>,
    root_role: i32,
    login_attempts: i32,
    created_at: NaiveDateTime,
    seen_at: Option<NaiveDateTime>,
    is_service: bool,
    custom_root_role: Option<i32>,
}

impl TryFrom<StoredUser> for UserRow {
    type Error = StoreError;

    /// Reads the root role, or fails naming the user.
    fn try_from(stored: StoredUser) -> Result<Self, StoreError> {
        let root_role = RootRole::read_root(stored.root_role).map_err(|source| StoreError::Corrupt {
            entity: "user",
            key: stored.id.to_string(),
            column: "root_role",
            source,
        })?;
        Ok(Self {
            id: stored.id,
            name: stored.name,
            username: stored.username,
            email: stored.email,
            password_hash: stored.password_hash,
            root_role,
            login_attempts: stored.login_attempts,
            created_at: stored.created_at,
            seen_at: stored.seen_at,
            is_service: stored.is_service,
            custom_root_role: stored.custom_root_role,
        })
    }
}

/// The columns of a user as loaded, in the order of [`UserRow`]'s fields.
type StoredUserColumns = (
    i32,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    i32,
    i32,
    NaiveDateTime,
    Option<NaiveDateTime>,
    bool,
    Option<i32>,
);

/// Loads the row as stored and reads its root role with the row in hand, so that a role that
/// does not read is an error naming the user (which the column's own `FromSql` could not).
impl<ST, DB> Queryable<ST, DB> for UserRow
where
    DB: Backend,
    StoredUserColumns: FromStaticSqlRow<ST, DB>,
{
    type Row = StoredUserColumns;

    fn build(
        (
            id,
            name,
            username,
            email,
            password_hash,
            root_role,
            login_attempts,
            created_at,
            seen_at,
            is_service,
            custom_root_role,
        ): Self::Row,
    ) -> deserialize::Result<Self> {
        let stored = StoredUser {
            id,
            name,
            username,
            email,
            password_hash,
            root_role,
            login_attempts,
            created_at,
            seen_at,
            is_service,
            custom_root_role,
        };
        Ok(Self::try_from(stored)?)
    }
}

/// What an administrator changes on a user; a `None` field is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, AsChangeset)]
#[diesel(table_name = users)]
pub struct UserChanges {
    /// New display name.
    pub name: Option<String>,
    /// New email; lower-cased by [`crate::queries::users::update`].
    pub email: Option<String>,
    /// New root role.
    pub root_role: Option<RootRole>,
    /// A custom root role, or none (`Some(None)` takes it away).
    pub custom_root_role: Option<Option<i32>>,
}

/// A new user; `email` must already be lower-cased (see [`crate::queries::users::create`]).
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = users)]
pub struct NewUser {
    /// Display name.
    pub name: Option<String>,
    /// Unique login name.
    pub username: Option<String>,
    /// Unique email.
    pub email: Option<String>,
    /// Argon2id PHC string.
    pub password_hash: Option<String>,
    /// Root role.
    pub root_role: RootRole,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

/// A login session: only a hash of its cookie value is stored.
#[derive(Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = login_sessions, check_for_backend(crate::connection::MultiBackend))]
pub struct SessionRow {
    /// Hex SHA-256 of the session secret.
    pub token_hash: String,
    /// The user.
    pub user_id: i32,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
    /// Whether it was opened through the OpenID provider.
    pub via_oidc: bool,
    /// The provider's ID token, kept for `id_token_hint` when signing out there too; never
    /// shown by `Debug`.
    pub id_token: Option<String>,
}

impl std::fmt::Debug for SessionRow {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("SessionRow")
            .field("token_hash", &self.token_hash)
            .field("user_id", &self.user_id)
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .field("via_oidc", &self.via_oidc)
            .field("id_token", &self.id_token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// A login through an OpenID provider that has started and not come back yet.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = oidc_logins, check_for_backend(crate::connection::MultiBackend))]
pub struct OidcLoginRow {
    /// Hex SHA-256 of the secret in the browser's cookie.
    pub cookie_hash: String,
    /// The `state` sent to the provider.
    pub state: String,
    /// The `nonce` the ID token must carry.
    pub nonce: String,
    /// The PKCE code verifier.
    pub pkce_verifier: String,
    /// The console path to go back to.
    pub return_to: String,
    /// When it started, UTC.
    pub created_at: NaiveDateTime,
}

/// A root or project role, with Unleash's ids, stored as its id.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, diesel::expression::AsExpression, diesel::deserialize::FromSqlRow,
)]
#[diesel(sql_type = Integer)]
pub enum RootRole {
    /// Everything (1).
    Admin,
    /// Writes features, strategies and variants (2).
    Editor,
    /// Reads and uses the playground (3).
    Viewer,
    /// A project's owner (4); a project role.
    Owner,
    /// A project's member (5); a project role.
    Member,
}

impl RootRole {
    /// The root roles, in id order.
    pub const ROOT: [Self; 3] = [Self::Admin, Self::Editor, Self::Viewer];

    /// Unleash's id of the role.
    pub fn id(self) -> i32 {
        match self {
            Self::Admin => 1,
            Self::Editor => 2,
            Self::Viewer => 3,
            Self::Owner => 4,
            Self::Member => 5,
        }
    }

    /// The role with Unleash's id `id`.
    pub fn from_id(id: i32) -> Option<Self> {
        match id {
            1 => Some(Self::Admin),
            2 => Some(Self::Editor),
            3 => Some(Self::Viewer),
            4 => Some(Self::Owner),
            5 => Some(Self::Member),
            _ => None,
        }
    }

    /// The role's name, as Unleash spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Admin => "Admin",
            Self::Editor => "Editor",
            Self::Viewer => "Viewer",
            Self::Owner => "Owner",
            Self::Member => "Member",
        }
    }

    /// What it allows, as Unleash describes it.
    pub fn description(self) -> &'static str {
        match self {
            Self::Admin => {
                "Users with the root admin role have superuser access to Unleash and can perform any operation within the Unleash platform."
            }
            Self::Editor => {
                "Users with the root editor role have access to most features in Unleash, but can not manage users and roles in the root scope."
            }
            Self::Viewer => "Users with the root viewer role can only read root resources in Unleash.",
            Self::Owner => "Users with the project owner role have full control over the project.",
            Self::Member => {
                "Users with the project member permission allows the user to perform CRUD operations on feature flags within a project."
            }
        }
    }

    /// Whether users can hold it as their root role (Admin, Editor, Viewer).
    pub fn is_root(self) -> bool {
        matches!(self, Self::Admin | Self::Editor | Self::Viewer)
    }

    /// The role stored as `id`, or why it is none.
    fn read(id: i32) -> deserialize::Result<Self> {
        Self::from_id(id).ok_or_else(|| format!("unknown role id {id}").into())
    }

    /// The root role stored as a user's `id`, or why it is none: a project role is no root role.
    pub(crate) fn read_root(id: i32) -> deserialize::Result<Self> {
        let role = Self::read(id)?;
        if role.is_root() {
            Ok(role)
        } else {
            Err(format!("{} (role {id}) is a project role, not a root role", role.name()).into())
        }
    }
}

/// A root role as Unleash accepts it: its id as a number or a numeric string, or its name in any
/// letter case. Anything else, and project roles, are refused.
impl<'de> Deserialize<'de> for RootRole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RoleVisitor;

        impl Visitor<'_> for RoleVisitor {
            type Value = RootRole;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("1 (Admin), 2 (Editor) or 3 (Viewer), or the role's name")
            }

            fn visit_i64<E: de::Error>(self, id: i64) -> Result<RootRole, E> {
                i32::try_from(id)
                    .ok()
                    .and_then(RootRole::from_id)
                    .filter(|role| role.is_root())
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Signed(id), &self))
            }

            fn visit_u64<E: de::Error>(self, id: u64) -> Result<RootRole, E> {
                i64::try_from(id)
                    .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(id), &self))
                    .and_then(|id| self.visit_i64(id))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<RootRole, E> {
                if let Ok(id) = text.trim().parse::<i64>() {
                    return self.visit_i64(id);
                }
                RootRole::ROOT
                    .into_iter()
                    .find(|role| role.name().eq_ignore_ascii_case(text.trim()))
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(text), &self))
            }
        }

        deserializer.deserialize_any(RoleVisitor)
    }
}

/// A role is written as its id, as Unleash writes it.
impl Serialize for RootRole {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i32(self.id())
    }
}

impl<DB> FromSql<Integer, DB> for RootRole
where
    DB: Backend,
    i32: FromSql<Integer, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        Self::read(i32::from_sql(bytes)?)
    }
}

impl ToSql<Integer, Sqlite> for RootRole {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(self.id());
        Ok(IsNull::No)
    }
}

impl ToSql<Integer, Pg> for RootRole {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <i32 as ToSql<Integer, Pg>>::to_sql(&self.id(), &mut out.reborrow())
    }
}

impl ToSql<Integer, MultiBackend> for RootRole {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> serialize::Result {
        out.set_value((Integer, self));
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::models::{Actor, SignupTokenRow};
    use crate::queries::{signup_tokens, users as user_queries};
    use crate::testing::{TestResult, TestStore, now};

    fn user(email: &str, root_role: RootRole) -> NewUser {
        NewUser {
            name: None,
            username: None,
            email: Some(email.into()),
            password_hash: None,
            root_role,
            created_at: now(),
        }
    }

    fn stored_role(conn: &mut crate::DbConnection, id: i32) -> QueryResult<i32> {
        users::table.find(id).select(users::root_role).first(conn)
    }

    #[test]
    fn root_roles_are_stored_as_unleashs_ids_and_read_back_typed() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let editor = user_queries::create(
            &mut conn,
            &user("e@example.com", RootRole::Editor),
            &Actor::system(),
        )?;
        assert_eq!(
            (editor.root_role, stored_role(&mut conn, editor.id)?),
            (RootRole::Editor, 2)
        );
        let changes = UserChanges {
            root_role: Some(RootRole::Admin),
            ..UserChanges::default()
        };
        let admin = user_queries::update(&mut conn, editor.id, &changes, &Actor::system(), now())?;
        assert_eq!(
            (admin.root_role, stored_role(&mut conn, editor.id)?),
            (RootRole::Admin, 1)
        );
        assert_eq!(
            user_queries::get(&mut conn, editor.id)?.root_role,
            RootRole::Admin
        );
        Ok(())
    }

    #[test]
    fn a_stored_role_that_is_no_root_role_is_corrupt_naming_the_user() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let viewer = user_queries::create(
            &mut conn,
            &user("v@example.com", RootRole::Viewer),
            &Actor::system(),
        )?;
        diesel::update(users::table.find(viewer.id))
            .set(users::root_role.eq(RootRole::Owner.id()))
            .execute(&mut conn)?;
        let error = user_queries::list(&mut conn).err();
        assert_eq!(
            error.as_ref().map(ToString::to_string),
            Some(format!(
                "stored root_role of user {} is not valid: Owner (role 4) is a project role, not a root role",
                viewer.id
            )),
            "{error:?}"
        );
        let error = user_queries::get(&mut conn, viewer.id).err();
        assert!(
            matches!(&error, Some(StoreError::Corrupt { entity: "user", key, column: "root_role", .. }) if *key == viewer.id.to_string()),
            "{error:?}"
        );
        // An id that is no role at all, which the foreign key keeps out of the table.
        let unknown = RootRole::read_root(9).err().map(|error| error.to_string());
        assert_eq!(unknown.as_deref(), Some("unknown role id 9"));
        Ok(())
    }

    #[test]
    fn a_signup_token_for_a_project_role_creates_no_user() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let secret = "0123456789abcdef0123456789abcdef";
        signup_tokens::create(
            &mut conn,
            &SignupTokenRow {
                secret: secret.into(),
                name: "owners".into(),
                url: None,
                role_id: RootRole::Owner.id(),
                enabled: true,
                expires_at: now() + chrono::Duration::days(1),
                created_at: now(),
                created_by: None,
            },
            &Actor::system(),
        )?;
        let error =
            signup_tokens::sign_up(&mut conn, secret, &user("o@example.com", RootRole::Viewer), now()).err();
        assert_eq!(
            error.as_ref().map(ToString::to_string).as_deref(),
            Some(
                "stored role_id of signup token owners is not valid: Owner (role 4) is a project role, not a root role"
            ),
            "{error:?}"
        );
        assert_eq!(user_queries::count(&mut conn)?, 0);
        Ok(())
    }

    #[test]
    fn root_roles_read_like_unleash() -> Result<(), serde_json::Error> {
        for (value, role) in [
            (json!(1), RootRole::Admin),
            (json!("2"), RootRole::Editor),
            (json!("viewer"), RootRole::Viewer),
            (json!("Admin"), RootRole::Admin),
        ] {
            assert_eq!(serde_json::from_value::<RootRole>(value)?, role);
        }
        for bad in [
            json!(4),
            json!(0),
            json!("Owner"),
            json!("boss"),
            json!(true),
            json!(2.5),
        ] {
            assert!(serde_json::from_value::<RootRole>(bad.clone()).is_err(), "{bad}");
        }
        assert_eq!(serde_json::to_value(RootRole::Editor)?, json!(2));
        Ok(())
    }
}
