//! The evaluation reads return exactly the flag-eval input the seeded data describes.

use std::collections::BTreeMap;

use flag_eval::{ClientFeatures, Constraint, Dependency, Engine, Feature, Segment, Strategy, Variant};
use flag_store::models::{NewSegment, ProjectRow};
use flag_store::queries::evaluation::{ProjectScope, client_features, playground_input};
use flag_store::queries::strategies::StrategyInput;
use flag_store::{StoreError, queries};

use crate::common;

fn constraint(context_name: &str, values: &[&str]) -> Constraint {
    Constraint {
        context_name: context_name.into(),
        operator: "IN".into(),
        values: values.iter().map(|value| (*value).to_owned()).collect(),
        ..Constraint::default()
    }
}

#[test]
fn playground_input_matches_the_seeded_data() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let now = common::now();

    // A second project with only development.
    queries::projects::create(
        &mut conn,
        &ProjectRow {
            id: "other".into(),
            name: "Other".into(),
            description: None,
            created_at: now,
        },
        Some(&["development".to_owned()]),
        &flag_store::models::Actor::system(),
    )?;
    let segment = queries::segments::create(
        &mut conn,
        &NewSegment {
            name: "beta".into(),
            description: None,
            project_id: None,
            constraints: serde_json::to_string(&[constraint("plan", &["pro"])])?,
            created_by: Some("test".into()),
            created_at: now,
        },
        &flag_store::models::Actor::system(),
    )?;

    common::feature(&mut conn, "parent")?;
    common::feature(&mut conn, "child")?;
    let mut other = common::feature(&mut conn, "elsewhere-template")?;
    other.name = "elsewhere".into();
    other.project_id = "other".into();
    queries::features::create(&mut conn, &other, &flag_store::models::Actor::system())?;

    let rollout = queries::strategies::add(
        &mut conn,
        "default",
        "parent",
        "production",
        &StrategyInput {
            name: "flexibleRollout".into(),
            title: Some("half".into()),
            sort_order: Some(1),
            parameters: BTreeMap::from([
                ("rollout".into(), "50".into()),
                ("stickiness".into(), "userId".into()),
                ("groupId".into(), "parent".into()),
            ]),
            constraints: vec![constraint("region", &["eu"])],
            segments: vec![segment.id],
            variants: vec![Variant {
                name: "s".into(),
                weight: 1000,
                ..Variant::default()
            }],
            ..StrategyInput::default()
        },
        &flag_store::models::Actor::system(),
        now,
    )?;
    let disabled = queries::strategies::add(
        &mut conn,
        "default",
        "parent",
        "production",
        &StrategyInput {
            name: "default".into(),
            disabled: true,
            sort_order: Some(0),
            ..StrategyInput::default()
        },
        &flag_store::models::Actor::system(),
        now,
    )?;
    let variants = vec![
        Variant {
            name: "b".into(),
            weight: 500,
            ..Variant::default()
        },
        Variant {
            name: "a".into(),
            weight: 500,
            ..Variant::default()
        },
    ];
    queries::variants::set_variants_batch(
        &mut conn,
        "default",
        "child",
        &["production".into()],
        &variants,
        &flag_store::models::Actor::system(),
        now,
    )?;
    queries::dependencies::set(
        &mut conn,
        "default",
        "child",
        "parent",
        true,
        &["s".into()],
        &flag_store::models::Actor::system(),
        now,
    )?;

    // The parent has an active strategy by now; the child has none, so switching it on adds
    // the default rollout, as Unleash does.
    queries::features::set_enabled(
        &mut conn,
        "default",
        "parent",
        "production",
        true,
        &flag_store::models::Actor::system(),
        now,
    )?;
    queries::features::set_enabled(
        &mut conn,
        "default",
        "child",
        "production",
        true,
        &flag_store::models::Actor::system(),
        now,
    )?;
    let added = queries::strategies::list(&mut conn, "child", "production")?;
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].name, "flexibleRollout");
    assert_eq!(
        added[0].parameters,
        flag_eval::Parameters::from(BTreeMap::from([
            ("groupId".to_owned(), "child".to_owned()),
            ("rollout".to_owned(), "100".to_owned()),
            ("stickiness".to_owned(), "default".to_owned()),
        ]))
    );
    let actual = playground_input(&mut conn, &ProjectScope::All, "production")?;

    let feature = |name: &str, project: &str| Feature {
        name: name.into(),
        feature_type: Some("release".into()),
        project: Some(project.into()),
        stale: Some(false),
        impression_data: Some(false),
        ..Feature::default()
    };
    let strategy = |added: &Strategy| Strategy {
        id: added.id.clone(),
        ..added.clone()
    };
    let expected = ClientFeatures {
        version: 2,
        features: vec![
            Feature {
                enabled: true,
                strategies: added.clone(),
                variants: vec![variants[1].clone(), variants[0].clone()],
                dependencies: vec![Dependency {
                    feature: "parent".into(),
                    enabled: Some(true),
                    variants: Some(vec!["s".into()]),
                }],
                ..feature("child", "default")
            },
            feature("elsewhere-template", "default"),
            Feature {
                enabled: true,
                strategies: vec![strategy(&disabled), strategy(&rollout)],
                ..feature("parent", "default")
            },
            // The project lacks production: off, no strategies, no variants.
            feature("elsewhere", "other"),
        ],
        segments: vec![Segment {
            id: i64::from(segment.id),
            name: "beta".into(),
            constraints: vec![constraint("plan", &["pro"])],
        }],
    };
    assert_eq!(actual, expected);
    assert_eq!(rollout.segments, vec![i64::from(segment.id)]);
    assert_eq!(rollout.title.as_deref(), Some("half"));

    // SDKs never see disabled strategies.
    let sdk = client_features(
        &mut conn,
        &ProjectScope::Only(vec!["default".into()]),
        "production",
    )?;
    assert_eq!(sdk.features.len(), 3);
    let parent = sdk.features.iter().find(|f| f.name == "parent").ok_or("parent")?;
    assert_eq!(parent.strategies, vec![strategy(&rollout)]);

    // The document compiles cleanly and evaluates.
    let (engine, warnings) = Engine::compile(&actual);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(engine.len(), 4);

    let none = playground_input(&mut conn, &ProjectScope::Only(Vec::new()), "production")?;
    assert!(none.features.is_empty());
    Ok(())
}

