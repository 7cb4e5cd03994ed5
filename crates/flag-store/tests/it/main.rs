//! flag-store's integration tests, in one binary so that Diesel, SQLite and the crate are linked
//! once instead of once per test file.
//!
//! Each test still opens its own database through `common::TestDb`, so the modules share code
//! and nothing else. `crash` re-runs this binary as the writer it kills.

mod client_metrics;
mod common;
mod concurrency;
mod crash;
mod evaluation;
mod history;
mod migrate;
mod migrations;
mod mirror;
mod storage_caps;
