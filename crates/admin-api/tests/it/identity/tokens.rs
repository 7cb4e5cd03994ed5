//! API tokens through the admin API: created, listed, found, changed and deleted, as Unleash 8.2
//! answers them: the keys of its token schema and no others, token types as its store reads them
//! back, its messages for an unknown project or environment, a quiet delete of an unknown token,
//! a project's list holding every token that reaches the project. A secret is shown once and
//! masked after; tokens are seeded from `INIT_*` variables; and the token operations' answers
//! are pinned.

use std::collections::BTreeSet;

use actix_web::http::StatusCode;
use insta::internals::{Content, Redaction};
use serde_json::{Value, json};

use crate::answers::{created, empty_answer, time, uuid};
use crate::common::{ADMIN, TestApp, assert_error, delete, expect, get, post, put, send};

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

/// A token secret keeps its `project:environment.` prefix; its 56 random hex digits become `[hex]`.
fn secret() -> Redaction {
    insta::dynamic_redaction(|value: Content, _| {
        let redacted = value.as_str().and_then(|secret| {
            let (prefix, random) = secret.rsplit_once('.')?;
            let random_hex = random.len() == 56
                && random
                    .bytes()
                    .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
            random_hex.then(|| format!("{prefix}.[hex]"))
        });
        redacted.map_or(value, Content::from)
    })
}

