//! Flags: created in each environment of their project, read, listed, updated and patched,
//! switched per environment within the caller's environments, cloned, typed, and made to depend
//! on a parent.

use chrono::NaiveDateTime;
use flag_admin::AdminError;
use flag_admin::catalogue::dependencies::types::AddDependency;
use flag_admin::catalogue::features::types::{BulkSwitch, FeatureQuery, SwitchQuery, UpdateLifetime};
use flag_admin::catalogue::{archive, dependencies, features, strategies, variants};
use flag_admin::runtime::domain::RootRole;
use flag_store::models::{Actor, LifecycleRow};
use serde_json::json;

use crate::catalogue_fixture::{
    bare_feature, body, create_project, enabled_in, environment_reader, environment_writer, flag, place,
    seed_feature, writer,
};
use crate::common::{self, Outcome, World};

fn read() -> flag_admin::identity::auth::Caller {
    common::admin(features::GET)
}

#[tokio::test]
async fn a_flag_is_created_in_every_environment_of_its_project_and_read_back() -> Outcome {
    let world = World::new()?;
    let created = features::create(
        &world.ctx,
        &writer(),
        "default".into(),
        body(json!({"name": "checkout", "type": "kill-switch", "description": "new checkout", "impressionData": true}))?,
    )
    .await?;
    assert_eq!(created.name, "checkout");
    assert_eq!(created.project, "default");
    assert_eq!(created.feature_type, "kill-switch");
    assert_eq!(created.description.as_deref(), Some("new checkout"));
    assert!(created.impression_data);
    assert!(!created.stale && !created.archived && created.archived_at.is_none());

    // Listed with its state in each environment of the project, off and without strategies.
    let listed = features::list(&world.ctx, &read(), "default".into()).await?;
    assert_eq!(listed.version, 2);
    assert_eq!(listed.features.len(), 1);
    let item = &listed.features[0];
    assert_eq!(item.feature.name, "checkout");
    let states: Vec<(&str, bool, bool)> = item
        .environments
        .iter()
        .map(|state| (state.name.as_str(), state.enabled, state.has_strategies))
        .collect();
    assert_eq!(
        states,
        [("development", false, false), ("production", false, false)]
    );

    // Its read: every environment by display order, who created it, its first stage.
    let detail = features::get(&world.ctx, &read(), flag("checkout"), FeatureQuery::default()).await?;
    assert_eq!(detail.name, "checkout");
    assert_eq!(detail.feature_type, "kill-switch");
    assert!(!detail.archived);
    let names: Vec<&str> = detail
        .environments
        .iter()
        .map(|state| state.name.as_str())
        .collect();
    assert_eq!(names, ["development", "production"]);
    assert!(
        detail.environments.iter().all(|state| state.variants.is_none()),
        "variants only when asked for"
    );
    let creator = detail.created_by.as_ref().ok_or("no creator")?;
    assert_eq!(
        (creator.id, creator.name.as_str()),
        (Actor::ADMIN_TOKEN, "Unleash Admin Token User")
    );
    assert_eq!(
        detail.lifecycle.as_ref().map(|stage| stage.stage.as_str()),
        Some("initial")
    );
    assert_eq!(detail.collaborators.users.len(), 1);
    assert!(detail.dependencies.is_empty() && detail.children.is_empty());
    let with_variants = features::get(
        &world.ctx,
        &read(),
        flag("checkout"),
        body(json!({"variantEnvironments": "true"}))?,
    )
    .await?;
    assert!(
        with_variants
            .environments
            .iter()
            .all(|state| state.variants.as_deref() == Some(&[]))
    );

    // Names are unique; the project and the flag must exist.
    let taken = features::create(
        &world.ctx,
        &writer(),
        "default".into(),
        body(json!({"name": "checkout"}))?,
    )
    .await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let nowhere = features::create(
        &world.ctx,
        &writer(),
        "nowhere".into(),
        body(json!({"name": "lost"}))?,
    )
    .await;
    assert!(matches!(nowhere, Err(AdminError::NotFound(_))), "{nowhere:?}");
    for (project, name) in [("default", "missing"), ("nowhere", "checkout")] {
        let missing = features::get(
            &world.ctx,
            &read(),
            (project.into(), name.into()),
            FeatureQuery::default(),
        )
        .await;
        assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    }
    let unknown = features::list(&world.ctx, &read(), "nowhere".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    // A name that is not URL-friendly never reaches the operation.
    assert!(body::<features::types::CreateFeature>(json!({"name": "not friendly"})).is_err());
    Ok(())
}

#[tokio::test]
async fn a_user_who_creates_a_flag_is_its_creator_and_collaborator() -> Outcome {
    let world = World::new()?;
    let editor = features::CREATE.admit(common::user(7, RootRole::Editor))?;
    features::create(
        &world.ctx,
        &editor,
        "default".into(),
        body(json!({"name": "authored"}))?,
    )
    .await?;
    let detail = features::get(&world.ctx, &read(), flag("authored"), FeatureQuery::default()).await?;
    assert_eq!(detail.created_by.as_ref().map(|person| person.id), Some(7));
    let collaborators: Vec<(i32, &str)> = detail
        .collaborators
        .users
        .iter()
        .map(|person| (person.id, person.name.as_str()))
        .collect();
    assert_eq!(
        collaborators,
        [(7, "user-7")],
        "named as the audit log names them"
    );
    Ok(())
}

#[tokio::test]
async fn a_token_limited_to_an_environment_sees_only_that_environment() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "scoped").await?;
    let production = common::token(features::LIST, Some(&["production"]));
    let listed = features::list(&world.ctx, &production, "default".into()).await?;
    let names: Vec<&str> = listed.features[0]
        .environments
        .iter()
        .map(|state| state.name.as_str())
        .collect();
    assert_eq!(names, ["production"]);
    let detail = features::get(&world.ctx, &production, flag("scoped"), FeatureQuery::default()).await?;
    let names: Vec<&str> = detail
        .environments
        .iter()
        .map(|state| state.name.as_str())
        .collect();
    assert_eq!(names, ["production"]);
    Ok(())
}

