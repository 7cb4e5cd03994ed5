//! API tokens and public signup tokens, and the typed columns of an API token: its type and its
//! projects.

use chrono::NaiveDateTime;
use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql, FromStaticSqlRow, Queryable};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::serialize::{self, IsNull, Output, ToSql};
use diesel::sql_types::Text;
use diesel::sqlite::Sqlite;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

use crate::connection::MultiBackend;
use crate::error::StoreError;
use crate::schema::{api_tokens, public_signup_tokens};

/// A public signup token.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = public_signup_tokens, check_for_backend(crate::connection::MultiBackend))]
pub struct SignupTokenRow {
    /// The secret, part of the invite link.
    pub secret: String,
    /// Display name.
    pub name: String,
    /// The invite link.
    pub url: Option<String>,
    /// Role given to users who sign up.
    pub role_id: i32,
    /// Whether it can be used (an expired token cannot, whatever this says).
    pub enabled: bool,
    /// Expiry, UTC.
    pub expires_at: NaiveDateTime,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Creator.
    pub created_by: Option<String>,
}

/// An API token: only a SHA-256 verifier of its secret is stored.
///
/// Its type and projects are read typed as the row is loaded; a stored value that does not read
/// fails the load with [`StoreError::Corrupt`] naming the token and the column.
#[derive(Debug, Clone, PartialEq, Eq, Selectable)]
#[diesel(table_name = api_tokens, check_for_backend(crate::connection::MultiBackend))]
pub struct ApiTokenRow {
    /// Token id.
    pub id: i32,
    /// Display name.
    pub token_name: String,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// What it may be used for.
    pub token_type: TokenType,
    /// Environment, or `*`.
    pub environment: String,
    /// The projects it reaches.
    pub projects: TokenProjects,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Last use, UTC.
    pub seen_at: Option<NaiveDateTime>,
}

/// An API token row as the database holds it, its type and projects not read yet: what
/// [`ApiTokenRow`] is read from, and what a copy of the database copies as it is.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = api_tokens, check_for_backend(crate::connection::MultiBackend))]
pub(crate) struct StoredApiToken {
    id: i32,
    token_name: String,
    secret_hash: String,
    token_type: String,
    environment: String,
    projects: String,
    expires_at: Option<NaiveDateTime>,
    created_at: NaiveDateTime,
    seen_at: Option<NaiveDateTime>,
}

impl TryFrom<StoredApiToken> for ApiTokenRow {
    type Error = StoreError;

    /// Reads the type and projects, or fails naming the token and the column.
    fn try_from(stored: StoredApiToken) -> Result<Self, StoreError> {
        let id = stored.id;
        let corrupt = move |column| {
            move |source| StoreError::Corrupt {
                entity: "api token",
                key: id.to_string(),
                column,
                source,
            }
        };
        Ok(Self {
            token_type: TokenType::read(&stored.token_type).map_err(corrupt("token_type"))?,
            projects: TokenProjects::read(&stored.projects).map_err(corrupt("projects"))?,
            id: stored.id,
            token_name: stored.token_name,
            secret_hash: stored.secret_hash,
            environment: stored.environment,
            expires_at: stored.expires_at,
            created_at: stored.created_at,
            seen_at: stored.seen_at,
        })
    }
}

/// The columns of an API token as loaded, in the order of [`ApiTokenRow`]'s fields.
type StoredApiTokenColumns = (
    i32,
    String,
    String,
    String,
    String,
    String,
    Option<NaiveDateTime>,
    NaiveDateTime,
    Option<NaiveDateTime>,
);

/// Loads the row as stored and reads its typed columns with the row in hand, so that a value
/// that does not read is an error naming the token (which a column's own `FromSql` could not).
impl<ST, DB> Queryable<ST, DB> for ApiTokenRow
where
    DB: Backend,
    StoredApiTokenColumns: FromStaticSqlRow<ST, DB>,
{
    type Row = StoredApiTokenColumns;

    fn build(
        (id, token_name, secret_hash, token_type, environment, projects, expires_at, created_at, seen_at): Self::Row,
    ) -> deserialize::Result<Self> {
        let stored = StoredApiToken {
            id,
            token_name,
            secret_hash,
            token_type,
            environment,
            projects,
            expires_at,
            created_at,
            seen_at,
        };
        Ok(Self::try_from(stored)?)
    }
}

/// An API token whose stored type or projects do not read: what identifies it, when it
/// expires, and why the rest does not read. See [`crate::queries::api_tokens::list_each`].
#[derive(Debug)]
pub struct UnreadableToken {
    /// Token id.
    pub id: i32,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// The [`StoreError::Corrupt`] that names the token and the column.
    pub error: StoreError,
}

impl StoredApiToken {
    /// The typed row, or what identifies the token and why it does not read.
    pub(crate) fn read(self) -> Result<ApiTokenRow, UnreadableToken> {
        let (id, secret_hash, expires_at) = (self.id, self.secret_hash.clone(), self.expires_at);
        ApiTokenRow::try_from(self).map_err(|error| UnreadableToken {
            id,
            secret_hash,
            expires_at,
            error,
        })
    }
}

