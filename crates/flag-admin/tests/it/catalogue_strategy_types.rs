//! Strategy types: Unleash's built-in ones, which never change or go, and custom ones,
//! registered, replaced, deprecated and reactivated, and deleted once no strategy uses them.

use flag_admin::AdminError;
use flag_admin::catalogue::strategy_types::types::CreateStrategyType;
use flag_admin::catalogue::{strategies, strategy_types};
use serde_json::json;

use crate::catalogue_fixture::{administrator, bare_feature, body, environment_writer, place};
use crate::common::{Outcome, World};

#[tokio::test]
async fn strategy_types_come_in_unleashs_order_with_its_display_names() -> Outcome {
    let world = World::new()?;
    let admin = administrator();
    for (name, title) in [("zeta", None), ("alpha", Some("Alpha tenants"))] {
        let created = strategy_types::create(
            &world.ctx,
            &admin,
            body(json!({"name": name, "title": title, "parameters": [{"name": "tenants", "type": "list"}]}))?,
        )
        .await?;
        assert_eq!(created.name, name);
        assert_eq!(created.title.as_deref(), title);
        assert!(created.display_name.is_none());
        assert!(created.editable && !created.deprecated);
        assert_eq!(created.parameters[0].parameter_type, "list");
    }
    let listed = strategy_types::list(&world.ctx).await?;
    assert_eq!(listed.version, 1);
    let shown: Vec<(&str, Option<&str>, bool)> = listed
        .strategies
        .iter()
        .map(|kind| (kind.name.as_str(), kind.display_name.as_deref(), kind.editable))
        .collect();
    assert_eq!(
        shown,
        [
            ("flexibleRollout", Some("Gradual rollout"), false),
            ("default", Some("Standard"), false),
            ("remoteAddress", Some("IPs"), false),
            ("applicationHostname", Some("Hosts"), false),
            ("alpha", None, true),
            ("zeta", None, true),
        ]
    );
    let rollout = strategy_types::get(&world.ctx, "flexibleRollout".into()).await?;
    assert_eq!(rollout.display_name.as_deref(), Some("Gradual rollout"));
    assert!(rollout.title.is_none());

    let taken = strategy_types::create(&world.ctx, &admin, body(json!({"name": "default"}))?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    assert!(body::<CreateStrategyType>(json!({"name": "not friendly"})).is_err());
    assert!(
        body::<CreateStrategyType>(json!({"name": "untyped", "parameters": [{"name": "p"}]})).is_err(),
        "a parameter has a type"
    );
    Ok(())
}

#[tokio::test]
async fn custom_types_change_and_go_but_built_in_ones_stay() -> Outcome {
    let world = World::new()?;
    let admin = administrator();
    strategy_types::create(
        &world.ctx,
        &admin,
        body(json!({"name": "byTenant", "parameters": [{"name": "tenants", "type": "list"}]}))?,
    )
    .await?;
    strategy_types::update(
        &world.ctx,
        &admin,
        "byTenant".into(),
        body(json!({"description": "tenants", "parameters": []}))?,
    )
    .await?;
    let read = strategy_types::get(&world.ctx, "byTenant".into()).await?;
    assert_eq!(read.description.as_deref(), Some("tenants"));
    assert!(read.parameters.is_empty());

    strategy_types::set_deprecated(&world.ctx, &admin, "byTenant".into(), true).await?;
    assert!(
        strategy_types::get(&world.ctx, "byTenant".into())
            .await?
            .deprecated
    );
    strategy_types::set_deprecated(&world.ctx, &admin, "byTenant".into(), false).await?;
    assert!(
        !strategy_types::get(&world.ctx, "byTenant".into())
            .await?
            .deprecated
    );

    for built_in in ["default", "flexibleRollout"] {
        let refused = strategy_types::delete(&world.ctx, &admin, built_in.into()).await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{refused:?}"
        );
        let refused = strategy_types::update(
            &world.ctx,
            &admin,
            built_in.into(),
            body(json!({"parameters": []}))?,
        )
        .await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{refused:?}"
        );
    }
    // Built-in types can be deprecated, and are still evaluated.
    strategy_types::set_deprecated(&world.ctx, &admin, "default".into(), true).await?;
    assert!(
        strategy_types::get(&world.ctx, "default".into())
            .await?
            .deprecated
    );

    // A type a strategy uses stays until the strategy goes.
    bare_feature(&world, "default", "tenanted").await?;
    let strategy = strategies::add(
        &world.ctx,
        &environment_writer(),
        place("tenanted", "development"),
        body(json!({"name": "byTenant"}))?,
    )
    .await?;
    let in_use = strategy_types::delete(&world.ctx, &admin, "byTenant".into()).await;
    assert!(matches!(in_use, Err(AdminError::Conflict(_))), "{in_use:?}");
    strategies::delete(
        &world.ctx,
        &environment_writer(),
        place("tenanted", "development"),
        strategy.id.ok_or("no id")?,
    )
    .await?;
    strategy_types::delete(&world.ctx, &admin, "byTenant".into()).await?;
    let gone = strategy_types::get(&world.ctx, "byTenant".into()).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    for unknown in [
        strategy_types::set_deprecated(&world.ctx, &admin, "nope".into(), true).await,
        strategy_types::delete(&world.ctx, &admin, "nope".into()).await,
        strategy_types::update(
            &world.ctx,
            &admin,
            "nope".into(),
            body(json!({"parameters": []}))?,
        )
        .await,
    ] {
        assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    }
    Ok(())
}
