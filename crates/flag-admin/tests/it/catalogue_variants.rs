//! A flag's variants per environment: the batch write to several environments, and the
//! deprecated per-environment overwrite and JSON Patch, which only a flag that already has
//! variants takes; every write checked, normalised, and kept to the caller's environments.

use flag_admin::AdminError;
use flag_admin::catalogue::{events, variants};
use flag_admin::identity::auth::Access;
use serde_json::{Value, json};

use crate::catalogue_fixture::{body, environment_reader, environment_writer, json_of, place, seed_feature};
use crate::common::{self, Outcome, World};

/// The names and weights of a variants answer, in its order.
fn names_and_weights(answer: &Value) -> Vec<(String, i64)> {
    answer["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|variant| {
            (
                variant["name"].as_str().unwrap_or_default().to_owned(),
                variant["weight"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

fn weighted(name: &str, weight: i64) -> (String, i64) {
    (name.to_owned(), weight)
}

#[tokio::test]
async fn a_batch_writes_every_environment_named_and_echoes_the_request() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "colors").await?;
    let answer = variants::batch(
        &world.ctx,
        &environment_writer(),
        "default".into(),
        "colors".into(),
        json!({
            "variants": [
                {"name": "red", "weight": 1},
                {"name": "blue", "weight": "500", "stickiness": "userId", "payload": {"type": "json", "value": "{\"a\":1}"}},
                {"name": "Green", "weight": 100, "weightType": "fix"}
            ],
            "environments": ["development", "production", "production"]
        }),
    )
    .await?;
    let answer = json_of(&answer)?;
    assert_eq!(answer["version"], 1);
    // As sent, the weights shared and the defaults filled in.
    assert_eq!(
        names_and_weights(&answer),
        [
            weighted("red", 450),
            weighted("blue", 450),
            weighted("Green", 100)
        ]
    );
    assert_eq!(
        answer["variants"][0],
        json!({"weightType": "variable", "stickiness": "default", "name": "red", "weight": 450})
    );
    assert_eq!(answer["variants"][1]["stickiness"], "userId");
    for environment in ["development", "production"] {
        let stored = variants::get(&world.ctx, &environment_reader(), place("colors", environment)).await?;
        let names: Vec<String> = names_and_weights(&json_of(&stored)?)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["blue", "Green", "red"], "stored sorted by name");
    }
    // An environment named twice is written once.
    let written = events::of_feature(&world.ctx, &common::admin(events::OF_FEATURE), "colors".into()).await?;
    let updates = written
        .events
        .iter()
        .filter(|event| event.event_type == "feature-environment-variants-updated")
        .count();
    assert_eq!(updates, 2);
    Ok(())
}

#[tokio::test]
async fn a_batch_is_refused_whole_with_the_field_at_fault() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "f").await?;
    let variant = |name: &str, weight: Value| json!({"name": name, "weight": weight});
    let development = json!(["development"]);
    let cases = [
        (
            json!({"variants": [variant("a", json!(1500))], "environments": development}),
            "/variants/0/weight",
        ),
        (
            json!({"variants": [{"weight": 1}], "environments": development}),
            "/variants/0/name",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "color": "red"}], "environments": development}),
            "/variants/0/color",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "weightType": "most"}], "environments": development}),
            "/variants/0/weightType",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "xml", "value": "<a/>"}}], "environments": development}),
            "/variants/0/payload/type",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "number", "value": "ten"}}], "environments": development}),
            "/variants/0/payload/value",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "json", "value": "123"}}], "environments": development}),
            "/variants/0/payload/value",
        ),
        (
            json!({"variants": [variant("a", json!(1)), variant("a", json!(1))], "environments": development}),
            "/variants/1/name",
        ),
        (
            json!({"variants": [variant("a b", json!(1))], "environments": development}),
            "/variants/0/name",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 100, "weightType": "fix"}], "environments": development}),
            "/variants",
        ),
        (json!({"variants": [variant("a", json!(1))]}), "/environments"),
        (
            json!({"variants": [variant("a", json!(1))], "environments": []}),
            "/environments",
        ),
        (json!([]), "/"),
    ];
    for (request, expected) in cases {
        let refused = variants::batch(
            &world.ctx,
            &environment_writer(),
            "default".into(),
            "f".into(),
            request.clone(),
        )
        .await;
        assert!(
            matches!(&refused, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some(expected)),
            "{request} gave {refused:?}"
        );
    }
    // The flag, its project and every environment must exist; nothing is written otherwise.
    let ok = || json!({"variants": [{"name": "a", "weight": 1}], "environments": ["development"]});
    for (project, feature, request) in [
        ("other", "f", ok()),
        ("default", "missing", ok()),
        (
            "default",
            "f",
            json!({"variants": [{"name": "a", "weight": 1}], "environments": ["development", "staging"]}),
        ),
    ] {
        let refused = variants::batch(
            &world.ctx,
            &environment_writer(),
            project.into(),
            feature.into(),
            request,
        )
        .await;
        assert!(matches!(refused, Err(AdminError::NotFound(_))), "{refused:?}");
    }
    let stored = variants::get(&world.ctx, &environment_reader(), place("f", "development")).await?;
    assert!(names_and_weights(&json_of(&stored)?).is_empty());
    Ok(())
}

