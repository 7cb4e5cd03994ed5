//! Searching flags as Unleash's web UI does: filters in Unleash's syntax, sorting and paging,
//! and what the search says of each flag and of each of its environments.

use flag_admin::AdminError;
use flag_admin::catalogue::search::types::{SearchOut, SearchQuery};
use flag_admin::catalogue::{archive, dependencies, features, search, segments, strategies, tags, variants};
use flag_admin::runtime::domain::RootRole;
use serde_json::json;

use crate::catalogue_fixture::{
    bare_feature, body, environment_writer, flag, place, report_usage, seed_feature, writer,
};
use crate::common::{self, Outcome, World};

fn names(found: &SearchOut) -> Vec<&str> {
    found
        .features
        .iter()
        .map(|feature| feature.name.as_str())
        .collect()
}

/// `alpha` tagged `simple:web`, `beta` a kill switch about checkout, `gamma` stale, and `old`
/// archived; all created in that order.
async fn four_flags(world: &World) -> Outcome {
    for name in ["alpha", "beta", "gamma", "old"] {
        seed_feature(world, name).await?;
    }
    features::update(
        &world.ctx,
        &writer(),
        flag("beta"),
        body(json!({"type": "kill-switch", "description": "Checkout kill switch"}))?,
    )
    .await?;
    features::patch(
        &world.ctx,
        &writer(),
        flag("gamma"),
        body(json!([{"op": "replace", "path": "/stale", "value": true}]))?,
    )
    .await?;
    tags::add_to_feature(
        &world.ctx,
        &writer(),
        "alpha".into(),
        body(json!({"type": "simple", "value": "web"}))?,
    )
    .await?;
    archive::archive_one(&world.ctx, &writer(), "default".into(), "old".into()).await?;
    Ok(())
}

