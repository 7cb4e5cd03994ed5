//! Flag changes as events: the delta API's answers, streams and their limits, from
//! `delivery::delta`, on the backend under test.

use std::sync::Arc;

use flag_admin::delivery::Delivery;
use flag_admin::delivery::client::types::{ClientFeaturesQuery, ClientQuery};
use flag_admin::delivery::client::{self, Protocol};
use flag_admin::delivery::delta::{self, DeltaAnswer, Feed, Feeds, Opening, Stream};
use flag_admin::identity::auth::{self, ClientAccess, Credential};
use flag_admin::identity::tokens::{self, types::CreateToken};
use flag_admin::runtime::domain::TokenType;
use flag_admin::{AdminError, Settings};
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

fn access(token: &str) -> ClientAccess {
    ClientAccess {
        environment: Some("development".into()),
        projects: None,
        token: token.into(),
    }
}

/// The delta question of `access` with a name prefix.
fn question(access: &ClientAccess, prefix: &str) -> Result<ClientFeaturesQuery, AdminError> {
    let query = ClientQuery {
        name_prefix: Some(prefix.into()),
        ..ClientQuery::default()
    };
    client::question(access, query, Protocol::Delta)
}

/// The event types of a delta document, each with the flag or segment it names.
fn summary(body: &str) -> Result<Vec<String>, serde_json::Error> {
    let document: Value = serde_json::from_str(body)?;
    Ok(document["events"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|event| {
            let kind = event["type"].as_str().unwrap_or_default();
            match kind {
                "hydration" => format!(
                    "hydration {}+{}",
                    event["features"].as_array().map_or(0, Vec::len),
                    event["segments"].as_array().map_or(0, Vec::len)
                ),
                "feature-updated" => {
                    format!("{kind} {}", event["feature"]["name"].as_str().unwrap_or_default())
                }
                "feature-removed" => format!("{kind} {}", event["featureName"].as_str().unwrap_or_default()),
                _ => kind.to_owned(),
            }
        })
        .collect())
}

/// Switches `name` in development by importing it again.
fn switch(world: &World, name: &str, enabled: bool) -> Outcome {
    common::import_flags(
        world,
        "development",
        json!({"features": [{"name": name, "enabled": enabled, "strategies": [{"name": "default"}]}]}),
    )
}

/// The feed of the question with `prefix`, kept by the delivery wing.
fn feed(world: &World, prefix: &str) -> Result<Arc<Feed>, AdminError> {
    Ok(world
        .ctx
        .delivery()
        .feeds()
        .feed(question(&access("delta"), prefix)?))
}

