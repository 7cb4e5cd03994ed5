//! Teams: `identity::teams` on the backend under test: custom roles, groups, project access,
//! service accounts and their tokens, and what they grant through the one permission policy.

use flag_admin::AdminError;
use flag_admin::catalogue::{features, projects};
use flag_admin::identity::auth::{self, Access, Credential, Principal};
use flag_admin::identity::teams::{self, Holder};
use flag_admin::runtime::domain::{Permission, RootRole};
use serde_json::json;

use crate::common::{self, Outcome, World};

fn body<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
    match serde_json::from_value(value) {
        Ok(parsed) => parsed,
        Err(error) => panic!("the test's body does not parse: {error}"),
    }
}

/// A service account with `root_role`, and the principal its new token resolves to.
async fn account(
    world: &World,
    username: &str,
    root_role: i32,
) -> Result<(i32, String), Box<dyn std::error::Error>> {
    let ctx = &world.ctx;
    let created = teams::create_service_account(
        ctx,
        &common::admin(teams::CREATE_SERVICE_ACCOUNT),
        body(json!({"username": username, "name": username, "rootRole": root_role})),
    )
    .await?;
    let token = teams::create_token(
        ctx,
        &common::admin(teams::CREATE_TOKEN),
        created.id,
        body(json!({"description": "ci", "expiresAt": "2999-01-01T00:00:00Z"})),
    )
    .await?;
    Ok((created.id, token.secret.ok_or("no secret in the answer")?))
}

async fn principal(world: &World, secret: &str) -> Result<Principal, Box<dyn std::error::Error>> {
    match auth::resolve_token(&world.ctx, world.ctx.identity(), secret).await? {
        Credential::Admin(principal) => Ok(principal),
        other => Err(format!("the token resolved to {other:?}").into()),
    }
}

async fn project(world: &World, id: &str) -> Outcome {
    projects::create(
        &world.ctx,
        &common::admin(projects::CREATE),
        body(json!({"id": id, "name": id})),
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn permissions_list_every_scope_and_environment() -> Outcome {
    let world = World::new()?;
    let listed = common::json(&teams::permissions(&world.ctx).await?)?;
    assert_eq!(listed["version"], 1);
    let names = |list: &serde_json::Value| -> Vec<String> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|permission| permission["name"].as_str().map(str::to_owned))
            .collect()
    };
    assert!(names(&listed["permissions"]["root"]).contains(&"CREATE_PROJECT".to_owned()));
    assert!(names(&listed["permissions"]["project"]).contains(&"CREATE_FEATURE".to_owned()));
    let development = listed["permissions"]["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|environment| environment["name"] == "development")
        })
        .ok_or("no development environment")?;
    let strategy = development["permissions"]
        .as_array()
        .and_then(|list| {
            list.iter()
                .find(|permission| permission["name"] == "UPDATE_FEATURE_STRATEGY")
        })
        .ok_or("no strategy permission")?;
    assert_eq!(strategy["environment"], "development");
    assert_eq!(strategy["type"], "environment");
    Ok(())
}

