//! admin-api's integration tests, in one binary: the real app from `build_app` on a temporary
//! database, driven in-process, and the real binary where only a socket shows the behaviour.
//! The hostile-input suite is a binary of its own (`tests/hostile.rs`), run in release mode.

mod admin;
mod api;
mod archive;
mod client;
mod client_cache;
mod common;
mod console;
mod contract;
mod edge;
mod environments_and_lists;
mod events;
mod export;
mod frontend;
mod hardening;
mod invite;
mod logging;
mod ofrep;
mod openapi;
mod parity;
mod replicas;
mod resources;
mod sdk_surface;
mod sdks;
mod search;
mod segments_and_fields;
mod shutdown;
mod snapshots;
mod sso;
mod streaming;
mod tags;
mod token_scope;
mod tokens_and_strategy_types;
mod usage;
mod usage_caps;
mod variants;
mod webhooks;
mod webui;