#[tokio::test]
async fn the_delta_api_hydrates_then_sends_only_what_changed() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    common::demo_flags(&world)?;
    assert!(ctx.delivery().feeds().is_empty());
    let feed = feed(&world, "")?;
    assert_eq!(ctx.delivery().feeds().len(), 1);
    assert_eq!(feed.question().environment, "development");
    assert!(
        feed.snapshot().is_none(),
        "nothing is loaded before it is asked for"
    );

    // No revision held: the whole state, as of the revision it reflects.
    let first = ctx.revision_now().await?;
    let DeltaAnswer::Hydration(snapshot) = feed.delta(ctx, first, None).await? else {
        return Err("an SDK that holds nothing gets a hydration".into());
    };
    assert_eq!(snapshot.revision(), first);
    assert_eq!(summary(&snapshot.hydration())?, ["hydration 3+0"]);
    let hydration: Value = serde_json::from_str(&snapshot.hydration())?;
    assert_eq!(hydration["events"][0]["eventId"], first);
    assert_eq!(hydration["events"][0]["features"][0]["name"], "everyone");
    // The state held serves every revision up to its own.
    assert!(Arc::ptr_eq(&feed.advance(ctx, first).await?, &snapshot));
    assert!(Arc::ptr_eq(&feed.advance(ctx, first - 1).await?, &snapshot));
    assert!(feed.snapshot().is_some_and(|held| Arc::ptr_eq(&held, &snapshot)));
    // Nothing changed since.
    assert!(matches!(
        feed.delta(ctx, first, Some(first)).await?,
        DeltaAnswer::NotModified { revision } if revision == first
    ));

    switch(&world, "switched-off", true)?;
    let second = ctx.revision_now().await?;
    let DeltaAnswer::Events { revision, body } = feed.delta(ctx, second, Some(first)).await? else {
        return Err("an SDK one change behind gets the change".into());
    };
    assert_eq!(
        (revision, summary(&body)?),
        (second, vec!["feature-updated switched-off".to_owned()])
    );
    switch(&world, "everyone", false)?;
    let third = ctx.revision_now().await?;
    let DeltaAnswer::Events { revision, body } = feed.delta(ctx, third, Some(first)).await? else {
        return Err("an SDK two changes behind gets both".into());
    };
    assert_eq!(revision, third);
    assert_eq!(
        summary(&body)?,
        ["feature-updated switched-off", "feature-updated everyone"]
    );
    let changes = feed
        .since(first)
        .ok_or("the feed remembers what came after its first load")?;
    assert_eq!(
        changes.iter().map(|change| change.revision()).collect::<Vec<_>>(),
        [second, third]
    );
    assert_eq!(delta::joined(&changes), body);
    assert_eq!(summary(changes[1].body())?, ["feature-updated everyone"]);

    // A revision this feed never loaded, or one from the future: the whole state again.
    for known in [first - 1, third + 1000] {
        let answer = feed.delta(ctx, third, Some(known)).await?;
        assert!(
            matches!(&answer, DeltaAnswer::Hydration(snapshot) if snapshot.revision() == third),
            "{known}: {answer:?}"
        );
    }
    assert!(feed.since(first - 1).is_none());
    // A name prefix narrows what is sent.
    let narrow = self::feed(&world, "pro")?;
    let DeltaAnswer::Hydration(snapshot) = narrow.delta(ctx, third, None).await? else {
        return Err("an SDK that holds nothing gets a hydration".into());
    };
    assert_eq!(summary(&snapshot.hydration())?, ["hydration 1+0"]);
    assert_eq!(ctx.delivery().feeds().len(), 2);
    Ok(())
}

#[tokio::test]
async fn a_stream_opens_with_the_state_and_receives_every_change_once() -> Outcome {
    let world = World::new()?;
    let (ctx, delivery) = (&world.ctx, world.ctx.delivery());
    common::demo_flags(&world)?;
    let token = access("stream-token");
    let mut stream = delta::follow(ctx, delivery, &token, question(&token, "")?, None).await?;
    let opened = ctx.revision_now().await?;
    assert!(
        matches!(&stream.subscription.opening, Opening::Hydration(snapshot) if snapshot.revision() == opened)
    );
    assert_eq!(stream.subscription.opening.revision(), opened);
    assert_eq!((delivery.feeds().streams(), stream.feed.followers()), (1, 1));
    assert!(delivery.feeds().any_followed());

    // The server loads each new revision into the followed feeds; the change reaches the stream.
    switch(&world, "switched-off", true)?;
    let changed = ctx.revision_now().await?;
    delivery.feeds().advance_followed(ctx, changed).await?;
    let change = stream.subscription.changes.try_recv()?;
    assert_eq!(
        (change.revision(), summary(change.body())?),
        (changed, vec!["feature-updated switched-off".to_owned()])
    );
    assert!(
        stream.subscription.changes.try_recv().is_err(),
        "each change is sent once"
    );
    // A revision already loaded sends nothing again.
    delivery.feeds().advance_followed(ctx, changed).await?;
    assert!(stream.subscription.changes.try_recv().is_err());

    // A stream that resumes from a revision the feed loaded gets what came after it.
    let resumed = delta::follow(ctx, delivery, &token, question(&token, "")?, Some(opened)).await?;
    let Opening::Resumed { revision, changes } = &resumed.subscription.opening else {
        return Err("a stream resuming from a loaded revision is not hydrated".into());
    };
    assert_eq!((*revision, changes.len()), (changed, 1));
    let current = delta::follow(ctx, delivery, &token, question(&token, "")?, Some(changed)).await?;
    assert!(matches!(&current.subscription.opening, Opening::Resumed { changes, .. } if changes.is_empty()));
    let unknown = delta::follow(ctx, delivery, &token, question(&token, "")?, Some(-5)).await?;
    assert!(matches!(unknown.subscription.opening, Opening::Hydration(_)));
    assert_eq!(delivery.feeds().streams(), 4);

    // Dropped, streams give their places back.
    drop((stream, resumed, current, unknown));
    assert_eq!(delivery.feeds().streams(), 0);
    assert!(!delivery.feeds().any_followed());
    Ok(())
}

