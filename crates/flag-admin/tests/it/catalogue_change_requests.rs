//! Change requests: `catalogue::change_requests` on the backend under test: the rule, a request's
//! whole life, who may do what, conflicts, and scheduled requests applied once.

use flag_admin::AdminError;
use flag_admin::catalogue::change_requests::{self, State, types};
use flag_admin::catalogue::{features, strategies};
use flag_admin::identity::auth::{Access, Caller};
use flag_admin::runtime::domain::RootRole;
use serde_json::json;

use crate::common::{self, Outcome, World};

fn body<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    match serde_json::from_value(value) {
        Ok(parsed) => parsed,
        Err(error) => panic!("the test's body does not parse: {error}"),
    }
}

/// A user with `role` admitted to `access`.
fn as_user(id: i32, role: RootRole, access: Access) -> Caller {
    match access.admit_in(common::user(id, role), Some("default")) {
        Ok(caller) => caller,
        Err(error) => panic!("user {id} was refused {access:?}: {error}"),
    }
}

/// Flag `f` on in production with one strategy; production takes changes only through
/// requests with one approval.
async fn protected(world: &World) -> Result<String, Box<dyn std::error::Error>> {
    let ctx = &world.ctx;
    features::create(
        ctx,
        &common::admin(features::CREATE),
        "default".into(),
        body(json!({"name": "f"})),
    )
    .await?;
    let place = ("default".to_owned(), "f".to_owned(), "production".to_owned());
    let strategy = strategies::add(
        ctx,
        &common::admin(strategies::ADD),
        place.clone(),
        body(json!({"name": "flexibleRollout", "parameters": {"rollout": "10", "stickiness": "default", "groupId": "f"}})),
    )
    .await?;
    features::switch_with(
        ctx,
        &common::admin(features::SWITCH_WITH),
        place,
        true,
        body(json!({})),
    )
    .await?;
    change_requests::set_config(
        ctx,
        &common::admin(change_requests::SET_CONFIG),
        "default".into(),
        "production".into(),
        body(json!({"changeRequestsEnabled": true, "requiredApprovals": 1})),
    )
    .await?;
    Ok(strategy.id.unwrap_or_default())
}

fn change(feature: &str, action: &str, payload: serde_json::Value) -> types::ChangeIn {
    body(json!({"feature": feature, "action": action, "payload": payload}))
}

async fn state(
    world: &World,
    caller: &Caller,
    id: i32,
    state: &str,
) -> Result<types::ChangeRequestOut, AdminError> {
    change_requests::change_state(
        &world.ctx,
        caller,
        "default".into(),
        id,
        body(json!({"state": state})),
    )
    .await
}

/// `changes` in `environment`, proposed by user 10 (an editor) and approved by user 11 (an
/// admin).
async fn approved(
    world: &World,
    environment: &str,
    changes: Vec<types::ChangeIn>,
) -> Result<types::ChangeRequestOut, AdminError> {
    let made = change_requests::add(
        &world.ctx,
        &as_user(10, RootRole::Editor, change_requests::ADD),
        "default".into(),
        environment.into(),
        changes,
    )
    .await?;
    state(
        world,
        &as_user(10, RootRole::Editor, change_requests::CHANGE_STATE),
        made.id,
        "In review",
    )
    .await?;
    state(
        world,
        &as_user(11, RootRole::Admin, change_requests::CHANGE_STATE),
        made.id,
        "Approved",
    )
    .await
}

/// Request `id` as user 11 (an admin) reads it.
async fn read_request(world: &World, id: i32) -> Result<types::ChangeRequestOut, AdminError> {
    change_requests::get(
        &world.ctx,
        &as_user(11, RootRole::Admin, change_requests::GET),
        "default".into(),
        id,
    )
    .await
}

