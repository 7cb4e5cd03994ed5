//! The playground: each feature explained, contexts expanded by the advanced playground with
//! its warnings and limits, and the answers, pinned.

use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use insta::internals::{Content, Redaction};
use serde_json::json;

use crate::answers::uuid;
use crate::common::{ADMIN, TestApp, assert_error, create_feature, expect, post, put, seed_feature, send};

/// A playground strategy link keeps its path and query, with the strategy's UUID as `[id]`.
fn strategy_link() -> Redaction {
    insta::dynamic_redaction(|value: Content, _| {
        let redacted = value.as_str().and_then(|link| {
            let (head, id) = link.rsplit_once("strategyId=")?;
            uuid::Uuid::parse_str(id).ok()?;
            Some(format!("{head}strategyId=[id]"))
        });
        redacted.map_or(value, Content::from)
    })
}

/// The path of feature `name`'s strategies in `environment`.
fn strategies_path(name: &str, environment: &str) -> String {
    format!("/api/admin/projects/default/features/{name}/environments/{environment}/strategies")
}

#[actix_web::test]
async fn playground_explains_each_feature() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    let (status, strategy) = send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout/environments/development/strategies",
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": {"rollout": "100"},
                   "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{strategy}");

    let request = json!({"environment": "development", "context": {"appName": "web", "userId": 7, "properties": {"plan": "free"}}});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, request)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The input is echoed after coercion.
    assert_eq!(body["input"]["context"]["userId"], json!("7"));
    let feature = &body["features"][0];
    let keys: Vec<&String> = feature
        .as_object()
        .map(|map| map.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "isEnabled",
            "isEnabledInCurrentEnvironment",
            "hasUnsatisfiedDependency",
            "variant",
            "variants",
            "name",
            "projectId",
            "strategies"
        ]
    );
    assert_eq!(feature["name"], "checkout");
    assert_eq!(feature["isEnabled"], true);
    assert_eq!(feature["strategies"]["result"], true);
    let data = &feature["strategies"]["data"];
    assert_eq!(
        data[0]["result"],
        json!({"enabled": true, "evaluationStatus": "complete"})
    );
    assert_eq!(
        data[1]["result"],
        json!({"enabled": false, "evaluationStatus": "complete"})
    );
    assert_eq!(data[1]["constraints"][0]["result"], false);
    assert_eq!(data[1]["parameters"]["groupId"], "checkout");
    let edit = data[0]["links"]["edit"].as_str().unwrap_or_default();
    assert!(
        edit.starts_with(
            "/projects/default/features/checkout/strategies/edit?environmentId=development&strategyId="
        ),
        "{edit}"
    );
    assert_eq!(
        feature["variant"],
        json!({"feature_enabled": true, "featureEnabled": true, "name": "disabled", "enabled": false})
    );

    // Non-string custom context values are dropped, without a warnings field.
    let odd =
        json!({"environment": "development", "context": {"appName": "a", "tenant": {"x": 1}, "plan": 3}});
    let (status, body) = send(&service, post("/api/admin/playground", ADMIN, odd)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.get("warnings").is_none());

    // Unknown projects match nothing; `"*"` matches everything.
    let none = json!({"environment": "development", "projects": ["nope"], "context": {"appName": "a"}});
    assert_eq!(
        send(&service, post("/api/admin/playground", ADMIN, none)).await.1["features"],
        json!([])
    );
}

