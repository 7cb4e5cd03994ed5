//! Invite links and signing up with one: `identity::invite`, on the backend under test.

use std::net::IpAddr;

use chrono::{TimeDelta, Utc};
use flag_admin::identity::invite::{
    self,
    types::{CreateInvitedUserRequest, CreateSignupTokenRequest, UpdateSignupTokenRequest},
};
use flag_admin::runtime::domain::Timestamp;
use flag_admin::{AdminError, Settings};
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

const PASSWORD: &str = "Corr3ct-Horse!";
const HERE: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));

fn link(name: &str, days: i64) -> CreateSignupTokenRequest {
    CreateSignupTokenRequest {
        name: name.into(),
        expires_at: Timestamp(Utc::now() + TimeDelta::days(days)),
    }
}

fn signup(email: &str, username: Option<&str>, password: &str) -> CreateInvitedUserRequest {
    CreateInvitedUserRequest {
        username: username.map(str::to_owned),
        email: email.into(),
        name: "New Person".into(),
        password: password.into(),
    }
}

/// An invite link made by an admin token, as JSON, and its secret.
async fn invite_link(world: &World) -> Result<(Value, String), Box<dyn std::error::Error>> {
    let created = invite::create(&world.ctx, &common::admin(invite::CREATE), link("team", 7)).await?;
    let secret = created.secret().to_owned();
    Ok((common::json(&created)?, secret))
}

/// The message of a validation failure, or a description of what came instead.
fn invalid<T: std::fmt::Debug>(result: Result<T, AdminError>) -> String {
    match result {
        Err(AdminError::Validation { message, .. }) => message,
        other => format!("not a validation failure: {other:?}"),
    }
}

#[tokio::test]
async fn an_invite_link_signs_up_viewers_until_it_is_switched_off_or_expires() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let (created, secret) = invite_link(&world).await?;
    assert_eq!(secret.len(), 32);
    assert_eq!(
        created["url"],
        json!(format!("http://localhost:4242/new-user?invite={secret}"))
    );
    assert_eq!(
        created["role"],
        json!({"id": 3, "name": "Viewer", "type": "root"})
    );
    assert_eq!(
        (&created["enabled"], &created["users"]),
        (&json!(true), &json!([]))
    );
    assert_eq!(created["createdBy"], "test-token");
    invite::validate(ctx, secret.clone()).await?;

    let user = common::json(
        &invite::sign_up(
            ctx,
            identity,
            HERE,
            secret.clone(),
            signup("New.Person@Example.com", None, PASSWORD),
        )
        .await?,
    )?;
    assert_eq!(
        (&user["email"], &user["rootRole"]),
        (&json!("new.person@example.com"), &json!(3))
    );
    // The new user can log in with the password chosen.
    let login = flag_admin::identity::session::types::LoginRequest {
        username: "NEW.PERSON@example.com".into(),
        password: PASSWORD.into(),
    };
    flag_admin::identity::session::login(ctx, identity, HERE, login).await?;
    // The same email again, in another case.
    let again = invite::sign_up(
        ctx,
        identity,
        HERE,
        secret.clone(),
        signup("new.PERSON@example.com", None, PASSWORD),
    )
    .await;
    assert!(
        matches!(&again, Err(AdminError::NameExists(message)) if message == "a user with that email or username already exists"),
        "{again:?}"
    );
    let listed = common::json(&invite::get(ctx, secret.clone()).await?)?;
    assert_eq!(listed["users"][0]["name"], "New Person", "{listed}");

    // Switched off, expired or unknown: one and the same refusal, and no user.
    let off = UpdateSignupTokenRequest {
        expires_at: None,
        enabled: Some(false),
    };
    assert_eq!(
        common::json(&invite::update(ctx, &common::admin(invite::UPDATE), secret.clone(), off).await?)?["enabled"],
        false
    );
    let disabled = invalid(invite::validate(ctx, secret.clone()).await);
    let on_again = UpdateSignupTokenRequest {
        expires_at: Some(Timestamp(Utc::now() - TimeDelta::seconds(1))),
        enabled: Some(true),
    };
    let expired =
        common::json(&invite::update(ctx, &common::admin(invite::UPDATE), secret.clone(), on_again).await?)?;
    assert_eq!(
        expired["enabled"], false,
        "an expired link is never shown as enabled"
    );
    assert_eq!(
        expired["users"].as_array().map(Vec::len),
        Some(1),
        "the answer is the whole link"
    );
    let late = invalid(
        invite::sign_up(
            ctx,
            identity,
            HERE,
            secret.clone(),
            signup("late@example.com", None, PASSWORD),
        )
        .await,
    );
    let unknown = invalid(invite::validate(ctx, "0123456789abcdef0123456789abcdef".into()).await);
    assert_eq!(
        (disabled.as_str(), late.as_str()),
        (unknown.as_str(), unknown.as_str())
    );
    assert!(!unknown.starts_with("not a validation failure"), "{unknown}");
    assert_eq!(
        common::json(&invite::get(ctx, secret).await?)?["users"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    Ok(())
}

#[tokio::test]
async fn invite_links_are_listed_capped_at_a_month_and_changed_only_as_asked() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let caller = common::admin(invite::CREATE);
    let (_, secret) = invite_link(&world).await?;
    let far = common::json(&invite::create(ctx, &caller, link("far", 400)).await?)?;
    let expires = chrono::DateTime::parse_from_rfc3339(far["expiresAt"].as_str().unwrap_or_default())?;
    assert!(expires < Utc::now() + TimeDelta::days(32), "{far}");
    let listed = common::json(&invite::list(ctx).await?)?;
    assert_eq!(listed["tokens"].as_array().map(Vec::len), Some(2), "{listed}");

    let blank = invite::create(ctx, &caller, link(" ", 1)).await;
    assert_eq!(invalid(blank), "/name must not be empty");
    let nothing = UpdateSignupTokenRequest {
        expires_at: None,
        enabled: None,
    };
    assert_eq!(
        invalid(invite::update(ctx, &caller, secret.clone(), nothing).await),
        "give expiresAt, enabled or both"
    );
    let switch = || UpdateSignupTokenRequest::switching(false);
    let missing = invite::update(ctx, &caller, "nope".into(), switch()).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let missing = invite::get(ctx, "nope".into()).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    // A later expiry is not capped when changed. The console's command reads a time as a body's
    // `expiresAt` is read.
    assert!(UpdateSignupTokenRequest::expiring("next tuesday").is_err());
    let later = UpdateSignupTokenRequest::expiring(&(Utc::now() + TimeDelta::days(90)).to_rfc3339())?;
    let changed = common::json(&invite::update(ctx, &caller, secret, later).await?)?;
    let expires = chrono::DateTime::parse_from_rfc3339(changed["expiresAt"].as_str().unwrap_or_default())?;
    assert!(expires > Utc::now() + TimeDelta::days(60), "{changed}");
    assert_eq!(changed["enabled"], true);
    Ok(())
}

