//! What SDKs register and report, and the admin views of it.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, seed_feature, send};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

const SHOP_ONLY: &str = "shop:development.shop-only-secret";
const FRONTEND: &str = "*:development.frontend-secret";

fn registration(app: &str, instance: &str) -> Value {
    json!({
        "appName": app, "instanceId": instance, "sdkVersion": "unleash-node-sdk:6.12.1",
        "strategies": ["default", "flexibleRollout", "myCustom"], "started": crate::common::time_from_now(chrono::TimeDelta::hours(-1)),
        "interval": 15000, "platformName": "node", "yggdrasilVersion": null, "specVersion": "5.2.0"
    })
}

fn report(app: &str, toggles: Value) -> Value {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    json!({"appName": app, "instanceId": "i-1", "bucket": {"start": now, "stop": now, "toggles": toggles}})
}

#[actix_web::test]
async fn reports_are_taken_with_unleash_statuses() {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    for path in ["/api/client/register", "/api/client/metrics"] {
        let body = if path.ends_with("register") {
            registration("web", "i-1")
        } else {
            report("web", json!({}))
        };
        let (status, answer) = send(&service, post(path, SDK, body.clone())).await;
        assert_eq!((status, answer), (StatusCode::ACCEPTED, Value::Null), "{path}");
        let (status, answer) = send(&service, post(path, "nope", body.clone())).await;
        assert_error(status, &answer, 401, "AuthenticationRequired");
        let (status, answer) = send(&service, post(path, ADMIN, body.clone())).await;
        assert_error(status, &answer, 403, "NoAccessError");
        let (status, answer) = send(&service, post(path, FRONTEND, body)).await;
        assert_error(status, &answer, 403, "NoAccessError");
        let (status, answer) = send(&service, post(path, SDK, json!({"appName": ""}))).await;
        assert_error(status, &answer, 400, "ValidationError");
    }
    // Registration needs its strategies, start and interval.
    let (status, answer) = send(
        &service,
        post("/api/client/register", SDK, json!({"appName": "web"})),
    )
    .await;
    assert_error(status, &answer, 400, "ValidationError");
    let mut negative = registration("web", "i-1");
    negative["interval"] = json!(-1);
    let (status, answer) = send(&service, post("/api/client/register", SDK, negative)).await;
    assert_error(status, &answer, 400, "ValidationError");
    let mut bad_count = report("web", json!({"f": {"yes": -1, "no": 0}}));
    bad_count["instanceId"] = json!(null);
    let (status, answer) = send(&service, post("/api/client/metrics", SDK, bad_count)).await;
    assert_error(status, &answer, 400, "ValidationError");

    // The frontend SDKs' paths answer 200 `OK`, for frontend tokens only.
    for path in ["/api/frontend/client/register", "/api/frontend/client/metrics"] {
        let body = if path.ends_with("register") {
            registration("web", "i-1")
        } else {
            report("web", json!({}))
        };
        let (status, answer) = send(&service, post(path, FRONTEND, body.clone())).await;
        assert_eq!((status, answer), (StatusCode::OK, json!("OK")), "{path}");
        let (status, answer) = send(&service, post(path, SDK, body)).await;
        assert_error(status, &answer, 403, "NoAccessError");
        let (status, answer) = send(&service, post(path, FRONTEND, json!({}))).await;
        assert_error(status, &answer, 400, "ValidationError");
    }
    // Edge's bulk report.
    let bulk = json!({"applications": [], "metrics": []});
    let (status, _) = send(&service, post("/api/client/metrics/bulk", SDK, bulk.clone())).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, answer) = send(&service, post("/api/client/metrics/bulk", FRONTEND, bulk)).await;
    assert_error(status, &answer, 403, "NoAccessError");
    let (status, answer) = send(
        &service,
        post("/api/client/metrics/bulk", SDK, json!({"metrics": []})),
    )
    .await;
    assert_error(status, &answer, 400, "ValidationError");
}

