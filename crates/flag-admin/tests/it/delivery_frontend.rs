//! The frontend API and OFREP: contexts as browsers and OpenFeature providers send them, the
//! flags evaluated for them, and the origins the frontend API answers, from
//! `delivery::frontend` and `delivery::ofrep`, on the backend under test.

use std::net::{IpAddr, Ipv4Addr};

use flag_admin::AdminError;
use flag_admin::delivery::engines;
use flag_admin::delivery::frontend::{self, types::SetCors};
use flag_admin::delivery::ofrep::types::{OfrepErrorCode, OfrepReason};
use flag_admin::delivery::ofrep::{self, Failure};
use flag_admin::delivery::playground::types::{MAX_CONTEXT_FIELDS, MAX_CONTEXT_VALUE_BYTES};
use flag_admin::identity::auth::{self, FrontendAccess};
use flag_store::queries::evaluation::ProjectScope;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

const BROWSER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 7));

fn development() -> FrontendAccess {
    FrontendAccess {
        environment: "development".into(),
        projects: None,
    }
}

fn pairs(fields: &[(&str, &str)]) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

/// The flags the frontend API answers for `fields`, as JSON, and the answer's bytes.
async fn toggles(
    world: &World,
    access: &FrontendAccess,
    fields: &[(&str, &str)],
) -> Result<(Value, Vec<u8>), Box<dyn std::error::Error>> {
    let context = frontend::context_from(pairs(fields), BROWSER, flag_admin::now().and_utc())?;
    let body = frontend::evaluate(&world.ctx, world.ctx.delivery(), access, &context).await?;
    Ok((serde_json::from_slice(&body)?, body))
}

