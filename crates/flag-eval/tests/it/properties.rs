//! Properties of the engine over generated flags and contexts.

use chrono::{TimeZone, Utc};
use flag_eval::model::{Override, Strategy as StrategyDef};
use flag_eval::{
    ClientFeatures, CompileOptions, Constraint, Context, CurrentTime, Dependency, Engine, Feature, Operator,
    Payload, PreparedFlag, Segment, Variant, fold_case,
};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::select;

const FIELDS: [&str; 10] = [
    "userId",
    "sessionId",
    "environment",
    "appName",
    "remoteAddress",
    "currentTime",
    "plan",
    "region",
    "version",
    "age",
];

const VALUES: [&str; 18] = [
    "a",
    "B",
    "pro",
    "Pro",
    "free",
    "1.2.3",
    "2.0.0-rc.1",
    "10",
    "3.5",
    "-1",
    "2024-01-01T00:00:00Z",
    "2030-06-01T00:00:00.5+02:00",
    "10.0.0.0/8",
    "2001:db8::/32",
    "^u.*1$",
    "u1",
    "U1",
    "ÄÖ",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![4 => select(&VALUES[..]).prop_map(str::to_owned), 1 => ".{0,6}"]
}

fn constraint() -> impl Strategy<Value = Constraint> {
    (
        select(&FIELDS[..]),
        // Every operator, and a name that is none.
        prop_oneof![19 => select(&Operator::ALL[..]).prop_map(Operator::name), 1 => Just("NOT_AN_OPERATOR")],
        vec(value(), 0..4),
        proptest::option::of(value()),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(field, operator, values, value, case_insensitive, inverted)| Constraint {
                context_name: field.into(),
                operator: operator.into(),
                values,
                value,
                case_insensitive: Some(case_insensitive),
                inverted: Some(inverted),
            },
        )
}

fn variants() -> impl Strategy<Value = Vec<Variant>> {
    vec(
        (
            select(&["v1", "v2", "v3", "v4"][..]),
            0i64..=1000,
            proptest::option::of(select(&["default", "userId", "sessionId", "plan", "random"][..])),
            any::<bool>(),
            proptest::option::of(select(&["pro", "u1"][..])),
        )
            .prop_map(
                |(name, weight, stickiness, with_payload, override_value)| Variant {
                    name: name.into(),
                    weight,
                    weight_type: None,
                    stickiness: stickiness.map(str::to_owned),
                    payload: with_payload.then(|| Payload {
                        payload_type: "string".into(),
                        value: format!("payload-{name}"),
                    }),
                    overrides: override_value
                        .map(|value| Override {
                            context_name: "plan".into(),
                            values: vec![value.into()],
                        })
                        .into_iter()
                        .collect(),
                },
            ),
        0..4,
    )
}

fn strategy() -> impl Strategy<Value = StrategyDef> {
    let names = [
        "default",
        "flexibleRollout",
        "userWithId",
        "gradualRolloutUserId",
        "gradualRolloutSessionId",
        "gradualRolloutRandom",
        "remoteAddress",
        "applicationHostname",
        "myCustomStrategy",
    ];
    let parameter_names = [
        "rollout",
        "percentage",
        "stickiness",
        "groupId",
        "userIds",
        "IPs",
        "hostNames",
    ];
    let parameter_values = [
        "0", "25", "50", "100", "abc", "default", "userId", "random", "plan", "u1,u2", "10.0.0.1",
    ];
    (
        select(names.to_vec()),
        btree_map(
            select(parameter_names.to_vec()).prop_map(str::to_owned),
            select(parameter_values.to_vec()).prop_map(str::to_owned),
            0..4,
        ),
        vec(constraint(), 0..3),
        vec(prop_oneof![Just(1i64), Just(2i64), Just(3i64)], 0..2),
        variants(),
        prop::bool::weighted(0.15),
    )
        .prop_map(
            |(name, parameters, constraints, segments, variants, disabled)| StrategyDef {
                name: name.into(),
                id: Some(format!("{name}-id")),
                disabled: Some(disabled),
                parameters: parameters.into(),
                constraints,
                segments,
                variants,
                ..StrategyDef::default()
            },
        )
}

