//! admin-api's integration tests, in one binary: the real app from `build_app` on a temporary
//! database, driven in-process, and the real binary where only a socket shows the behaviour.
//! The hostile-input suite is a binary of its own (`tests/hostile.rs`), run in release mode.
//! The tests are grouped by capability, as flag-admin's wings are (`identity`, `catalogue`,
//! `delivery`), and `server` holds what is about the HTTP server itself; the insta snapshots of
//! each folder's tests are in its `snapshots/`.

mod answers;
mod catalogue;
mod common;
mod delivery;
mod identity;
mod migrate;
mod openapi;
mod server;
mod terraform;