#[actix_web::test]
async fn advanced_playground_expands_contexts_and_warns() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "a").await;
    seed_feature(&service, "b").await;
    let request = json!({
        "environments": ["development", "production"],
        "projects": "*",
        "context": {"appName": "web", "userId": "1,2", "tenant": {"x": 1}, "properties": {"plan": "pro,free"}}
    });
    let (status, body) = send(
        &service,
        post("/api/admin/playground/advanced", ADMIN, request.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["input"], request);
    assert_eq!(body["warnings"], json!({"invalidContextProperties": ["tenant"]}));
    let features = body["features"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        features.iter().map(|f| f["name"].clone()).collect::<Vec<_>>(),
        [json!("a"), json!("b")]
    );
    let development = features[0]["environments"]["development"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(development.len(), 4);
    assert_eq!(
        development[0]["context"],
        json!({"userId": "1", "plan": "pro", "appName": "web"})
    );
    assert_eq!(
        development[1]["context"],
        json!({"userId": "1", "plan": "free", "appName": "web"})
    );
    assert_eq!(development[0]["environment"], "development");
    let keys: Vec<String> = development[0]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "isEnabled",
            "isEnabledInCurrentEnvironment",
            "hasUnsatisfiedDependency",
            "variant",
            "context",
            "variants",
            "name",
            "environment",
            "projectId",
            "strategies"
        ]
    );
    assert_eq!(
        features[0]["environments"]["production"].as_array().map(Vec::len),
        Some(4)
    );

    // No warnings key when nothing was dropped.
    let clean = json!({"environments": ["development"], "context": {"appName": "web"}});
    let (_, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, clean)).await;
    assert!(body.get("warnings").is_none(), "{body}");

    for (request, path) in [
        (json!({"context": {"appName": "a"}}), "/environments"),
        (
            json!({"environments": [], "context": {"appName": "a"}}),
            "/environments",
        ),
        (
            json!({"environments": ["bad env"], "context": {"appName": "a"}}),
            "/environments/0",
        ),
        (
            json!({"environments": ["development"], "context": {"appName": "a", "currentTime": "2024-01-01T00:00:00Z,2024-01-02T00:00:00Z"}}),
            "/context/currentTime",
        ),
    ] {
        let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
        assert_error(status, &body, 400, "ValidationError");
        assert_eq!(body["details"][0]["path"], json!(path));
    }
}

#[actix_web::test]
async fn advanced_playground_rejects_too_many_combinations() {
    let app = TestApp::with_settings(flag_admin::Settings {
        combination_limit: 10,
        ..flag_admin::Settings::default()
    });
    let service = app.service().await;
    seed_feature(&service, "a").await;
    let request = json!({"environments": ["development", "production"], "context": {"appName": "web", "userId": "1,2,3,4,5,6"}});
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_error(status, &body, 400, "ValidationError");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("12 combinations exceeding 10 limit"),
        "{message}"
    );
}

// The answers, pinned.

/// Two flags: `banner`, on everywhere with the standard strategy, and `checkout`, rolled out to
/// pro users with two variants, on in development only. Every context sets `userId`, so the
/// default stickiness never falls back to a random draw: user 3 gets `red`, users 1 and 2 `blue`
/// (MurmurHash3 of `checkout:<userId>` with Unleash's variant seed 86028157 gives 938, 371, 43 of 1000).
async fn seed_playground<S, B>(service: &S)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    seed_feature(service, "banner").await;
    create_feature(service, "checkout").await;
    let rollout = json!({
        "name": "flexibleRollout",
        "parameters": {"rollout": "100", "stickiness": "default"},
        "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]
    });
    for environment in ["development", "production"] {
        expect(
            service,
            post(&strategies_path("checkout", environment), ADMIN, rollout.clone()),
            StatusCode::OK,
        )
        .await;
    }
    let variants = json!({
        "variants": [
            {"name": "red", "weight": 1, "payload": {"type": "string", "value": "#f00"}},
            {"name": "blue", "weight": 1}
        ],
        "environments": ["development", "production"]
    });
    expect(
        service,
        put(
            "/api/admin/projects/default/features/checkout/variants-batch",
            ADMIN,
            variants,
        ),
        StatusCode::OK,
    )
    .await;
    expect(
        service,
        post(
            "/api/admin/projects/default/features/checkout/environments/development/on",
            ADMIN,
            json!({}),
        ),
        StatusCode::OK,
    )
    .await;
}

#[actix_web::test]
async fn playground_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_playground(&service).await;
    let request = json!({
        "environment": "development",
        "projects": "*",
        "context": {"appName": "web", "userId": "3", "properties": {"plan": "pro"}}
    });
    let body = expect(
        &service,
        post("/api/admin/playground", ADMIN, request),
        StatusCode::OK,
    )
    .await;
    insta::assert_json_snapshot!(body, {
        ".features[].strategies.data[].id" => uuid(),
        ".features[].strategies.data[].links.edit" => strategy_link(),
    });
}