#[tokio::test]
async fn updates_set_every_field_and_patches_change_some() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "checkout").await?;
    let updated = features::update(
        &world.ctx,
        &writer(),
        flag("checkout"),
        body(json!({"description": "new checkout", "type": "kill-switch", "impressionData": true}))?,
    )
    .await?;
    assert_eq!(updated.feature_type, "kill-switch");
    assert!(updated.impression_data);
    // An update sets every field: what it leaves out takes its default.
    let updated = features::update(&world.ctx, &writer(), flag("checkout"), body(json!({}))?).await?;
    assert_eq!(updated.description, None);
    assert_eq!(updated.feature_type, "release");
    assert!(!updated.impression_data);

    let patched = features::patch(
        &world.ctx,
        &writer(),
        flag("checkout"),
        body(json!([
            {"op": "replace", "path": "/stale", "value": true},
            {"op": "replace", "path": "/description", "value": "old"}
        ]))?,
    )
    .await?;
    assert!(patched.stale);
    assert_eq!(patched.description.as_deref(), Some("old"));
    assert_eq!(patched.feature_type, "release", "what the patch leaves is kept");

    // A flag cannot be renamed, by an update or a patch.
    let renamed = features::update(
        &world.ctx,
        &writer(),
        flag("checkout"),
        body(json!({"name": "renamed"}))?,
    )
    .await;
    assert!(
        matches!(&renamed, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/name")),
        "{renamed:?}"
    );
    let renamed = features::patch(
        &world.ctx,
        &writer(),
        flag("checkout"),
        body(json!([{"op": "replace", "path": "/name", "value": "renamed"}]))?,
    )
    .await;
    assert!(
        matches!(renamed, Err(AdminError::Validation { .. })),
        "{renamed:?}"
    );
    // Variants have operations of their own.
    let variants = features::patch(
        &world.ctx,
        &writer(),
        flag("checkout"),
        body(json!([{"op": "replace", "path": "/variants", "value": []}]))?,
    )
    .await;
    assert!(
        matches!(variants, Err(AdminError::InvalidOperation(_))),
        "{variants:?}"
    );
    // A patch that does not apply, or leaves a document that does not read, is bad input.
    for operations in [
        json!([{"op": "test", "path": "/stale", "value": false}]),
        json!([{"op": "replace", "path": "/type", "value": "nope"}]),
    ] {
        let refused = features::patch(&world.ctx, &writer(), flag("checkout"), body(operations)?).await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{refused:?}"
        );
    }
    let missing = features::update(&world.ctx, &writer(), flag("missing"), body(json!({}))?).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let missing = features::patch(&world.ctx, &writer(), flag("missing"), body(json!([]))?).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    assert!(body::<features::types::UpdateFeature>(json!({"type": "nope"})).is_err());

    // An update may archive the flag outright: it is then no longer read.
    let archived = features::update(
        &world.ctx,
        &writer(),
        flag("checkout"),
        body(json!({"archived": true}))?,
    )
    .await?;
    assert!(archived.archived && archived.archived_at.is_some());
    let gone = features::get(&world.ctx, &read(), flag("checkout"), FeatureQuery::default()).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    Ok(())
}

