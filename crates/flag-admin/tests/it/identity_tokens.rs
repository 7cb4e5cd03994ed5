//! API tokens: what `identity::tokens` makes, lists and deletes, and what `identity::auth` then
//! grants each credential, on the backend under test.

use chrono::{TimeDelta, Utc};
use flag_admin::AdminError;
use flag_admin::identity::auth::{self, Credential, Principal};
use flag_admin::identity::tokens::{self, types::CreateToken, types::UpdateToken};
use flag_admin::runtime::domain::{Timestamp, TokenType};
use flag_store::queries;

use crate::common::{self, Outcome, World};

/// A request for a token named `name` of `kind`, for the default environment and every project.
fn request(name: &str, kind: TokenType) -> CreateToken {
    CreateToken {
        token_name: Some(name.into()),
        username: None,
        token_type: kind,
        environment: None,
        projects: None,
        project: None,
        expires_at: None,
    }
}

/// The message of a validation failure, or a description of what came instead.
fn invalid<T: std::fmt::Debug>(result: Result<T, AdminError>) -> String {
    match result {
        Err(AdminError::Validation { message, .. }) => message,
        other => format!("not a validation failure: {other:?}"),
    }
}

#[tokio::test]
async fn a_token_is_made_for_an_environment_and_projects_and_its_secret_shown_once() -> Outcome {
    let world = World::new()?;
    let caller = common::admin(tokens::CREATE);
    let created = tokens::create(&world.ctx, &caller, request("web", TokenType::Client)).await?;
    // Unleash's first format: `<project>:<environment>.<random part>`.
    let (scope, random) = created.secret.split_once('.').ok_or("no dot in the secret")?;
    assert_eq!(scope, "*:development");
    assert_eq!(random.len(), 56);
    assert!(random.bytes().all(|byte| byte.is_ascii_hexdigit()), "{random}");
    assert_eq!(
        (
            created.token_name.as_str(),
            created.token_type.as_str(),
            created.environment.as_str(),
            created.project.as_str(),
            created.projects.clone()
        ),
        ("web", "client", "development", "*", vec!["*".to_owned()])
    );
    assert_eq!(created.expires_at, None);

    // Several projects: the secret names none of them; `*` among them is every project.
    let mut several = request("two", TokenType::Backend);
    several.projects = Some(vec!["default".into(), "default".into()]);
    several.environment = Some("production".into());
    let two = tokens::create(&world.ctx, &caller, several).await?;
    assert!(two.secret.starts_with("[]:production."), "{}", two.secret);
    let mut star = request("star", TokenType::Frontend);
    star.projects = Some(vec!["default".into(), "*".into()]);
    let star = tokens::create(&world.ctx, &caller, star).await?;
    assert_eq!(star.projects, ["*"]);
    // `username`, which older scripts send, stands in for the name; `project` for the list.
    let mut older = request("", TokenType::Client);
    older.token_name = None;
    older.username = Some(" legacy ".into());
    older.project = Some("default".into());
    let older = tokens::create(&world.ctx, &caller, older).await?;
    assert_eq!(
        (older.token_name.as_str(), older.project.as_str()),
        ("legacy", "default")
    );

    // Listed without secrets; a backend token reads back as a client token, as in Unleash.
    let listed = tokens::list(&world.ctx, &common::admin(tokens::LIST)).await?;
    assert_eq!(listed.tokens.len(), 4);
    let web = listed
        .tokens
        .iter()
        .find(|token| token.token_name == "web")
        .ok_or("web is listed")?;
    assert_eq!(web.secret, "*:development.***");
    assert!(!listed.tokens.iter().any(|token| token.secret.contains(random)));
    let backend = listed
        .tokens
        .iter()
        .find(|token| token.token_name == "two")
        .ok_or("two is listed")?;
    assert_eq!(
        (backend.token_type.as_str(), backend.secret.as_str()),
        ("client", "[]:production.***")
    );
    let named = tokens::by_name(&world.ctx, &common::admin(tokens::BY_NAME), "two".into()).await?;
    assert_eq!(named.tokens.len(), 1);
    assert!(
        tokens::by_name(&world.ctx, &common::admin(tokens::BY_NAME), "nobody".into())
            .await?
            .tokens
            .is_empty()
    );

    // The audit log names the caller who made it.
    let events = queries::events::of_type(&mut *world.store().connection()?, "api-token-created")?;
    assert_eq!(events.len(), 4);
    assert!(
        events.iter().all(|event| event.created_by == "test-token"),
        "{events:?}"
    );
    Ok(())
}