#[tokio::test]
async fn environment_variants_are_patched_and_overwritten_as_unleash_does() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "colors").await?;
    let writer = environment_writer();
    let add_blue = || {
        body::<json_patch::Patch>(json!([{"op": "add", "path": "/0",
            "value": {"name": "blue", "weightType": "variable", "weight": 1000, "stickiness": "default"}}]))
    };

    // Environment variants are deprecated: a flag without any takes none this way.
    let refused = variants::patch(&world.ctx, &writer, place("colors", "development"), add_blue()?).await;
    assert!(
        matches!(&refused, Err(AdminError::InvalidOperation(message))
            if message == "Environment variants deprecated for feature: colors. Use strategy variants instead."),
        "{refused:?}"
    );
    let refused = variants::overwrite(
        &world.ctx,
        &writer,
        place("colors", "development"),
        json!([{"name": "blue", "weight": 1000}]),
    )
    .await;
    assert!(
        matches!(refused, Err(AdminError::InvalidOperation(_))),
        "{refused:?}"
    );

    // Once it has some, in any environment, the patches apply.
    variants::batch(
        &world.ctx,
        &writer,
        "default".into(),
        "colors".into(),
        json!({"environments": ["development"], "variants": [{"name": "red", "weight": 1000}]}),
    )
    .await?;
    let answer =
        json_of(&variants::patch(&world.ctx, &writer, place("colors", "development"), add_blue()?).await?)?;
    assert_eq!(answer["version"], 1);
    assert_eq!(
        names_and_weights(&answer),
        [weighted("blue", 500), weighted("red", 500)],
        "sorted by name, the weight shared"
    );
    let stored =
        json_of(&variants::get(&world.ctx, &environment_reader(), place("colors", "development")).await?)?;
    assert_eq!(stored, answer);
    let answer = json_of(
        &variants::patch(
            &world.ctx,
            &writer,
            place("colors", "development"),
            body(json!([{"op": "replace", "path": "/1/weightType", "value": "fix"},
                        {"op": "replace", "path": "/1/weight", "value": 300}]))?,
        )
        .await?,
    )?;
    assert_eq!(
        names_and_weights(&answer),
        [weighted("blue", 700), weighted("red", 300)]
    );
    // Another environment of the same flag takes them too.
    let answer = json_of(
        &variants::overwrite(
            &world.ctx,
            &writer,
            place("colors", "production"),
            json!([{"name": "green", "weight": 1, "payload": {"type": "string", "value": "#0f0"}}]),
        )
        .await?,
    )?;
    assert_eq!(names_and_weights(&answer), [weighted("green", 1000)]);
    assert_eq!(answer["variants"][0]["stickiness"], "default");

    // Refusals: a patch that does not apply, a result that breaks a rule, a body of the wrong
    // shape, an unknown environment or flag.
    let refused = variants::patch(
        &world.ctx,
        &writer,
        place("colors", "development"),
        body(json!([{"op": "replace", "path": "/9/name", "value": "x"}]))?,
    )
    .await;
    assert!(
        matches!(&refused, Err(AdminError::Validation { message, .. }) if message.starts_with("Could not apply provided patch")),
        "{refused:?}"
    );
    let refused = variants::patch(
        &world.ctx,
        &writer,
        place("colors", "development"),
        body(json!([{"op": "replace", "path": "/0/weightType", "value": "fix"},
                    {"op": "replace", "path": "/0/weight", "value": 900},
                    {"op": "replace", "path": "/1/weight", "value": 900}]))?,
    )
    .await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    for request in [
        json!({"name": "x"}),
        json!([{"weight": 5}]),
        json!([{"name": "x", "weight": 5, "color": 1}]),
    ] {
        let refused = variants::overwrite(
            &world.ctx,
            &writer,
            place("colors", "production"),
            request.clone(),
        )
        .await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{request} gave {refused:?}"
        );
    }
    for (feature, environment) in [("colors", "staging"), ("nope", "development")] {
        let refused = variants::overwrite(&world.ctx, &writer, place(feature, environment), json!([])).await;
        assert!(matches!(refused, Err(AdminError::NotFound(_))), "{refused:?}");
        let refused = variants::get(&world.ctx, &environment_reader(), place(feature, environment)).await;
        assert!(matches!(refused, Err(AdminError::NotFound(_))), "{refused:?}");
    }

    // Nothing refused was written.
    let stored =
        json_of(&variants::get(&world.ctx, &environment_reader(), place("colors", "development")).await?)?;
    assert_eq!(
        names_and_weights(&stored),
        [weighted("blue", 700), weighted("red", 300)]
    );
    Ok(())
}

