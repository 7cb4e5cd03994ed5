//! The playground's view of a flag (UNLEASH-BEHAVIOUR.md §2.4–2.7), and the cases where
//! Yggdrasil's answer is wrong and ours is not.

use flag_eval::{
    ClientFeatures, Context, CurrentTime, Engine, EvaluationStatus, PlaygroundVariant, Tristate,
    ValidationError,
};
use serde_json::{Value, json};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn engine(features: Value, segments: Value) -> Result<Engine, serde_json::Error> {
    let document: ClientFeatures =
        serde_json::from_value(json!({"version": 2, "features": features, "segments": segments}))?;
    Ok(Engine::compile(&document).0)
}

fn flag(name: &str, enabled: bool, strategies: Value) -> Value {
    json!({"name": name, "enabled": enabled, "project": "default", "strategies": strategies})
}

#[test]
fn disabled_strategy_is_unevaluated_and_makes_the_result_unknown() -> TestResult {
    let engine = engine(
        json!([flag(
            "f",
            true,
            json!([
                {"name": "default", "id": "s1", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["x"]}]},
                {"name": "default", "id": "s2", "disabled": true}
            ])
        )]),
        json!([]),
    )?;
    let explanation = engine.explain("f", &Context::for_user("1")).ok_or("missing")?;
    assert_eq!(explanation.strategies[0].result.enabled, Tristate::False);
    assert_eq!(
        explanation.strategies[0].result.evaluation_status,
        EvaluationStatus::Complete
    );
    assert_eq!(explanation.strategies[1].result.enabled, Tristate::Unknown);
    assert_eq!(
        explanation.strategies[1].result.evaluation_status,
        EvaluationStatus::Unevaluated
    );
    assert_eq!(explanation.result, Tristate::Unknown);
    assert!(!explanation.is_enabled);
    assert_eq!(explanation.variant, PlaygroundVariant::Disabled);
    // An SDK never receives the disabled strategy, and the other one is false.
    assert!(!engine.is_enabled("f", &Context::for_user("1")));

    let json = serde_json::to_value(&explanation)?;
    assert_eq!(json["result"], json!("unknown"));
    assert_eq!(
        json["strategies"][1]["result"],
        json!({"enabled": "unknown", "evaluationStatus": "unevaluated"})
    );
    assert_eq!(
        json["variant"],
        json!({"name": "disabled", "enabled": false, "feature_enabled": false})
    );
    Ok(())
}

#[test]
fn custom_and_hostname_strategies_are_incomplete() -> TestResult {
    let engine = engine(
        json!([flag(
            "f",
            true,
            json!([
                {"name": "myCustom", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]},
                {"name": "applicationHostname", "parameters": {"hostNames": "a"},
                 "constraints": [{"contextName": "userId", "operator": "IN", "values": ["2"]}]}
            ])
        )]),
        json!([]),
    )?;
    let explanation = engine.explain("f", &Context::for_user("1")).ok_or("missing")?;
    assert_eq!(explanation.strategies[0].result.enabled, Tristate::Unknown);
    assert_eq!(
        explanation.strategies[0].result.evaluation_status,
        EvaluationStatus::Incomplete
    );
    // Failing constraints prove the strategy false even though it cannot be run.
    assert_eq!(explanation.strategies[1].result.enabled, Tristate::False);
    assert_eq!(
        explanation.strategies[1].result.evaluation_status,
        EvaluationStatus::Incomplete
    );
    assert_eq!(explanation.result, Tristate::Unknown);
    assert!(!explanation.is_complete());
    assert!(!engine.is_enabled("f", &Context::for_user("1")));
    Ok(())
}