#[tokio::test]
async fn a_request_is_made_reviewed_by_another_and_applied_once() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let strategy = protected(&world).await?;
    let config =
        change_requests::config(ctx, &common::admin(change_requests::CONFIG), "default".into()).await?;
    assert!(
        config
            .iter()
            .any(|env| env.environment == "production" && env.required_approvals == Some(1))
    );

    // The direct write is refused, naming the rule.
    let refused = strategies::delete(
        ctx,
        &common::admin(strategies::DELETE),
        ("default".into(), "f".into(), "production".into()),
        strategy.clone(),
    )
    .await;
    assert!(
        matches!(&refused, Err(AdminError::ChangeRequestRequired(message)) if message.contains("\"production\"")),
        "{refused:?}"
    );

    // An editor proposes; an API token cannot.
    let author = as_user(10, RootRole::Editor, change_requests::ADD);
    let token = Access::Person.admit(flag_admin::identity::auth::Principal::AdminToken {
        name: "t".into(),
        environments: None,
    });
    assert!(matches!(token, Err(AdminError::NoAccess(_))));
    let made = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![
            change(
                "f",
                "updateStrategy",
                json!({"id": strategy, "name": "flexibleRollout",
                "parameters": {"rollout": "50", "stickiness": "default", "groupId": "f"}}),
            ),
            change("f", "updateEnabled", json!({"enabled": true})),
        ],
    )
    .await?;
    assert_eq!(made.state, "Draft");
    assert_eq!(made.features[0].changes.len(), 2);
    assert_eq!(
        made.features[0].changes[0].payload["snapshot"]["parameters"]["rollout"],
        json!("10")
    );
    // Another change joins the same draft.
    let again = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![change(
            "f",
            "patchVariant",
            json!({"variants": [{"name": "a", "weight": 1000}]}),
        )],
    )
    .await?;
    assert_eq!(again.id, made.id);
    // Someone else does not see the draft.
    let reviewer = as_user(11, RootRole::Admin, change_requests::GET);
    let hidden = change_requests::get(ctx, &reviewer, "default".into(), made.id).await;
    assert!(matches!(hidden, Err(AdminError::NotFound(_))), "{hidden:?}");
    change_requests::set_title(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::SET_TITLE),
        "default".into(),
        made.id,
        body(json!({"title": "Half of users"})),
    )
    .await?;

    let author_moves = as_user(10, RootRole::Editor, change_requests::CHANGE_STATE);
    let sent = state(&world, &author_moves, made.id, "In review").await?;
    assert_eq!(
        (sent.state.as_str(), sent.title.as_deref()),
        ("In review", Some("Half of users"))
    );
    // What each may do now, as the console's buttons show it.
    assert_eq!(
        change_requests::moves(&common::user(10, RootRole::Editor), &sent),
        [State::Cancelled]
    );
    assert_eq!(
        change_requests::moves(&common::user(11, RootRole::Admin), &sent),
        [State::Approved, State::Cancelled, State::Rejected]
    );
    assert!(
        change_requests::check_move(&common::user(12, RootRole::Editor), &sent, State::Approved).is_err()
    );
    // The author may not approve their own; an editor without the permission may not either.
    let own = state(&world, &author_moves, made.id, "Approved").await;
    assert!(matches!(own, Err(AdminError::NoAccess(_))), "{own:?}");
    let editor = as_user(12, RootRole::Editor, change_requests::CHANGE_STATE);
    let unpermitted = state(&world, &editor, made.id, "Approved").await;
    assert!(
        matches!(&unpermitted, Err(AdminError::NoAccess(message)) if message.contains("APPROVE_CHANGE_REQUEST")),
        "{unpermitted:?}"
    );
    // Not yet approved: not applied.
    let admin = as_user(11, RootRole::Admin, change_requests::CHANGE_STATE);
    let early = state(&world, &admin, made.id, "Applied").await;
    assert!(matches!(early, Err(AdminError::InvalidOperation(_))), "{early:?}");
    change_requests::comment(
        ctx,
        &as_user(11, RootRole::Admin, change_requests::COMMENT),
        "default".into(),
        made.id,
        body(json!({"text": "Looks right"})),
    )
    .await?;
    let approved = state(&world, &admin, made.id, "Approved").await?;
    assert_eq!(approved.state, "Approved");
    assert_eq!(approved.approvals[0].created_by.id, 11);
    assert_eq!(approved.comments[0].text, "Looks right");
    let twice = state(&world, &admin, made.id, "Approved").await;
    assert!(matches!(twice, Err(AdminError::InvalidOperation(_))), "{twice:?}");

    let applied = state(&world, &admin, made.id, "Applied").await?;
    assert_eq!(applied.state, "Applied");
    assert!(applied.state_timestamps.contains_key("Applied"));
    let now = strategies::get(
        ctx,
        &common::admin(strategies::GET),
        ("default".into(), "f".into(), "production".into()),
        strategy.clone(),
    )
    .await?;
    assert_eq!(common::json(&now)?["parameters"]["rollout"], json!("50"));
    // Applied once: again is refused.
    let again = state(&world, &admin, made.id, "Applied").await;
    assert!(matches!(again, Err(AdminError::InvalidOperation(_))), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn a_change_whose_base_moved_is_a_conflict_and_is_not_applied() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let strategy = protected(&world).await?;
    let author = as_user(10, RootRole::Editor, change_requests::ADD);
    let made = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![change("f", "deleteStrategy", json!({"id": strategy}))],
    )
    .await?;
    let mover = as_user(10, RootRole::Editor, change_requests::CHANGE_STATE);
    state(&world, &mover, made.id, "In review").await?;
    let admin = as_user(11, RootRole::Admin, change_requests::CHANGE_STATE);
    state(&world, &admin, made.id, "Approved").await?;
    // A second request, applied first, changes the same strategy.
    let other = change_requests::add(
        ctx,
        &as_user(12, RootRole::Editor, change_requests::ADD),
        "default".into(),
        "production".into(),
        vec![change(
            "f",
            "updateStrategy",
            json!({"id": strategy, "name": "default"}),
        )],
    )
    .await?;
    state(
        &world,
        &as_user(12, RootRole::Editor, change_requests::CHANGE_STATE),
        other.id,
        "In review",
    )
    .await?;
    state(&world, &admin, other.id, "Approved").await?;
    state(&world, &admin, other.id, "Applied").await?;

    let read = read_request(&world, made.id).await?;
    assert_eq!(
        read.features[0].changes[0].conflict.as_deref(),
        Some("The strategy changed since this change was made")
    );
    let refused = state(&world, &admin, made.id, "Applied").await;
    assert!(
        matches!(&refused, Err(AdminError::Conflict(message)) if message.contains("changed since")),
        "{refused:?}"
    );
    let still = read_request(&world, made.id).await?;
    assert_eq!(still.state, "Approved", "nothing was applied");
    Ok(())
}

