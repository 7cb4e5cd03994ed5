//! Single sign-on without a provider: `identity::oidc`'s settings, how users may sign in, and
//! every refusal of a login that needs no answer from the provider, on the backend under test.
//! The provider here is an address nothing listens at; logins that reach a real provider are
//! admin-api's (`tests/it/sso.rs`).

use std::net::{IpAddr, Ipv4Addr};

use flag_admin::identity::auth::{self, Credential};
use flag_admin::identity::oidc::types::{OidcSettings, PasswordAuthSettings};
use flag_admin::identity::oidc::{self, Callback, LoginOptions};
use flag_admin::identity::session::{self, SignedOut, types::LoginRequest};
use flag_admin::runtime::secrets;
use flag_admin::{AdminError, Settings};
use flag_store::models::{OidcLoginRow, SessionRow};
use flag_store::queries;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

const HERE: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));

/// Settings that pass the checks, with a provider nothing listens at.
fn enabled() -> Value {
    json!({
        "enabled": true,
        "discoverUrl": "http://127.0.0.1:9/.well-known/openid-configuration",
        "clientId": "halyard",
        "secret": "very-secret",
        "autoCreate": true,
        "defaultRootRole": "Editor",
        // Unleash's web UI sends this too.
        "unleashHostname": "localhost"
    })
}

/// [`enabled`] with `change` merged in.
fn with(change: Value) -> Result<OidcSettings, serde_json::Error> {
    let mut settings = enabled();
    if let (Some(settings), Value::Object(change)) = (settings.as_object_mut(), change) {
        settings.extend(change);
    }
    serde_json::from_value(settings)
}

/// A world whose stored settings switch single sign-on on with `change`.
async fn signing_on(change: Value) -> Result<World, Box<dyn std::error::Error>> {
    let world = World::new()?;
    oidc::save_settings(
        &world.ctx,
        world.ctx.identity(),
        &common::admin(oidc::SAVE_SETTINGS),
        with(change)?,
    )
    .await?;
    Ok(world)
}

/// The message of a sign-in failure, or a description of what came instead.
fn sign_in_failure<T: std::fmt::Debug>(result: Result<T, AdminError>) -> String {
    match result {
        Err(AdminError::SignInFailed(message)) => message,
        other => format!("not a sign-in failure: {other:?}"),
    }
}

#[tokio::test]
async fn settings_are_checked_stored_and_never_read_back() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let caller = common::admin(oidc::SAVE_SETTINGS);
    assert_eq!(
        oidc::settings(ctx, &common::admin(oidc::SETTINGS)).await?,
        OidcSettings::default()
    );
    assert!(!oidc::configured_through_env(ctx));

    for (change, field) in [
        (json!({"discoverUrl": null}), "discoverUrl"),
        (json!({"discoverUrl": "ftp://login.example.com"}), "discoverUrl"),
        (json!({"discoverUrl": "http://login.example.com"}), "discoverUrl"),
        (json!({"discoverUrl": "not a url"}), "discoverUrl"),
        (json!({"clientId": " "}), "clientId"),
        (json!({"secret": null}), "secret"),
        (json!({"defaultRootRole": "Owner"}), "defaultRootRole"),
        (json!({"defaultRootRoleId": 4}), "defaultRootRoleId"),
        (
            json!({"idTokenSigningAlgorithm": "HS256"}),
            "idTokenSigningAlgorithm",
        ),
        (json!({"groupRootRoles": {"staff": "Boss"}}), "groupRootRoles"),
    ] {
        let bad = with(change)?;
        let checked = oidc::check(&bad);
        assert!(
            matches!(&checked, Err(AdminError::Validation { details, .. })
                if details[0].path.as_deref() == Some(format!("/{field}").as_str())),
            "{field}: {checked:?}"
        );
        let saved = oidc::save_settings(ctx, identity, &caller, bad).await;
        assert!(
            matches!(saved, Err(AdminError::Validation { .. })),
            "{field}: {saved:?}"
        );
    }
    assert_eq!(
        oidc::settings(ctx, &common::admin(oidc::SETTINGS)).await?,
        OidcSettings::default(),
        "nothing was stored"
    );
    // Switched off, nothing else is asked for.
    oidc::check(&OidcSettings::default())?;
    oidc::check(&with(
        json!({"discoverUrl": "https://login.example.com/realms/acme", "idTokenSigningAlgorithm": "RS512"}),
    )?)?;

    let saved = oidc::save_settings(ctx, identity, &caller, with(json!({}))?).await?;
    assert_eq!(saved.secret.as_deref(), Some("*****"));
    assert_eq!(saved.default_root_role.as_deref(), Some("Editor"));
    assert_eq!(oidc::settings(ctx, &common::admin(oidc::SETTINGS)).await?, saved);
    // The masked secret sent back keeps the stored one.
    oidc::save_settings(
        ctx,
        identity,
        &caller,
        with(json!({"secret": "*****", "clientId": "other"}))?,
    )
    .await?;
    let stored: Option<OidcSettings> =
        queries::settings::get(&mut *world.store().connection()?, oidc::SETTING)?;
    let stored = stored.ok_or("the settings were stored")?;
    assert_eq!(
        (stored.secret.as_deref(), stored.client_id.as_deref()),
        (Some("very-secret"), Some("other"))
    );
    // The audit log records who changed them, never the secret.
    let events = queries::events::of_type(&mut *world.store().connection()?, "setting-updated")?;
    assert!(!events.is_empty());
    assert!(events.iter().all(|event| event.created_by == "test-token"));
    assert!(!format!("{events:?}").contains("very-secret"), "{events:?}");
    Ok(())
}

