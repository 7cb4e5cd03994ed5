//! The admin views of what SDKs reported: `delivery::applications`, on the backend under test.
//! Each view writes what the replica aggregated first, so every report below shows at once.

use std::net::{IpAddr, Ipv4Addr};

use flag_admin::AdminError;
use flag_admin::catalogue::archive;
use flag_admin::delivery::applications;
use flag_admin::delivery::reports;
use flag_admin::delivery::usage::types::ApplicationsOut;
use flag_admin::identity::auth::ClientAccess;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

const SDK_ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

fn token(environment: &str) -> ClientAccess {
    ClientAccess {
        environment: Some(environment.into()),
        projects: None,
        token: "sdk".into(),
    }
}

fn body<T: DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(value)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `app` registers instance `instance` with `sdk` in `environment` and reports `toggles` there.
fn reported(
    world: &World,
    app: &str,
    instance: &str,
    sdk: &str,
    environment: &str,
    toggles: Value,
) -> Outcome {
    let delivery = world.ctx.delivery();
    let registration = json!({
        "appName": app, "instanceId": instance, "sdkVersion": sdk, "started": now(), "interval": 15000,
        "strategies": ["default", "gradualRolloutRandom", "myCustom"]
    });
    reports::register(delivery, token(environment), SDK_ADDRESS, body(registration)?)?;
    let report = json!({"appName": app, "instanceId": instance, "bucket": {"start": now(), "stop": now(), "toggles": toggles}});
    reports::metrics(delivery, token(environment), SDK_ADDRESS, body(report)?)?;
    Ok(())
}

/// Three applications: `web` in development and production with a current SDK, `shop` in
/// development with an outdated one, and `idle`, which registered and never counted. `web` also
/// used `retired`, a flag deleted since.
async fn three_applications(world: &World) -> Outcome {
    common::demo_flags(world)?;
    common::import_flags(
        world,
        "development",
        json!({"features": [{"name": "retired", "enabled": true}]}),
    )?;
    let counts = json!({"everyone": {"yes": 3, "no": 1}, "pro-only": {"yes": 0, "no": 2}, "ghost": {"yes": 1}, "retired": {"yes": 1}});
    reported(
        world,
        "web",
        "w-1",
        "unleash-node-sdk:6.12.1",
        "development",
        counts,
    )?;
    reported(
        world,
        "web",
        "w-2",
        "unleash-node-sdk:6.12.1",
        "production",
        json!({"everyone": {"yes": 1}}),
    )?;
    reported(
        world,
        "shop",
        "s-1",
        "unleash-client-node:3.0.0",
        "development",
        json!({"everyone": {"no": 5}}),
    )?;
    reported(
        world,
        "idle",
        "i-1",
        "unleash-client-java:9.2.0",
        "development",
        json!({}),
    )?;
    world.ctx.flush_usage().await?;
    let caller = common::admin(archive::ARCHIVE_ONE);
    archive::archive_one(&world.ctx, &caller, "default".into(), "retired".into()).await?;
    archive::delete_one(&world.ctx, &common::admin(archive::DELETE_ONE), "retired".into()).await?;
    Ok(())
}

fn names(list: &ApplicationsOut) -> Vec<&str> {
    list.applications
        .iter()
        .map(|application| application.app_name.as_str())
        .collect()
}

/// The applications listed for `query`.
async fn list(world: &World, query: Value) -> Result<ApplicationsOut, Box<dyn std::error::Error>> {
    Ok(applications::list(&world.ctx, world.ctx.delivery(), body(query)?).await?)
}