#[test]
fn a_complete_true_strategy_wins_over_unknown_ones() -> TestResult {
    let engine = engine(
        json!([flag(
            "f",
            true,
            json!([
                {"name": "myCustom"},
                {"name": "userWithId", "parameters": {"userIds": "1, 2"}}
            ])
        )]),
        json!([]),
    )?;
    let explanation = engine.explain("f", &Context::for_user("2")).ok_or("missing")?;
    assert_eq!(explanation.result, Tristate::True);
    assert!(explanation.is_enabled);
    assert_eq!(explanation.variant, PlaygroundVariant::None);
    let json = serde_json::to_value(explanation.variant)?;
    assert_eq!(
        json,
        json!({"feature_enabled": true, "featureEnabled": true, "name": "disabled", "enabled": false})
    );
    Ok(())
}

#[test]
fn environment_off_keeps_strategy_results_but_is_not_enabled() -> TestResult {
    let engine = engine(json!([flag("f", false, json!([{"name": "default"}]))]), json!([]))?;
    let explanation = engine.explain("f", &Context::default()).ok_or("missing")?;
    assert_eq!(explanation.strategies[0].result.enabled, Tristate::True);
    assert_eq!(explanation.result, Tristate::True);
    assert!(!explanation.is_enabled_in_current_environment);
    assert!(!explanation.is_enabled);
    assert_eq!(explanation.variant, PlaygroundVariant::Disabled);

    let no_strategies = engine_with_variants(false)?;
    let explanation = no_strategies
        .explain("v", &Context::for_user("1"))
        .ok_or("missing")?;
    assert_eq!(explanation.result, Tristate::False);
    Ok(())
}

fn engine_with_variants(enabled: bool) -> Result<Engine, serde_json::Error> {
    engine(
        json!([{"name": "v", "enabled": enabled, "strategies": [],
                "variants": [{"name": "blue", "weight": 1000, "payload": {"type": "string", "value": "b"}}]}]),
        json!([]),
    )
}

#[test]
fn feature_and_strategy_variants_have_their_own_shapes() -> TestResult {
    let explanation_engine = engine_with_variants(true)?;
    let explanation = explanation_engine
        .explain("v", &Context::for_user("1"))
        .ok_or("missing")?;
    assert_eq!(explanation.result, Tristate::True);
    assert_eq!(
        serde_json::to_value(explanation.variant)?,
        json!({"name": "blue", "payload": {"type": "string", "value": "b"}, "enabled": true,
               "feature_enabled": true, "featureEnabled": true})
    );

    let engine = engine(
        json!([{"name": "s", "enabled": true, "strategies": [
            {"name": "flexibleRollout", "parameters": {"rollout": "0", "groupId": "s"},
             "variants": [{"name": "never", "weight": 1000}]},
            {"name": "flexibleRollout", "parameters": {"rollout": "100", "groupId": "s"},
             "variants": [{"name": "red", "weight": 1000}]}
        ], "variants": [{"name": "flag-level", "weight": 1000}]}]),
        json!([]),
    )?;
    let explanation = engine.explain("s", &Context::for_user("1")).ok_or("missing")?;
    // A false strategy still shows the variant it would pick.
    assert_eq!(explanation.strategies[0].result.enabled, Tristate::False);
    assert_eq!(
        explanation.strategies[0].result.variant.map(|v| v.name),
        Some("never")
    );
    assert_eq!(
        explanation.strategies[1].result.variant.map(|v| v.name),
        Some("red")
    );
    assert_eq!(
        serde_json::to_value(explanation.variant)?,
        json!({"name": "red", "enabled": true, "feature_enabled": true})
    );
    assert_eq!(explanation.variants[0].name, "red");
    assert_eq!(engine.variant("s", &Context::for_user("1")).name, "red");
    Ok(())
}

