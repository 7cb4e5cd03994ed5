//! Halyard's HTTP server: Unleash's admin, client, frontend and Edge APIs and OpenFeature's
//! OFREP, and the web console, as thin adapters over the application layer (`flag-admin`).
//!
//! [`build_app`] assembles the whole application from an [`AppState`]; `main` and the tests
//! both call it. Each operation is declared once in [`routes`], with its access; a handler
//! parses, calls one application operation and renders its answer.
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod app;
pub mod auth;
pub mod client_cache;
pub mod config;
pub mod console;
pub mod cors;
pub mod error;
pub mod extract;
pub mod handlers;
pub mod handoff;
pub mod metrics;
pub mod openapi;
pub mod request_log;
pub mod respond;
pub mod routes;
pub mod server;
pub mod state;
pub mod streaming;

pub use crate::app::build_app;
pub use crate::state::AppState;