fn document() -> impl Strategy<Value = ClientFeatures> {
    let feature = (
        any::<bool>(),
        vec(strategy(), 0..4),
        variants(),
        vec(
            (0usize..5, proptest::option::of(any::<bool>()), any::<bool>()),
            0..2,
        ),
    );
    (vec(feature, 1..5), vec(vec(constraint(), 0..3), 0..3)).prop_map(|(features, segments)| ClientFeatures {
        version: 2,
        features: features
            .into_iter()
            .enumerate()
            .map(|(index, (enabled, strategies, variants, parents))| Feature {
                name: format!("f{index}"),
                enabled,
                strategies,
                variants,
                dependencies: parents
                    .into_iter()
                    .map(|(parent, parent_enabled, on_variant)| Dependency {
                        feature: format!("f{parent}"),
                        enabled: parent_enabled,
                        variants: on_variant.then(|| vec!["v1".into()]),
                    })
                    .collect(),
                ..Feature::default()
            })
            .collect(),
        segments: segments
            .into_iter()
            .enumerate()
            .map(|(index, constraints)| Segment {
                id: index as i64 + 1,
                name: format!("s{}", index + 1),
                constraints,
            })
            .collect(),
    })
}

fn context() -> impl Strategy<Value = Context> {
    (
        (
            proptest::option::of(prop_oneof![
                select(&["u1", "U1", "u2", "user-7"][..]).prop_map(str::to_owned),
                ".{0,5}"
            ]),
            proptest::option::of(select(&["s1", "s2"][..])),
            proptest::option::of(select(&["production", "dev"][..])),
            proptest::option::of(select(&["web", "ios"][..])),
            proptest::option::of(select(&["10.1.2.3", "192.168.0.1", "2001:db8::1", "nope"][..])),
        ),
        vec((select(&["plan", "region", "version", "age"][..]), value()), 0..4),
        proptest::option::of(0i64..4_000_000_000),
        any::<u64>(),
    )
        .prop_map(
            |((user, session, environment, app, address), properties, time, seed)| {
                let mut context = Context {
                    user_id: user,
                    session_id: session.map(str::to_owned),
                    environment: environment.map(str::to_owned),
                    app_name: app.map(str::to_owned),
                    remote_address: address.map(str::to_owned),
                    current_time: time
                        .and_then(|seconds| Utc.timestamp_opt(seconds, 0).single())
                        .map_or(CurrentTime::Unset, CurrentTime::At),
                    ..Context::default()
                };
                for (name, value) in properties {
                    context.properties.insert(name.into(), value);
                }
                context.with_random_seed(seed)
            },
        )
}

