//! API tokens and strategy types answer as Unleash 8.2 answers: the keys of its token schema and
//! no others, token types as its store reads them back, its messages for an unknown project or
//! environment, a quiet delete of an unknown token, a project's list holding every token that
//! reaches the project, and strategy types in its order with its display names and titles.

use std::collections::BTreeSet;

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, delete, get, post, send};

const TOKENS: &str = "/api/admin/api-tokens";

/// The keys of a JSON object.
fn keys(value: &Value) -> BTreeSet<&str> {
    value
        .as_object()
        .map(|fields| fields.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The `tokens` of a token list.
fn tokens(list: &Value) -> Vec<Value> {
    list["tokens"].as_array().cloned().unwrap_or_default()
}

/// The token named `name` in a token list (`Null` when there is none).
fn token_named(list: &Value, name: &str) -> Value {
    tokens(list)
        .into_iter()
        .find(|token| token["tokenName"] == name)
        .unwrap_or_default()
}

/// The names in a token list, in its order.
fn token_names(list: &Value) -> Vec<String> {
    tokens(list)
        .iter()
        .filter_map(|token| token["tokenName"].as_str().map(str::to_owned))
        .collect()
}

#[actix_web::test]
async fn token_answers_carry_unleashs_keys_and_no_others() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, created) = send(
        &service,
        post(
            TOKENS,
            ADMIN,
            json!({"tokenName": "web", "type": "client", "projects": ["default"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    // Unleash's creation answer has no `seenAt`, and `expiresAt` only when one was given.
    assert_eq!(
        keys(&created),
        BTreeSet::from([
            "secret",
            "tokenName",
            "type",
            "project",
            "projects",
            "environment",
            "createdAt",
            "alias",
            "secure",
        ]),
        "{created}"
    );
    assert_eq!(created["secure"], false, "{created}");
    assert_eq!(created["alias"], Value::Null, "{created}");
    let expiring = json!({"tokenName": "short", "type": "client", "expiresAt": crate::common::next_year()});
    let (status, short) = send(&service, post(TOKENS, ADMIN, expiring)).await;
    assert_eq!(status, StatusCode::CREATED, "{short}");
    assert!(short["expiresAt"].is_string(), "{short}");

    // Listed, a token has the keys of Unleash's `apiTokenSchema`, which allows no others: no
    // `id`, no `username`; an expiry or a last use it has not got is left out, not `null`.
    let listed_keys = BTreeSet::from([
        "secret",
        "tokenName",
        "type",
        "project",
        "projects",
        "environment",
        "createdAt",
        "alias",
        "secure",
    ]);
    for path in [
        TOKENS.to_owned(),
        format!("{TOKENS}/web"),
        "/api/admin/projects/default/api-tokens".to_owned(),
    ] {
        let (status, list) = send(&service, get(&path, ADMIN)).await;
        assert_eq!(status, StatusCode::OK, "{path}: {list}");
        let web = token_named(&list, "web");
        assert_eq!(keys(&web), listed_keys, "{path}: {list}");
        assert_eq!(web["secure"], false, "{path}: {web}");
        assert!(
            web.get("expiresAt").is_none() && web.get("seenAt").is_none(),
            "{path}: {web}"
        );
        assert_eq!(web["alias"], Value::Null, "{path}: {web}");
    }
    let (_, list) = send(&service, get(TOKENS, ADMIN)).await;
    assert!(token_named(&list, "short")["expiresAt"].is_string(), "{list}");
}

#[actix_web::test]
async fn token_types_read_back_as_unleashs_store_reads_them() {
    let app = TestApp::new();
    let service = app.service().await;
    for (name, asked) in [
        ("as-client", "client"),
        ("as-backend", "backend"),
        ("as-frontend", "Frontend"),
    ] {
        let (status, created) = send(
            &service,
            post(TOKENS, ADMIN, json!({"tokenName": name, "type": asked})),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        // The answer to the create has the type as asked for, in lower case.
        assert_eq!(created["type"], asked.to_lowercase(), "{created}");
    }
    // Listed, a client token stays a client token, and a backend token reads as one too: Unleash's
    // store returns backend tokens as `client`.
    let (_, list) = send(&service, get(TOKENS, ADMIN)).await;
    assert_eq!(token_named(&list, "as-client")["type"], "client", "{list}");
    assert_eq!(token_named(&list, "as-backend")["type"], "client", "{list}");
    assert_eq!(token_named(&list, "as-frontend")["type"], "frontend", "{list}");
    let (_, named) = send(&service, get(&format!("{TOKENS}/as-client"), ADMIN)).await;
    assert_eq!(token_named(&named, "as-client")["type"], "client", "{named}");
}

#[actix_web::test]
async fn a_token_for_an_unknown_project_or_environment_is_refused_naming_it() {
    let app = TestApp::new();
    let service = app.service().await;
    let (_, before) = send(&service, get(TOKENS, ADMIN)).await;

    let unknown_project =
        json!({"tokenName": "t", "type": "client", "projects": ["default", "no-such-project"]});
    let (status, body) = send(&service, post(TOKENS, ADMIN, unknown_project)).await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(
        body["message"], "Project=no-such-project does not exist",
        "{body}"
    );
    assert_eq!(body["details"][0]["path"], "/projects", "{body}");

    let project_path = json!({"tokenName": "t", "type": "client"});
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/no-such-project/api-tokens",
            ADMIN,
            project_path,
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");

    let unknown_environment = json!({"tokenName": "t", "type": "backend", "environment": "nowhere"});
    let (status, body) = send(&service, post(TOKENS, ADMIN, unknown_environment)).await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(body["message"], "Environment=nowhere does not exist", "{body}");

    for (kind, message) in [
        ("client", "Client token cannot be scoped to all environments"),
        ("frontend", "Frontend token cannot be scoped to all environments"),
    ] {
        let every_environment = json!({"tokenName": "t", "type": kind, "environment": "*"});
        let (status, body) = send(&service, post(TOKENS, ADMIN, every_environment)).await;
        assert_error(status, &body, 400, "ValidationError");
        assert_eq!(body["message"], message, "{body}");
    }
    let (status, body) = send(
        &service,
        post(
            TOKENS,
            ADMIN,
            json!({"tokenName": "t", "type": "client", "projects": []}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");

    // Nothing was stored.
    let (_, after) = send(&service, get(TOKENS, ADMIN)).await;
    assert_eq!(token_names(&after), token_names(&before), "{after}");

    // Every project and some more is every project, and needs no check.
    let (status, created) = send(
        &service,
        post(
            TOKENS,
            ADMIN,
            json!({"tokenName": "all", "type": "client", "projects": ["*", "no-such-project"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["projects"], json!(["*"]), "{created}");
    assert_eq!(created["project"], "*", "{created}");
    assert!(
        created["secret"]
            .as_str()
            .is_some_and(|secret| secret.starts_with("*:development.")),
        "{created}"
    );
}

#[actix_web::test]
async fn deleting_an_unknown_token_is_an_empty_200() {
    let app = TestApp::new();
    let service = app.service().await;
    let (_, before) = send(&service, get(TOKENS, ADMIN)).await;
    let (status, body) = send(
        &service,
        delete(&format!("{TOKENS}/default:development.no-such-secret"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, Value::Null, "the answer has no body");
    let (_, after) = send(&service, get(TOKENS, ADMIN)).await;
    assert_eq!(token_names(&after), token_names(&before), "{after}");
}

#[actix_web::test]
async fn a_projects_token_list_holds_every_token_that_reaches_it() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post("/api/admin/projects", ADMIN, json!({"name": "shop"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for (name, kind, projects) in [
        ("default-only", "client", json!(["default"])),
        ("shop-only", "client", json!(["shop"])),
        ("both", "frontend", json!(["default", "shop"])),
        ("everywhere", "backend", json!(["*"])),
    ] {
        let body = json!({"tokenName": name, "type": kind, "projects": projects});
        let (status, created) = send(&service, post(TOKENS, ADMIN, body)).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
    }
    // The test app's SDK token (`backend-development`) is for every project too; the admin tokens
    // are no project's.
    let (status, list) = send(&service, get("/api/admin/projects/default/api-tokens", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(
        token_names(&list),
        ["backend-development", "default-only", "both", "everywhere"],
        "{list}"
    );
    // A token for several projects names them joined with commas, as Unleash's `project` does.
    assert_eq!(token_named(&list, "both")["project"], "default,shop", "{list}");
    assert_eq!(
        token_named(&list, "both")["secret"],
        "[]:development.***",
        "{list}"
    );
    let (_, shop) = send(&service, get("/api/admin/projects/shop/api-tokens", ADMIN)).await;
    assert_eq!(
        token_names(&shop),
        ["backend-development", "shop-only", "both", "everywhere"],
        "{shop}"
    );
}

#[actix_web::test]
async fn strategy_types_come_in_unleashs_order_with_its_display_names_and_titles() {
    let app = TestApp::new();
    let service = app.service().await;
    for (name, title) in [("zeta", Value::Null), ("alpha", json!("Alpha tenants"))] {
        let definition = json!({"name": name, "title": title, "parameters": []});
        let (status, body) = send(&service, post("/api/admin/strategies", ADMIN, definition)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body.get("displayName"), Some(&Value::Null), "{body}");
    }
    let (status, body) = send(&service, get("/api/admin/strategies", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed: Vec<(Value, Value, Value)> = body["strategies"]
        .as_array()
        .map(|types| {
            types
                .iter()
                .map(|kind| {
                    let field = |key: &str| kind.get(key).cloned().unwrap_or_else(|| json!("(absent)"));
                    (field("name"), field("displayName"), field("title"))
                })
                .collect()
        })
        .unwrap_or_default();
    // Unleash orders by its `sort_order` (flexibleRollout 0, default 1, remoteAddress 3,
    // applicationHostname 4, custom types 9999), then by name. Its built-in types have display
    // names and no title; custom ones have no display name.
    assert_eq!(
        listed,
        [
            (json!("flexibleRollout"), json!("Gradual rollout"), Value::Null),
            (json!("default"), json!("Standard"), Value::Null),
            (json!("remoteAddress"), json!("IPs"), Value::Null),
            (json!("applicationHostname"), json!("Hosts"), Value::Null),
            (json!("alpha"), Value::Null, json!("Alpha tenants")),
            (json!("zeta"), Value::Null, Value::Null),
        ],
        "{body}"
    );

    let (status, rollout) = send(&service, get("/api/admin/strategies/flexibleRollout", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{rollout}");
    assert_eq!(rollout["displayName"], "Gradual rollout", "{rollout}");
    assert_eq!(rollout["title"], Value::Null, "{rollout}");
    assert_eq!(
        rollout["description"],
        "Roll out to a percentage of your userbase, and ensure that the experience is the same for the user on each visit.",
        "{rollout}"
    );
    let (status, standard) = send(&service, get("/api/admin/strategies/default", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{standard}");
    assert_eq!(standard["displayName"], "Standard", "{standard}");
    assert_eq!(
        standard["description"],
        "This strategy turns on / off for your entire userbase. Prefer using \"Gradual rollout\" strategy (100%=on, 0%=off).",
        "{standard}"
    );
}
