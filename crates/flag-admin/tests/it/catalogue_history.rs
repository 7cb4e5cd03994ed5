//! The past: a flag read as it was at a moment, and what changed between two
//! (`catalogue::history`, and `features::get` with `at`), on the backend under test.

use flag_admin::AdminError;
use flag_admin::catalogue::features::types::FeatureQuery;
use flag_admin::catalogue::history::types::ChangesQuery;
use flag_admin::catalogue::{archive, features, history, strategies};
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

fn body<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(value)
}

/// The moment just past, at millisecond precision, between one write and the next.
async fn moment() -> String {
    use chrono::SubsecRound as _;
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let at = chrono::Utc::now().trunc_subsecs(3);
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

async fn read_at(world: &World, name: &str, at: &str) -> Result<Value, Box<dyn std::error::Error>> {
    let read = features::get(
        &world.ctx,
        &common::admin(features::GET),
        ("default".into(), name.into()),
        FeatureQuery {
            variant_environments: Some("true".into()),
            at: Some(at.into()),
        },
    )
    .await?;
    Ok(common::json(&read)?)
}

fn enabled_in(flag: &Value, environment: &str) -> Option<bool> {
    flag["environments"]
        .as_array()?
        .iter()
        .find(|entry| entry["name"] == environment)?["enabled"]
        .as_bool()
}

#[tokio::test]
async fn a_flag_reads_as_it_was_and_the_changes_between_two_moments_are_listed() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let admin = common::admin;
    let before_it = moment().await;
    features::create(
        ctx,
        &admin(features::CREATE),
        "default".into(),
        body(json!({"name": "f", "description": "first"}))?,
    )
    .await?;
    let created = moment().await;
    let place = ("default".to_owned(), "f".to_owned(), "production".to_owned());
    strategies::add(
        ctx,
        &admin(strategies::ADD),
        place.clone(),
        body(json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}))?,
    )
    .await?;
    features::switch_with(ctx, &admin(features::SWITCH_WITH), place, true, body(json!({}))?).await?;
    let switched = moment().await;
    archive::archive_many(
        ctx,
        &admin(archive::ARCHIVE_MANY),
        "default".into(),
        body(json!({"features": ["f"]}))?,
    )
    .await?;
    let archived = moment().await;

    // Before it existed, it is not found; then, off with no strategy; then on with one.
    let missing = features::get(
        ctx,
        &admin(features::GET),
        ("default".into(), "f".into()),
        FeatureQuery {
            at: Some(before_it.clone()),
            ..FeatureQuery::default()
        },
    )
    .await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let then = read_at(&world, "f", &created).await?;
    assert_eq!(enabled_in(&then, "production"), Some(false));
    assert_eq!(then["environments"][1]["strategies"], json!([]));
    assert_eq!(then["description"], "first");
    assert_eq!(then["asOf"]["at"], json!(created));
    let on = read_at(&world, "f", &switched).await?;
    assert_eq!(enabled_in(&on, "production"), Some(true));
    let production = on["environments"]
        .as_array()
        .and_then(|environments| environments.iter().find(|entry| entry["name"] == "production"))
        .ok_or("no production")?;
    assert_eq!(
        production["strategies"][0]["constraints"][0]["values"],
        json!(["1"])
    );
    assert_eq!(on["archived"], false);
    // Archived since, it is found as it was, and archived when asked after.
    assert_eq!(read_at(&world, "f", &archived).await?["archived"], true);
    // In another project, it is not found.
    let elsewhere = features::get(
        ctx,
        &admin(features::GET),
        ("other".into(), "f".into()),
        FeatureQuery {
            at: Some(switched.clone()),
            ..FeatureQuery::default()
        },
    )
    .await;
    assert!(matches!(elsewhere, Err(AdminError::NotFound(_))), "{elsewhere:?}");

    // Between creation and the switch, production changed: on, with a strategy, by two events.
    let changes = history::changes(
        ctx,
        &admin(history::CHANGES),
        ChangesQuery {
            environment: Some("production".into()),
            from: Some(created.clone()),
            to: Some(switched.clone()),
        },
    )
    .await?;
    assert_eq!(changes.features.len(), 1);
    let changed = &changes.features[0];
    assert_eq!((changed.name.as_str(), changed.change.as_str()), ("f", "changed"));
    assert_eq!(
        changed.before.as_ref().map(|before| before["enabled"].clone()),
        Some(json!(false))
    );
    assert_eq!(
        changed.after.as_ref().map(|after| after["enabled"].clone()),
        Some(json!(true))
    );
    let kinds: Vec<&str> = changed
        .events
        .iter()
        .map(|event| event.event_type.as_str())
        .collect();
    assert_eq!(kinds, ["feature-strategy-add", "feature-environment-enabled"]);
    assert!(changes.from.revision < changes.to.revision);
    // Over the whole span it was created, and archived by the end.
    let whole = history::changes(
        ctx,
        &admin(history::CHANGES),
        ChangesQuery {
            environment: Some("production".into()),
            from: Some(before_it.clone()),
            to: None,
        },
    )
    .await?;
    assert_eq!(
        whole.features.first().map(|changed| changed.change.as_str()),
        Some("created")
    );
    let archiving = history::changes(
        ctx,
        &admin(history::CHANGES),
        ChangesQuery {
            environment: Some("production".into()),
            from: Some(switched),
            to: Some(archived),
        },
    )
    .await?;
    assert_eq!(
        archiving.features.first().map(|changed| changed.change.as_str()),
        Some("archived")
    );
    Ok(())
}