#[tokio::test]
async fn custom_roles_are_checked_written_read_and_deleted_once_unheld() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let admin = common::admin(teams::CREATE_ROLE);
    // Unknown names, root permissions in a project role, missing environments: each named.
    let refused = teams::create_role(
        ctx,
        &admin,
        body(json!({"name": "bad", "type": "custom", "permissions": [
            {"name": "MAKE_COFFEE"},
            {"name": "CREATE_PROJECT"},
            {"name": "UPDATE_FEATURE_STRATEGY", "environment": "mars"},
        ]})),
    )
    .await;
    match refused {
        Err(AdminError::Validation { details, .. }) => {
            let paths: Vec<_> = details.into_iter().filter_map(|detail| detail.path).collect();
            assert_eq!(
                paths,
                [
                    "/permissions/0/name",
                    "/permissions/1/name",
                    "/permissions/2/environment"
                ]
            );
        }
        other => panic!("expected a validation failure, got {other:?}"),
    }
    let root_refused = teams::create_role(
        ctx,
        &admin,
        body(json!({"name": "root", "type": "root-custom", "permissions": [{"name": "ADMIN"}]})),
    )
    .await;
    assert!(
        matches!(root_refused, Err(AdminError::Validation { .. })),
        "{root_refused:?}"
    );

    let written = teams::create_role(
        ctx,
        &admin,
        body(
            json!({"name": "Flag writer", "type": "custom", "description": "writes flags",
                    "permissions": [{"name": "CREATE_FEATURE"},
                                    {"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"}]}),
        ),
    )
    .await?;
    let id = written.roles.id;
    assert_eq!(common::json(&written)?["roles"]["type"], "custom");
    let read = common::json(&teams::role(ctx, id).await?)?;
    assert_eq!(read["name"], "Flag writer");
    assert_eq!(
        read["permissions"].as_array().map(|list| list
            .iter()
            .map(|p| (p["name"].clone(), p.get("environment").cloned()))
            .collect::<Vec<_>>()),
        Some(vec![
            (json!("CREATE_FEATURE"), None),
            (json!("UPDATE_FEATURE_ENVIRONMENT"), Some(json!("development"))),
        ])
    );
    let taken = teams::create_role(ctx, &admin, body(json!({"name": "Flag writer"}))).await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");

    teams::update_role(
        ctx,
        &common::admin(teams::UPDATE_ROLE),
        id,
        body(json!({"name": "Flag author", "permissions": [{"name": "UPDATE_FEATURE"}]})),
    )
    .await?;
    assert_eq!(
        common::json(&teams::role(ctx, id).await?)?["permissions"][0]["name"],
        "UPDATE_FEATURE"
    );
    let built_in = teams::update_role(
        ctx,
        &common::admin(teams::UPDATE_ROLE),
        1,
        body(json!({"name": "x"})),
    )
    .await;
    assert!(
        matches!(built_in, Err(AdminError::InvalidOperation(_))),
        "{built_in:?}"
    );
    assert!(
        common::json(&teams::roles(ctx).await?)?["roles"]
            .as_array()
            .is_some_and(|roles| roles.iter().any(|role| role["name"] == "Flag author"))
    );

    // Held in a project, it cannot go.
    teams::set_project_access(
        ctx,
        &common::admin(teams::SET_PROJECT_ACCESS),
        "default".into(),
        body(json!({"roles": [{"id": id, "users": [], "groups": []}]})),
    )
    .await?;
    let (account_id, _) = account(&world, "bot", 3).await?;
    teams::add_project_access(
        ctx,
        &common::admin(teams::ADD_PROJECT_ACCESS),
        "default".into(),
        id,
        body(json!({"users": [{"id": account_id}]})),
    )
    .await?;
    let deleting = teams::delete_role(ctx, &common::admin(teams::DELETE_ROLE), id).await;
    assert!(matches!(deleting, Err(AdminError::Conflict(_))), "{deleting:?}");
    teams::remove_project_access(
        ctx,
        &common::admin(teams::REMOVE_PROJECT_ACCESS),
        "default".into(),
        Holder::User(account_id),
    )
    .await?;
    teams::delete_role(ctx, &common::admin(teams::DELETE_ROLE), id).await?;
    assert!(matches!(teams::role(ctx, id).await, Err(AdminError::NotFound(_))));
    Ok(())
}

#[tokio::test]
async fn groups_keep_their_members_in_order_and_give_their_root_role() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let (first, first_secret) = account(&world, "first", 3).await?;
    let (second, _) = account(&world, "second", 3).await?;
    let group = teams::create_group(
        ctx,
        &common::admin(teams::CREATE_GROUP),
        body(
            json!({"name": "Platform", "description": null, "mappingsSSO": ["platform", "ops"],
                    "rootRole": 2, "users": [{"user": {"id": second}}, {"user": {"id": first}}]}),
        ),
    )
    .await?;
    let read = common::json(&teams::group(ctx, group.id).await?)?;
    assert_eq!(read["mappingsSSO"], json!(["platform", "ops"]));
    assert_eq!(read["rootRole"], 2);
    assert!(read.get("description").is_none(), "{read}");
    let members: Vec<i64> = read["users"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|member| member["user"]["id"].as_i64())
        .collect();
    assert_eq!(members.len(), 2);
    // A Viewer in an Editor group writes.
    let member = principal(&world, &first_secret).await?;
    assert!(features::CREATE.admit(member).is_ok());

    let missing = teams::create_group(
        ctx,
        &common::admin(teams::CREATE_GROUP),
        body(json!({"name": "Ghosts", "users": [{"user": {"id": 999}}]})),
    )
    .await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let project_role = teams::create_group(
        ctx,
        &common::admin(teams::CREATE_GROUP),
        body(json!({"name": "Owners", "rootRole": 4})),
    )
    .await;
    assert!(
        matches!(project_role, Err(AdminError::Validation { .. })),
        "{project_role:?}"
    );

    teams::update_group(
        ctx,
        &common::admin(teams::UPDATE_GROUP),
        group.id,
        body(json!({"name": "Platform", "users": [{"user": {"id": second}}]})),
    )
    .await?;
    let member = principal(&world, &first_secret).await?;
    assert!(
        features::CREATE.admit(member).is_err(),
        "left the group, lost its role"
    );
    assert_eq!(
        common::json(&teams::groups(ctx).await?)?["groups"][0]["userCount"],
        1
    );
    teams::delete_group(ctx, &common::admin(teams::DELETE_GROUP), group.id).await?;
    assert!(matches!(
        teams::group(ctx, group.id).await,
        Err(AdminError::NotFound(_))
    ));
    Ok(())
}

