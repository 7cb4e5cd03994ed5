//! The audit log: the newest events, a flag's events, searching them with Unleash's filters,
//! who wrote them, and each event told in one sentence with links to the console.

use flag_admin::catalogue::events::types::{EventSearchQuery, EventsQuery};
use flag_admin::catalogue::events::{Bold, EventFormatter};
use flag_admin::catalogue::{events, features, segments, strategies, tags};
use flag_admin::runtime::domain::RootRole;
use flag_admin::{AdminError, Settings};
use flag_store::models::Actor;
use serde_json::json;

use crate::catalogue_fixture::{bare_feature, body, environment_writer, place, seed_feature, writer};
use crate::common::{self, Outcome, World};

fn read() -> flag_admin::identity::auth::Caller {
    common::admin(events::SEARCH)
}

/// The events of `feature` of `event_type`, as the search tells them.
async fn told(
    world: &World,
    feature: &str,
    event_type: &str,
) -> Result<Vec<events::types::EventOut>, AdminError> {
    Ok(events::search(
        &world.ctx,
        &read(),
        EventSearchQuery {
            feature: Some(format!("IS:{feature}")),
            event_type: Some(format!("IS:{event_type}")),
            ..EventSearchQuery::default()
        },
    )
    .await?
    .events)
}

#[tokio::test]
async fn the_log_is_read_whole_by_project_and_by_flag() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "logged").await?;
    let of_flag = events::of_feature(&world.ctx, &read(), "logged".into()).await?;
    assert_eq!(of_flag.version, 1);
    assert_eq!(of_flag.toggle_name, "logged");
    // Created, then a strategy added and the flag switched on in each environment.
    assert_eq!(of_flag.total_events, 5);
    let types: Vec<&str> = of_flag
        .events
        .iter()
        .map(|event| event.event_type.as_str())
        .collect();
    assert_eq!(types.last(), Some(&"feature-created"), "newest first: {types:?}");
    let created = of_flag.events.last().ok_or("no event")?;
    assert_eq!(created.created_by, "test-token");
    assert_eq!(created.created_by_user_id, Some(Actor::ADMIN_TOKEN));
    assert_eq!(created.feature_name.as_deref(), Some("logged"));
    assert_eq!(created.project.as_deref(), Some("default"));
    assert_eq!(
        created.data.as_ref().and_then(|data| data.get("name")),
        Some(&json!("logged"))
    );
    assert!(
        of_flag
            .events
            .iter()
            .all(|event| event.label.is_none() && event.summary.is_none()),
        "the older lists tell nothing"
    );
    let empty = events::of_feature(&world.ctx, &read(), "missing".into()).await?;
    assert_eq!((empty.total_events, empty.events.len()), (0, 0));

    let all = events::list(&world.ctx, EventsQuery::default()).await?;
    assert_eq!(all.version, 1);
    assert!(all.total_events >= of_flag.total_events);
    assert!(all.events.iter().all(|event| event.summary.is_none()));
    let of_project = events::list(
        &world.ctx,
        EventsQuery {
            project: Some("default".into()),
        },
    )
    .await?;
    assert_eq!(of_project.total_events, of_flag.total_events);
    let of_none = events::list(
        &world.ctx,
        EventsQuery {
            project: Some("nope".into()),
        },
    )
    .await?;
    assert_eq!(of_none.total_events, 0);
    Ok(())
}