#[tokio::test]
async fn questions_about_the_past_that_cannot_be_answered_are_refused() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let ask = |environment: Option<&str>, from: Option<&str>, to: Option<&str>| ChangesQuery {
        environment: environment.map(str::to_owned),
        from: from.map(str::to_owned),
        to: to.map(str::to_owned),
    };
    let now = moment().await;
    for (query, path) in [
        (ask(None, Some(&now), None), "/environment"),
        (ask(Some("production"), None, None), "/from"),
        (ask(Some("production"), Some("yesterday"), None), "/from"),
        (
            ask(Some("production"), Some("2020-01-01T00:00:00"), None),
            "/from",
        ),
        (
            ask(Some("production"), Some("2001-01-01T00:00:00Z"), None),
            "/from",
        ),
        (
            ask(Some("production"), Some(&now), Some("2999-01-01T00:00:00Z")),
            "/to",
        ),
        (
            ask(Some("production"), Some(&now), Some("2001-01-01T00:00:00Z")),
            "/to",
        ),
    ] {
        match history::changes(ctx, &common::admin(history::CHANGES), query).await {
            Err(AdminError::Validation { details, .. }) => {
                assert_eq!(
                    details.first().and_then(|detail| detail.path.clone()).as_deref(),
                    Some(path)
                );
            }
            other => panic!("{path}: not refused: {other:?}"),
        }
    }
    // The one check every question about the past passes.
    let mut conn = world.store().connection()?;
    let now = chrono::Utc::now();
    let answered = history::revision_at(&mut conn, now, now)?;
    assert!(answered.is_ok(), "{answered:?}");
    let before = history::revision_at(&mut conn, now - chrono::TimeDelta::days(3650), now)?;
    assert!(before.is_err_and(|message| message.contains("outside the history")));
    drop(conn);
    features::create(
        ctx,
        &common::admin(features::CREATE),
        "default".into(),
        body(json!({"name": "g"}))?,
    )
    .await?;
    for at in ["2001-01-01T00:00:00Z", "2999-01-01T00:00:00Z", "not a time"] {
        let refused = features::get(
            ctx,
            &common::admin(features::GET),
            ("default".into(), "g".into()),
            FeatureQuery {
                at: Some(at.into()),
                ..FeatureQuery::default()
            },
        )
        .await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{at}: {refused:?}"
        );
    }
    Ok(())
}