#[tokio::test]
async fn project_roles_admit_writes_in_their_project_and_environments_only() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    project(&world, "web").await?;
    let role = teams::create_role(
        ctx,
        &common::admin(teams::CREATE_ROLE),
        body(json!({"name": "web dev", "type": "custom", "permissions": [
            {"name": "CREATE_FEATURE"},
            {"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"},
        ]})),
    )
    .await?
    .roles
    .id;
    let (direct, direct_secret) = account(&world, "direct", 3).await?;
    let (through_group, group_secret) = account(&world, "grouped", 3).await?;
    let (_, bystander_secret) = account(&world, "bystander", 3).await?;
    let team = teams::create_group(
        ctx,
        &common::admin(teams::CREATE_GROUP),
        body(json!({"name": "Web", "users": [{"user": {"id": through_group}}]})),
    )
    .await?;
    teams::set_project_access(
        ctx,
        &common::admin(teams::SET_PROJECT_ACCESS),
        "web".into(),
        body(json!({"roles": [{"id": role, "users": [direct], "groups": [team.id]}]})),
    )
    .await?;
    let access = common::json(&teams::project_access(ctx, "web".into()).await?)?;
    assert_eq!(access["users"][0]["roles"], json!([role]));
    assert_eq!(access["groups"][0]["roles"], json!([role]));
    assert!(
        access["roles"]
            .as_array()
            .is_some_and(|roles| roles.iter().all(|listed| listed["type"] != "root"))
    );

    for secret in [&direct_secret, &group_secret] {
        let held = principal(&world, secret).await?;
        assert!(features::CREATE.admit_in(held.clone(), Some("web")).is_ok());
        assert!(features::CREATE.admit_in(held.clone(), Some("default")).is_err());
        assert!(
            features::CREATE.admit(held.clone()).is_err(),
            "no project named, no project role"
        );
        assert!(features::UPDATE.admit_in(held.clone(), Some("web")).is_err());
        let switch = features::SWITCH_WITH.admit_in(held.clone(), Some("web"))?;
        assert!(switch.require_in("development").is_ok());
        assert!(switch.require_in("production").is_err());
        let elsewhere = features::SWITCH_WITH.admit_in(held, Some("default"))?;
        assert!(elsewhere.require_in("development").is_err());
    }
    let bystander = principal(&world, &bystander_secret).await?;
    assert!(features::CREATE.admit_in(bystander, Some("web")).is_err());

    // The audit log names the service account that wrote.
    let writer = features::CREATE.admit_in(principal(&world, &direct_secret).await?, Some("web"))?;
    assert_eq!(writer.actor().name, "direct");
    assert_eq!(writer.actor().user_id, direct);
    Ok(())
}

#[tokio::test]
async fn service_account_tokens_work_until_deleted_or_expired() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let (id, secret) = account(&world, "pipeline", 2).await?;
    assert!(secret.starts_with("user:"), "{secret}");
    let listed = common::json(&teams::service_accounts(ctx).await?)?;
    assert_eq!(listed["serviceAccounts"][0]["username"], "pipeline");
    assert_eq!(listed["serviceAccounts"][0]["rootRole"], 2);
    let tokens = common::json(&teams::tokens(ctx, id).await?)?;
    assert_eq!(tokens["pats"].as_array().map(Vec::len), Some(1));
    assert!(tokens["pats"][0].get("secret").is_none(), "{tokens}");
    assert!(features::CREATE.admit(principal(&world, &secret).await?).is_ok());

    let past = teams::create_token(
        ctx,
        &common::admin(teams::CREATE_TOKEN),
        id,
        body(json!({"description": "old", "expiresAt": "2001-01-01T00:00:00Z"})),
    )
    .await;
    assert!(matches!(past, Err(AdminError::Validation { .. })), "{past:?}");

    let updated = teams::update_service_account(
        ctx,
        &common::admin(teams::UPDATE_SERVICE_ACCOUNT),
        id,
        body(json!({"name": "Pipeline", "rootRole": 3})),
    )
    .await?;
    assert_eq!(common::json(&updated)?["rootRole"], 3);
    assert!(features::CREATE.admit(principal(&world, &secret).await?).is_err());

    let token_id = common::json(&teams::tokens(ctx, id).await?)?["pats"][0]["id"]
        .as_i64()
        .ok_or("no token id")?;
    teams::delete_token(
        ctx,
        &common::admin(teams::DELETE_TOKEN),
        id,
        i32::try_from(token_id)?,
    )
    .await?;
    assert_eq!(
        auth::resolve_token(ctx, ctx.identity(), &secret).await?,
        Credential::Unknown
    );

    let (other, other_secret) = account(&world, "short-lived", 1).await?;
    teams::delete_service_account(ctx, &common::admin(teams::DELETE_SERVICE_ACCOUNT), other).await?;
    assert_eq!(
        auth::resolve_token(ctx, ctx.identity(), &other_secret).await?,
        Credential::Unknown,
        "a deleted account's token works no more"
    );
    let missing = teams::tokens(ctx, other).await;
    assert!(matches!(missing, Err(AdminError::NotFound(_))), "{missing:?}");
    let taken = teams::create_service_account(
        ctx,
        &common::admin(teams::CREATE_SERVICE_ACCOUNT),
        body(json!({"username": "pipeline", "rootRole": 3})),
    )
    .await;
    assert!(matches!(taken, Err(AdminError::NameExists(_))), "{taken:?}");
    let project_role = teams::create_service_account(
        ctx,
        &common::admin(teams::CREATE_SERVICE_ACCOUNT),
        body(json!({"username": "owner", "rootRole": 4})),
    )
    .await;
    assert!(
        matches!(project_role, Err(AdminError::Validation { .. })),
        "{project_role:?}"
    );
    Ok(())
}