fn names(answer: &Value) -> Vec<&str> {
    answer["toggles"]
        .as_array()
        .map(|toggles| {
            toggles
                .iter()
                .filter_map(|toggle| toggle["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
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

#[test]
fn a_context_is_read_as_unleash_reads_the_frontend_apis() -> Outcome {
    let context = frontend::context_from(
        pairs(&[
            ("userId", "7"),
            ("properties[plan]", "pro"),
            ("region", "eu"),
            ("sessionId", ""),
            ("appName", "web"),
        ]),
        BROWSER,
        flag_admin::now().and_utc(),
    )?;
    assert_eq!(context.user_id.as_deref(), Some("7"));
    assert_eq!(context.app_name.as_deref(), Some("web"));
    assert_eq!(context.properties.get("plan"), Some("pro"));
    assert_eq!(context.properties.get("region"), Some("eu"));
    // The caller's address and a fresh session stand in for those not given.
    assert_eq!(context.remote_address.as_deref(), Some("198.51.100.7"));
    assert!(
        context.session_id.as_deref().is_some_and(|id| id.len() == 16),
        "{context:?}"
    );
    let given = frontend::context_from(
        pairs(&[("remoteAddress", "10.0.0.1"), ("sessionId", "s")]),
        BROWSER,
        flag_admin::now().and_utc(),
    )?;
    assert_eq!(
        (given.remote_address.as_deref(), given.session_id.as_deref()),
        (Some("10.0.0.1"), Some("s"))
    );

    // The playground's limits: no context makes one request costly.
    let many: Vec<(String, String)> = (0..=MAX_CONTEXT_FIELDS)
        .map(|n| (format!("f{n}"), "v".to_owned()))
        .collect();
    assert_eq!(
        path(frontend::context_from(many, BROWSER, flag_admin::now().and_utc())),
        "/context"
    );
    let long = "x".repeat(MAX_CONTEXT_VALUE_BYTES + 1);
    assert_eq!(
        path(frontend::context_from(
            pairs(&[("plan", &long)]),
            BROWSER,
            flag_admin::now().and_utc()
        )),
        "/context/plan"
    );
    assert_eq!(
        path(frontend::context_from(
            pairs(&[("a/b", &long)]),
            BROWSER,
            flag_admin::now().and_utc()
        )),
        "/context/a~1b"
    );

    // A JSON context: scalars as text, `properties` flattened, anything else refused.
    let Value::Object(body) =
        json!({"userId": 7, "beta": true, "gone": null, "properties": {"plan": "pro", "seats": 3}})
    else {
        return Err("an object".into());
    };
    let mut read = frontend::json_pairs(body)?;
    read.sort();
    assert_eq!(
        read,
        pairs(&[
            ("beta", "true"),
            ("properties[plan]", "pro"),
            ("properties[seats]", "3"),
            ("userId", "7")
        ])
    );
    for (bad, at) in [
        (json!({"userId": {"a": 1}}), "/context/userId"),
        (json!({"properties": "pro"}), "/context/properties"),
        (
            json!({"properties": {"plan": ["pro"]}}),
            "/context/properties/plan",
        ),
    ] {
        let Value::Object(body) = bad else {
            return Err("an object".into());
        };
        assert_eq!(path(frontend::json_pairs(body)), at);
    }
    Ok(())
}

#[tokio::test]
async fn browsers_get_the_enabled_flags_for_their_context() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let (answer, bytes) = toggles(&world, &development(), &[("userId", "7")]).await?;
    assert_eq!(names(&answer), ["everyone"]);
    assert_eq!(
        answer["toggles"][0],
        json!({"name": "everyone", "enabled": true, "impressionData": false,
               "variant": {"name": "disabled", "enabled": false, "feature_enabled": true, "featureEnabled": true}})
    );
    // The same context gets the same bytes, which the server tags.
    let (again, same) = toggles(&world, &development(), &[("userId", "7")]).await?;
    assert_eq!((again, same), (answer, bytes.clone()));

    let (pro, other) = toggles(
        &world,
        &development(),
        &[("userId", "7"), ("properties[plan]", "pro")],
    )
    .await?;
    assert_ne!(other, bytes);
    assert_eq!(names(&pro), ["everyone", "pro-only"]);
    assert_eq!(
        pro["toggles"][1]["variant"],
        json!({"name": "gold", "enabled": true, "payload": {"type": "json", "value": "{\"tier\":1}"},
               "feature_enabled": true, "featureEnabled": true})
    );
    // Another environment, another project: the token's, and only those.
    let production = FrontendAccess {
        environment: "production".into(),
        projects: None,
    };
    assert!(names(&toggles(&world, &production, &[]).await?.0).is_empty());
    let shop = FrontendAccess {
        environment: "development".into(),
        projects: Some(vec!["shop".into()]),
    };
    assert!(names(&toggles(&world, &shop, &[]).await?.0).is_empty());
    let nowhere = FrontendAccess {
        environment: "nowhere".into(),
        projects: None,
    };
    assert!(names(&toggles(&world, &nowhere, &[]).await?.0).is_empty());
    Ok(())
}

/// A burst of requests on a cold cache (a start, or the first read after a write) compiles the
/// environment once: every request evaluates with that one compilation, so memory holds one copy
/// of the environment's rows and engine, not one per request in flight.
#[tokio::test]
async fn a_burst_of_requests_compiles_an_environment_once() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let development = ["development".to_owned()];
    let compile = || engines::compile(&world.ctx, world.ctx.delivery(), &ProjectScope::All, &development);
    let (first, second, third, fourth) = tokio::join!(compile(), compile(), compile(), compile());
    let burst = [first?, second?, third?, fourth?];
    assert!(!burst[0][0].is_empty());
    for compiled in &burst {
        assert!(
            std::sync::Arc::ptr_eq(&compiled[0], &burst[0][0]),
            "every request of the burst evaluates with one compilation"
        );
    }
    assert_eq!(world.ctx.delivery().compiled_environments(), 1);
    Ok(())
}

#[tokio::test]
async fn the_frontend_api_answers_the_origins_an_admin_sets() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let config = frontend::ui_config(ctx, identity).await?;
    assert_eq!(
        config.frontend_api_origins,
        ["*"],
        "every origin until some are set"
    );
    assert_eq!(config.unleash_url, "http://localhost:4242");
    assert_eq!(config.version, env!("CARGO_PKG_VERSION"));
    assert!(!config.disable_password_auth && !config.oidc_configured_through_env);

    let caller = common::admin(frontend::SET_CORS);
    let origins = vec![
        "https://app.example.com".to_owned(),
        "http://localhost:3000".to_owned(),
    ];
    frontend::set_cors(
        ctx,
        &caller,
        SetCors {
            frontend_api_origins: origins.clone(),
        },
    )
    .await?;
    assert_eq!(&*auth::frontend_origins(ctx, identity).await?, origins.as_slice());
    assert_eq!(
        frontend::ui_config(ctx, identity).await?.frontend_api_origins,
        origins
    );

    for bad in [
        "https://app.example.com/",
        "HTTPS://app.example.com",
        "https://*.example.com",
        "app.example.com",
    ] {
        let request = SetCors {
            frontend_api_origins: vec!["*".into(), bad.into()],
        };
        let refused = frontend::set_cors(ctx, &caller, request).await;
        assert!(
            matches!(&refused, Err(AdminError::Validation { message, details })
                if message == &format!("invalid origin: {bad}")
                    && details[0].path.as_deref() == Some("/frontendApiOrigins/1")),
            "{bad}: {refused:?}"
        );
    }
    assert_eq!(
        &*auth::frontend_origins(ctx, identity).await?,
        origins.as_slice(),
        "nothing changed"
    );
    frontend::set_cors(
        ctx,
        &caller,
        SetCors {
            frontend_api_origins: Vec::new(),
        },
    )
    .await?;
    assert!(
        auth::frontend_origins(ctx, identity).await?.is_empty(),
        "no origin at all"
    );
    Ok(())
}

/// One flag's evaluation through OFREP, for `body`.
async fn evaluate(world: &World, key: &str, body: &Value) -> Result<ofrep::types::OfrepEvaluation, Failure> {
    let body = body.to_string();
    ofrep::evaluate_flag(
        &world.ctx,
        world.ctx.delivery(),
        &development(),
        key,
        body.as_bytes(),
        BROWSER,
    )
    .await
}

/// The OFREP error of a refused evaluation, whether it is a 404, and its details.
fn failure<T: std::fmt::Debug>(result: Result<T, Failure>) -> Option<(OfrepErrorCode, bool, String)> {
    match result {
        Err(Failure::Invalid(failure)) => Some((failure.error_code, false, failure.error_details)),
        Err(Failure::NotFound(failure)) => Some((failure.error_code, true, failure.error_details)),
        _ => None,
    }
}

#[tokio::test]
async fn ofrep_evaluates_one_flag_with_its_reasons_and_errors() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let everyone = evaluate(&world, "everyone", &json!({"context": {"targetingKey": "u1"}}))
        .await
        .map_err(|error| format!("{error:?}"))?;
    assert_eq!(
        (
            everyone.key.as_str(),
            &everyone.value,
            everyone.reason,
            everyone.variant.as_str(),
            everyone.metadata.feature_enabled
        ),
        (
            "everyone",
            &json!(true),
            OfrepReason::TargetingMatch,
            "enabled",
            true
        )
    );
    let off = evaluate(
        &world,
        "switched-off",
        &json!({"context": {"targetingKey": "u1"}}),
    )
    .await
    .map_err(|error| format!("{error:?}"))?;
    assert_eq!(
        (&off.value, off.reason, off.variant.as_str()),
        (&json!(false), OfrepReason::Disabled, "disabled")
    );
    let gold = evaluate(
        &world,
        "pro-only",
        &json!({"context": {"targetingKey": "u1", "plan": "pro"}}),
    )
    .await
    .map_err(|error| format!("{error:?}"))?;
    assert_eq!(
        (&gold.value, gold.reason, gold.variant.as_str()),
        (&json!({"tier": 1}), OfrepReason::Split, "gold")
    );
    let free = evaluate(
        &world,
        "pro-only",
        &json!({"context": {"targetingKey": 42, "plan": "free"}}),
    )
    .await
    .map_err(|error| format!("{error:?}"))?;
    assert_eq!(
        (&free.value, free.reason),
        (&json!(false), OfrepReason::TargetingMatch)
    );
    // An Unleash context needs no user.
    let anonymous = evaluate(&world, "pro-only", &json!({"context": {"plan": "pro"}}))
        .await
        .map_err(|error| format!("{error:?}"))?;
    assert_eq!(anonymous.variant, "gold");

    let missing = failure(evaluate(&world, "missing", &json!({"context": {}})).await);
    assert_eq!(
        missing,
        Some((
            OfrepErrorCode::FlagNotFound,
            true,
            "flag missing was not found".to_owned()
        ))
    );
    for (body, code) in [
        (
            json!({"context": {"targetingKey": {"id": 1}}}),
            OfrepErrorCode::InvalidContext,
        ),
        (
            json!({"context": {"targetingKey": "u", "plan": [1]}}),
            OfrepErrorCode::InvalidContext,
        ),
        (json!({"targetingKey": "u"}), OfrepErrorCode::ParseError),
        (json!({"context": "u"}), OfrepErrorCode::ParseError),
    ] {
        let refused = failure(evaluate(&world, "everyone", &body).await);
        assert_eq!(
            refused.map(|(code, not_found, _)| (code, not_found)),
            Some((code, false)),
            "{body}"
        );
    }
    let not_json = ofrep::evaluate_flag(
        &world.ctx,
        world.ctx.delivery(),
        &development(),
        "everyone",
        b"{not json",
        BROWSER,
    )
    .await;
    assert_eq!(
        failure(not_json).map(|(code, _, _)| code),
        Some(OfrepErrorCode::ParseError)
    );
    let long = "x".repeat(MAX_CONTEXT_VALUE_BYTES + 1);
    let too_long = failure(evaluate(&world, "everyone", &json!({"context": {"plan": long}})).await);
    assert_eq!(
        too_long.map(|(code, _, _)| code),
        Some(OfrepErrorCode::InvalidContext)
    );
    Ok(())
}

/// Every flag's evaluation through OFREP, for `body`.
async fn bulk(world: &World, body: Value) -> Result<Vec<u8>, Failure> {
    let body = body.to_string();
    ofrep::evaluate_flags(
        &world.ctx,
        world.ctx.delivery(),
        &development(),
        body.as_bytes(),
        BROWSER,
    )
    .await
}

#[tokio::test]
async fn ofrep_evaluates_every_flag_in_bulk_the_same_for_the_same_context() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let body = bulk(&world, json!({"context": {"targetingKey": "u1", "plan": "pro"}}))
        .await
        .map_err(|error| format!("{error:?}"))?;
    let answer: Value = serde_json::from_slice(&body)?;
    let flags: Vec<(&str, &Value)> = answer["flags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|flag| (flag["key"].as_str().unwrap_or_default(), &flag["value"]))
        .collect();
    assert_eq!(
        flags,
        [
            ("everyone", &json!(true)),
            ("pro-only", &json!({"tier": 1})),
            ("switched-off", &json!(false))
        ]
    );
    let same = bulk(&world, json!({"context": {"targetingKey": "u1", "plan": "pro"}}))
        .await
        .map_err(|error| format!("{error:?}"))?;
    assert_eq!(same, body);
    let other = bulk(&world, json!({"context": {"targetingKey": "u1"}}))
        .await
        .map_err(|error| format!("{error:?}"))?;
    assert_ne!(other, body);
    let refused = failure(bulk(&world, json!({"context": {"plan": {"a": 1}}})).await);
    assert!(
        matches!(&refused, Some((OfrepErrorCode::InvalidContext, false, details)) if details.contains("plan")),
        "{refused:?}"
    );
    Ok(())
}