#[test]
fn constraints_and_segments_report_their_results() -> TestResult {
    let engine = engine(
        json!([flag(
            "f",
            true,
            json!([{"name": "default", "segments": [1, 99],
            "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"], "inverted": true}]}])
        )]),
        json!([{"id": 1, "name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}]),
    )?;
    let explanation = engine.explain("f", &Context::for_user("1")).ok_or("missing")?;
    let strategy = &explanation.strategies[0];
    assert!(strategy.constraints[0].result);
    assert_eq!(strategy.segments[0].name, "beta");
    assert!(strategy.segments[0].result);
    assert!(strategy.segments[0].constraints[0].result);
    // A segment that does not exist is false, so only this strategy is off.
    assert_eq!(strategy.segments[1].id, 99);
    assert!(!strategy.segments[1].result);
    assert_eq!(explanation.result, Tristate::False);
    let json = serde_json::to_value(&strategy.constraints[0])?;
    assert_eq!(json["contextName"], "plan");
    assert_eq!(json["result"], true);
    Ok(())
}

#[test]
fn unsatisfied_dependency_is_reported() -> TestResult {
    let engine = engine(
        json!([
            flag("parent", false, json!([{"name": "default"}])),
            {"name": "child", "enabled": true, "strategies": [{"name": "default"}],
             "dependencies": [{"feature": "parent"}]}
        ]),
        json!([]),
    )?;
    let explanation = engine.explain("child", &Context::default()).ok_or("missing")?;
    assert!(explanation.has_unsatisfied_dependency);
    assert_eq!(explanation.result, Tristate::True);
    assert!(!explanation.is_enabled);
    assert!(!engine.is_enabled("child", &Context::default()));
    Ok(())
}

// Where Yggdrasil (0.21) is wrong.

#[test]
fn all_variant_weights_zero_gives_the_disabled_variant_instead_of_panicking() -> TestResult {
    let engine = engine(
        json!([{"name": "z", "enabled": true, "strategies": [{"name": "default"}],
                "variants": [{"name": "a", "weight": 0}, {"name": "b", "weight": 0}]}]),
        json!([]),
    )?;
    for context in [Context::for_user("1"), Context::default()] {
        let variant = engine.variant("z", &context);
        assert_eq!(
            (variant.name, variant.enabled, variant.feature_enabled),
            ("disabled", false, true)
        );
    }
    let explanation = engine.explain("z", &Context::default()).ok_or("missing")?;
    assert_eq!(explanation.variant, PlaygroundVariant::None);
    Ok(())
}

#[test]
fn an_unknown_operator_turns_off_only_its_strategy() -> TestResult {
    let document: ClientFeatures = serde_json::from_value(json!({"version": 2, "features": [
        flag("f", true, json!([
            {"name": "default", "constraints": [{"contextName": "userId", "operator": "IS_COOL", "values": ["1"]}]},
            {"name": "userWithId", "parameters": {"userIds": "1"}}
        ]))
    ]}))?;
    let (engine, warnings) = Engine::compile(&document);
    assert_eq!(warnings.len(), 1);
    assert_eq!(
        warnings[0].error,
        ValidationError::UnknownOperator {
            operator: "IS_COOL".into()
        }
    );
    assert!(engine.is_enabled("f", &Context::for_user("1")));
    assert!(!engine.is_enabled("f", &Context::for_user("2")));
    Ok(())
}

#[test]
fn a_missing_segment_turns_off_only_its_strategy() -> TestResult {
    let document: ClientFeatures = serde_json::from_value(json!({"version": 2, "features": [
        flag("f", true, json!([
            {"name": "default", "segments": [404]},
            {"name": "userWithId", "parameters": {"userIds": "1"}}
        ]))
    ]}))?;
    let (engine, warnings) = Engine::compile(&document);
    assert_eq!(warnings[0].error, ValidationError::UnknownSegment { id: 404 });
    assert!(engine.is_enabled("f", &Context::for_user("1")));
    assert!(!engine.is_enabled("f", &Context::for_user("2")));
    Ok(())
}

#[test]
fn dates_with_other_than_three_fraction_digits_work() -> TestResult {
    let now = flag_eval::parse_time("2024-06-01T12:00:00Z").ok_or("time")?;
    for value in [
        "2024-06-01T11:00:00Z",
        "2024-06-01T11:00:00.5Z",
        "2024-06-01T11:00:00.123456Z",
        "2024-06-01T13:00:00+02:00",
    ] {
        let engine = engine(
            json!([flag(
                "d",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "currentTime", "operator": "DATE_AFTER", "value": value}]}])
            )]),
            json!([]),
        )?;
        assert!(engine.is_enabled("d", &Context::default().at(now)), "{value}");
    }
    // The context's own time may carry any number of digits too.
    let context: Context = serde_json::from_value(json!({"currentTime": "2024-06-01T12:00:00.1234567Z"}))?;
    assert_eq!(
        context.current_time.instant().map(|time| time.timestamp()),
        Some(now.timestamp())
    );
    Ok(())
}

