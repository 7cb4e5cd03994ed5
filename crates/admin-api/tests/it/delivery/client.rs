//! The client API SDKs poll: the token's environment, `ETag`s, segments inlined for old SDKs and
//! separate for new ones, and its answers, pinned.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, seed_feature, send};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

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

// The answers, pinned.

/// Attaches a segment to `f`'s development strategy, so the client API has one to show.
async fn add_segment<S, B>(service: &S)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let segment = json!({"name": "beta", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]});
    let (status, segment) = send(service, post("/api/admin/segments", ADMIN, segment)).await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    let strategy = json!({
        "name": "flexibleRollout",
        "parameters": {"rollout": "50", "stickiness": "default", "groupId": "f"},
        "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"]}],
        "segments": [segment["id"]]
    });
    let (status, body) = send(
        service,
        post(
            "/api/admin/projects/default/features/f/environments/development/strategies",
            ADMIN,
            strategy,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[actix_web::test]
async fn client_features_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    add_segment(&service).await;
    let response = test::call_service(
        &service,
        get("/api/client/features?namePrefix=f", SDK).to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned)
        .unwrap_or_default();
    let body: Value = test::read_body_json(response).await;
    assert_eq!(body["meta"]["etag"], json!(etag));
    insta::assert_json_snapshot!("client_features_inlined", body, {
        ".meta.revisionId" => "[revision]",
        ".meta.etag" => "[etag]",
    });

    let separate = get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "5.2.0"));
    let (status, body) = send(&service, separate).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!("client_features_separate_segments", body, {
        ".meta.revisionId" => "[revision]",
        ".meta.etag" => "[etag]",
        ".segments[].id" => "[id]",
        ".features[].strategies[].segments[]" => "[id]",
    });

    let cached =
        get("/api/client/features?namePrefix=f", SDK).insert_header(("If-None-Match", etag.as_str()));
    let response = test::call_service(&service, cached.to_request()).await;
    let status = response.status().as_u16();
    let same_etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        == Some(etag.as_str());
    let body = test::read_body(response).await;
    insta::assert_json_snapshot!(
        "client_features_not_modified",
        json!({"status": status, "sameETag": same_etag, "bodyBytes": body.len()})
    );
}

#[actix_web::test]
async fn client_features_error_with_a_bad_spec_header() {
    let app = TestApp::new();
    let service = app.service().await;
    let request = get("/api/client/features", SDK).insert_header(("Unleash-Client-Spec", "soon"));
    let (status, body) = send(&service, request).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn client_feature_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    add_segment(&service).await;
    let (status, body) = send(&service, get("/api/client/features/f", SDK)).await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn client_feature_error_when_unknown() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get("/api/client/features/missing", SDK)).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}
