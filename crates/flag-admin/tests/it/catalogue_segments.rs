//! Segments: named constraint sets, checked as strategy constraints are, listed with where live
//! flags use them, changed, and deleted only once no live flag's strategy uses them.

use flag_admin::AdminError;
use flag_admin::catalogue::segments::types::{CreateSegment, NameIn};
use flag_admin::catalogue::{archive, context_fields, segments, strategies};
use serde_json::{Value, json};

use crate::catalogue_fixture::{
    administrator, bare_feature, body, create_project, environment_writer, place, seed_feature, writer,
};
use crate::common::{self, Outcome, World};

fn segment(request: Value) -> Result<CreateSegment, serde_json::Error> {
    body(request)
}

fn name(text: &str) -> NameIn {
    NameIn { name: text.into() }
}

#[tokio::test]
async fn segments_are_created_read_changed_and_deleted_once_unused() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "gated").await?;
    let creator = common::admin(segments::CREATE);
    let created = segments::create(
        &world.ctx,
        &creator,
        segment(
            json!({"name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}),
        )?,
    )
    .await?;
    assert_eq!(created.name, "beta");
    assert_eq!(created.constraints[0].values, ["1"]);
    assert_eq!(created.created_by.as_deref(), Some("test-token"));
    assert!(created.project.is_none(), "global");
    let id = created.id;
    segments::create(
        &world.ctx,
        &creator,
        segment(json!({"name": "other", "constraints": []}))?,
    )
    .await?;

    // Refusals: a taken or empty name, a constraint that cannot hold, an unknown project.
    let taken = segments::create(&world.ctx, &creator, segment(json!({"name": "beta"}))?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    for request in [
        json!({"name": "  "}),
        json!({"name": "semver", "constraints": [{"contextName": "appVersion", "operator": "SEMVER_EQ", "value": "one"}]}),
        json!({"name": "lost", "project": "nowhere"}),
    ] {
        let refused = segments::create(&world.ctx, &creator, segment(request.clone())?).await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{request} gave {refused:?}"
        );
    }

    // Used by a strategy of a live flag.
    let strategy = strategies::add(
        &world.ctx,
        &environment_writer(),
        place("gated", "development"),
        body(json!({"name": "default", "segments": [id]}))?,
    )
    .await?;
    let strategy_id = strategy.id.ok_or("no id")?;
    assert_eq!(strategy.segments, [i64::from(id)]);
    let one = segments::get(&world.ctx, id).await?;
    assert_eq!(
        (one.id, one.name.as_str(), one.project.as_deref()),
        (id, "beta", None)
    );
    let uses = segments::strategies(&world.ctx, id).await?;
    assert_eq!(uses.strategies.len(), 1);
    let used = &uses.strategies[0];
    assert_eq!(
        (
            used.id.as_str(),
            used.feature_name.as_str(),
            used.project_id.as_str(),
            used.strategy_name.as_str(),
            used.environment.as_str()
        ),
        (strategy_id.as_str(), "gated", "default", "default", "development")
    );
    assert!(uses.change_request_strategies.is_empty());
    let of = segments::of_strategy(&world.ctx, strategy_id.clone()).await?;
    let ids: Vec<i32> = of.segments.iter().map(|segment| segment.id).collect();
    assert_eq!(ids, [id]);
    assert!(
        segments::of_strategy(&world.ctx, "no-such-strategy".into())
            .await?
            .segments
            .is_empty()
    );

    // Changed: every field replaced; the name stays unique.
    let updater = common::admin(segments::UPDATE);
    segments::update(
        &world.ctx,
        &updater,
        id,
        segment(json!({"name": "beta-users", "description": "d", "constraints": []}))?,
    )
    .await?;
    let one = segments::get(&world.ctx, id).await?;
    assert_eq!(one.name, "beta-users");
    assert_eq!(one.description.as_deref(), Some("d"));
    assert!(one.constraints.is_empty());
    let taken = segments::update(
        &world.ctx,
        &updater,
        id,
        segment(json!({"name": "other", "constraints": []}))?,
    )
    .await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let empty = segments::update(&world.ctx, &updater, id, segment(json!({"name": ""}))?).await;
    assert!(matches!(empty, Err(AdminError::Validation { .. })), "{empty:?}");
    let unknown = segments::update(&world.ctx, &updater, 999, segment(json!({"name": "x"}))?).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = segments::get(&world.ctx, 999).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = segments::strategies(&world.ctx, 999).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // Deleted once no strategy uses it.
    let deleter = common::admin(segments::DELETE);
    let in_use = segments::delete(&world.ctx, &deleter, id).await;
    assert!(matches!(in_use, Err(AdminError::Conflict(_))), "{in_use:?}");
    strategies::delete(
        &world.ctx,
        &environment_writer(),
        place("gated", "development"),
        strategy_id,
    )
    .await?;
    segments::delete(&world.ctx, &deleter, id).await?;
    let gone = segments::get(&world.ctx, id).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    let again = segments::delete(&world.ctx, &deleter, id).await;
    assert!(matches!(again, Err(AdminError::NotFound(_))), "{again:?}");

    // A name can be checked before it is used.
    segments::validate_name(&world.ctx, name("new")).await?;
    let taken = segments::validate_name(&world.ctx, name("other")).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let empty = segments::validate_name(&world.ctx, name(" ")).await;
    assert!(matches!(empty, Err(AdminError::Validation { .. })), "{empty:?}");
    Ok(())
}

#[tokio::test]
async fn segments_are_listed_by_name_with_the_live_flags_that_use_them() -> Outcome {
    let world = World::new()?;
    create_project(&world, "shop").await?;
    let creator = common::admin(segments::CREATE);
    let mut ids = Vec::new();
    for (name, project) in [("b-users", None), ("a-users", Some("shop")), ("C-users", None)] {
        let mut request = json!({"name": name, "constraints": [{"contextName": "userId", "operator": "IN", "values": ["7"]}]});
        if let Some(project) = project {
            request["project"] = json!(project);
        }
        let created = segments::create(&world.ctx, &creator, segment(request)?).await?;
        assert_eq!(created.project.as_deref(), project);
        ids.push(created.id);
    }
    // Two live flags of the default project and one of the shop use `b-users`; an archived flag
    // does not count.
    for (flag, project) in [
        ("one", "default"),
        ("two", "default"),
        ("three", "shop"),
        ("gone", "default"),
    ] {
        bare_feature(&world, project, flag).await?;
        strategies::add(
            &world.ctx,
            &environment_writer(),
            (project.into(), flag.into(), "development".into()),
            body(json!({"name": "default", "segments": [ids[0]]}))?,
        )
        .await?;
    }
    archive::archive_one(&world.ctx, &writer(), "default".into(), "gone".into()).await?;
    let listed = segments::list(&world.ctx).await?;
    let names: Vec<&str> = listed
        .segments
        .iter()
        .map(|segment| segment.name.as_str())
        .collect();
    assert_eq!(names, ["a-users", "b-users", "C-users"]);
    let usage: Vec<(i64, i64)> = listed
        .segments
        .iter()
        .map(|segment| (segment.used_in_features, segment.used_in_projects))
        .collect();
    assert_eq!(usage, [(0, 0), (3, 2), (0, 0)]);
    assert_eq!(listed.segments[0].project.as_deref(), Some("shop"));

    // A segment used in two projects cannot become one project's.
    let refused = segments::update(
        &world.ctx,
        &common::admin(segments::UPDATE),
        ids[0],
        segment(json!({"name": "b-users", "project": "shop"}))?,
    )
    .await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    // An archived flag's strategies lose a segment that is deleted.
    let unused = ids[2];
    strategies::add(
        &world.ctx,
        &environment_writer(),
        place("gone", "production"),
        body(json!({"name": "default", "segments": [unused]}))?,
    )
    .await?;
    segments::delete(&world.ctx, &common::admin(segments::DELETE), unused).await?;
    Ok(())
}

#[tokio::test]
async fn segment_constraints_keep_to_the_legal_values_of_their_fields() -> Outcome {
    let world = World::new()?;
    context_fields::create(
        &world.ctx,
        &administrator(),
        body(json!({"name": "region", "legalValues": [{"value": "eu"}, {"value": "us"}]}))?,
    )
    .await?;
    let creator = common::admin(segments::CREATE);
    let outside = segments::create(
        &world.ctx,
        &creator,
        segment(json!({"name": "bad", "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu", "mars"]}]}))?,
    )
    .await;
    assert!(
        matches!(&outside, Err(AdminError::Validation { message, .. }) if message.contains("mars")),
        "{outside:?}"
    );
    let good = segments::create(
        &world.ctx,
        &creator,
        segment(json!({"name": "good", "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu", "us"]}]}))?,
    )
    .await?;
    let outside = segments::update(
        &world.ctx,
        &common::admin(segments::UPDATE),
        good.id,
        segment(json!({"name": "good", "constraints": [{"contextName": "region", "operator": "IN", "values": ["mars"]}]}))?,
    )
    .await;
    assert!(
        matches!(outside, Err(AdminError::Validation { .. })),
        "{outside:?}"
    );
    let names: Vec<String> = segments::list(&world.ctx)
        .await?
        .segments
        .into_iter()
        .map(|segment| segment.name)
        .collect();
    assert_eq!(names, ["good"], "no bad segment was kept");
    Ok(())
}
