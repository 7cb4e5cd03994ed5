//! A flag's strategies in one environment: added with Unleash's defaults, checked before they are
//! stored, listed in evaluation order, replaced, patched and removed, only in the environments
//! the caller may touch.

use flag_admin::AdminError;
use flag_admin::catalogue::features::types::{FeatureQuery, StrategyOrder};
use flag_admin::catalogue::strategies::types::StrategyRequest;
use flag_admin::catalogue::{context_fields, environments, features, strategies};
use flag_admin::identity::auth::Access;
use flag_admin::runtime::domain::RootRole;
use serde_json::json;

use crate::catalogue_fixture::{
    administrator, bare_feature, body, enabled_in, environment_reader, environment_writer, flag, place,
    seed_feature,
};
use crate::common::{self, Outcome, World};

#[tokio::test]
async fn strategies_are_added_with_unleash_defaults_and_listed_in_evaluation_order() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "ordered").await?;
    let writer = environment_writer();
    let first = strategies::add(
        &world.ctx,
        &writer,
        place("ordered", "development"),
        body(json!({"name": "default"}))?,
    )
    .await?;
    assert_eq!(first.sort_order, Some(0));
    assert_eq!(first.disabled, Some(false));
    let second = strategies::add(
        &world.ctx,
        &writer,
        place("ordered", "development"),
        body(json!({"name": "flexibleRollout", "title": "half", "parameters": {"rollout": 50}}))?,
    )
    .await?;
    let second_id = second.id.clone().ok_or("no id")?;
    assert_eq!(second.sort_order, Some(1), "after the others");
    // Numbers read as strings; a rollout gets Unleash's stickiness and group.
    assert_eq!(second.parameters.get("rollout"), Some("50"));
    assert_eq!(second.parameters.get("stickiness"), Some("default"));
    assert_eq!(second.parameters.get("groupId"), Some("ordered"));

    let listed = strategies::list(&world.ctx, &environment_reader(), place("ordered", "development")).await?;
    let ids: Vec<&str> = listed.iter().map(|strategy| strategy.id.as_str()).collect();
    assert_eq!(ids, [first.id.as_deref().ok_or("no id")?, second_id.as_str()]);
    assert!(listed.iter().all(|strategy| strategy.milestone_id.is_none()));
    assert_eq!(listed[1].title.as_deref(), Some("half"));
    let one = strategies::get(
        &world.ctx,
        &environment_reader(),
        place("ordered", "development"),
        second_id.clone(),
    )
    .await?;
    assert_eq!(one.parameters.get("rollout"), Some("50"));
    assert_eq!(one.sort_order, 1);

    // A new order puts the second first; every id must be one of the flag's strategies there.
    strategies::set_sort_order(
        &world.ctx,
        &writer,
        place("ordered", "development"),
        vec![StrategyOrder {
            id: second_id.clone(),
            sort_order: -1,
        }],
    )
    .await?;
    let environment =
        features::environment(&world.ctx, &environment_reader(), place("ordered", "development")).await?;
    assert_eq!(environment.strategies[0].id, second_id);
    let stranger = strategies::set_sort_order(
        &world.ctx,
        &writer,
        place("ordered", "development"),
        vec![StrategyOrder {
            id: "not-a-strategy".into(),
            sort_order: 1,
        }],
    )
    .await;
    assert!(
        matches!(stranger, Err(AdminError::Validation { .. })),
        "{stranger:?}"
    );
    let nowhere =
        strategies::set_sort_order(&world.ctx, &writer, place("ordered", "nowhere"), Vec::new()).await;
    assert!(matches!(nowhere, Err(AdminError::NotFound(_))), "{nowhere:?}");
    assert!(
        body::<StrategyOrder>(json!({"id": second_id})).is_err(),
        "the order is required"
    );

    // One given an order of its own, the next goes after it.
    strategies::add(
        &world.ctx,
        &writer,
        place("ordered", "development"),
        body(json!({"name": "default", "sortOrder": 10}))?,
    )
    .await?;
    let last = strategies::add(
        &world.ctx,
        &writer,
        place("ordered", "development"),
        body(json!({"name": "default"}))?,
    )
    .await?;
    assert_eq!(last.sort_order, Some(11));

    // Unknown strategies and environments are not found.
    let unknown = strategies::get(
        &world.ctx,
        &environment_reader(),
        place("ordered", "development"),
        "nope".into(),
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = strategies::list(&world.ctx, &environment_reader(), place("ordered", "nowhere")).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = strategies::get(
        &world.ctx,
        &environment_reader(),
        ("other".into(), "ordered".into(), "development".into()),
        second_id,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    Ok(())
}

#[tokio::test]
async fn strategies_are_replaced_patched_and_removed() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "banner").await?;
    let writer = environment_writer();
    let added = strategies::add(
        &world.ctx,
        &writer,
        place("banner", "development"),
        body(json!({
            "name": "flexibleRollout",
            "title": "Pro users",
            "sortOrder": 5,
            "parameters": {"rollout": "25"},
            "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]
        }))?,
    )
    .await?;
    let id = added.id.clone().ok_or("no id")?;
    let replaced = strategies::update(
        &world.ctx,
        &writer,
        place("banner", "development"),
        id.clone(),
        body(json!({
            "name": "flexibleRollout",
            "title": "Pro and team users",
            "disabled": true,
            "parameters": {"rollout": 75, "stickiness": "sessionId", "groupId": "banner-test"},
            "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro", "team"]}]
        }))?,
    )
    .await?;
    assert_eq!(replaced.id.as_deref(), Some(id.as_str()), "the id stays");
    assert_eq!(replaced.title.as_deref(), Some("Pro and team users"));
    assert_eq!(replaced.sort_order, Some(5), "the order stays when none is given");
    assert_eq!(replaced.disabled, Some(true));
    assert_eq!(replaced.parameters.get("stickiness"), Some("sessionId"));
    assert_eq!(replaced.constraints[0].values, ["pro", "team"]);

    let patched = strategies::patch(
        &world.ctx,
        &writer,
        place("banner", "development"),
        id.clone(),
        body(json!([
            {"op": "replace", "path": "/disabled", "value": false},
            {"op": "replace", "path": "/title", "value": "Everyone on a plan"}
        ]))?,
    )
    .await?;
    assert!(!patched.disabled);
    assert_eq!(patched.title.as_deref(), Some("Everyone on a plan"));
    assert_eq!(patched.parameters.get("rollout"), Some("75"), "the rest is kept");
    for operations in [
        json!([{"op": "remove", "path": "/nothing"}]),
        json!([{"op": "replace", "path": "/name", "value": 5}]),
    ] {
        let refused = strategies::patch(
            &world.ctx,
            &writer,
            place("banner", "development"),
            id.clone(),
            body(operations)?,
        )
        .await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{refused:?}"
        );
    }

    let unknown_id = "00000000-0000-4000-8000-000000000000".to_owned();
    let unknown = strategies::update(
        &world.ctx,
        &writer,
        place("banner", "development"),
        unknown_id.clone(),
        body(json!({"name": "default"}))?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = strategies::patch(
        &world.ctx,
        &writer,
        place("banner", "development"),
        unknown_id.clone(),
        body(json!([]))?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    strategies::delete(&world.ctx, &writer, place("banner", "development"), id.clone()).await?;
    let listed = strategies::list(&world.ctx, &environment_reader(), place("banner", "development")).await?;
    assert!(listed.iter().all(|strategy| strategy.id != id));
    let again = strategies::delete(&world.ctx, &writer, place("banner", "development"), id).await;
    assert!(matches!(again, Err(AdminError::NotFound(_))), "{again:?}");
    let unknown = strategies::delete(&world.ctx, &writer, place("missing", "development"), unknown_id).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    Ok(())
}

#[tokio::test]
async fn removing_or_disabling_the_last_active_strategy_switches_the_flag_off() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "lonely").await?;
    let writer = environment_writer();
    let only = |environment: &'static str| {
        let ctx = &world.ctx;
        async move {
            let listed = strategies::list(ctx, &environment_reader(), place("lonely", environment)).await?;
            Ok::<_, AdminError>(listed[0].id.clone())
        }
    };
    let id = only("development").await?;
    strategies::delete(&world.ctx, &writer, place("lonely", "development"), id).await?;
    assert!(!enabled_in(&world, "lonely", "development").await?);
    let id = only("production").await?;
    strategies::update(
        &world.ctx,
        &writer,
        place("lonely", "production"),
        id,
        body(json!({"name": "default", "disabled": true}))?,
    )
    .await?;
    assert!(!enabled_in(&world, "lonely", "production").await?);
    Ok(())
}