#[tokio::test]
async fn a_scheduled_request_applies_itself_once_when_due() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    protected(&world).await?;
    let made = approved(
        &world,
        "production",
        vec![change("f", "updateEnabled", json!({"enabled": false}))],
    )
    .await?;
    let admin = as_user(11, RootRole::Admin, change_requests::CHANGE_STATE);
    // A time without a zone does not read; one in the past is refused.
    let zoneless = serde_json::from_value::<types::ChangeStateIn>(
        json!({"state": "Scheduled", "scheduledAt": "2999-01-01T00:00:00"}),
    );
    assert!(zoneless.is_err());
    let past = change_requests::change_state(
        ctx,
        &admin,
        "default".into(),
        made.id,
        body(json!({"state": "Scheduled", "scheduledAt": "2020-01-01T00:00:00Z"})),
    )
    .await;
    assert!(matches!(past, Err(AdminError::Validation { .. })), "{past:?}");
    let at = chrono::Utc::now() + chrono::TimeDelta::milliseconds(300);
    let scheduled = change_requests::change_state(
        ctx,
        &admin,
        "default".into(),
        made.id,
        body(json!({"state": "Scheduled", "scheduledAt": at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)})),
    )
    .await?;
    assert_eq!(scheduled.state, "Scheduled");
    assert_eq!(
        scheduled
            .schedule
            .as_ref()
            .map(|schedule| schedule.status.as_str()),
        Some("pending")
    );
    let listed = change_requests::scheduled(
        ctx,
        &as_user(11, RootRole::Admin, change_requests::SCHEDULED),
        "default".into(),
        vec!["f".into()],
    )
    .await?;
    assert_eq!(listed.iter().map(|item| item.id).collect::<Vec<_>>(), [made.id]);
    let pending = change_requests::pending_for_feature(
        ctx,
        &as_user(11, RootRole::Admin, change_requests::PENDING_FOR_FEATURE),
        "default".into(),
        "f".into(),
    )
    .await?;
    assert_eq!(pending.len(), 1);

    // Not due yet: nothing.
    let early = change_requests::apply_due(ctx).await?;
    assert_eq!((early.applied, early.failed), (0, 0));
    assert!(early.next.is_some(), "it is pending");
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let due = change_requests::apply_due(ctx).await?;
    assert_eq!((due.applied, due.failed, due.next), (1, 0, None));
    let again = change_requests::apply_due(ctx).await?;
    assert_eq!((again.applied, again.failed), (0, 0), "applied once");
    let read = read_request(&world, made.id).await?;
    assert_eq!(read.state, "Applied");
    let flag = features::get(
        ctx,
        &common::admin(features::GET),
        ("default".into(), "f".into()),
        body(json!({})),
    )
    .await?;
    let production = common::json(&flag)?["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|env| env["name"] == "production")
                .cloned()
        })
        .ok_or("no production")?;
    assert_eq!(production["enabled"], json!(false));
    Ok(())
}