#[tokio::test]
async fn password_login_goes_off_only_while_single_sign_on_is_on() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let caller = common::admin(oidc::SAVE_SETTINGS);
    assert_eq!(
        oidc::login_options(ctx).await?,
        LoginOptions {
            password: true,
            oidc: false
        }
    );
    assert_eq!(
        oidc::password_settings(ctx).await?,
        PasswordAuthSettings::default()
    );
    let off = PasswordAuthSettings { disabled: true };
    let refused = oidc::save_password_settings(ctx, &caller, off).await;
    assert!(
        matches!(refused, Err(AdminError::InvalidOperation(_))),
        "{refused:?}"
    );
    assert!(oidc::password_login_allowed(ctx).await?);

    oidc::save_settings(ctx, identity, &caller, with(json!({}))?).await?;
    assert_eq!(
        oidc::login_options(ctx).await?,
        LoginOptions {
            password: true,
            oidc: true
        }
    );
    assert_eq!(oidc::save_password_settings(ctx, &caller, off).await?, off);
    assert_eq!(oidc::password_settings(ctx).await?, off);
    assert!(!oidc::password_login_allowed(ctx).await?);
    assert_eq!(
        oidc::login_options(ctx).await?,
        LoginOptions {
            password: false,
            oidc: true
        }
    );
    let config = flag_admin::delivery::frontend::ui_config(ctx, identity).await?;
    assert!(config.disable_password_auth && !config.oidc_configured_through_env);
    let login = LoginRequest {
        username: "admin".into(),
        password: "whatever-it-is".into(),
    };
    let disabled = session::login(ctx, identity, HERE, login).await;
    assert!(
        matches!(&disabled, Err(AdminError::InvalidOperation(message))
            if message == "Logging in with username/password has been disabled."),
        "{disabled:?}"
    );
    // Nobody could sign in with single sign-on off too.
    let nobody = oidc::save_settings(ctx, identity, &caller, OidcSettings::default()).await;
    assert!(
        matches!(nobody, Err(AdminError::InvalidOperation(_))),
        "{nobody:?}"
    );
    // With password login on again, single sign-on may go off.
    oidc::save_password_settings(ctx, &caller, PasswordAuthSettings::default()).await?;
    oidc::save_settings(ctx, identity, &caller, OidcSettings::default()).await?;
    assert_eq!(
        oidc::login_options(ctx).await?,
        LoginOptions {
            password: true,
            oidc: false
        }
    );
    Ok(())
}

#[tokio::test]
async fn settings_from_the_environment_cannot_be_changed() -> Outcome {
    let world = World::with(Settings {
        oidc: Some(with(json!({}))?),
        ..Settings::default()
    })?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    assert!(oidc::configured_through_env(ctx));
    let shown = oidc::settings(ctx, &common::admin(oidc::SETTINGS)).await?;
    assert!(shown.enabled);
    assert_eq!(shown.secret.as_deref(), Some("*****"));
    let changed = oidc::save_settings(
        ctx,
        identity,
        &common::admin(oidc::SAVE_SETTINGS),
        OidcSettings::default(),
    )
    .await;
    assert!(
        matches!(&changed, Err(AdminError::InvalidOperation(message)) if message.contains("OIDC_ENABLED")),
        "{changed:?}"
    );
    assert_eq!(
        oidc::login_options(ctx).await?,
        LoginOptions {
            password: true,
            oidc: true
        }
    );
    let config = flag_admin::delivery::frontend::ui_config(ctx, identity).await?;
    assert!(config.oidc_configured_through_env && !config.disable_password_auth);
    Ok(())
}

