//! A first start's seeding: configured and generated admin tokens, the first administrator, and
//! flags imported from a file, from `app::seeding`, on the backend under test.

use std::net::{IpAddr, Ipv4Addr};

use flag_admin::AdminError;
use flag_admin::app::seeding::{self, AdminUser, FileImport, FirstAdmin};
use flag_admin::identity::auth::{self, Credential, Principal};
use flag_admin::identity::session::{self, types::LoginRequest};
use flag_admin::identity::tokens;
use flag_admin::runtime::domain::TokenType;
use flag_store::queries::import::ImportReport;
use serde_json::json;

use crate::common::{Outcome, World};

const HERE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));

/// The owner-only permission bits of `path`.
fn mode(path: &std::path::Path) -> Result<u32, std::io::Error> {
    use std::os::unix::fs::PermissionsExt as _;
    Ok(std::fs::metadata(path)?.permissions().mode() & 0o777)
}

#[tokio::test]
async fn configured_tokens_are_stored_once_with_the_scope_their_secret_names() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let admin = ["*:*.every".to_owned(), String::new(), "plain-secret".to_owned()];
    // Replicas starting together with one configuration store each token once.
    seeding::seed_admin_tokens(world.store(), &admin)?;
    seeding::seed_admin_tokens(world.store(), &admin)?;
    seeding::seed_tokens(
        world.store(),
        TokenType::Client,
        &["default:development.sdk".into()],
    )?;
    seeding::seed_tokens(
        world.store(),
        TokenType::Frontend,
        &["*:production.browser".into()],
    )?;
    let listed = tokens::list(ctx, &crate::common::admin(tokens::LIST)).await?;
    let stored: Vec<(&str, &str, &str, &str)> = listed
        .tokens
        .iter()
        .map(|token| {
            (
                token.token_name.as_str(),
                token.token_type.as_str(),
                token.environment.as_str(),
                token.project.as_str(),
            )
        })
        .collect();
    assert_eq!(
        stored,
        [
            ("admin", "admin", "*", "*"),
            ("admin", "admin", "*", "*"),
            ("admin", "client", "development", "default"),
            ("admin", "frontend", "production", "*"),
        ]
    );
    for secret in ["*:*.every", "plain-secret"] {
        assert_eq!(
            auth::resolve_token(ctx, identity, secret).await?,
            Credential::Admin(Principal::AdminToken {
                name: "admin".into(),
                environments: None,
            })
        );
    }
    let Credential::Client(client) = auth::resolve_token(ctx, identity, "default:development.sdk").await?
    else {
        return Err("a configured client token is a client token".into());
    };
    assert_eq!(
        (client.environment.as_deref(), client.projects),
        (Some("development"), Some(vec!["default".to_owned()]))
    );
    assert_eq!(
        auth::resolve_token(ctx, identity, "*:production.browser").await?,
        Credential::Frontend(auth::FrontendAccess {
            environment: "production".into(),
            projects: None,
        })
    );
    Ok(())
}

#[tokio::test]
async fn a_first_start_without_admin_tokens_writes_one_to_a_private_file() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let directory = world.directory().join("state");
    let path = seeding::ensure_admin_token(world.store(), &directory)?.ok_or("a token was made")?;
    assert_eq!(path, directory.join("admin-token"));
    assert_eq!(mode(&path)?, 0o600);
    let written = std::fs::read_to_string(&path)?;
    let secret = written.strip_suffix('\n').ok_or("one line")?;
    let random = secret.strip_prefix("*:*.").ok_or("a token for everything")?;
    assert_eq!(random.len(), 56);
    assert!(matches!(
        auth::resolve_token(ctx, identity, secret).await?,
        Credential::Admin(Principal::AdminToken {
            environments: None,
            ..
        })
    ));
    // Only the file is left in the directory, and a second start makes none.
    let entries = std::fs::read_dir(&directory)?.count();
    assert_eq!(entries, 1);
    assert_eq!(seeding::ensure_admin_token(world.store(), &directory)?, None);
    assert_eq!(std::fs::read_to_string(&path)?, written);

    // A configured admin token is reason enough to make none.
    let configured = World::new()?;
    seeding::seed_admin_tokens(configured.store(), &["*:*.configured".into()])?;
    assert_eq!(
        seeding::ensure_admin_token(configured.store(), configured.directory())?,
        None
    );
    assert!(!configured.directory().join("admin-token").exists());
    Ok(())
}

fn login(username: &str, password: &str) -> LoginRequest {
    LoginRequest {
        username: username.into(),
        password: password.into(),
    }
}

