//! Logging in with a password and out, the sessions that opens, and the per-address limits:
//! `identity::session`, `identity::rate_limit` and `auth::resolve_session`, on the backend under
//! test.

use std::net::{IpAddr, Ipv4Addr};

use flag_admin::identity::Identity;
use flag_admin::identity::auth::{self, Credential, Principal};
use flag_admin::identity::rate_limit::RateLimiter;
use flag_admin::identity::session::{self, SignedOut, types::LoginRequest};
use flag_admin::identity::users::{self, types::CreateUserRequest, types::UpdateUserRequest};
use flag_admin::runtime::domain::RootRole;
use flag_admin::{AdminError, Settings};
use flag_store::models::{Actor, NewUser};

use crate::common::{self, Outcome, World};

const PASSWORD: &str = "Own3r-Passw0rd!";
const HERE: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

fn login(username: &str, password: &str) -> LoginRequest {
    LoginRequest {
        username: username.into(),
        password: password.into(),
    }
}

/// Creates a user with a password; answers their id.
async fn user_with_password(
    world: &World,
    email: Option<&str>,
    username: Option<&str>,
    role: RootRole,
) -> Result<i32, Box<dyn std::error::Error>> {
    let request = CreateUserRequest {
        email: email.map(str::to_owned),
        username: username.map(str::to_owned),
        name: None,
        root_role: flag_admin::runtime::domain::AnyRootRole::BuiltIn(role),
        password: Some(PASSWORD.into()),
        send_email: None,
    };
    let created = common::json(&users::create(&world.ctx, &common::admin(users::CREATE), request).await?)?;
    Ok(i32::try_from(created["id"].as_i64().ok_or("an id")?)?)
}

#[tokio::test]
async fn a_password_opens_a_session_that_resolves_to_the_user() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let id = user_with_password(&world, Some("ed@example.com"), Some("ed"), RootRole::Editor).await?;

    for name in ["ED@example.com", " ed "] {
        let logged_in = session::login(ctx, identity, HERE, login(name, PASSWORD)).await?;
        assert_eq!(logged_in.session.len(), 64);
        let user = common::json(&logged_in.user)?;
        assert_eq!(
            (&user["id"], &user["loginAttempts"]),
            (&serde_json::json!(id), &serde_json::json!(0))
        );
        assert!(user["seenAt"].is_string(), "{user}");
        assert_eq!(
            auth::resolve_session(ctx, &logged_in.session).await?,
            Credential::Admin(Principal::User {
                id,
                label: "ed@example.com".into(),
                role: RootRole::Editor,
                grants: Default::default(),
            })
        );
    }
    assert_eq!(
        auth::resolve_session(ctx, &"0".repeat(64)).await?,
        Credential::Unknown
    );
    Ok(())
}

#[tokio::test]
async fn a_wrong_password_or_an_unknown_user_is_one_refusal_at_one_cost() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    user_with_password(&world, Some("ed@example.com"), None, RootRole::Viewer).await?;
    let before = identity.passwords_verified();
    let wrong = session::login(ctx, identity, HERE, login("ed@example.com", "Wr0ng-Passw0rd!")).await;
    assert!(matches!(wrong, Err(AdminError::PasswordMismatch)), "{wrong:?}");
    let nobody = session::login(ctx, identity, HERE, login("nobody@example.com", PASSWORD)).await;
    assert!(matches!(nobody, Err(AdminError::PasswordMismatch)), "{nobody:?}");
    // The unknown user cost a verification too, so timing does not tell who has an account.
    assert_eq!(identity.passwords_verified() - before, 2);
    let listed = common::json(&users::list(ctx).await?)?;
    assert_eq!(listed["users"][0]["loginAttempts"], 1, "{listed}");
    // A success clears the count.
    session::login(ctx, identity, HERE, login("ed@example.com", PASSWORD)).await?;
    let listed = common::json(&users::list(ctx).await?)?;
    assert_eq!(listed["users"][0]["loginAttempts"], 0, "{listed}");
    Ok(())
}