#[tokio::test]
async fn a_scheduled_request_that_cannot_apply_is_marked_failed_and_others_due_with_it_apply() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let strategy = protected(&world).await?;
    for name in ["g", "h"] {
        features::create(
            ctx,
            &common::admin(features::CREATE),
            "default".into(),
            body(json!({"name": name})),
        )
        .await?;
    }
    // A good change before the one that cannot apply: neither may be made.
    let made = approved(
        &world,
        "production",
        vec![
            change("g", "updateEnabled", json!({"enabled": true})),
            change("f", "deleteStrategy", json!({"id": strategy})),
        ],
    )
    .await?;
    let other = approved(
        &world,
        "production",
        vec![change("h", "updateEnabled", json!({"enabled": true}))],
    )
    .await?;
    let admin = as_user(11, RootRole::Admin, change_requests::CHANGE_STATE);
    let at = chrono::Utc::now() + chrono::TimeDelta::milliseconds(200);
    for id in [made.id, other.id] {
        change_requests::change_state(
            ctx,
            &admin,
            "default".into(),
            id,
            body(json!({"state": "Scheduled", "scheduledAt": at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)})),
        )
        .await?;
    }
    // The rule goes off, the strategy is removed directly: the scheduled deletion has nothing left.
    change_requests::set_config(
        ctx,
        &common::admin(change_requests::SET_CONFIG),
        "default".into(),
        "production".into(),
        body(json!({"changeRequestsEnabled": false})),
    )
    .await?;
    strategies::delete(
        ctx,
        &common::admin(strategies::DELETE),
        ("default".into(), "f".into(), "production".into()),
        strategy,
    )
    .await?;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let due = change_requests::apply_due(ctx).await?;
    assert_eq!((due.applied, due.failed), (1, 1));
    let again = change_requests::apply_due(ctx).await?;
    assert_eq!(
        (again.applied, again.failed),
        (0, 0),
        "a failed schedule is not retried"
    );
    let read = read_request(&world, made.id).await?;
    assert_eq!(read.state, "Scheduled");
    let schedule = read.schedule.ok_or("no schedule")?;
    assert_eq!(schedule.status, "failed");
    assert!(
        schedule
            .reason
            .as_ref()
            .is_some_and(|reason| reason.contains("Strategy has been deleted")),
        "{:?}",
        schedule.reason
    );
    assert_eq!(read_request(&world, other.id).await?.state, "Applied");
    let enabled = |name: &'static str| async move {
        let flag = features::get(
            ctx,
            &common::admin(features::GET),
            ("default".into(), name.into()),
            body(json!({})),
        )
        .await?;
        Ok::<_, Box<dyn std::error::Error>>(
            common::json(&flag)?["environments"]
                .as_array()
                .and_then(|environments| environments.iter().find(|env| env["name"] == "production"))
                .map(|production| production["enabled"].clone()),
        )
    };
    assert_eq!(
        enabled("g").await?,
        Some(json!(false)),
        "the failed request changed nothing"
    );
    assert_eq!(enabled("h").await?, Some(json!(true)), "the other one applied");
    Ok(())
}

