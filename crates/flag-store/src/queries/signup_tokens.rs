//! Public signup tokens (invite links) and signing up with one.

use std::collections::HashMap;

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, NewUser, RoleRow, RootRole, SignupTokenRow, UserRow};
use crate::queries::{events, to_json, users};
use crate::schema::{public_signup_token_users, public_signup_tokens, roles};

/// The one message for unknown, disabled and expired tokens, so a caller cannot tell them apart.
pub const INVALID_TOKEN: &str = "invite link is invalid or has expired";

/// A token with its role and the users who signed up with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignupToken {
    /// The token.
    pub token: SignupTokenRow,
    /// The role it grants.
    pub role: RoleRow,
    /// Users who signed up with it, by id.
    pub users: Vec<UserRow>,
}

impl SignupToken {
    /// Whether the token can be used at `now`: enabled and not expired, to the second.
    pub fn is_usable(&self, now: NaiveDateTime) -> bool {
        self.token.enabled && self.token.expires_at > now
    }
}

/// Creates a token.
pub fn create(
    conn: &mut DbConnection,
    row: &SignupTokenRow,
    actor: &Actor,
) -> Result<SignupToken, StoreError> {
    crate::queries::write(conn, |conn| {
        // The role is the signup tokens table's only foreign key, so a foreign-key violation can
        // only mean that it does not exist.
        diesel::insert_into(public_signup_tokens::table)
            .values(row)
            .execute(conn)
            .map_err(StoreError::on_missing_reference(|| {
                StoreError::not_found("role", row.role_id.to_string())
            }))?;
        events::record(
            conn,
            &NewEvent {
                data: Some(to_json(
                    "data",
                    &serde_json::json!({"name": row.name, "expiresAt": row.expires_at, "enabled": row.enabled}),
                )?),
                ..NewEvent::new(EventType::PublicSignupTokenCreated, actor, row.created_at)
            },
        )?;
        get(conn, &row.secret)
    })
}

/// Every token, oldest first, with roles and users, in three queries.
pub fn list(conn: &mut DbConnection) -> Result<Vec<SignupToken>, StoreError> {
    let tokens: Vec<SignupTokenRow> = public_signup_tokens::table
        .order((
            public_signup_tokens::created_at.asc(),
            public_signup_tokens::secret.asc(),
        ))
        .select(SignupTokenRow::as_select())
        .load(conn)?;
    assemble(conn, tokens)
}

/// One token.
pub fn get(conn: &mut DbConnection, secret: &str) -> Result<SignupToken, StoreError> {
    let token: SignupTokenRow = public_signup_tokens::table
        .find(secret)
        .select(SignupTokenRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("signup token", "(secret)"))?;
    assemble(conn, vec![token])?
        .pop()
        .ok_or_else(|| StoreError::not_found("signup token", "(secret)"))
}

fn assemble(conn: &mut DbConnection, tokens: Vec<SignupTokenRow>) -> Result<Vec<SignupToken>, StoreError> {
    let roles: HashMap<i32, RoleRow> = roles::table
        .select(RoleRow::as_select())
        .load(conn)?
        .into_iter()
        .map(|role| (role.id, role))
        .collect();
    let secrets: Vec<&String> = tokens.iter().map(|token| &token.secret).collect();
    let mut members: HashMap<String, Vec<UserRow>> = HashMap::new();
    let links: Vec<(String, UserRow)> = public_signup_token_users::table
        .inner_join(crate::schema::users::table)
        .filter(public_signup_token_users::secret.eq_any(secrets))
        .order(crate::schema::users::id.asc())
        .select((public_signup_token_users::secret, UserRow::as_select()))
        .load(conn)?;
    for (secret, user) in links {
        members.entry(secret).or_default().push(user);
    }
    tokens
        .into_iter()
        .map(|token| {
            let role = roles
                .get(&token.role_id)
                .cloned()
                .ok_or_else(|| StoreError::not_found("role", token.role_id.to_string()))?;
            let users = members.remove(&token.secret).unwrap_or_default();
            Ok(SignupToken { token, role, users })
        })
        .collect()
}