#[tokio::test]
async fn a_login_resolves_an_email_before_a_username() -> Outcome {
    let world = World::new()?;
    // A username that is someone's email, as an older release could store it.
    let squatter = NewUser {
        name: None,
        username: Some("owner@example.com".into()),
        email: None,
        password_hash: Some(flag_admin::identity::password::hash("Squ4tter-Passw0rd!")?),
        root_role: RootRole::Viewer,
        created_at: flag_admin::now(),
    };
    flag_store::queries::users::create(&mut *world.store().connection()?, &squatter, &Actor::system())?;
    let owner = user_with_password(&world, Some("Owner@Example.com"), None, RootRole::Admin).await?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let logged_in = session::login(ctx, identity, HERE, login("owner@example.com", PASSWORD)).await?;
    assert_eq!(common::json(&logged_in.user)?["id"], owner);
    let squatting = session::login(
        ctx,
        identity,
        HERE,
        login("owner@example.com", "Squ4tter-Passw0rd!"),
    )
    .await;
    assert!(
        matches!(squatting, Err(AdminError::PasswordMismatch)),
        "{squatting:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_session_follows_its_users_role_and_ends_at_logout_or_deletion() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let admin = common::admin(users::UPDATE);
    let id = user_with_password(&world, None, Some("ed"), RootRole::Editor).await?;
    let first = session::login(ctx, identity, HERE, login("ed", PASSWORD))
        .await?
        .session;
    let second = session::login(ctx, identity, HERE, login("ed", PASSWORD))
        .await?
        .session;

    let demote = UpdateUserRequest {
        email: None,
        name: None,
        root_role: Some(flag_admin::runtime::domain::AnyRootRole::BuiltIn(
            RootRole::Viewer,
        )),
    };
    users::update(ctx, &admin, id, demote).await?;
    assert_eq!(
        auth::resolve_session(ctx, &first).await?,
        Credential::Admin(Principal::User {
            id,
            label: "ed".into(),
            role: RootRole::Viewer,
            grants: Default::default(),
        })
    );

    // Without single sign-out, logging out ends the session here and goes nowhere else.
    assert_eq!(session::logout(ctx, Some(&first)).await?, SignedOut::Here);
    assert_eq!(auth::resolve_session(ctx, &first).await?, Credential::Unknown);
    assert_eq!(session::logout(ctx, Some(&first)).await?, SignedOut::Here);
    assert_eq!(session::logout(ctx, None).await?, SignedOut::Here);
    assert!(matches!(
        auth::resolve_session(ctx, &second).await?,
        Credential::Admin(_)
    ));
    users::delete(ctx, &admin, id).await?;
    assert_eq!(auth::resolve_session(ctx, &second).await?, Credential::Unknown);
    Ok(())
}

#[tokio::test]
async fn logins_are_limited_per_address() -> Outcome {
    let world = World::with(Settings {
        logins_per_minute: 3,
        ..Settings::default()
    })?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    for _ in 0..3 {
        let refused = session::login(ctx, identity, HERE, login("nobody", PASSWORD)).await;
        assert!(
            matches!(refused, Err(AdminError::PasswordMismatch)),
            "{refused:?}"
        );
    }
    let before = identity.passwords_verified();
    let limited = session::login(ctx, identity, HERE, login("nobody", PASSWORD)).await;
    assert!(
        matches!(limited, Err(AdminError::TooManyRequests { retry_after }) if (1..=60).contains(&retry_after)),
        "{limited:?}"
    );
    assert_eq!(
        identity.passwords_verified(),
        before,
        "a limited login costs no verification"
    );
    let elsewhere = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));
    let refused = session::login(ctx, identity, elsewhere, login("nobody", PASSWORD)).await;
    assert!(
        matches!(refused, Err(AdminError::PasswordMismatch)),
        "{refused:?}"
    );
    // The limits are the identity wing's state, set from the settings it is made with.
    let strict = Identity::new(&Settings {
        logins_per_minute: 0,
        ..Settings::default()
    });
    let closed = session::login(ctx, &strict, elsewhere, login("nobody", PASSWORD)).await;
    assert!(
        matches!(closed, Err(AdminError::TooManyRequests { .. })),
        "{closed:?}"
    );
    assert_eq!(strict.passwords_verified(), 0);
    Ok(())
}