#[tokio::test]
async fn a_login_cannot_start_without_single_sign_on_or_a_provider() -> Outcome {
    let off = World::with(Settings {
        logins_per_minute: 2,
        ..Settings::default()
    })?;
    let started = oidc::start(&off.ctx, off.ctx.identity(), HERE, "/flags").await;
    assert!(
        matches!(&started, Err(AdminError::NotFound(message)) if message == "single sign-on is not enabled"),
        "{started:?}"
    );

    let world = signing_on(json!({})).await?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    for _ in 0..2 {
        // The second failure is answered from memory, without waiting on the provider again.
        let started = oidc::start(ctx, identity, HERE, "/flags").await;
        assert!(
            matches!(&started, Err(AdminError::ProviderUnavailable(message))
                if message.contains("discovery document could not be read") && !message.contains("very-secret")),
            "{started:?}"
        );
    }
    // Starts count against the address's login attempts.
    let limited = oidc::start(&off.ctx, off.ctx.identity(), HERE, "/").await;
    assert!(matches!(limited, Err(AdminError::NotFound(_))), "{limited:?}");
    let limited = oidc::start(&off.ctx, off.ctx.identity(), HERE, "/").await;
    assert!(
        matches!(limited, Err(AdminError::TooManyRequests { .. })),
        "{limited:?}"
    );
    Ok(())
}

/// Stores a login that left for the provider with `state`, `age` ago, under `cookie`, as
/// [`oidc::start`] stores one.
fn left_for_provider(world: &World, cookie: &str, state: &str, age: chrono::TimeDelta) -> Outcome {
    let login = OidcLoginRow {
        cookie_hash: secrets::verifier(cookie),
        state: state.into(),
        nonce: "nonce".into(),
        pkce_verifier: "verifier".repeat(6),
        return_to: "/flags".into(),
        created_at: flag_admin::now() - age,
    };
    queries::sessions::start_oidc_login(&mut *world.store().connection()?, &login)?;
    Ok(())
}

fn callback(code: Option<&str>, state: Option<&str>, error: Option<&str>) -> Callback {
    Callback {
        code: code.map(str::to_owned),
        state: state.map(str::to_owned),
        error: error.map(str::to_owned),
        error_description: error.map(|_| "the user said no".to_owned()),
    }
}

#[tokio::test]
async fn a_callback_is_refused_unless_this_browser_started_it_and_the_provider_agreed() -> Outcome {
    let off = World::new()?;
    let finished = oidc::finish(
        &off.ctx,
        off.ctx.identity(),
        Some("c"),
        callback(Some("c"), Some("s"), None),
    )
    .await;
    assert!(matches!(finished, Err(AdminError::NotFound(_))), "{finished:?}");

    let world = signing_on(json!({})).await?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let no_cookie = oidc::finish(ctx, identity, None, callback(Some("c"), Some("s"), None)).await;
    assert!(sign_in_failure(no_cookie).contains("did not start a login"));
    let unknown = oidc::finish(
        ctx,
        identity,
        Some("0123456789abcdef"),
        callback(Some("c"), Some("s"), None),
    )
    .await;
    assert!(sign_in_failure(unknown).contains("already used"));

    // Each login is taken once, whatever its callback says.
    left_for_provider(&world, "refused", "s1", chrono::TimeDelta::zero())?;
    let refused = oidc::finish(
        ctx,
        identity,
        Some("refused"),
        callback(None, Some("s1"), Some("access_denied")),
    )
    .await;
    let refused = sign_in_failure(refused);
    assert!(
        refused.contains("refused the login (access_denied): the user said no"),
        "{refused}"
    );
    let replayed = oidc::finish(
        ctx,
        identity,
        Some("refused"),
        callback(Some("c"), Some("s1"), None),
    )
    .await;
    assert!(sign_in_failure(replayed).contains("already used"));
    left_for_provider(&world, "forged", "s2", chrono::TimeDelta::zero())?;
    let forged = oidc::finish(
        ctx,
        identity,
        Some("forged"),
        callback(Some("c"), Some("other"), None),
    )
    .await;
    assert!(sign_in_failure(forged).contains("state does not match"));
    left_for_provider(&world, "codeless", "s3", chrono::TimeDelta::zero())?;
    let codeless = oidc::finish(
        ctx,
        identity,
        Some("codeless"),
        callback(Some(""), Some("s3"), None),
    )
    .await;
    assert!(sign_in_failure(codeless).contains("no authorization code"));
    left_for_provider(&world, "slow", "s4", chrono::TimeDelta::minutes(11))?;
    let slow = oidc::finish(ctx, identity, Some("slow"), callback(Some("c"), Some("s4"), None)).await;
    assert!(sign_in_failure(slow).contains("took over ten minutes"));
    // Everything checked, the code goes to a provider that cannot be reached.
    left_for_provider(&world, "good", "s5", chrono::TimeDelta::zero())?;
    let unreachable = oidc::finish(ctx, identity, Some("good"), callback(Some("c"), Some("s5"), None)).await;
    assert!(
        matches!(unreachable, Err(AdminError::ProviderUnavailable(_))),
        "{unreachable:?}"
    );
    Ok(())
}

