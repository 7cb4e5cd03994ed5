//! What the catalogue's tests share: requests read from JSON as an interface reads them, the
//! callers the catalogue's operations declare, and flags seeded as the API's tests seed them.

use flag_admin::catalogue::features;
use flag_admin::catalogue::features::types::{FeatureQuery, SwitchQuery};
use flag_admin::catalogue::strategies;
use flag_admin::delivery::usage::FlagCount;
use flag_admin::identity::auth::{Access, Caller};
use flag_admin::runtime::domain::{RootRole, TokenType};
use flag_store::models::TokenProjects;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::common::{self, World};

/// What a helper returns: any error fails the test that called it.
pub type Fallible<T> = Result<T, Box<dyn std::error::Error>>;

/// A typed request read from `value`, as an interface reads its body or query.
pub fn body<T: DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(value)
}

/// An answer as JSON, for answers whose fields are private to the crate.
pub fn json_of<T: serde::Serialize>(answer: &T) -> Result<Value, serde_json::Error> {
    serde_json::to_value(answer)
}

/// Where a flag of the default project stands in one environment.
pub fn place(feature: &str, environment: &str) -> (String, String, String) {
    ("default".into(), feature.into(), environment.into())
}

/// The flag `feature` of the default project.
pub fn flag(feature: &str) -> (String, String) {
    ("default".into(), feature.into())
}

/// An admin token for every environment, admitted as a flag's update declares.
pub fn writer() -> Caller {
    common::admin(features::UPDATE)
}

/// An admin token for every environment, admitted to an environment's state as the switch
/// declares.
pub fn environment_writer() -> Caller {
    common::admin(features::SWITCH_WITH)
}

/// An admin token for every environment, admitted to read an environment's state as a flag's
/// environment read declares.
pub fn environment_reader() -> Caller {
    common::admin(features::ENVIRONMENT)
}

/// An admin token for every environment, admitted to administration.
pub fn administrator() -> Caller {
    common::admin(Access::Admin)
}

/// Creates `name` in the default project with the default strategy in development and
/// production, and switches it on in both.
pub async fn seed_feature(world: &World, name: &str) -> Fallible<()> {
    features::create(
        &world.ctx,
        &writer(),
        "default".into(),
        body(json!({"name": name}))?,
    )
    .await?;
    let caller = environment_writer();
    for environment in ["development", "production"] {
        strategies::add(
            &world.ctx,
            &caller,
            place(name, environment),
            body(json!({"name": "default"}))?,
        )
        .await?;
        features::switch_with(
            &world.ctx,
            &caller,
            place(name, environment),
            true,
            SwitchQuery::default(),
        )
        .await?;
    }
    Ok(())
}

/// Creates `name` in `project`, switched off everywhere and without strategies.
pub async fn bare_feature(world: &World, project: &str, name: &str) -> Fallible<()> {
    features::create(
        &world.ctx,
        &writer(),
        project.into(),
        body(json!({"name": name}))?,
    )
    .await?;
    Ok(())
}

/// Whether `feature` of the default project is on in `environment`, as its read says.
pub async fn enabled_in(world: &World, feature: &str, environment: &str) -> Fallible<bool> {
    let read = features::get(
        &world.ctx,
        &common::admin(features::GET),
        flag(feature),
        FeatureQuery::default(),
    )
    .await?;
    read.environments
        .iter()
        .find(|state| state.name == environment)
        .map(|state| state.enabled)
        .ok_or_else(|| format!("{feature} has no {environment} environment").into())
}

/// Creates the project `id`, with every enabled environment.
pub async fn create_project(world: &World, id: &str) -> Fallible<()> {
    flag_admin::catalogue::projects::create(
        &world.ctx,
        &administrator(),
        body(json!({"id": id, "name": id}))?,
    )
    .await?;
    Ok(())
}

/// Stores a user with `name` and `email` and the root role `role`, as the identity wing would;
/// answers their id.
pub async fn create_user(world: &World, name: &str, email: &str, role: RootRole) -> Fallible<i32> {
    let user = flag_store::models::NewUser {
        name: Some(name.into()),
        username: None,
        email: Some(email.into()),
        password_hash: None,
        root_role: role,
        created_at: flag_admin::now(),
    };
    let row = flag_store::queries::users::create(
        &mut *world.store().connection()?,
        &user,
        &flag_store::models::Actor::system(),
    )?;
    Ok(row.id)
}

/// Stores an API token of `token_type` for `environment` and `projects`, as the identity wing
/// would, under a made-up verifier.
pub fn store_token(world: &World, token_type: &str, environment: &str, projects: &[&str]) -> Fallible<()> {
    let projects: Vec<String> = projects.iter().map(|project| (*project).to_owned()).collect();
    let token = flag_store::models::NewApiToken::new(
        format!("{token_type}-{environment}"),
        format!("verifier-{token_type}-{environment}-{}", projects.join("-")),
        TokenType::parse(token_type).ok_or_else(|| format!("unknown token type {token_type}"))?,
        environment.into(),
        TokenProjects::from(projects),
        None,
        flag_admin::now(),
    );
    flag_store::queries::api_tokens::create(
        &mut *world.store().connection()?,
        &token,
        &flag_store::models::Actor::system(),
    )?;
    Ok(())
}

/// Reports that an SDK evaluated each flag in `environment` (`yes` times true, `no` times
/// false), and writes the report as the usage pipeline does.
pub async fn report_usage(world: &World, environment: &str, counts: &[(&str, i64, i64)]) -> Fallible<()> {
    let usage = world.ctx.delivery().usage();
    usage.count(
        "web",
        environment,
        None,
        flag_admin::now(),
        counts.iter().map(|(name, yes, no)| FlagCount {
            feature_name: (*name).into(),
            yes: *yes,
            no: *no,
            variants: std::collections::BTreeMap::new(),
        }),
    );
    world.ctx.flush_usage().await?;
    Ok(())
}