#[actix_web::test]
async fn usage_shows_exactly_what_sdks_reported() {
    let app = TestApp::new();
    app.store_token(SHOP_ONLY, "backend", "development", &["shop"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    seed_feature(&service, "checkout").await;

    let (status, _) = send(
        &service,
        post("/api/client/register", SDK, registration("web", "i-1")),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    for _ in 0..2 {
        let toggles = json!({
            "checkout": {"yes": 3, "no": 1, "variants": {"blue": 2, "disabled": 1}},
            "no-such-flag": {"yes": 0, "no": 4},
            "never-used": {"yes": 0, "no": 0}
        });
        let (status, _) = send(&service, post("/api/client/metrics", SDK, report("web", toggles))).await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    // A token for another project reports `checkout`: those counts are not its to give.
    let toggles = json!({"checkout": {"yes": 100, "no": 100}});
    let (status, _) = send(
        &service,
        post("/api/client/metrics", SHOP_ONLY, report("web", toggles)),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let (status, usage) = send(
        &service,
        get("/api/admin/client-metrics/features/checkout", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{usage}");
    assert_eq!(usage["lastHourUsage"][0]["yes"], 6, "{usage}");
    assert_eq!(usage["lastHourUsage"][0]["no"], 2, "{usage}");
    assert_eq!(usage["lastHourUsage"][0]["environment"], "development");
    assert_eq!(usage["seenApplications"], json!(["web"]));

    let (status, raw) = send(
        &service,
        get(
            "/api/admin/client-metrics/features/checkout/raw?hoursBack=3",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // As Unleash answers: the newest hour first, and `variants: {}` in hours without reports.
    let data = raw["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(data.len(), 3, "{raw}");
    // Found by its counts, not its place, so that an hour turning during the test is no matter.
    let reported: Vec<&Value> = data.iter().filter(|bucket| bucket["yes"] != 0).collect();
    assert_eq!(reported.len(), 1, "{raw}");
    assert_eq!(
        reported[0]["variants"],
        json!({"blue": 4, "disabled": 2}),
        "{raw}"
    );
    assert_eq!(
        (data[2]["yes"].clone(), data[2]["variants"].clone()),
        (json!(0), json!({}))
    );
    assert!(
        data[0]["timestamp"].as_str() > data[2]["timestamp"].as_str(),
        "{raw}"
    );

    let (_, unknown) = send(&service, get("/api/admin/metrics/unknown-flags", ADMIN)).await;
    let names: Vec<&str> = unknown["unknownFlags"]
        .as_array()
        .map(|flags| flags.iter().filter_map(|flag| flag["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, vec!["no-such-flag"], "{unknown}");
    assert_eq!(unknown["unknownFlags"][0]["reports"][0]["appName"], "web");

    let (status, list) = send(&service, get("/api/admin/metrics/applications", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["total"], 1);
    assert_eq!(list["applications"][0]["appName"], "web");
    assert_eq!(
        list["applications"][0]["strategies"],
        json!(["default", "flexibleRollout", "myCustom"])
    );
    let item = &list["applications"][0];
    assert_eq!(item["createdBy"], "unleash_system_user", "{item}");
    // The first place it is used, as Unleash's list repeats it beside `usage`.
    assert_eq!(
        (item["project"].clone(), item["environment"].clone()),
        (item["usage"][0]["project"].clone(), json!("development")),
        "{item}"
    );
    assert!(item["updatedAt"].is_string(), "{item}");
    assert_eq!(
        item.as_object()
            .map(|item| item.keys().cloned().collect::<Vec<_>>()),
        Some(
            [
                "appName",
                "sdkVersion",
                "createdAt",
                "updatedAt",
                "description",
                "strategies",
                "createdBy",
                "url",
                "color",
                "icon",
                "project",
                "environment",
                "usage"
            ]
            .map(str::to_owned)
            .to_vec()
        )
    );
    let (_, none) = send(&service, get("/api/admin/metrics/applications?query=zzz", ADMIN)).await;
    assert_eq!(
        (none["total"].clone(), none["applications"].clone()),
        (json!(0), json!([]))
    );

    let (status, detail) = send(&service, get("/api/admin/metrics/applications/web", ADMIN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(detail["instances"][0]["instanceId"], "i-1");
    assert_eq!(detail["instances"][0]["sdkVersion"], "unleash-node-sdk:6.12.1");
    assert_eq!(detail["instances"][0]["environment"], "development");
    // Registered strategies as whole strategy types, reported flags as whole flags.
    assert_eq!(
        detail["strategies"][2],
        json!({"name": "myCustom", "notFound": true})
    );
    assert_eq!(detail["strategies"][1]["name"], "flexibleRollout", "{detail}");
    assert_eq!(detail["strategies"][1]["editable"], false, "{detail}");
    assert!(detail["strategies"][1]["parameters"].is_array(), "{detail}");
    let seen = &detail["seenToggles"];
    let checkout = seen
        .as_array()
        .into_iter()
        .flatten()
        .find(|flag| flag["name"] == "checkout")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (
            checkout["project"].clone(),
            checkout["type"].clone(),
            checkout["archived"].clone()
        ),
        (json!("default"), json!("release"), json!(false)),
        "{detail}"
    );
    assert!(checkout["lastSeenAt"].is_string(), "{detail}");
    assert!(checkout["createdAt"].is_string(), "{detail}");
    let (status, answer) = send(&service, get("/api/admin/metrics/applications/nobody", ADMIN)).await;
    assert_error(status, &answer, 404, "NotFoundError");

    let (status, overview) = send(
        &service,
        get("/api/admin/metrics/applications/web/overview", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(overview["featureCount"], 1, "{overview}");
    assert_eq!(overview["projects"], json!(["default"]));
    assert_eq!(overview["environments"][0]["instanceCount"], 1, "{overview}");
    assert_eq!(
        overview["environments"][0]["sdks"],
        json!(["unleash-node-sdk:6.12.1"])
    );
    assert_eq!(overview["issues"]["missingStrategies"], json!(["myCustom"]));

    let (_, instances) = send(
        &service,
        get("/api/admin/metrics/instances/web/environment/development", ADMIN),
    )
    .await;
    assert_eq!(
        instances["instances"].as_array().map(Vec::len),
        Some(1),
        "{instances}"
    );
    let (_, instances) = send(
        &service,
        get("/api/admin/metrics/instances/web/environment/production", ADMIN),
    )
    .await;
    assert_eq!(instances, json!({"instances": []}));

    // The flag was last seen in development, and never in production.
    let (_, feature) = send(
        &service,
        get("/api/admin/projects/default/features/checkout", ADMIN),
    )
    .await;
    let environments = feature["environments"].as_array().cloned().unwrap_or_default();
    let seen = |name: &str| {
        environments
            .iter()
            .find(|environment| environment["name"] == name)
            .map(|environment| environment["lastSeenAt"].clone())
    };
    assert!(seen("development").is_some_and(|at| at.is_string()), "{feature}");
    assert_eq!(seen("production"), Some(Value::Null));
    // The project's list shows it too.
    let (_, list) = send(&service, get("/api/admin/projects/default/features", ADMIN)).await;
    let listed = list["features"][0]["environments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let listed_seen = |name: &str| {
        listed
            .iter()
            .find(|environment| environment["name"] == name)
            .map(|environment| environment["lastSeenAt"].clone())
    };
    assert_eq!(listed_seen("development"), seen("development"), "{list}");
    assert_eq!(listed_seen("production"), Some(Value::Null));
}

#[actix_web::test]
async fn the_strategies_sdks_register_are_missing_only_when_unknown_and_not_retired() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    // What the Node SDK registers: three of them Unleash retired, and no strategy type has.
    let mut registered = registration("node-app", "n-1");
    registered["strategies"] = json!([
        "default",
        "applicationHostname",
        "gradualRolloutRandom",
        "gradualRolloutUserId",
        "gradualRolloutSessionId",
        "userWithId",
        "remoteAddress",
        "flexibleRollout",
        "teamCustom"
    ]);
    let (status, _) = send(&service, post("/api/client/register", SDK, registered)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // Before any usage, nothing is counted missing, as in Unleash.
    let (status, overview) = send(
        &service,
        get("/api/admin/metrics/applications/node-app/overview", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{overview}");
    assert_eq!(overview["issues"]["missingStrategies"], json!([]), "{overview}");
    let toggles = json!({"checkout": {"yes": 1, "no": 0}});
    let (status, _) = send(
        &service,
        post("/api/client/metrics", SDK, report("node-app", toggles)),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, overview) = send(
        &service,
        get("/api/admin/metrics/applications/node-app/overview", ADMIN),
    )
    .await;
    assert_eq!(
        overview["issues"]["missingStrategies"],
        json!(["teamCustom"]),
        "{overview}"
    );
}

#[actix_web::test]
async fn edge_reports_count_in_the_tokens_environment_only() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "checkout").await;
    let now = chrono::Utc::now().to_rfc3339();
    let bulk = json!({
        "applications": [{"appName": "edge-app", "instanceId": "e-1", "environment": "development",
                          "sdkVersion": "unleash-edge:20.1.0", "started": now, "interval": 15000, "strategies": []}],
        "metrics": [
            {"featureName": "checkout", "appName": "edge-app", "environment": "development", "timestamp": now, "yes": 5, "no": 1},
            {"featureName": "checkout", "appName": "edge-app", "environment": "production", "timestamp": now, "yes": 50, "no": 10}
        ]
    });
    let (status, _) = send(&service, post("/api/client/metrics/bulk", SDK, bulk)).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, usage) = send(
        &service,
        get("/api/admin/client-metrics/features/checkout", ADMIN),
    )
    .await;
    assert_eq!(
        usage["lastHourUsage"],
        json!([{"environment": "development", "timestamp": usage["lastHourUsage"][0]["timestamp"], "yes": 5, "no": 1}])
    );
    let (_, detail) = send(&service, get("/api/admin/metrics/applications/edge-app", ADMIN)).await;
    assert_eq!(detail["instances"][0]["sdkVersion"], "unleash-edge:20.1.0");
}

#[actix_web::test]
async fn every_sdk_route_answers_401_415_and_413_with_the_envelope() {
    let app = TestApp::with_settings(flag_admin::Settings {
        body_limit: 4096,
        ..flag_admin::Settings::default()
    });
    let service = app.service().await;
    let posts = [
        "/api/client/register",
        "/api/client/metrics",
        "/api/client/metrics/bulk",
        "/api/client/metrics/edge",
        "/api/frontend/client/register",
        "/api/frontend/client/metrics",
        "/api/frontend",
        "/ofrep/v1/evaluate/flags",
        "/ofrep/v1/evaluate/flags/f",
        "/api/admin/ui-config/cors",
    ];
    for path in posts {
        let request = actix_web::test::TestRequest::post().uri(path).set_json(json!({}));
        let (status, body) = send(&service, request).await;
        assert_error(status, &body, 401, "AuthenticationRequired");
    }
    let gets = [
        "/api/admin/metrics/applications",
        "/api/admin/metrics/applications/a",
        "/api/admin/metrics/applications/a/overview",
        "/api/admin/metrics/instances/a/environment/development",
        "/api/admin/client-metrics/features/f",
        "/api/admin/client-metrics/features/f/raw",
        "/api/admin/metrics/unknown-flags",
        "/api/admin/ui-config",
        "/api/frontend",
    ];
    for path in gets {
        let (status, body) = send(&service, actix_web::test::TestRequest::get().uri(path)).await;
        assert_error(status, &body, 401, "AuthenticationRequired");
    }
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    for (path, token) in [
        ("/api/client/register", SDK),
        ("/api/client/metrics", SDK),
        ("/api/client/metrics/bulk", SDK),
        ("/api/client/metrics/edge", SDK),
        ("/api/frontend/client/metrics", FRONTEND),
        ("/api/frontend", FRONTEND),
        ("/ofrep/v1/evaluate/flags/f", FRONTEND),
        ("/edge/validate", SDK),
    ] {
        let text = actix_web::test::TestRequest::post()
            .uri(path)
            .insert_header(("Authorization", token))
            .insert_header(("Content-Type", "text/plain"))
            .set_payload("{}");
        let (status, body) = send(&service, text).await;
        assert_error(status, &body, 415, "ContentTypeError");
        let large = actix_web::test::TestRequest::post()
            .uri(path)
            .insert_header(("Authorization", token))
            .insert_header(("Content-Type", "application/json"))
            .set_payload(format!("{{\"appName\": \"{}\"}}", "x".repeat(8192)));
        let (status, body) = send(&service, large).await;
        assert_error(status, &body, 413, "PayloadTooLarge");
    }
}

#[actix_web::test]
async fn names_that_no_database_could_key_are_refused() {
    let app = TestApp::new();
    let service = app.service().await;
    let long = "n".repeat(256);
    for toggles in [
        json!({long.clone(): {"yes": 1, "no": 0}}),
        json!({"a\u{0}b": {"yes": 1, "no": 0}}),
        json!({"f": {"yes": 1, "no": 0, "variants": {long.clone(): 1}}}),
    ] {
        let (status, body) = send(&service, post("/api/client/metrics", SDK, report("web", toggles))).await;
        assert_error(status, &body, 400, "ValidationError");
    }
    let mut registration = registration("web", "i-1");
    registration["appName"] = json!("web\u{0}");
    let (status, body) = send(&service, post("/api/client/register", SDK, registration)).await;
    assert_error(status, &body, 400, "ValidationError");
    let far =
        json!({"appName": "web", "bucket": {"start": 0, "stop": 300_000_000_000_000_i64, "toggles": {}}});
    let (status, body) = send(&service, post("/api/client/metrics", SDK, far)).await;
    assert_error(status, &body, 400, "ValidationError");
    let bulk = json!({"applications": [], "metrics": [{"featureName": long, "appName": "a", "environment": "development",
                      "timestamp": crate::common::time_from_now(chrono::TimeDelta::zero()), "yes": 1, "no": 0}]});
    let (status, body) = send(&service, post("/api/client/metrics/bulk", SDK, bulk)).await;
    assert_error(status, &body, 400, "ValidationError");
    // Nothing was taken, so the views have nothing to show.
    let (_, list) = send(&service, get("/api/admin/metrics/applications", ADMIN)).await;
    assert_eq!(list["total"], 0);
}
