//! The playgrounds and the compiled environments they evaluate with: `delivery::playground` and
//! `delivery::engines`, on the backend under test.

use std::sync::Arc;

use flag_admin::catalogue::dependencies;
use flag_admin::delivery::engines;
use flag_admin::delivery::playground::types::{PlaygroundContext, PlaygroundQuery};
use flag_admin::delivery::playground::{self, Chunked};
use flag_admin::identity::auth::Caller;
use flag_admin::runtime::domain::RootRole;
use flag_admin::{AdminError, Settings};
use flag_store::queries::evaluation::ProjectScope;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

/// A whole answer, its parts joined, as JSON.
fn read(mut answer: impl Chunked) -> Result<Value, Box<dyn std::error::Error>> {
    let mut bytes = Vec::new();
    while let Some(chunk) = answer.next_chunk() {
        bytes.extend(chunk?);
    }
    assert!(answer.is_finished());
    Ok(serde_json::from_slice(&bytes)?)
}

/// The deprecated playground's answer to `body`, as JSON.
async fn played(world: &World, caller: &Caller, body: Value) -> Result<Value, Box<dyn std::error::Error>> {
    read(playground::deprecated(&world.ctx, world.ctx.delivery(), caller, body).await?)
}

/// The advanced playground's answer to `body`, as JSON.
async fn advanced(world: &World, caller: &Caller, body: Value) -> Result<Value, Box<dyn std::error::Error>> {
    read(playground::advanced(&world.ctx, world.ctx.delivery(), caller, body).await?)
}

/// The path of a validation failure's first detail, or a description of what came instead.
fn path<T: std::fmt::Debug>(result: Result<T, AdminError>) -> String {
    match result {
        Err(AdminError::Validation { details, .. }) => details
            .first()
            .and_then(|detail| detail.path.clone())
            .unwrap_or_default(),
        other => format!("not a validation failure: {other:?}"),
    }
}

#[tokio::test]
async fn the_playground_explains_each_flag_for_a_context() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let caller = common::admin(playground::DEPRECATED);
    let body = json!({"environment": "development", "context": {"appName": "web", "userId": 7, "properties": {"plan": "pro"}}});
    let answer = played(&world, &caller, body).await?;
    // The input is echoed after coercion.
    assert_eq!(answer["input"]["context"]["userId"], "7");
    let enabled: Vec<(&str, bool)> = answer["features"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|feature| {
            (
                feature["name"].as_str().unwrap_or_default(),
                feature["isEnabled"] == true,
            )
        })
        .collect();
    assert_eq!(
        enabled,
        [("everyone", true), ("pro-only", true), ("switched-off", false)]
    );
    assert_eq!(answer["features"][1]["variant"]["name"], "gold");
    assert_eq!(
        answer["features"][1]["strategies"]["data"][0]["constraints"][0]["result"],
        true
    );
    assert_eq!(answer["features"][2]["isEnabledInCurrentEnvironment"], false);

    let free = json!({"environment": "development", "context": {"appName": "web", "plan": "free"}});
    assert_eq!(
        played(&world, &caller, free).await?["features"][1]["isEnabled"],
        false
    );
    // Unknown projects match nothing, and an unknown environment has every flag off.
    let none = json!({"environment": "development", "projects": ["nope"], "context": {"appName": "a"}});
    assert_eq!(played(&world, &caller, none).await?["features"], json!([]));
    let nowhere = json!({"environment": "nowhere", "context": {"appName": "a"}});
    let nowhere = played(&world, &caller, nowhere).await?;
    assert!(
        nowhere["features"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|feature| feature["isEnabled"] == false)
    );
    Ok(())
}

