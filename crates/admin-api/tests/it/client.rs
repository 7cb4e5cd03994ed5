//! The client API SDKs poll, and importing a client-features document.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, seed_feature, send};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::json;

const CLIENT: &str = "default:production.client-secret";

fn client_token(app: &TestApp) -> Result<(), flag_store::StoreError> {
    app.store_token(CLIENT, "client", "production", &["default"])
}

#[actix_web::test]
async fn sdks_get_the_environment_of_their_token_with_an_etag() -> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    client_token(&app)?;
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let strategies = "/api/admin/projects/default/features/f/environments/production/strategies";
    let (status, _) = send(
        &service,
        post(strategies, ADMIN, json!({"name": "default", "disabled": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let response = test::call_service(
        &service,
        get("/api/client/features?environment=development", CLIENT).to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response
        .headers()
        .get("ETag")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_default();
    let body: serde_json::Value = test::read_body_json(response).await;
    // The token's environment wins over the query string.
    assert_eq!(body["query"]["environment"], "production");
    assert_eq!(body["version"], 2);
    let feature = &body["features"][0];
    assert_eq!(feature["name"], "f");
    assert_eq!(feature["enabled"], true);
    // Disabled strategies are not sent, and strategies carry no id or title.
    assert_eq!(feature["strategies"].as_array().map(Vec::len), Some(1));
    assert!(feature["strategies"][0].get("id").is_none());
    assert_eq!(body["meta"]["etag"], json!(etag));

    let cached = get("/api/client/features", CLIENT).insert_header(("If-None-Match", etag.as_str()));
    let (status, body) = send(&service, cached).await;
    assert_eq!(
        (status, body),
        (StatusCode::NOT_MODIFIED, serde_json::Value::Null)
    );

    // A write changes the revision, so the old ETag no longer matches.
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/default/features/f/environments/production/off",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let stale = get("/api/client/features", CLIENT).insert_header(("If-None-Match", etag.as_str()));
    let (status, body) = send(&service, stale).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["features"][0]["enabled"], false);

    let (status, one) = send(&service, get("/api/client/features/f", CLIENT)).await;
    assert_eq!((status, one["name"].clone()), (StatusCode::OK, json!("f")));
    let (status, body) = send(&service, get("/api/client/features/missing", CLIENT)).await;
    assert_error(status, &body, 404, "NotFoundError");
    Ok(())
}

#[actix_web::test]
async fn segments_are_inlined_for_old_sdks_and_separate_for_new_ones() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let (status, segment) = send(
        &service,
        post("/api/admin/segments", ADMIN, json!({"name": "beta", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    let strategies = "/api/admin/projects/default/features/f/environments/development/strategies";
    let (status, body) = send(
        &service,
        post(
            strategies,
            ADMIN,
            json!({"name": "default", "segments": [segment["id"]]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let (_, old) = send(&service, get("/api/client/features", SDK)).await;
    assert!(old.get("segments").is_none());
    assert_eq!(
        old["features"][0]["strategies"][1]["constraints"][0]["contextName"],
        "plan"
    );
    let new = get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "5.2.0"));
    let (_, new) = send(&service, new).await;
    assert_eq!(new["segments"][0]["name"], "beta");
    assert_eq!(
        new["features"][0]["strategies"][1]["segments"],
        json!([segment["id"]])
    );
    let bad = get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "soon"));
    let (status, body) = send(&service, bad).await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn the_client_api_needs_a_token() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, test::TestRequest::get().uri("/api/client/features")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    let (status, body) = send(&service, get("/api/client/features", "*:*.unknown")).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
}

#[actix_web::test]
async fn an_imported_document_evaluates_as_it_did_before() -> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/flags.json"
    ))?;
    let document: flag_eval::ClientFeatures = serde_json::from_str(&text)?;
    let report = app.import("production", &document)?;
    assert_eq!((report.created, report.segments), (2, 1));

    let service = app.service().await;
    let (engine, _) = flag_eval::Engine::compile(&document);
    for user in ["1", "2", "3", "4", "qa-1"] {
        let context =
            json!({"appName": "web", "userId": user, "properties": {"plan": "pro", "region": "eu-west"}});
        let (status, body) = send(
            &service,
            post(
                "/api/admin/playground",
                ADMIN,
                json!({"environment": "production", "context": context}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let expected = engine.is_enabled(
            "checkout.new",
            &flag_eval::Context::for_user(user)
                .with_property("plan", "pro")
                .with_property("region", "eu-west"),
        );
        let checkout = body["features"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["name"] == "checkout.new"))
            .cloned();
        assert_eq!(
            checkout.map(|f| f["isEnabled"].clone()),
            Some(json!(expected)),
            "user {user}"
        );
    }
    Ok(())
}

#[actix_web::test]
async fn an_import_keeps_its_document_and_stores_variants_as_unleash_does()
-> Result<(), Box<dyn std::error::Error>> {
    // A flag that is on with no strategy stays so (no default rollout is added), and a variant
    // without a stickiness is stored sticky on `default`, as the admin API stores it.
    let app = TestApp::new();
    let document: flag_eval::ClientFeatures = serde_json::from_value(json!({"version": 2, "features": [
        {"name": "bare", "enabled": true, "strategies": [],
         "variants": [{"name": "a", "weight": 1000}]}]}))?;
    app.import("development", &document)?;
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/client/features", SDK)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let bare = &body["features"][0];
    assert_eq!(bare["enabled"], true, "{body}");
    assert_eq!(bare["strategies"], json!([]), "{body}");
    assert_eq!(bare["variants"][0]["stickiness"], "default", "{body}");
    Ok(())
}
