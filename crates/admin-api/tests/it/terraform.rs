//! The lifecycles Unleash's two Terraform providers (Unleash's own v3.4.3 and philips-labs'
//! v1.0.0) run against the admin API, with the secrets setting on: each call as their Go
//! clients send it, the status they require (exactly; 204 for 200 fails them), and the fields
//! they parse and compare with what they wrote. Roles, groups, project access and service
//! accounts are in `identity::teams`; context fields in `catalogue::context_fields`.

use actix_web::http::StatusCode;
use flag_admin::Settings;
use flag_admin::runtime::secrets::SealingKey;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, delete, expect, get, post, put, send};

const KEY: &str = "8f1e0c2d3b4a59687766554433221100ffeeddccbbaa99887766554433221100";

fn keyed() -> TestApp {
    TestApp::with_settings(Settings {
        sealing: Some(SealingKey::from_hex(KEY).unwrap_or_else(|error| panic!("{error}"))),
        ..Settings::default()
    })
}

fn find<'a>(list: &'a Value, key: &str, value: &str) -> Option<&'a Value> {
    list.as_array()?.iter().find(|item| item[key] == value)
}

#[actix_web::test]
async fn api_tokens_are_found_again_by_their_secret_and_echo_what_was_written() {
    let app = keyed();
    let service = app.service().await;
    let expires = "2031-05-04T03:02:01Z";
    let created = expect(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"type": "client", "tokenName": "terraform-client", "environment": "production",
                   "projects": ["default"], "expiresAt": expires}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    for field in ["secret", "tokenName", "type", "projects", "createdAt", "project"] {
        assert!(!created[field].is_null(), "{field} in {created}");
    }
    let listed = expect(&service, get("/api/admin/api-tokens", ADMIN), StatusCode::OK).await;
    let found =
        find(&listed["tokens"], "secret", &secret).unwrap_or_else(|| panic!("not found by secret: {listed}"));
    assert_eq!(found["tokenName"], "terraform-client");
    assert_eq!(found["type"], "client");
    assert_eq!(found["environment"], "production");
    assert_eq!(found["projects"], json!(["default"]));
    assert_eq!(found["project"], "default");
    let read_expiry = found["expiresAt"].as_str().unwrap_or_default();
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(read_expiry).map(|at| at.timestamp()),
        chrono::DateTime::parse_from_rfc3339(expires).map(|at| at.timestamp()),
        "{found}"
    );
    assert!(
        read_expiry.ends_with('Z'),
        "Terraform compares the offset too: {read_expiry}"
    );

    // Update and delete answer exactly 200, the secret path-escaped as Go's client sends it.
    let escaped = secret.replace('*', "%2A");
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/api-tokens/{escaped}"),
            ADMIN,
            json!({"expiresAt": "2032-01-01T00:00:00Z"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        delete(&format!("/api/admin/api-tokens/{escaped}"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed = expect(&service, get("/api/admin/api-tokens", ADMIN), StatusCode::OK).await;
    assert!(find(&listed["tokens"], "secret", &secret).is_none(), "{listed}");

    // A token for every project, whose secret begins with `*`.
    let every = expect(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"type": "frontend", "tokenName": "web", "environment": "development"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let every_secret = every["secret"].as_str().unwrap_or_default();
    assert!(every_secret.starts_with("*:development."), "{every}");
    let listed = expect(&service, get("/api/admin/api-tokens", ADMIN), StatusCode::OK).await;
    assert!(
        find(&listed["tokens"], "secret", every_secret).is_some(),
        "{listed}"
    );
    let (status, body) = send(
        &service,
        delete(
            &format!("/api/admin/api-tokens/{}", every_secret.replace('*', "%2A")),
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[actix_web::test]
async fn projects_and_their_settings_are_created_read_changed_and_deleted() {
    let app = keyed();
    let service = app.service().await;
    let created = expect(
        &service,
        post(
            "/api/admin/projects",
            ADMIN,
            json!({"id": "checkout", "name": "Checkout", "mode": "open", "defaultStickiness": "default", "environments": []}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(created["id"], "checkout");
    assert!(
        created.get("description").is_none(),
        "no null description: {created}"
    );
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/checkout/settings",
            ADMIN,
            json!({"mode": "private", "featureNaming": {"pattern": "co-.+", "example": null, "description": null},
                   "linkTemplates": [{"title": null, "urlTemplate": "https://ci.example.com/{{feature}}"}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed = expect(&service, get("/api/admin/projects", ADMIN), StatusCode::OK).await;
    assert_eq!(listed["version"], 1);
    let project = find(&listed["projects"], "id", "checkout").unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(project["mode"], "private");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/checkout",
            ADMIN,
            json!({"name": "Checkout v2", "description": "Payments"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed = expect(&service, get("/api/admin/projects", ADMIN), StatusCode::OK).await;
    let project = find(&listed["projects"], "id", "checkout").unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(project["name"], "Checkout v2");
    assert_eq!(project["description"], "Payments");

    // unleash_project_environment: enabled is "listed", twice is 409.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/checkout/environments",
            ADMIN,
            json!({"environment": "production"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/checkout/environments",
            ADMIN,
            json!({"environment": "production"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let environments = expect(
        &service,
        get("/api/admin/environments/project/checkout", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(environments["version"], 1);
    let production =
        find(&environments["environments"], "name", "production").unwrap_or_else(|| panic!("{environments}"));
    for field in ["name", "type", "enabled", "protected", "sortOrder"] {
        assert!(!production[field].is_null(), "{field} in {production}");
    }
    let (status, body) = send(
        &service,
        delete("/api/admin/projects/checkout/environments/production", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The naming pattern holds.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/checkout/features",
            ADMIN,
            json!({"name": "cart"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(&service, delete("/api/admin/projects/checkout", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(&service, get("/api/admin/projects/checkout", ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = send(&service, delete("/api/admin/projects/default", ADMIN)).await;
    assert_error(status, &body, 403, "InvalidOperationError");
}

#[actix_web::test]
async fn environments_are_created_read_updated_and_deleted() {
    let app = keyed();
    let service = app.service().await;
    let created = expect(
        &service,
        post(
            "/api/admin/environments",
            ADMIN,
            json!({"name": "staging", "type": "test"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    for field in ["name", "type", "enabled", "protected", "sortOrder"] {
        assert!(!created[field].is_null(), "{field} in {created}");
    }
    let updated = expect(
        &service,
        put(
            "/api/admin/environments/update/staging",
            ADMIN,
            json!({"type": "preproduction"}),
        ),
        StatusCode::OK,
    )
    .await;
    assert_eq!(updated["type"], "preproduction");
    let read = expect(
        &service,
        get("/api/admin/environments/staging", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read["type"], "preproduction");
    let (status, body) = send(
        &service,
        put("/api/admin/environments/update/staging", ADMIN, json!({})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, delete("/api/admin/environments/staging", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(&service, get("/api/admin/environments/staging", ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = send(&service, delete("/api/admin/environments/staging", ADMIN)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[actix_web::test]
async fn the_openid_settings_read_back_the_secret_terraform_wrote() {
    let app = keyed();
    let service = app.service().await;
    let before = expect(
        &service,
        get("/api/admin/auth/oidc/settings", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert!(before.is_object(), "{before}");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/auth/oidc/settings",
            ADMIN,
            json!({"enabled": false, "clientId": "halyard", "secret": "s3cret-from-terraform",
                   "discoverUrl": "https://login.example.com/realms/acme", "autoCreate": false,
                   "defaultRootRoleId": 3}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let read = expect(
        &service,
        get("/api/admin/auth/oidc/settings", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read["secret"], "s3cret-from-terraform");
    assert_eq!(read["clientId"], "halyard");
    // Without the setting the secret stays masked, as it always was.
    let plain = TestApp::new();
    let service = plain.service().await;
    send(
        &service,
        post(
            "/api/admin/auth/oidc/settings",
            ADMIN,
            json!({"enabled": false, "clientId": "halyard", "secret": "s3cret",
                   "discoverUrl": "https://login.example.com/realms/acme"}),
        ),
    )
    .await;
    let read = expect(
        &service,
        get("/api/admin/auth/oidc/settings", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read["secret"], "*****");
}

#[actix_web::test]
async fn a_user_holds_a_custom_root_role_as_terraform_gives_it() {
    let app = keyed();
    let service = app.service().await;
    let role = expect(
        &service,
        post(
            "/api/admin/roles",
            ADMIN,
            json!({"name": "Segment keepers", "type": "root-custom", "permissions": [{"name": "CREATE_SEGMENT"}]}),
        ),
        StatusCode::OK,
    )
    .await;
    let role_id = role["roles"]["id"].as_i64().unwrap_or_default();
    let created = expect(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": "seg@example.com", "rootRole": role_id, "sendEmail": false}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(created["rootRole"], role_id, "{created}");
    let id = created["id"].as_i64().unwrap_or_default();
    let read = expect(
        &service,
        get(&format!("/api/admin/user-admin/{id}"), ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read["rootRole"], role_id);
    let listed = expect(&service, get("/api/admin/user-admin", ADMIN), StatusCode::OK).await;
    assert!(
        listed["rootRoles"]
            .as_array()
            .is_some_and(|roles| roles.iter().any(|role| role["id"] == role_id)),
        "{listed}"
    );
    let updated = expect(
        &service,
        put(
            &format!("/api/admin/user-admin/{id}"),
            ADMIN,
            json!({"rootRole": 2}),
        ),
        StatusCode::OK,
    )
    .await;
    assert_eq!(updated["rootRole"], 2);
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/user-admin/{id}"),
            ADMIN,
            json!({"rootRole": 4}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/user-admin/{id}"),
            ADMIN,
            json!({"rootRole": 999}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    // A custom project role is no root role.
    let project_role = expect(
        &service,
        post(
            "/api/admin/roles",
            ADMIN,
            json!({"name": "p", "type": "custom", "permissions": [{"name": "CREATE_FEATURE"}]}),
        ),
        StatusCode::OK,
    )
    .await;
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/user-admin/{id}"),
            ADMIN,
            json!({"rootRole": project_role["roles"]["id"]}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}

/// philips-labs' provider sends whole feature objects where Unleash reads a few fields, and
/// parses strings, integers and objects where it expects them (it panics on a parameter that
/// is not a string).
#[actix_web::test]
async fn the_philips_providers_feature_lifecycle() {
    let app = keyed();
    let service = app.service().await;
    let whole = |description: &str| {
        json!({"archived": false, "description": description, "name": "checkout-v2", "project": "default",
               "stale": false, "type": "release", "environments": null, "variants": null})
    };
    let created = expect(
        &service,
        post(
            "/api/admin/projects/default/features",
            ADMIN,
            whole("New checkout"),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(created["name"], "checkout-v2");
    // Feature-wide variants (`PUT …/features/{name}/variants`), which the provider sends only
    // when a flag's variants are configured, are gone from Unleash 8 as from Halyard: they live
    // per environment.
    let strategy = expect(
        &service,
        post(
            "/api/admin/projects/default/features/checkout-v2/environments/development/strategies",
            ADMIN,
            json!({"name": "flexibleRollout", "sortOrder": 0,
                   "parameters": {"rollout": "50", "stickiness": "default", "groupId": "checkout-v2"},
                   "constraints": [{"contextName": "userId", "operator": "IN", "value": "", "values": ["1"],
                                    "inverted": false, "caseInsensitive": false}]}),
        ),
        StatusCode::OK,
    )
    .await;
    assert!(
        strategy["id"].as_str().is_some_and(|id| !id.is_empty()),
        "{strategy}"
    );
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout-v2/environments/development/on",
            ADMIN,
            whole(""),
        ),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    let tag = expect(
        &service,
        post(
            "/api/admin/features/checkout-v2/tags",
            ADMIN,
            json!({"type": "simple", "value": "team-web"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(tag["value"], "team-web");
    let tags = expect(
        &service,
        put(
            "/api/admin/features/checkout-v2/tags",
            ADMIN,
            json!({"addedTags": [{"type": "simple", "value": "team-pay"}], "removedTags": [{"type": "simple", "value": "team-web"}]}),
        ),
        StatusCode::OK,
    )
    .await;
    assert!(tags["version"].is_i64() && tags["tags"].is_array(), "{tags}");

    let read = expect(
        &service,
        get("/api/admin/projects/default/features/checkout-v2", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(read["description"], "New checkout");
    assert!(read["createdAt"].is_string(), "{read}");
    let development = read["environments"]
        .as_array()
        .and_then(|environments| {
            environments
                .iter()
                .find(|environment| environment["name"] == "development")
        })
        .cloned()
        .unwrap_or_default();
    assert_eq!(development["enabled"], true);
    let parameters = &development["strategies"][0]["parameters"];
    assert!(
        parameters
            .as_object()
            .is_some_and(|parameters| parameters.values().all(Value::is_string)),
        "every parameter a string: {parameters}"
    );
    assert!(development["strategies"][0]["sortOrder"].is_i64());
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/checkout-v2",
            ADMIN,
            whole("Changed"),
        ),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");

    let definition = expect(
        &service,
        get("/api/admin/strategies/flexibleRollout", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert!(
        definition["editable"].is_boolean() && definition["deprecated"].is_boolean(),
        "{definition}"
    );
    assert!(definition["parameters"].as_array().is_some_and(|parameters| {
        parameters
            .iter()
            .all(|parameter| parameter["required"].is_boolean())
    }));
    let project = expect(
        &service,
        get("/api/admin/projects/default", ADMIN),
        StatusCode::OK,
    )
    .await;
    // Its data source reads `environments` as objects; `health` and `updatedAt`, absent, read
    // as zero values in Go.
    assert!(project["environments"][0]["environment"].is_string(), "{project}");
    let types = expect(&service, get("/api/admin/feature-types", ADMIN), StatusCode::OK).await;
    assert!(
        types["version"].is_i64() && types["types"][0]["id"].is_string(),
        "{types}"
    );
    let users = expect(
        &service,
        post(
            "/api/admin/user-admin",
            ADMIN,
            json!({"email": "named@example.com", "rootRole": "Editor", "sendEmail": true}),
        ),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(users["rootRole"], 2);

    let (status, body) = send(
        &service,
        delete("/api/admin/projects/default/features/checkout-v2", ADMIN),
    )
    .await;
    assert!(status.is_success(), "{status} {body}");
    let (status, body) = send(&service, delete("/api/admin/archive/checkout-v2", ADMIN)).await;
    assert!(status.is_success(), "{status} {body}");
}

/// A service account whose custom root role holds `CREATE_PROJECT` runs the whole
/// `unleash_project` create: the project, then its settings, as the project's new Owner.
#[actix_web::test]
async fn a_project_creator_owns_it_and_sets_it_up() {
    let app = keyed();
    let service = app.service().await;
    let role = expect(
        &service,
        post("/api/admin/roles", ADMIN, json!({"name": "project maker", "type": "root-custom", "permissions": [{"name": "CREATE_PROJECT"}]})),
        StatusCode::OK,
    )
    .await;
    let account = expect(
        &service,
        post(
            "/api/admin/service-account",
            ADMIN,
            json!({"username": "tf", "name": "tf", "rootRole": role["roles"]["id"]}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let id = account["id"].as_i64().unwrap_or_default();
    let token = expect(
        &service,
        post(
            &format!("/api/admin/service-account/{id}/token"),
            ADMIN,
            json!({"description": "tf", "expiresAt": "2999-01-01T00:00:00Z"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let secret = token["secret"].as_str().unwrap_or_default();
    expect(
        &service,
        post(
            "/api/admin/projects",
            secret,
            json!({"id": "tf-made", "name": "TF"}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/tf-made/settings",
            secret,
            json!({"mode": "open"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let access = expect(
        &service,
        get("/api/admin/projects/tf-made/access", ADMIN),
        StatusCode::OK,
    )
    .await;
    assert_eq!(access["users"][0]["id"], id);
    assert_eq!(access["users"][0]["roles"], json!([4]));
    // Owning it is not owning others.
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/settings",
            secret,
            json!({"mode": "open"}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
}

/// Bodies whose parts must be objects refuse arrays in their place, which serde would read by
/// position.
#[actix_web::test]
async fn arrays_in_place_of_objects_are_refused() {
    let app = keyed();
    let service = app.service().await;
    for (method, path, body) in [
        ("PUT", "/api/admin/projects/default/settings", json!([null, null])),
        (
            "PUT",
            "/api/admin/projects/default/settings",
            json!({"mode": null, "featureNaming": [null, null], "linkTemplates": []}),
        ),
        (
            "PUT",
            "/api/admin/projects/default/settings",
            json!({"linkTemplates": [[null, "https://x"]]}),
        ),
        (
            "POST",
            "/api/admin/roles",
            json!({"name": "r", "permissions": [["CREATE_FEATURE"]]}),
        ),
        (
            "POST",
            "/api/admin/groups",
            json!({"name": "g", "users": [{"user": [1]}]}),
        ),
        (
            "PUT",
            "/api/admin/projects/default/access",
            json!({"roles": [[4, [1], []]]}),
        ),
        (
            "PUT",
            "/api/admin/environments/update/development",
            json!(["development"]),
        ),
    ] {
        let request = actix_web::test::TestRequest::default()
            .method(method.parse().unwrap_or_default())
            .uri(path)
            .insert_header(("Authorization", ADMIN))
            .set_json(body.clone());
        let (status, answer) = send(&service, request).await;
        assert_error(status, &answer, 400, "ValidationError");
        assert!(!status.is_success(), "{method} {path} {body}");
    }
}

/// What the project and environment writes refuse, with the statuses and error names they
/// document.
#[actix_web::test]
async fn project_and_environment_refusals() {
    let app = keyed();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/admin/projects/nope/access", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        put("/api/admin/projects/nope/access", ADMIN, json!({"roles": []})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/access",
            ADMIN,
            json!({"roles": [{"id": 1, "users": [1]}]}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    // A project with segments of its own stays: 409.
    expect(
        &service,
        post("/api/admin/projects", ADMIN, json!({"id": "seg", "name": "Seg"})),
        StatusCode::CREATED,
    )
    .await;
    expect(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "own", "project": "seg", "constraints": []}),
        ),
        StatusCode::CREATED,
    )
    .await;
    let (status, body) = send(&service, delete("/api/admin/projects/seg", ADMIN)).await;
    assert_error(status, &body, 409, "ConflictError");
    // The last environment stays: 403.
    let (status, body) = send(&service, delete("/api/admin/environments/production", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(&service, delete("/api/admin/environments/development", ADMIN)).await;
    assert_error(status, &body, 403, "InvalidOperationError");
}
