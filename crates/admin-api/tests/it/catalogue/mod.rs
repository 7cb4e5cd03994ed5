//! Flags and what decides, groups and records them: features and the archive, strategies and
//! their types, variants, dependencies, context fields, segments, environments, tags, the
//! search, events, export and import, and webhooks; and the catalogue's answers, pinned.

mod change_requests;
mod context_fields;
mod contract;
mod dependencies;
mod environments;
mod events;
mod export;
mod features;
mod search;
mod segments;
mod strategies;
mod strategy_types;
mod tags;
mod variants;
pub(crate) mod webhooks;
