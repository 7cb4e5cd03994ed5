//! Tag types, tags, and the tags on flags: names checked, types needed before their tags, tags
//! made as flags take them, and the audit log of each change.

use flag_admin::AdminError;
use flag_admin::catalogue::events::types::EventSearchQuery;
use flag_admin::catalogue::tags::types::{CreateTagType, TagIn};
use flag_admin::catalogue::{events, tags};
use flag_store::models::Actor;
use serde_json::json;

use crate::catalogue_fixture::{body, create_project, seed_feature, writer};
use crate::common::{self, Outcome, World};

fn tag(tag_type: &str, value: &str) -> Result<TagIn, serde_json::Error> {
    body(json!({"type": tag_type, "value": value}))
}

fn tags_of(answer: &tags::types::FeatureTagsOut) -> Vec<(&str, &str, Option<&str>)> {
    answer
        .tags
        .iter()
        .map(|tag| (tag.tag_type.as_str(), tag.value.as_str(), tag.color.as_deref()))
        .collect()
}

#[tokio::test]
async fn tag_types_are_created_validated_changed_and_deleted() -> Outcome {
    let world = World::new()?;
    let listed = tags::types(&world.ctx).await?;
    assert_eq!(listed.version, 1);
    let names: Vec<&str> = listed.tag_types.iter().map(|kind| kind.name.as_str()).collect();
    assert_eq!(names, ["simple"]);
    assert_eq!(listed.tag_types[0].color.as_deref(), Some("#FFFFFF"));

    let creator = common::admin(tags::CREATE_TYPE);
    let created = tags::create_type(
        &world.ctx,
        &creator,
        body(json!({"name": "team", "color": "#00FF00"}))?,
    )
    .await?;
    assert_eq!(created.name.as_str(), "team");
    let taken = tags::create_type(&world.ctx, &creator, body(json!({"name": "team"}))?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let taken = tags::validate_type(&world.ctx, body(json!({"name": "team"}))?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let valid = tags::validate_type(&world.ctx, body(json!({"name": "area"}))?).await?;
    assert!(valid.valid);
    assert_eq!(valid.tag_type.name.as_str(), "area");
    // Names, colours and fields are checked as the request is read.
    for bad in [
        json!({"name": "x"}),
        json!({"name": "not friendly"}),
        json!({"name": "team2", "color": "green"}),
        json!({"name": "team3", "extra": 1}),
    ] {
        assert!(body::<CreateTagType>(bad.clone()).is_err(), "{bad}");
    }

    // An update changes what it names and keeps the rest.
    tags::update_type(
        &world.ctx,
        &common::admin(tags::UPDATE_TYPE),
        "team".into(),
        body(json!({"description": "owning team"}))?,
    )
    .await?;
    let read = tags::get_type(&world.ctx, "team".into()).await?;
    assert_eq!(read.tag_type.description.as_deref(), Some("owning team"));
    assert_eq!(read.tag_type.color.as_deref(), Some("#00FF00"));
    // A tag type created without a colour is white, as in Unleash.
    tags::create_type(&world.ctx, &creator, body(json!({"name": "area"}))?).await?;
    let read = tags::get_type(&world.ctx, "area".into()).await?;
    assert_eq!(read.tag_type.color.as_deref(), Some(tags::DEFAULT_COLOR));

    let unknown = tags::get_type(&world.ctx, "nope".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = tags::update_type(&world.ctx, &writer(), "nope".into(), body(json!({}))?).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let deleter = common::admin(tags::DELETE_TYPE);
    tags::delete_type(&world.ctx, &deleter, "team".into()).await?;
    let again = tags::delete_type(&world.ctx, &deleter, "team".into()).await;
    assert!(matches!(again, Err(AdminError::NotFound(_))), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn flags_are_tagged_untagged_and_tags_deleted() -> Outcome {
    let world = World::new()?;
    seed_feature(&world, "checkout").await?;
    seed_feature(&world, "search").await?;
    // Values are trimmed; a tag is made once, of a type that exists.
    let created = tags::create(&world.ctx, &writer(), tag("simple", "  web  ")?).await?;
    assert_eq!(
        (created.tag.tag_type.as_str(), created.tag.value.as_str()),
        ("simple", "web")
    );
    let taken = tags::create(&world.ctx, &writer(), tag("simple", "web")?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let untyped = tags::create(&world.ctx, &writer(), tag("nope", "web")?).await;
    assert!(
        matches!(untyped, Err(AdminError::Validation { .. })),
        "{untyped:?}"
    );
    assert!(tag("simple", "w").is_err(), "a value is 2 to 50 characters");

    // A flag takes a tag, made as needed; the flag must exist.
    let added = tags::add_to_feature(
        &world.ctx,
        &writer(),
        "checkout".into(),
        tag("simple", "payments")?,
    )
    .await?;
    assert_eq!(
        (added.tag_type.as_str(), added.value.as_str()),
        ("simple", "payments")
    );
    let missing = tags::add_to_feature(&world.ctx, &writer(), "missing".into(), tag("simple", "x1")?).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let after = tags::update_feature(
        &world.ctx,
        &writer(),
        "checkout".into(),
        body(json!({"addedTags": [{"type": "simple", "value": "web"}], "removedTags": [{"type": "simple", "value": "payments"}]}))?,
    )
    .await?;
    assert_eq!(tags_of(&after), [("simple", "web", Some("#FFFFFF"))]);

    // Several flags of one project at once.
    tags::update_many(
        &world.ctx,
        &writer(),
        "default".into(),
        body(json!({"features": ["search", "checkout"], "tags": {"addedTags": [{"type": "simple", "value": "q4"}], "removedTags": []}}))?,
    )
    .await?;
    let search = tags::of_feature(&world.ctx, "search".into()).await?;
    assert_eq!(tags_of(&search), [("simple", "q4", Some("#FFFFFF"))]);
    create_project(&world, "other").await?;
    let stranger = tags::update_many(
        &world.ctx,
        &writer(),
        "other".into(),
        body(json!({"features": ["search"], "tags": {"addedTags": [{"type": "simple", "value": "q1"}], "removedTags": []}}))?,
    )
    .await;
    assert!(
        matches!(stranger, Err(AdminError::Validation { .. })),
        "{stranger:?}"
    );
    let missing = tags::of_feature(&world.ctx, "missing".into()).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");

    // Tags listed in the order they were made, by type or all; one tag read.
    let listed = tags::list(&world.ctx, Some("simple".into())).await?;
    let values: Vec<&str> = listed.tags.iter().map(|tag| tag.value.as_str()).collect();
    assert_eq!(values, ["web", "payments", "q4"]);
    assert_eq!(tags::list(&world.ctx, None).await?.tags.len(), 3);
    assert!(tags::list(&world.ctx, Some("nope".into())).await?.tags.is_empty());
    let one = tags::get(&world.ctx, "simple".into(), "q4".into()).await?;
    assert_eq!(one.tag.value, "q4");
    let unknown = tags::get(&world.ctx, "simple".into(), "nope".into()).await;
    assert!(
        matches!(&unknown, Err(AdminError::NotFound(message)) if message == "No tag with type: [simple] and value [nope]"),
        "{unknown:?}"
    );

    // The audit log holds each tagging, with the flag's tags then.
    let events = flag_admin::catalogue::events::search(
        &world.ctx,
        &common::admin(events::SEARCH),
        EventSearchQuery {
            feature: Some("IS:checkout".into()),
            event_type: Some("IS_ANY_OF:feature-tagged,feature-untagged".into()),
            ..EventSearchQuery::default()
        },
    )
    .await?;
    assert_eq!(events.total, 4);
    let newest = &events.events[0];
    assert_eq!(newest.event_type, "feature-tagged");
    assert_eq!(newest.data, Some(json!({"type": "simple", "value": "q4"})));
    assert_eq!(newest.created_by_user_id, Some(Actor::ADMIN_TOKEN));

    // Deleting a tag takes it off every flag; deleting it again is no error.
    tags::delete(&world.ctx, &writer(), "simple".into(), "q4".into()).await?;
    assert!(
        tags::of_feature(&world.ctx, "search".into())
            .await?
            .tags
            .is_empty()
    );
    tags::delete(&world.ctx, &writer(), "simple".into(), "q4".into()).await?;
    tags::remove_from_feature(
        &world.ctx,
        &writer(),
        ("checkout".into(), "simple".into(), "web".into()),
    )
    .await?;
    assert!(
        tags::of_feature(&world.ctx, "checkout".into())
            .await?
            .tags
            .is_empty()
    );
    let missing = tags::remove_from_feature(
        &world.ctx,
        &writer(),
        ("missing".into(), "simple".into(), "web".into()),
    )
    .await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    // Deleting a tag type takes its tags off every flag.
    tags::add_to_feature(&world.ctx, &writer(), "checkout".into(), tag("simple", "last")?).await?;
    tags::delete_type(&world.ctx, &writer(), "simple".into()).await?;
    assert!(
        tags::of_feature(&world.ctx, "checkout".into())
            .await?
            .tags
            .is_empty()
    );
    assert!(tags::list(&world.ctx, None).await?.tags.is_empty());
    Ok(())
}
