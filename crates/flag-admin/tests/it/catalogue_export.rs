//! Export and import: Unleash's export document of the flags asked for in one environment, what
//! importing it elsewhere would do, and the import itself, made by people and refused whole
//! when its check finds an error.

use flag_admin::AdminError;
use flag_admin::catalogue::export::types::{ExportDocument, ImportRequest};
use flag_admin::catalogue::features::types::FeatureQuery;
use flag_admin::catalogue::{dependencies, export, features, segments, strategies, tags, variants};
use flag_admin::identity::auth::Caller;
use flag_admin::runtime::domain::RootRole;
use serde_json::json;

use crate::catalogue_fixture::{
    body, create_project, environment_reader, environment_writer, place, seed_feature, writer,
};
use crate::common::{self, Outcome, World};

/// An editor, admitted to import as the import declares.
fn importer() -> Result<Caller, AdminError> {
    export::IMPORT.admit(common::user(7, RootRole::Editor))
}

fn beta_segment() -> serde_json::Value {
    json!({"name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]})
}

/// `parent` and `checkout`, which depends on it and, in development, rolls out to the `beta`
/// segment with two variants; `checkout` is tagged `simple:payments`; `loose` stands alone.
async fn source(world: &World) -> Outcome {
    seed_feature(world, "parent").await?;
    seed_feature(world, "checkout").await?;
    seed_feature(world, "loose").await?;
    let segment = segments::create(
        &world.ctx,
        &common::admin(segments::CREATE),
        body(beta_segment())?,
    )
    .await?;
    strategies::add(
        &world.ctx,
        &environment_writer(),
        place("checkout", "development"),
        body(json!({"name": "flexibleRollout", "parameters": {"rollout": "30", "stickiness": "userId", "groupId": "checkout"},
                    "segments": [segment.id], "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}))?,
    )
    .await?;
    variants::batch(
        &world.ctx,
        &environment_writer(),
        "default".into(),
        "checkout".into(),
        json!({"variants": [{"name": "a", "weight": 500}, {"name": "b", "weight": 500}], "environments": ["development"]}),
    )
    .await?;
    tags::add_to_feature(
        &world.ctx,
        &writer(),
        "checkout".into(),
        body(json!({"type": "simple", "value": "payments"}))?,
    )
    .await?;
    dependencies::add(
        &world.ctx,
        &writer(),
        "default".into(),
        "checkout".into(),
        body(json!({"feature": "parent"}))?,
    )
    .await?;
    Ok(())
}

fn feature_names(document: &ExportDocument) -> Vec<&str> {
    let mut names: Vec<&str> = document
        .features
        .iter()
        .map(|feature| feature.name.as_str())
        .collect();
    names.sort_unstable();
    names
}

#[tokio::test]
async fn the_export_holds_the_flags_asked_for_and_what_they_use() -> Outcome {
    let world = World::new()?;
    source(&world).await?;
    let document = export::export(
        &world.ctx,
        &environment_reader(),
        body(json!({"environment": "development", "features": ["parent", "checkout"]}))?,
    )
    .await?;
    assert_eq!(feature_names(&document), ["checkout", "parent"]);
    let segments: Vec<&str> = document
        .segments
        .iter()
        .map(|segment| segment.name.as_str())
        .collect();
    assert_eq!(segments, ["beta"]);
    let checkout_strategies = document
        .feature_strategies
        .iter()
        .filter(|strategy| strategy.feature_name == "checkout")
        .count();
    assert_eq!(checkout_strategies, 2);
    assert!(
        document
            .feature_environments
            .iter()
            .all(|state| state.environment == "development" && state.enabled)
    );
    let tags: Vec<(&str, &str)> = document
        .feature_tags
        .iter()
        .map(|tag| (tag.tag_type.as_str(), tag.tag_value.as_str()))
        .collect();
    assert_eq!(tags, [("simple", "payments")]);
    let tag_types: Vec<&str> = document.tag_types.iter().map(|kind| kind.name.as_str()).collect();
    assert_eq!(tag_types, ["simple"]);
    let dependencies: Vec<(&str, &str)> = document
        .dependencies
        .iter()
        .flat_map(|child| {
            child
                .dependencies
                .iter()
                .map(|parent| (child.feature.as_str(), parent.feature.as_str()))
        })
        .collect();
    assert_eq!(dependencies, [("checkout", "parent")]);

    // The flags named, else those tagged with a value, else a project's, else every live one.
    for (query, expected) in [
        (
            json!({"environment": "development", "tag": "payments"}),
            vec!["checkout"],
        ),
        (
            json!({"environment": "development", "project": "default"}),
            vec!["checkout", "loose", "parent"],
        ),
        (
            json!({"environment": "development"}),
            vec!["checkout", "loose", "parent"],
        ),
        (
            json!({"environment": "development", "features": [], "project": "nope"}),
            vec![],
        ),
    ] {
        let document = export::export(&world.ctx, &environment_reader(), body(query.clone())?).await?;
        assert_eq!(feature_names(&document), expected, "{query}");
    }
    // The environment need not exist: its state is simply absent.
    let nowhere = export::export(
        &world.ctx,
        &environment_reader(),
        body(json!({"environment": "nowhere", "features": ["checkout"]}))?,
    )
    .await?;
    assert_eq!(feature_names(&nowhere), ["checkout"]);
    assert!(nowhere.feature_strategies.is_empty() && nowhere.feature_environments.is_empty());
    // A token limited to production exports production only.
    let production = common::token(export::EXPORT, Some(&["production"]));
    let refused = export::export(
        &world.ctx,
        &production,
        body(json!({"environment": "development"}))?,
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    export::export(
        &world.ctx,
        &production,
        body(json!({"environment": "production"}))?,
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn an_export_is_checked_then_imported_elsewhere_by_a_person() -> Outcome {
    let origin = World::new()?;
    source(&origin).await?;
    let document = export::export(
        &origin.ctx,
        &environment_reader(),
        body(json!({"environment": "development", "features": ["parent", "checkout"]}))?,
    )
    .await?;
    let data = serde_json::to_value(&document)?;

    // Into another project and environment of another store.
    let target = World::new()?;
    create_project(&target, "shop").await?;
    let request = || -> Result<ImportRequest, serde_json::Error> {
        body(json!({"project": "shop", "environment": "production", "data": data.clone()}))
    };
    let check = export::validate(&target.ctx, &environment_reader(), request()?).await?;
    let errors: Vec<(&str, &[String])> = check
        .errors
        .iter()
        .map(|finding| (finding.message.as_str(), finding.affected_items.as_slice()))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].1, ["beta"], "the segment must be made first");
    assert!(check.permissions.is_empty());
    let refused = export::import(&target.ctx, &importer()?, request()?).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    assert!(
        features::list(&target.ctx, &common::admin(features::LIST), "shop".into())
            .await?
            .features
            .is_empty(),
        "refused whole"
    );

    segments::create(
        &target.ctx,
        &common::admin(segments::CREATE),
        body(beta_segment())?,
    )
    .await?;
    let check = export::validate(&target.ctx, &environment_reader(), request()?).await?;
    assert!(check.errors.is_empty(), "{:?}", check.errors);
    assert!(check.warnings.is_empty(), "{:?}", check.warnings);

    // An admin token may check an import but not make one.
    let refused = export::import(&target.ctx, &writer(), request()?).await;
    assert!(
        matches!(&refused, Err(AdminError::Validation { message, .. }) if message == export::ADMIN_TOKEN_IMPORT),
        "{refused:?}"
    );
    export::import(&target.ctx, &importer()?, request()?).await?;
    let checkout = features::get(
        &target.ctx,
        &common::admin(features::GET),
        ("shop".into(), "checkout".into()),
        body(json!({"variantEnvironments": "true"}))?,
    )
    .await?;
    assert_eq!(checkout.created_by.as_ref().map(|person| person.id), Some(7));
    assert_eq!(checkout.dependencies[0].feature, "parent");
    let production = checkout
        .environments
        .iter()
        .find(|state| state.name == "production")
        .ok_or("no production")?;
    assert!(production.enabled);
    assert_eq!(production.strategies.len(), 2);
    assert_eq!(production.variants.as_ref().map(Vec::len), Some(2));
    let imported_tags = tags::of_feature(&target.ctx, "checkout".into()).await?;
    assert_eq!(imported_tags.tags.len(), 1);

    // Again, the flags are overwritten.
    let check = export::validate(&target.ctx, &environment_reader(), request()?).await?;
    assert!(
        check
            .warnings
            .iter()
            .any(|finding| finding.message.contains("will be overwritten")),
        "{:?}",
        check.warnings
    );
    export::import(&target.ctx, &importer()?, request()?).await?;
    Ok(())
}

#[tokio::test]
async fn imports_are_refused_for_flags_of_other_projects_and_unknown_places() -> Outcome {
    let world = World::new()?;
    source(&world).await?;
    create_project(&world, "shop").await?;
    let document = export::export(
        &world.ctx,
        &environment_reader(),
        body(json!({"environment": "development", "features": ["loose"]}))?,
    )
    .await?;
    let data = serde_json::to_value(&document)?;
    let request = |project: &str, environment: &str| -> Result<ImportRequest, serde_json::Error> {
        body(json!({"project": project, "environment": environment, "data": data.clone()}))
    };
    let check = export::validate(&world.ctx, &environment_reader(), request("shop", "development")?).await?;
    assert!(
        check
            .errors
            .iter()
            .any(|finding| finding.affected_items == ["loose (in project default)"]),
        "{:?}",
        check.errors
    );
    let refused = export::import(&world.ctx, &importer()?, request("shop", "development")?).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    for (project, environment) in [("nope", "development"), ("shop", "nowhere")] {
        let unknown =
            export::validate(&world.ctx, &environment_reader(), request(project, environment)?).await;
        assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    }
    // A check of another environment's state is refused to a token limited to production.
    let production = common::token(export::VALIDATE, Some(&["production"]));
    let refused = export::validate(&world.ctx, &production, request("default", "development")?).await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");
    // Into its own project, the document overwrites the flag.
    export::import(&world.ctx, &importer()?, request("default", "development")?).await?;
    let loose = features::get(
        &world.ctx,
        &common::admin(features::GET),
        ("default".into(), "loose".into()),
        FeatureQuery::default(),
    )
    .await?;
    assert!(loose.environments.iter().all(|state| state.enabled));
    Ok(())
}
