//! A flag's variants: the batch that writes them to several environments and echoes the request,
//! the per-environment overwrite and JSON Patch that Unleash's web UI edits them with, refusals
//! included, and the answers, pinned.

use actix_web::http::StatusCode;
use flag_store::queries;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, PRODUCTION_ADMIN, TestApp, assert_error, get, patch, post, put, seed_feature, send,
};

const BASE: &str = "/api/admin/projects/default/features/colors";

fn names_and_weights(answer: &Value) -> Vec<(String, i64)> {
    answer["variants"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|variant| {
            (
                variant["name"].as_str().unwrap_or_default().to_owned(),
                variant["weight"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

#[actix_web::test]
async fn environment_variants_are_patched_and_overwritten_as_unleash_does() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "colors").await;
    let development = format!("{BASE}/environments/development/variants");
    let production = format!("{BASE}/environments/production/variants");
    let add_blue = json!([{"op": "add", "path": "/0",
        "value": {"name": "blue", "weightType": "variable", "weight": 1000, "stickiness": "default"}}]);

    // Environment variants are deprecated: a feature without any takes none this way.
    for request in [
        patch(&development, ADMIN, add_blue.clone()),
        put(&development, ADMIN, json!([{"name": "blue", "weight": 1000}])),
    ] {
        let (status, answer) = send(&service, request).await;
        assert_error(status, &answer, 403, "InvalidOperationError");
        assert_eq!(
            answer["message"],
            "Environment variants deprecated for feature: colors. Use strategy variants instead."
        );
    }

    // Once it has some (here through variants-batch), the web UI's patches apply.
    let (status, answer) = send(
        &service,
        put(
            &format!("{BASE}/variants-batch"),
            ADMIN,
            json!({"environments": ["development"], "variants": [{"name": "red", "weight": 1000}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let (status, answer) = send(&service, patch(&development, ADMIN, add_blue)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["version"], 1);
    assert_eq!(
        names_and_weights(&answer),
        [("blue".to_owned(), 500), ("red".to_owned(), 500)],
        "sorted by name, the weight shared: {answer}"
    );
    let (_, stored) = send(&service, get(&development, ADMIN)).await;
    assert_eq!(stored["variants"], answer["variants"]);
    // The web UI diffs against the flag's read, so the patch's indices and keys must be those.
    let (_, feature) = send(&service, get(&format!("{BASE}?variantEnvironments=true"), ADMIN)).await;
    let in_read = feature["environments"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|environment| environment["name"] == "development")
        .map(|environment| environment["variants"].clone())
        .unwrap_or_default();
    assert_eq!(in_read, stored["variants"], "{feature}");
    let (status, answer) = send(
        &service,
        patch(
            &development,
            ADMIN,
            json!([{"op": "replace", "path": "/1/weightType", "value": "fix"},
                   {"op": "replace", "path": "/1/weight", "value": 300}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        names_and_weights(&answer),
        [("blue".to_owned(), 700), ("red".to_owned(), 300)]
    );

    // Another environment of the same feature may take them too.
    let (status, answer) = send(
        &service,
        put(
            &production,
            ADMIN,
            json!([{"name": "green", "weight": 1, "payload": {"type": "string", "value": "#0f0"}}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(names_and_weights(&answer), [("green".to_owned(), 1000)]);
    assert_eq!(answer["variants"][0]["stickiness"], "default");

    // Refusals: a patch that does not apply, a result that breaks a rule, a body of the wrong
    // shape, an unknown environment or feature, and a token of another environment.
    let (status, answer) = send(
        &service,
        patch(
            &development,
            ADMIN,
            json!([{"op": "replace", "path": "/9/name", "value": "x"}]),
        ),
    )
    .await;
    assert_error(status, &answer, 400, "ValidationError");
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("Could not apply provided patch")),
        "{answer}"
    );
    let (status, answer) = send(
        &service,
        patch(
            &development,
            ADMIN,
            json!([{"op": "replace", "path": "/0/weightType", "value": "fix"},
                   {"op": "replace", "path": "/0/weight", "value": 900},
                   {"op": "replace", "path": "/1/weight", "value": 900}]),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    for body in [
        json!({"name": "x"}),
        json!([{"weight": 5}]),
        json!([{"name": "x", "weight": 5, "color": 1}]),
    ] {
        let (status, answer) = send(&service, put(&production, ADMIN, body)).await;
        assert_error(status, &answer, 400, "ValidationError");
    }
    let (status, answer) = send(&service, patch(&development, ADMIN, json!({"op": "add"}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    // A small patch whose copies double the document each time is refused before it is large,
    // as are too many copies.
    let doubling: Vec<Value> = (0..40)
        .map(|_| json!({"op": "copy", "from": "", "path": "/-"}))
        .collect();
    let (status, answer) = send(&service, patch(&development, ADMIN, json!(doubling))).await;
    assert_error(status, &answer, 400, "ValidationError");
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|message| message.contains("bytes")),
        "{answer}"
    );
    let many: Vec<Value> = (0..65)
        .map(|_| json!({"op": "copy", "from": "/0/name", "path": "/0/stickiness"}))
        .collect();
    let (status, answer) = send(&service, patch(&development, ADMIN, json!(many))).await;
    assert_error(status, &answer, 400, "ValidationError");
    for path in [
        format!("{BASE}/environments/staging/variants"),
        "/api/admin/projects/default/features/nope/environments/development/variants".to_owned(),
    ] {
        let (status, answer) = send(&service, put(&path, ADMIN, json!([]))).await;
        assert_error(status, &answer, 404, "NotFoundError");
    }
    let (status, answer) = send(&service, put(&development, PRODUCTION_ADMIN, json!([]))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");

    // Nothing refused was written; every write is in the audit log with the list before it.
    let (_, stored) = send(&service, get(&development, ADMIN)).await;
    assert_eq!(
        names_and_weights(&stored),
        [("blue".to_owned(), 700), ("red".to_owned(), 300)]
    );
    let (_, events) = send(&service, get("/api/admin/events/colors", ADMIN)).await;
    let updates = events["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|event| event["type"] == "feature-environment-variants-updated")
        .count();
    assert_eq!(updates, 4, "{events}");
}

const FEATURES: &str = "/api/admin/projects/default/features";

fn variant(name: &str, weight: Value) -> Value {
    json!({"name": name, "weight": weight})
}

#[actix_web::test]
async fn variants_batch_writes_every_environment_and_echoes_the_request()
-> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "colors").await;
    let request = json!({
        "variants": [
            variant("red", json!(1)),
            {"name": "blue", "weight": "500", "stickiness": "userId", "payload": {"type": "json", "value": "{\"a\":1}"}},
            {"name": "Green", "weight": 100, "weightType": "fix"}
        ],
        "environments": ["development", "production", "production"]
    });
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/colors/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["version"], 1);
    let variants = body["variants"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        variants.iter().map(|v| v["weight"].clone()).collect::<Vec<_>>(),
        [json!(450), json!(450), json!(100)]
    );
    assert_eq!(
        variants[0],
        json!({"weightType": "variable", "stickiness": "default", "name": "red", "weight": 450})
    );
    assert_eq!(variants[1]["stickiness"], "userId");
    let keys: Vec<String> = variants[1]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["weightType", "stickiness", "name", "weight", "payload"]);

    for environment in ["development", "production"] {
        let (status, stored) = send(
            &service,
            get(
                &format!("/api/admin/projects/default/features/colors/environments/{environment}/variants"),
                ADMIN,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        let names: Vec<Value> = stored["variants"]
            .as_array()
            .map(|v| v.iter().map(|v| v["name"].clone()).collect())
            .unwrap_or_default();
        assert_eq!(
            names,
            [json!("blue"), json!("Green"), json!("red")],
            "stored sorted by name"
        );
    }
    let events = queries::events::for_feature(&mut *app.store.connection()?, "colors", "production")?;
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event_type == "feature-environment-variants-updated")
            .count(),
        1
    );

    // The playground now resolves a variant.
    let (_, played) = send(
        &service,
        post(
            "/api/admin/playground",
            ADMIN,
            json!({"environment": "production", "context": {"appName": "a", "userId": "1"}}),
        ),
    )
    .await;
    assert_eq!(played["features"][0]["variant"]["enabled"], true, "{played}");
    assert_eq!(played["features"][0]["variant"]["featureEnabled"], true);
    Ok(())
}

#[actix_web::test]
async fn variants_batch_rejects_bad_input() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let path = "/api/admin/projects/default/features/f/variants-batch";
    let cases = [
        (
            json!({"variants": [variant("a", json!(1500))], "environments": ["development"]}),
            "/variants/0/weight",
        ),
        (
            json!({"variants": [{"weight": 1}], "environments": ["development"]}),
            "/variants/0/name",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "color": "red"}], "environments": ["development"]}),
            "/variants/0/color",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "weightType": "most"}], "environments": ["development"]}),
            "/variants/0/weightType",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "xml", "value": "<a/>"}}], "environments": ["development"]}),
            "/variants/0/payload/type",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "number", "value": "ten"}}], "environments": ["development"]}),
            "/variants/0/payload/value",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1, "payload": {"type": "json", "value": "123"}}], "environments": ["development"]}),
            "/variants/0/payload/value",
        ),
        (
            json!({"variants": [variant("a", json!(1)), variant("a", json!(1))], "environments": ["development"]}),
            "/variants/1/name",
        ),
        (
            json!({"variants": [variant("a b", json!(1))], "environments": ["development"]}),
            "/variants/0/name",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 1001, "weightType": "fix"}], "environments": ["development"]}),
            "/variants/0/weight",
        ),
        (
            json!({"variants": [{"name": "a", "weight": 100, "weightType": "fix"}], "environments": ["development"]}),
            "/variants",
        ),
        (json!({"variants": [variant("a", json!(1))]}), "/environments"),
        (
            json!({"variants": [variant("a", json!(1))], "environments": []}),
            "/environments",
        ),
    ];
    for (request, expected) in cases {
        let (status, body) = send(&service, put(path, ADMIN, request.clone())).await;
        assert_error(status, &body, 400, "ValidationError");
        assert_eq!(body["details"][0]["path"], json!(expected), "{request} → {body}");
    }

    let ok = json!({"variants": [variant("a", json!(1))], "environments": ["development"]});
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/other/features/f/variants-batch",
            ADMIN,
            ok.clone(),
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/missing/variants-batch",
            ADMIN,
            ok,
        ),
    )
    .await;
    assert_error(status, &body, 404, "NotFoundError");
    let unknown_env = json!({"variants": [], "environments": ["staging"]});
    let (status, body) = send(&service, put(path, ADMIN, unknown_env)).await;
    assert_error(status, &body, 404, "NotFoundError");
}

