//! A feature's variants in one environment: the per-environment overwrite and JSON Patch that
//! Unleash's web UI edits them with, refusals included.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{ADMIN, PRODUCTION_ADMIN, TestApp, assert_error, get, patch, put, seed_feature, send};

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