/// Opens a stream of the question with `prefix` for `token`.
async fn open(world: &World, token: &ClientAccess, prefix: &str) -> Result<Stream, AdminError> {
    delta::follow(
        &world.ctx,
        world.ctx.delivery(),
        token,
        question(token, prefix)?,
        None,
    )
    .await
}

#[tokio::test]
async fn streams_are_limited_per_server_per_token_and_per_tokens_questions() -> Outcome {
    let world = World::with(Settings {
        streams: 3,
        streams_per_token: 2,
        ..Settings::default()
    })?;
    let (one, two, three) = (access("one"), access("two"), access("three"));
    let held = [open(&world, &one, "").await?, open(&world, &one, "").await?];
    let per_token = open(&world, &one, "").await;
    assert!(
        matches!(&per_token, Err(AdminError::Throttled { message, retry_after: 30 }) if message.contains("2 streams")),
        "{per_token:?}"
    );
    let third = open(&world, &two, "").await?;
    let server = open(&world, &three, "").await;
    assert!(
        matches!(server, Err(AdminError::AtCapacity { retry_after: 30, .. })),
        "{server:?}"
    );
    drop(third);
    open(&world, &three, "").await?;
    drop(held);
    // The limits are the delivery wing's state, set from the settings it is made with.
    let closed = Delivery::new(&Settings {
        streams: 0,
        ..Settings::default()
    });
    let refused = delta::follow(&world.ctx, &closed, &one, question(&one, "")?, None).await;
    assert!(
        matches!(refused, Err(AdminError::AtCapacity { .. })),
        "{refused:?}"
    );
    let feeds = Feeds::new(1, 1);
    assert_eq!(
        (feeds.streams(), feeds.len(), feeds.any_followed()),
        (0, 0, false)
    );

    // One token streams at most eight different questions; the same ones again are no new ones.
    let world = World::new()?;
    let token = access("many");
    let mut held = Vec::new();
    for question in 0..8 {
        held.push(open(&world, &token, &format!("p{question}")).await?);
    }
    let ninth = open(&world, &token, "p8").await;
    assert!(
        matches!(&ninth, Err(AdminError::Throttled { message, .. }) if message.contains("8 different")),
        "{ninth:?}"
    );
    held.push(open(&world, &token, "p0").await?);
    open(&world, &access("other"), "p8").await?;
    // The delta API never refuses a question: past the feeds kept, an answer comes from a feed
    // of its own.
    let ctx = &world.ctx;
    let revision = ctx.revision_now().await?;
    for question in 0..(delta::CAPACITY + 10) {
        let feed = self::feed(&world, &format!("d{question}"))?;
        assert!(matches!(
            feed.delta(ctx, revision, None).await?,
            DeltaAnswer::Hydration(_)
        ));
    }
    assert_eq!(ctx.delivery().feeds().len(), delta::CAPACITY);
    Ok(())
}

#[tokio::test]
async fn a_stream_is_admitted_while_its_token_is() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let caller = common::admin(tokens::CREATE);
    let request = CreateToken {
        token_name: Some("sdk".into()),
        username: None,
        token_type: TokenType::Backend,
        environment: None,
        projects: None,
        project: None,
        expires_at: None,
    };
    let created = tokens::create(ctx, &caller, request).await?;
    let Credential::Client(token) = auth::resolve_token(ctx, identity, &created.secret).await? else {
        return Err("a backend token resolves to client access".into());
    };
    let stream = open(&world, &token, "").await?;
    assert!(stream.still_admitted(ctx, identity).await?);
    tokens::delete(ctx, &caller, &created.secret).await?;
    assert!(!stream.still_admitted(ctx, identity).await?);
    Ok(())
}
