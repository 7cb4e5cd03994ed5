//! The archive and the lifecycle: flags archived unless others depend on them, revived switched
//! off, deleted for good only once archived, marked stale in batches of one project, and the
//! stages each flag enters on the way.

use flag_admin::AdminError;
use flag_admin::catalogue::features::types::{BatchFeatures, BatchStale, FeatureQuery};
use flag_admin::catalogue::{archive, dependencies, features, lifecycle, strategies};
use serde_json::json;

use crate::catalogue_fixture::{
    bare_feature, body, create_project, enabled_in, environment_reader, flag, place, seed_feature, writer,
};
use crate::common::{self, Outcome, World};

fn batch(names: &[&str]) -> BatchFeatures {
    BatchFeatures {
        features: names.iter().map(|name| (*name).to_owned()).collect(),
    }
}

/// Whether `name` is a live flag of the default project.
async fn live(world: &World, name: &str) -> Result<bool, AdminError> {
    match features::get(
        &world.ctx,
        &common::admin(features::GET),
        flag(name),
        FeatureQuery::default(),
    )
    .await
    {
        Ok(_) => Ok(true),
        Err(AdminError::NotFound(_)) => Ok(false),
        Err(error) => Err(error),
    }
}

#[tokio::test]
async fn flags_others_depend_on_are_archived_only_with_their_children() -> Outcome {
    let world = World::new()?;
    for name in ["parent", "child", "loner"] {
        seed_feature(&world, name).await?;
    }
    dependencies::add(
        &world.ctx,
        &writer(),
        "default".into(),
        "child".into(),
        body(json!({"feature": "parent"}))?,
    )
    .await?;

    // What archiving would do, and the rule it follows.
    let impact = archive::validate(&world.ctx, batch(&["parent"])).await?;
    assert_eq!(impact.parents_with_child_features, ["parent"]);
    assert!(impact.has_deleted_dependencies);
    let impact = archive::validate(&world.ctx, batch(&["parent", "child"])).await?;
    assert!(impact.parents_with_child_features.is_empty());
    assert!(impact.has_deleted_dependencies);
    let impact = archive::validate(&world.ctx, batch(&["loner"])).await?;
    assert!(impact.parents_with_child_features.is_empty() && !impact.has_deleted_dependencies);
    let refused = archive::archive_one(&world.ctx, &writer(), "default".into(), "parent".into()).await;
    assert!(
        matches!(&refused, Err(AdminError::InvalidOperation(message))
            if message == "You can not archive/delete this feature since other features depend on it."),
        "{refused:?}"
    );
    assert!(live(&world, "parent").await?);

    // Both at once is allowed, unknown names are skipped, and the dependency goes with them.
    archive::archive_many(
        &world.ctx,
        &writer(),
        "default".into(),
        batch(&["parent", "child", "unknown"]),
    )
    .await?;
    assert!(!live(&world, "parent").await? && !live(&world, "child").await?);
    let unknown = archive::archive_one(&world.ctx, &writer(), "default".into(), "unknown".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    archive::archive_one(&world.ctx, &writer(), "default".into(), "loner".into()).await?;
    assert!(!live(&world, "loner").await?);
    let listed = features::list(&world.ctx, &common::admin(features::LIST), "default".into()).await?;
    assert!(listed.features.is_empty(), "archived flags are not listed");
    let stages = lifecycle::stages(&world.ctx, "loner".into()).await?;
    assert_eq!(stages.last().map(|stage| stage.stage.as_str()), Some("archived"));
    Ok(())
}

#[tokio::test]
async fn revived_flags_come_back_switched_off_with_their_strategies() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "loner").await?;
    seed_feature(&world, "pair-a").await?;
    seed_feature(&world, "pair-b").await?;
    archive::archive_many(
        &world.ctx,
        &writer(),
        "default".into(),
        batch(&["loner", "pair-a", "pair-b"]),
    )
    .await?;
    archive::revive_one(&world.ctx, &writer(), "loner".into()).await?;
    assert!(live(&world, "loner").await?);
    for environment in ["development", "production"] {
        assert!(!enabled_in(&world, "loner", environment).await?);
        let kept = strategies::list(&world.ctx, &environment_reader(), place("loner", environment)).await?;
        assert_eq!(kept.len(), 1);
    }
    let stages = lifecycle::stages(&world.ctx, "loner".into()).await?;
    let names: Vec<&str> = stages.iter().map(|stage| stage.stage.as_str()).collect();
    assert_eq!(names, ["initial"], "its lifecycle starts again");
    let unknown = archive::revive_one(&world.ctx, &writer(), "nothing".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // A batch revives the archived flags among those listed, all of the project.
    archive::revive_many(
        &world.ctx,
        &writer(),
        "default".into(),
        batch(&["pair-a", "loner", "unknown"]),
    )
    .await?;
    assert!(live(&world, "pair-a").await?);
    assert!(!live(&world, "pair-b").await?);
    let unknown = archive::revive_many(&world.ctx, &writer(), "nowhere".into(), batch(&["pair-b"])).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    create_project(&world, "other").await?;
    let stranger = archive::revive_many(&world.ctx, &writer(), "other".into(), batch(&["pair-b"])).await;
    assert!(
        matches!(stranger, Err(AdminError::InvalidOperation(_))),
        "{stranger:?}"
    );
    Ok(())
}