fn single_constraint_engine(constraint: Constraint) -> (Engine, bool) {
    let document = ClientFeatures {
        version: 2,
        features: vec![Feature {
            name: "c".into(),
            enabled: true,
            strategies: vec![StrategyDef {
                name: "default".into(),
                constraints: vec![constraint],
                ..StrategyDef::default()
            }],
            ..Feature::default()
        }],
        segments: Vec::new(),
    };
    let (engine, warnings) = Engine::compile(&document);
    (engine, warnings.is_empty())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn compile_never_panics_and_evaluation_is_total(document in document(), contexts in vec(context(), 1..4)) {
        let (engine, _warnings) = Engine::compile(&document);
        prop_assert_eq!(engine.len(), document.features.iter().map(|f| &f.name).collect::<std::collections::BTreeSet<_>>().len());
        for context in &contexts {
            for feature in &document.features {
                engine.is_enabled(&feature.name, context);
                engine.variant(&feature.name, context);
                let explanation = engine.explain(&feature.name, context);
                prop_assert!(explanation.is_some());
                prop_assert!(serde_json::to_value(explanation).is_ok());
            }
        }
    }

    #[test]
    fn explain_agrees_with_is_enabled_and_variant(document in document(), context in context()) {
        let (engine, _warnings) = Engine::compile(&document);
        for feature in &document.features {
            let seed = context.random.state();
            let explanation = engine.explain(&feature.name, &context.clone().with_random_seed(seed));
            let explanation = explanation.ok_or_else(|| TestCaseError::fail("missing flag"))?;
            if !explanation.is_complete() {
                continue;
            }
            let enabled = engine.is_enabled(&feature.name, &context.clone().with_random_seed(seed));
            prop_assert_eq!(explanation.is_enabled, enabled, "{}", feature.name);
            let variant = engine.variant(&feature.name, &context.clone().with_random_seed(seed));
            prop_assert_eq!(explanation.variant.name(), variant.name, "{}", feature.name);
        }
    }

    #[test]
    fn engines_that_take_the_document_over_or_gather_flags_compiled_apart_answer_as_one_that_copies_it(
        document in document(),
        context in context(),
    ) {
        let (copied, copied_warnings) = Engine::compile(&document);
        let (owned, owned_warnings) = Engine::compile_owned(document.clone(), CompileOptions::default());
        prop_assert_eq!(&copied_warnings, &owned_warnings);
        let options = CompileOptions::default();
        let prepared: Vec<PreparedFlag> = document
            .features
            .iter()
            .map(|feature| PreparedFlag::new(feature.clone(), &options))
            .collect();
        let names: Vec<&str> = prepared.iter().map(PreparedFlag::name).collect();
        let listed: Vec<&str> = document.features.iter().map(|feature| feature.name.as_str()).collect();
        prop_assert_eq!(names, listed);
        let (assembled, assembled_warnings) = Engine::assemble(prepared, &document.segments, options);
        prop_assert_eq!(&copied_warnings, &assembled_warnings);
        prop_assert_eq!(assembled.len(), copied.len());
        for feature in &document.features {
            prop_assert_eq!(owned.feature(&feature.name), copied.feature(&feature.name));
            prop_assert_eq!(assembled.feature(&feature.name), copied.feature(&feature.name));
            let seed = context.random.state();
            let explain = |engine: &Engine| {
                engine
                    .explain(&feature.name, &context.clone().with_random_seed(seed))
                    .map(|explanation| format!("{explanation:?}"))
            };
            prop_assert_eq!(explain(&owned), explain(&copied), "{}", feature.name);
            prop_assert_eq!(explain(&assembled), explain(&copied), "{}", feature.name);
            let variant = |engine: &Engine| {
                format!("{:?}", engine.variant(&feature.name, &context.clone().with_random_seed(seed)))
            };
            prop_assert_eq!(variant(&owned), variant(&copied), "{}", feature.name);
            prop_assert_eq!(variant(&assembled), variant(&copied), "{}", feature.name);
        }
    }

    #[test]
    fn rollout_is_monotonic(user in ".{0,12}", group in ".{0,12}", low in 0u32..=100, extra in 0u32..=100) {
        let high = (low + extra).min(100);
        let engine_at = |percent: u32| {
            let document = ClientFeatures {
                version: 2,
                features: vec![Feature {
                    name: "r".into(),
                    enabled: true,
                    strategies: vec![StrategyDef {
                        name: "flexibleRollout".into(),
                        parameters: [("rollout", percent.to_string()), ("stickiness", "userId".into()), ("groupId", group.clone())]
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v))
                            .collect(),
                        ..StrategyDef::default()
                    }],
                    ..Feature::default()
                }],
                segments: Vec::new(),
            };
            Engine::compile(&document).0
        };
        let context = Context::for_user(&user);
        if engine_at(low).is_enabled("r", &context) {
            prop_assert!(engine_at(high).is_enabled("r", &context));
        }
        prop_assert!(!engine_at(0).is_enabled("r", &context));
        prop_assert!(engine_at(100).is_enabled("r", &context));
    }

    #[test]
    fn inverted_negates_every_operator(constraint in constraint(), context in context()) {
        let mut straight = constraint.clone();
        straight.inverted = Some(false);
        let mut inverted = constraint;
        inverted.inverted = Some(true);
        let (straight, valid) = single_constraint_engine(straight);
        prop_assume!(valid);
        let (inverted, _) = single_constraint_engine(inverted);
        prop_assert_eq!(inverted.is_enabled("c", &context), !straight.is_enabled("c", &context));
    }

    /// `caseInsensitive` on a `STR_*` operator is the same as lower-casing both sides; every other
    /// operator but `REGEX`, `IN` and `NOT_IN` included, ignores it.
    #[test]
    fn case_insensitive_equals_comparing_lower_cased_inputs(
        constraint in constraint(),
        field_value in prop_oneof![select(&VALUES[..]).prop_map(str::to_owned), ".{0,8}"],
    ) {
        let operator = Operator::parse(&constraint.operator);
        prop_assume!(operator.is_some() && !constraint.context_name.starts_with("currentTime"));
        let mut insensitive = constraint.clone();
        insensitive.case_insensitive = Some(true);
        let context = Context::default().with_property(&constraint.context_name, &field_value);
        let textual = matches!(
            operator,
            Some(Operator::StrStartsWith | Operator::StrEndsWith | Operator::StrContains)
        );
        let (insensitive_engine, valid) = single_constraint_engine(insensitive);
        prop_assume!(valid);
        if textual {
            let mut lowered = constraint.clone();
            lowered.case_insensitive = Some(false);
            lowered.values = lowered.values.iter().map(|value| fold_case(value)).collect();
            let lowered_context = Context::default().with_property(&constraint.context_name, &fold_case(&field_value));
            let (lowered_engine, _) = single_constraint_engine(lowered);
            prop_assert_eq!(
                insensitive_engine.is_enabled("c", &context),
                lowered_engine.is_enabled("c", &lowered_context)
            );
        } else if operator != Some(Operator::Regex) {
            let mut sensitive = constraint;
            sensitive.case_insensitive = Some(false);
            let (sensitive_engine, _) = single_constraint_engine(sensitive);
            prop_assert_eq!(insensitive_engine.is_enabled("c", &context), sensitive_engine.is_enabled("c", &context));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn variant_shares_follow_weights(weights in vec(1i64..=1000, 2..5)) {
        let variants: Vec<Variant> = weights
            .iter()
            .enumerate()
            .map(|(index, weight)| Variant {
                name: format!("v{index}"),
                weight: *weight,
                stickiness: Some("userId".into()),
                ..Variant::default()
            })
            .collect();
        let document = ClientFeatures {
            version: 2,
            features: vec![Feature {
                name: "shares".into(),
                enabled: true,
                strategies: vec![StrategyDef { name: "default".into(), ..StrategyDef::default() }],
                variants,
                ..Feature::default()
            }],
            segments: Vec::new(),
        };
        let (engine, _) = Engine::compile(&document);
        let samples = 100_000;
        let mut counts = vec![0usize; weights.len()];
        let mut context = Context::default();
        for id in 0..samples {
            context.user_id = Some(format!("user-{id}"));
            let name = engine.variant("shares", &context).name;
            let index: usize = name[1..].parse().map_err(|_| TestCaseError::fail("bad name"))?;
            counts[index] += 1;
        }
        let total: i64 = weights.iter().sum();
        for (count, weight) in counts.iter().zip(&weights) {
            let share = *count as f64 / f64::from(samples);
            let expected = *weight as f64 / total as f64;
            prop_assert!((share - expected).abs() <= 0.01, "share {share} expected {expected}");
        }
    }
}
