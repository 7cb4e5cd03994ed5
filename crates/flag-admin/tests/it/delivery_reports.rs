//! What SDKs, Edge and browsers report, and the pipeline that writes it: `delivery::reports` and
//! `delivery::usage`, on the backend under test.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use flag_admin::AdminError;
use flag_admin::delivery::reports;
use flag_admin::delivery::usage::{FlagCount, InstanceReport, Usage};
use flag_admin::delivery::{applications, usage::types::ReportLimits};
use flag_admin::identity::auth::{ClientAccess, FrontendAccess};
use flag_store::queries::client_metrics::StorageCaps;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

const SDK_ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

fn backend(environment: Option<&str>, projects: Option<&[&str]>) -> ClientAccess {
    ClientAccess {
        environment: environment.map(str::to_owned),
        projects: projects.map(|projects| projects.iter().map(|project| (*project).to_owned()).collect()),
        token: "sdk".into(),
    }
}

fn browser() -> FrontendAccess {
    FrontendAccess {
        environment: "development".into(),
        projects: None,
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A report read from JSON, as an interface reads it.
fn body<T: DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(value)
}

fn registration(app: &str) -> Value {
    json!({
        "appName": app, "instanceId": "i-1", "sdkVersion": "unleash-node-sdk:6.12.1",
        "strategies": ["default", "flexibleRollout", "myCustom"], "started": now(), "interval": 15000
    })
}

fn report(app: &str, toggles: Value) -> Value {
    json!({"appName": app, "instanceId": "i-1", "bucket": {"start": now(), "stop": now(), "toggles": toggles}})
}

/// The paths of a validation failure's details, or a description of what came instead.
fn paths<T: std::fmt::Debug>(result: Result<T, AdminError>) -> Vec<String> {
    match result {
        Err(AdminError::Validation { details, .. }) => {
            details.into_iter().filter_map(|detail| detail.path).collect()
        }
        other => vec![format!("not a validation failure: {other:?}")],
    }
}

/// The application `name` as the admin view shows it, as JSON.
async fn application(world: &World, name: &str) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(common::json(
        &applications::get(&world.ctx, world.ctx.delivery(), name.into()).await?,
    )?)
}

#[tokio::test]
async fn a_registration_records_the_instance_and_its_strategies() -> Outcome {
    let world = World::new()?;
    let delivery = world.ctx.delivery();
    reports::register(
        delivery,
        backend(Some("development"), None),
        SDK_ADDRESS,
        body(registration("web"))?,
    )?;
    // Nothing touches the database until the pipeline writes.
    let unseen = applications::outdated_sdks(&world.ctx, None).await?;
    assert!(unseen.sdks.is_empty());
    let web = application(&world, "web").await?;
    let instance = &web["instances"][0];
    assert_eq!(
        (
            &instance["instanceId"],
            &instance["sdkVersion"],
            &instance["clientIp"],
            &instance["environment"],
            &instance["sdkType"]
        ),
        (
            &json!("i-1"),
            &json!("unleash-node-sdk:6.12.1"),
            &json!("192.0.2.1"),
            &json!("development"),
            &json!("backend")
        )
    );
    assert_eq!(
        web["strategies"][2],
        json!({"name": "myCustom", "notFound": true})
    );
    assert_eq!(web["strategies"][0]["name"], "default");
    // A token for every environment files its instances under `default`, as Unleash does; an
    // instance without an id is `default` too.
    let mut anonymous = registration("cli");
    anonymous["instanceId"] = json!("");
    reports::register(delivery, backend(None, None), SDK_ADDRESS, body(anonymous)?)?;
    let cli = application(&world, "cli").await?;
    assert_eq!(
        (
            &cli["instances"][0]["environment"],
            &cli["instances"][0]["instanceId"]
        ),
        (&json!("default"), &json!("default"))
    );

    let with = |change: Value| {
        let mut registration = registration("web");
        if let (Some(fields), Value::Object(change)) = (registration.as_object_mut(), change) {
            fields.extend(change);
        }
        body::<flag_admin::delivery::usage::types::Registration>(registration)
    };
    let many: Vec<String> = (0..=ReportLimits::STRATEGIES).map(|n| format!("s{n}")).collect();
    for (change, at) in [
        (json!({"appName": ""}), "/appName"),
        (json!({"appName": "x".repeat(256)}), "/appName"),
        (json!({"instanceId": "i\u{7}"}), "/instanceId"),
        (json!({"sdkVersion": "node\n6"}), "/sdkVersion"),
        (json!({"strategies": ["default", ""]}), "/strategies/1"),
        (json!({"strategies": many}), "/strategies"),
        (json!({"interval": -1}), "/interval"),
    ] {
        let refused = reports::register(delivery, backend(None, None), SDK_ADDRESS, with(change.clone())?);
        assert_eq!(paths(refused), [at], "{change}");
        assert_eq!(
            paths(reports::frontend_register(&with(change.clone())?)),
            [at],
            "{change}"
        );
    }
    reports::frontend_register(&with(json!({}))?)?;
    Ok(())
}

