//! The views of projects: the list and a project's overview with health and onboarding, its
//! status, who created its flags, and each caller's dashboard.

use flag_admin::AdminError;
use flag_admin::catalogue::{features, overview, segments};
use flag_admin::runtime::domain::RootRole;
use serde_json::json;

use crate::catalogue_fixture::{
    body, create_project, create_user, flag, report_usage, seed_feature, store_token, writer,
};
use crate::common::{self, Outcome, World};

/// `first`, marked stale, and `second`, both on everywhere, in the default project.
async fn two_flags(world: &World) -> Outcome {
    seed_feature(world, "first").await?;
    features::patch(
        &world.ctx,
        &writer(),
        flag("first"),
        body(json!([{"op": "replace", "path": "/stale", "value": true}]))?,
    )
    .await?;
    seed_feature(world, "second").await?;
    Ok(())
}

#[tokio::test]
async fn projects_are_listed_and_overviewed_with_health_and_onboarding() -> Outcome {
    let world = World::new()?;
    two_flags(&world).await?;
    create_project(&world, "empty").await?;
    let listed = overview::list(&world.ctx).await?;
    assert_eq!(listed.version, 1);
    let ids: Vec<&str> = listed
        .projects
        .iter()
        .map(|project| project.id.as_str())
        .collect();
    assert_eq!(ids, ["default", "empty"], "by name");
    let default = &listed.projects[0];
    assert_eq!(default.feature_count, 2);
    assert_eq!(default.health, 50, "one of two flags is stale");
    assert_eq!(default.technical_debt, 50);
    assert!(default.archived_at.is_none());
    assert!(default.last_updated_at.is_some());
    assert!(default.last_reported_flag_usage.is_none());
    assert_eq!(default.owners[0].owner_type, "system");
    assert_eq!(
        (
            default.onboarding_status.status,
            default.onboarding_status.feature.as_deref()
        ),
        ("first-flag-created", Some("first"))
    );
    let empty = &listed.projects[1];
    assert_eq!(empty.onboarding_status.status, "onboarding-started");
    assert_eq!((empty.feature_count, empty.health), (0, 100));

    let seen = overview::overview(&world.ctx, "default".into()).await?;
    assert_eq!(seen.name, "Default");
    assert_eq!(seen.health, 50);
    let environments: Vec<&str> = seen
        .environments
        .iter()
        .map(|environment| environment.environment.as_str())
        .collect();
    assert_eq!(environments, ["development", "production"]);
    let types: Vec<(&str, usize)> = seen
        .feature_type_counts
        .iter()
        .map(|count| (count.feature_type.as_str(), count.count))
        .collect();
    assert_eq!(types, [("release", 2)]);
    assert_eq!(seen.onboarding_status.status, "first-flag-created");
    let unknown = overview::overview(&world.ctx, "nope".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // Once an SDK uses one of its flags, the project is onboarded.
    report_usage(&world, "development", &[("second", 0, 2)]).await?;
    let seen = overview::overview(&world.ctx, "default".into()).await?;
    assert_eq!(seen.onboarding_status.status, "onboarded");
    assert!(seen.onboarding_status.feature.is_none());
    let listed = overview::list(&world.ctx).await?;
    assert_eq!(listed.projects[0].onboarding_status.status, "onboarded");
    assert!(listed.projects[0].last_reported_flag_usage.is_some());
    Ok(())
}

#[tokio::test]
async fn a_projects_status_counts_its_resources_activity_and_stages() -> Outcome {
    let world = World::new()?;
    two_flags(&world).await?;
    store_token(&world, "client", "development", &["default"])?;
    store_token(&world, "client", "production", &["*"])?;
    segments::create(
        &world.ctx,
        &common::admin(segments::CREATE),
        body(json!({"name": "mine", "project": "default"}))?,
    )
    .await?;
    let status = overview::status(&world.ctx, "default".into()).await?;
    assert_eq!(
        status.resources.api_tokens, 1,
        "tokens of the project, not of every one"
    );
    assert_eq!(status.resources.segments, 1);
    assert_eq!(status.stale_flags.total, 1);
    assert_eq!((status.health.current, status.technical_debt.current), (50, 50));
    assert_eq!(status.lifecycle_summary.initial.current_flags, 2);
    assert_eq!(status.lifecycle_summary.archived.current_flags, 0);
    assert!(
        status
            .activity_count_by_date
            .first()
            .is_some_and(|day| day.count > 0),
        "{:?}",
        status.activity_count_by_date
    );
    // An unknown project has nothing.
    let unknown = overview::status(&world.ctx, "nope".into()).await?;
    assert_eq!(unknown.stale_flags.total, 0);
    assert!(unknown.activity_count_by_date.is_empty());
    assert_eq!(unknown.health.current, 100);
    Ok(())
}

#[tokio::test]
async fn dashboards_show_the_callers_flags_and_the_administrators() -> Outcome {
    let world = World::new()?;
    two_flags(&world).await?;
    let admin_id = create_user(&world, "Ada", "ada@example.com", RootRole::Admin).await?;
    let editor_id = create_user(&world, "Ed", "ed@example.com", RootRole::Editor).await?;
    let editor = features::CREATE.admit(common::user(editor_id, RootRole::Editor))?;
    features::create(
        &world.ctx,
        &editor,
        "default".into(),
        body(json!({"name": "eds-flag", "type": "experiment"}))?,
    )
    .await?;

    // An admin token sees the flags admin tokens created; a user, their own.
    let by_token = overview::dashboard(&world.ctx, &common::admin(overview::DASHBOARD)).await?;
    let flags: Vec<&str> = by_token.flags.iter().map(|flag| flag.name.as_str()).collect();
    assert_eq!(flags, ["second", "first"], "newest first");
    let by_editor = overview::dashboard(
        &world.ctx,
        &overview::DASHBOARD.admit(common::user(editor_id, RootRole::Editor))?,
    )
    .await?;
    let flags: Vec<(&str, &str)> = by_editor
        .flags
        .iter()
        .map(|flag| (flag.name.as_str(), flag.feature_type.as_str()))
        .collect();
    assert_eq!(flags, [("eds-flag", "experiment")]);
    let admins: Vec<(i32, Option<&str>)> = by_editor
        .admins
        .iter()
        .map(|admin| (admin.id, admin.name.as_deref()))
        .collect();
    assert_eq!(admins, [(admin_id, Some("Ada"))]);
    let projects: Vec<(&str, usize)> = by_editor
        .projects
        .iter()
        .map(|project| (project.id.as_str(), project.feature_count))
        .collect();
    assert_eq!(projects, [("default", 3)]);

    // Only users create flags by name: admin tokens are no user.
    let creators = overview::flag_creators(&world.ctx, "default".into()).await?;
    let creators: Vec<(i32, &str)> = creators
        .iter()
        .map(|creator| (creator.id, creator.name.as_str()))
        .collect();
    assert_eq!(creators, [(editor_id, "Ed")]);
    assert!(
        overview::flag_creators(&world.ctx, "nope".into())
            .await?
            .is_empty()
    );

    // A project on the dashboard: its newest events told as the event log tells them.
    let detail = overview::dashboard_project(&world.ctx, "default".into()).await?;
    assert_eq!(detail.insights.total_flags, 3);
    assert_eq!(detail.insights.stale_flags, 1);
    assert_eq!(detail.insights.active_flags, 2);
    assert!(detail.roles.is_empty());
    assert!(detail.latest_events.len() <= 10);
    assert!(
        detail.latest_events.iter().any(|event| event
            .summary
            .contains("created **[second](http://localhost:4242/projects/default/features/second)**")),
        "{:?}",
        detail.latest_events
    );
    let unknown = overview::dashboard_project(&world.ctx, "nope".into()).await;
    assert!(
        matches!(&unknown, Err(AdminError::NotFound(message)) if message == "No project with that id exists."),
        "{unknown:?}"
    );
    Ok(())
}