#[tokio::test]
async fn a_playground_request_that_breaks_a_rule_is_refused() -> Outcome {
    let world = World::new()?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    let caller = common::admin(playground::DEPRECATED);
    for (body, at) in [
        (json!([]), "/"),
        (json!({"context": {"appName": "a"}}), "/environment"),
        (
            json!({"environment": {"name": "development"}, "context": {"appName": "a"}}),
            "/environment",
        ),
        (json!({"environment": "development"}), "/context"),
        (
            json!({"environment": "development", "context": {}}),
            "/context/appName",
        ),
        (
            json!({"environment": "development", "context": {"appName": "a", "userId": [1]}}),
            "/context/userId",
        ),
        (
            json!({"environment": "development", "context": {"appName": "a", "currentTime": "yesterday"}}),
            "/context/currentTime",
        ),
        (
            json!({"environment": "development", "context": {"appName": "a"}, "projects": 3}),
            "/projects",
        ),
    ] {
        let refused = playground::deprecated(ctx, delivery, &caller, body.clone()).await;
        assert_eq!(path(refused), at, "{body}");
    }
    for (body, at) in [
        (json!({"context": {"appName": "a"}}), "/environments"),
        (
            json!({"environments": [], "context": {"appName": "a"}}),
            "/environments",
        ),
        (
            json!({"environments": "development", "context": {"appName": "a"}}),
            "/environments",
        ),
        (
            json!({"environments": ["bad env"], "context": {"appName": "a"}}),
            "/environments/0",
        ),
        (
            json!({"environments": ["development"], "context": {"appName": "a", "currentTime": "2024-01-01T00:00:00Z,2024-01-02T00:00:00Z"}}),
            "/context/currentTime",
        ),
    ] {
        let refused = playground::advanced(ctx, delivery, &caller, body.clone()).await;
        assert_eq!(path(refused), at, "{body}");
    }
    Ok(())
}

#[tokio::test]
async fn the_playground_reads_only_the_environments_a_caller_may() -> Outcome {
    let world = World::new()?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    common::demo_flags(&world)?;
    let production_only = common::token(playground::DEPRECATED, Some(&["production"]));
    let body = |environment: &str| json!({"environment": environment, "context": {"appName": "a"}});
    let refused = playground::deprecated(ctx, delivery, &production_only, body("development")).await;
    assert!(
        matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"PLAYGROUND\"") && message.contains("\"development\"")),
        "{refused:?}"
    );
    played(&world, &production_only, body("production")).await?;
    let both = json!({"environments": ["production", "development"], "context": {"appName": "a"}});
    let advanced_only = common::token(playground::ADVANCED, Some(&["production"]));
    let refused = playground::advanced(ctx, delivery, &advanced_only, both).await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    // A Viewer may play in every environment.
    let viewer = playground::DEPRECATED.admit(common::user(1, RootRole::Viewer))?;
    played(&world, &viewer, body("development")).await?;
    Ok(())
}

