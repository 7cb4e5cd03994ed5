//! OpenFeature's Remote Evaluation Protocol: each status of both operations, and OpenFeature's
//! own Rust SDK with its OFREP provider against the real server.

use crate::common::{ADMIN, SDK, TestApp, assert_error, get, post, send};
use actix_web::http::StatusCode;
use actix_web::test as actix_test;
use serde_json::{Value, json};

const FRONTEND: &str = "*:development.ofrep-frontend-secret";

/// `everyone` on, `pro-only` on for `plan=pro` with the variant `gold` (a JSON payload), and
/// `switched-off` off, in development, through the admin API of `service`.
async fn demo_flags<S, B>(service: &S)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let base = "/api/admin/projects/default/features";
    for name in ["everyone", "pro-only", "switched-off"] {
        let (status, body) = send(service, post(base, ADMIN, json!({"name": name}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let strategies = |name: &str| format!("{base}/{name}/environments/development/strategies");
    let pro = json!({"name": "default", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
        "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default",
                      "payload": {"type": "json", "value": "{\"tier\":1}"}}]});
    for (name, strategy) in [
        ("everyone", json!({"name": "default"})),
        ("pro-only", pro),
        ("switched-off", json!({"name": "default"})),
    ] {
        let (status, body) = send(service, post(&strategies(name), ADMIN, strategy)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    for name in ["everyone", "pro-only"] {
        let on = format!("{base}/{name}/environments/development/on");
        let (status, _) = send(service, post(&on, ADMIN, json!({}))).await;
        assert_eq!(status, StatusCode::OK);
    }
}

fn evaluate(key: &str, body: Value) -> actix_test::TestRequest {
    post(&format!("/ofrep/v1/evaluate/flags/{key}"), FRONTEND, body)
}

#[actix_web::test]
async fn one_flag_is_evaluated_with_ofrep_reasons_and_errors() {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    demo_flags(&service).await;

    let (status, body) = send(
        &service,
        evaluate("everyone", json!({"context": {"targetingKey": "u1"}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"key": "everyone", "value": true, "reason": "TARGETING_MATCH", "variant": "enabled", "metadata": {"featureEnabled": true}})
    );
    let (_, body) = send(
        &service,
        evaluate("switched-off", json!({"context": {"targetingKey": "u1"}})),
    )
    .await;
    assert_eq!(
        body,
        json!({"key": "switched-off", "value": false, "reason": "DISABLED", "variant": "disabled", "metadata": {"featureEnabled": false}})
    );
    let (_, body) = send(
        &service,
        evaluate(
            "pro-only",
            json!({"context": {"targetingKey": "u1", "plan": "pro"}}),
        ),
    )
    .await;
    assert_eq!(
        body,
        json!({"key": "pro-only", "value": {"tier": 1}, "reason": "SPLIT", "variant": "gold", "metadata": {"featureEnabled": true}})
    );
    let (_, body) = send(
        &service,
        evaluate(
            "pro-only",
            json!({"context": {"targetingKey": "u1", "plan": "free"}}),
        ),
    )
    .await;
    assert_eq!(
        (body["value"].clone(), body["reason"].clone()),
        (json!(false), json!("TARGETING_MATCH"))
    );

    let (status, body) = send(
        &service,
        evaluate("missing", json!({"context": {"targetingKey": "u1"}})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(
        (body["key"].clone(), body["errorCode"].clone()),
        (json!("missing"), json!("FLAG_NOT_FOUND"))
    );
    // An Unleash context needs no user: without a targeting key, a flag that is on is on, and
    // the other fields still take part, as the frontend API evaluates them.
    for (key, context, field, expected) in [
        ("everyone", json!({"plan": "pro"}), "value", json!(true)),
        ("pro-only", json!({"plan": "pro"}), "variant", json!("gold")),
        ("everyone", json!({}), "value", json!(true)),
    ] {
        let (status, body) = send(&service, evaluate(key, json!({"context": context}))).await;
        assert_eq!(
            (status, &body[field]),
            (StatusCode::OK, &expected),
            "{key}: {body}"
        );
    }
    let (status, body) = send(
        &service,
        evaluate("everyone", json!({"context": {"targetingKey": {"id": 1}}})),
    )
    .await;
    assert_eq!(
        (status, body["errorCode"].clone()),
        (StatusCode::BAD_REQUEST, json!("INVALID_CONTEXT"))
    );
    let (status, body) = send(
        &service,
        evaluate("everyone", json!({"context": {"targetingKey": "u", "plan": [1]}})),
    )
    .await;
    assert_eq!(
        (status, body["errorCode"].clone()),
        (StatusCode::BAD_REQUEST, json!("INVALID_CONTEXT"))
    );
    let (status, body) = send(
        &service,
        actix_test::TestRequest::post()
            .uri("/ofrep/v1/evaluate/flags/everyone")
            .insert_header(("Authorization", FRONTEND))
            .insert_header(("Content-Type", "application/json"))
            .set_payload("{not json"),
    )
    .await;
    assert_eq!(
        (status, body["errorCode"].clone()),
        (StatusCode::BAD_REQUEST, json!("PARSE_ERROR"))
    );

    // The frontend API's token rules, with `Bearer` or `X-API-Key`.
    let bearer = format!("Bearer {FRONTEND}");
    let (status, _) = send(
        &service,
        post(
            "/ofrep/v1/evaluate/flags/everyone",
            &bearer,
            json!({"context": {"targetingKey": "u"}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let with_key = actix_test::TestRequest::post()
        .uri("/ofrep/v1/evaluate/flags/everyone")
        .insert_header(("X-API-Key", FRONTEND))
        .set_json(json!({"context": {"targetingKey": "u"}}));
    let (status, _) = send(&service, with_key).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = send(
        &service,
        post(
            "/ofrep/v1/evaluate/flags/everyone",
            SDK,
            json!({"context": {"targetingKey": "u"}}),
        ),
    )
    .await;
    assert_error(status, &body, 403, "NoAccessError");
    let (status, body) = send(
        &service,
        actix_test::TestRequest::post()
            .uri("/ofrep/v1/evaluate/flags/everyone")
            .set_json(json!({"context": {"targetingKey": "u"}})),
    )
    .await;
    assert_error(status, &body, 401, "AuthenticationRequired");
}

#[actix_web::test]
async fn every_flag_is_evaluated_in_bulk_with_an_etag() {
    let app = TestApp::new();
    app.store_token(FRONTEND, "frontend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    let service = app.service().await;
    demo_flags(&service).await;
    let bulk = |context: Value| post("/ofrep/v1/evaluate/flags", FRONTEND, json!({"context": context}));
    let response = actix_test::call_service(
        &service,
        bulk(json!({"targetingKey": "u1", "plan": "pro"})).to_request(),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    // A strong tag: OFREP's bulk answer is compared byte for byte.
    assert!(
        etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
        "{etag}"
    );
    let body: Value = actix_test::read_body_json(response).await;
    let values: Vec<(Value, Value)> = body["flags"]
        .as_array()
        .map(|flags| {
            flags
                .iter()
                .map(|flag| (flag["key"].clone(), flag["value"].clone()))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        values,
        vec![
            (json!("everyone"), json!(true)),
            (json!("pro-only"), json!({"tier": 1})),
            (json!("switched-off"), json!(false))
        ]
    );
    let (status, body) = send(
        &service,
        bulk(json!({"targetingKey": "u1", "plan": "pro"})).insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!((status, body), (StatusCode::NOT_MODIFIED, Value::Null));
    let (status, _) = send(
        &service,
        bulk(json!({"targetingKey": "u1", "plan": "free"})).insert_header(("If-None-Match", etag.as_str())),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // Without a targeting key every flag is evaluated all the same, as the frontend API does.
    let (status, body) = send(&service, bulk(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, frontend) = send(&service, get("/api/frontend", FRONTEND)).await;
    let enabled = |flags: &Value| -> Vec<String> {
        flags
            .as_array()
            .into_iter()
            .flatten()
            .filter(|flag| flag["value"] != json!(false) && flag["enabled"] != json!(false))
            .filter_map(|flag| Some(flag["key"].as_str().or(flag["name"].as_str())?.to_owned()))
            .collect()
    };
    assert_eq!(
        enabled(&body["flags"]),
        enabled(&frontend["toggles"]),
        "{body} {frontend}"
    );
    let (status, body) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}