#[tokio::test]
async fn flags_are_found_by_filters_sorted_and_paged() -> Outcome {
    let world = World::new()?;
    four_flags(&world).await?;
    let find = |query: serde_json::Value| {
        let ctx = &world.ctx;
        async move {
            search::search(ctx, body::<SearchQuery>(query)?)
                .await
                .map_err(Box::<dyn std::error::Error>::from)
        }
    };
    let all = find(json!({})).await?;
    assert_eq!(
        names(&all),
        ["alpha", "beta", "gamma"],
        "live flags, oldest first"
    );
    assert_eq!(all.total, 3);
    let alpha = &all.features[0];
    assert!(alpha.archived_at.is_none() && !alpha.favorite);
    let alpha_tags: Vec<(&str, &str, Option<&str>)> = alpha
        .tags
        .iter()
        .flatten()
        .map(|tag| (tag.tag_type.as_str(), tag.value.as_str(), tag.color.as_deref()))
        .collect();
    assert_eq!(alpha_tags, [("simple", "web", Some("#FFFFFF"))]);
    assert!(all.features[1].tags.is_none(), "no tags, none listed");
    assert!(alpha.environments[0].has_enabled_strategies);
    assert_eq!(
        alpha.lifecycle.as_ref().map(|stage| stage.stage.as_str()),
        Some("initial")
    );

    for (query, expected) in [
        (json!({"query": "checkout"}), vec!["beta"]),
        (json!({"query": "ALPHA,gamma"}), vec!["alpha", "gamma"]),
        (json!({"type": "IS_NOT:kill-switch"}), vec!["alpha", "gamma"]),
        (json!({"type": "IS_ANY_OF:kill-switch,experiment"}), vec!["beta"]),
        (json!({"state": "IS:stale"}), vec!["gamma"]),
        (json!({"state": "IS_NOT:stale"}), vec!["alpha", "beta"]),
        (json!({"tag": "INCLUDE:simple:web"}), vec!["alpha"]),
        (
            json!({"tag": "DO_NOT_INCLUDE:simple:web", "project": "IS:default"}),
            vec!["beta", "gamma"],
        ),
        (json!({"project": "IS_NONE_OF:default"}), vec![]),
        (json!({"createdBy": "IS:-42"}), vec!["alpha", "beta", "gamma"]),
        (json!({"createdAt": "IS_BEFORE:2000-01-01"}), vec![]),
        (
            json!({"createdAt": "IS_ON_OR_AFTER:2000-01-01"}),
            vec!["alpha", "beta", "gamma"],
        ),
        (json!({"archived": "IS:true"}), vec!["old"]),
        (json!({"lifecycle": "IS:archived"}), vec!["old"]),
        (json!({"lifecycle": "IS:initial"}), vec!["alpha", "beta", "gamma"]),
        (json!({"favorite": "IS:true"}), vec![]),
        (
            json!({"status": "development:enabled"}),
            vec!["alpha", "beta", "gamma"],
        ),
        (json!({"status": "development:disabled"}), vec![]),
        (
            json!({"sortBy": "name", "sortOrder": "desc", "limit": "2", "offset": "0"}),
            vec!["gamma", "beta"],
        ),
        (
            json!({"sortBy": "name", "limit": "2", "offset": "2"}),
            vec!["gamma"],
        ),
        (json!({"sortBy": "type"}), vec!["beta", "alpha", "gamma"]),
        (
            json!({"sortBy": "stale", "sortOrder": "desc"}),
            vec!["gamma", "alpha", "beta"],
        ),
        (json!({"limit": "0"}), vec!["alpha", "beta", "gamma"]),
    ] {
        let found = find(query.clone()).await?;
        assert_eq!(names(&found), expected, "{query}");
    }
    let archived = find(json!({"archived": "IS:true"})).await?;
    assert!(archived.features[0].archived_at.is_some());
    let page = find(json!({"sortBy": "name", "limit": "2"})).await?;
    assert_eq!(page.total, 3, "the total counts every page");

    // Filters Unleash's syntax cannot read are bad input, naming the filter.
    for (query, path) in [
        (json!({"tag": "EXCLUDE_ALL:simple"}), "/query/tag"),
        (json!({"project": "LIKE:default"}), "/query/project"),
        (json!({"createdAt": "IS_BEFORE:yesterday"}), "/query/createdAt"),
        (json!({"sortOrder": "up"}), "/query/sortOrder"),
        (json!({"archived": "IS:maybe"}), "/query/archived"),
        (json!({"status": "development:sideways"}), "/query/status"),
        (json!({"lastSeenAt": "IS_AFTER:2000-01-01"}), "/query/lastSeenAt"),
    ] {
        let refused = search::search(&world.ctx, body(query.clone())?).await;
        assert!(
            matches!(&refused, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some(path)),
            "{query}: {refused:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn each_flag_shows_its_environments_segments_dependencies_and_creator() -> Outcome {
    let world = World::new()?;
    // `mixed`: on in development with two variants there, off in production with only a
    // disabled strategy; `bare`: no strategy anywhere.
    bare_feature(&world, "default", "mixed").await?;
    features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("mixed", "development"),
        true,
        Default::default(),
    )
    .await?;
    variants::batch(
        &world.ctx,
        &environment_writer(),
        "default".into(),
        "mixed".into(),
        json!({"environments": ["development"], "variants": [{"name": "blue", "weight": 500}, {"name": "red", "weight": 500}]}),
    )
    .await?;
    strategies::add(
        &world.ctx,
        &environment_writer(),
        place("mixed", "production"),
        body(json!({"name": "default", "disabled": true}))?,
    )
    .await?;
    bare_feature(&world, "default", "bare").await?;
    let segment = segments::create(
        &world.ctx,
        &common::admin(segments::CREATE),
        body(json!({"name": "beta-users"}))?,
    )
    .await?;
    strategies::add(
        &world.ctx,
        &environment_writer(),
        place("mixed", "development"),
        body(json!({"name": "default", "segments": [segment.id]}))?,
    )
    .await?;
    dependencies::add(
        &world.ctx,
        &writer(),
        "default".into(),
        "bare".into(),
        body(json!({"feature": "mixed"}))?,
    )
    .await?;
    let editor = features::CREATE.admit(common::user(7, RootRole::Editor))?;
    features::create(
        &world.ctx,
        &editor,
        "default".into(),
        body(json!({"name": "authored"}))?,
    )
    .await?;

    let all = search::search(&world.ctx, SearchQuery::default()).await?;
    let mixed = all
        .features
        .iter()
        .find(|feature| feature.name == "mixed")
        .ok_or("no mixed")?;
    let environments: Vec<(&str, bool, usize, bool, bool)> = mixed
        .environments
        .iter()
        .map(|environment| {
            (
                environment.name.as_str(),
                environment.enabled,
                environment.variant_count,
                environment.has_strategies,
                environment.has_enabled_strategies,
            )
        })
        .collect();
    assert_eq!(
        environments,
        [
            ("development", true, 2, true, true),
            ("production", false, 0, true, false)
        ]
    );
    assert_eq!(mixed.segments, ["beta-users"]);
    assert_eq!(mixed.dependency_type, Some("parent"));
    let bare = all
        .features
        .iter()
        .find(|feature| feature.name == "bare")
        .ok_or("no bare")?;
    assert_eq!(bare.dependency_type, Some("child"));
    assert!(
        bare.environments
            .iter()
            .all(|environment| !environment.has_strategies)
    );
    let authored = all
        .features
        .iter()
        .find(|feature| feature.name == "authored")
        .ok_or("no authored")?;
    assert_eq!(authored.created_by.id, 7);

    // Filters on segments, creators and dependencies.
    let found = search::search(&world.ctx, body(json!({"segment": "INCLUDE:beta-users"}))?).await?;
    assert_eq!(names(&found), ["mixed"]);
    let found = search::search(&world.ctx, body(json!({"createdBy": "IS:7"}))?).await?;
    assert_eq!(names(&found), ["authored"]);
    let found = search::search(
        &world.ctx,
        body(json!({"sortBy": "environment:development", "sortOrder": "desc"}))?,
    )
    .await?;
    assert_eq!(found.features[0].name, "mixed", "on before off");
    Ok(())
}

#[tokio::test]
async fn usage_shows_per_environment_and_finds_flags_last_seen() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "used").await?;
    seed_feature(&world, "unused").await?;
    report_usage(&world, "production", &[("used", 3, 1)]).await?;
    let all = search::search(&world.ctx, SearchQuery::default()).await?;
    let used = all
        .features
        .iter()
        .find(|feature| feature.name == "used")
        .ok_or("no used")?;
    let production = used
        .environments
        .iter()
        .find(|environment| environment.name == "production")
        .ok_or("no production")?;
    assert_eq!((production.yes, production.no), (3, 1));
    assert!(production.last_seen_at.is_some());
    assert!(
        used.environments
            .iter()
            .filter(|environment| environment.name != "production")
            .all(|environment| environment.last_seen_at.is_none())
    );
    // Used where it is on in production, it is live.
    assert_eq!(
        used.lifecycle.as_ref().map(|stage| stage.stage.as_str()),
        Some("live")
    );
    let found = search::search(
        &world.ctx,
        body(json!({"lastSeenAt": "IS_ON_OR_AFTER:2000-01-01"}))?,
    )
    .await?;
    assert_eq!(names(&found), ["used"]);
    let found = search::search(&world.ctx, body(json!({"sortBy": "lastSeenAt"}))?).await?;
    assert_eq!(names(&found), ["used", "unused"], "never seen goes last");
    let found = search::search(&world.ctx, body(json!({"lifecycle": "IS:live"}))?).await?;
    assert_eq!(names(&found), ["used"]);

    // The flag's read and the lifecycle count say the same.
    let read = features::get(
        &world.ctx,
        &common::admin(features::GET),
        flag("used"),
        Default::default(),
    )
    .await?;
    let production = read
        .environments
        .iter()
        .find(|environment| environment.name == "production")
        .ok_or("no production")?;
    assert_eq!((production.yes, production.no), (3, 1));
    let counts = flag_admin::catalogue::lifecycle::count(&world.ctx).await?;
    assert_eq!((counts.initial, counts.live), (1, 1));
    Ok(())
}