#[tokio::test]
async fn a_signup_is_checked_before_its_link_and_the_link_before_the_hash() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let (_, secret) = invite_link(&world).await?;
    // A bad body is refused as such even with a link that is no link.
    let nowhere = "0123456789abcdef0123456789abcdef".to_owned();
    let bad_email = invite::sign_up(
        ctx,
        identity,
        HERE,
        nowhere.clone(),
        signup("not-an-email", None, PASSWORD),
    )
    .await;
    assert!(
        matches!(&bad_email, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/email")),
        "{bad_email:?}"
    );
    // Every broken password rule is listed: length, upper case, digit and symbol.
    let weak = invite::sign_up(
        ctx,
        identity,
        HERE,
        secret.clone(),
        signup("a@example.com", None, "short"),
    )
    .await;
    assert!(
        matches!(&weak, Err(AdminError::Validation { details, .. }) if details.len() == 4),
        "{weak:?}"
    );
    let at_in_username = signup("b@example.com", Some("b@example.com"), PASSWORD);
    let refused = invite::sign_up(ctx, identity, HERE, secret.clone(), at_in_username).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    // A username someone has.
    invite::sign_up(
        ctx,
        identity,
        HERE,
        secret.clone(),
        signup("sam@example.com", Some("sam"), PASSWORD),
    )
    .await?;
    let taken = invite::sign_up(
        ctx,
        identity,
        HERE,
        secret.clone(),
        signup("other@example.com", Some("sam"), PASSWORD),
    )
    .await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let users = common::json(&invite::get(ctx, secret).await?)?["users"].clone();
    assert_eq!(users.as_array().map(Vec::len), Some(1), "{users}");
    Ok(())
}

#[tokio::test]
async fn signups_are_limited_per_address() -> Outcome {
    let world = World::with(Settings {
        signups_per_minute: 2,
        ..Settings::default()
    })?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let nowhere = "0123456789abcdef0123456789abcdef".to_owned();
    let attempt = |address: IpAddr| {
        invite::sign_up(
            ctx,
            identity,
            address,
            nowhere.clone(),
            signup("a@example.com", None, PASSWORD),
        )
    };
    // Refused attempts count too.
    for _ in 0..2 {
        let refused = attempt(HERE).await;
        assert!(
            matches!(refused, Err(AdminError::Validation { .. })),
            "{refused:?}"
        );
    }
    let limited = attempt(HERE).await;
    assert!(
        matches!(limited, Err(AdminError::TooManyRequests { retry_after }) if (1..=60).contains(&retry_after)),
        "{limited:?}"
    );
    // Another address has its own count.
    let elsewhere = attempt(IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 2))).await;
    assert!(
        matches!(elsewhere, Err(AdminError::Validation { .. })),
        "{elsewhere:?}"
    );
    Ok(())
}
