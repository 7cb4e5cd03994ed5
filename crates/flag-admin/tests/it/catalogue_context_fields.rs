//! Context fields: created, given legal values one by one or all at once, listed with where live
//! flags constrain on them, checked in constraints, and deleted only once unused.

use flag_admin::AdminError;
use flag_admin::catalogue::context_fields;
use flag_admin::catalogue::context_fields::types::LegalValueIn;
use flag_admin::catalogue::segments::types::NameIn;
use flag_admin::catalogue::{archive, strategies};
use flag_store::models::LegalValue;
use serde_json::json;

use crate::catalogue_fixture::{
    administrator, bare_feature, body, create_project, environment_writer, place, seed_feature, writer,
};
use crate::common::{Outcome, World};

fn legal_values(values: &[LegalValue]) -> Vec<(&str, Option<&str>)> {
    values
        .iter()
        .map(|value| (value.value.as_str(), value.description.as_deref()))
        .collect()
}

fn legal(value: &str, description: Option<&str>) -> LegalValueIn {
    LegalValueIn {
        value: value.into(),
        description: description.map(str::to_owned),
    }
}

#[tokio::test]
async fn context_fields_are_created_changed_and_deleted_once_unused() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "regional").await?;
    let admin = administrator();
    let created = context_fields::create(
        &world.ctx,
        &admin,
        body(json!({"name": "region", "description": "where"}))?,
    )
    .await?;
    assert_eq!(
        (
            created.name.as_str(),
            created.description.as_deref(),
            created.stickiness
        ),
        ("region", Some("where"), false)
    );
    let read = context_fields::get(&world.ctx, "region".into()).await?;
    assert_eq!(read.sort_order, 0, "a new field sorts at 0");
    assert!(read.used_in_features.is_none(), "usage is for lists");
    let taken = context_fields::create(&world.ctx, &admin, body(json!({"name": "region"}))?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    for request in [
        json!({"name": "twice", "legalValues": [{"value": "a"}, {"value": "a"}]}),
        json!({"name": "blank", "legalValues": [{"value": ""}]}),
    ] {
        let refused = context_fields::create(&world.ctx, &admin, body(request.clone())?).await;
        assert!(
            matches!(&refused, Err(AdminError::Validation { details, .. })
                if details[0].path.as_deref().is_some_and(|path| path.starts_with("/legalValues/"))),
            "{request} gave {refused:?}"
        );
    }

    // Legal values one by one: added, described again, removed.
    context_fields::add_legal_value(&world.ctx, &admin, "region".into(), legal("eu", None)).await?;
    context_fields::add_legal_value(&world.ctx, &admin, "region".into(), legal("us", Some("America")))
        .await?;
    let read = context_fields::get(&world.ctx, "region".into()).await?;
    assert_eq!(
        legal_values(&read.legal_values),
        [("eu", None), ("us", Some("America"))]
    );
    context_fields::add_legal_value(&world.ctx, &admin, "region".into(), legal("eu", Some("Europe"))).await?;
    context_fields::remove_legal_value(&world.ctx, &admin, "region".into(), "us".into()).await?;
    context_fields::remove_legal_value(&world.ctx, &admin, "region".into(), "mars".into()).await?;
    let read = context_fields::get(&world.ctx, "region".into()).await?;
    assert_eq!(legal_values(&read.legal_values), [("eu", Some("Europe"))]);
    let long =
        context_fields::add_legal_value(&world.ctx, &admin, "region".into(), legal(&"x".repeat(101), None))
            .await;
    assert!(matches!(long, Err(AdminError::Validation { .. })), "{long:?}");
    let unknown = context_fields::add_legal_value(&world.ctx, &admin, "nope".into(), legal("a", None)).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = context_fields::remove_legal_value(&world.ctx, &admin, "nope".into(), "a".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // An update replaces the stickiness and legal values, and keeps what it leaves out.
    context_fields::update(
        &world.ctx,
        &admin,
        "region".into(),
        body(json!({"stickiness": true, "sortOrder": 4, "legalValues": [{"value": "us"}, {"value": "eu"}]}))?,
    )
    .await?;
    let read = context_fields::get(&world.ctx, "region".into()).await?;
    assert!(read.stickiness);
    assert_eq!(read.sort_order, 4);
    assert_eq!(read.description.as_deref(), Some("where"));
    assert_eq!(legal_values(&read.legal_values), [("us", None), ("eu", None)]);
    context_fields::update(&world.ctx, &admin, "region".into(), body(json!({}))?).await?;
    let read = context_fields::get(&world.ctx, "region".into()).await?;
    assert!(!read.stickiness && read.legal_values.is_empty());
    assert_eq!((read.sort_order, read.description.as_deref()), (4, Some("where")));
    let twice = context_fields::update(
        &world.ctx,
        &admin,
        "region".into(),
        body(json!({"legalValues": [{"value": "us"}, {"value": "us"}]}))?,
    )
    .await;
    assert!(matches!(twice, Err(AdminError::Validation { .. })), "{twice:?}");
    let unknown = context_fields::update(&world.ctx, &admin, "nope".into(), body(json!({}))?).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // A field a live flag constrains on stays until the constraint goes.
    strategies::add(
        &world.ctx,
        &environment_writer(),
        place("regional", "development"),
        body(json!({"name": "default", "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}))?,
    )
    .await?;
    let uses = context_fields::strategies(&world.ctx, "region".into()).await?;
    let flags: Vec<&str> = uses
        .strategies
        .iter()
        .map(|used| used.feature_name.as_str())
        .collect();
    assert_eq!(flags, ["regional"]);
    let in_use = context_fields::delete(&world.ctx, &admin, "region".into()).await;
    assert!(matches!(in_use, Err(AdminError::Conflict(_))), "{in_use:?}");
    archive::archive_one(&world.ctx, &writer(), "default".into(), "regional".into()).await?;
    assert!(
        context_fields::strategies(&world.ctx, "region".into())
            .await?
            .strategies
            .is_empty()
    );
    context_fields::delete(&world.ctx, &admin, "region".into()).await?;
    let gone = context_fields::get(&world.ctx, "region".into()).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    let gone = context_fields::delete(&world.ctx, &admin, "region".into()).await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    // An unused field can go, built in or not.
    context_fields::delete(&world.ctx, &admin, "appName".into()).await?;
    Ok(())
}

#[tokio::test]
async fn names_are_checked_and_fields_listed_by_name_with_their_usage() -> Outcome {
    let world = World::new()?;
    let admin = administrator();
    for name in ["zone", "Plan", "area"] {
        context_fields::create(&world.ctx, &admin, body(json!({"name": name}))?).await?;
    }
    let check = |name: &str| NameIn { name: name.into() };
    context_fields::validate_name(&world.ctx, check("tenant")).await?;
    let taken = context_fields::validate_name(&world.ctx, check("zone")).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let unfriendly = context_fields::validate_name(&world.ctx, check("a b")).await;
    assert!(
        matches!(unfriendly, Err(AdminError::Validation { .. })),
        "{unfriendly:?}"
    );

    // Two live flags of the default project and one of the shop constrain on `zone`; an
    // archived one does not count.
    create_project(&world, "shop").await?;
    for (flag, project) in [
        ("one", "default"),
        ("two", "default"),
        ("three", "shop"),
        ("gone", "default"),
    ] {
        bare_feature(&world, project, flag).await?;
        strategies::add(
            &world.ctx,
            &environment_writer(),
            (project.into(), flag.into(), "development".into()),
            body(json!({"name": "default", "constraints": [{"contextName": "zone", "operator": "IN", "values": ["eu"]}]}))?,
        )
        .await?;
    }
    archive::archive_one(&world.ctx, &writer(), "default".into(), "gone".into()).await?;
    let listed = context_fields::list(&world.ctx).await?;
    let names: Vec<&str> = listed.iter().map(|field| field.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_by_key(|name| name.to_lowercase());
    assert_eq!(names, sorted, "listed by name");
    let usage = |name: &str| {
        listed
            .iter()
            .find(|field| field.name == name)
            .map(|field| (field.used_in_features, field.used_in_projects))
    };
    assert_eq!(usage("zone"), Some((Some(3), Some(2))));
    assert_eq!(usage("area"), Some((Some(0), Some(0))));

    // A project's strategies may use every field; the project must exist.
    let of_project = context_fields::of_project(&world.ctx, "shop".into()).await?;
    assert_eq!(of_project.len(), listed.len());
    let unknown = context_fields::of_project(&world.ctx, "nope".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    Ok(())
}

#[tokio::test]
async fn a_constraint_is_checked_as_a_strategys_would_be() -> Outcome {
    let world = World::new()?;
    context_fields::create(
        &world.ctx,
        &administrator(),
        body(json!({"name": "region", "legalValues": [{"value": "eu"}]}))?,
    )
    .await?;
    let constraint = |value: serde_json::Value| body::<flag_eval::Constraint>(value);
    context_fields::validate_constraint(
        &world.ctx,
        constraint(json!({"contextName": "userId", "operator": "IN", "values": ["1"]}))?,
    )
    .await?;
    context_fields::validate_constraint(
        &world.ctx,
        constraint(json!({"contextName": "region", "operator": "IN", "values": ["eu"]}))?,
    )
    .await?;
    for request in [
        json!({"contextName": "appVersion", "operator": "SEMVER_EQ", "value": "one"}),
        json!({"contextName": "userId", "operator": "SOUNDS_LIKE", "values": ["1"]}),
        json!({"contextName": "region", "operator": "IN", "values": ["mars"]}),
    ] {
        let refused = context_fields::validate_constraint(&world.ctx, constraint(request.clone())?).await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{request} gave {refused:?}"
        );
    }
    Ok(())
}