#[tokio::test]
async fn applications_are_listed_filtered_and_paged() -> Outcome {
    let world = World::new()?;
    three_applications(&world).await?;
    let all = list(&world, json!({})).await?;
    assert_eq!((names(&all), all.total), (vec!["idle", "shop", "web"], 3));
    let web = &all.applications[2];
    assert_eq!(web.strategies, ["default", "gradualRolloutRandom", "myCustom"]);
    assert_eq!(
        (web.created_by, web.sdk_version.as_deref()),
        ("unleash_system_user", Some("unleash-node-sdk:6.12.1"))
    );
    assert_eq!(
        (web.project.as_deref(), web.environment.as_deref()),
        (Some("*"), Some("development"))
    );
    assert_eq!(web.usage[0].environments, ["development", "production"]);

    let paged = list(&world, json!({"offset": "1", "limit": "1", "sortOrder": "desc"})).await?;
    assert_eq!((names(&paged), paged.total), (vec!["shop"], 3));
    let found = list(&world, json!({"query": "we, sh"})).await?;
    assert_eq!((names(&found), found.total), (vec!["shop", "web"], 2));
    // Values that do not read are the defaults, as in Unleash.
    let lenient = list(
        &world,
        json!({"offset": "-3", "limit": "5000", "sortBy": "anything"}),
    )
    .await?;
    assert_eq!(names(&lenient), ["idle", "shop", "web"]);
    assert!(
        list(&world, json!({"query": "zzz"}))
            .await?
            .applications
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn one_application_shows_its_instances_strategies_and_flags() -> Outcome {
    let world = World::new()?;
    three_applications(&world).await?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    let web = common::json(&applications::get(ctx, delivery, "web".into()).await?)?;
    assert_eq!(web["instances"].as_array().map(Vec::len), Some(2), "{web}");
    assert_eq!(web["links"], json!({"self": "/api/applications/web"}));
    assert_eq!(web["strategies"][0]["name"], "default");
    assert_eq!(
        web["strategies"][2],
        json!({"name": "myCustom", "notFound": true})
    );
    let seen: Vec<Value> = web["seenToggles"].as_array().cloned().unwrap_or_default();
    assert_eq!(seen.len(), 3, "{web}");
    assert_eq!(seen[2], json!({"name": "retired", "notFound": true}));
    assert_eq!(
        seen[0],
        json!({"name": "everyone", "description": null, "type": "release", "project": "default",
        "stale": false, "createdAt": seen[0]["createdAt"], "lastSeenAt": seen[0]["lastSeenAt"], "impressionData": false,
        "archivedAt": null, "archived": false})
    );
    assert!(seen[0]["lastSeenAt"].is_string(), "{web}");
    assert_eq!(seen[1]["name"], "pro-only");
    let missing = applications::get(ctx, delivery, "nobody".into()).await;
    assert!(
        matches!(&missing, Err(AdminError::NotFound(message)) if message == "could not find appName=nobody"),
        "{missing:?}"
    );

    let development = applications::instances(ctx, delivery, "web".into(), "development".into()).await?;
    let ids: Vec<&str> = development
        .instances
        .iter()
        .map(|instance| instance.instance_id.as_str())
        .collect();
    assert_eq!(ids, ["w-1"]);
    assert_eq!(development.instances[0].client_ip.as_deref(), Some("192.0.2.1"));
    assert!(
        applications::instances(ctx, delivery, "web".into(), "staging".into())
            .await?
            .instances
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn an_overview_names_what_may_be_wrong_with_an_application() -> Outcome {
    let world = World::new()?;
    three_applications(&world).await?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    let web = applications::overview(ctx, delivery, "web".into()).await?;
    assert_eq!(
        (web.projects.clone(), web.feature_count),
        (vec!["default".to_owned()], 2)
    );
    // Retired strategies the SDK still registers are not missing; unknown ones are.
    assert_eq!(web.issues.missing_strategies, ["myCustom"]);
    let environments: Vec<(&str, usize)> = web
        .environments
        .iter()
        .map(|environment| (environment.name.as_str(), environment.instance_count))
        .collect();
    assert_eq!(environments, [("development", 1), ("production", 1)]);
    let development = &web.environments[0];
    assert_eq!(development.issues.missing_features, ["retired"]);
    assert_eq!(
        (development.sdks.clone(), development.backend_sdks.len()),
        (vec!["unleash-node-sdk:6.12.1".to_owned()], 1)
    );
    assert!(development.issues.outdated_sdks.is_empty() && development.frontend_sdks.is_empty());
    let shop = applications::overview(ctx, delivery, "shop".into()).await?;
    assert_eq!(
        shop.environments[0].issues.outdated_sdks,
        ["unleash-client-node:3.0.0"]
    );
    // Strategies are missing only once the application has reported usage.
    let idle = applications::overview(ctx, delivery, "idle".into()).await?;
    assert!(idle.issues.missing_strategies.is_empty() && idle.environments.is_empty());
    let missing = applications::overview(ctx, delivery, "nobody".into()).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    Ok(())
}

#[tokio::test]
async fn a_flags_usage_is_summed_per_environment_and_hour() -> Outcome {
    let world = World::new()?;
    three_applications(&world).await?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    let usage = applications::feature_usage(ctx, delivery, "everyone".into()).await?;
    let hours: Vec<(&str, i64, i64)> = usage
        .last_hour_usage
        .iter()
        .map(|hour| (hour.environment.as_str(), hour.yes, hour.no))
        .collect();
    assert_eq!(hours, [("development", 3, 6), ("production", 1, 0)]);
    assert_eq!(
        (usage.seen_applications.clone(), usage.version, usage.maturity),
        (vec!["shop".to_owned(), "web".to_owned()], 1, "stable")
    );

    // Every environment, times every application, times every hour asked for, newest first.
    let raw =
        applications::raw_usage(ctx, delivery, "everyone".into(), body(json!({"hoursBack": "3"}))?).await?;
    assert_eq!(raw.data.len(), 2 * 2 * 3);
    let reported: Vec<(&str, &str, i64, i64)> = raw
        .data
        .iter()
        .filter(|hour| hour.yes + hour.no > 0)
        .map(|hour| {
            (
                hour.environment.as_str(),
                hour.app_name.as_deref().unwrap_or_default(),
                hour.yes,
                hour.no,
            )
        })
        .collect();
    assert_eq!(
        reported,
        [
            ("development", "shop", 0, 5),
            ("development", "web", 3, 1),
            ("production", "web", 1, 0)
        ]
    );
    assert!(raw.data[0].timestamp > raw.data[2].timestamp);
    // Out of range, a day.
    let day = applications::raw_usage(
        ctx,
        delivery,
        "everyone".into(),
        body(json!({"hoursBack": "49"}))?,
    )
    .await?;
    assert_eq!(day.data.len(), 2 * 2 * 24);
    let nothing = applications::raw_usage(ctx, delivery, "switched-off".into(), body(json!({}))?).await?;
    assert!(nothing.data.is_empty());
    Ok(())
}

#[tokio::test]
async fn names_no_flag_has_and_outdated_sdks_are_listed() -> Outcome {
    let world = World::new()?;
    three_applications(&world).await?;
    reported(
        &world,
        "shop",
        "s-1",
        "unleash-client-node:3.0.0",
        "production",
        json!({"ghost": {"no": 1}}),
    )?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    let unknown = applications::unknown_flags(ctx, delivery).await?;
    let names: Vec<&str> = unknown
        .unknown_flags
        .iter()
        .map(|flag| flag.name.as_str())
        .collect();
    assert_eq!(names, ["ghost"]);
    let reports: Vec<(&str, Vec<&str>)> = unknown.unknown_flags[0]
        .reports
        .iter()
        .map(|report| {
            (
                report.app_name.as_str(),
                report
                    .environments
                    .iter()
                    .map(|at| at.environment.as_str())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        reports,
        [("shop", vec!["production"]), ("web", vec!["development"])]
    );

    let outdated = applications::outdated_sdks(ctx, None).await?;
    let sdks: Vec<(&str, Vec<String>)> = outdated
        .sdks
        .iter()
        .map(|sdk| (sdk.sdk_version.as_str(), sdk.applications.clone()))
        .collect();
    assert_eq!(sdks, [("unleash-client-node:3.0.0", vec!["shop".to_owned()])]);
    assert_eq!(
        applications::outdated_sdks(ctx, Some("default".into()))
            .await?
            .sdks
            .len(),
        1
    );
    assert!(
        applications::outdated_sdks(ctx, Some("shop".into()))
            .await?
            .sdks
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn a_projects_applications_are_those_that_used_its_flags() -> Outcome {
    let world = World::new()?;
    three_applications(&world).await?;
    // The project views read what is written.
    world.ctx.flush_usage().await?;
    let ctx = &world.ctx;
    let all = applications::of_project(ctx, "default".into(), body(json!({}))?).await?;
    let names: Vec<&str> = all
        .applications
        .iter()
        .map(|application| application.name.as_str())
        .collect();
    assert_eq!((names, all.total), (vec!["shop", "web"], 2));
    let web = &all.applications[1];
    assert_eq!(
        (web.environments.clone(), web.instances.clone()),
        (
            vec!["development".to_owned(), "production".to_owned()],
            vec!["w-1".to_owned(), "w-2".to_owned()]
        )
    );
    assert_eq!(
        (web.sdks[0].name.as_str(), web.sdks[0].versions.clone()),
        ("unleash-node-sdk", vec!["6.12.1".to_owned()])
    );

    let paged = applications::of_project(
        ctx,
        "default".into(),
        body(json!({"sortOrder": "desc", "limit": "1", "offset": "1"}))?,
    )
    .await?;
    assert_eq!((paged.applications[0].name.as_str(), paged.total), ("shop", 2));
    let found = applications::of_project(ctx, "default".into(), body(json!({"query": "WE"}))?).await?;
    assert_eq!(found.total, 1);
    let refused =
        applications::of_project(ctx, "default".into(), body(json!({"sortOrder": "sideways"}))?).await;
    assert!(
        matches!(&refused, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/query/sortOrder")),
        "{refused:?}"
    );
    let missing = applications::of_project(ctx, "nope".into(), body(json!({}))?).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let caller = common::admin(flag_admin::catalogue::projects::CREATE);
    let shop: flag_admin::catalogue::projects::types::CreateProject =
        body(json!({"id": "shop", "name": "Shop"}))?;
    flag_admin::catalogue::projects::create(ctx, &caller, shop).await?;
    assert_eq!(
        applications::of_project(ctx, "shop".into(), body(json!({}))?)
            .await?
            .total,
        0
    );
    Ok(())
}
