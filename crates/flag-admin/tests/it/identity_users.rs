//! Users and the signed-in caller: `identity::users`, `identity::me` and the password rules of
//! `identity::password`, on the backend under test.

use flag_admin::AdminError;
use flag_admin::identity::auth::{Access, Caller, Principal};
use flag_admin::identity::users::types::{CreateUserRequest, UpdateUserRequest};
use flag_admin::identity::{me, password, users};
use flag_admin::runtime::domain::RootRole;
use serde_json::json;

use crate::common::{self, Outcome, World};

const PASSWORD: &str = "Edit0r-Passw0rd!";

fn person(
    email: Option<&str>,
    username: Option<&str>,
    role: RootRole,
    password: Option<&str>,
) -> CreateUserRequest {
    CreateUserRequest {
        email: email.map(str::to_owned),
        username: username.map(str::to_owned),
        name: Some("Ed".into()),
        root_role: flag_admin::runtime::domain::AnyRootRole::BuiltIn(role),
        password: password.map(str::to_owned),
        send_email: None,
    }
}

/// The paths of a validation failure's details, or a description of what came instead.
fn paths<T: std::fmt::Debug>(result: Result<T, AdminError>) -> Vec<String> {
    match result {
        Err(AdminError::Validation { details, .. }) => {
            details.into_iter().filter_map(|detail| detail.path).collect()
        }
        other => vec![format!("not a validation failure: {other:?}")],
    }
}

/// A signed-in user, admitted to `access`.
fn signed_in(id: i32, role: RootRole, access: Access) -> Result<Caller, AdminError> {
    access.admit(common::user(id, role))
}