#[tokio::test]
async fn only_archived_flags_are_deleted_and_their_names_are_free_again() -> Outcome {
    let world = World::new()?;
    for name in ["kept", "gone", "parent", "child"] {
        seed_feature(&world, name).await?;
    }
    dependencies::add(
        &world.ctx,
        &writer(),
        "default".into(),
        "child".into(),
        body(json!({"feature": "parent"}))?,
    )
    .await?;
    // A live or unknown flag is left alone.
    archive::delete_one(&world.ctx, &writer(), "kept".into()).await?;
    archive::delete_one(&world.ctx, &writer(), "unknown".into()).await?;
    assert!(live(&world, "kept").await?);
    archive::delete_many(&world.ctx, &writer(), "default".into(), batch(&["kept"])).await?;
    assert!(live(&world, "kept").await?);

    archive::archive_one(&world.ctx, &writer(), "default".into(), "gone".into()).await?;
    archive::delete_one(&world.ctx, &writer(), "gone".into()).await?;
    features::validate_name(&world.ctx, body(json!({"name": "gone"}))?).await?;
    let revived = archive::revive_one(&world.ctx, &writer(), "gone".into()).await;
    assert!(matches!(revived, Err(AdminError::NotFound(_))), "{revived:?}");

    archive::archive_many(
        &world.ctx,
        &writer(),
        "default".into(),
        batch(&["parent", "child"]),
    )
    .await?;
    create_project(&world, "other").await?;
    let stranger = archive::delete_many(&world.ctx, &writer(), "other".into(), batch(&["parent"])).await;
    assert!(
        matches!(stranger, Err(AdminError::InvalidOperation(_))),
        "{stranger:?}"
    );
    archive::delete_many(
        &world.ctx,
        &writer(),
        "default".into(),
        batch(&["parent", "child"]),
    )
    .await?;
    for name in ["parent", "child"] {
        features::validate_name(&world.ctx, body(json!({"name": name}))?).await?;
    }
    Ok(())
}

#[tokio::test]
async fn batches_are_refused_for_flags_of_other_projects() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "mine").await?;
    create_project(&world, "other").await?;
    let refused = archive::archive_many(&world.ctx, &writer(), "other".into(), batch(&["mine"])).await;
    assert!(
        matches!(refused, Err(AdminError::InvalidOperation(_))),
        "{refused:?}"
    );
    let stale = |names: &[&str], stale: bool| BatchStale {
        features: names.iter().map(|name| (*name).to_owned()).collect(),
        stale,
    };
    let refused = archive::stale_many(&world.ctx, &writer(), "other".into(), stale(&["mine"], true)).await;
    assert!(
        matches!(refused, Err(AdminError::InvalidOperation(_))),
        "{refused:?}"
    );
    assert!(live(&world, "mine").await?);

    // In its own project, unknown names are skipped.
    archive::stale_many(
        &world.ctx,
        &writer(),
        "default".into(),
        stale(&["mine", "unknown"], true),
    )
    .await?;
    let read = features::get(
        &world.ctx,
        &common::admin(features::GET),
        flag("mine"),
        FeatureQuery::default(),
    )
    .await?;
    assert!(read.stale);
    archive::stale_many(&world.ctx, &writer(), "default".into(), stale(&["mine"], false)).await?;
    let read = features::get(
        &world.ctx,
        &common::admin(features::GET),
        flag("mine"),
        FeatureQuery::default(),
    )
    .await?;
    assert!(!read.stale);
    Ok(())
}

#[tokio::test]
async fn flags_are_completed_and_counted_by_the_stage_they_entered_last() -> Outcome {
    let world = World::new()?;
    for name in ["done", "kept-going", "archived"] {
        bare_feature(&world, "default", name).await?;
    }
    let stages = lifecycle::stages(&world.ctx, "done".into()).await?;
    let names: Vec<&str> = stages.iter().map(|stage| stage.stage.as_str()).collect();
    assert_eq!(names, ["initial"]);
    assert!(lifecycle::stages(&world.ctx, "unknown".into()).await?.is_empty());

    lifecycle::complete(
        &world.ctx,
        &writer(),
        flag("done"),
        body(json!({"status": "kept", "statusValue": "blue"}))?,
    )
    .await?;
    // Completing again keeps the first status.
    lifecycle::complete(
        &world.ctx,
        &writer(),
        flag("done"),
        body(json!({"status": "discarded"}))?,
    )
    .await?;
    let stages = lifecycle::stages(&world.ctx, "done".into()).await?;
    let completed = stages
        .iter()
        .find(|stage| stage.stage == "completed")
        .ok_or("not completed")?;
    assert_eq!(completed.status.as_deref(), Some("kept"));
    archive::archive_one(&world.ctx, &writer(), "default".into(), "archived".into()).await?;
    let counts = lifecycle::count(&world.ctx).await?;
    assert_eq!(
        (
            counts.initial,
            counts.pre_live,
            counts.live,
            counts.completed,
            counts.archived
        ),
        (1, 0, 0, 1, 1)
    );

    lifecycle::uncomplete(&world.ctx, &writer(), flag("done")).await?;
    let stages = lifecycle::stages(&world.ctx, "done".into()).await?;
    assert!(stages.iter().all(|stage| stage.stage != "completed"));
    assert_eq!(lifecycle::count(&world.ctx).await?.initial, 2);

    // The flag must be one of the project's; the status is kept or discarded.
    let unknown = lifecycle::complete(
        &world.ctx,
        &writer(),
        flag("unknown"),
        body(json!({"status": "kept"}))?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = lifecycle::uncomplete(&world.ctx, &writer(), ("other".into(), "done".into())).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    assert!(
        body::<flag_admin::catalogue::lifecycle::types::CompleteFeature>(json!({"status": "forgotten"}))
            .is_err()
    );
    Ok(())
}
