//! The client API: what a question reads of a token and a query, and the document and single
//! flag `delivery::client` answers it with, on the backend under test.

use flag_admin::AdminError;
use flag_admin::delivery::client::types::{ClientFeaturesQuery, ClientQuery};
use flag_admin::delivery::client::{self, ClientSpec, Protocol};
use flag_admin::identity::auth::ClientAccess;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

fn access(environment: Option<&str>, projects: Option<&[&str]>) -> ClientAccess {
    ClientAccess {
        environment: environment.map(str::to_owned),
        projects: projects.map(|projects| projects.iter().map(|project| (*project).to_owned()).collect()),
        token: "token-verifier".into(),
    }
}

fn query(pairs: &[(&str, &str)]) -> ClientQuery {
    ClientQuery::from_pairs(
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect(),
    )
}

/// The question of a current SDK (client specification 5) with `access` and `pairs`.
fn features_question(
    access: &ClientAccess,
    pairs: &[(&str, &str)],
) -> Result<ClientFeaturesQuery, AdminError> {
    client::question(
        access,
        query(pairs),
        Protocol::Features(ClientSpec::parse(Some("5.0.0"))?),
    )
}

/// The names of the flags a rendered document holds.
fn names(document: &Value) -> Vec<&str> {
    document["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|feature| feature["name"].as_str())
                .collect()
        })
        .unwrap_or_default()
}

/// The document `question` gets now, as JSON, with its `ETag` and digest.
async fn rendered(
    world: &World,
    question: ClientFeaturesQuery,
) -> Result<(Value, String, [u8; 32]), Box<dyn std::error::Error>> {
    let rendered = client::render(&world.ctx, question, None)
        .await?
        .ok_or("a document is rendered when there is no previous one")?;
    Ok((
        serde_json::from_slice(&rendered.json)?,
        rendered.etag,
        rendered.digest,
    ))
}

#[test]
fn the_client_specification_decides_whether_segments_are_inlined() -> Outcome {
    assert!(ClientSpec::parse(None)?.inlines_segments());
    assert!(ClientSpec::parse(Some("4.1.9"))?.inlines_segments());
    assert!(!ClientSpec::parse(Some("4.2.0"))?.inlines_segments());
    assert!(!ClientSpec::parse(Some(" v5.1.0 "))?.inlines_segments());
    let refused = ClientSpec::parse(Some("five"));
    assert!(
        matches!(&refused, Err(AdminError::Validation { message, .. }) if message.contains("\"five\"")),
        "{refused:?}"
    );
    Ok(())
}