#[tokio::test]
async fn custom_root_roles_grant_their_root_permissions_everywhere() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    let role = teams::create_role(
        ctx,
        &common::admin(teams::CREATE_ROLE),
        body(json!({"name": "Segment keeper", "type": "root-custom",
                    "permissions": [{"name": "CREATE_SEGMENT"}]})),
    )
    .await?
    .roles
    .id;
    let (_, secret) = account(&world, "segments", role).await?;
    let held = principal(&world, &secret).await?;
    assert!(
        Access::Write(Permission::CreateSegment)
            .admit(held.clone())
            .is_ok()
    );
    assert!(
        Access::Write(Permission::DeleteSegment)
            .admit(held.clone())
            .is_err()
    );
    assert!(features::CREATE.admit(held.clone()).is_err());
    assert!(Access::Admin.admit(held).is_err());
    Ok(())
}

#[tokio::test]
async fn giving_a_role_in_a_project_never_widens_access_beyond_the_givers() -> Outcome {
    let world = World::new()?;
    let ctx = &world.ctx;
    project(&world, "web").await?;
    let maker = common::admin(teams::CREATE_ROLE);
    let make = |name: &'static str, permissions: serde_json::Value| {
        teams::create_role(
            ctx,
            &maker,
            body(json!({"name": name, "type": "custom", "permissions": permissions})),
        )
    };
    let keeper = make("access keeper", json!([{"name": "PROJECT_USER_ACCESS_WRITE"}]))
        .await?
        .roles
        .id;
    let writer = make("writer", json!([{"name": "CREATE_FEATURE"}]))
        .await?
        .roles
        .id;
    let (keeper_id, secret) = account(&world, "keeper", 3).await?;
    let (other, _) = account(&world, "other", 3).await?;
    teams::add_project_access(
        ctx,
        &common::admin(teams::ADD_PROJECT_ACCESS),
        "web".into(),
        keeper,
        body(json!({"users": [{"id": keeper_id}]})),
    )
    .await?;
    let caller = teams::ADD_PROJECT_ACCESS.admit_in(principal(&world, &secret).await?, Some("web"))?;
    // The keeper gives what it holds...
    teams::add_project_access(
        ctx,
        &caller,
        "web".into(),
        keeper,
        body(json!({"users": [{"id": other}]})),
    )
    .await?;
    // ...but not the Owner role, nor a role holding what it lacks, to anyone, itself included.
    for role in [RootRole::Owner.id(), RootRole::Member.id(), writer] {
        let widened = teams::add_project_access(
            ctx,
            &caller,
            "web".into(),
            role,
            body(json!({"users": [{"id": keeper_id}]})),
        )
        .await;
        assert!(
            matches!(widened, Err(AdminError::NoAccess(_))),
            "role {role}: {widened:?}"
        );
    }
    let replaced = teams::set_project_access(
        ctx,
        &teams::SET_PROJECT_ACCESS.admit_in(principal(&world, &secret).await?, Some("web"))?,
        "web".into(),
        body(json!({"roles": [{"id": RootRole::Owner.id(), "users": [keeper_id]}]})),
    )
    .await;
    assert!(matches!(replaced, Err(AdminError::NoAccess(_))), "{replaced:?}");
    // Nothing else changed: the keeper still holds only its role.
    let access = common::json(&teams::project_access(ctx, "web".into()).await?)?;
    let roles_of = |id: i32| {
        access["users"]
            .as_array()
            .and_then(|users| users.iter().find(|user| user["id"] == id))
            .map(|user| user["roles"].clone())
    };
    assert_eq!(roles_of(keeper_id), Some(json!([keeper])));
    assert_eq!(roles_of(other), Some(json!([keeper])));
    Ok(())
}
