//! The operations of `flag-admin`, called as every interface calls them, on a scratch store of
//! the backend under test (`HALYARD_TEST_DATABASE`): the rules, without HTTP.

mod app_seeding;
mod catalogue_access;
mod catalogue_archive;
mod catalogue_context_fields;
mod catalogue_events;
mod catalogue_export;
mod catalogue_features;
mod catalogue_fixture;
mod catalogue_overview;
mod catalogue_projects;
mod catalogue_search;
mod catalogue_segments;
mod catalogue_strategies;
mod catalogue_strategy_types;
mod catalogue_tags;
mod catalogue_variants;
mod catalogue_webhooks;
mod common;
mod coverage;
mod delivery_applications;
mod delivery_client;
mod delivery_delta;
mod delivery_frontend;
mod delivery_playground;
mod delivery_reports;
mod floor_plan;
mod identity_access;
mod identity_invite;
mod identity_oidc;
mod identity_session;
mod identity_teams;
mod identity_tokens;
mod identity_users;
mod runtime_health;
mod usage;