#[test]
fn variants_batch_is_all_or_nothing() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    common::feature(&mut conn, "f")?;
    let variants = vec![Variant {
        name: "v".into(),
        weight: 1000,
        ..Variant::default()
    }];
    let environments = ["production".to_owned(), "staging".to_owned()];
    let error = queries::variants::set_variants_batch(
        &mut conn,
        "default",
        "f",
        &environments,
        &variants,
        &flag_store::models::Actor::system(),
        common::now(),
    )
    .err();
    assert!(
        matches!(&error, Some(StoreError::NotFound { entity: "feature environment", key }) if key == "f in staging"),
        "{error:?}"
    );
    assert!(queries::variants::get(&mut conn, "default", "f", "production")?.is_empty());

    // A feature outside the project in the path is not found, and nothing is written.
    let error = queries::variants::set_variants_batch(
        &mut conn,
        "other",
        "f",
        &environments[..1],
        &variants,
        &flag_store::models::Actor::system(),
        common::now(),
    )
    .err();
    assert!(
        matches!(
            error,
            Some(StoreError::NotFound {
                entity: "feature",
                ..
            })
        ),
        "{error:?}"
    );

    // An environment listed twice is written once.
    let twice = ["production".to_owned(), "production".to_owned()];
    queries::variants::set_variants_batch(
        &mut conn,
        "default",
        "f",
        &twice,
        &variants,
        &flag_store::models::Actor::system(),
        common::now(),
    )?;
    assert_eq!(
        queries::events::for_feature(&mut conn, "f", "production")?.len(),
        1
    );
    Ok(())
}

#[test]
fn importing_nameless_segments_into_a_second_environment_reuses_them()
-> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let document = ClientFeatures {
        version: 2,
        features: vec![Feature {
            name: "f".into(),
            enabled: true,
            strategies: vec![Strategy {
                name: "default".into(),
                segments: vec![7],
                ..Strategy::default()
            }],
            ..Feature::default()
        }],
        segments: vec![Segment {
            id: 7,
            constraints: vec![constraint("region", &["eu"])],
            ..Segment::default()
        }],
    };
    for environment in ["development", "production"] {
        queries::import::client_features(
            &mut conn,
            "default",
            environment,
            &document,
            &flag_store::models::Actor::system(),
            common::now(),
        )?;
    }
    let segments = queries::segments::list(&mut conn)?;
    assert_eq!(
        segments
            .iter()
            .map(|segment| segment.name.as_str())
            .collect::<Vec<_>>(),
        ["segment-7"]
    );
    let production = playground_input(&mut conn, &ProjectScope::All, "production")?;
    assert_eq!(
        production.features[0].strategies[0].segments,
        [i64::from(segments[0].id)]
    );
    Ok(())
}

/// Strategies added to several flags in interleaved order come back with their own flag, each
/// list in evaluation order, and none lost: the read gathers them from rows ordered by flag.
#[test]
fn strategies_of_many_flags_come_back_with_their_flag_in_order() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let now = common::now();
    for name in ["a", "b", "c", "d"] {
        common::feature(&mut conn, name)?;
    }
    // (flag, title, sort order, disabled), added in this order.
    let added = [
        ("c", "c-late", 5, false),
        ("a", "a-first", 0, false),
        ("c", "c-early", 1, false),
        ("b", "b-only", 0, true),
        ("a", "a-second", 1, false),
        ("c", "c-middle", 3, true),
        ("a", "a-third", 2, false),
    ];
    for (flag, title, sort_order, disabled) in added {
        queries::strategies::add(
            &mut conn,
            "default",
            flag,
            "development",
            &StrategyInput {
                name: "default".into(),
                title: Some(title.into()),
                sort_order: Some(sort_order),
                disabled,
                ..StrategyInput::default()
            },
            &flag_store::models::Actor::system(),
            now,
        )?;
    }
    let titles = |document: &ClientFeatures, flag: &str| -> Vec<String> {
        document
            .features
            .iter()
            .find(|feature| feature.name == flag)
            .map(|feature| {
                feature
                    .strategies
                    .iter()
                    .filter_map(|strategy| strategy.title.clone())
                    .collect()
            })
            .unwrap_or_default()
    };
    let playground = playground_input(&mut conn, &ProjectScope::All, "development")?;
    assert_eq!(
        playground
            .features
            .iter()
            .map(|feature| feature.name.as_str())
            .collect::<Vec<_>>(),
        ["a", "b", "c", "d"]
    );
    assert_eq!(titles(&playground, "a"), ["a-first", "a-second", "a-third"]);
    assert_eq!(titles(&playground, "b"), ["b-only"]);
    assert_eq!(titles(&playground, "c"), ["c-early", "c-middle", "c-late"]);
    assert!(titles(&playground, "d").is_empty());

    // SDKs get no disabled strategy; the others keep their flag and order.
    let sdk = client_features(&mut conn, &ProjectScope::All, "development")?;
    assert_eq!(titles(&sdk, "a"), ["a-first", "a-second", "a-third"]);
    assert!(titles(&sdk, "b").is_empty());
    assert_eq!(titles(&sdk, "c"), ["c-early", "c-late"]);
    Ok(())
}