#[tokio::test]
async fn names_are_checked_against_live_and_archived_flags() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "live-one").await?;
    bare_feature(&world, "default", "gone").await?;
    archive::archive_one(&world.ctx, &writer(), "default".into(), "gone".into()).await?;
    features::validate_name(&world.ctx, body(json!({"name": "fresh"}))?).await?;
    let live = features::validate_name(&world.ctx, body(json!({"name": "live-one"}))?).await;
    assert!(
        matches!(&live, Err(AdminError::NameExists(message)) if message == "A flag with that name already exists"),
        "{live:?}"
    );
    let archived = features::validate_name(&world.ctx, body(json!({"name": "gone"}))?).await;
    assert!(
        matches!(&archived, Err(AdminError::NameExists(message)) if message == "An archived flag with that name already exists"),
        "{archived:?}"
    );
    let unfriendly = features::validate_name(&world.ctx, body(json!({"name": "not url friendly"}))?).await;
    assert!(
        matches!(&unfriendly, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/name")),
        "{unfriendly:?}"
    );
    Ok(())
}

#[tokio::test]
async fn feature_types_list_in_order_and_their_lifetimes_change() -> Outcome {
    let world = World::new()?;
    let types = features::types(&world.ctx).await?;
    let ids: Vec<&str> = types.types.iter().map(|kind| kind.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "release",
            "experiment",
            "operational",
            "kill-switch",
            "permission",
            "sunset"
        ]
    );
    let admin = crate::catalogue_fixture::administrator();
    // Any letter case names the type; 0 means never potentially stale.
    let never = features::set_lifetime(
        &world.ctx,
        &admin,
        "Release".into(),
        UpdateLifetime {
            lifetime_days: Some(0),
        },
    )
    .await?;
    assert_eq!((never.id.as_str(), never.lifetime_days), ("release", None));
    let week = features::set_lifetime(
        &world.ctx,
        &admin,
        "release".into(),
        UpdateLifetime {
            lifetime_days: Some(7),
        },
    )
    .await?;
    assert_eq!(week.lifetime_days, Some(7));
    let types = features::types(&world.ctx).await?;
    assert_eq!(types.types[0].lifetime_days, Some(7));
    let unknown = features::set_lifetime(
        &world.ctx,
        &admin,
        "nope".into(),
        UpdateLifetime {
            lifetime_days: Some(3),
        },
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let too_long = features::set_lifetime(
        &world.ctx,
        &admin,
        "release".into(),
        UpdateLifetime {
            lifetime_days: Some(u32::MAX),
        },
    )
    .await;
    assert!(
        matches!(&too_long, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/lifetimeDays")),
        "{too_long:?}"
    );
    Ok(())
}

#[tokio::test]
async fn switching_on_without_a_strategy_adds_the_default_rollout() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "bare").await?;
    let before =
        features::environment(&world.ctx, &environment_reader(), place("bare", "development")).await?;
    assert_eq!(
        (before.name.as_str(), before.environment.as_str(), before.enabled),
        ("bare", "development", false)
    );
    assert!(before.strategies.is_empty());
    features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("bare", "development"),
        true,
        SwitchQuery::default(),
    )
    .await?;
    let after =
        features::environment(&world.ctx, &environment_reader(), place("bare", "development")).await?;
    assert!(after.enabled);
    assert_eq!(after.strategies.len(), 1);
    let added = &after.strategies[0];
    assert_eq!(added.name, "flexibleRollout");
    assert_eq!(added.feature_name, "bare");
    assert_eq!(added.parameters.get("rollout"), Some("100"));
    assert_eq!(added.parameters.get("groupId"), Some("bare"));
    assert!(
        !enabled_in(&world, "bare", "production").await?,
        "one environment only"
    );

    // Off, then on again: the strategy it has is enough.
    features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("bare", "development"),
        false,
        SwitchQuery::default(),
    )
    .await?;
    assert!(!enabled_in(&world, "bare", "development").await?);

    // Unknown flags and environments, and a flag of another project, are not found.
    for (project, feature, environment) in [
        ("default", "missing", "development"),
        ("default", "bare", "staging"),
        ("other", "bare", "development"),
    ] {
        let place = (project.into(), feature.into(), environment.into());
        let switched = features::switch_with(
            &world.ctx,
            &environment_writer(),
            place,
            true,
            SwitchQuery::default(),
        )
        .await;
        assert!(matches!(switched, Err(AdminError::NotFound(_))), "{switched:?}");
    }
    let unknown = features::environment(&world.ctx, &environment_reader(), place("bare", "staging")).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // An archived flag cannot be switched.
    archive::archive_one(&world.ctx, &writer(), "default".into(), "bare".into()).await?;
    let archived = features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("bare", "development"),
        true,
        SwitchQuery::default(),
    )
    .await;
    assert!(
        matches!(archived, Err(AdminError::ArchivedFeature)),
        "{archived:?}"
    );
    Ok(())
}