/// Changes a token's expiry and/or switch; at least one must be given.
pub fn update(
    conn: &mut DbConnection,
    secret: &str,
    expires_at: Option<NaiveDateTime>,
    enabled: Option<bool>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<SignupToken, StoreError> {
    if expires_at.is_none() && enabled.is_none() {
        return Err(StoreError::Rejected {
            message: "give expiresAt, enabled or both".into(),
        });
    }
    crate::queries::write(conn, |conn| {
        let before = get(conn, secret)?;
        let target = public_signup_tokens::table.find(secret);
        if let Some(expires_at) = expires_at {
            diesel::update(target)
                .set(public_signup_tokens::expires_at.eq(expires_at))
                .execute(conn)?;
        }
        if let Some(enabled) = enabled {
            diesel::update(target)
                .set(public_signup_tokens::enabled.eq(enabled))
                .execute(conn)?;
        }
        let after = get(conn, secret)?;
        events::record(
            conn,
            &NewEvent {
                data: Some(to_json(
                    "data",
                    &serde_json::json!({"enabled": after.token.enabled, "expiresAt": after.token.expires_at}),
                )?),
                pre_data: Some(to_json(
                    "pre_data",
                    &serde_json::json!({"enabled": before.token.enabled, "expiresAt": before.token.expires_at}),
                )?),
                ..NewEvent::new(EventType::PublicSignupTokenUpdated, actor, now)
            },
        )?;
        Ok(after)
    })
}

/// Whether `secret` names a usable token at `now`.
pub fn validate(conn: &mut DbConnection, secret: &str, now: NaiveDateTime) -> Result<(), StoreError> {
    let usable = public_signup_tokens::table
        .find(secret)
        .select(SignupTokenRow::as_select())
        .first(conn)
        .optional()?
        .is_some_and(|token| token.enabled && token.expires_at > now);
    if usable {
        Ok(())
    } else {
        Err(StoreError::Rejected {
            message: INVALID_TOKEN.into(),
        })
    }
}

/// Creates a user with the token's role and links it to the token, in one transaction: a token
/// disabled or expired before this commits creates no user. The email is lower-cased; a taken
/// email or username is [`StoreError::Conflict`].
pub fn sign_up(
    conn: &mut DbConnection,
    secret: &str,
    user: &NewUser,
    now: NaiveDateTime,
) -> Result<UserRow, StoreError> {
    let mut user = user.clone();
    user.email = user.email.map(|email| flag_eval::fold_case(&email));
    crate::queries::write(conn, |conn| {
        validate(conn, secret, now)?;
        let (name, role_id): (String, i32) = public_signup_tokens::table
            .find(secret)
            .select((public_signup_tokens::name, public_signup_tokens::role_id))
            .first(conn)?;
        // Named by its name, not its secret, which logs must not show.
        user.root_role = RootRole::read_root(role_id).map_err(|source| StoreError::Corrupt {
            entity: "signup token",
            key: name,
            column: "role_id",
            source,
        })?;
        let mut actor = Actor {
            name: user
                .email
                .clone()
                .or_else(|| user.username.clone())
                .unwrap_or_default(),
            user_id: Actor::SYSTEM,
        };
        let row = users::insert(conn, &user, &actor)?;
        actor.user_id = row.id;
        diesel::insert_into(public_signup_token_users::table)
            .values((
                public_signup_token_users::secret.eq(secret),
                public_signup_token_users::user_id.eq(row.id),
                public_signup_token_users::created_at.eq(now),
            ))
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                data: Some(to_json("data", &serde_json::json!({"userId": row.id}))?),
                ..NewEvent::new(EventType::PublicSignupTokenUserAdded, &actor, now)
            },
        )?;
        Ok(row)
    })
}