#[test]
fn a_question_reads_the_token_before_the_query() -> Outcome {
    // The token's environment and projects win; the query's stand in for them.
    let bound = features_question(
        &access(Some("production"), Some(&["default", "shop"])),
        &[("environment", "development"), ("project", "other")],
    )?;
    assert_eq!(bound.environment, "production");
    assert_eq!(bound.project, Some(vec!["default".to_owned(), "shop".to_owned()]));
    // The document echoes the query as asked, as Unleash's does.
    let open = features_question(
        &access(None, None),
        &[("project", "b"), ("project", "a"), ("project", "*")],
    )?;
    assert_eq!(
        (open.environment.as_str(), open.project),
        ("development", Some(vec!["b".to_owned(), "a".to_owned()]))
    );
    let chosen = features_question(
        &access(None, None),
        &[("environment", "production"), ("namePrefix", "")],
    )?;
    assert_eq!(
        (chosen.environment.as_str(), chosen.name_prefix),
        ("production", Some(String::new()))
    );

    // Tags filter the whole document only, and each must be `type:value`.
    let tagged = features_question(&access(None, None), &[("tag", "simple:web")])?;
    assert_eq!(tagged.tag, Some(vec![["simple".to_owned(), "web".to_owned()]]));
    assert!(!tagged.inline_segment_constraints);
    let refused = features_question(&access(None, None), &[("tag", "web")]);
    assert!(
        matches!(&refused, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/query/tag")),
        "{refused:?}"
    );
    let old = client::question(
        &access(None, None),
        query(&[]),
        Protocol::Features(ClientSpec::parse(None)?),
    )?;
    assert!(old.inline_segment_constraints);
    // The delta protocol reads no tags, so a bad one is no error, and never inlines segments.
    let delta = client::question(
        &access(None, None),
        query(&[("tag", "web"), ("namePrefix", "p")]),
        Protocol::Delta,
    )?;
    assert_eq!(
        (
            delta.tag,
            delta.name_prefix.as_deref(),
            delta.inline_segment_constraints
        ),
        (None, Some("p"), false)
    );
    // Events echo nothing, so questions that select the same flags are one question.
    let events = |projects: &[&str]| {
        let pairs: Vec<(&str, &str)> = projects.iter().map(|project| ("project", *project)).collect();
        client::question(&access(None, None), query(&pairs), Protocol::Delta)
    };
    assert_eq!(events(&["b", "a"])?, events(&["a", "b", "a"])?);
    Ok(())
}

#[tokio::test]
async fn the_document_holds_the_environments_flags_with_a_tag_that_changes_with_it() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let question = features_question(&access(Some("development"), None), &[])?;
    let (document, etag, digest) = rendered(&world, question.clone()).await?;
    assert_eq!(names(&document), ["everyone", "pro-only", "switched-off"]);
    assert_eq!(document["version"], 2);
    assert_eq!(
        document["query"],
        json!({"environment": "development", "inlineSegmentConstraints": false})
    );
    assert_eq!(document["meta"]["etag"], etag.as_str());
    assert_eq!(document["meta"]["revisionId"], world.ctx.revision_now().await?);
    let query_hash = question.hash()?;
    assert_eq!(document["meta"]["queryHash"], query_hash.as_str());
    assert!(
        etag.starts_with(&format!("\"{query_hash}:")) && etag.ends_with(":v1\""),
        "{etag}"
    );
    let pro = &document["features"][1];
    assert_eq!(
        (&pro["enabled"], &pro["project"], &pro["type"]),
        (&json!(true), &json!("default"), &json!("release"))
    );
    assert_eq!(pro["strategies"][0]["variants"][0]["name"], "gold");
    assert_eq!(document["features"][2]["enabled"], false);

    // The same answer again is not rendered again.
    assert!(
        client::render(&world.ctx, question.clone(), Some(digest))
            .await?
            .is_none()
    );
    // Production has the flags, all off.
    let production = features_question(&access(Some("production"), None), &[])?;
    let (document, other, _) = rendered(&world, production).await?;
    assert_ne!(other, etag);
    assert!(
        document["features"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|feature| feature["enabled"] == false)
    );
    // A write that changes the answer changes its digest and tag.
    common::import_flags(
        &world,
        "development",
        json!({"features": [{"name": "everyone", "enabled": false}]}),
    )?;
    let changed = client::render(&world.ctx, question, Some(digest))
        .await?
        .ok_or("the answer changed")?;
    assert_ne!((changed.digest, changed.etag.as_str()), (digest, etag.as_str()));
    Ok(())
}

#[tokio::test]
async fn the_document_keeps_to_the_projects_prefix_and_tags_asked_for() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let caller = common::admin(flag_admin::catalogue::tags::ADD_TO_FEATURE);
    let shop: flag_admin::catalogue::projects::types::CreateProject =
        serde_json::from_value(json!({"id": "shop", "name": "Shop"}))?;
    flag_admin::catalogue::projects::create(
        &world.ctx,
        &common::admin(flag_admin::catalogue::projects::CREATE),
        shop,
    )
    .await?;
    let document: flag_eval::ClientFeatures =
        serde_json::from_value(json!({"features": [{"name": "cart", "enabled": true}]}))?;
    flag_admin::app::seeding::import(world.store(), "shop", "development", &document)?;
    let web: flag_admin::catalogue::tags::types::TagIn =
        serde_json::from_value(json!({"type": "simple", "value": "web"}))?;
    flag_admin::catalogue::tags::add_to_feature(&world.ctx, &caller, "pro-only".into(), web).await?;

    for (token, pairs, expected) in [
        (access(None, Some(&["shop"])), vec![], vec!["cart"]),
        (access(None, None), vec![("project", "shop")], vec!["cart"]),
        (
            access(None, Some(&["default"])),
            vec![("project", "shop")],
            vec!["everyone", "pro-only", "switched-off"],
        ),
        (access(None, None), vec![("namePrefix", "pro")], vec!["pro-only"]),
        (
            access(None, None),
            vec![("tag", "simple:web"), ("tag", "simple:none")],
            vec!["pro-only"],
        ),
        (access(None, None), vec![("tag", "simple:none")], vec![]),
    ] {
        let (document, _, _) = rendered(&world, features_question(&token, &pairs)?).await?;
        assert_eq!(names(&document), expected, "{pairs:?}");
    }
    let (everything, _, _) = rendered(&world, features_question(&access(None, None), &[])?).await?;
    assert_eq!(names(&everything).len(), 4);
    Ok(())
}

