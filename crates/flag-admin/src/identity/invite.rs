//! Invite links (public signup tokens) and signing up with one.

pub mod types;

use std::net::IpAddr;

use chrono::Months;
use flag_store::models::{NewUser, SignupTokenRow};
use flag_store::queries;

use crate::identity::Identity;
use crate::identity::auth::{Access, Caller};
use crate::identity::invite::types::{
    CreateInvitedUserRequest, CreateSignupTokenRequest, SignupTokenResponse, SignupTokensResponse,
    UpdateSignupTokenRequest,
};
use crate::identity::users::types::UserOut;
use crate::runtime::domain::RootRole;
use crate::runtime::input;
use crate::{AdminError, Detail, identity::password, runtime::Runtime, runtime::db, runtime::secrets};

/// Who may list the invite links.
pub const LIST: Access = Access::AdminRead;

/// Every invite link.
pub async fn list(ctx: &Runtime) -> Result<SignupTokensResponse, AdminError> {
    let tokens = db::run(&ctx.store, queries::signup_tokens::list).await?;
    Ok(SignupTokensResponse::new(tokens, ctx.now()))
}

/// Who may read an invite link.
pub const GET: Access = Access::AdminRead;

/// The invite link with `secret`.
pub async fn get(ctx: &Runtime, secret: String) -> Result<SignupTokenResponse, AdminError> {
    let token = db::run(&ctx.store, move |conn| queries::signup_tokens::get(conn, &secret)).await?;
    Ok(SignupTokenResponse::new(token, ctx.now()))
}

/// Who may create an invite link.
pub const CREATE: Access = Access::Admin;

/// Creates an invite link. Its expiry is capped at one month; users who sign up with it are
/// Viewers; its URL is `<UNLEASH_URL>/new-user?invite=<secret>`.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateSignupTokenRequest,
) -> Result<SignupTokenResponse, AdminError> {
    if request.name.trim().is_empty() {
        return Err(AdminError::invalid("/name", "/name must not be empty"));
    }
    let now = ctx.now().and_utc();
    let cap = now.checked_add_months(Months::new(1)).unwrap_or(now);
    let secret = secrets::random_hex(16).map_err(|error| AdminError::Internal(error.to_string()))?;
    let row = SignupTokenRow {
        url: Some(format!(
            "{}/new-user?invite={secret}",
            ctx.settings.unleash_url.trim_end_matches('/')
        )),
        secret,
        name: request.name,
        role_id: RootRole::Viewer.id(),
        enabled: true,
        expires_at: request.expires_at.0.min(cap).naive_utc(),
        created_at: now.naive_utc(),
        created_by: Some(caller.actor().name),
    };
    let token = caller
        .write(ctx, move |conn, actor, _| {
            queries::signup_tokens::create(conn, &row, actor)
        })
        .await?;
    Ok(SignupTokenResponse::new(token, now.naive_utc()))
}

/// Who may change an invite link's expiry or switch.
pub const UPDATE: Access = Access::Admin;

/// Changes an invite link's expiry or switch; answers with the whole link.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    secret: String,
    request: UpdateSignupTokenRequest,
) -> Result<SignupTokenResponse, AdminError> {
    if request.expires_at.is_none() && request.enabled.is_none() {
        return Err(AdminError::invalid("/", "give expiresAt, enabled or both"));
    }
    let (token, now) = caller
        .write(ctx, move |conn, actor, now| {
            let token = queries::signup_tokens::update(
                conn,
                &secret,
                request.expires_at.map(|time| time.0.naive_utc()),
                request.enabled,
                actor,
                now,
            )?;
            Ok((token, now))
        })
        .await?;
    Ok(SignupTokenResponse::new(token, now))
}

/// Who may ask whether an invite link can be used: anyone.
pub const VALIDATE: Access = Access::Public;

/// Whether the invite link `secret` can be used now: the same refusal for an unknown,
/// switched-off or expired link.
pub async fn validate(ctx: &Runtime, secret: String) -> Result<(), AdminError> {
    let now = ctx.now();
    db::run(&ctx.store, move |conn| {
        queries::signup_tokens::validate(conn, &secret, now)
    })
    .await
}

fn check_signup(request: &CreateInvitedUserRequest) -> Result<(), AdminError> {
    let mut details = input::person_problems(
        Some(&request.email),
        request.username.as_deref(),
        Some(&request.name),
    );
    details.extend(
        password::broken_rules(&request.password)
            .into_iter()
            .map(|rule| Detail::at("/password", rule)),
    );
    AdminError::check(details)
}

/// Who may sign up with an invite link: anyone.
pub const SIGN_UP: Access = Access::Public;

/// Signs a Viewer up with the invite link `secret`, for a request from `address`. Limited per
/// address; the body is checked before the link, and the link before the password is hashed.
pub async fn sign_up(
    ctx: &Runtime,
    identity: &Identity,
    address: IpAddr,
    secret: String,
    request: CreateInvitedUserRequest,
) -> Result<UserOut, AdminError> {
    identity.signup_limiter.admit(address)?;
    check_signup(&request)?;
    // An unusable link never pays for a hash; the signup transaction checks it again.
    validate(ctx, secret.clone()).await?;
    let hash = crate::identity::users::hash_password(ctx, request.password).await?;
    let now = ctx.now();
    let user = NewUser {
        name: Some(request.name.trim().to_owned()),
        username: request.username.map(|username| username.trim().to_owned()),
        email: Some(request.email.trim().to_owned()),
        password_hash: Some(hash),
        root_role: RootRole::Viewer,
        created_at: now,
    };
    let user = db::run(&ctx.store, move |conn| {
        queries::signup_tokens::sign_up(conn, &secret, &user, now)
    })
    .await
    .map_err(|error| match error {
        AdminError::NameExists(_) => {
            AdminError::NameExists("a user with that email or username already exists".into())
        }
        other => other,
    })?;
    Ok(UserOut::from(user))
}