#[tokio::test]
async fn drafts_are_edited_discarded_and_checked_as_direct_writes() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    protected(&world).await?;
    let author = as_user(10, RootRole::Editor, change_requests::ADD);
    // Checked as the direct write: an unknown action, a bad strategy, variants that do not add up.
    for (action, payload) in [
        ("renameFeature", json!({})),
        (
            "addStrategy",
            json!({"name": "flexibleRollout", "constraints": [{"contextName": "userId", "operator": "NOPE", "values": []}]}),
        ),
        (
            "patchVariant",
            json!({"variants": [{"name": "a", "weight": 2000, "weightType": "fix"}]}),
        ),
        ("updateEnabled", json!({"enabled": "yes"})),
    ] {
        let refused = change_requests::add(
            ctx,
            &author,
            "default".into(),
            "production".into(),
            vec![change("f", action, payload)],
        )
        .await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{action}: {refused:?}"
        );
    }
    let unknown = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![change("nowhere", "updateEnabled", json!({"enabled": true}))],
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    // A viewer may not propose what they may not write.
    let viewer = as_user(13, RootRole::Viewer, change_requests::ADD);
    let refused = change_requests::add(
        ctx,
        &viewer,
        "default".into(),
        "production".into(),
        vec![change("f", "updateEnabled", json!({"enabled": false}))],
    )
    .await;
    assert!(matches!(refused, Err(AdminError::NoAccess(_))), "{refused:?}");

    let made = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![
            change("f", "updateEnabled", json!({"enabled": false})),
            change("f", "archiveFeature", json!(null)),
        ],
    )
    .await?;
    let first = made.features[0].changes[0].id;
    let second = made.features[0].changes[1].id;
    let edited = change_requests::edit_change(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::EDIT_CHANGE),
        "default".into(),
        (made.id, first),
        change("f", "addStrategy", json!({"name": "default"})),
    )
    .await?;
    let actions: Vec<&str> = edited.features[0]
        .changes
        .iter()
        .map(|change| change.action.as_str())
        .collect();
    assert_eq!(actions, ["archiveFeature", "addStrategy"]);
    // Only the author edits.
    let stranger = change_requests::discard_change(
        ctx,
        &as_user(11, RootRole::Admin, change_requests::DISCARD_CHANGE),
        "default".into(),
        (made.id, second),
    )
    .await;
    assert!(
        matches!(stranger, Err(AdminError::NotFound(_) | AdminError::NoAccess(_))),
        "{stranger:?}"
    );
    change_requests::discard_change(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::DISCARD_CHANGE),
        "default".into(),
        (made.id, second),
    )
    .await?;
    change_requests::discard(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::DISCARD),
        "default".into(),
        made.id,
    )
    .await?;
    let gone = change_requests::get(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::GET),
        "default".into(),
        made.id,
    )
    .await;
    assert!(matches!(gone, Err(AdminError::NotFound(_))), "{gone:?}");
    let listed = change_requests::list(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::LIST),
        "default".into(),
        true,
    )
    .await?;
    assert!(listed.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_file_imported_at_start_may_not_change_a_protected_environment() -> Outcome {
    let world = World::new()?;
    protected(&world).await?;
    let document: flag_eval::ClientFeatures = serde_json::from_value(json!({"version": 2, "features": [
        {"name": "f", "enabled": false, "strategies": [{"name": "default"}]}
    ]}))?;
    let refused = flag_admin::app::seeding::import(world.store(), "default", "production", &document);
    assert!(
        matches!(refused, Err(AdminError::ChangeRequestRequired(_))),
        "{refused:?}"
    );
    // The same file in an environment without the rule goes in.
    flag_admin::app::seeding::import(world.store(), "default", "development", &document)?;
    Ok(())
}

#[tokio::test]
async fn a_project_segment_changes_through_a_request_and_a_global_one_does_not() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let strategy = protected(&world).await?;
    let segments = flag_admin::catalogue::segments::create(
        ctx,
        &common::admin(flag_admin::catalogue::segments::CREATE),
        body(json!({"name": "beta", "project": "default",
                    "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]})),
    )
    .await?;
    let global = flag_admin::catalogue::segments::create(
        ctx,
        &common::admin(flag_admin::catalogue::segments::CREATE),
        body(json!({"name": "everyone", "constraints": []})),
    )
    .await?;
    // The rule is off for a moment to use the segment in production.
    change_requests::set_config(
        ctx,
        &common::admin(change_requests::SET_CONFIG),
        "default".into(),
        "production".into(),
        body(json!({"changeRequestsEnabled": false})),
    )
    .await?;
    strategies::update(
        ctx,
        &common::admin(strategies::UPDATE),
        ("default".into(), "f".into(), "production".into()),
        strategy,
        body(json!({"name": "default", "segments": [segments.id]})),
    )
    .await?;
    change_requests::set_config(
        ctx,
        &common::admin(change_requests::SET_CONFIG),
        "default".into(),
        "production".into(),
        body(json!({"changeRequestsEnabled": true})),
    )
    .await?;
    // Directly: refused, since production uses it.
    let direct = flag_admin::catalogue::segments::update(
        ctx,
        &common::admin(flag_admin::catalogue::segments::UPDATE),
        segments.id,
        body(json!({"name": "beta", "project": "default", "constraints": []})),
    )
    .await;
    assert!(
        matches!(direct, Err(AdminError::ChangeRequestRequired(_))),
        "{direct:?}"
    );

    let author = as_user(10, RootRole::Editor, change_requests::ADD);
    let segment_change = |id: i32, feature: Option<&str>| -> types::ChangeIn {
        body(json!({"feature": feature, "action": "updateSegment",
                    "payload": {"id": id, "name": "beta", "project": "default",
                                "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"]}]}}))
    };
    let refused = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![segment_change(global.id, None)],
    )
    .await;
    assert!(
        matches!(refused, Err(AdminError::InvalidOperation(_))),
        "{refused:?}"
    );
    let named = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![segment_change(segments.id, Some("f"))],
    )
    .await;
    assert!(matches!(named, Err(AdminError::Validation { .. })), "{named:?}");
    let made = change_requests::add(
        ctx,
        &author,
        "default".into(),
        "production".into(),
        vec![segment_change(segments.id, None)],
    )
    .await?;
    assert_eq!(made.segments.len(), 1);
    assert_eq!(made.segments[0].name, "beta");
    assert_eq!(
        made.segments[0].payload["snapshot"]["constraints"][0]["values"],
        json!(["1"])
    );
    state(
        &world,
        &as_user(10, RootRole::Editor, change_requests::CHANGE_STATE),
        made.id,
        "In review",
    )
    .await?;
    let admin = as_user(11, RootRole::Admin, change_requests::CHANGE_STATE);
    state(&world, &admin, made.id, "Approved").await?;
    let applied = state(&world, &admin, made.id, "Applied").await?;
    assert_eq!(applied.state, "Applied");
    let now = flag_admin::catalogue::segments::get(ctx, segments.id).await?;
    assert_eq!(common::json(&now)?["constraints"][0]["values"], json!(["1", "2"]));
    Ok(())
}