#[tokio::test]
async fn searched_events_are_labelled_and_told_with_links_to_the_public_url() -> Outcome {
    let world = World::with(Settings {
        unleash_url: "https://flags.example.com/".into(),
        ..Settings::default()
    })?;
    tags::create_type(&world.ctx, &writer(), body(json!({"name": "doomed"}))?).await?;
    bare_feature(&world, "default", "adm.gamma").await?;
    tags::add_to_feature(
        &world.ctx,
        &writer(),
        "adm.gamma".into(),
        body(json!({"type": "doomed", "value": "old"}))?,
    )
    .await?;
    let tagged = told(&world, "adm.gamma", "feature-tagged").await?;
    assert_eq!(tagged[0].label.as_deref(), Some("Flag tagged"));
    assert_eq!(
        tagged[0].summary.as_deref(),
        Some(
            "**test-token** tagged **[adm.gamma](https://flags.example.com/projects/default/features/adm.gamma)** \
             with **doomed:old** in project **[default](https://flags.example.com/projects/default)**"
        )
    );
    let created = told(&world, "adm.gamma", "feature-created").await?;
    assert_eq!(created[0].label.as_deref(), Some("Flag created"));

    // A strategy update says what changed, as Unleash words it.
    let rollout = |percent: &str| {
        body::<strategies::types::StrategyRequest>(json!({"name": "flexibleRollout",
            "parameters": {"rollout": percent, "stickiness": "default", "groupId": "adm.gamma"}}))
    };
    let strategy = strategies::add(
        &world.ctx,
        &environment_writer(),
        place("adm.gamma", "development"),
        rollout("50")?,
    )
    .await?;
    strategies::update(
        &world.ctx,
        &environment_writer(),
        place("adm.gamma", "development"),
        strategy.id.ok_or("no id")?,
        rollout("75")?,
    )
    .await?;
    let updated = told(&world, "adm.gamma", "feature-strategy-update").await?;
    assert_eq!(updated[0].label.as_deref(), Some("Flag strategy updated"));
    assert_eq!(
        updated[0].summary.as_deref(),
        Some(
            "**test-token** updated **[adm.gamma](https://flags.example.com/projects/default/features/adm.gamma)** \
             in project **[default](https://flags.example.com/projects/default)** by updating strategy \
             **flexibleRollout** in **development** rollout from 50% to 75%"
        )
    );

    // A type Unleash has no words for keeps its name as its label.
    let found = events::search(
        &world.ctx,
        &read(),
        EventSearchQuery {
            event_type: Some("IS:tag-type-created".into()),
            ..EventSearchQuery::default()
        },
    )
    .await?;
    assert_eq!(found.total, 1);
    assert_eq!(found.events[0].label.as_deref(), Some("tag-type-created"));
    assert_eq!(
        found.events[0].summary.as_deref(),
        Some("**test-token** triggered **tag-type-created**")
    );
    Ok(())
}

#[test]
fn the_formatter_marks_bold_as_its_audience_reads_it() {
    let event = events::types::EventOut::of(flag_store::models::EventRow {
        id: 1,
        event_type: "feature-created".into(),
        created_by: "ada".into(),
        created_at: flag_admin::now(),
        project: Some("web".into()),
        environment: None,
        feature_name: Some("banner".into()),
        data: None,
        pre_data: None,
        created_by_user_id: Some(3),
        tags: None,
        group_type: None,
        group_id: None,
    });
    let markdown = EventFormatter::new("https://flags.example.com/", Bold::Markdown);
    let (label, summary) = markdown.format(&event);
    assert_eq!(label, "Flag created");
    assert_eq!(
        summary,
        "**ada** created **[banner](https://flags.example.com/projects/web/features/banner)** in project \
         **[web](https://flags.example.com/projects/web)**"
    );
    let simple = EventFormatter::new("https://flags.example.com", Bold::Simple);
    let described = simple.described(event);
    assert_eq!(described.label.as_deref(), Some("Flag created"));
    assert!(
        described
            .summary
            .as_deref()
            .is_some_and(|summary| summary.starts_with("*ada* created *[banner]")),
        "{described:?}"
    );
}