#[actix_web::test]
async fn stored_variants_read_back_with_default_stickiness() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let batch = json!({"variants": [{"name": "a", "weight": 500, "weightType": "variable"},
        {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "userId"}],
        "environments": ["development"]});
    let (status, body) = send(
        &service,
        put(&format!("{FEATURES}/f/variants-batch"), ADMIN, batch),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, read) = send(
        &service,
        get(&format!("{FEATURES}/f/environments/development/variants"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["variants"][0]["stickiness"], "default", "{read}");
    assert_eq!(read["variants"][1]["stickiness"], "userId", "{read}");
}

// The answers, pinned.

#[actix_web::test]
async fn variants_batch_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let request = json!({
        "variants": [
            {"name": "red", "weight": 1},
            {"weight": "500", "name": "blue", "stickiness": "userId", "payload": {"type": "json", "value": "{\"a\":1}"}},
            {"name": "green", "weight": 100, "weightType": "fix", "overrides": [{"contextName": "userId", "values": ["7"]}]}
        ],
        "environments": ["development", "production"]
    });
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}

#[actix_web::test]
async fn variants_batch_error_with_a_bad_weight() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let request = json!({"variants": [{"name": "a", "weight": 1500}], "environments": ["development"]});
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    insta::assert_json_snapshot!(body, {".id" => "[id]"});
}

#[actix_web::test]
async fn environment_variants_answer() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "f").await;
    let request = json!({
        "variants": [
            {"name": "red", "weight": 1, "stickiness": "userId"},
            {"name": "blue", "weight": 100, "weightType": "fix", "payload": {"type": "string", "value": "b"}}
        ],
        "environments": ["development"]
    });
    let (status, body) = send(
        &service,
        put(
            "/api/admin/projects/default/features/f/variants-batch",
            ADMIN,
            request,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = send(
        &service,
        get(
            "/api/admin/projects/default/features/f/environments/development/variants",
            ADMIN,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    insta::assert_json_snapshot!(body);
}