#[tokio::test]
async fn usage_counts_are_filed_under_the_tokens_environment_and_projects() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let delivery = world.ctx.delivery();
    let toggles = json!({
        "everyone": {"yes": 3, "no": 1, "variants": {"blue": 2, "disabled": 1}},
        "no-such-flag": {"yes": 0, "no": 4},
        "never-used": {"yes": 0, "no": 0}
    });
    for _ in 0..2 {
        reports::metrics(
            delivery,
            backend(Some("development"), None),
            SDK_ADDRESS,
            body(report("web", toggles.clone()))?,
        )?;
    }
    // A token for another project reports `everyone`: those counts are not its to give.
    let foreign = report("web", json!({"everyone": {"yes": 100, "no": 100}}));
    reports::metrics(
        delivery,
        backend(Some("development"), Some(&["shop"])),
        SDK_ADDRESS,
        body(foreign)?,
    )?;
    let recorded = world.ctx.flush_usage().await?;
    assert_eq!(
        (recorded.counted, recorded.unknown, recorded.out_of_scope),
        (1, 1, 1)
    );

    let usage = applications::feature_usage(&world.ctx, delivery, "everyone".into()).await?;
    assert_eq!(usage.last_hour_usage.len(), 1);
    let hour = &usage.last_hour_usage[0];
    assert_eq!(
        (hour.environment.as_str(), hour.yes, hour.no),
        ("development", 6, 2)
    );
    assert_eq!(usage.seen_applications, ["web"]);
    let raw = applications::raw_usage(
        &world.ctx,
        delivery,
        "everyone".into(),
        body(json!({"hoursBack": "1"}))?,
    )
    .await?;
    assert_eq!(raw.data.len(), 1);
    assert_eq!(
        raw.data[0].variants,
        Some(BTreeMap::from([
            ("blue".to_owned(), 4),
            ("disabled".to_owned(), 2)
        ]))
    );

    for (report, at) in [
        (json!({"appName": " "}), "/appName".to_owned()),
        (
            json!({"appName": "web", "bucket": {"start": now(), "stop": "2000-01-01T00:00:00Z", "toggles": {}}}),
            "/bucket/stop".to_owned(),
        ),
        (
            self::report("web", json!({"a/b\u{1}": {"yes": 1}})),
            "/bucket/toggles/a~1b\u{1}".to_owned(),
        ),
        (
            self::report("web", json!({"f": {"yes": 1, "variants": {"": 1}}})),
            "/bucket/toggles/f/variants/".to_owned(),
        ),
    ] {
        let refused = reports::metrics(delivery, backend(None, None), SDK_ADDRESS, body(report.clone())?);
        assert_eq!(paths(refused), std::slice::from_ref(&at), "{report}");
        let refused = reports::frontend_metrics(delivery, browser(), None, body(report.clone())?);
        assert_eq!(paths(refused), [at], "{report}");
    }
    let toggles: serde_json::Map<String, Value> = (0..=ReportLimits::FLAGS)
        .map(|n| (format!("f{n}"), json!({"yes": 1})))
        .collect();
    let too_many = reports::metrics(
        delivery,
        backend(None, None),
        SDK_ADDRESS,
        body(report("web", Value::Object(toggles)))?,
    );
    assert_eq!(paths(too_many), ["/bucket/toggles"]);
    assert_eq!(
        world.ctx.flush_usage().await?.counted,
        0,
        "no refused report was partly taken"
    );
    assert_eq!(delivery.usage().dropped(), 0);
    Ok(())
}

#[tokio::test]
async fn edge_reports_count_in_the_tokens_environment_only() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let delivery = world.ctx.delivery();
    let bulk = json!({
        "applications": [
            {"appName": "shop", "instanceId": "s-1", "environment": "development", "sdkType": "frontend",
             "sdkVersion": "unleash-client-js:3.7.0", "strategies": [], "interval": -5}
        ],
        "metrics": [
            {"featureName": "everyone", "appName": "shop", "environment": "development", "timestamp": now(), "yes": 5, "no": 0},
            {"featureName": "everyone", "appName": "shop", "environment": "production", "timestamp": now(), "yes": 7, "no": 0}
        ]
    });
    reports::bulk(delivery, backend(Some("development"), None), body(bulk)?)?;
    assert_eq!(world.ctx.flush_usage().await?.counted, 1);
    let usage = applications::feature_usage(&world.ctx, delivery, "everyone".into()).await?;
    assert_eq!(
        usage
            .last_hour_usage
            .iter()
            .map(|hour| (hour.environment.as_str(), hour.yes))
            .collect::<Vec<_>>(),
        [("development", 5)]
    );
    let shop = application(&world, "shop").await?;
    assert_eq!(
        (
            &shop["instances"][0]["sdkType"],
            &shop["instances"][0]["sdkVersion"]
        ),
        (&json!("frontend"), &json!("unleash-client-js:3.7.0"))
    );

    let applications: Vec<Value> = (0..=ReportLimits::APPLICATIONS)
        .map(|n| json!({"appName": format!("a{n}"), "instanceId": "i", "environment": "development"}))
        .collect();
    let refused = reports::bulk(
        delivery,
        backend(None, None),
        body(json!({"applications": applications, "metrics": []}))?,
    );
    assert_eq!(paths(refused), ["/applications"]);
    let bad_name = json!({"applications": [], "metrics": [
        {"featureName": "", "appName": "shop", "environment": "development", "timestamp": now()}
    ]});
    assert_eq!(
        paths(reports::bulk(delivery, backend(None, None), body(bad_name)?)),
        ["/metrics/0/featureName"]
    );

    // Edge's report about itself is an instance of its application.
    let edge = json!({"identifier": "edge-1", "appName": "unleash-edge", "edgeVersion": "19.1.0"});
    reports::edge_instance(delivery, backend(Some("production"), None), body(edge)?)?;
    let edge = application(&world, "unleash-edge").await?;
    assert_eq!(
        (
            &edge["instances"][0]["instanceId"],
            &edge["instances"][0]["sdkVersion"],
            &edge["instances"][0]["environment"]
        ),
        (
            &json!("edge-1"),
            &json!("unleash-edge:19.1.0"),
            &json!("production")
        )
    );
    let refused = reports::edge_instance(
        delivery,
        backend(None, None),
        body(json!({"identifier": "", "appName": "unleash-edge", "edgeVersion": "1\n"}))?,
    );
    assert_eq!(paths(refused), ["/identifier", "/edgeVersion"]);
    Ok(())
}