#[tokio::test]
async fn variants_are_read_and_written_only_in_the_callers_environments() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "f").await?;
    let production = |access: Access| common::token(access, Some(&["production"]));
    let both =
        json!({"variants": [{"name": "a", "weight": 1}], "environments": ["production", "development"]});
    let refused = variants::batch(
        &world.ctx,
        &production(variants::BATCH),
        "default".into(),
        "f".into(),
        both,
    )
    .await;
    assert!(
        matches!(&refused, Err(AdminError::NoAccess(message))
            if message.contains("UPDATE_FEATURE_ENVIRONMENT_VARIANTS") && message.contains("\"development\"")),
        "{refused:?}"
    );
    variants::batch(
        &world.ctx,
        &production(variants::BATCH),
        "default".into(),
        "f".into(),
        json!({"variants": [{"name": "a", "weight": 1}], "environments": ["production"]}),
    )
    .await?;
    let refused = variants::overwrite(
        &world.ctx,
        &production(variants::OVERWRITE),
        place("f", "development"),
        json!([]),
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    let refused = variants::patch(
        &world.ctx,
        &production(variants::PATCH),
        place("f", "development"),
        body(json!([]))?,
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    let reader = production(variants::GET);
    let refused = variants::get(&world.ctx, &reader, place("f", "development")).await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    let stored = json_of(&variants::get(&world.ctx, &reader, place("f", "production")).await?)?;
    assert_eq!(names_and_weights(&stored), [weighted("a", 1000)]);
    Ok(())
}

#[tokio::test]
async fn a_typed_batch_is_checked_and_answered_as_a_body_is() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "typed").await?;
    let sent: Vec<flag_eval::Variant> = body(json!([
        {"name": "red", "weight": 1},
        {"name": "Green", "weight": 100, "weightType": "fix"}
    ]))?;
    let push = variants::types::VariantsPush::new(&sent, vec!["development".into(), "production".into()])?;
    assert_eq!(push.environments(), ["development", "production"]);
    let answer = json_of(
        &variants::batch_push(
            &world.ctx,
            &environment_writer(),
            "default".into(),
            "typed".into(),
            push,
        )
        .await?,
    )?;
    assert_eq!(
        names_and_weights(&answer),
        [weighted("red", 900), weighted("Green", 100)]
    );
    for environment in ["development", "production"] {
        let stored =
            json_of(&variants::get(&world.ctx, &environment_reader(), place("typed", environment)).await?)?;
        assert_eq!(
            names_and_weights(&stored),
            [weighted("Green", 100), weighted("red", 900)]
        );
    }
    // The same rules as a body's: some environment, and variants that can be stored.
    let nowhere = variants::types::VariantsPush::new(&sent, Vec::new());
    assert!(
        matches!(&nowhere, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/environments")),
        "{nowhere:?}"
    );
    let twice: Vec<flag_eval::Variant> =
        body(json!([{"name": "a", "weight": 1}, {"name": "a", "weight": 1}]))?;
    let push = variants::types::VariantsPush::new(&twice, vec!["development".into()])?;
    let refused = variants::batch_push(
        &world.ctx,
        &environment_writer(),
        "default".into(),
        "typed".into(),
        push,
    )
    .await;
    assert!(
        matches!(&refused, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/variants/1/name")),
        "{refused:?}"
    );
    let production = common::token(variants::BATCH, Some(&["production"]));
    let push = variants::types::VariantsPush::new(&sent, vec!["development".into()])?;
    let refused = variants::batch_push(&world.ctx, &production, "default".into(), "typed".into(), push).await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    Ok(())
}
