//! Environments and projects: environments created in display order, switched and reordered,
//! counted as Unleash counts them; projects created with their environments, which are then
//! enabled and disabled one by one.

use flag_admin::AdminError;
use flag_admin::catalogue::features::types::{FeatureDetailOut, FeatureQuery};
use flag_admin::catalogue::projects::types::ProjectEnvironment;
use flag_admin::catalogue::{archive, environments, features, projects};
use serde_json::json;

use crate::catalogue_fixture::{
    administrator, bare_feature, body, environment_writer, place, seed_feature, store_token, writer,
};
use crate::common::{self, Outcome, World};

fn environment_request(name: &str) -> Result<ProjectEnvironment, serde_json::Error> {
    body(json!({"environment": name}))
}

#[tokio::test]
async fn environments_are_created_in_display_order_switched_and_reordered() -> Outcome {
    let world = World::new()?;
    let admin = administrator();
    let listed = environments::list(&world.ctx).await?;
    assert_eq!(listed.version, 1);
    let orders: Vec<(&str, i32)> = listed
        .environments
        .iter()
        .map(|environment| (environment.name.as_str(), environment.sort_order))
        .collect();
    assert_eq!(orders, [("development", 2), ("production", 3)]);

    // Without a sort order a new environment goes last; one given is kept.
    let staging = environments::create(
        &world.ctx,
        &admin,
        body(json!({"name": "staging", "type": "test"}))?,
    )
    .await?;
    assert_eq!(
        (
            staging.name.as_str(),
            staging.environment_type.as_str(),
            staging.sort_order,
            staging.enabled
        ),
        ("staging", "test", 4, true)
    );
    assert!(!staging.protected && staging.required_approvals.is_none());
    let read = environments::get(&world.ctx, "staging".into()).await?;
    assert_eq!((read.name, read.sort_order), ("staging".to_owned(), 4));
    let early = environments::create(
        &world.ctx,
        &admin,
        body(json!({"name": "early", "type": "test", "sortOrder": 1}))?,
    )
    .await?;
    assert_eq!(early.sort_order, 1);
    let late = environments::create(
        &world.ctx,
        &admin,
        body(json!({"name": "late", "type": "test", "enabled": false}))?,
    )
    .await?;
    assert_eq!((late.sort_order, late.enabled), (5, false));
    let names: Vec<String> = environments::list(&world.ctx)
        .await?
        .environments
        .into_iter()
        .map(|environment| environment.name)
        .collect();
    assert_eq!(names, ["early", "development", "production", "staging", "late"]);
    let taken = environments::create(
        &world.ctx,
        &admin,
        body(json!({"name": "staging", "type": "test"}))?,
    )
    .await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    assert!(
        body::<environments::types::CreateEnvironment>(json!({"name": "no type"})).is_err(),
        "a name is URL-friendly and a type is given"
    );

    // Switched off and on; the environment must exist.
    environments::switch(&world.ctx, &admin, "staging".into(), false).await?;
    assert!(!environments::get(&world.ctx, "staging".into()).await?.enabled);
    environments::switch(&world.ctx, &admin, "staging".into(), true).await?;
    assert!(environments::get(&world.ctx, "staging".into()).await?.enabled);
    let unknown = environments::switch(&world.ctx, &admin, "nope".into(), true).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let unknown = environments::get(&world.ctx, "nope".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");

    // Reordered by name; unknown names are skipped.
    environments::set_sort_order(
        &world.ctx,
        [("production", 0), ("development", 1), ("unknown", 3)]
            .into_iter()
            .map(|(name, order)| (name.to_owned(), order))
            .collect(),
    )
    .await?;
    let listed = environments::list(&world.ctx).await?;
    assert_eq!(listed.environments[0].name, "production");
    assert_eq!(listed.environments[1].name, "development");
    Ok(())
}

#[tokio::test]
async fn environments_count_projects_tokens_and_flags_on_as_unleash_does() -> Outcome {
    let world = World::new()?;
    store_token(&world, "client", "production", &["default"])?;
    store_token(&world, "backend", "development", &["*"])?;
    store_token(&world, "admin", "*", &["*"])?;
    projects::create(
        &world.ctx,
        &administrator(),
        body(json!({"id": "shop", "name": "Shop", "environments": ["development"]}))?,
    )
    .await?;
    // `kept` is on in both environments and then archived: Unleash still counts it.
    seed_feature(&world, "kept").await?;
    archive::archive_one(&world.ctx, &writer(), "default".into(), "kept".into()).await?;
    // `live` is on in development only, and `off` nowhere.
    bare_feature(&world, "default", "live").await?;
    features::switch_with(
        &world.ctx,
        &environment_writer(),
        place("live", "development"),
        true,
        Default::default(),
    )
    .await?;
    bare_feature(&world, "default", "off").await?;

    let listed = environments::list(&world.ctx).await?;
    let counts: Vec<(&str, i64, i64, i64)> = listed
        .environments
        .iter()
        .map(|environment| {
            (
                environment.name.as_str(),
                environment.project_count,
                environment.api_token_count,
                environment.enabled_toggle_count,
            )
        })
        .collect();
    assert_eq!(counts, [("development", 2, 1, 2), ("production", 1, 1, 1)]);

    // A project's view: whether it has each environment, its tokens there, its flags on there.
    let view = |seen: &environments::types::ProjectEnvironmentsOut| -> Vec<(String, bool, usize, i64)> {
        seen.environments
            .iter()
            .map(|environment| {
                (
                    environment.name.clone(),
                    environment.visible,
                    environment.project_api_token_count,
                    environment.project_enabled_toggle_count,
                )
            })
            .collect()
    };
    let default = environments::of_project(&world.ctx, "default".into()).await?;
    assert_eq!(default.version, 1);
    assert_eq!(
        view(&default),
        [
            ("development".to_owned(), true, 1, 2),
            ("production".to_owned(), true, 1, 1)
        ]
    );
    let shop = environments::of_project(&world.ctx, "shop".into()).await?;
    assert_eq!(
        view(&shop),
        [
            ("development".to_owned(), true, 1, 0),
            ("production".to_owned(), false, 0, 0)
        ]
    );
    // An unknown project has none of them.
    let unknown = environments::of_project(&world.ctx, "nope".into()).await?;
    assert!(
        unknown
            .environments
            .iter()
            .all(|environment| !environment.visible)
    );
    Ok(())
}

#[tokio::test]
async fn projects_are_created_with_their_environments_and_read() -> Outcome {
    let world = World::new()?;
    let admin = administrator();
    environments::create(
        &world.ctx,
        &admin,
        body(json!({"name": "staging", "type": "test", "enabled": false}))?,
    )
    .await?;
    // The id is made from the name when none is given.
    let created = projects::create(
        &world.ctx,
        &admin,
        body(json!({"name": "Mobile Apps", "description": "phones", "environments": ["development"]}))?,
    )
    .await?;
    assert_eq!(created.id, "mobile-apps");
    assert_eq!(created.name, "Mobile Apps");
    assert_eq!(created.environments, ["development"]);
    assert_eq!(
        (created.mode, created.default_stickiness, created.feature_limit),
        ("open", "default", None)
    );
    // Without a list, every enabled environment.
    let all = projects::create(&world.ctx, &admin, body(json!({"id": "web", "name": "Web"}))?).await?;
    assert_eq!(all.environments, ["development", "production"]);

    let taken = projects::create(&world.ctx, &admin, body(json!({"name": "Mobile Apps"}))?).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let empty = projects::create(&world.ctx, &admin, body(json!({"name": "  "}))?).await;
    assert!(
        matches!(&empty, Err(AdminError::Validation { details, .. }) if details[0].path.as_deref() == Some("/name")),
        "{empty:?}"
    );
    let unknown = projects::create(
        &world.ctx,
        &admin,
        body(json!({"name": "Lost", "environments": ["nowhere"]}))?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    assert!(
        projects::get(&world.ctx, "lost".into()).await.is_err(),
        "nothing of a refused project is kept"
    );

    assert_eq!(
        projects::names(&world.ctx).await?,
        [
            ("default".to_owned(), "Default".to_owned()),
            ("mobile-apps".to_owned(), "Mobile Apps".to_owned()),
            ("web".to_owned(), "Web".to_owned())
        ]
    );
    bare_feature(&world, "mobile-apps", "tap").await?;
    let read = projects::get(&world.ctx, "mobile-apps".into()).await?;
    assert_eq!(read.description.as_deref(), Some("phones"));
    let environments: Vec<&str> = read
        .environments
        .iter()
        .map(|environment| environment.environment.as_str())
        .collect();
    assert_eq!(environments, ["development"]);
    let flags: Vec<(&str, &str, bool)> = read
        .features
        .iter()
        .map(|feature| {
            (
                feature.name.as_str(),
                feature.feature_type.as_str(),
                feature.stale,
            )
        })
        .collect();
    assert_eq!(flags, [("tap", "release", false)]);
    let unknown = projects::get(&world.ctx, "none".into()).await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    Ok(())
}

/// The flag `tap` of the project `mobile` in each environment it has there.
async fn tap_states(world: &World) -> Result<FeatureDetailOut, AdminError> {
    features::get(
        &world.ctx,
        &common::admin(features::GET),
        ("mobile".into(), "tap".into()),
        FeatureQuery::default(),
    )
    .await
}

#[tokio::test]
async fn environments_are_enabled_and_disabled_in_a_project() -> Outcome {
    let world = World::new()?;
    let admin = administrator();
    environments::create(
        &world.ctx,
        &admin,
        body(json!({"name": "staging", "type": "test"}))?,
    )
    .await?;
    projects::create(
        &world.ctx,
        &admin,
        body(json!({"id": "mobile", "name": "Mobile", "environments": ["development"]}))?,
    )
    .await?;
    bare_feature(&world, "mobile", "tap").await?;
    projects::enable_environment(
        &world.ctx,
        &admin,
        "mobile".into(),
        environment_request("staging")?,
    )
    .await?;
    // The project's flags get a state there, switched off.
    let names: Vec<(String, bool)> = tap_states(&world)
        .await?
        .environments
        .into_iter()
        .map(|state| (state.name, state.enabled))
        .collect();
    assert_eq!(
        names,
        [("development".to_owned(), false), ("staging".to_owned(), false)]
    );

    // Enabled twice is taken; an unknown environment is bad data; an unknown project is not
    // found; change requests are not supported.
    let twice = projects::enable_environment(
        &world.ctx,
        &admin,
        "mobile".into(),
        environment_request("staging")?,
    )
    .await;
    assert!(
        matches!(&twice, Err(AdminError::NameExists(message)) if message == "mobile already has the environment staging enabled"),
        "{twice:?}"
    );
    let unknown =
        projects::enable_environment(&world.ctx, &admin, "mobile".into(), environment_request("nope")?).await;
    assert!(
        matches!(&unknown, Err(AdminError::BadData(message)) if message == "Environment nope does not exist"),
        "{unknown:?}"
    );
    let unknown = projects::enable_environment(
        &world.ctx,
        &admin,
        "nowhere".into(),
        environment_request("production")?,
    )
    .await;
    assert!(matches!(unknown, Err(AdminError::NotFound(_))), "{unknown:?}");
    let change_requests = projects::enable_environment(
        &world.ctx,
        &admin,
        "mobile".into(),
        body(json!({"environment": "production", "changeRequestsEnabled": true}))?,
    )
    .await;
    assert!(
        matches!(&change_requests, Err(AdminError::Validation { details, .. })
            if details[0].path.as_deref() == Some("/changeRequestsEnabled")),
        "{change_requests:?}"
    );
    // A default strategy is accepted and ignored.
    projects::enable_environment(
        &world.ctx,
        &admin,
        "mobile".into(),
        body(json!({"environment": "production", "changeRequestsEnabled": false, "defaultStrategy": {"name": "default"}}))?,
    )
    .await?;

    // Disabled, the project's flags lose their state there.
    projects::disable_environment(&world.ctx, &admin, "mobile".into(), "staging".into()).await?;
    let names: Vec<String> = tap_states(&world)
        .await?
        .environments
        .into_iter()
        .map(|state| state.name)
        .collect();
    assert_eq!(names, ["development", "production"]);
    let environments: Vec<String> = projects::get(&world.ctx, "mobile".into())
        .await?
        .environments
        .into_iter()
        .map(|environment| environment.environment)
        .collect();
    assert_eq!(environments, ["development", "production"]);
    let again = projects::disable_environment(&world.ctx, &admin, "mobile".into(), "staging".into()).await;
    assert!(matches!(again, Err(AdminError::NotFound(_))), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn a_projects_sdk_tokens_are_counted_per_environment() -> Outcome {
    let world = World::new()?;
    store_token(&world, "client", "development", &["default"])?;
    store_token(&world, "frontend", "development", &["*"])?;
    store_token(&world, "backend", "production", &["other"])?;
    store_token(&world, "client", "*", &["default"])?;
    store_token(&world, "admin", "*", &["*"])?;
    let counts = projects::token_counts(&world.ctx, "default".into()).await?;
    let counts: Vec<(&str, i64)> = counts
        .iter()
        .map(|(environment, count)| (environment.as_str(), *count))
        .collect();
    // The admin token and the other project's token reach no SDK of `default`.
    assert_eq!(counts, [("*", 1), ("development", 2)]);
    Ok(())
}

#[tokio::test]
async fn a_projects_naming_pattern_holds_for_new_and_copied_flags() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    projects::create(
        ctx,
        &administrator(),
        body(json!({"id": "shop", "name": "Shop"}))?,
    )
    .await?;
    let owner = common::admin(projects::UPDATE_SETTINGS);
    let broken = projects::update_settings(
        ctx,
        &owner,
        "shop".into(),
        body(json!({"mode": "open", "featureNaming": {"pattern": "shop-(", "example": null}}))?,
    )
    .await;
    assert!(matches!(broken, Err(AdminError::Validation { .. })), "{broken:?}");
    let mismatch = projects::update_settings(
        ctx,
        &owner,
        "shop".into(),
        body(json!({"featureNaming": {"pattern": "shop-[a-z]+", "example": "basket"}}))?,
    )
    .await;
    assert!(
        matches!(mismatch, Err(AdminError::Validation { .. })),
        "{mismatch:?}"
    );
    projects::update_settings(
        ctx,
        &owner,
        "shop".into(),
        body(json!({"mode": "protected",
                    "featureNaming": {"pattern": "shop-[a-z]+", "example": "shop-basket", "description": "shop- first"},
                    "linkTemplates": [{"title": "Issue", "urlTemplate": "https://issues.example.com/{{feature}}"}]}))?,
    )
    .await?;
    let refused = features::create(ctx, &writer(), "shop".into(), body(json!({"name": "basket"}))?).await;
    match refused {
        Err(AdminError::Validation { message, .. }) => {
            assert!(
                message.contains("shop-[a-z]+") && message.contains("shop-basket"),
                "{message}"
            );
        }
        other => panic!("a name off the pattern was taken: {other:?}"),
    }
    // The pattern matches the whole name.
    let partial = features::create(
        ctx,
        &writer(),
        "shop".into(),
        body(json!({"name": "shop-basket-2"}))?,
    )
    .await;
    assert!(partial.is_err(), "{partial:?}");
    features::create(
        ctx,
        &writer(),
        "shop".into(),
        body(json!({"name": "shop-basket"}))?,
    )
    .await?;
    let copy = features::clone(
        ctx,
        &common::admin(features::CLONE),
        ("shop".into(), "shop-basket".into()),
        body(json!({"name": "basket-copy"}))?,
    )
    .await;
    assert!(matches!(copy, Err(AdminError::Validation { .. })), "{copy:?}");
    // Other projects are free.
    features::create(ctx, &writer(), "default".into(), body(json!({"name": "basket"}))?).await?;

    let overview = crate::catalogue_fixture::json_of(
        &flag_admin::catalogue::overview::overview(ctx, "shop".into()).await?,
    )?;
    assert_eq!(overview["mode"], "protected");
    assert_eq!(overview["featureNaming"]["pattern"], "shop-[a-z]+");
    assert_eq!(overview["linkTemplates"][0]["title"], "Issue");
    let listed = crate::catalogue_fixture::json_of(&flag_admin::catalogue::overview::list(ctx).await?)?;
    let shop = listed["projects"]
        .as_array()
        .and_then(|projects| projects.iter().find(|project| project["id"] == "shop"))
        .ok_or("no shop in the list")?;
    assert_eq!(shop["mode"], "protected");
    Ok(())
}

#[tokio::test]
async fn projects_are_renamed_and_deleted_once_they_hold_no_live_flag() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    projects::create(ctx, &administrator(), body(json!({"id": "old", "name": "Old"}))?).await?;
    projects::update(
        ctx,
        &common::admin(projects::UPDATE),
        "old".into(),
        body(json!({"name": "Older", "description": "to go"}))?,
    )
    .await?;
    let read = crate::catalogue_fixture::json_of(&projects::get(ctx, "old".into()).await?)?;
    assert_eq!(read["name"], "Older");
    assert_eq!(read["description"], "to go");

    bare_feature(&world, "old", "leftover").await?;
    store_token(&world, "client", "development", &["old"])?;
    store_token(&world, "client", "production", &["old", "default"])?;
    let deleter = common::admin(projects::DELETE);
    let live = projects::delete(ctx, &deleter, "old".into()).await;
    assert!(matches!(live, Err(AdminError::InvalidOperation(_))), "{live:?}");
    let default = projects::delete(ctx, &deleter, "default".into()).await;
    assert!(
        matches!(default, Err(AdminError::InvalidOperation(_))),
        "{default:?}"
    );
    archive::archive_one(
        ctx,
        &common::admin(archive::ARCHIVE_ONE),
        "old".into(),
        "leftover".into(),
    )
    .await?;
    projects::delete(ctx, &deleter, "old".into()).await?;
    assert!(matches!(
        projects::get(ctx, "old".into()).await,
        Err(AdminError::NotFound(_))
    ));
    // Its archived flag and the token limited to it went; the shared token stays.
    let mut conn = world.store().connection()?;
    assert!(flag_store::queries::features::named(&mut conn, &["leftover".to_owned()])?.is_empty());
    let tokens = flag_store::queries::api_tokens::list(&mut conn)?;
    assert!(
        tokens
            .iter()
            .all(|token| token.projects.as_slice() != ["old".to_owned()])
    );
    assert!(
        tokens
            .iter()
            .any(|token| token.projects.as_slice().contains(&"old".to_owned()))
    );
    // The name is free again.
    projects::create(ctx, &administrator(), body(json!({"id": "old", "name": "Old"}))?).await?;

    // Editors write flags everywhere but administer no project; owners administer theirs.
    let editor = common::user(7, flag_admin::runtime::domain::RootRole::Editor);
    assert!(projects::DELETE.admit_in(editor.clone(), Some("old")).is_err());
    assert!(
        projects::UPDATE_SETTINGS
            .admit_in(editor.clone(), Some("old"))
            .is_err()
    );
    assert!(features::CREATE.admit_in(editor, Some("old")).is_ok());
    Ok(())
}

#[tokio::test]
async fn environments_change_type_and_go_with_their_state_and_tokens() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    environments::create(
        ctx,
        &administrator(),
        body(json!({"name": "qa", "type": "test"}))?,
    )
    .await?;
    let updated = environments::update(
        ctx,
        &common::admin(environments::UPDATE),
        "qa".into(),
        body(json!({"type": "staging", "sortOrder": 40}))?,
    )
    .await?;
    assert_eq!(updated.environment_type, "staging");
    assert_eq!(updated.sort_order, 40);
    let missing = environments::update(
        ctx,
        &common::admin(environments::UPDATE),
        "mars".into(),
        body(json!({"type": "x"}))?,
    )
    .await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");

    projects::enable_environment(
        ctx,
        &administrator(),
        "default".into(),
        environment_request("qa")?,
    )
    .await?;
    seed_feature(&world, "in-qa").await?;
    store_token(&world, "client", "qa", &["*"])?;
    environments::delete(ctx, &common::admin(environments::DELETE), "qa".into()).await?;
    assert!(matches!(
        environments::get(ctx, "qa".into()).await,
        Err(AdminError::NotFound(_))
    ));
    let mut conn = world.store().connection()?;
    assert!(
        flag_store::queries::api_tokens::list(&mut conn)?
            .iter()
            .all(|token| token.environment != "qa")
    );
    let feature = crate::catalogue_fixture::json_of(
        &features::get(
            ctx,
            &common::admin(features::GET),
            ("default".into(), "in-qa".into()),
            FeatureQuery::default(),
        )
        .await?,
    )?;
    let names: Vec<&str> = feature["environments"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|environment| environment["name"].as_str())
        .collect();
    assert!(!names.is_empty() && !names.contains(&"qa"), "{names:?}");
    Ok(())
}