#[tokio::test]
async fn a_token_request_that_breaks_a_rule_is_refused_and_stores_nothing() -> Outcome {
    let world = World::new()?;
    let caller = common::admin(tokens::CREATE);
    let admin = tokens::create(&world.ctx, &caller, request("a", TokenType::Admin)).await;
    assert_eq!(invalid(admin), "/type must be client, backend or frontend");
    let blank = tokens::create(&world.ctx, &caller, request("  ", TokenType::Client)).await;
    assert_eq!(invalid(blank), "/tokenName must not be empty");
    let mut none = request("t", TokenType::Client);
    none.projects = Some(Vec::new());
    assert_eq!(
        invalid(tokens::create(&world.ctx, &caller, none).await),
        "/projects must name at least one project"
    );
    for (kind, message) in [
        (
            TokenType::Client,
            "Client token cannot be scoped to all environments",
        ),
        (
            TokenType::Backend,
            "Client token cannot be scoped to all environments",
        ),
        (
            TokenType::Frontend,
            "Frontend token cannot be scoped to all environments",
        ),
    ] {
        let mut every = request("t", kind);
        every.environment = Some("*".into());
        assert_eq!(invalid(tokens::create(&world.ctx, &caller, every).await), message);
    }
    let mut nowhere = request("t", TokenType::Backend);
    nowhere.environment = Some("nowhere".into());
    assert_eq!(
        invalid(tokens::create(&world.ctx, &caller, nowhere).await),
        "Environment=nowhere does not exist"
    );
    let mut unknown = request("t", TokenType::Client);
    unknown.projects = Some(vec!["default".into(), "no-such-project".into()]);
    let refused = tokens::create(&world.ctx, &caller, unknown).await;
    assert!(
        matches!(&refused, Err(AdminError::Validation { message, details })
            if message == "Project=no-such-project does not exist"
                && details[0].path.as_deref() == Some("/projects")),
        "{refused:?}"
    );
    assert!(
        tokens::list(&world.ctx, &common::admin(tokens::LIST))
            .await?
            .tokens
            .is_empty(),
        "nothing was stored"
    );
    Ok(())
}

#[tokio::test]
async fn each_credential_grants_what_its_token_type_says_until_it_expires() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let caller = common::admin(tokens::CREATE);
    let client = tokens::create(ctx, &caller, request("client", TokenType::Client)).await?;
    let mut limited = request("frontend", TokenType::Frontend);
    limited.projects = Some(vec!["default".into()]);
    limited.environment = Some("production".into());
    let frontend = tokens::create(ctx, &caller, limited).await?;
    flag_admin::app::seeding::seed_admin_tokens(
        world.store(),
        &["*:*.every-secret".into(), "*:production.prod-secret".into()],
    )?;

    let Credential::Client(access) = auth::resolve_token(ctx, identity, &client.secret).await? else {
        return Err("a client token resolves to client access".into());
    };
    assert_eq!(
        (access.environment.as_deref(), access.projects.clone()),
        (Some("development"), None)
    );
    assert!(auth::still_valid(ctx, identity, &access).await?);
    assert_eq!(
        auth::resolve_token(ctx, identity, &frontend.secret).await?,
        Credential::Frontend(auth::FrontendAccess {
            environment: "production".into(),
            projects: Some(vec!["default".into()]),
        })
    );
    assert_eq!(
        auth::resolve_token(ctx, identity, "*:*.every-secret").await?,
        Credential::Admin(Principal::AdminToken {
            name: "admin".into(),
            environments: None,
        })
    );
    assert_eq!(
        auth::resolve_token(ctx, identity, "*:production.prod-secret").await?,
        Credential::Admin(Principal::AdminToken {
            name: "admin".into(),
            environments: Some(vec!["production".into()]),
        })
    );
    assert_eq!(
        auth::resolve_token(ctx, identity, "*:development.guess").await?,
        Credential::Unknown
    );
    // A secret whose public part was changed is no secret this server knows.
    let forged = client.secret.replacen("*:development", "*:production", 1);
    assert_eq!(
        auth::resolve_token(ctx, identity, &forged).await?,
        Credential::Unknown
    );

    // Edge learns which of the tokens it asks about are valid, and what they grant.
    let valid = auth::validate_tokens(
        ctx,
        identity,
        vec![client.secret.clone(), "nope".into(), frontend.secret.clone()],
    )
    .await?;
    let granted: Vec<_> = valid
        .iter()
        .map(|token| {
            (
                token.token_type,
                token.environment.as_str(),
                token.projects.clone(),
            )
        })
        .collect();
    assert_eq!(
        granted,
        [
            (TokenType::Client, "development", vec!["*".to_owned()]),
            (TokenType::Frontend, "production", vec!["default".to_owned()]),
        ]
    );

    // Expired a second ago: refused like an unknown token, everywhere.
    let past = UpdateToken {
        expires_at: Timestamp(Utc::now() - TimeDelta::seconds(1)),
    };
    tokens::set_expiry(ctx, &caller, &client.secret, past).await?;
    assert_eq!(
        auth::resolve_token(ctx, identity, &client.secret).await?,
        Credential::Unknown
    );
    assert!(!auth::still_valid(ctx, identity, &access).await?);
    assert!(
        auth::validate_tokens(ctx, identity, vec![client.secret.clone()])
            .await?
            .is_empty()
    );
    let listed = tokens::by_name(ctx, &common::admin(tokens::BY_NAME), "client".into()).await?;
    assert!(listed.tokens[0].expires_at.is_some(), "{listed:?}");
    // An unknown secret changes nothing and is no error, as in Unleash.
    let future = UpdateToken {
        expires_at: Timestamp(Utc::now() + TimeDelta::days(1)),
    };
    tokens::set_expiry(ctx, &caller, "*:development.unknown", future).await?;
    Ok(())
}