#[test]
fn deltas_update_one_flag_and_segments_without_recompiling_the_rest() -> TestResult {
    let mut engine = engine(
        json!([
            flag("keep", true, json!([{"name": "default", "segments": [1]}])),
            flag("drop", true, json!([]))
        ]),
        json!([{"id": 1, "name": "s", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}]),
    )?;
    assert!(engine.is_enabled("keep", &Context::for_user("1")));
    let delta: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "feature-removed", "eventId": 2, "featureName": "drop", "project": "default"},
        {"type": "segment-updated", "eventId": 3, "segment": {"id": 1, "name": "s",
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["2"]}]}},
        {"type": "feature-updated", "eventId": 4, "feature": {"name": "new", "enabled": true,
            "strategies": [{"name": "default", "segments": [1]}]}}
    ]}))?;
    assert!(engine.apply_delta(&delta).is_empty());
    assert!(!engine.contains("drop"));
    assert!(!engine.is_enabled("keep", &Context::for_user("1")));
    assert!(engine.is_enabled("keep", &Context::for_user("2")));
    assert!(engine.is_enabled("new", &Context::for_user("2")));
    let removal: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "segment-removed", "eventId": 5, "segmentId": 1}]}))?;
    engine.apply_delta(&removal);
    assert!(!engine.is_enabled("keep", &Context::for_user("2")));

    // A strategy with constraints of its own and two segments, which arrive after it, one of
    // them changing later: each change reaches the flag.
    let late: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "feature-updated", "eventId": 6, "feature": {"name": "two", "enabled": true,
            "strategies": [{"name": "default", "segments": [1, 2],
                "constraints": [{"contextName": "appName", "operator": "IN", "values": ["web"]}]}]}},
        {"type": "segment-updated", "eventId": 7, "segment": {"id": 1, "name": "s",
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["3"]}]}}
    ]}))?;
    assert_eq!(
        engine.apply_delta(&late).len(),
        2,
        "segments 1 and 2 are unknown to the flag at first"
    );
    let web = |user: &str| Context {
        app_name: Some("web".into()),
        ..Context::for_user(user)
    };
    assert!(
        !engine.is_enabled("two", &web("3")),
        "segment 2 does not exist yet"
    );
    let second: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "segment-updated", "eventId": 8, "segment": {"id": 2, "name": "t",
            "constraints": [{"contextName": "plan", "operator": "NOT_IN", "values": ["free"]}]}}
    ]}))?;
    assert!(engine.apply_delta(&second).is_empty());
    assert!(engine.is_enabled("two", &web("3")));
    assert!(!engine.is_enabled("two", &web("3").with_property("plan", "free")));
    assert!(!engine.is_enabled("two", &web("4")));
    assert!(
        !engine.is_enabled("two", &Context::for_user("3")),
        "the strategy's own constraint"
    );
    let changed: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "segment-updated", "eventId": 9, "segment": {"id": 1, "name": "s",
            "constraints": [{"contextName": "userId", "operator": "IN", "values": ["4"]}]}}
    ]}))?;
    engine.apply_delta(&changed);
    assert!(!engine.is_enabled("two", &web("3")));
    assert!(engine.is_enabled("two", &web("4")));
    let explanation = engine.explain("two", &web("4")).ok_or("no explanation")?;
    assert_eq!(explanation.strategies[0].constraints.len(), 1);
    assert_eq!(explanation.strategies[0].segments.len(), 2);
    Ok(())
}

