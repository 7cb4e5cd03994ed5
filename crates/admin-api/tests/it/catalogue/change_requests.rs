//! Change requests: the rule that an environment takes changes only through them, as Unleash's
//! Terraform provider configures it, and every write operation of the API refused where it
//! would change a protected environment.

use actix_web::http::StatusCode;
use actix_web::test::TestRequest;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, get, post, put, seed_feature, send};
use crate::identity::token_scope::body_of;

const CONFIG: &str = "/api/admin/projects/default/change-requests/config";
const PRODUCTION_CONFIG: &str = "/api/admin/projects/default/environments/production/change-requests/config";

#[actix_web::test]
async fn the_rule_is_configured_as_unleashs_terraform_provider_does() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, config) = send(&service, get(CONFIG, ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{config}");
    assert_eq!(
        config,
        json!([
            {"environment": "development", "type": "development", "changeRequestEnabled": false, "requiredApprovals": null},
            {"environment": "production", "type": "production", "changeRequestEnabled": false, "requiredApprovals": null},
        ])
    );
    // The provider sends the plural, reads the singular, and expects 204.
    let on = json!({"changeRequestsEnabled": true, "requiredApprovals": 2});
    let (status, body) = send(&service, put(PRODUCTION_CONFIG, ADMIN, on)).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, config) = send(&service, get(CONFIG, ADMIN)).await;
    assert_eq!(
        config[1],
        json!({"environment": "production", "type": "production", "changeRequestEnabled": true, "requiredApprovals": 2})
    );
    // Approvals are brought within 1 to 10, as Unleash does; none given is 1.
    for (asked, kept) in [(json!(0), 1), (json!(99), 10), (Value::Null, 1)] {
        let mut body = json!({"changeRequestsEnabled": true});
        if !asked.is_null() {
            body["requiredApprovals"] = asked;
        }
        let (status, _) = send(&service, put(PRODUCTION_CONFIG, ADMIN, body)).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (_, config) = send(&service, get(CONFIG, ADMIN)).await;
        assert_eq!(config[1]["requiredApprovals"], json!(kept));
    }
    // The provider's delete.
    let off = json!({"changeRequestsEnabled": false, "requiredApprovals": 0});
    let (status, _) = send(&service, put(PRODUCTION_CONFIG, ADMIN, off)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, config) = send(&service, get(CONFIG, ADMIN)).await;
    assert_eq!(config[1]["changeRequestEnabled"], json!(false));
    assert_eq!(config[1]["requiredApprovals"], Value::Null);
    // Each change is in the audit log.
    let (_, events) = send(
        &service,
        get(
            "/api/admin/events?type=change-request-configuration-updated",
            ADMIN,
        ),
    )
    .await;
    assert!(
        events["events"]
            .as_array()
            .is_some_and(|events| events.len() >= 4),
        "{events}"
    );

    // Refusals.
    let unknown_environment = "/api/admin/projects/default/environments/nowhere/change-requests/config";
    let (status, body) = send(
        &service,
        put(unknown_environment, ADMIN, json!({"changeRequestsEnabled": true})),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        get("/api/admin/projects/nowhere/change-requests/config", ADMIN),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    for bad in [
        json!({}),
        json!({"changeRequestsEnabled": "yes"}),
        json!({"changeRequestsEnabled": true, "requiredApprovals": "two"}),
        json!({"changeRequestsEnabled": true, "extra": 1}),
        json!([{"changeRequestsEnabled": true}]),
    ] {
        let (status, body) = send(&service, put(PRODUCTION_CONFIG, ADMIN, bad.clone())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}

/// What SDKs are answered in production, as far as it decides answers: each enabled flag's
/// strategies, variants and dependencies, and the segments those strategies use.
async fn production_answers<S, B>(service: &S, token: &str, after: &str) -> Value
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let (status, document) = send(service, get("/api/client/features", token)).await;
    assert_eq!(status, StatusCode::OK, "after {after}: {document}");
    let mut used = Vec::new();
    let flags: Vec<Value> = document["features"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|flag| flag["enabled"] == json!(true))
        .map(|flag| {
            for strategy in flag["strategies"].as_array().into_iter().flatten() {
                used.extend(strategy["segments"].as_array().into_iter().flatten().cloned());
            }
            json!({
                "name": flag["name"],
                "strategies": flag["strategies"],
                "variants": flag["variants"],
                "dependencies": flag["dependencies"],
            })
        })
        .collect();
    let segments: Vec<&Value> = document["segments"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|segment| used.contains(&segment["id"]))
        .collect();
    json!({"flags": flags, "segments": segments})
}

/// `value` with every `"development"` made `"production"`: a body aimed at the protected
/// environment.
fn in_production(value: Value) -> Value {
    match value {
        Value::String(text) if text == "development" => json!("production"),
        Value::Array(items) => Value::Array(items.into_iter().map(in_production).collect()),
        Value::Object(fields) => fields
            .into_iter()
            .map(|(key, value)| (key, in_production(value)))
            .collect(),
        other => other,
    }
}

#[actix_web::test]
async fn while_production_needs_change_requests_no_write_operation_changes_it() {
    let app = TestApp::new();
    let service = app.service().await;
    // One segment (id 1), used by flag f's production strategy; a parent flag to depend on.
    let (status, segment) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    assert_eq!(segment["id"], json!(1));
    seed_feature(&service, "f").await;
    seed_feature(&service, "parent").await;
    let base = "/api/admin/projects/default/features/f/environments/production/strategies";
    let (status, strategy) = send(
        &service,
        post(base, ADMIN, json!({"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "default", "groupId": "f"}, "segments": [1]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{strategy}");
    let strategy_id = strategy["id"].as_str().unwrap_or_default().to_owned();
    // Variants in production, so that the per-environment variant writes would be taken.
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            json!({"variants": [{"name": "blue", "weight": 1000}], "environments": ["production"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, token) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "prod", "type": "client", "environment": "production"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{token}");
    let sdk = token["secret"].as_str().unwrap_or_default().to_owned();
    let on = json!({"changeRequestsEnabled": true, "requiredApprovals": 1});
    assert_eq!(
        send(&service, put(PRODUCTION_CONFIG, ADMIN, on)).await.0,
        StatusCode::NO_CONTENT
    );
    let before = production_answers(&service, &sdk, "the fixture").await;
    assert_eq!(before["flags"].as_array().map(Vec::len), Some(2), "{before}");
    // Segments reach SDKs inlined in the strategies that use them.
    assert_eq!(
        before["flags"][0]["strategies"][1]["constraints"][0]["values"],
        json!(["1"]),
        "{before}"
    );

    let mut unclassified = Vec::new();
    let mut refused = 0;
    for operation in admin_api::routes::operations() {
        let method = operation.method.as_str().to_lowercase();
        let admin_write = method != "get"
            && !matches!(
                operation.access,
                flag_admin::identity::auth::Access::Public
                    | flag_admin::identity::auth::Access::Client
                    | flag_admin::identity::auth::Access::Frontend
            );
        // The rule itself is changed through its configuration, which this test holds on.
        if !admin_write || operation.path.contains("/change-requests") {
            continue;
        }
        let Some(body) = body_of(&method, &operation.path) else {
            unclassified.push(format!("{method} {}", operation.path));
            continue;
        };
        let path = operation
            .path
            .replace("{projectId}", "default")
            .replace("{featureName}", "f")
            .replace("{environment}", "production")
            .replace("{name}", "production")
            .replace("{strategyId}", &strategy_id)
            .replace("{token}", "some-token")
            .replace("{id}", "1");
        let mut request = TestRequest::default()
            .method(operation.method.clone())
            .uri(&path)
            .insert_header(("Authorization", ADMIN));
        if !body.is_null() {
            request = request.set_json(in_production(body));
        }
        let (status, answer) = send(&service, request).await;
        let route = format!("{method} {}", operation.path);
        assert!(!status.is_server_error(), "{route}: {status} {answer}");
        let after = production_answers(&service, &sdk, &route).await;
        assert_eq!(after, before, "{route} ({status} {answer}) changed production");
        // What a path names the environment of is refused by the rule, even when it would
        // change nothing.
        if operation.path.starts_with("/api/admin/projects/{projectId}/")
            && operation.path.contains("{environment}")
        {
            assert_eq!(status, StatusCode::FORBIDDEN, "{route}: {answer}");
            assert_error(status, &answer, 403, "PermissionError");
            let message = answer["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("\"production\"") && message.contains("change request"),
                "{route}: {message}"
            );
            refused += 1;
        }
    }
    assert!(
        unclassified.is_empty(),
        "give these operations a body that passes validation: {unclassified:?}"
    );
    assert!(refused >= 8, "only {refused} operations name the environment");

    // With the rule off, the same writes go through.
    let off = json!({"changeRequestsEnabled": false});
    assert_eq!(
        send(&service, put(PRODUCTION_CONFIG, ADMIN, off)).await.0,
        StatusCode::NO_CONTENT
    );
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/f/environments/production/off",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after = production_answers(&service, &sdk, "the rule went off").await;
    assert_eq!(after["flags"].as_array().map(Vec::len), Some(1), "{after}");
}

/// A JSON request with `method` as the user whose session `cookie` holds.
fn as_user(
    method: &str,
    path: &str,
    cookie: &actix_web::cookie::Cookie<'static>,
    body: Value,
) -> TestRequest {
    let request = match method {
        "PUT" => TestRequest::put(),
        "POST" => TestRequest::post(),
        _ => TestRequest::get(),
    }
    .uri(path)
    .cookie(cookie.clone());
    if body.is_null() {
        request
    } else {
        request.set_json(body)
    }
}

#[actix_web::test]
async fn a_request_over_http_refuses_bad_moves_and_takes_two_approvals_at_once() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let on = json!({"changeRequestsEnabled": true, "requiredApprovals": 2});
    assert_eq!(
        send(&service, put(PRODUCTION_CONFIG, ADMIN, on)).await.0,
        StatusCode::NO_CONTENT
    );
    let author = crate::common::signed_in(&service, "author@example.com", 2).await;
    let first = crate::common::signed_in(&service, "first@example.com", 1).await;
    let second = crate::common::signed_in(&service, "second@example.com", 1).await;
    let base = "/api/admin/projects/default";
    let (status, draft) = send(
        &service,
        as_user(
            "POST",
            &format!("{base}/environments/production/change-requests"),
            &author,
            json!([{"feature": "f", "action": "updateEnabled", "payload": {"enabled": false}}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{draft}");
    let id = draft["id"].as_i64().unwrap_or_default();
    let state = format!("{base}/change-requests/{id}/state");
    let moved = |cookie, body| as_user("PUT", &state, cookie, body);
    // Bad bodies and bad moves.
    for (cookie, body, status, name) in [
        (&author, json!({"state": "Nope"}), 400, "ValidationError"),
        (
            &author,
            json!({"state": "In review", "extra": 1}),
            400,
            "ValidationError",
        ),
        // Another's draft is not there for them.
        (&first, json!({"state": "In review"}), 404, "NotFoundError"),
    ] {
        let (got, answer) = send(&service, moved(cookie, body.clone())).await;
        assert_error(got, &answer, status, name);
    }
    let (status, sent) = send(&service, moved(&author, json!({"state": "In review"}))).await;
    assert_eq!(
        (status, &sent["state"]),
        (StatusCode::OK, &json!("In review")),
        "{sent}"
    );
    let (status, answer) = send(&service, moved(&author, json!({"state": "Approved"}))).await;
    assert_error(status, &answer, 403, "NoAccessError");
    let (status, answer) = send(&service, moved(&first, json!({"state": "Applied"}))).await;
    assert_error(status, &answer, 403, "InvalidOperationError");
    // Two approvals at once, from two people: both count.
    let (one, two) = futures_util::future::join(
        send(&service, moved(&first, json!({"state": "Approved"}))),
        send(&service, moved(&second, json!({"state": "Approved"}))),
    )
    .await;
    assert_eq!(
        (one.0, two.0),
        (StatusCode::OK, StatusCode::OK),
        "{} {}",
        one.1,
        two.1
    );
    let (_, read) = send(
        &service,
        as_user(
            "GET",
            &format!("{base}/change-requests/{id}"),
            &first,
            Value::Null,
        ),
    )
    .await;
    assert_eq!(read["state"], json!("Approved"), "{read}");
    assert_eq!(read["approvals"].as_array().map(Vec::len), Some(2), "{read}");
    let (status, answer) = send(&service, moved(&first, json!({"state": "Approved"}))).await;
    assert_error(status, &answer, 403, "InvalidOperationError");
    // Times: without a zone, or past.
    for at in ["2999-01-01T00:00:00", "2020-01-01T00:00:00Z"] {
        let (status, answer) = send(
            &service,
            moved(&first, json!({"state": "Scheduled", "scheduledAt": at})),
        )
        .await;
        assert_error(status, &answer, 400, "ValidationError");
    }
    let (status, applied) = send(&service, moved(&first, json!({"state": "Applied"}))).await;
    assert_eq!(
        (status, &applied["state"]),
        (StatusCode::OK, &json!("Applied")),
        "{applied}"
    );
    let (status, answer) = send(&service, moved(&second, json!({"state": "Applied"}))).await;
    assert_error(status, &answer, 403, "InvalidOperationError");
}