#[tokio::test]
async fn a_request_passes_the_rule_in_its_own_environment_only() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    protected(&world).await?;
    // Archiving through the flag's metadata is a write to every environment: refused.
    let archived = features::update(
        ctx,
        &common::admin(features::UPDATE),
        ("default".into(), "f".into()),
        body(json!({"archived": true})),
    )
    .await;
    assert!(
        matches!(archived, Err(AdminError::ChangeRequestRequired(_))),
        "{archived:?}"
    );
    // A request for development, which needs none, cannot archive the flag production protects.
    let made = approved(
        &world,
        "development",
        vec![change("f", "archiveFeature", json!(null))],
    )
    .await?;
    let admin = as_user(11, RootRole::Admin, change_requests::CHANGE_STATE);
    let refused = state(&world, &admin, made.id, "Applied").await;
    assert!(
        matches!(&refused, Err(AdminError::ChangeRequestRequired(message)) if message.contains("\"production\"")),
        "{refused:?}"
    );
    let still = read_request(&world, made.id).await?;
    assert_eq!(still.state, "Approved", "nothing was applied");
    Ok(())
}

#[tokio::test]
async fn an_edit_drops_the_approvals_given_before_it() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    protected(&world).await?;
    change_requests::set_config(
        ctx,
        &common::admin(change_requests::SET_CONFIG),
        "default".into(),
        "production".into(),
        body(json!({"changeRequestsEnabled": true, "requiredApprovals": 2})),
    )
    .await?;
    let made = change_requests::add(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::ADD),
        "default".into(),
        "production".into(),
        vec![change("f", "updateEnabled", json!({"enabled": false}))],
    )
    .await?;
    state(
        &world,
        &as_user(10, RootRole::Editor, change_requests::CHANGE_STATE),
        made.id,
        "In review",
    )
    .await?;
    let first = state(
        &world,
        &as_user(11, RootRole::Admin, change_requests::CHANGE_STATE),
        made.id,
        "Approved",
    )
    .await?;
    assert_eq!((first.state.as_str(), first.approvals.len()), ("In review", 1));
    let edited = change_requests::edit_change(
        ctx,
        &as_user(10, RootRole::Editor, change_requests::EDIT_CHANGE),
        "default".into(),
        (made.id, first.features[0].changes[0].id),
        change("f", "archiveFeature", json!(null)),
    )
    .await?;
    assert!(
        edited.approvals.is_empty(),
        "the approval was of what was there before"
    );
    let second = state(
        &world,
        &as_user(12, RootRole::Admin, change_requests::CHANGE_STATE),
        made.id,
        "Approved",
    )
    .await?;
    assert_eq!((second.state.as_str(), second.approvals.len()), ("In review", 1));
    Ok(())
}