#[test]
fn flags_whose_names_share_their_ends_are_told_apart() -> TestResult {
    // Names are found by their length and first and last eight bytes, and longer ones by their
    // bytes too: these share length and both ends, or differ only in the middle or by length.
    let names = [
        "release.2024-01-a.enabled",
        "release.2024-02-a.enabled",
        "release.2024-01-b.enabled",
        "abcdefgh-1-12345678",
        "abcdefgh-2-12345678",
        "abcdefgh12345678",
        "abcdefgh02345678",
        "abcdefgh2345678",
        "a",
        "b",
        "",
    ];
    let flags: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(index, name)| flag(name, index % 2 == 0, json!([])))
        .collect();
    let engine = engine(Value::Array(flags), json!([]))?;
    for (index, name) in names.iter().enumerate() {
        assert_eq!(
            engine.is_enabled(name, &Context::default()),
            index % 2 == 0,
            "{name:?}"
        );
        assert_eq!(
            engine.feature(name).map(|feature| feature.name.as_str()),
            Some(*name)
        );
    }
    assert!(engine.flag("release.2024-03-a.enabled").is_none());
    assert!(engine.flag("abcdefgh22345678").is_none());
    assert!(engine.flag("abcdefgh-3-12345678").is_none());
    Ok(())
}

#[test]
fn a_flag_keeps_its_ordinal_through_deltas_and_no_other_flag_takes_it() -> TestResult {
    let mut engine = engine(
        json!([flag("a", true, json!([])), flag("b", false, json!([]))]),
        json!([]),
    )?;
    let ordinal = |engine: &Engine, name: &str| engine.flag(name).map(flag_eval::Flag::ordinal);
    let (a, b) = (
        ordinal(&engine, "a").ok_or("a")?,
        ordinal(&engine, "b").ok_or("b")?,
    );
    assert_ne!(a, b);
    assert!(a.max(b) < engine.ordinal_bound());
    let delta: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "feature-removed", "eventId": 2, "featureName": "b", "project": "default"},
        {"type": "feature-updated", "eventId": 3, "feature": {"name": "a", "enabled": false}},
        {"type": "feature-updated", "eventId": 4, "feature": {"name": "c", "enabled": true}}
    ]}))?;
    engine.apply_delta(&delta);
    assert_eq!(
        ordinal(&engine, "a"),
        Some(a),
        "a replaced flag keeps its ordinal"
    );
    let c = ordinal(&engine, "c").ok_or("c")?;
    assert!(
        c != a && c != b,
        "a new flag does not reuse a removed flag's ordinal"
    );
    assert!(c < engine.ordinal_bound());
    // A hydration keeps the ordinals of the flags it keeps, and gives new names new ones.
    let hydration: flag_eval::Delta = serde_json::from_value(json!({"events": [
        {"type": "hydration", "eventId": 5, "segments": [], "features": [
            {"name": "d", "enabled": true}, {"name": "c", "enabled": true}, {"name": "a", "enabled": true}]}
    ]}))?;
    engine.apply_delta(&hydration);
    assert_eq!(ordinal(&engine, "a"), Some(a));
    assert_eq!(ordinal(&engine, "c"), Some(c));
    let d = ordinal(&engine, "d").ok_or("d")?;
    assert!(![a, b, c].contains(&d), "a new name gets a new ordinal");
    assert!(d < engine.ordinal_bound());
    // The handle answers as the engine does.
    let flag = engine.flag("c").ok_or("c")?;
    assert_eq!(
        flag.is_enabled(&Context::default()),
        engine.is_enabled("c", &Context::default())
    );
    assert_eq!(flag.feature().name, "c");
    assert!(engine.flag("b").is_none());
    Ok(())
}

