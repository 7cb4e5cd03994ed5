//! Secrets kept readable under the operator's key: API token secrets and the OpenID client
//! secret sealed as they are saved, read back by admins, masked without the key, checked at
//! start, and moved to a new key; on the backend under test.

use flag_admin::identity::oidc::{self, types::OidcSettings};
use flag_admin::identity::tokens::{self, types::CreateToken};
use flag_admin::runtime::domain::TokenType;
use flag_admin::runtime::secrets::SealingKey;
use flag_admin::{AdminError, Settings};
use flag_store::queries;
use serde_json::json;

use crate::common::{self, Outcome, World};

const KEY: &str = "8f1e0c2d3b4a59687766554433221100ffeeddccbbaa99887766554433221100";
const NEW_KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

fn keyed(key: &str) -> Result<World, Box<dyn std::error::Error>> {
    World::with(Settings {
        sealing: Some(SealingKey::from_hex(key)?),
        ..Settings::default()
    })
}

fn client_token(name: &str) -> CreateToken {
    CreateToken {
        token_name: Some(name.into()),
        username: None,
        token_type: TokenType::Client,
        environment: None,
        projects: None,
        project: None,
        expires_at: None,
    }
}

#[tokio::test]
async fn with_the_key_admins_read_token_secrets_back_and_the_database_holds_none() -> Outcome {
    let world = keyed(KEY)?;
    let ctx = &world.ctx;
    let created = tokens::create(ctx, &common::admin(tokens::CREATE), client_token("terraform")).await?;
    let listed = tokens::list(ctx, &common::admin(tokens::LIST)).await?;
    assert_eq!(listed.tokens[0].secret, created.secret, "read back as made");
    // Stored sealed, never in clear: not in the sealed value, the token row or the audit log.
    let mut conn = world.store().connection()?;
    let sealed = queries::access::all_sealed(&mut conn)?;
    assert_eq!(sealed.len(), 1);
    let random = created.secret.rsplit('.').next().ok_or("no random part")?;
    assert!(!sealed[0].sealed.contains(random));
    let events: String = queries::events::of_type(&mut conn, "api-token-created")?
        .into_iter()
        .filter_map(|event| event.data)
        .collect();
    assert!(
        !events.is_empty() && !events.contains(random),
        "the secret reached the audit log"
    );

    // Deleting the token deletes its sealed secret.
    tokens::delete(ctx, &common::admin(tokens::DELETE), &created.secret).await?;
    assert!(queries::access::all_sealed(&mut conn)?.is_empty());
    Ok(())
}

#[tokio::test]
async fn without_the_key_secrets_stay_masked_and_a_wrong_key_is_refused_at_start() -> Outcome {
    let world = keyed(KEY)?;
    tokens::create(&world.ctx, &common::admin(tokens::CREATE), client_token("sealed")).await?;
    let store = world.store();
    assert_eq!(
        tokens::check_sealing_key(store, Some(&SealingKey::from_hex(KEY)?))?,
        1
    );
    // No key: masked, and the server still starts.
    assert_eq!(tokens::check_sealing_key(store, None)?, 1);
    let unkeyed = flag_admin::Ctx::new(store.clone(), Settings::default())?;
    let listed = tokens::list(&unkeyed, &common::admin(tokens::LIST)).await?;
    assert!(
        listed.tokens[0].secret.ends_with(".***"),
        "{}",
        listed.tokens[0].secret
    );
    // Another key: refused, naming both keys' ids.
    let wrong = SealingKey::from_hex(NEW_KEY)?;
    match tokens::check_sealing_key(store, Some(&wrong)) {
        Err(AdminError::InvalidOperation(message)) => {
            assert!(
                message.contains(wrong.id()) && message.contains("rotate-secrets-key"),
                "{message}"
            );
        }
        other => panic!("a wrong key was taken: {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn rotating_the_key_seals_every_secret_under_the_new_one() -> Outcome {
    let world = keyed(KEY)?;
    let created = tokens::create(&world.ctx, &common::admin(tokens::CREATE), client_token("one")).await?;
    let store = world.store();
    let (old, new) = (SealingKey::from_hex(KEY)?, SealingKey::from_hex(NEW_KEY)?);
    assert_eq!(tokens::rotate_sealing_key(store, &old, &new)?, 1);
    assert!(tokens::check_sealing_key(store, Some(&old)).is_err());
    assert_eq!(tokens::check_sealing_key(store, Some(&new))?, 1);
    let rotated = flag_admin::Ctx::new(
        store.clone(),
        Settings {
            sealing: Some(new.clone()),
            ..Settings::default()
        },
    )?;
    assert_eq!(
        tokens::list(&rotated, &common::admin(tokens::LIST)).await?.tokens[0].secret,
        created.secret
    );
    // Rotating from a key that does not open them changes nothing.
    assert!(tokens::rotate_sealing_key(store, &old, &new).is_err());
    assert_eq!(tokens::check_sealing_key(store, Some(&new))?, 1);
    Ok(())
}

#[tokio::test]
async fn with_the_key_the_openid_client_secret_reads_back_and_is_stored_sealed() -> Outcome {
    let world = keyed(KEY)?;
    let ctx = &world.ctx;
    let settings: OidcSettings = serde_json::from_value(json!({
        "enabled": false,
        "clientId": "halyard",
        "secret": "a-client-secret-from-terraform",
        "discoverUrl": "https://login.example.com/realms/acme",
    }))?;
    let caller = common::admin(oidc::SAVE_SETTINGS);
    let saved = oidc::save_settings(ctx, ctx.identity(), &caller, settings).await?;
    assert_eq!(saved.secret.as_deref(), Some("a-client-secret-from-terraform"));
    assert_eq!(
        oidc::settings(ctx, &common::admin(oidc::SETTINGS))
            .await?
            .secret
            .as_deref(),
        Some("a-client-secret-from-terraform")
    );
    let mut conn = world.store().connection()?;
    let stored: Option<serde_json::Value> = queries::settings::get(&mut conn, oidc::SETTING)?;
    assert!(
        !stored
            .map(|value| value.to_string())
            .unwrap_or_default()
            .contains("a-client-secret"),
        "the secret is stored in clear"
    );
    // Without the key, single sign-on cannot read its secret, and says why.
    let unkeyed = flag_admin::Ctx::new(world.store().clone(), Settings::default())?;
    let read = oidc::settings(&unkeyed, &common::admin(oidc::SETTINGS)).await;
    assert!(
        matches!(read, Err(AdminError::Internal(_))),
        "a sealed secret needs the key: {read:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_token_limited_to_an_environment_never_reads_secrets_back() -> Outcome {
    let world = keyed(KEY)?;
    let ctx = &world.ctx;
    let created = tokens::create(ctx, &common::admin(tokens::CREATE), client_token("dev")).await?;
    let limited = common::token(tokens::LIST, Some(&["production"]));
    let listed = tokens::list(ctx, &limited).await?;
    assert!(
        listed.tokens[0].secret.ends_with(".***"),
        "{}",
        listed.tokens[0].secret
    );
    assert_ne!(listed.tokens[0].secret, created.secret);
    let settings: OidcSettings = serde_json::from_value(json!({
        "enabled": false, "clientId": "halyard", "secret": "kept-from-limited",
        "discoverUrl": "https://login.example.com/realms/acme",
    }))?;
    oidc::save_settings(ctx, ctx.identity(), &common::admin(oidc::SAVE_SETTINGS), settings).await?;
    let read = oidc::settings(ctx, &common::token(oidc::SETTINGS, Some(&["production"]))).await?;
    assert_eq!(read.secret.as_deref(), Some("*****"));
    Ok(())
}
