//! Segments: read, changed and deleted once unused; and segments and context fields as Unleash
//! lists them, by name, with how many live flags and projects use each, a global segment without
//! `project`, and a new field sorted at 0.

use actix_web::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{ADMIN, TestApp, assert_error, delete, get, post, put, seed_feature, send};

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| item["name"].as_str())
        .collect()
}

fn item<'a>(list: &'a Value, name: &str) -> &'a Value {
    list.as_array()
        .into_iter()
        .flatten()
        .find(|item| item["name"] == name)
        .unwrap_or(&Value::Null)
}

#[actix_web::test]
async fn segments_are_read_changed_and_deleted_once_unused() {
    let app = TestApp::new();
    let service = app.service().await;
    seed_feature(&service, "gated").await;
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
    let id = segment["id"].as_i64().unwrap_or_default();
    send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "other", "constraints": []}),
        ),
    )
    .await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects/default/features/gated/environments/development/strategies",
            ADMIN,
            json!({"name": "default", "segments": [id]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let strategy = body["id"].as_str().unwrap_or_default().to_owned();

    let (status, one) = send(&service, get(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert!(
        one.get("project").is_none(),
        "a global segment has no project key: {one}"
    );
    let (_, uses) = send(
        &service,
        get(&format!("/api/admin/segments/{id}/strategies"), ADMIN),
    )
    .await;
    assert_eq!(uses["strategies"][0]["featureName"], "gated", "{uses}");
    assert_eq!(uses["changeRequestStrategies"], json!([]));
    let (_, of) = send(
        &service,
        get(&format!("/api/admin/segments/strategies/{strategy}"), ADMIN),
    )
    .await;
    assert_eq!(of["segments"][0]["id"], id);

    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/segments/{id}"),
            ADMIN,
            json!({"name": "beta-users", "description": "d", "constraints": []}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (_, one) = send(&service, get(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(one["name"], "beta-users");
    let (status, body) = send(
        &service,
        put(
            &format!("/api/admin/segments/{id}"),
            ADMIN,
            json!({"name": "other", "constraints": []}),
        ),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(&service, get("/api/admin/segments/seven", ADMIN)).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, get("/api/admin/segments/999", ADMIN)).await;
    assert_error(status, &body, 404, "NotFoundError");

    let (status, body) = send(&service, delete(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_error(status, &body, 409, "ConflictError");
    send(
        &service,
        delete(
            &format!(
                "/api/admin/projects/default/features/gated/environments/development/strategies/{strategy}"
            ),
            ADMIN,
        ),
    )
    .await;
    let (status, _) = send(&service, delete(&format!("/api/admin/segments/{id}"), ADMIN)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    let (status, _) = send(
        &service,
        post("/api/admin/segments/validate", ADMIN, json!({"name": "new"})),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = send(
        &service,
        post("/api/admin/segments/validate", ADMIN, json!({"name": "other"})),
    )
    .await;
    assert_error(status, &body, 409, "NameExistsError");
    let (status, body) = send(
        &service,
        post("/api/admin/segments/validate", ADMIN, json!({"name": " "})),
    )
    .await;
    assert_error(status, &body, 400, "ValidationError");
}

#[actix_web::test]
async fn segments_and_fields_are_listed_by_name_with_where_they_are_used() {
    let app = TestApp::new();
    let service = app.service().await;
    for name in ["zone", "Plan", "area"] {
        let (status, body) = send(&service, post("/api/admin/context", ADMIN, json!({"name": name}))).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, body) = send(
        &service,
        post(
            "/api/admin/projects",
            ADMIN,
            json!({"id": "shop", "name": "Shop"}),
        ),
    )
    .await;
    assert!(status.is_success(), "{body}");
    let mut ids = Vec::new();
    for (name, project) in [("b-users", None), ("a-users", Some("shop")), ("C-users", None)] {
        let mut segment = json!({"name": name, "constraints": [{"contextName": "zone", "operator": "IN", "values": ["eu"]}]});
        if let Some(project) = project {
            segment["project"] = json!(project);
        }
        let (status, body) = send(&service, post("/api/admin/segments", ADMIN, segment)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        if project.is_none() {
            assert!(
                body.get("project").is_none(),
                "a global segment has no project: {body}"
            );
        }
        ids.push(body["id"].clone());
    }
    // Two live flags of the default project and one of `shop` use `b-users` and `zone`; an
    // archived flag counts for neither.
    for (flag, project) in [
        ("one", "default"),
        ("two", "default"),
        ("three", "shop"),
        ("gone", "default"),
    ] {
        if project == "default" {
            seed_feature(&service, flag).await;
        } else {
            let (status, body) = send(
                &service,
                post(
                    &format!("/api/admin/projects/{project}/features"),
                    ADMIN,
                    json!({"name": flag}),
                ),
            )
            .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
        let strategy = json!({"name": "default", "segments": [ids[0].clone()],
            "constraints": [{"contextName": "zone", "operator": "IN", "values": ["eu"]}]});
        let (status, body) = send(
            &service,
            post(
                &format!("/api/admin/projects/{project}/features/{flag}/environments/development/strategies"),
                ADMIN,
                strategy,
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let (status, body) = send(
        &service,
        delete("/api/admin/projects/default/features/gone", ADMIN),
    )
    .await;
    assert!(status.is_success(), "{body}");

    let (status, list) = send(&service, get("/api/admin/segments", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let segments = &list["segments"];
    assert_eq!(names(segments), ["a-users", "b-users", "C-users"], "{list}");
    let used = item(segments, "b-users");
    assert_eq!(
        (used["usedInFeatures"].clone(), used["usedInProjects"].clone()),
        (json!(3), json!(2)),
        "{used}"
    );
    assert!(used.get("project").is_none(), "{used}");
    let unused = item(segments, "C-users");
    assert_eq!(
        (unused["usedInFeatures"].clone(), unused["usedInProjects"].clone()),
        (json!(0), json!(0))
    );
    assert_eq!(item(segments, "a-users")["project"], "shop");

    let (status, fields) = send(&service, get("/api/admin/context", ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{fields}");
    let listed = names(&fields);
    let mut sorted = listed.clone();
    sorted.sort_by_key(|name| name.to_lowercase());
    assert_eq!(listed, sorted, "listed by name: {fields}");
    let zone = item(&fields, "zone");
    assert_eq!(
        (zone["usedInFeatures"].clone(), zone["usedInProjects"].clone()),
        (json!(3), json!(2)),
        "{zone}"
    );
    assert_eq!(item(&fields, "area")["usedInFeatures"], 0);
    assert_eq!(item(&fields, "area")["sortOrder"], 0, "a new field sorts at 0");
}