#[tokio::test]
async fn segments_are_inlined_for_old_sdks_and_sent_apart_to_new_ones() -> Outcome {
    let world = World::new()?;
    common::import_flags(
        &world,
        "development",
        json!({
            "features": [{"name": "beta", "enabled": true, "strategies": [{"name": "default", "segments": [7]}]}],
            "segments": [{"id": 7, "name": "pro-users", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}]
        }),
    )?;
    let token = access(None, None);
    let old = client::question(
        &token,
        query(&[]),
        Protocol::Features(ClientSpec::parse(Some("4.1.0"))?),
    )?;
    let (inlined, _, _) = rendered(&world, old).await?;
    let strategy = &inlined["features"][0]["strategies"][0];
    assert_eq!(strategy["constraints"][0]["contextName"], "plan", "{inlined}");
    assert!(
        strategy.get("segments").is_none() && inlined.get("segments").is_none(),
        "{inlined}"
    );

    let (apart, _, _) = rendered(&world, features_question(&token, &[])?).await?;
    let strategy = &apart["features"][0]["strategies"][0];
    assert_eq!(strategy["constraints"], json!([]), "{apart}");
    let id = apart["segments"][0]["id"].clone();
    assert_eq!(strategy["segments"], json!([id]), "{apart}");
    assert_eq!(apart["segments"][0]["constraints"][0]["values"], json!(["pro"]));

    // One flag, as the token's SDK sees it.
    let one = common::json(
        &client::feature(
            &world.ctx,
            &token,
            "beta".into(),
            None,
            ClientSpec::parse(Some("5.0.0"))?,
        )
        .await?,
    )?;
    assert_eq!(
        (&one["name"], &one["strategies"][0]["segments"]),
        (&json!("beta"), &json!([id]))
    );
    let inlined = common::json(
        &client::feature(&world.ctx, &token, "beta".into(), None, ClientSpec::parse(None)?).await?,
    )?;
    assert_eq!(inlined["strategies"][0]["constraints"][0]["contextName"], "plan");
    Ok(())
}

#[tokio::test]
async fn one_flag_is_found_only_in_the_tokens_environment_and_projects() -> Outcome {
    let world = World::new()?;
    common::demo_flags(&world)?;
    let spec = ClientSpec::parse(None)?;
    let found = client::feature(&world.ctx, &access(None, None), "everyone".into(), None, spec).await?;
    assert_eq!(common::json(&found)?["enabled"], true);
    // The token's environment wins over the one asked for.
    let bound = client::feature(
        &world.ctx,
        &access(Some("production"), None),
        "everyone".into(),
        Some("development".into()),
        spec,
    )
    .await?;
    assert_eq!(common::json(&bound)?["enabled"], false);
    let asked = client::feature(
        &world.ctx,
        &access(None, None),
        "everyone".into(),
        Some("production".into()),
        spec,
    )
    .await?;
    assert_eq!(common::json(&asked)?["enabled"], false);
    for (token, name) in [
        (access(None, None), "missing"),
        (access(None, Some(&["shop"])), "everyone"),
    ] {
        let refused = client::feature(&world.ctx, &token, name.into(), None, spec).await;
        assert!(
            matches!(&refused, Err(AdminError::NotFound(message)) if message == &format!("could not find feature flag {name}")),
            "{refused:?}"
        );
    }
    Ok(())
}