#[tokio::test]
async fn definitions_are_checked_before_they_are_stored() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "checked").await?;
    let writer = environment_writer();
    // Bad input: an unknown type, a constraint that cannot hold, variants that overflow.
    for request in [
        json!({"name": "nope"}),
        json!({"name": "default", "constraints": [{"contextName": "appVersion", "operator": "SEMVER_EQ", "value": "one"}]}),
        json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "SOUNDS_LIKE", "values": ["x"]}]}),
        json!({"name": "flexibleRollout", "variants": [{"name": "a", "weight": 1001, "weightType": "fix"}]}),
    ] {
        let refused = strategies::add(
            &world.ctx,
            &writer,
            place("checked", "development"),
            body(request.clone())?,
        )
        .await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{request} gave {refused:?}"
        );
    }
    // A value outside the legal values of its field is bad input too.
    context_fields::create(
        &world.ctx,
        &administrator(),
        body(json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]}))?,
    )
    .await?;
    let outside = strategies::add(
        &world.ctx,
        &writer,
        place("checked", "development"),
        body(json!({"name": "default", "constraints": [{"contextName": "region", "operator": "IN", "values": ["mars"]}]}))?,
    )
    .await;
    assert!(
        matches!(outside, Err(AdminError::Validation { .. })),
        "{outside:?}"
    );
    strategies::add(
        &world.ctx,
        &writer,
        place("checked", "development"),
        body(json!({"name": "default", "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}))?,
    )
    .await?;

    // What it names must exist: a segment, the flag in its project, the environment.
    let unknown = strategies::add(
        &world.ctx,
        &writer,
        place("checked", "development"),
        body(json!({"name": "default", "segments": [999]}))?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    for (project, feature, environment) in [
        ("default", "missing", "development"),
        ("other", "checked", "development"),
        ("default", "checked", "nowhere"),
    ] {
        let unknown = strategies::add(
            &world.ctx,
            &writer,
            (project.into(), feature.into(), environment.into()),
            body(json!({"name": "default"}))?,
        )
        .await;
        assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    }

    // An environment the project has not enabled still takes a strategy, as in Unleash.
    environments::create(
        &world.ctx,
        &administrator(),
        body(json!({"name": "staging", "type": "test"}))?,
    )
    .await?;
    let staged = strategies::add(
        &world.ctx,
        &writer,
        place("checked", "staging"),
        body(json!({"name": "default"}))?,
    )
    .await?;
    assert_eq!(staged.name, "default");
    let read = features::get(
        &world.ctx,
        &common::admin(features::GET),
        flag("checked"),
        FeatureQuery::default(),
    )
    .await?;
    assert!(read.environments.iter().all(|state| state.name != "staging"));
    Ok(())
}

#[tokio::test]
async fn strategies_are_read_and_written_only_in_the_callers_environments() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "scoped").await?;
    // A token limited to production, admitted as each operation declares.
    let production = |access: Access| common::token(access, Some(&["production"]));
    let id = strategies::list(&world.ctx, &environment_reader(), place("scoped", "development")).await?[0]
        .id
        .clone();
    let denied = |result: &Result<(), AdminError>| matches!(result, Err(AdminError::NoAccess(message)) if message.contains("\"development\""));
    let at = || place("scoped", "development");
    let results = [
        strategies::add(
            &world.ctx,
            &production(strategies::ADD),
            at(),
            body(json!({"name": "default"}))?,
        )
        .await
        .map(drop),
        strategies::update(
            &world.ctx,
            &production(strategies::UPDATE),
            at(),
            id.clone(),
            body(json!({"name": "default"}))?,
        )
        .await
        .map(drop),
        strategies::patch(
            &world.ctx,
            &production(strategies::PATCH),
            at(),
            id.clone(),
            body(json!([]))?,
        )
        .await
        .map(drop),
        strategies::set_sort_order(
            &world.ctx,
            &production(strategies::SET_SORT_ORDER),
            at(),
            Vec::new(),
        )
        .await,
        strategies::delete(&world.ctx, &production(strategies::DELETE), at(), id.clone()).await,
        strategies::list(&world.ctx, &production(strategies::LIST), at())
            .await
            .map(drop),
        strategies::get(&world.ctx, &production(strategies::GET), at(), id.clone())
            .await
            .map(drop),
    ];
    for (index, result) in results.iter().enumerate() {
        assert!(denied(result), "call {index}: {result:?}");
    }
    let viewer = strategies::ADD.admit(common::user(3, RootRole::Viewer))?;
    let refused = strategies::add(
        &world.ctx,
        &viewer,
        place("scoped", "production"),
        body(json!({"name": "default"}))?,
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    // In its own environment the token writes and reads.
    let added = strategies::add(
        &world.ctx,
        &production(strategies::ADD),
        place("scoped", "production"),
        body(json!({"name": "default"}))?,
    )
    .await?;
    let listed = strategies::list(
        &world.ctx,
        &production(strategies::LIST),
        place("scoped", "production"),
    )
    .await?;
    assert_eq!(listed.len(), 2);
    strategies::delete(
        &world.ctx,
        &production(strategies::DELETE),
        place("scoped", "production"),
        added.id.ok_or("no id")?,
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_strategy_built_in_code_is_checked_and_a_stored_one_edits_as_it_stands() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "edited").await?;
    let writer = environment_writer();
    // A command built as a page builds it, from nothing: the same defaults as a body's.
    let mut request = StrategyRequest::new("flexibleRollout");
    request.set_parameter("rollout", "40");
    let constraint: flag_eval::Constraint =
        body(json!({"contextName": "userId", "operator": "IN", "values": ["1", "2"]}))?;
    request.set_constraints(vec![constraint]);
    assert_eq!(request.name(), "flexibleRollout");
    assert_eq!(request.constraints().len(), 1);
    let added = strategies::add(&world.ctx, &writer, place("edited", "development"), request).await?;
    let id = added.id.clone().ok_or("no id")?;
    assert_eq!(added.parameters.get("rollout"), Some("40"));
    assert_eq!(added.parameters.get("groupId"), Some("edited"));
    let mut bad = StrategyRequest::new("default");
    bad.set_constraints(vec![body(
        json!({"contextName": "appVersion", "operator": "SEMVER_EQ", "value": "one"}),
    )?]);
    let refused = strategies::add(&world.ctx, &writer, place("edited", "development"), bad).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );

    // A stored strategy as a command: saved unchanged, it stays as it was.
    strategies::patch(
        &world.ctx,
        &writer,
        place("edited", "development"),
        id.clone(),
        body(json!([{"op": "replace", "path": "/title", "value": "Some users"},
                    {"op": "replace", "path": "/disabled", "value": true}]))?,
    )
    .await?;
    let stored = strategies::get(
        &world.ctx,
        &environment_reader(),
        place("edited", "development"),
        id.clone(),
    )
    .await?;
    let unchanged = StrategyRequest::try_from(stored)?;
    let saved = strategies::update(
        &world.ctx,
        &writer,
        place("edited", "development"),
        id.clone(),
        unchanged,
    )
    .await?;
    assert_eq!(saved.title.as_deref(), Some("Some users"));
    assert_eq!(saved.disabled, Some(true));
    assert_eq!(saved.sort_order, added.sort_order);
    assert_eq!(saved.parameters.get("rollout"), Some("40"));
    assert_eq!(saved.constraints.len(), 1);

    // Another type, its parameters dropped: the new type's defaults apply.
    let stored = strategies::get(
        &world.ctx,
        &environment_reader(),
        place("edited", "development"),
        id.clone(),
    )
    .await?;
    let mut changed = StrategyRequest::try_from(stored)?;
    changed.set_name("default");
    changed.clear_parameters();
    let saved = strategies::update(&world.ctx, &writer, place("edited", "development"), id, changed).await?;
    assert_eq!(saved.name, "default");
    assert!(saved.parameters.is_empty());
    assert_eq!(saved.title.as_deref(), Some("Some users"), "the rest is kept");
    Ok(())
}