/// Opens a session for a new user as a login through the provider opens one, keeping
/// `id_token`; answers its secret.
async fn session_through_provider(
    world: &World,
    email: &str,
    id_token: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let request: flag_admin::identity::users::types::CreateUserRequest =
        serde_json::from_value(json!({"email": email, "rootRole": "Viewer"}))?;
    let user = common::json(
        &flag_admin::identity::users::create(
            &world.ctx,
            &common::admin(flag_admin::identity::users::CREATE),
            request,
        )
        .await?,
    )?;
    let secret = secrets::random_hex(32).map_err(|error| error.to_string())?;
    let now = flag_admin::now();
    let session = SessionRow {
        token_hash: secrets::verifier(&secret),
        user_id: i32::try_from(user["id"].as_i64().ok_or("an id")?)?,
        created_at: now,
        expires_at: now + chrono::TimeDelta::days(1),
        via_oidc: true,
        id_token: Some(id_token.into()),
    };
    queries::sessions::create(&mut *world.store().connection()?, &session)?;
    Ok(secret)
}

#[tokio::test]
async fn single_sign_out_keeps_the_id_token_for_the_provider_once() -> Outcome {
    // Without single sign-out, a session through the provider ends here.
    let plain = signing_on(json!({})).await?;
    assert!(!oidc::single_sign_out(&plain.ctx).await);
    let secret = session_through_provider(&plain, "solo@example.com", "id.token.one").await?;
    assert_eq!(session::logout(&plain.ctx, Some(&secret)).await?, SignedOut::Here);
    assert_eq!(
        oidc::logout_url(&plain.ctx, plain.ctx.identity(), "http://localhost/out", None).await,
        None
    );

    let world = signing_on(json!({"enableSingleSignOut": true})).await?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    assert!(oidc::single_sign_out(ctx).await);
    let first = session_through_provider(&world, "anna@example.com", "id.token.anna").await?;
    let SignedOut::AtProvider { handle } = session::logout(ctx, Some(&first)).await? else {
        return Err("a session through the provider signs out there too".into());
    };
    assert_eq!(handle.len(), 64);
    // The session signs no one in any more, nor does its handle.
    assert_eq!(auth::resolve_session(ctx, &first).await?, Credential::Unknown);
    assert_eq!(auth::resolve_session(ctx, &handle).await?, Credential::Unknown);
    // The handle reads the ID token once.
    let now = flag_admin::now();
    let taken = queries::sessions::take_id_token(
        &mut *world.store().connection()?,
        &secrets::verifier(&handle),
        now,
    )?;
    assert_eq!(taken.as_deref(), Some("id.token.anna"));

    // The page that sends the browser on takes it too, even when the provider cannot be reached
    // to say where its end-session endpoint is.
    let second = session_through_provider(&world, "bert@example.com", "id.token.bert").await?;
    let SignedOut::AtProvider { handle } = session::logout(ctx, Some(&second)).await? else {
        return Err("a session through the provider signs out there too".into());
    };
    assert_eq!(
        oidc::logout_url(ctx, identity, "http://localhost/out", Some(&handle)).await,
        None
    );
    let taken = queries::sessions::take_id_token(
        &mut *world.store().connection()?,
        &secrets::verifier(&handle),
        now,
    )?;
    assert_eq!(taken, None);
    Ok(())
}
