//! What teams keep: flags and everything that decides them (strategies, variants,
//! dependencies, segments, context fields, strategy types, tags), where they live (projects,
//! environments), their history (events, lifecycle, archive), and what reads or moves them
//! (search, overviews, export and import, webhooks).
//!
//! The catalogue keeps no state of its own: its operations take the [`Runtime`] and an
//! admitted [`Caller`].
//!
//! [`Runtime`]: crate::runtime::Runtime
//! [`Caller`]: crate::identity::auth::Caller

pub mod addons;
pub mod archive;
pub mod change_requests;
pub mod context_fields;
pub mod dependencies;
pub mod environments;
pub mod events;
pub mod export;
pub mod features;
pub mod history;
pub mod lifecycle;
pub mod model;
pub mod overview;
pub mod projects;
pub mod search;
pub mod segments;
pub mod strategies;
pub mod strategy_types;
pub mod tags;
pub mod variants;
pub mod webhooks;