#[tokio::test]
async fn environment_state_is_read_and_switched_only_where_the_caller_may() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "scoped").await?;
    let switch = features::SWITCH_WITH;
    let production = common::token(switch, Some(&["production"]));
    let refused = features::switch_with(
        &world.ctx,
        &production,
        place("scoped", "development"),
        false,
        SwitchQuery::default(),
    )
    .await;
    assert!(
        matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"development\"")),
        "{refused:?}"
    );
    let refused = features::switch_many(
        &world.ctx,
        &production,
        ("default".into(), "development".into()),
        BulkSwitch {
            features: vec!["scoped".into()],
        },
        false,
        SwitchQuery::default(),
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    assert!(
        enabled_in(&world, "scoped", "development").await?,
        "nothing was switched"
    );
    features::switch_with(
        &world.ctx,
        &production,
        place("scoped", "production"),
        false,
        SwitchQuery::default(),
    )
    .await?;
    assert!(!enabled_in(&world, "scoped", "production").await?);

    // A Viewer is admitted to the operation and refused in every environment.
    let viewer = switch.admit(common::user(3, RootRole::Viewer))?;
    let refused = features::switch_with(
        &world.ctx,
        &viewer,
        place("scoped", "production"),
        true,
        SwitchQuery::default(),
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");

    // Reading one environment's state follows the same rule.
    let reader = common::token(features::ENVIRONMENT, Some(&["production"]));
    let refused = features::environment(&world.ctx, &reader, place("scoped", "development")).await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    features::environment(&world.ctx, &reader, place("scoped", "production")).await?;
    Ok(())
}

#[tokio::test]
async fn bulk_switches_are_all_or_nothing_and_can_enable_disabled_strategies() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "one").await?;
    seed_feature(&world, "two").await?;
    let development = || ("default".to_owned(), "development".to_owned());
    let missing = features::switch_many(
        &world.ctx,
        &environment_writer(),
        development(),
        BulkSwitch {
            features: vec!["one".into(), "missing".into()],
        },
        false,
        SwitchQuery::default(),
    )
    .await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    assert!(
        enabled_in(&world, "one", "development").await?,
        "nothing was switched"
    );
    features::switch_many(
        &world.ctx,
        &environment_writer(),
        development(),
        BulkSwitch {
            features: vec!["one".into(), "two".into()],
        },
        false,
        SwitchQuery::default(),
    )
    .await?;
    assert!(!enabled_in(&world, "one", "development").await?);
    assert!(!enabled_in(&world, "two", "development").await?);
    assert!(enabled_in(&world, "two", "production").await?);

    // With its only strategy disabled, switching on enables it when asked to...
    let listed = strategies::list(&world.ctx, &environment_reader(), place("one", "development")).await?;
    strategies::patch(
        &world.ctx,
        &environment_writer(),
        place("one", "development"),
        listed[0].id.clone(),
        body(json!([{"op": "replace", "path": "/disabled", "value": true}]))?,
    )
    .await?;
    features::switch_many(
        &world.ctx,
        &environment_writer(),
        development(),
        BulkSwitch {
            features: vec!["one".into()],
        },
        true,
        body(json!({"shouldActivateDisabledStrategies": "true"}))?,
    )
    .await?;
    let listed = strategies::list(&world.ctx, &environment_reader(), place("one", "development")).await?;
    assert_eq!(listed.len(), 1);
    assert!(!listed[0].disabled);
    // ...and otherwise adds the default strategy beside it.
    strategies::patch(
        &world.ctx,
        &environment_writer(),
        place("two", "development"),
        strategies::list(&world.ctx, &environment_reader(), place("two", "development")).await?[0]
            .id
            .clone(),
        body(json!([{"op": "replace", "path": "/disabled", "value": true}]))?,
    )
    .await?;
    features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("two", "development"),
        true,
        body(json!({"shouldActivateDisabledStrategies": "yes"}))?,
    )
    .await?;
    let listed = strategies::list(&world.ctx, &environment_reader(), place("two", "development")).await?;
    let shapes: Vec<(&str, bool)> = listed
        .iter()
        .map(|strategy| (strategy.name.as_str(), strategy.disabled))
        .collect();
    assert_eq!(shapes, [("default", true), ("flexibleRollout", false)]);
    Ok(())
}

