//! Who is asking and what they may do: credentials (API tokens, passwords, sessions, single
//! sign-on), the users and their invitations, and the access every operation declares.
//!
//! [`Identity`] is the state it owns: the token cache, the rate limiters and the OpenID
//! provider as last discovered.

pub mod auth;
pub mod invite;
pub mod me;
pub mod oidc;
pub mod password;
pub mod rate_limit;
pub mod session;
pub mod teams;
pub mod tokens;
pub mod users;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime::settings::Settings;

/// What the identity wing keeps in memory.
#[derive(Debug)]
pub struct Identity {
    /// Signups per client address.
    pub(crate) signup_limiter: rate_limit::RateLimiter,
    /// Login attempts per client address.
    pub(crate) login_limiter: rate_limit::RateLimiter,
    /// The API tokens, as of the store's revision.
    pub(crate) tokens: auth::TokenCache,
    /// Password verifications run by logins, unknown users included.
    pub(crate) passwords_verified: AtomicU64,
    /// The OpenID provider as last discovered.
    pub(crate) oidc: oidc::Oidc,
}

impl Identity {
    /// The identity wing's state, with the limits `settings` sets.
    pub fn new(settings: &Settings) -> Self {
        Self {
            signup_limiter: rate_limit::RateLimiter::new(settings.signups_per_minute),
            login_limiter: rate_limit::RateLimiter::new(settings.logins_per_minute),
            tokens: auth::TokenCache::new(1),
            passwords_verified: AtomicU64::new(0),
            oidc: oidc::Oidc::default(),
        }
    }

    /// Password verifications run by logins since the start, unknown users included.
    pub fn passwords_verified(&self) -> u64 {
        self.passwords_verified.load(Ordering::Relaxed)
    }
}