/// A new API token.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = api_tokens)]
pub struct NewApiToken {
    /// Display name.
    pub token_name: String,
    /// Hex SHA-256 of the secret.
    pub secret_hash: String,
    /// What it may be used for.
    pub token_type: TokenType,
    /// Environment, or `*`.
    pub environment: String,
    /// The projects it reaches.
    pub projects: TokenProjects,
    /// Expiry, UTC.
    pub expires_at: Option<NaiveDateTime>,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl NewApiToken {
    /// A token of `token_type` for `environment` (or `*`) and `projects`, stored by the verifier
    /// of its secret; the store keeps times to the microsecond.
    pub fn new(
        token_name: String,
        secret_hash: String,
        token_type: TokenType,
        environment: String,
        projects: TokenProjects,
        expires_at: Option<NaiveDateTime>,
        at: NaiveDateTime,
    ) -> Self {
        Self {
            token_name,
            secret_hash,
            token_type,
            environment,
            projects,
            expires_at: expires_at.map(crate::time::stored),
            created_at: crate::time::stored(at),
        }
    }
}

/// What an API token may be used for, stored as its lower-case name.
///
/// Unleash 5 renamed client tokens `backend`; both are stored as they were made, and both reach
/// the client API.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    diesel::expression::AsExpression,
    diesel::deserialize::FromSqlRow,
)]
#[diesel(sql_type = Text)]
#[serde(rename_all = "lowercase")]
pub enum TokenType {
    /// The admin API.
    Admin,
    /// The client API, for server-side SDKs.
    Client,
    /// The client API, as Unleash 5 and later name it.
    Backend,
    /// The frontend API.
    Frontend,
}

impl TokenType {
    /// Every type.
    pub const ALL: [Self; 4] = [Self::Admin, Self::Client, Self::Backend, Self::Frontend];

    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Client => "client",
            Self::Backend => "backend",
            Self::Frontend => "frontend",
        }
    }

    /// The type named `text`, in any letter case, as Unleash reads a token's type.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text))
    }

    /// The type stored as `text`, or why it is none.
    fn read(text: &str) -> deserialize::Result<Self> {
        Self::parse(text).ok_or_else(|| format!("unknown token type {text:?}").into())
    }
}

/// Token types are read in any letter case, as Unleash reads them.
impl<'de> Deserialize<'de> for TokenType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).ok_or_else(|| {
            de::Error::custom(format!(
                "unknown token type {text:?}; expected client, backend, frontend or admin"
            ))
        })
    }
}

impl<DB> FromSql<Text, DB> for TokenType
where
    DB: Backend,
    String: FromSql<Text, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        Self::read(&String::from_sql(bytes)?)
    }
}

impl<DB> ToSql<Text, DB> for TokenType
where
    DB: Backend,
    str: ToSql<Text, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        self.as_str().to_sql(out)
    }
}

/// The projects an API token reaches, stored as a JSON list of their names; `*` among them
/// stands for every project (a token made for every project stores `["*"]`).
#[derive(
    Debug,
    Clone,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    diesel::expression::AsExpression,
    diesel::deserialize::FromSqlRow,
)]
#[diesel(sql_type = Text)]
#[serde(transparent)]
pub struct TokenProjects(Vec<String>);

impl TokenProjects {
    /// The name that stands for every project.
    pub const ALL: &'static str = "*";

    /// Every project: `["*"]`.
    pub fn all() -> Self {
        Self(vec![Self::ALL.to_owned()])
    }

    /// The names, as stored.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// The names, owned.
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }

    /// Whether they stand for every project: `*` is among them.
    pub fn include_all(&self) -> bool {
        self.0.iter().any(|project| project == Self::ALL)
    }

    /// Whether they reach `project`: it is among them, or `*` is.
    pub fn reach(&self, project: &str) -> bool {
        self.0.iter().any(|name| name == project || name == Self::ALL)
    }

    /// The projects stored as `text`, or why they are none.
    fn read(text: &str) -> deserialize::Result<Self> {
        Ok(Self(serde_json::from_str(text)?))
    }
}

/// The projects named, as given: a list with `*` among them reaches every project.
impl From<Vec<String>> for TokenProjects {
    fn from(projects: Vec<String>) -> Self {
        Self(projects)
    }
}

impl<DB> FromSql<Text, DB> for TokenProjects
where
    DB: Backend,
    String: FromSql<Text, DB>,
{
    fn from_sql(bytes: DB::RawValue<'_>) -> deserialize::Result<Self> {
        Self::read(&String::from_sql(bytes)?)
    }
}

impl ToSql<Text, Sqlite> for TokenProjects {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        out.set_value(serde_json::to_string(&self.0)?);
        Ok(IsNull::No)
    }
}

impl ToSql<Text, Pg> for TokenProjects {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        <str as ToSql<Text, Pg>>::to_sql(&serde_json::to_string(&self.0)?, &mut out.reborrow())
    }
}