#[tokio::test]
async fn searches_filter_page_and_refuse_what_they_cannot_read() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "grouped").await?;
    seed_feature(&world, "other").await?;
    // Switching on a flag without strategies adds the default one in the same transaction.
    features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("grouped", "development"),
        true,
        Default::default(),
    )
    .await?;
    let added = told(&world, "grouped", "feature-strategy-add").await?;
    let enabled = told(&world, "grouped", "feature-environment-enabled").await?;
    assert_eq!(added[0].group_type.as_deref(), Some("transaction"));
    let group = enabled[0].group_id.clone().ok_or("no group")?;
    assert_eq!(added[0].group_id.as_deref(), Some(group.as_str()));
    let reader = read();
    let search = |query: EventSearchQuery| events::search(&world.ctx, &reader, query);
    let found = search(EventSearchQuery {
        group_id: Some(format!("IS:{group}")),
        ..EventSearchQuery::default()
    })
    .await?;
    let types: Vec<&str> = found
        .events
        .iter()
        .map(|event| event.event_type.as_str())
        .collect();
    assert_eq!(types, ["feature-environment-enabled", "feature-strategy-add"]);

    // Filters narrow one another; lists take any of their values.
    let found = search(EventSearchQuery {
        feature: Some("IS_ANY_OF:grouped,other".into()),
        environment: Some("IS:production".into()),
        ..EventSearchQuery::default()
    })
    .await?;
    assert_eq!(
        found.total, 2,
        "the strategy and the switch of `other` in production"
    );
    let found = search(EventSearchQuery {
        project: Some("IS:default".into()),
        created_by: Some(format!("IS:{}", Actor::ADMIN_TOKEN)),
        event_type: Some("IS:feature-created".into()),
        ..EventSearchQuery::default()
    })
    .await?;
    assert_eq!(found.total, 2);
    let today = flag_admin::now().format("%Y-%m-%d").to_string();
    let found = search(EventSearchQuery {
        from: Some(format!("IS:{today}")),
        to: Some(format!("IS:{today}")),
        query: Some("GROUPED".into()),
        ..EventSearchQuery::default()
    })
    .await?;
    assert!(found.total >= 1, "text is found in any letter case");
    assert!(
        found
            .events
            .iter()
            .all(|event| event.feature_name.as_deref() == Some("grouped")),
        "{:?}",
        found.events
    );
    let found = search(EventSearchQuery {
        to: Some("IS:2000-01-01".into()),
        ..EventSearchQuery::default()
    })
    .await?;
    assert_eq!(found.total, 0);
    let first_id = found.events.first().map(|event| event.id);
    assert!(first_id.is_none());
    let page = search(EventSearchQuery {
        limit: Some("2".into()),
        offset: Some("1".into()),
        ..EventSearchQuery::default()
    })
    .await?;
    assert_eq!(page.events.len(), 2);
    let one = search(EventSearchQuery {
        id: Some(format!("IS:{}", page.events[0].id)),
        ..EventSearchQuery::default()
    })
    .await?;
    assert_eq!(one.total, 1);

    // Filters Unleash's syntax cannot read are bad input, naming the filter.
    for (query, path) in [
        (
            EventSearchQuery {
                feature: Some("grouped".into()),
                ..EventSearchQuery::default()
            },
            "/query/feature",
        ),
        (
            EventSearchQuery {
                from: Some("IS:2026-13-01".into()),
                ..EventSearchQuery::default()
            },
            "/query/from",
        ),
        (
            EventSearchQuery {
                created_by: Some("IS:someone".into()),
                ..EventSearchQuery::default()
            },
            "/query/createdBy",
        ),
    ] {
        let refused = search(query).await;
        assert!(
            matches!(&refused, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some(path)),
            "{path}: {refused:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn those_who_do_not_administer_see_only_events_about_a_project() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "visible").await?;
    segments::create(
        &world.ctx,
        &common::admin(segments::CREATE),
        body(json!({"name": "global"}))?,
    )
    .await?;
    let global = EventSearchQuery {
        event_type: Some("IS:segment-created".into()),
        ..EventSearchQuery::default()
    };
    let by_admin = events::search(&world.ctx, &read(), global).await?;
    assert_eq!(by_admin.total, 1);
    let viewer = events::SEARCH.admit(common::user(3, RootRole::Viewer))?;
    let by_viewer = events::search(
        &world.ctx,
        &viewer,
        EventSearchQuery {
            event_type: Some("IS:segment-created".into()),
            ..EventSearchQuery::default()
        },
    )
    .await?;
    assert_eq!(by_viewer.total, 0);
    let of_flag = events::of_feature(&world.ctx, &viewer, "visible".into()).await?;
    assert_eq!(of_flag.total_events, 5, "a flag's events are about its project");
    Ok(())
}

#[tokio::test]
async fn writers_are_listed_by_id_with_the_names_unleash_gives_them() -> Outcome {
    let world = World::new()?;
    bare_feature(&world, "default", "by-token").await?;
    let editor = features::CREATE.admit(common::user(7, RootRole::Editor))?;
    features::create(
        &world.ctx,
        &editor,
        "default".into(),
        body(json!({"name": "by-user"}))?,
    )
    .await?;
    let creators = events::creators(&world.ctx).await?;
    let creators: Vec<(i32, &str)> = creators
        .iter()
        .map(|creator| (creator.id, creator.name.as_str()))
        .collect();
    assert!(
        creators.contains(&(Actor::ADMIN_TOKEN, "Unleash Admin Token")),
        "{creators:?}"
    );
    assert!(creators.contains(&(7, "user-7")), "{creators:?}");
    let mut ids: Vec<i32> = creators.iter().map(|(id, _)| *id).collect();
    let listed = ids.clone();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(listed, ids, "one per writer, by id");
    Ok(())
}