#[tokio::test]
async fn the_first_administrator_is_made_once_with_the_password_given_or_a_generated_one() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    for username in ["", " ", "admin@example.com"] {
        let first = FirstAdmin {
            username: username.into(),
            password: None,
        };
        let refused = seeding::ensure_admin_user(world.store(), world.directory(), &first);
        assert!(
            matches!(&refused, Err(AdminError::Validation { details, .. })
                if details[0].path.as_deref() == Some("/UNLEASH_DEFAULT_ADMIN_USERNAME")),
            "{username:?}: {refused:?}"
        );
    }
    let configured = FirstAdmin {
        username: " root ".into(),
        password: Some("Adm1n-Passw0rd!".into()),
    };
    assert_eq!(
        seeding::ensure_admin_user(world.store(), world.directory(), &configured)?,
        AdminUser::Created
    );
    let logged_in = session::login(ctx, identity, HERE, login("root", "Adm1n-Passw0rd!")).await?;
    assert!(matches!(
        auth::resolve_session(ctx, &logged_in.session).await?,
        Credential::Admin(Principal::User {
            role: flag_admin::runtime::domain::RootRole::Admin,
            ..
        })
    ));
    // Once anyone exists, nothing is made, whatever is configured.
    assert_eq!(
        seeding::ensure_admin_user(world.store(), world.directory(), &configured)?,
        AdminUser::Exists
    );
    let other = FirstAdmin {
        username: String::new(),
        password: None,
    };
    assert_eq!(
        seeding::ensure_admin_user(world.store(), world.directory(), &other)?,
        AdminUser::Exists
    );

    // Without a password, one is generated, follows every rule, and is readable by its owner only.
    let fresh = World::new()?;
    let generated = FirstAdmin {
        username: "admin".into(),
        password: Some(String::new()),
    };
    let AdminUser::Generated(path) =
        seeding::ensure_admin_user(fresh.store(), fresh.directory(), &generated)?
    else {
        return Err("a password was generated".into());
    };
    assert_eq!(
        (path.clone(), mode(&path)?),
        (fresh.directory().join("admin-password"), 0o600)
    );
    let password = std::fs::read_to_string(&path)?.trim_end().to_owned();
    assert!(
        flag_admin::identity::password::broken_rules(&password).is_empty(),
        "{password}"
    );
    session::login(&fresh.ctx, fresh.ctx.identity(), HERE, login("admin", &password)).await?;
    Ok(())
}

#[tokio::test]
async fn a_document_of_flags_is_imported_and_a_file_applied_once() -> Outcome {
    let world = World::new()?;
    let document: flag_eval::ClientFeatures = serde_json::from_value(json!({
        "features": [
            {"name": "on", "enabled": true, "strategies": [{"name": "default"}]},
            {"name": "custom", "enabled": true, "strategies": [{"name": "myOwnStrategy"}]}
        ],
        "segments": [{"id": 3, "name": "beta", "constraints": []}]
    }))?;
    let (_, report) = seeding::import(world.store(), "default", "development", &document)?;
    assert_eq!(
        report,
        ImportReport {
            created: 2,
            updated: 0,
            segments: 1
        }
    );
    let (_, again) = seeding::import(world.store(), "default", "production", &document)?;
    assert_eq!(
        again,
        ImportReport {
            created: 0,
            updated: 2,
            segments: 0
        }
    );
    let missing = seeding::import(world.store(), "nope", "development", &document);
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");

    // A file applied at start is applied again only when it, its project or environment changed.
    let file = serde_json::to_vec(&json!({"features": [{"name": "from-file", "enabled": true}]}))?;
    let applied = seeding::import_file(world.store(), "default", "development", &file)?;
    assert_eq!(
        applied,
        FileImport::ClientFeatures(ImportReport {
            created: 1,
            updated: 0,
            segments: 0
        })
    );
    assert_eq!(
        seeding::import_file(world.store(), "default", "development", &file)?,
        FileImport::Unchanged
    );
    assert!(matches!(
        seeding::import_file(world.store(), "default", "production", &file)?,
        FileImport::ClientFeatures(ImportReport { updated: 1, .. })
    ));
    let not_json = seeding::import_file(world.store(), "default", "development", b"{flags");
    assert!(
        matches!(&not_json, Err(AdminError::Validation { message, .. }) if message.starts_with("the file is not JSON")),
        "{not_json:?}"
    );
    let unreadable = seeding::import_file(world.store(), "default", "development", br#"{"features": 3}"#);
    assert!(
        matches!(unreadable, Err(AdminError::Validation { .. })),
        "{unreadable:?}"
    );

    // An export document, as Unleash writes one, is imported as such.
    let export = serde_json::to_vec(&json!({
        "features": [{"name": "exported", "project": "default", "type": "release"}],
        "featureStrategies": [],
        "featureEnvironments": [{"name": "exported", "featureName": "exported", "environment": "development", "enabled": true}],
        "tagTypes": []
    }))?;
    assert_eq!(
        seeding::import_file(world.store(), "default", "development", &export)?,
        FileImport::Export
    );
    let listed = flag_admin::catalogue::features::list(
        &world.ctx,
        &crate::common::admin(flag_admin::catalogue::features::LIST),
        "default".into(),
    )
    .await?;
    let names = crate::common::json(&listed)?.to_string();
    assert!(
        names.contains("\"exported\"") && names.contains("\"from-file\""),
        "{names}"
    );
    Ok(())
}