async fn depend(world: &World, child: &str, parent: &str) -> Result<(), AdminError> {
    dependencies::add(
        &world.ctx,
        &common::admin(dependencies::ADD),
        "default".into(),
        child.into(),
        AddDependency {
            feature: parent.into(),
            enabled: None,
            variants: Vec::new(),
        },
    )
    .await
}

#[tokio::test]
async fn a_flag_depends_on_one_parent_of_its_project_without_chains() -> Outcome {
    let world = World::new()?;
    for name in ["parent", "child", "other"] {
        seed_feature(&world, name).await?;
    }
    assert!(!features::has_dependencies(&world.ctx, "default".into()).await?);
    assert_eq!(
        features::parent_options(&world.ctx, "child".into()).await?,
        ["other", "parent"]
    );
    depend(&world, "child", "parent").await?;
    assert!(features::has_dependencies(&world.ctx, "default".into()).await?);
    let child = features::get(&world.ctx, &read(), flag("child"), FeatureQuery::default()).await?;
    let parents: Vec<(&str, bool)> = child
        .dependencies
        .iter()
        .map(|dependency| (dependency.feature.as_str(), dependency.enabled))
        .collect();
    assert_eq!(parents, [("parent", true)], "the parent must be on, by default");
    let parent = features::get(&world.ctx, &read(), flag("parent"), FeatureQuery::default()).await?;
    assert_eq!(parent.children, ["child"]);
    // A flag with a parent is no one's parent; an unknown flag has no options.
    assert_eq!(
        features::parent_options(&world.ctx, "other".into()).await?,
        ["parent"]
    );
    assert!(
        features::parent_options(&world.ctx, "missing".into())
            .await?
            .is_empty()
    );

    // A new parent replaces the old one, with the state and the variants it asks for.
    variants::batch(
        &world.ctx,
        &environment_writer(),
        "default".into(),
        "other".into(),
        json!({"variants": [{"name": "red", "weight": 500}, {"name": "blue", "weight": 500}], "environments": ["production"]}),
    )
    .await?;
    assert_eq!(
        features::parent_variants(&world.ctx, "other".into()).await?,
        ["blue", "red"]
    );
    dependencies::add(
        &world.ctx,
        &writer(),
        "default".into(),
        "child".into(),
        body(json!({"feature": "other", "enabled": true, "variants": ["red"]}))?,
    )
    .await?;
    let child = features::get(&world.ctx, &read(), flag("child"), FeatureQuery::default()).await?;
    assert_eq!(child.dependencies.len(), 1);
    assert_eq!(child.dependencies[0].feature, "other");
    assert_eq!(child.dependencies[0].variants, ["red"]);

    // Refused: itself, an unknown or archived parent, a parent of another project, and chains
    // (a parent with a parent, a child with children).
    bare_feature(&world, "default", "archived").await?;
    archive::archive_one(&world.ctx, &writer(), "default".into(), "archived".into()).await?;
    create_project(&world, "elsewhere").await?;
    bare_feature(&world, "elsewhere", "stranger").await?;
    for (child, parent) in [
        ("child", "child"),
        ("child", "missing"),
        ("child", "archived"),
        ("child", "stranger"),
        ("parent", "child"),
        ("other", "parent"),
    ] {
        let refused = depend(&world, child, parent).await;
        assert!(
            matches!(refused, Err(AdminError::InvalidOperation(_))),
            "{child} on {parent}: {refused:?}"
        );
    }
    let unknown = depend(&world, "missing", "parent").await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // Removing it leaves the child on its own; the child must exist.
    dependencies::remove(&world.ctx, &writer(), "default".into(), "child".into()).await?;
    let child = features::get(&world.ctx, &read(), flag("child"), FeatureQuery::default()).await?;
    assert!(child.dependencies.is_empty());
    assert!(!features::has_dependencies(&world.ctx, "default".into()).await?);
    let unknown = dependencies::remove(&world.ctx, &writer(), "default".into(), "missing".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    Ok(())
}

#[tokio::test]
async fn clones_copy_strategies_variants_and_parent_switched_off() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "parent").await?;
    seed_feature(&world, "original").await?;
    strategies::add(
        &world.ctx,
        &environment_writer(),
        place("original", "development"),
        body(json!({"name": "flexibleRollout", "parameters": {"rollout": "40", "stickiness": "default", "groupId": "original"}}))?,
    )
    .await?;
    dependencies::add(
        &world.ctx,
        &writer(),
        "default".into(),
        "original".into(),
        body(json!({"feature": "parent"}))?,
    )
    .await?;
    let creator = common::admin(features::CLONE);
    let copy = features::clone(
        &world.ctx,
        &creator,
        flag("original"),
        body(json!({"name": "copy"}))?,
    )
    .await?;
    assert_eq!((copy.name.as_str(), copy.project.as_str()), ("copy", "default"));
    let read_copy = features::get(&world.ctx, &read(), flag("copy"), FeatureQuery::default()).await?;
    assert!(read_copy.environments.iter().all(|state| !state.enabled));
    let development = &read_copy.environments[0];
    assert_eq!(development.strategies.len(), 2);
    assert_eq!(development.strategies[1].parameters.get("groupId"), Some("copy"));
    assert_eq!(read_copy.dependencies[0].feature, "parent");
    // Asked not to, the group stays the original's.
    let kept = features::clone(
        &world.ctx,
        &creator,
        flag("original"),
        body(json!({"name": "kept-group", "replaceGroupId": false}))?,
    )
    .await?;
    let read_kept = features::get(&world.ctx, &read(), flag(&kept.name), FeatureQuery::default()).await?;
    assert_eq!(
        read_kept.environments[0].strategies[1].parameters.get("groupId"),
        Some("original")
    );

    let taken = features::clone(
        &world.ctx,
        &creator,
        flag("original"),
        body(json!({"name": "copy"}))?,
    )
    .await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let missing = features::clone(
        &world.ctx,
        &creator,
        flag("missing"),
        body(json!({"name": "other"}))?,
    )
    .await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    archive::archive_one(&world.ctx, &writer(), "default".into(), "copy".into()).await?;
    let archived = features::clone(
        &world.ctx,
        &creator,
        flag("copy"),
        body(json!({"name": "again"}))?,
    )
    .await;
    assert!(matches!(archived, Err(AdminError::NotFound(_))), "{archived:?}");
    Ok(())
}

