//! Export and import: Unleash's export document imported elsewhere, a flags file applied at start,
//! and a client-features document imported and evaluated as before.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, seed_feature, send};
use actix_web::http::StatusCode;
use serde_json::{Value, json};

#[actix_web::test]
async fn an_export_imported_elsewhere_answers_sdks_the_same() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "parent").await;
    seed_feature(&service, "checkout").await;
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
    let base = "/api/admin/projects/default/features/checkout/environments/development";
    send(
        &service,
        post(
            &format!("{base}/strategies"),
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": {"rollout": "30", "stickiness": "userId", "groupId": "checkout"},
                   "segments": [segment["id"]], "constraints": [{"contextName": "region", "operator": "IN", "values": ["eu"]}]}),
        ),
    )
    .await;
    send(
        &service,
        crate::common::put(
            "/api/admin/projects/default/features/checkout/variants-batch",
            ADMIN,
            json!({"variants": [{"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default"},
                                {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default"}],
                   "environments": ["development"]}),
        ),
    )
    .await;
    send(
        &service,
        post(
            "/api/admin/features/checkout/tags",
            ADMIN,
            json!({"type": "simple", "value": "payments"}),
        ),
    )
    .await;
    send(
        &service,
        post(
            "/api/admin/projects/default/features/checkout/dependencies",
            ADMIN,
            json!({"feature": "parent"}),
        ),
    )
    .await;

    let (status, document) = send(
        &service,
        post(
            "/api/admin/features-batch/export",
            ADMIN,
            json!({"environment": "development", "features": ["parent", "checkout"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{document}");
    let keys: Vec<&String> = document
        .as_object()
        .map(|object| object.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "features",
            "featureStrategies",
            "featureEnvironments",
            "contextFields",
            "featureTags",
            "segments",
            "tagTypes",
            "dependencies",
            "links"
        ]
    );
    assert_eq!(
        document["segments"],
        json!([{"id": segment["id"], "name": "beta"}])
    );
    assert_eq!(document["featureTags"][0]["tagValue"], "payments");

    // Into another project and environment, on another server: the same SDK answers.
    let target = TestApp::new();
    let other = target.service().await;
    send(
        &other,
        post("/api/admin/projects", ADMIN, json!({"name": "shop"})),
    )
    .await;
    send(
        &other,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}),
        ),
    )
    .await;
    let request = json!({"project": "shop", "environment": "production", "data": document});
    let (status, check) = send(
        &other,
        post("/api/admin/features-batch/validate", ADMIN, request.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{check}");
    assert_eq!(check["errors"], json!([]), "{check}");
    // An admin token may validate an import but not make one, as in Unleash; a signed-in user
    // imports, and the flags it adds are theirs.
    let (status, body) = send(
        &other,
        post("/api/admin/features-batch/import", ADMIN, request.clone()),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("You can't use an admin token to import features.")),
        "{body}"
    );
    let importer = crate::common::signed_in(&other, "importer@example.com", 1).await;
    let (status, body) = send(
        &other,
        crate::common::post_as("/api/admin/features-batch/import", &importer, request.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &other,
        crate::common::post_as("/api/admin/features-batch/import", &importer, request),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "importing twice updates: {body}");
    let (_, imported) = send(&other, get("/api/admin/projects/shop/features/checkout", ADMIN)).await;
    assert_eq!(
        imported["createdBy"]["name"], "importer@example.com",
        "{imported}"
    );

    let strip = |mut answer: Value| {
        for feature in answer["features"].as_array_mut().into_iter().flatten() {
            feature["project"] = Value::Null;
            for strategy in feature["strategies"].as_array_mut().into_iter().flatten() {
                strategy["id"] = Value::Null;
                strategy["sortOrder"] = Value::Null;
            }
        }
        answer["features"].clone()
    };
    let (_, source) = send(&service, get("/api/client/features", crate::common::SDK)).await;
    let production_sdk = "*:production.target-production-sdk";
    target
        .store_token(production_sdk, "client", "production", &["*"])
        .map_err(|error| error.to_string())
        .unwrap_or_else(|error| panic!("storing a token: {error}"));
    let (status, copied) = send(&other, get("/api/client/features", production_sdk)).await;
    assert_eq!(status, StatusCode::OK, "{copied}");
    assert_eq!(strip(copied), strip(source));

    // Flags of another project, and unknown strategies, are refused whole.
    let clash = json!({"project": "default", "environment": "development", "data": document});
    let (_, check) = send(
        &other,
        post("/api/admin/features-batch/validate", ADMIN, clash.clone()),
    )
    .await;
    assert_eq!(
        check["errors"][0]["affectedItems"],
        json!(["checkout (in project shop)", "parent (in project shop)"])
    );
    let (status, body) = send(
        &other,
        crate::common::post_as("/api/admin/features-batch/import", &importer, clash),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
    assert_eq!(
        body["message"], "These features exist already in other projects: checkout, parent",
        "{body}"
    );
    // As in Unleash, an unknown environment exports the flags without their state there, and
    // a tag selects the flags that carry it.
    let (status, body) = send(
        &other,
        post(
            "/api/admin/features-batch/export",
            ADMIN,
            json!({"environment": "nowhere"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["featureStrategies"], json!([]), "{body}");
    assert!(
        body["features"]
            .as_array()
            .is_some_and(|features| !features.is_empty()),
        "{body}"
    );
    let (status, body) = send(
        &other,
        post(
            "/api/admin/features-batch/export",
            ADMIN,
            json!({"environment": "production", "tag": "no-such-tag"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["features"], json!([]), "{body}");
    let (status, body) = send(
        &other,
        crate::common::post_as(
            "/api/admin/features-batch/import",
            &importer,
            json!({"project": "shop", "environment": "production", "data": {}}),
        ),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn a_flags_file_applied_at_start_is_applied_once() {
    let app = TestApp::new();
    let document = json!({
        "features": [{"name": "from-file", "type": "release", "project": "default"}],
        "featureStrategies": [{"name": "default", "featureName": "from-file", "parameters": {}}],
        "featureEnvironments": [{"enabled": true, "featureName": "from-file", "environment": "development", "variants": []}],
        "tagTypes": []
    });
    let bytes = serde_json::to_vec(&document).unwrap_or_default();
    let first = flag_admin::app::seeding::import_file(&app.store, "default", "development", &bytes);
    assert!(
        matches!(first, Ok(flag_admin::app::seeding::FileImport::Export)),
        "{first:?}"
    );
    let again = flag_admin::app::seeding::import_file(&app.store, "default", "development", &bytes);
    assert!(
        matches!(again, Ok(flag_admin::app::seeding::FileImport::Unchanged)),
        "{again:?}"
    );
    let service = app.service().await;
    let (_, client) = send(&service, get("/api/client/features", crate::common::SDK)).await;
    assert_eq!(client["features"][0]["name"], "from-file");
    assert_eq!(client["features"][0]["enabled"], true);

    // A client-features document works too, and a file that is neither is refused.
    let client_document = json!({"version": 2, "features": [{"name": "sdk-shaped", "enabled": true, "strategies": [{"name": "default"}]}]});
    let bytes = serde_json::to_vec(&client_document).unwrap_or_default();
    let imported = flag_admin::app::seeding::import_file(&app.store, "default", "development", &bytes);
    assert!(
        matches!(
            imported,
            Ok(flag_admin::app::seeding::FileImport::ClientFeatures(_))
        ),
        "{imported:?}"
    );
    let refused = flag_admin::app::seeding::import_file(&app.store, "default", "development", b"not json");
    assert!(refused.is_err());
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