/// A client token for the default project in development.
fn client_token() -> Value {
    json!({"tokenName": "web", "type": "client", "environment": "development", "projects": ["default"]})
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
async fn tokens_are_found_by_name_expired_and_kept_per_project() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, created) = send(
        &service,
        post(
            "/api/admin/projects/default/api-tokens",
            ADMIN,
            json!({"tokenName": "backend-1", "type": "client", "environment": "development"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["projects"], json!(["default"]));
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    let (status, _) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::OK);

    let (_, named) = send(&service, get("/api/admin/api-tokens/backend-1", ADMIN)).await;
    assert_eq!(named["tokens"].as_array().map(Vec::len), Some(1), "{named}");
    assert!(
        named["tokens"][0]["secret"]
            .as_str()
            .is_some_and(|shown| shown.ends_with("***"))
    );
    // The project's tokens are the ones that reach it: its own and the SDK token for every project.
    let (_, of_project) = send(&service, get("/api/admin/projects/default/api-tokens", ADMIN)).await;
    let names = |list: &Value| -> Vec<String> {
        list["tokens"]
            .as_array()
            .map(|tokens| {
                tokens
                    .iter()
                    .filter_map(|token| token["tokenName"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        names(&of_project),
        ["backend-development", "backend-1"],
        "{of_project}"
    );
    let (status, body) = send(&service, get("/api/admin/projects/nope/api-tokens", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");

    // A time in the past revokes it everywhere it is used.
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/api-tokens/{secret}"),
            ADMIN,
            json!({"expiresAt": "2020-01-01T00:00:00Z"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(&service, get("/api/client/features", &secret)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/api-tokens/{secret}"),
            ADMIN,
            json!({"expiresAt": "soon"}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, _) = send(
        &service,
        put(
            "/api/admin/api-tokens/unknown-secret",
            ADMIN,
            json!({"expiresAt": crate::common::next_year()}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "an unknown secret changes nothing");

    let (status, body) = send(
        &service,
        delete("/api/admin/projects/default/api-tokens/unknown-secret", ADMIN),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, _) = send(
        &service,
        delete(&format!("/api/admin/projects/default/api-tokens/{secret}"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, of_project) = send(&service, get("/api/admin/projects/default/api-tokens", ADMIN)).await;
    assert_eq!(names(&of_project), ["backend-development"], "{of_project}");
}

#[actix_web::test]
async fn seeded_admin_tokens_are_named_admin_and_lists_show_only_public_parts() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, segment) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "s", "constraints": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    assert_eq!(segment["createdBy"], "admin");

    let (status, created) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "web", "type": "client", "environment": "production", "projects": ["default"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["secret"].as_str().unwrap_or_default().to_owned();
    assert!(
        secret.starts_with("default:production.") && secret.len() > 30,
        "{secret}"
    );

    let (_, listed) = send(&service, get("/api/admin/api-tokens", ADMIN)).await;
    let tokens = listed["tokens"].as_array().cloned().unwrap_or_default();
    let admin = tokens
        .iter()
        .find(|token| token["secret"] == "*:*.***")
        .cloned()
        .unwrap_or_default();
    assert_eq!(admin["tokenName"], "admin", "{listed}");
    // Unleash 8 lists no `username` (nor `id`): its schema allows no key but its own.
    assert_eq!(admin.get("username"), None, "{listed}");
    let web = tokens
        .iter()
        .find(|token| token["tokenName"] == "web")
        .cloned()
        .unwrap_or_default();
    assert_eq!(web["secret"], "default:production.***", "{listed}");
    assert!(
        !listed.to_string().contains(&secret),
        "the list never shows a whole secret"
    );
}

#[test]
fn unleash_init_token_variables_seed_every_token_type() -> Result<(), Box<dyn std::error::Error>> {
    use crate::common::process::{Running, exchange, start_server_with};
    let scratch = flag_store::scratch::Scratch::new()?;
    let (child, port) = start_server_with(
        &scratch,
        &[],
        &[
            ("INIT_ADMIN_API_TOKENS", "*:*.init-admin"),
            ("INIT_BACKEND_API_TOKENS", "default:development.init-backend"),
            // Read only when INIT_BACKEND_API_TOKENS is unset, as Unleash reads it.
            ("INIT_CLIENT_API_TOKENS", "*:development.init-client"),
            ("INIT_FRONTEND_API_TOKENS", "*:development.init-frontend"),
        ],
    )?;
    let _server = Running(child);
    let call = |path: &str, token: &str| {
        exchange(
            port,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {token}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    };
    assert_eq!(
        call("/api/client/features", "default:development.init-backend")?.status,
        200
    );
    assert_eq!(
        call("/api/client/features", "*:development.init-client")?.status,
        401
    );
    assert_eq!(
        call("/api/client/features", "*:development.init-frontend")?.status,
        403
    );
    assert_eq!(call("/api/client/features", "*:*.init-admin")?.status, 403);

    let listed: Value = serde_json::from_str(&call("/api/admin/api-tokens", "*:*.init-admin")?.body)?;
    let mut seen: Vec<(String, String, String)> = listed["tokens"]
        .as_array()
        .map(|tokens| {
            tokens
                .iter()
                .map(|token| {
                    let text = |key: &str| token[key].as_str().unwrap_or_default().to_owned();
                    (text("type"), text("secret"), text("tokenName"))
                })
                .collect()
        })
        .unwrap_or_default();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("admin".to_owned(), "*:*.***".to_owned(), "admin".to_owned()),
            // A backend token is listed as a client token, as Unleash lists it.
            (
                "client".to_owned(),
                "default:development.***".to_owned(),
                "admin".to_owned()
            ),
            (
                "frontend".to_owned(),
                "*:development.***".to_owned(),
                "admin".to_owned()
            ),
        ]
    );
    Ok(())
}

// The token operations' answers, pinned.

#[actix_web::test]
async fn list_tokens_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    expect(
        &service,
        post("/api/admin/api-tokens", ADMIN, client_token()),
        StatusCode::CREATED,
    )
    .await;
    let body = expect(&service, get("/api/admin/api-tokens", ADMIN), StatusCode::OK).await;
    insta::assert_json_snapshot!(body, {".tokens[].createdAt" => time()});
}

#[actix_web::test]
async fn create_token_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let answer = created(&service, post("/api/admin/api-tokens", ADMIN, client_token())).await;
    insta::assert_json_snapshot!(answer, {".body.secret" => secret(), ".body.createdAt" => time()});
}

#[actix_web::test]
async fn create_token_error_with_the_admin_type() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "root", "type": "admin"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

#[actix_web::test]
async fn delete_token_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    let token = expect(
        &service,
        post("/api/admin/api-tokens", ADMIN, client_token()),
        StatusCode::CREATED,
    )
    .await;
    let secret = token["secret"].as_str().unwrap_or_default();
    let mut answer = empty_answer(
        &service,
        delete(&format!("/api/admin/api-tokens/{secret}"), ADMIN),
    )
    .await;
    let list = expect(&service, get("/api/admin/api-tokens", ADMIN), StatusCode::OK).await;
    answer["tokensLeft"] = list["tokens"]
        .as_array()
        .map(|tokens| tokens.iter().map(|token| token["tokenName"].clone()).collect())
        .unwrap_or_default();
    insta::assert_json_snapshot!(answer);
}

/// An unknown secret is answered as a delete, as Unleash answers it.
#[actix_web::test]
async fn delete_token_answer_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let answer = empty_answer(
        &service,
        delete("/api/admin/api-tokens/default:development.unknown", ADMIN),
    )
    .await;
    insta::assert_json_snapshot!(answer);
}