#[tokio::test]
async fn deleting_a_token_revokes_it_and_an_unknown_one_is_quietly_left() -> Outcome {
    let world = World::new()?;
    let (ctx, identity) = (&world.ctx, world.ctx.identity());
    let caller = common::admin(tokens::CREATE);
    let first = tokens::create(ctx, &caller, request("first", TokenType::Client)).await?;
    let second = tokens::create(ctx, &caller, request("second", TokenType::Client)).await?;

    tokens::delete(ctx, &caller, &first.secret).await?;
    assert_eq!(
        auth::resolve_token(ctx, identity, &first.secret).await?,
        Credential::Unknown
    );
    tokens::delete(ctx, &caller, &first.secret).await?;
    tokens::delete(ctx, &caller, "*:development.never-made").await?;
    let left = tokens::list(ctx, &common::admin(tokens::LIST)).await?;
    assert_eq!(left.tokens.len(), 1);

    // The console deletes by id, which must name a token.
    let id = left.tokens[0].id;
    let unknown = tokens::delete_by_id(ctx, &caller, id + 1000).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    tokens::delete_by_id(ctx, &caller, id).await?;
    assert_eq!(
        auth::resolve_token(ctx, identity, &second.secret).await?,
        Credential::Unknown
    );
    assert!(
        tokens::list(ctx, &common::admin(tokens::LIST))
            .await?
            .tokens
            .is_empty()
    );
    Ok(())
}

#[tokio::test]
async fn a_projects_tokens_are_those_that_reach_it() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let caller = common::admin(tokens::CREATE);
    let other: flag_admin::catalogue::projects::types::CreateProject =
        serde_json::from_value(serde_json::json!({"id": "shop", "name": "Shop"}))?;
    flag_admin::catalogue::projects::create(
        ctx,
        &common::admin(flag_admin::catalogue::projects::CREATE),
        other,
    )
    .await?;
    tokens::create(ctx, &caller, request("everywhere", TokenType::Client)).await?;
    let mut shop = request("shop-only", TokenType::Client);
    shop.projects = Some(vec!["shop".into()]);
    tokens::create(ctx, &caller, shop).await?;
    flag_admin::app::seeding::seed_admin_tokens(world.store(), &["*:*.admin-secret".into()])?;

    let own = tokens::create_for_project(
        ctx,
        &caller,
        "default".into(),
        request("own", TokenType::Frontend),
    )
    .await?;
    assert_eq!(own.projects, ["default"]);
    assert!(own.secret.starts_with("default:development."), "{}", own.secret);
    let mut names: Vec<String> =
        tokens::of_project(ctx, &common::admin(tokens::OF_PROJECT), "default".into())
            .await?
            .tokens
            .into_iter()
            .map(|token| token.token_name)
            .collect();
    names.sort();
    // Admin tokens and tokens for other projects only are not the project's.
    assert_eq!(names, ["everywhere", "own"]);

    for missing in [
        tokens::of_project(ctx, &common::admin(tokens::OF_PROJECT), "nope".into())
            .await
            .map(drop),
        tokens::create_for_project(ctx, &caller, "nope".into(), request("t", TokenType::Client))
            .await
            .map(drop),
    ] {
        assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    }

    // A project deletes only a token limited to it alone.
    let everywhere = tokens::create(ctx, &caller, request("everywhere-2", TokenType::Client)).await?;
    let refused = tokens::delete_for_project(ctx, &caller, "default".into(), &everywhere.secret).await;
    assert!(
        matches!(refused, Err(AdminError::Validation { .. })),
        "{refused:?}"
    );
    let unknown = tokens::delete_for_project(ctx, &caller, "default".into(), "default:development.x").await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    tokens::delete_for_project(ctx, &caller, "default".into(), &own.secret).await?;
    assert!(
        tokens::by_name(ctx, &common::admin(tokens::BY_NAME), "own".into())
            .await?
            .tokens
            .is_empty()
    );
    Ok(())
}