impl ToSql<Text, MultiBackend> for TokenProjects {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, MultiBackend>) -> serialize::Result {
        out.set_value((Text, self));
        Ok(IsNull::No)
    }
}

#[cfg(test)]
mod tests {
    use diesel::prelude::*;

    use super::*;
    use crate::models::Actor;
    use crate::queries::api_tokens as queries;
    use crate::testing::{TestResult, TestStore, now};

    fn token(name: &str, token_type: TokenType, projects: &[&str]) -> NewApiToken {
        let projects: Vec<String> = projects.iter().map(|&project| project.to_owned()).collect();
        NewApiToken::new(
            name.into(),
            format!("{name:0>64}"),
            token_type,
            "development".into(),
            TokenProjects::from(projects),
            None,
            now(),
        )
    }

    /// What the columns hold, as text.
    fn stored(conn: &mut crate::DbConnection) -> QueryResult<Vec<(String, String)>> {
        api_tokens::table
            .order(api_tokens::id.asc())
            .select((api_tokens::token_type, api_tokens::projects))
            .load(conn)
    }

    #[test]
    fn types_and_projects_are_stored_as_before_and_read_back_typed() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let tokens = [
            token("a", TokenType::Admin, &["*"]),
            token("c", TokenType::Client, &["default"]),
            token("b", TokenType::Backend, &["default", "shop"]),
            token("f", TokenType::Frontend, &["shop", "*"]),
        ];
        for token in &tokens {
            queries::create(&mut conn, token, &Actor::system())?;
        }
        assert_eq!(
            stored(&mut conn)?,
            [
                ("admin", r#"["*"]"#),
                ("client", r#"["default"]"#),
                ("backend", r#"["default","shop"]"#),
                ("frontend", r#"["shop","*"]"#),
            ]
            .map(|(kind, projects)| (kind.to_owned(), projects.to_owned()))
        );
        let read: Vec<(TokenType, TokenProjects)> = queries::list(&mut conn)?
            .into_iter()
            .map(|row| (row.token_type, row.projects))
            .collect();
        let written: Vec<(TokenType, TokenProjects)> = tokens
            .into_iter()
            .map(|token| (token.token_type, token.projects))
            .collect();
        assert_eq!(read, written);
        // A type is read in any letter case, as the credential check always read it.
        diesel::update(api_tokens::table.filter(api_tokens::token_name.eq("c")))
            .set(api_tokens::token_type.eq("CLIENT"))
            .execute(&mut conn)?;
        let client = queries::list(&mut conn)?
            .into_iter()
            .find(|row| row.token_name == "c")
            .map(|row| row.token_type);
        assert_eq!(client, Some(TokenType::Client));
        Ok(())
    }

    #[test]
    fn one_unreadable_token_leaves_the_others_readable_one_by_one() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let good = queries::create(
            &mut conn,
            &token("good", TokenType::Client, &["*"]),
            &Actor::system(),
        )?;
        let bad = queries::create(
            &mut conn,
            &token("bad", TokenType::Frontend, &["*"]),
            &Actor::system(),
        )?;
        diesel::update(api_tokens::table.find(bad.id))
            .set(api_tokens::token_type.eq("root"))
            .execute(&mut conn)?;
        let each = queries::list_each(&mut conn)?;
        let [Ok(read), Err(unreadable)] = each.as_slice() else {
            return Err(format!("expected one readable and one unreadable token, got {each:?}").into());
        };
        assert_eq!(read, &good);
        assert_eq!(
            (
                unreadable.id,
                unreadable.secret_hash.as_str(),
                unreadable.expires_at
            ),
            (bad.id, bad.secret_hash.as_str(), None)
        );
        assert_eq!(
            unreadable.error.to_string(),
            format!(
                "stored token_type of api token {} is not valid: unknown token type \"root\"",
                bad.id
            )
        );
        Ok(())
    }

    #[test]
    fn token_types_read_as_unleash_reads_them() -> Result<(), serde_json::Error> {
        assert_eq!(
            serde_json::from_value::<TokenType>(serde_json::json!("CLIENT"))?,
            TokenType::Client
        );
        assert!(serde_json::from_value::<TokenType>(serde_json::json!("root")).is_err());
        assert_eq!(
            serde_json::to_value(TokenType::Backend)?,
            serde_json::json!("backend")
        );
        assert_eq!(
            serde_json::to_value(TokenProjects::all())?,
            serde_json::json!(["*"])
        );
        Ok(())
    }

    #[test]
    fn projects_reach_what_they_name_and_star_reaches_all() {
        let some = TokenProjects::from(vec!["default".to_owned(), "shop".to_owned()]);
        assert!(some.reach("shop") && !some.reach("other") && !some.include_all());
        let all = TokenProjects::from(vec!["shop".to_owned(), TokenProjects::ALL.to_owned()]);
        assert!(all.reach("other") && all.include_all());
        assert!(TokenProjects::all().include_all());
    }
}