#[test]
fn a_context_value_that_does_not_parse_fails_its_constraint_before_inversion() -> TestResult {
    // Dates, numbers and versions alike, as in Yggdrasil and the Node SDK: the constraint is
    // false, so its inverted twin is true.
    let now = flag_eval::parse_time("2024-06-01T12:00:00Z").ok_or("time")?;
    for (context_name, operator, value, context) in [
        (
            "currentTime",
            "DATE_AFTER",
            "2020-01-01T00:00:00Z",
            json!({"currentTime": "not a date"}),
        ),
        (
            "currentTime",
            "DATE_BEFORE",
            "2030-01-01T00:00:00Z",
            json!({"currentTime": "not a date"}),
        ),
        (
            "currentTime",
            "DATE_BEFORE",
            "2030-01-01T00:00:00Z",
            json!({"currentTime": 17}),
        ),
        ("age", "NUM_GT", "3", json!({"properties": {"age": "many"}})),
        (
            "version",
            "SEMVER_LT",
            "2.0.0",
            json!({"properties": {"version": "one"}}),
        ),
    ] {
        for inverted in [false, true] {
            let engine = engine(
                json!([flag(
                    "f",
                    true,
                    json!([{"name": "default", "constraints": [
                    {"contextName": context_name, "operator": operator, "value": value,
                     "inverted": inverted}]}])
                )]),
                json!([]),
            )?;
            let Value::Object(fields) = &context else {
                return Err("context".into());
            };
            // Filled in as an SDK fills in a missing time: an unreadable one stays unreadable.
            let mut read = flag_eval::context_from_json(fields);
            read.current_time = read.current_time.or_at(now);
            let deserialised: Context = serde_json::from_value(context.clone())?;
            let deserialised = Context {
                current_time: deserialised.current_time.or_at(now),
                ..deserialised
            };
            for context in [read, deserialised] {
                assert_eq!(
                    engine.is_enabled("f", &context),
                    inverted,
                    "{operator} {context_name} inverted={inverted} on {context:?}"
                );
            }
        }
    }
    // A missing or empty time is now; only text that is not a date is unreadable.
    for missing in [
        json!({}),
        json!({"currentTime": ""}),
        json!({"currentTime": null}),
    ] {
        let context: Context = serde_json::from_value(missing)?;
        assert_eq!(context.current_time.or_at(now), CurrentTime::At(now));
    }
    Ok(())
}

#[test]
fn strategy_variants_are_sticky_on_the_strategy_stickiness_not_their_own() -> TestResult {
    // The variants name `tenant`, the strategy `userId`: the strategy's field decides. Found by
    // the differential fuzzer against Yggdrasil, which agrees with the Node SDK here.
    let engine = engine(
        json!([flag(
            "f",
            true,
            json!([{"name": "flexibleRollout",
            "parameters": {"rollout": "100", "stickiness": "userId", "groupId": "f"},
            "variants": [
                {"name": "red", "weight": 500, "stickiness": "tenant"},
                {"name": "blue", "weight": 500, "stickiness": "tenant"}]}])
        )]),
        json!([]),
    )?;
    for user in ["1", "2", "3", "4", "5", "6", "7", "8"] {
        let expected = if flag_eval::bucket("f", user, flag_eval::VARIANT_SEED, 1000) <= 500 {
            "red"
        } else {
            "blue"
        };
        for tenant in ["x", "y", "z"] {
            let context = Context::for_user(user).with_property("tenant", tenant);
            assert_eq!(
                engine.variant("f", &context).name,
                expected,
                "user {user}, tenant {tenant}"
            );
        }
    }
    Ok(())
}

