//! Teams over HTTP: the calls Unleash's Terraform providers make for roles, groups, project
//! access and service accounts, in their shapes and statuses; and, for every declared write,
//! that a narrow custom role admits it only in its project.

use actix_web::http::{Method, StatusCode};
use flag_admin::identity::auth::Access;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, delete, expect, get, post, put, send};

/// Creates a service account with `root_role` and a token for it; answers its id and secret.
async fn service_account<S, B>(service: &S, username: &str, root_role: i64) -> (i64, String)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let account = expect(
        service,
        post(
            "/api/admin/service-account",
            ADMIN,
            json!({"username": username, "name": username, "rootRole": root_role}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let id = account["id"].as_i64().unwrap_or_default();
    assert_eq!(account["rootRole"], root_role, "{account}");
    let token = expect(
        service,
        post(
            &format!("/api/admin/service-account/{id}/token"),
            ADMIN,
            json!({"description": "terraform", "expiresAt": "2999-01-01T00:00:00Z"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    for field in ["id", "createdAt", "description", "expiresAt", "secret"] {
        assert!(!token[field].is_null(), "{field} in {token}");
    }
    (id, token["secret"].as_str().unwrap_or_default().to_owned())
}

#[actix_web::test]
async fn the_official_providers_lifecycles_of_roles_groups_access_and_service_accounts() {
    let app = TestApp::new();
    let service = app.service().await;
    // unleash_permission: ids, names, display names and types; environments named.
    let permissions = expect(&service, get("/api/admin/permissions", ADMIN), StatusCode::OK).await;
    assert_eq!(permissions["version"], 1);
    for list in [
        &permissions["permissions"]["root"],
        &permissions["permissions"]["project"],
    ] {
        for permission in list.as_array().into_iter().flatten() {
            for field in ["id", "name", "displayName", "type"] {
                assert!(!permission[field].is_null(), "{field} in {permission}");
            }
            assert!(permission.get("environment").is_none(), "{permission}");
        }
    }

    // unleash_role: created with 200 and one role under `roles`, read with its permissions.
    let role = json!({"name": "deployer", "type": "custom", "description": "deploys",
                      "permissions": [{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "production"},
                                      {"name": "CREATE_FEATURE"}]});
    let created = expect(
        &service,
        post("/api/admin/roles", ADMIN, role.clone()),
        StatusCode::OK,
    )
    .await;
    assert_eq!(created["version"], 1);
    assert_eq!(created["roles"]["name"], "deployer");
    assert_eq!(created["roles"]["type"], "custom");
    let role_id = created["roles"]["id"].as_i64().unwrap_or_default();
    let read = expect(
        &service,
        get(&format!("/api/admin/roles/{role_id}"), ADMIN),
        StatusCode::OK,
    )
    .await;
    let held: Vec<(Value, Option<Value>)> = read["permissions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|permission| (permission["name"].clone(), permission.get("environment").cloned()))
        .collect();
    assert_eq!(
        held,
        vec![
            (json!("CREATE_FEATURE"), None),
            (json!("UPDATE_FEATURE_ENVIRONMENT"), Some(json!("production"))),
        ]
    );
    let (status, body) = send(
        &service,
        post(
            "/api/admin/roles",
            ADMIN,
            json!({"name": "x", "permissions": [{"name": "NOPE"}]}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, post("/api/admin/roles", ADMIN, role)).await;
    assert_error(status, &body, 409, "NameExistsError");

    // unleash_user then unleash_group: 201, members in the order given, read back by id.
    let user = expect(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": "dev@example.com", "rootRole": 3, "sendEmail": false}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let user_id = user["id"].as_i64().unwrap_or_default();
    let (account_id, account_secret) = service_account(&service, "terraform-bot", 3).await;
    let group = expect(
        &service,
        post(
            "/api/admin/groups",
            ADMIN,
            json!({"name": "developers", "description": null, "mappingsSSO": [], "rootRole": null,
                   "users": [{"user": {"id": user_id}}, {"user": {"id": account_id}}]}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let group_id = group["id"].as_i64().unwrap_or_default();
    let group = expect(
        &service,
        get(&format!("/api/admin/groups/{group_id}"), ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(group["name"], "developers");
    assert_eq!(group["users"].as_array().map(Vec::len), Some(2));
    assert!(group["users"][0]["user"]["id"].is_i64(), "{group}");
    let listed = expect(&service, get("/api/admin/groups", ADMIN), StatusCode::OK).await;
    assert_eq!(listed["groups"][0]["id"], group_id);

    // unleash_project_access: PUT answers 200, GET lists each holder's roles.
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/access",
            ADMIN,
            json!({"roles": [{"id": role_id, "groups": [group_id]}, {"id": 4, "users": [user_id]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access = expect(
        &service,
        get("/api/admin/projects/default/access", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(access["users"][0]["id"], user_id);
    assert_eq!(access["users"][0]["roles"], json!([4]));
    assert_eq!(access["groups"][0]["id"], group_id);
    assert_eq!(access["groups"][0]["roles"], json!([role_id]));
    assert!(
        access["roles"]
            .as_array()
            .is_some_and(|roles| roles.iter().all(|role| role["id"].is_i64()))
    );

    // Through the group, the service account writes in `default`, and the audit log says so.
    expect(
        &service,
        post(
            "/api/admin/projects/default/features",
            &account_secret,
            json!({"name": "bot-made"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let events = expect(
        &service,
        get("/api/admin/events?feature=bot-made", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(events["events"][0]["createdBy"], "terraform-bot", "{events}");
    // ...but not in production's switch, nor an admin's work.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/bot-made/environments/development/on",
            &account_secret,
            json!({}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
    let (status, body) = send(&service, get("/api/admin/user-admin", &account_secret)).await;
    assert_error(status, &body, 403, "NoAccessError");

    // unleash_service_account and its tokens.
    let accounts = expect(&service, get("/api/admin/service-account", ADMIN), StatusCode::OK).await;
    assert_eq!(accounts["serviceAccounts"][0]["id"], account_id);
    assert_eq!(accounts["serviceAccounts"][0]["rootRole"], 3);
    let tokens = expect(
        &service,
        get(&format!("/api/admin/service-account/{account_id}/token"), ADMIN),
        StatusCode::OK,
    )
    .await;
    let token_id = tokens["pats"][0]["id"].as_i64().unwrap_or_default();
    assert!(tokens["pats"][0].get("secret").is_none(), "{tokens}");
    let updated = expect(
        &service,
        put(
            &format!("/api/admin/service-account/{account_id}"),
            ADMIN,
            json!({"name": "bot", "rootRole": 2}),
        ),
        StatusCode::OK,
    )
    .await;
    assert_eq!(updated["rootRole"], 2);
    // An import, refused to admin tokens as in Unleash, is made with a service account's token.
    let import = json!({"project": "default", "environment": "development",
                        "data": {"features": [], "featureStrategies": [], "tagTypes": []}});
    let (status, body) = send(
        &service,
        post("/api/admin/features-batch/import", ADMIN, import.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = send(
        &service,
        post("/api/admin/features-batch/import", &account_secret, import),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    let users = expect(&service, get("/api/admin/user-admin", ADMIN), StatusCode::OK).await;
    assert!(
        users["users"]
            .as_array()
            .is_some_and(|users| users.iter().all(|user| user["id"] != account_id)),
        "service accounts are not listed as users"
    );

    // Everything deleted with 200, in the providers' order; the role goes once unheld.
    let (status, body) = send(&service, delete(&format!("/api/admin/roles/{role_id}"), ADMIN)).await;
    assert_error(status, &body, 409, "ConflictError");
    for path in [
        format!("/api/admin/service-account/{account_id}/token/{token_id}"),
        format!("/api/admin/service-account/{account_id}"),
        format!("/api/admin/groups/{group_id}"),
        format!("/api/admin/roles/{role_id}"),
    ] {
        let (status, body) = send(&service, delete(&path, ADMIN)).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
    }
    let (status, body) = send(&service, get("/api/admin/projects", &account_secret)).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    let (status, _) = send(&service, get(&format!("/api/admin/groups/{group_id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// The path of `path` with its parameters filled: the project `project`, flag `f`, ids 1,
/// anything else `x`.
fn filled(path: &str, project: &str) -> String {
    path.split('/')
        .map(|segment| match segment {
            "{projectId}" => project.to_owned(),
            "{environment}" | "{env}" => "development".to_owned(),
            "{featureName}" => "f".to_owned(),
            "{roleId}" | "{userId}" | "{groupId}" | "{id}" | "{tokenId}" => "1".to_owned(),
            segment if segment.starts_with('{') => "x".to_owned(),
            segment => segment.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// For every declared write whose path names a project, generated from the declarations: a
/// service account whose only role is a custom project role holding every project and
/// environment permission in `web` is admitted there, and refused (403) in `default`; one that
/// holds it through a group is admitted alike; one that holds nothing is refused everywhere.
#[actix_web::test]
async fn every_project_write_is_admitted_by_project_roles_in_their_project_only() {
    let app = TestApp::new();
    let service = app.service().await;
    crate::common::seed_feature(&service, "f").await;
    crate::common::seed_feature(&service, "parent").await;
    expect(
        &service,
        post("/api/admin/projects", ADMIN, json!({"id": "web", "name": "Web"})),
        StatusCode::CREATED,
    )
    .await;
    let permissions = expect(&service, get("/api/admin/permissions", ADMIN), StatusCode::OK).await;
    let mut held: Vec<Value> = permissions["permissions"]["project"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|permission| json!({"name": permission["name"]}))
        .collect();
    for environment in permissions["permissions"]["environments"]
        .as_array()
        .into_iter()
        .flatten()
    {
        held.extend(
            environment["permissions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|permission| json!({"name": permission["name"], "environment": environment["name"]})),
        );
    }
    let role = expect(
        &service,
        post(
            "/api/admin/roles",
            ADMIN,
            json!({"name": "web", "type": "custom", "permissions": held}),
        ),
        StatusCode::OK,
    )
    .await;
    let role_id = role["roles"]["id"].as_i64().unwrap_or_default();
    let (direct, direct_secret) = service_account(&service, "direct", 3).await;
    let (grouped, group_secret) = service_account(&service, "grouped", 3).await;
    let (_, nobody_secret) = service_account(&service, "nobody", 3).await;
    let group = expect(
        &service,
        post(
            "/api/admin/groups",
            ADMIN,
            json!({"name": "web team", "users": [{"user": {"id": grouped}}]}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/web/access",
            ADMIN,
            json!({"roles": [{"id": role_id, "users": [direct], "groups": [group["id"]]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let principal = |secret: String| {
        let state = app.state.clone();
        async move {
            match flag_admin::identity::auth::resolve_token(&state.app, state.app.identity(), &secret).await {
                Ok(flag_admin::identity::auth::Credential::Admin(principal)) => principal,
                other => panic!("the token resolved to {other:?}"),
            }
        }
    };
    let holders = [
        principal(direct_secret.clone()).await,
        principal(group_secret.clone()).await,
    ];
    let mut checked = 0;
    for operation in admin_api::routes::operations() {
        if !matches!(operation.access, Access::Write(_) | Access::WriteIn(_))
            || !operation.path.contains("{projectId}")
        {
            continue;
        }
        // Admitted in `web`, by the policy the extractor applies (asked directly, so that no
        // write changes the fixture), in every environment for an environment write.
        for holder in &holders {
            let admitted = operation.access.admit_in(holder.clone(), Some("web"));
            let caller =
                admitted.unwrap_or_else(|error| panic!("{} {}: {error}", operation.method, operation.path));
            for environment in ["development", "production"] {
                assert!(
                    caller.require_in(environment).is_ok(),
                    "{} {} in {environment}",
                    operation.method,
                    operation.path
                );
            }
        }
        // Refused over HTTP in `default`, and for the one who holds nothing, with a body that
        // passes validation, so that admission alone decides.
        let body = super::token_scope::body_of(&operation.method.as_str().to_lowercase(), &operation.path)
            .unwrap_or(Value::Null);
        for (secret, project) in [
            (&direct_secret, "default"),
            (&group_secret, "default"),
            (&nobody_secret, "web"),
        ] {
            let path = filled(&operation.path, project);
            let request = actix_web::test::TestRequest::default()
                .method(operation.method.clone())
                .uri(&path)
                .insert_header(("Authorization", secret.as_str()))
                .set_json(body.clone());
            let (status, answer) = send(&service, request).await;
            assert_eq!(
                status,
                StatusCode::FORBIDDEN,
                "{} {path}: {answer}",
                operation.method
            );
            assert_eq!(
                answer["name"], "NoAccessError",
                "{} {path}: {answer}",
                operation.method
            );
        }
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} project writes were declared");
    assert!(operations_with(Method::POST) > 0);
}

fn operations_with(method: Method) -> usize {
    admin_api::routes::operations()
        .iter()
        .filter(|operation| operation.method == method)
        .count()
}

/// For every declared operation that a custom root role can be given, generated from the
/// declarations: a service account whose root role holds exactly that permission is admitted,
/// one whose root role holds another is refused (403 over HTTP), and neither is admitted to
/// the administration no custom role grants.
#[actix_web::test]
async fn every_root_permission_is_granted_by_a_custom_root_role_and_nothing_more() {
    let app = TestApp::new();
    let service = app.service().await;
    let principal = |secret: String| {
        let state = app.state.clone();
        async move {
            match flag_admin::identity::auth::resolve_token(&state.app, state.app.identity(), &secret).await {
                Ok(flag_admin::identity::auth::Credential::Admin(principal)) => principal,
                other => panic!("the token resolved to {other:?}"),
            }
        }
    };
    let permissions = expect(&service, get("/api/admin/permissions", ADMIN), StatusCode::OK).await;
    let root_names: Vec<String> = permissions["permissions"]["root"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|permission| permission["name"].as_str().map(str::to_owned))
        .collect();
    let mut checked = std::collections::BTreeSet::new();
    for operation in admin_api::routes::operations() {
        // Administration a custom root role can be given, and writes of root permissions
        // (segments, tag types) that name no project.
        let permission = match operation.access {
            Access::Root(permission) => permission,
            Access::Write(permission)
                if !operation.path.contains("{projectId}")
                    && root_names.iter().any(|name| name == permission.as_str()) =>
            {
                permission
            }
            _ => continue,
        };
        let name = permission.as_str();
        if !checked.insert(name) {
            continue;
        }
        let role_of = |permission: &str, tag: &str| json!({"name": format!("{tag} {permission}"), "type": "root-custom", "permissions": [{"name": permission}]});
        let holding = expect(
            &service,
            post("/api/admin/roles", ADMIN, role_of(name, "holds")),
            StatusCode::OK,
        )
        .await;
        let other = if name == "CREATE_TAG_TYPE" {
            "READ_LOGS"
        } else {
            "CREATE_TAG_TYPE"
        };
        let lacking = expect(
            &service,
            post(
                "/api/admin/roles",
                ADMIN,
                role_of(other, &format!("lacks {name}")),
            ),
            StatusCode::OK,
        )
        .await;
        let (_, holder) = service_account(
            &service,
            &format!("holds-{name}").to_lowercase(),
            holding["roles"]["id"].as_i64().unwrap_or_default(),
        )
        .await;
        let (_, lacker) = service_account(
            &service,
            &format!("lacks-{name}").to_lowercase(),
            lacking["roles"]["id"].as_i64().unwrap_or_default(),
        )
        .await;
        // The same role given through a group.
        let (member, member_secret) =
            service_account(&service, &format!("member-{name}").to_lowercase(), 3).await;
        expect(
            &service,
            post(
                "/api/admin/groups",
                ADMIN,
                json!({"name": format!("holders of {name}"), "rootRole": holding["roles"]["id"], "users": [{"user": {"id": member}}]}),
            ),
            StatusCode::CREATED,
        )
        .await;
        let member = principal(member_secret).await;
        assert!(
            operation.access.admit(member).is_ok(),
            "{} {} with {name} through a group",
            operation.method,
            operation.path
        );
        let holder = principal(holder).await;
        assert!(
            operation.access.admit(holder.clone()).is_ok(),
            "{} {} with {name}",
            operation.method,
            operation.path
        );
        assert!(Access::Admin.admit(holder).is_err());
        let lacker_principal = principal(lacker.clone()).await;
        assert!(
            operation.access.admit(lacker_principal).is_err(),
            "{} {}",
            operation.method,
            operation.path
        );
        let body = super::token_scope::body_of(&operation.method.as_str().to_lowercase(), &operation.path)
            .unwrap_or(Value::Null);
        let request = actix_web::test::TestRequest::default()
            .method(operation.method.clone())
            .uri(&filled(&operation.path, "default"))
            .insert_header(("Authorization", lacker.as_str()))
            .set_json(body);
        let (status, answer) = send(&service, request).await;
        assert_error(status, &answer, 403, "NoAccessError");
        assert!(
            answer["message"]
                .as_str()
                .is_some_and(|message| message.contains(name)),
            "{answer}"
        );
    }
    assert!(checked.len() >= 14, "only {checked:?}");
    assert!(
        checked.contains("CREATE_SEGMENT") && checked.contains("CREATE_TAG_TYPE"),
        "{checked:?}"
    );
}

#[actix_web::test]
async fn a_client_token_role_makes_no_frontend_token() {
    let app = TestApp::new();
    let service = app.service().await;
    let role = expect(
        &service,
        post(
            "/api/admin/roles",
            ADMIN,
            json!({"name": "client tokens", "type": "root-custom", "permissions": [{"name": "CREATE_CLIENT_API_TOKEN"}]}),
        ),
        StatusCode::OK,
    )
    .await;
    let (_, secret) = service_account(
        &service,
        "tokens",
        role["roles"]["id"].as_i64().unwrap_or_default(),
    )
    .await;
    expect(
        &service,
        post(
            "/api/admin/api-tokens",
            &secret,
            json!({"type": "client", "tokenName": "ok", "environment": "development"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            &secret,
            json!({"type": "frontend", "tokenName": "no", "environment": "development"}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
}

/// A custom root role's token permissions reach client tokens only: a frontend token needs its
/// own permission, an admin token administration.
#[actix_web::test]
async fn token_permissions_reach_only_their_token_types() {
    let app = TestApp::new();
    let service = app.service().await;
    let role = expect(
        &service,
        post(
            "/api/admin/roles",
            ADMIN,
            json!({"name": "client keeper", "type": "root-custom", "permissions": [
                {"name": "DELETE_CLIENT_API_TOKEN"}, {"name": "UPDATE_CLIENT_API_TOKEN"}]}),
        ),
        StatusCode::OK,
    )
    .await;
    let (_, secret) = service_account(
        &service,
        "keeper",
        role["roles"]["id"].as_i64().unwrap_or_default(),
    )
    .await;
    let make = |kind: &str| {
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"type": kind, "tokenName": kind, "environment": "development"}),
        )
    };
    let client = expect(&service, make("client"), StatusCode::CREATED).await["secret"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let frontend = expect(&service, make("frontend"), StatusCode::CREATED).await["secret"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let escaped = |secret: &str| secret.replace('*', "%2A");
    for target in [&frontend, &ADMIN.to_owned()] {
        let (status, body) = send(
            &service,
            put(
                &format!("/api/admin/api-tokens/{}", escaped(target)),
                &secret,
                json!({"expiresAt": "2001-01-01T00:00:00Z"}),
            ),
        )
        .await;
        assert_error(status, &body, 403, "NoAccessError");
        let (status, body) = send(
            &service,
            delete(&format!("/api/admin/api-tokens/{}", escaped(target)), &secret),
        )
        .await;
        assert_error(status, &body, 403, "NoAccessError");
    }
    let (status, body) = send(
        &service,
        delete(&format!("/api/admin/api-tokens/{}", escaped(&client)), &secret),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The admin token still works.
    expect(&service, get("/api/admin/user-admin", ADMIN), StatusCode::OK).await;
}

/// The permission each project write declares is the one checked, generated from the
/// declarations: for every declared permission, a project role holding it alone in `web` (an
/// environment permission in `development` only), held directly or through a group, admits
/// the operations declaring it there, in that environment only; a role holding every other
/// project and environment permission is refused them (403 over HTTP).
#[actix_web::test]
async fn each_project_write_is_admitted_by_exactly_its_declared_permission() {
    let app = TestApp::new();
    let service = app.service().await;
    crate::common::seed_feature(&service, "f").await;
    crate::common::seed_feature(&service, "parent").await;
    expect(
        &service,
        post("/api/admin/projects", ADMIN, json!({"id": "web", "name": "Web"})),
        StatusCode::CREATED,
    )
    .await;
    let permissions = expect(&service, get("/api/admin/permissions", ADMIN), StatusCode::OK).await;
    let project_names: Vec<String> = permissions["permissions"]["project"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|permission| permission["name"].as_str().map(str::to_owned))
        .collect();
    let environment_names: Vec<String> = permissions["permissions"]["environments"][0]["permissions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|permission| permission["name"].as_str().map(str::to_owned))
        .collect();
    let grant = |name: &str, environment: &str| {
        if environment_names.iter().any(|known| known == name) {
            json!({"name": name, "environment": environment})
        } else {
            json!({"name": name})
        }
    };
    let principal = |secret: String| {
        let state = app.state.clone();
        async move {
            match flag_admin::identity::auth::resolve_token(&state.app, state.app.identity(), &secret).await {
                Ok(flag_admin::identity::auth::Credential::Admin(principal)) => principal,
                other => panic!("the token resolved to {other:?}"),
            }
        }
    };
    let mut by_permission: std::collections::BTreeMap<&'static str, Vec<admin_api::routes::Operation>> =
        std::collections::BTreeMap::new();
    for operation in admin_api::routes::operations() {
        if let Access::Write(permission) | Access::WriteIn(permission) = operation.access
            && operation.path.contains("{projectId}")
        {
            by_permission
                .entry(permission.as_str())
                .or_default()
                .push(operation);
        }
    }
    assert!(
        by_permission.len() >= 8,
        "only {:?}",
        by_permission.keys().collect::<Vec<_>>()
    );
    for (name, operations) in &by_permission {
        assert!(
            project_names
                .iter()
                .chain(&environment_names)
                .any(|known| known == name),
            "{name} is declared but no project role can hold it"
        );
        let environmental = environment_names.iter().any(|known| known == name);
        let exact = expect(
            &service,
            post("/api/admin/roles", ADMIN, json!({"name": format!("only {name}"), "type": "custom", "permissions": [grant(name, "development")]})),
            StatusCode::OK,
        )
        .await["roles"]["id"]
            .clone();
        let mut others: Vec<Value> = project_names
            .iter()
            .filter(|other| *other != name)
            .map(|other| grant(other, ""))
            .collect();
        for environment in ["development", "production"] {
            others.extend(
                environment_names
                    .iter()
                    .filter(|other| *other != name)
                    .map(|other| grant(other, environment)),
            );
        }
        let lacking = expect(
            &service,
            post(
                "/api/admin/roles",
                ADMIN,
                json!({"name": format!("all but {name}"), "type": "custom", "permissions": others}),
            ),
            StatusCode::OK,
        )
        .await["roles"]["id"]
            .clone();
        let tag = name.to_lowercase().replace('_', "-");
        let (direct, direct_secret) = service_account(&service, &format!("only-{tag}"), 3).await;
        let (grouped, grouped_secret) = service_account(&service, &format!("grouped-{tag}"), 3).await;
        let (lacker, lacker_secret) = service_account(&service, &format!("lacks-{tag}"), 3).await;
        let group = expect(
            &service,
            post(
                "/api/admin/groups",
                ADMIN,
                json!({"name": format!("group {tag}"), "users": [{"user": {"id": grouped}}]}),
            ),
            StatusCode::CREATED,
        )
        .await;
        expect(
            &service,
            post(
                &format!("/api/admin/projects/web/role/{exact}/access"),
                ADMIN,
                json!({"users": [{"id": direct}], "groups": [{"id": group["id"]}]}),
            ),
            StatusCode::OK,
        )
        .await;
        expect(
            &service,
            post(
                &format!("/api/admin/projects/web/role/{lacking}/access"),
                ADMIN,
                json!({"users": [{"id": lacker}]}),
            ),
            StatusCode::OK,
        )
        .await;
        for operation in operations {
            for secret in [&direct_secret, &grouped_secret] {
                let caller = operation
                    .access
                    .admit_in(principal(secret.clone()).await, Some("web"))
                    .unwrap_or_else(|error| {
                        panic!(
                            "{} {} with {name} alone: {error}",
                            operation.method, operation.path
                        )
                    });
                assert!(
                    caller.require_in("development").is_ok(),
                    "{} {}",
                    operation.method,
                    operation.path
                );
                if environmental && matches!(operation.access, Access::WriteIn(_)) {
                    assert!(
                        caller.require_in("production").is_err(),
                        "{} {} reached production",
                        operation.method,
                        operation.path
                    );
                }
            }
            let body =
                super::token_scope::body_of(&operation.method.as_str().to_lowercase(), &operation.path)
                    .unwrap_or(Value::Null);
            for (secret, project) in [(&lacker_secret, "web"), (&direct_secret, "default")] {
                let path = filled(&operation.path, project);
                let request = actix_web::test::TestRequest::default()
                    .method(operation.method.clone())
                    .uri(&path)
                    .insert_header(("Authorization", secret.as_str()))
                    .set_json(body.clone());
                let (status, answer) = send(&service, request).await;
                assert_eq!(
                    status,
                    StatusCode::FORBIDDEN,
                    "{} {path} without {name}: {answer}",
                    operation.method
                );
                assert_eq!(
                    answer["name"], "NoAccessError",
                    "{} {path}: {answer}",
                    operation.method
                );
            }
        }
    }
}