#[tokio::test]
async fn the_advanced_playground_expands_every_combination_and_warns() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let caller = common::admin(playground::ADVANCED);
    let request = json!({
        "environments": ["development", "production"],
        "projects": "*",
        "context": {"appName": "web", "userId": "1,2", "tenant": {"x": 1}, "properties": {"plan": "pro,free"}}
    });
    let answer = advanced(&world, &caller, request.clone()).await?;
    assert_eq!(answer["input"], request);
    assert_eq!(
        answer["warnings"],
        json!({"invalidContextProperties": ["tenant"]})
    );
    let pro_only = &answer["features"][1];
    assert_eq!(
        (&pro_only["name"], &pro_only["projectId"]),
        (&json!("pro-only"), &json!("default"))
    );
    let development = pro_only["environments"]["development"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(development.len(), 4);
    let decided: Vec<(Value, bool)> = development
        .iter()
        .map(|entry| (entry["context"].clone(), entry["isEnabled"] == true))
        .collect();
    assert_eq!(
        decided,
        [
            (json!({"userId": "1", "plan": "pro", "appName": "web"}), true),
            (json!({"userId": "1", "plan": "free", "appName": "web"}), false),
            (json!({"userId": "2", "plan": "pro", "appName": "web"}), true),
            (json!({"userId": "2", "plan": "free", "appName": "web"}), false),
        ]
    );
    assert!(
        pro_only["environments"]["production"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|entry| entry["isEnabled"] == false && entry["environment"] == "production")
    );
    // A repeated environment adds its entries to its first key; nothing dropped, no warnings.
    let repeated = json!({"environments": ["development", "development"], "context": {"appName": "web"}});
    let answer = advanced(&world, &caller, repeated).await?;
    assert!(answer.get("warnings").is_none(), "{answer}");
    assert_eq!(
        answer["features"][0]["environments"]["development"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    Ok(())
}

#[tokio::test]
async fn the_advanced_playground_refuses_answers_past_its_limits() -> Outcome {
    let world = World::with(Settings {
        combination_limit: 10,
        context_bytes_limit: 200,
        ..Settings::default()
    })?;
    common::demo_flags(&world)?;
    let caller = common::admin(playground::ADVANCED);
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    // Two environments, three flags and two users are twelve combinations.
    let many = json!({"environments": ["development", "production"], "context": {"appName": "web", "userId": "1,2"}});
    let refused = playground::advanced(ctx, delivery, &caller, many).await;
    assert!(
        matches!(&refused, Err(AdminError::Validation { message, .. }) if message.contains("12 combinations exceeding 10 limit")),
        "{refused:?}"
    );
    let long = json!({"environments": ["development"], "context": {"appName": "x".repeat(300)}});
    let refused = playground::advanced(ctx, delivery, &caller, long).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    advanced(
        &world,
        &caller,
        json!({"environments": ["development"], "context": {"appName": "web"}}),
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn the_console_reads_the_advanced_answer_whole_and_typed_within_a_bound() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    let caller = common::admin(playground::ADVANCED);
    let mut context = PlaygroundContext::new("web");
    context.set("userId", "1,2");
    context.set("plan", "pro");
    let query = PlaygroundQuery {
        environments: vec!["development".into()],
        projects: None,
        context,
        at: None,
    };
    assert_eq!(
        query.body(),
        json!({"environments": ["development"], "projects": "*", "context": {"appName": "web", "userId": "1,2", "properties": {"plan": "pro"}}})
    );
    // A property named like a field of its own stays a property when set as one.
    let mut named = PlaygroundContext::new("web");
    named.set_property("userId", "7");
    assert_eq!(
        PlaygroundQuery {
            environments: vec!["development".into()],
            projects: Some(vec!["default".into()]),
            context: named,
            at: None,
        }
        .body(),
        json!({"environments": ["development"], "projects": ["default"], "context": {"appName": "web", "properties": {"userId": "7"}}})
    );
    // A past moment is asked for as the operation reads it.
    let moment = flag_admin::runtime::domain::Timestamp::read("2026-11-30T14:03:00.5Z")?;
    assert_eq!(
        PlaygroundQuery {
            environments: vec!["development".into()],
            projects: None,
            context: PlaygroundContext::new("web"),
            at: Some(moment),
        }
        .body()["at"],
        json!("2026-11-30T14:03:00.500Z")
    );
    let (shown, total) = playground::advanced_shown(ctx, delivery, &caller, &query, 0..100, 1 << 20)
        .await?
        .ok_or("the answer fits")?;
    assert_eq!(total, 3);
    let names: Vec<&str> = shown.features.iter().map(|flag| flag.name.as_str()).collect();
    assert_eq!(names, ["everyone", "pro-only", "switched-off"]);
    let pro = shown.features[1]
        .environments
        .get("development")
        .ok_or("development is shown")?;
    assert_eq!(pro.len(), 2);
    assert!(
        pro.iter()
            .all(|entry| entry.is_enabled && entry.variant.name == "gold")
    );
    assert!(
        pro[0].context.contains(&("userId".to_owned(), "1".to_owned())),
        "{:?}",
        pro[0].context
    );
    assert_eq!(pro[0].strategies.data[0].constraints[0].context_name, "plan");
    // Past the bound, nothing is shown; the refusals are the advanced playground's.
    assert!(
        playground::advanced_shown(ctx, delivery, &caller, &query, 0..100, 10)
            .await?
            .is_none()
    );
    // A page of the flags: the second alone, with the count of all.
    let (page, total) = playground::advanced_shown(ctx, delivery, &caller, &query, 1..2, 1 << 20)
        .await?
        .ok_or("the page fits")?;
    let names: Vec<&str> = page.features.iter().map(|flag| flag.name.as_str()).collect();
    assert_eq!((names, total), (vec!["pro-only"], 3));
    let (past, _) = playground::advanced_shown(ctx, delivery, &caller, &query, 5..9, 1 << 20)
        .await?
        .ok_or("an empty page fits")?;
    assert!(past.features.is_empty());
    let production_only = common::token(playground::ADVANCED, Some(&["production"]));
    let refused = playground::advanced_shown(ctx, delivery, &production_only, &query, 0..100, 1 << 20).await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    let nowhere = PlaygroundQuery {
        environments: Vec::new(),
        ..query
    };
    let refused = playground::advanced_shown(ctx, delivery, &caller, &nowhere, 0..100, 1 << 20).await;
    assert_eq!(path(refused), "/environments");
    Ok(())
}

#[tokio::test]
async fn each_environment_is_compiled_once_per_revision() -> Outcome {
    let world = World::new()?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    common::demo_flags(&world)?;
    assert_eq!(delivery.compiled_environments(), 0);
    let names = ["development", "nowhere", "development", "elsewhere"].map(str::to_owned);
    let compiled = engines::compile(ctx, delivery, &ProjectScope::All, &names).await?;
    assert_eq!(compiled.len(), 4);
    // A repeated name shares one compilation; every unknown environment shares another.
    assert!(Arc::ptr_eq(&compiled[0], &compiled[2]));
    assert!(Arc::ptr_eq(&compiled[1], &compiled[3]));
    assert_eq!(delivery.compiled_environments(), 2);
    let development = &compiled[0];
    assert_eq!((development.len(), development.is_empty()), (3, false));
    let order: Vec<&str> = development
        .features()
        .map(|feature| feature.name.as_str())
        .collect();
    assert_eq!(order, ["everyone", "pro-only", "switched-off"]);
    assert_eq!(
        development.feature_at(1).map(|feature| feature.name.as_str()),
        Some("pro-only")
    );
    assert!(development.feature_at(3).is_none());
    assert!(
        development
            .engine
            .is_enabled("everyone", &flag_eval::Context::default())
    );
    assert!(compiled[1].features().all(|feature| !feature.enabled));

    // Until a write, the cache answers; after one, the environment is compiled again.
    let again = engines::compile(ctx, delivery, &ProjectScope::All, &names[..1]).await?;
    assert!(Arc::ptr_eq(&again[0], development));
    common::import_flags(
        &world,
        "development",
        json!({"features": [{"name": "later", "enabled": true}]}),
    )?;
    let after = engines::compile(ctx, delivery, &ProjectScope::All, &names[..1]).await?;
    assert!(!Arc::ptr_eq(&after[0], development));
    assert_eq!(after[0].len(), 4);
    let shop = engines::compile(
        ctx,
        delivery,
        &ProjectScope::Only(vec!["shop".into()]),
        &names[..1],
    )
    .await?;
    assert!(shop[0].is_empty());
    Ok(())
}

#[tokio::test]
async fn a_strategy_is_tried_before_it_is_saved_with_its_segments() -> Outcome {
    use flag_admin::catalogue::segments;
    use flag_admin::catalogue::strategies::types::StrategyRequest;
    let world = World::new()?;
    common::demo_flags(&world)?;
    let writer = common::admin(segments::CREATE);
    let segment = segments::create(
        &world.ctx,
        &writer,
        serde_json::from_value(json!({"name": "europe",
            "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}))?,
    )
    .await?;
    let request = |rollout: &str| -> Result<StrategyRequest, serde_json::Error> {
        serde_json::from_value(json!({"name": "flexibleRollout",
            "parameters": {"rollout": rollout, "stickiness": "userId", "groupId": "g"},
            "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
            "segments": [segment.id],
            "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}]}))
    };
    let place = (
        "default".to_owned(),
        "everyone".to_owned(),
        "development".to_owned(),
    );
    let caller = common::admin(playground::PREVIEW_STRATEGY);
    let context = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let on = playground::preview_strategy(
        &world.ctx,
        &caller,
        place.clone(),
        request("100")?,
        context(&[("userId", "7"), ("plan", "pro"), ("region", "eu")]),
    )
    .await?;
    assert!(on.enabled);
    assert_eq!(on.variant.as_deref(), Some("blue"));
    assert_eq!(on.segments, [("europe".to_owned(), true)]);
    let outside = playground::preview_strategy(
        &world.ctx,
        &caller,
        place.clone(),
        request("100")?,
        context(&[("userId", "7"), ("plan", "pro"), ("region", "us")]),
    )
    .await?;
    assert!(!outside.enabled);
    assert_eq!(outside.segments, [("europe".to_owned(), false)]);
    assert!(outside.constraints.iter().all(|(_, held)| *held));
    let none = playground::preview_strategy(
        &world.ctx,
        &caller,
        place.clone(),
        request("0")?,
        context(&[("userId", "7"), ("plan", "pro"), ("region", "eu")]),
    )
    .await?;
    assert!(!none.enabled, "a rollout of 0% turned it on");
    // The definition is checked as a save checks it; nothing is written either way.
    let bad: StrategyRequest = serde_json::from_value(json!({"name": "default",
        "constraints": [{"contextName": "version", "operator": "SEMVER_EQ", "value": "one"}]}))?;
    let refused = playground::preview_strategy(&world.ctx, &caller, place.clone(), bad, context(&[])).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    let production_only = common::token(playground::PREVIEW_STRATEGY, Some(&["production"]));
    let refused =
        playground::preview_strategy(&world.ctx, &production_only, place, request("100")?, context(&[]))
            .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    Ok(())
}

/// The moment just past: at millisecond precision, as a body gives it, after a pause, so that it
/// falls between one write and the next.
async fn moment() -> chrono::DateTime<chrono::Utc> {
    use chrono::SubsecRound as _;
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let at = chrono::Utc::now().trunc_subsecs(3);
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    at
}

#[tokio::test]
async fn a_past_moment_outside_the_history_is_refused_with_its_range() -> Outcome {
    let world = World::new()?;
    let caller = common::admin(playground::DEPRECATED);
    let past =
        json!({"environment": "development", "context": {"appName": "a"}, "at": "2001-01-01T00:00:00Z"});
    let refused = playground::deprecated(&world.ctx, world.ctx.delivery(), &caller, past).await;
    match &refused {
        Err(AdminError::Validation { message, .. }) => {
            assert!(
                message.contains("outside the history") && message.contains("until now"),
                "{message}"
            );
        }
        other => panic!("not refused: {other:?}"),
    }
    let future =
        json!({"environment": "development", "context": {"appName": "a"}, "at": "2999-01-01T00:00:00Z"});
    assert_eq!(
        path(playground::deprecated(&world.ctx, world.ctx.delivery(), &caller, future).await),
        "/at"
    );
    for at in [json!("yesterday"), json!("2026-01-01T00:00:00"), json!(5)] {
        let bad = json!({"environments": ["development"], "context": {"appName": "a"}, "at": at});
        assert_eq!(
            path(
                playground::advanced(
                    &world.ctx,
                    world.ctx.delivery(),
                    &common::admin(playground::ADVANCED),
                    bad
                )
                .await
            ),
            "/at"
        );
    }
    // An environment asked twice is answered twice, from one read.
    let twice = advanced(
        &world,
        &common::admin(playground::ADVANCED),
        json!({"environments": ["development", "development"], "context": {"appName": "a"},
               "at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)}),
    )
    .await?;
    assert!(twice["asOf"]["revision"].as_i64() >= Some(0));
    // Now answers, and says which revision did.
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    let answer = played(
        &world,
        &caller,
        json!({"environment": "development", "context": {"appName": "a"}, "at": now}),
    )
    .await?;
    assert_eq!(answer["asOf"]["at"], json!(now));
    assert!(answer["asOf"]["revision"].is_number());
    Ok(())
}

/// Flags whose children come before and after their parents in the playground's order, in
/// `development`: a parent that must give a variant, one that must be off, and one that is off.
/// The moment just after them.
async fn families(world: &World) -> Result<chrono::DateTime<chrono::Utc>, Box<dyn std::error::Error>> {
    let only_one = json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]});
    let colours = json!([{"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "userId"},
                         {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "userId"}]);
    let on = |name: &str| json!({"name": name, "enabled": true, "strategies": [{"name": "default"}]});
    common::import_flags(
        world,
        "development",
        json!({"version": 2, "features": [
            on("a-child"), {"name": "b-parent", "enabled": true, "strategies": [only_one]}, on("c-child"),
            on("d-plain"), on("e-child"), on("w-child"), {"name": "x-parent", "enabled": false},
            {"name": "z-parent", "enabled": true, "strategies": [{"name": "default"}], "variants": colours},
        ]}),
    )?;
    for (child, parent, enabled, variants) in [
        ("a-child", "z-parent", true, vec!["blue".to_owned()]),
        ("c-child", "b-parent", false, vec![]),
        ("e-child", "z-parent", true, vec![]),
        ("w-child", "x-parent", true, vec![]),
    ] {
        dependencies::add(
            &world.ctx,
            &common::admin(dependencies::ADD),
            "default".into(),
            child.into(),
            dependencies::types::AddDependency {
                feature: parent.into(),
                enabled: Some(enabled),
                variants,
            },
        )
        .await?;
    }
    Ok(moment().await)
}

#[tokio::test]
async fn a_past_environment_compiled_in_parts_answers_each_flag_as_the_whole_does() -> Outcome {
    let contexts: Vec<flag_eval::Context> = ["1", "2", "3", "4", "5"]
        .into_iter()
        .map(|user| flag_eval::Context {
            user_id: Some(user.into()),
            app_name: Some("web".into()),
            ..flag_eval::Context::default()
        })
        .collect();
    let mut satisfied = 0;
    for size in 1..=4 {
        let world = World::with(Settings {
            past_part: size,
            ..Settings::default()
        })?;
        let ctx = &world.ctx;
        let at = families(&world).await?;
        // Nothing was written since: the environment compiled whole now is the reference.
        let whole = engines::compile(
            ctx,
            ctx.delivery(),
            &ProjectScope::All,
            &["development".to_owned()],
        )
        .await?;
        let whole = whole.first().ok_or("no environment compiled")?;
        let names: Vec<String> = whole.features().map(|feature| feature.name.clone()).collect();
        assert_eq!(names.len(), 8, "{names:?}");
        let (_, mut parts) = engines::compile_parts_at(
            ctx,
            &ProjectScope::All,
            &["development".to_owned()],
            at,
            0..usize::MAX,
        )
        .await?;
        let parts = parts.pop().ok_or("no environment compiled")?;
        assert_eq!(parts.len(), names.len());
        let mut read = Vec::new();
        while let Some(part) = parts.next_part() {
            let part = part?;
            assert!(part.len() <= size);
            for index in 0..part.len() {
                let feature = part.feature_at(index).ok_or("a listed flag is not compiled")?;
                for context in &contexts {
                    let alone = part.engine.explain(&feature.name, context);
                    let together = whole.engine.explain(&feature.name, context);
                    assert_eq!(
                        alone, together,
                        "{} for user {:?} in parts of {size}",
                        feature.name, context.user_id
                    );
                    satisfied +=
                        usize::from(alone.is_some_and(|explained| !explained.has_unsatisfied_dependency));
                }
                read.push(feature.name.clone());
            }
        }
        assert_eq!(read, names, "parts of {size}");

        // A page of the console's playground compiles only its flags, with their parents, and
        // answers as the same page now.
        let mut context = PlaygroundContext::new("web");
        context.set("userId", "1,2,3");
        let mut query = PlaygroundQuery {
            environments: vec!["development".into(), "production".into()],
            projects: None,
            context,
            at: None,
        };
        let caller = common::admin(playground::ADVANCED);
        let now = playground::advanced_shown(ctx, ctx.delivery(), &caller, &query, 1..5, 1 << 22).await?;
        query.at = Some(flag_admin::runtime::domain::Timestamp::read(
            &at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        )?);
        let then = playground::advanced_shown(ctx, ctx.delivery(), &caller, &query, 1..5, 1 << 22).await?;
        let ((now, _), (then, total)) = (now.ok_or("no page now")?, then.ok_or("no page then")?);
        assert_eq!(total, names.len());
        assert_eq!(then.features.len(), 4);
        assert_eq!(
            format!("{:?}", then.features),
            format!("{:?}", now.features),
            "parts of {size}"
        );
    }
    // The dependencies were not all unsatisfied: the comparison saw parents answer both ways.
    assert!(satisfied > 4 * 5 * 2, "{satisfied}");
    Ok(())
}