#[actix_web::test]
async fn advanced_playground_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_playground(&service).await;
    let request = json!({
        "environments": ["development", "production"],
        "projects": "*",
        "context": {"appName": "web", "userId": "1,2", "properties": {"plan": "pro"}}
    });
    let body = expect(
        &service,
        post("/api/admin/playground/advanced", ADMIN, request),
        StatusCode::OK,
    )
    .await;
    insta::assert_json_snapshot!(body, {
        ".features[].environments.*[].strategies.data[].id" => uuid(),
        ".features[].environments.*[].strategies.data[].links.edit" => strategy_link(),
    });
}

#[actix_web::test]
async fn advanced_playground_error_without_environments() {
    let app = TestApp::new();
    let service = app.service().await;
    let request = json!({"environments": [], "context": {"appName": "web"}});
    let (status, body) = send(&service, post("/api/admin/playground/advanced", ADMIN, request)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => uuid()});
}

/// The moment just past, at millisecond precision, between one write and the next.
async fn moment() -> String {
    use chrono::SubsecRound as _;
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    let at = chrono::Utc::now().trunc_subsecs(3);
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[actix_web::test]
async fn the_past_is_asked_over_http_and_bad_moments_are_refused() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    let off = moment().await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout/environments/development/off",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let on = moment().await;

    // The playground then and now.
    let asked = |at: &str| json!({"environment": "development", "context": {"appName": "web"}, "at": at});
    let (status, then) = send(&service, post("/api/admin/playground", ADMIN, asked(&off))).await;
    assert_eq!(status, StatusCode::OK, "{then}");
    let (_, now) = send(&service, post("/api/admin/playground", ADMIN, asked(&on))).await;
    let enabled = |answer: &serde_json::Value| {
        answer["features"]
            .as_array()
            .and_then(|features| features.iter().find(|feature| feature["name"] == "checkout"))
            .map(|feature| feature["isEnabled"].clone())
    };
    // Seeded on, then switched off.
    assert_eq!(enabled(&then), Some(json!(true)), "{then}");
    assert_eq!(enabled(&now), Some(json!(false)), "{now}");
    assert_eq!(then["asOf"]["at"], json!(off));
    assert!(then["asOf"]["revision"].as_i64() < now["asOf"]["revision"].as_i64());
    let (status, advanced) = send(
        &service,
        post(
            "/api/admin/playground/advanced",
            ADMIN,
            json!({"environments": ["development"], "context": {"appName": "web"}, "at": off}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{advanced}");
    assert_eq!(advanced["asOf"]["at"], json!(off));

    // The flag as it was.
    let (status, flag) = send(
        &service,
        crate::common::get(
            &format!(
                "/api/admin/projects/default/features/checkout?at={}",
                off.replace('+', "%2B")
            ),
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{flag}");
    assert_eq!(flag["asOf"]["at"], json!(off));

    // What changed between the two.
    let (status, changes) = send(
        &service,
        crate::common::get(
            &format!("/api/admin/history/changes?environment=development&from={off}&to={on}"),
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{changes}");
    assert_eq!(changes["features"][0]["name"], "checkout");
    assert_eq!(
        changes["features"][0]["events"][0]["type"],
        "feature-environment-disabled"
    );

    // Bad moments: a clear 400 naming the range or the form.
    for at in [
        json!("2001-01-01T00:00:00Z"),
        json!("2999-01-01T00:00:00Z"),
        json!("noon"),
        json!(12),
    ] {
        let body = json!({"environment": "development", "context": {"appName": "web"}, "at": at});
        let (status, refused) = send(&service, post("/api/admin/playground", ADMIN, body)).await;
        assert_error(status, &refused, 400, "ValidationError");
    }
    let (status, refused) = send(
        &service,
        crate::common::get(
            "/api/admin/history/changes?environment=development&from=2001-01-01T00:00:00Z",
            ADMIN,
        ),
    )
    .await;
    assert_error(status, &refused, 400, "ValidationError");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|message| message.contains("until now")),
        "{refused}"
    );
    let (status, refused) = send(
        &service,
        crate::common::get(
            "/api/admin/projects/default/features/checkout?at=yesterday",
            ADMIN,
        ),
    )
    .await;
    assert_error(status, &refused, 400, "ValidationError");
}
