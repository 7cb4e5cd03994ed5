//! Logging in with a password, and out.

pub mod types;

use std::net::IpAddr;
use std::sync::atomic::Ordering;

use chrono::Duration;
use flag_store::models::{SessionRow, UserRow};
use flag_store::queries;

use crate::identity::Identity;
use crate::identity::auth::Access;
use crate::identity::session::types::LoginRequest;
use crate::identity::users::types::UserOut;
use crate::{AdminError, identity::password, runtime::Runtime, runtime::db, runtime::secrets};

/// How long a login lasts.
pub const SESSION_DAYS: i64 = 2;

/// A successful login: the user, and the secret of the session it opened, which the interface
/// hands to the browser. Only the secret's verifier is stored.
#[derive(Debug)]
pub struct LoggedIn {
    /// The user, as of this login.
    pub user: UserOut,
    /// The session's secret.
    pub session: String,
}

/// Who may sign in with a password: anyone.
pub const LOGIN: Access = Access::Public;

/// Logs in with an email or username (an email is matched first) and a password, for a
/// request from `address`.
///
/// Attempts are limited per address, and an unknown user costs one password verification like
/// a known one, so neither guessing nor timing tells who has an account.
pub async fn login(
    ctx: &Runtime,
    identity: &Identity,
    address: IpAddr,
    request: LoginRequest,
) -> Result<LoggedIn, AdminError> {
    identity.login_limiter.admit(address)?;
    if !crate::identity::oidc::login_options(ctx).await?.password {
        return Err(AdminError::InvalidOperation(
            "Logging in with username/password has been disabled.".into(),
        ));
    }
    let login = request.username.trim().to_owned();
    let user = db::run(&ctx.store, move |conn| {
        queries::users::find_by_login(conn, &login)
    })
    .await?;
    let stored = user.as_ref().and_then(|user| user.password_hash.clone());
    let candidate = request.password;
    let verified = ctx
        .cpu
        .run(move || password::check(&candidate, stored.as_deref()))
        .await?;
    let valid = verified != password::Verified::No;
    identity.passwords_verified.fetch_add(1, Ordering::Relaxed);
    let Some(mut user) = user else {
        return Err(AdminError::PasswordMismatch);
    };
    let now = ctx.now();
    let id = user.id;
    db::run(&ctx.store, move |conn| {
        if let password::Verified::Rehashed(rehashed) = &verified {
            queries::users::replace_password_hash(conn, id, rehashed)?;
        }
        queries::users::record_login(conn, id, valid, now)
    })
    .await?;
    if !valid {
        return Err(AdminError::PasswordMismatch);
    }
    user.seen_at = Some(now);
    user.login_attempts = 0;
    open(ctx, user, now, Proof::Password).await
}

/// How a user proved who they are, as a session remembers it.
pub(crate) enum Proof {
    /// With a password.
    Password,
    /// Through the OpenID provider, with the ID token it sent when single sign-out needs it.
    Oidc {
        /// The raw ID token, for `id_token_hint` when signing out there too.
        id_token: Option<String>,
    },
}

/// Opens a session for `user`, who has just proved who they are.
pub(crate) async fn open(
    ctx: &Runtime,
    user: UserRow,
    now: chrono::NaiveDateTime,
    proof: Proof,
) -> Result<LoggedIn, AdminError> {
    let secret = secrets::random_hex(32).map_err(|error| AdminError::Internal(error.to_string()))?;
    let (via_oidc, id_token) = match proof {
        Proof::Password => (false, None),
        Proof::Oidc { id_token } => (true, id_token),
    };
    let session = SessionRow {
        token_hash: secrets::verifier(&secret),
        user_id: user.id,
        created_at: now,
        expires_at: now + Duration::days(SESSION_DAYS),
        via_oidc,
        id_token,
    };
    db::run(&ctx.store, move |conn| queries::sessions::create(conn, &session)).await?;
    Ok(LoggedIn {
        user: UserOut::from(user),
        session: secret,
    })
}

/// Where the browser goes once its session has ended.
#[derive(PartialEq, Eq)]
pub enum SignedOut {
    /// Nowhere else: the session was opened with a password, or single sign-out is off, or there
    /// was no session.
    Here,
    /// On to the OpenID provider's end-session endpoint, through the console's page for it (see
    /// [`crate::identity::oidc::logout_url`]), which `handle` lets read the session's ID token once.
    AtProvider {
        /// A one-time handle to the ended session's ID token; it signs no one in.
        handle: String,
    },
}

impl std::fmt::Debug for SignedOut {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Here => formatter.write_str("Here"),
            Self::AtProvider { .. } => formatter
                .debug_struct("AtProvider")
                .field("handle", &"<redacted>")
                .finish(),
        }
    }
}

/// Who may sign out: anyone.
pub const LOGOUT: Access = Access::Public;

/// Ends the session whose secret is `session`, when there is one, and answers where the browser
/// goes next. With single sign-out on, a session opened through the OpenID provider goes on to
/// the provider; the ID token it kept stays on the server, under a one-time handle, until the
/// page that sends the browser there reads it.
pub async fn logout(ctx: &Runtime, session: Option<&str>) -> Result<SignedOut, AdminError> {
    let Some(session) = session else {
        return Ok(SignedOut::Here);
    };
    let hash = secrets::verifier(session);
    if !crate::identity::oidc::single_sign_out(ctx).await {
        db::run(&ctx.store, move |conn| queries::sessions::delete(conn, &hash)).await?;
        return Ok(SignedOut::Here);
    }
    let handle = secrets::random_hex(32).map_err(|error| AdminError::Internal(error.to_string()))?;
    let handle_hash = secrets::verifier(&handle);
    let now = ctx.now();
    let via_oidc = db::run(&ctx.store, move |conn| {
        queries::sessions::end_keeping_id_token(conn, &hash, &handle_hash, now)
    })
    .await?;
    Ok(if via_oidc {
        SignedOut::AtProvider { handle }
    } else {
        SignedOut::Here
    })
}