#[test]
fn where_the_differential_fuzzer_steers_around_yggdrasil_flag_eval_answers_as_the_node_sdk() -> TestResult {
    // Each case: strategies of flag `f` (and a parent `p` where it matters), a context, and
    // flag-eval's answer, which the Node SDK shares and Yggdrasil 0.21 does not.
    let in_seven = json!([{"name": "default", "constraints": [
        {"contextName": "userId", "operator": "IN", "values": ["7"]}]}]);
    let cases = [
        // A dependency on a disabled parent ignores `variants`.
        (
            json!([flag("p", true, in_seven.clone()),
                   {"name": "f", "enabled": true, "strategies": [],
                    "dependencies": [{"feature": "p", "enabled": false, "variants": ["v"]}]}]),
            Context::for_user("8"),
            true,
        ),
        // Variants named on a parent without variants: its variant is `disabled`, not named.
        (
            json!([flag("p", true, json!([])),
                   {"name": "f", "enabled": true, "strategies": [],
                    "dependencies": [{"feature": "p", "variants": ["v"]}]}]),
            Context::for_user("8"),
            false,
        ),
        // A backslash in a value is compared as it is.
        (
            json!([flag(
                "f",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "userId", "operator": "IN", "values": ["a\\"]}]}])
            )]),
            Context::for_user("a\\"),
            true,
        ),
        // An empty `STR_*` list is one false constraint, not a broken flag.
        (
            json!([flag(
                "f",
                true,
                json!([
                {"name": "default", "constraints": [
                    {"contextName": "userId", "operator": "STR_CONTAINS", "values": []}]},
                {"name": "default", "constraints": [
                    {"contextName": "userId", "operator": "IN", "values": ["8"]}]}])
            )]),
            Context::for_user("8"),
            true,
        ),
        // Date operators read `currentTime`, whatever `contextName` says.
        (
            json!([flag(
                "f",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "userId", "operator": "DATE_AFTER", "value": "2020-01-01T00:00:00Z"}]}])
            )]),
            Context::for_user("not a date").at(flag_eval::parse_time("2024-01-01T00:00:00Z").ok_or("time")?),
            true,
        ),
        // Numbers are read as JavaScript's `Number` reads them: padding is ignored, `.5` is a
        // number, Rust's `inf` is not.
        (
            json!([flag(
                "f",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "age", "operator": "NUM_EQ", "value": "4"}]}])
            )]),
            Context::default().with_property("age", " 4 "),
            true,
        ),
        (
            json!([flag(
                "f",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "age", "operator": "NUM_LT", "value": ".5"}]}])
            )]),
            Context::default().with_property("age", "0.25"),
            true,
        ),
        (
            json!([flag(
                "f",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "age", "operator": "NUM_GT", "value": "0"}]}])
            )]),
            Context::default().with_property("age", "inf"),
            false,
        ),
        // RFC 3339 allows a lower-case `t` and `z`.
        (
            json!([flag(
                "f",
                true,
                json!([{"name": "default", "constraints": [
                {"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2020-01-01t00:00:00z"}]}])
            )]),
            Context::default().at(flag_eval::parse_time("2024-01-01T00:00:00Z").ok_or("time")?),
            true,
        ),
    ];
    for (features, context, expected) in cases {
        let engine = engine(features.clone(), json!([]))?;
        assert_eq!(engine.is_enabled("f", &context), expected, "{features}");
    }
    // An empty `userId` is skipped for `default` stickiness: the session decides.
    let engine = engine(
        json!([{"name": "f", "enabled": true, "strategies": [], "variants": [
            {"name": "a", "weight": 500, "stickiness": "default"},
            {"name": "b", "weight": 500, "stickiness": "default"}]}]),
        json!([]),
    )?;
    for session in ["1", "2", "3", "4", "5", "6"] {
        let mut empty_user = Context::for_user("");
        empty_user.session_id = Some(session.into());
        let no_user = Context {
            session_id: Some(session.into()),
            ..Context::default()
        };
        assert_eq!(
            engine.variant("f", &empty_user).name,
            engine.variant("f", &no_user).name
        );
    }
    Ok(())
}