#[test]
fn a_rate_limiter_counts_each_address_in_its_own_window() {
    let limiter = RateLimiter::new(2);
    let other = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 9));
    assert_eq!((limiter.check(HERE), limiter.check(HERE)), (Ok(()), Ok(())));
    assert!(matches!(limiter.check(HERE), Err(seconds) if (1..=60).contains(&seconds)));
    assert!(matches!(
        limiter.admit(HERE),
        Err(AdminError::TooManyRequests { .. })
    ));
    assert!(limiter.admit(other).is_ok());
    let closed = RateLimiter::new(0);
    assert!(closed.check(other).is_err());
}

#[tokio::test]
async fn a_password_hash_moved_from_unleash_signs_in_and_is_replaced_by_argon2id() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    // As Unleash's bcryptjs writes it (`$2b$10$`; `$2a$` before Unleash 8), and as
    // `halyard migrate --from-database` carries it.
    let unleash_hash = bcrypt::hash(PASSWORD, 10)?;
    let moved = NewUser {
        name: Some("Moved".into()),
        username: None,
        email: Some("moved@example.com".into()),
        password_hash: Some(unleash_hash.clone()),
        root_role: RootRole::Editor,
        created_at: flag_admin::now(),
    };
    let row =
        flag_store::queries::users::create(&mut *world.store().connection()?, &moved, &Actor::system())?;
    let stored = |world: &World| -> Result<Option<String>, Box<dyn std::error::Error>> {
        Ok(flag_store::queries::users::get(&mut *world.store().connection()?, row.id)?.password_hash)
    };

    let wrong = session::login(ctx, identity, HERE, login("moved@example.com", "Wr0ng-Passw0rd!")).await;
    assert!(matches!(wrong, Err(AdminError::PasswordMismatch)), "{wrong:?}");
    assert_eq!(
        stored(&world)?.as_deref(),
        Some(unleash_hash.as_str()),
        "a failed login rehashed"
    );

    session::login(ctx, identity, HERE, login("moved@example.com", PASSWORD)).await?;
    let rehashed = stored(&world)?.ok_or("no hash")?;
    assert!(rehashed.starts_with("$argon2id$"), "{rehashed}");
    // The same password keeps working against the new hash.
    session::login(ctx, identity, HERE, login("moved@example.com", PASSWORD)).await?;
    assert_eq!(stored(&world)?.as_deref(), Some(rehashed.as_str()));
    Ok(())
}

#[tokio::test]
async fn an_admin_lets_in_a_user_without_a_password_by_setting_one() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    // As `halyard migrate` carries users through Unleash's API: with no password.
    let moved = NewUser {
        name: None,
        username: Some("moved".into()),
        email: None,
        password_hash: None,
        root_role: RootRole::Viewer,
        created_at: flag_admin::now(),
    };
    let row =
        flag_store::queries::users::create(&mut *world.store().connection()?, &moved, &Actor::system())?;
    let refused = session::login(ctx, identity, HERE, login("moved", PASSWORD)).await;
    assert!(
        matches!(refused, Err(AdminError::PasswordMismatch)),
        "{refused:?}"
    );

    let weak = users::change_password(
        ctx,
        &common::admin(users::CHANGE_PASSWORD),
        row.id,
        password_request("weak")?,
    )
    .await;
    assert!(matches!(weak, Err(AdminError::Validation { .. })), "{weak:?}");
    let unknown = users::change_password(
        ctx,
        &common::admin(users::CHANGE_PASSWORD),
        999,
        password_request(PASSWORD)?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    users::change_password(
        ctx,
        &common::admin(users::CHANGE_PASSWORD),
        row.id,
        password_request(PASSWORD)?,
    )
    .await?;
    session::login(ctx, identity, HERE, login("moved", PASSWORD)).await?;
    Ok(())
}

fn password_request(
    password: &str,
) -> Result<flag_admin::identity::users::types::PasswordRequest, serde_json::Error> {
    serde_json::from_value(serde_json::json!({ "password": password }))
}
