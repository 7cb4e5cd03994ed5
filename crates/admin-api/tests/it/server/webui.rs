//! What Unleash's own web UI reads first: who is signed in, the UI configuration, and a flag's
//! page.

use crate::common::{ADMIN, TestApp, create_invite, get, login, post, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

const PASSWORD: &str = "Corr3ct-Horse!";

#[actix_web::test]
async fn the_signed_in_user_their_permissions_and_closed_dialogs() {
    let app = TestApp::new();
    let service = app.service().await;

    // Nobody signed in: 401 with where and how to log in, which the UI reads.
    let (status, body) = send(&service, test::TestRequest::get().uri("/api/admin/user")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["name"], "AuthenticationRequired");
    assert_eq!(body["path"], "/auth/simple/login");
    assert_eq!(body["type"], "password");
    assert_eq!(body["defaultHidden"], false);
    assert_eq!(
        body["details"],
        json!([{"message": body["message"].clone()}]),
        "Unleash repeats the message as the one detail: {body}"
    );
    let (status, body) = send(&service, get("/api/admin/projects", "not-a-token")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["details"][0]["message"], body["message"], "{body}");

    let token = create_invite(&service).await;
    let secret = token["secret"].as_str().unwrap_or_default().to_owned();
    let (status, user) = send(
        &service,
        test::TestRequest::post()
            .uri(&format!("/invite/{secret}/signup"))
            .set_json(json!({"email": "viewer@example.com", "name": "Vi", "password": PASSWORD})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{user}");
    let cookie = login(&service, "viewer@example.com", PASSWORD).await;
    let (status, me) = send(
        &service,
        test::TestRequest::get()
            .uri("/api/admin/user")
            .cookie(cookie.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["user"]["email"], "viewer@example.com");
    assert!(me["user"]["id"].as_i64().is_some_and(|id| id > 0));
    assert_eq!(me["permissions"], json!([]), "a Viewer may change nothing");
    assert_eq!(me["feedback"], json!([]));
    assert_eq!(me["splash"], json!({}));

    let (status, _) = send(
        &service,
        test::TestRequest::post()
            .uri("/api/admin/splash/personalDashboardKeyConcepts")
            .cookie(cookie.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, me) = send(
        &service,
        test::TestRequest::get()
            .uri("/api/admin/user")
            .cookie(cookie.clone()),
    )
    .await;
    assert_eq!(me["splash"], json!({"personalDashboardKeyConcepts": true}));
    let (status, profile) = send(
        &service,
        test::TestRequest::get()
            .uri("/api/admin/user/profile")
            .cookie(cookie),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{profile}");
    assert_eq!(profile["rootRole"]["name"], "Viewer");
    assert_eq!(profile["canChangePassword"], true);

    let (_, me) = send(&service, get("/api/admin/user", ADMIN)).await;
    assert_eq!(me["permissions"], json!([{"permission": "ADMIN"}]));
    let (status, body) = send(&service, get("/api/admin/user/profile", ADMIN)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // A wrong password is told apart from a missing login.
    let (status, body) = send(
        &service,
        test::TestRequest::post()
            .uri("/auth/simple/login")
            .set_json(json!({"username": "viewer@example.com", "password": "wrong"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["name"], "PasswordMismatch");
}

#[actix_web::test]
async fn the_ui_configuration_keeps_the_ui_in_its_open_source_mode() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, config) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{config}");
    assert_eq!(config["versionInfo"]["current"]["enterprise"], "");
    assert_eq!(config["environment"], "Open Source");
    assert_eq!(config["resourceLimits"]["featureEnvironmentStrategies"], 30);
    assert!(config["flags"].is_object());
    assert!(config.get("links").is_none(), "the UI keeps its own links");
}

#[actix_web::test]
async fn a_flag_page_reads_parents_children_lifecycle_and_creator() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "child").await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/child/dependencies",
            ADMIN,
            json!({"feature": "parent", "variants": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, parent) = send(
        &service,
        get("/api/admin/projects/default/features/parent", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{parent}");
    let keys: Vec<&String> = parent
        .as_object()
        .map(|object| object.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "environments",
            "name",
            "impressionData",
            "description",
            "project",
            "stale",
            "createdAt",
            "createdBy",
            "type",
            "archived",
            "dependencies",
            "children",
            "lifecycle",
            "links",
            "collaborators"
        ]
    );
    assert_eq!(parent["children"], json!(["child"]));
    assert_eq!(parent["lifecycle"]["stage"], "initial");
    assert_eq!(parent["createdBy"]["id"], -42);
    assert_eq!(parent["environments"][0]["type"], "development");
    assert!(parent["environments"][0].get("variants").is_none());
    let (_, child) = send(
        &service,
        get(
            "/api/admin/projects/default/features/child?variantEnvironments=true",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(
        child["dependencies"],
        json!([{"feature": "parent", "enabled": true, "variants": []}])
    );
    assert_eq!(child["environments"][1]["variants"], Value::Array(Vec::new()));
    assert_eq!(child["environments"][1]["strategies"][0]["segments"], json!([]));

    // An archived flag has no page.
    send(
        &service,
        crate::common::delete("/api/admin/projects/default/features/child", ADMIN),
    )
    .await;
    let (status, body) = send(&service, get("/api/admin/projects/default/features/child", ADMIN)).await;
    crate::common::assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn lifecycles_follow_writes_and_usage_and_can_be_completed() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "rolled").await;
    let base = "/api/admin/projects/default/features/rolled";
    let (_, stages) = send(&service, get(&format!("{base}/lifecycle"), ADMIN)).await;
    assert_eq!(stages[0]["stage"], "initial", "{stages}");

    // Usage in production, where the flag is on, makes it pre-live and live.
    let (status, _) = send(
        &service,
        post(
            "/api/client/metrics",
            crate::common::SDK,
            json!({"appName": "shop", "instanceId": "i1", "environment": "production",
                   "bucket": {"start": crate::common::time_from_now(chrono::TimeDelta::minutes(-1)), "stop": crate::common::time_from_now(chrono::TimeDelta::zero()),
                              "toggles": {"rolled": {"yes": 3, "no": 1}}}}),
        ),
    )
    .await;
    assert!(status.is_success(), "{status}");
    app.state.app.flush_usage().await.ok();
    let (_, stages) = send(&service, get(&format!("{base}/lifecycle"), ADMIN)).await;
    let names: Vec<&str> = stages
        .as_array()
        .map(|stages| {
            stages
                .iter()
                .filter_map(|stage| stage["stage"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, ["initial", "pre-live"], "{stages}");

    let (status, body) = send(
        &service,
        post(
            &format!("{base}/lifecycle/complete"),
            ADMIN,
            json!({"status": "kept", "statusValue": "on"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, flag) = send(&service, get(base, ADMIN)).await;
    assert_eq!(flag["lifecycle"]["stage"], "completed");
    assert_eq!(flag["lifecycle"]["status"], "kept");
    let (_, counts) = send(&service, get("/api/admin/lifecycle/count", ADMIN)).await;
    assert_eq!(counts["completed"], 1, "{counts}");
    let (status, body) = send(
        &service,
        post(
            &format!("{base}/lifecycle/complete"),
            ADMIN,
            json!({"status": "maybe"}),
        ),
    )
    .await;
    crate::common::assert_error(status, &body, 400, "ValidationError");
    let (status, _) = send(
        &service,
        post(&format!("{base}/lifecycle/uncomplete"), ADMIN, json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, flag) = send(&service, get(base, ADMIN)).await;
    assert_ne!(flag["lifecycle"]["stage"], "completed");
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/nope/lifecycle/complete",
            ADMIN,
            json!({"status": "discarded"}),
        ),
    )
    .await;
    crate::common::assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn projects_are_listed_and_overviewed_as_the_ui_expects() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "first").await;
    send(
        &service,
        crate::common::patch(
            "/api/admin/projects/default/features/first",
            ADMIN,
            json!([{"op": "replace", "path": "/stale", "value": true}]),
        ),
    )
    .await;
    seed_feature(&service, "second").await;
    let (status, listed) = send(&service, get("/api/admin/projects", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let project = &listed["projects"][0];
    assert_eq!(project["id"], "default");
    assert_eq!(project["featureCount"], 2);
    assert_eq!(project["health"], 50, "one of two flags is stale");
    assert_eq!(project["archivedAt"], Value::Null);
    assert_eq!(project["owners"], json!([{"ownerType": "system"}]));

    let (status, overview) = send(&service, get("/api/admin/projects/default/overview", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{overview}");
    // As Unleash 8 decides it: the first flag created, until an SDK uses one of the
    // project's flags, switched on or not; then onboarded in the list and the overview alike.
    assert_eq!(
        overview["onboardingStatus"],
        json!({"status": "first-flag-created", "feature": "first"}),
        "{overview}"
    );
    let (_, empty) = send(
        &service,
        post(
            "/api/admin/projects",
            ADMIN,
            json!({"id": "empty", "name": "Empty"}),
        ),
    )
    .await;
    let (_, listed) = send(&service, get("/api/admin/projects", ADMIN)).await;
    let empty_item = listed["projects"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|project| project["id"] == "empty")
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        empty_item["onboardingStatus"],
        json!({"status": "onboarding-started"}),
        "{empty}"
    );
    assert_eq!(
        overview["environments"],
        json!([{"environment": "development"}, {"environment": "production"}])
    );
    assert_eq!(
        overview["featureTypeCounts"],
        json!([{"type": "release", "count": 2}])
    );
    let (status, body) = send(&service, get("/api/admin/projects/nope/overview", ADMIN)).await;
    crate::common::assert_error(status, &body, 404, "NotFoundError");

    let (status, project_status) = send(&service, get("/api/admin/projects/default/status", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{project_status}");
    assert_eq!(project_status["staleFlags"]["total"], 1);
    assert_eq!(project_status["lifecycleSummary"]["initial"]["currentFlags"], 2);
    assert!(
        project_status["activityCountByDate"][0]["count"]
            .as_u64()
            .is_some_and(|count| count > 0)
    );

    let (_, dashboard) = send(&service, get("/api/admin/personal-dashboard", ADMIN)).await;
    assert_eq!(
        dashboard["flags"].as_array().map(Vec::len),
        Some(2),
        "{dashboard}"
    );
    let (status, detail) = send(&service, get("/api/admin/personal-dashboard/default", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(detail["insights"]["totalFlags"], 2);
    assert_eq!(detail["roles"], json!([]));
    // The newest events told as the event log tells them, with links, as Unleash's dashboard.
    assert!(
        detail["latestEvents"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|event| event["summary"].as_str().is_some_and(|summary| summary
                .contains("created **[second](http://localhost:4242/projects/default/features/second)**"))),
        "{detail}"
    );
    let (status, body) = send(&service, get("/api/admin/personal-dashboard/nope", ADMIN)).await;
    crate::common::assert_error(status, &body, 404, "NotFoundError");
    let (_, creators) = send(&service, get("/api/admin/projects/default/flag-creators", ADMIN)).await;
    assert_eq!(creators, json!([]), "admin tokens are no user");

    // Once an SDK uses one of its flags, the project is onboarded.
    let (status, _) = send(
        &service,
        post(
            "/api/client/metrics",
            crate::common::SDK,
            json!({"appName": "shop", "instanceId": "i1",
                   "bucket": {"start": crate::common::time_from_now(chrono::TimeDelta::minutes(-1)),
                              "stop": crate::common::time_from_now(chrono::TimeDelta::zero()),
                              "toggles": {"second": {"yes": 0, "no": 2}}}}),
        ),
    )
    .await;
    assert!(status.is_success(), "{status}");
    app.state.app.flush_usage().await.ok();
    let (_, overview) = send(&service, get("/api/admin/projects/default/overview", ADMIN)).await;
    assert_eq!(
        overview["onboardingStatus"],
        json!({"status": "onboarded"}),
        "{overview}"
    );
}

#[actix_web::test]
async fn constraints_are_checked_one_at_a_time() {
    let app = TestApp::new();
    let service = app.service().await;
    let validate = |constraint: Value| post("/api/admin/constraints/validate", ADMIN, constraint);
    let (status, body) = send(
        &service,
        validate(json!({"contextName": "userId", "operator": "IN", "values": ["1"]})),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    for bad in [
        json!({"contextName": "userId", "operator": "NOPE", "values": ["1"]}),
        json!({"contextName": "version", "operator": "SEMVER_EQ", "value": "one"}),
        json!({"operator": "IN", "values": ["1"]}),
    ] {
        let (status, body) = send(&service, validate(bad)).await;
        crate::common::assert_error(status, &body, 400, "ValidationError");
    }
}

#[actix_web::test]
async fn outdated_sdks_and_a_projects_applications_are_listed() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "used").await;
    for (instance, sdk) in [
        ("old-1", "unleash-client-node:4.1.0"),
        ("new-1", "unleash-client-node:6.0.0"),
    ] {
        let (status, body) = send(
            &service,
            post(
                "/api/client/register",
                crate::common::SDK,
                json!({"appName": format!("app-{instance}"), "instanceId": instance, "sdkVersion": sdk,
                       "strategies": ["default"], "started": crate::common::time_from_now(chrono::TimeDelta::hours(-1)), "interval": 15000}),
            ),
        )
        .await;
        assert!(status.is_success(), "{body}");
        send(
            &service,
            post(
                "/api/client/metrics",
                crate::common::SDK,
                json!({"appName": format!("app-{instance}"), "instanceId": instance,
                       "bucket": {"start": crate::common::time_from_now(chrono::TimeDelta::minutes(-1)), "stop": crate::common::time_from_now(chrono::TimeDelta::zero()),
                                  "toggles": {"used": {"yes": 1, "no": 0}}}}),
            ),
        )
        .await;
    }
    app.state.app.flush_usage().await.ok();
    let (status, outdated) = send(&service, get("/api/admin/metrics/sdks/outdated", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{outdated}");
    assert_eq!(
        outdated,
        json!({"sdks": [{"sdkVersion": "unleash-client-node:4.1.0", "applications": ["app-old-1"]}]})
    );
    let (_, of_project) = send(&service, get("/api/admin/projects/default/sdks/outdated", ADMIN)).await;
    assert_eq!(of_project, outdated);
    let (status, applications) = send(&service, get("/api/admin/projects/default/applications", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{applications}");
    assert_eq!(applications["total"], 2);
    assert_eq!(applications["applications"][1]["name"], "app-old-1");
    assert_eq!(
        applications["applications"][1]["sdks"],
        json!([{"name": "unleash-client-node", "versions": ["4.1.0"]}])
    );
    let (status, body) = send(
        &service,
        get(
            "/api/admin/projects/default/applications?sortOrder=sideways",
            ADMIN,
        ),
    )
    .await;
    crate::common::assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, get("/api/admin/projects/nope/applications", ADMIN)).await;
    crate::common::assert_error(status, &body, 404, "NotFoundError");
}