#[tokio::test]
async fn browsers_report_their_instance_only_when_they_say_which_sdk_they_are() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let delivery = world.ctx.delivery();
    let counts = || body(report("spa", json!({"everyone": {"yes": 2, "no": 0}})));
    reports::frontend_metrics(delivery, browser(), None, counts()?)?;
    assert_eq!(world.ctx.flush_usage().await?.counted, 1);
    let missing = applications::get(&world.ctx, delivery, "spa".into()).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");

    reports::frontend_metrics(delivery, browser(), Some("unleash-client-js:3.7.0"), counts()?)?;
    let spa = application(&world, "spa").await?;
    assert_eq!(
        (
            &spa["instances"][0]["sdkType"],
            &spa["instances"][0]["sdkVersion"],
            &spa["instances"][0]["environment"]
        ),
        (
            &json!("frontend"),
            &json!("unleash-client-js:3.7.0"),
            &json!("development")
        )
    );
    let usage = applications::feature_usage(&world.ctx, delivery, "everyone".into()).await?;
    assert_eq!(usage.last_hour_usage[0].yes, 4);
    // The SDK's header is held to the rules of names in the body.
    let refused = reports::frontend_metrics(delivery, browser(), Some("js\u{0}"), counts()?);
    assert_eq!(paths(refused), ["Unleash-Sdk"]);
    Ok(())
}

fn count(name: &str, variants: usize) -> FlagCount {
    FlagCount {
        feature_name: name.into(),
        yes: 1,
        no: 0,
        variants: (0..variants).map(|n| (format!("v{n}"), 1)).collect(),
    }
}

#[tokio::test]
async fn the_pipeline_holds_its_bounds_and_the_stores_caps() -> Outcome {
    let world = World::new()?;
    let usage = Usage::with_caps(StorageCaps {
        unknown_flags_per_environment: 2,
        applications: 1,
        instances: 1,
    });
    let now = flag_admin::now();
    // Past the variants one flag may count in an hour, the rest are dropped and counted.
    usage.count(
        "web",
        "development",
        None,
        now,
        [count("wide", Usage::MAX_VARIANTS + 6)],
    );
    assert_eq!(usage.dropped(), 6);
    for (app, flag) in [("a", "x"), ("b", "y"), ("c", "z")] {
        usage.instance(
            InstanceReport::new(app.into(), "i".into(), "development".into(), None, "backend"),
            now,
        )?;
        usage.count(app, "development", None, now, [count(flag, 0)]);
    }
    let recorded = usage.flush(world.store(), now).await?;
    assert_eq!(recorded.unknown, 4);
    // The store keeps one application and instance and two unknown names per environment.
    let evicted = usage.evicted();
    assert_eq!(
        (evicted.applications, evicted.instances, evicted.unknown_flags),
        (2, 2, 2)
    );
    assert_eq!(
        usage.flush(world.store(), now).await?.unknown,
        0,
        "a flush writes each report once"
    );

    // Past half of a bound, the server is woken to flush at once.
    let filling = Usage::default();
    assert!(
        tokio::time::timeout(Duration::from_millis(20), filling.half_full())
            .await
            .is_err()
    );
    for n in 0..=Usage::MAX_APPLICATIONS / 2 {
        filling.instance(
            InstanceReport::new(
                format!("app-{n}"),
                "i".into(),
                "development".into(),
                None,
                "backend",
            ),
            now,
        )?;
    }
    tokio::time::timeout(Duration::from_secs(5), filling.half_full()).await?;
    assert_eq!(filling.dropped(), 0);
    Ok(())
}
