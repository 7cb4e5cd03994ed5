//! Halyard's application layer: every operation of the flag platform, declared once with the
//! access it needs and its rules, over `flag-eval` (the engine) and `flag-store` (the database).
//!
//! Every interface (the JSON API, the SDK protocols, the console) parses its input into the
//! types here, calls one operation, and renders what it returns. Nothing here knows HTTP:
//! failures are [`AdminError`]s, which each interface maps to its own answer.
//!
//! The crate is four wings, each allowed to use only those listed before it:
//!
//! - [`runtime`]: the store, settings, clock, CPU pool, errors, domain types, input rules;
//! - [`identity`]: credentials, users, invitations, single sign-on, and [`identity::auth`], the
//!   access each operation declares;
//! - [`catalogue`]: flags and everything that decides, groups or records them;
//! - [`delivery`]: what SDKs read and report, and the playgrounds.
//!
//! [`app`] assembles them into [`Ctx`], which every interface holds.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use flag_admin::{Ctx, Settings};
//! let scratch = flag_store::scratch::Scratch::new()?;
//! let ctx = Ctx::new(scratch.open()?, Settings::default())?;
//! assert_eq!(ctx.settings().unleash_url, "http://localhost:4242");
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod app;
pub mod catalogue;
pub mod delivery;
pub mod identity;
pub mod runtime;

pub use crate::app::Ctx;
pub use crate::runtime::clock::now;
pub use crate::runtime::error::{AdminError, Detail};
pub use crate::runtime::settings::Settings;