#[test]
fn the_current_stage_is_the_furthest_one_entered() -> Result<(), String> {
    let at = NaiveDateTime::parse_from_str("2026-01-01 00:00:00", "%Y-%m-%d %H:%M:%S")
        .map_err(|error| error.to_string())?;
    let row = |stage: &str, status: Option<&str>| LifecycleRow {
        feature_name: "f".into(),
        stage: stage.into(),
        status: status.map(str::to_owned),
        status_value: None,
        created_at: at,
    };
    assert!(features::current_stage(&[]).is_none());
    let stage =
        |rows: &[LifecycleRow]| features::current_stage(rows).map(|stage| (stage.stage, stage.status));
    assert_eq!(
        stage(&[row("initial", None), row("pre-live", None)]),
        Some(("pre-live".into(), None))
    );
    assert_eq!(
        stage(&[
            row("initial", None),
            row("completed", Some("kept")),
            row("live", None)
        ]),
        Some(("completed".into(), Some("kept".into())))
    );
    assert_eq!(
        stage(&[row("archived", None), row("completed", Some("discarded"))]),
        Some(("archived".into(), None))
    );
    let entered = features::current_stage(&[row("initial", None)]).map(|stage| stage.entered_stage_at);
    assert_eq!(entered.as_deref(), Some("2026-01-01T00:00:00.000Z"));
    Ok(())
}