#[tokio::test]
async fn administrators_create_update_and_delete_users() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let caller = common::admin(users::CREATE);
    let created = common::json(
        &users::create(
            ctx,
            &caller,
            person(Some(" Ed@Example.com "), None, RootRole::Editor, Some(PASSWORD)),
        )
        .await?,
    )?;
    // Stored trimmed and lower-cased; never with the password or its hash.
    assert_eq!(
        (
            &created["email"],
            &created["rootRole"],
            &created["name"],
            &created["accountType"]
        ),
        (&json!("ed@example.com"), &json!(2), &json!("Ed"), &json!("User"))
    );
    assert!(
        created.get("password").is_none() && created.get("passwordHash").is_none(),
        "{created}"
    );
    assert!(
        created["imageUrl"]
            .as_str()
            .is_some_and(|url| url.starts_with("https://gravatar.com/avatar/")),
        "{created}"
    );
    let id = i32::try_from(created["id"].as_i64().ok_or("an id")?)?;

    let listed = common::json(&users::list(ctx).await?)?;
    assert_eq!(listed["users"].as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(
        listed["rootRoles"],
        json!([{"id": 1, "name": "Admin", "type": "root"}, {"id": 2, "name": "Editor", "type": "root"},
               {"id": 3, "name": "Viewer", "type": "root"}])
    );

    let update = UpdateUserRequest {
        email: None,
        name: Some(" Edward ".into()),
        root_role: Some(flag_admin::runtime::domain::AnyRootRole::BuiltIn(
            RootRole::Viewer,
        )),
    };
    let updated = common::json(&users::update(ctx, &caller, id, update).await?)?;
    // Only the fields named change.
    assert_eq!(
        (&updated["name"], &updated["rootRole"], &updated["email"]),
        (&json!("Edward"), &json!(3), &json!("ed@example.com"))
    );
    // The console's role change reads a role id as a body's `rootRole` is read.
    let editor = common::json(&users::update(ctx, &caller, id, UpdateUserRequest::role_change(2)?).await?)?;
    assert_eq!(editor["rootRole"], json!(2));
    assert!(
        UpdateUserRequest::role_change(4).is_err(),
        "a project role is no root role"
    );
    assert!(UpdateUserRequest::role_change(0).is_err());
    // Above 5, a custom root role's id: refused at `/rootRole` when there is none.
    let no_such_role = users::update(ctx, &caller, id, UpdateUserRequest::role_change(9)?).await;
    assert!(
        matches!(no_such_role, Err(AdminError::Validation { .. })),
        "{no_such_role:?}"
    );
    let unknown = UpdateUserRequest {
        email: None,
        name: None,
        root_role: Some(flag_admin::runtime::domain::AnyRootRole::BuiltIn(
            RootRole::Editor,
        )),
    };
    let missing = users::update(ctx, &caller, id + 100, unknown).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let not_email = UpdateUserRequest {
        email: Some("not-an-email".into()),
        name: None,
        root_role: None,
    };
    assert_eq!(
        paths(users::update(ctx, &caller, id, not_email).await),
        ["/email"]
    );

    users::delete(ctx, &caller, id).await?;
    assert_eq!(common::json(&users::list(ctx).await?)?["users"], json!([]));
    let again = users::delete(ctx, &caller, id).await;
    assert!(matches!(again, Err(AdminError::NotFound(_))), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn a_user_request_that_breaks_a_rule_is_refused() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let caller = common::admin(users::CREATE);
    users::create(
        ctx,
        &caller,
        person(Some("ed@example.com"), Some("ed"), RootRole::Editor, None),
    )
    .await?;

    let nameless = users::create(ctx, &caller, person(Some(" "), None, RootRole::Viewer, None)).await;
    assert_eq!(paths(nameless), ["/email"]);
    let email_as_username = person(None, Some("x@example.com"), RootRole::Viewer, None);
    assert_eq!(
        paths(users::create(ctx, &caller, email_as_username).await),
        ["/username"]
    );
    // Every broken password rule is named: length, upper case, digit and symbol.
    let weak = users::create(
        ctx,
        &caller,
        person(Some("y@example.com"), None, RootRole::Viewer, Some("weak")),
    )
    .await;
    assert_eq!(paths(weak), ["/password"; 4]);
    // An email or a username another user has, in any letter case.
    for (email, username) in [
        (Some("ED@example.com"), None),
        (Some("z@example.com"), Some("ed")),
    ] {
        let taken = users::create(ctx, &caller, person(email, username, RootRole::Viewer, None)).await;
        assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    }
    assert_eq!(
        common::json(&users::list(ctx).await?)?["users"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    Ok(())
}

#[tokio::test]
async fn the_caller_sees_itself_with_the_permissions_of_its_role() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let admin = common::admin(users::CREATE);
    let editor = common::json(
        &users::create(
            ctx,
            &admin,
            person(Some("ed@example.com"), None, RootRole::Editor, Some(PASSWORD)),
        )
        .await?,
    )?;
    let editor_id = i32::try_from(editor["id"].as_i64().ok_or("an id")?)?;
    let viewer =
        common::json(&users::create(ctx, &admin, person(None, Some("vi"), RootRole::Viewer, None)).await?)?;
    let viewer_id = i32::try_from(viewer["id"].as_i64().ok_or("an id")?)?;

    // A token is shown as the user Unleash records for tokens, with every permission.
    let token = common::admin(me::GET);
    let me = me::get(ctx, &token).await?;
    let shown = common::json(&me.user)?;
    assert_eq!(
        (&shown["id"], &shown["username"]),
        (
            &json!(flag_store::models::Actor::ADMIN_TOKEN),
            &json!("test-token")
        )
    );
    let permissions: Vec<&str> = me
        .permissions
        .iter()
        .map(|permission| permission.permission)
        .collect();
    assert_eq!(permissions, ["ADMIN"]);

    let caller = signed_in(editor_id, RootRole::Editor, me::GET)?;
    let me = me::get(ctx, &caller).await?;
    assert_eq!(common::json(&me.user)?["email"], "ed@example.com");
    assert_eq!(me.permissions.len(), 25);
    assert!(
        me.permissions
            .iter()
            .any(|permission| permission.permission == "UPDATE_FEATURE_ENVIRONMENT"
                && permission.environment == Some("*")),
        "{:?}",
        me.permissions
    );
    assert!(me.splash.is_empty());
    me::close_splash(ctx, &caller, "new-ui".into()).await?;
    me::close_splash(ctx, &caller, "new-ui".into()).await?;
    let me = me::get(ctx, &caller).await?;
    assert_eq!(
        me.splash.into_iter().collect::<Vec<_>>(),
        [("new-ui".to_owned(), true)]
    );
    let viewer = signed_in(viewer_id, RootRole::Viewer, me::GET)?;
    assert!(me::get(ctx, &viewer).await?.permissions.is_empty());

    // The profile: the projects, the role, and whether there is a password to change.
    let profile = me::profile(ctx, &caller).await?;
    assert_eq!(profile.projects, ["default"]);
    assert_eq!((profile.root_role.id, profile.root_role.name), (2, "Editor"));
    assert!(profile.can_change_password);
    assert!(!me::profile(ctx, &viewer).await?.can_change_password);

    // A token has no profile and no dialogs to close; a user who is gone is not found.
    let no_profile = me::profile(ctx, &token).await;
    assert!(
        matches!(no_profile, Err(AdminError::Validation { .. })),
        "{no_profile:?}"
    );
    me::close_splash(ctx, &token, "new-ui".into()).await?;
    let gone = signed_in(editor_id + viewer_id + 100, RootRole::Admin, me::GET)?;
    let missing = me::get(ctx, &gone).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    Ok(())
}

#[tokio::test]
async fn a_write_on_behalf_of_a_caller_is_recorded_under_its_name() -> Outcome {
    let world = World::new()?;
    let caller = signed_in(7, RootRole::Admin, Access::Admin)?;
    assert_eq!(caller.principal(), &common::user(7, RootRole::Admin));
    assert_eq!(
        (caller.actor().name.as_str(), caller.actor().user_id),
        ("user-7", 7)
    );
    let revision = caller
        .write(&world.ctx, |conn, actor, now| {
            flag_store::queries::settings::put(conn, "test-setting", &json!(1), actor, now)?;
            flag_store::queries::events::latest_id(conn)
        })
        .await?;
    assert_eq!(world.ctx.revision_now().await?, revision);
    let events = flag_store::queries::events::of_type(&mut *world.store().connection()?, "setting-updated")?;
    let written: Vec<_> = events
        .iter()
        .map(|event| (event.created_by.as_str(), event.created_by_user_id))
        .collect();
    assert_eq!(written, [("user-7", Some(7))]);
    let principal = Principal::AdminToken {
        name: "ops".into(),
        environments: None,
    };
    assert_eq!(
        (principal.actor().name.as_str(), principal.actor().user_id),
        ("ops", flag_store::models::Actor::ADMIN_TOKEN)
    );
    Ok(())
}

#[test]
fn passwords_follow_unleashs_rules_and_verify_only_against_their_hash() -> Outcome {
    assert!(password::broken_rules(PASSWORD).is_empty());
    assert_eq!(
        password::broken_rules("short"),
        [
            "the password must be at least 10 characters long",
            "the password must contain at least one uppercase letter",
            "the password must contain at least one number",
            "the password must contain at least one special character",
        ]
    );
    assert_eq!(
        password::broken_rules("Aaaa-bbb-1234"),
        ["the password may not contain sequences of three or more repeated characters"]
    );
    let long = format!("Aa1!{}", "xy".repeat(70));
    assert_eq!(
        password::broken_rules(&long),
        ["the password must be fewer than 128 characters"]
    );
    let ids: Vec<&str> = password::RULES.iter().map(|rule| rule.id).collect();
    assert_eq!(ids, ["length", "repeat", "lower", "upper", "digit", "symbol"]);
    assert!(password::RULES.iter().all(|rule| rule.holds(PASSWORD)));

    let hash = password::hash(PASSWORD)?;
    assert!(hash.starts_with("$argon2id$"), "{hash}");
    assert_ne!(password::hash(PASSWORD)?, hash, "each hash has its own salt");
    assert!(password::verify(PASSWORD, Some(&hash)));
    assert!(!password::verify("Wrong-Passw0rd", Some(&hash)));
    assert!(!password::verify(PASSWORD, None));
    assert!(!password::verify(PASSWORD, Some("not a hash")));
    Ok(())
}

#[tokio::test]
async fn a_user_is_read_by_id_and_found_by_name_username_or_email() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let caller = common::admin(users::CREATE);
    let mut made = Vec::new();
    for (email, username, name) in [
        (Some("ada@example.com"), None, "Ada Lovelace"),
        (None, Some("grace"), "Grace Hopper"),
        (Some("alan@turing.example"), Some("alan"), "Alan Turing"),
    ] {
        let mut request = person(email, username, RootRole::Viewer, None);
        request.name = Some(name.into());
        made.push(common::json(&users::create(ctx, &caller, request).await?)?);
    }
    let id = made[1]["id"].as_i64().ok_or("no id")?;
    let read = common::json(&users::get(ctx, i32::try_from(id)?).await?)?;
    assert_eq!(read["username"], "grace", "{read}");
    assert_eq!(read["rootRole"], 3);
    assert!(matches!(
        users::get(ctx, 999_999).await,
        Err(AdminError::NotFound(_))
    ));
    let names = |found: Vec<users::types::UserOut>| -> Result<Vec<String>, serde_json::Error> {
        found
            .iter()
            .map(|user| common::json(user).map(|user| user["name"].as_str().unwrap_or_default().to_owned()))
            .collect()
    };
    // A name matches anywhere, a username or an email only at its start, in any case.
    assert_eq!(
        names(users::search(ctx, "HOPPER".into()).await?)?,
        ["Grace Hopper"]
    );
    assert_eq!(names(users::search(ctx, "gra".into()).await?)?, ["Grace Hopper"]);
    assert_eq!(names(users::search(ctx, "ALAN@".into()).await?)?, ["Alan Turing"]);
    assert_eq!(names(users::search(ctx, "a".into()).await?)?.len(), 3);
    assert!(users::search(ctx, "example.com".into()).await?.is_empty());
    assert!(users::search(ctx, "nobody".into()).await?.is_empty());
    Ok(())
}
