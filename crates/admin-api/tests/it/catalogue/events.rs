//! The audit log as Unleash shows it: each event's label and Markdown summary, the transaction
//! group of events written together, the whole objects in `data` and `preData`, and the search's
//! free-text query.

use crate::common::{ADMIN, TestApp, delete, get, post, put, send};
use actix_http::Request;
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use flag_admin::Settings;
use serde_json::{Value, json};

const FLAGS: &str = "/api/admin/projects/default/features";

/// Creates a flag of the `default` project, with `description`.
async fn create_flag<S, B>(service: &S, name: &str, description: &str)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, body) = send(
        service,
        post(FLAGS, ADMIN, json!({"name": name, "description": description})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// The events a search answers, newest first, with how many match.
async fn search<S, B>(service: &S, query: &str) -> (Vec<Value>, i64)
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, body) = send(service, get(&format!("/api/admin/search/events?{query}"), ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let events = body["events"].as_array().cloned().unwrap_or_default();
    (events, body["total"].as_i64().unwrap_or(-1))
}

/// The one event of `event_type` about `feature` a search finds.
async fn only_event<S, B>(service: &S, feature: &str, event_type: &str) -> Value
where
    S: Service<Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (events, total) = search(service, &format!("feature=IS:{feature}&type=IS:{event_type}")).await;
    assert_eq!(total, 1, "one {event_type} of {feature}: {events:?}");
    events[0].clone()
}

#[actix_web::test]
async fn searched_events_are_labelled_and_told_with_links_to_the_public_url() {
    let app = TestApp::with_settings(Settings {
        unleash_url: "https://flags.example.com/".into(),
        ..Settings::default()
    });
    let service = app.service().await;
    let (status, body) = send(
        &service,
        post("/api/admin/tag-types", ADMIN, json!({"name": "doomed"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    create_flag(&service, "adm.gamma", "").await;
    let (status, body) = send(
        &service,
        post(
            "/api/admin/features/adm.gamma/tags",
            ADMIN,
            json!({"type": "doomed", "value": "old"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let tagged = only_event(&service, "adm.gamma", "feature-tagged").await;
    assert_eq!(tagged["label"], "Flag tagged");
    assert_eq!(
        tagged["summary"],
        "**admin** tagged **[adm.gamma](https://flags.example.com/projects/default/features/adm.gamma)** \
         with **doomed:old** in project **[default](https://flags.example.com/projects/default)**"
    );
    let created = only_event(&service, "adm.gamma", "feature-created").await;
    assert_eq!(created["label"], "Flag created");
    assert_eq!(
        created["summary"],
        "**admin** created **[adm.gamma](https://flags.example.com/projects/default/features/adm.gamma)** \
         in project **[default](https://flags.example.com/projects/default)**"
    );

    // A strategy update says what changed, as Unleash words it.
    let base = format!("{FLAGS}/adm.gamma/environments/development/strategies");
    let parameters =
        |rollout: &str| json!({"rollout": rollout, "stickiness": "default", "groupId": "adm.gamma"});
    let (status, strategy) = send(
        &service,
        post(
            &base,
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": parameters("50")}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{strategy}");
    let id = strategy["id"].as_str().unwrap_or_default();
    let (status, body) = send(
        &service,
        put(
            &format!("{base}/{id}"),
            ADMIN,
            json!({"name": "flexibleRollout", "parameters": parameters("75")}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let updated = only_event(&service, "adm.gamma", "feature-strategy-update").await;
    assert_eq!(updated["label"], "Flag strategy updated");
    assert_eq!(
        updated["summary"],
        "**admin** updated **[adm.gamma](https://flags.example.com/projects/default/features/adm.gamma)** \
         in project **[default](https://flags.example.com/projects/default)** by updating strategy \
         **flexibleRollout** in **development** rollout from 50% to 75%"
    );

    // A type Unleash has no words for keeps its name as its label.
    let (events, _) = search(&service, "type=IS:tag-type-created").await;
    assert_eq!(events[0]["label"], "tag-type-created");
    assert_eq!(events[0]["summary"], "**admin** triggered **tag-type-created**");

    // Unleash's older lists carry neither.
    for path in ["/api/admin/events", "/api/admin/events/adm.gamma"] {
        let (status, body) = send(&service, get(path, ADMIN)).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let first = &body["events"][0];
        assert!(
            first.get("label").is_none() && first.get("summary").is_none(),
            "{path}: {first}"
        );
    }
}

#[actix_web::test]
async fn events_written_in_one_transaction_share_its_group() {
    let app = TestApp::new();
    let service = app.service().await;
    create_flag(&service, "grouped", "").await;
    // Switching on a flag without strategies adds the default one in the same transaction.
    let on = format!("{FLAGS}/grouped/environments/development/on");
    let (status, _) = send(&service, post(&on, ADMIN, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    let added = only_event(&service, "grouped", "feature-strategy-add").await;
    let enabled = only_event(&service, "grouped", "feature-environment-enabled").await;
    assert_eq!(added["groupType"], "transaction");
    assert_eq!(enabled["groupType"], "transaction");
    let group = enabled["groupId"].as_str().unwrap_or_default().to_owned();
    assert_eq!(added["groupId"], group.as_str());
    assert_eq!(group.len(), 26, "a ULID: {group}");
    assert!(
        group
            .chars()
            .all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)),
        "a ULID: {group}"
    );

    // Another write is another transaction.
    let created = only_event(&service, "grouped", "feature-created").await;
    assert_eq!(created["groupType"], "transaction");
    assert_ne!(created["groupId"], group.as_str());

    // The search's groupId filter finds the transaction's events, and only them.
    let (events, total) = search(&service, &format!("groupId=IS:{group}")).await;
    assert_eq!(total, 2, "{events:?}");
    let types: Vec<&str> = events.iter().filter_map(|event| event["type"].as_str()).collect();
    assert_eq!(types, ["feature-environment-enabled", "feature-strategy-add"]);
    let (_, total) = search(&service, "groupId=IS:01ARZ3NDEKTSV4RRFFQ69G5FAV").await;
    assert_eq!(total, 0);

    // The older lists show the group too.
    let (_, body) = send(&service, get("/api/admin/events/grouped", ADMIN)).await;
    assert_eq!(body["events"][0]["groupId"], group.as_str());

    // Unleash stores segment events outside any transaction: they carry no group at all.
    let (status, body) = send(
        &service,
        post("/api/admin/segments", ADMIN, json!({"name": "alone"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (events, _) = search(&service, "type=IS:segment-created").await;
    assert!(
        events[0].get("groupType").is_none() && events[0].get("groupId").is_none(),
        "{}",
        events[0]
    );
}

#[actix_web::test]
async fn events_hold_the_whole_object_as_unleash_stores_it() {
    let app = TestApp::new();
    let service = app.service().await;

    // A segment, with its constraints and when it was made.
    let (status, segment) = send(
        &service,
        post(
            "/api/admin/segments",
            ADMIN,
            json!({"name": "beta", "description": "early birds", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["7"]}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{segment}");
    let (events, _) = search(&service, "type=IS:segment-created").await;
    let data = &events[0]["data"];
    assert_eq!(data["id"], segment["id"]);
    assert_eq!(data["name"], "beta");
    assert_eq!(data["description"], "early birds");
    assert_eq!(
        data["constraints"],
        json!([{"contextName": "userId", "operator": "IN", "values": ["7"]}])
    );
    assert!(data["createdAt"].is_string(), "{data}");
    assert!(data.get("createdBy").is_some(), "{data}");

    // Variants, before and after, each as `{variants: [...]}`.
    create_flag(&service, "colors", "").await;
    let (status, body) = send(
        &service,
        put(
            &format!("{FLAGS}/colors/variants-batch"),
            ADMIN,
            json!({"environments": ["development"], "variants": [{"name": "red", "weight": 1000}]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let variants = only_event(&service, "colors", "feature-environment-variants-updated").await;
    assert_eq!(variants["preData"], json!({"variants": []}));
    assert_eq!(variants["data"]["variants"][0]["name"], "red");

    // Switching on or off records no data: the type says it.
    let (status, _) = send(
        &service,
        post(
            &format!("{FLAGS}/colors/environments/development/on"),
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let enabled = only_event(&service, "colors", "feature-environment-enabled").await;
    assert_eq!(
        (&enabled["data"], &enabled["preData"]),
        (&Value::Null, &Value::Null)
    );

    // A strategy, every field there, empty lists included.
    let added = only_event(&service, "colors", "feature-strategy-add").await;
    for field in [
        "id",
        "name",
        "title",
        "disabled",
        "constraints",
        "parameters",
        "variants",
        "sortOrder",
        "segments",
    ] {
        assert!(added["data"].get(field).is_some(), "no {field}: {added}");
    }
    assert_eq!(added["data"]["segments"], json!([]));

    // A context field as it was asked for.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/context",
            ADMIN,
            json!({"name": "tenant", "description": "who pays", "legalValues": [{"value": "acme"}], "stickiness": true}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (events, _) = search(&service, "type=IS:context-field-created").await;
    let data = &events[0]["data"];
    assert_eq!(data["description"], "who pays");
    assert_eq!(data["legalValues"][0]["value"], "acme");
    assert_eq!(data["stickiness"], true);

    // A deleted API token is the event's data before, without its secret.
    let (status, token) = send(
        &service,
        post(
            "/api/admin/api-tokens",
            ADMIN,
            json!({"tokenName": "ios", "type": "client", "environment": "production", "projects": ["default"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{token}");
    let secret = token["secret"].as_str().unwrap_or_default();
    let (status, _) = send(
        &service,
        delete(&format!("/api/admin/api-tokens/{secret}"), ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (events, _) = search(&service, "type=IS:api-token-deleted").await;
    let deleted = &events[0];
    assert_eq!(deleted["data"], Value::Null);
    assert_eq!(deleted["preData"]["tokenName"], "ios");
    assert_eq!(deleted["preData"]["projects"], json!(["default"]));
    assert_eq!(deleted["environment"], "production");
    assert_eq!(deleted["project"], "default");
    assert!(!deleted.to_string().contains(secret), "{deleted}");
}

#[actix_web::test]
async fn the_free_text_query_matches_as_unleash_ilike_does() {
    let app = TestApp::new();
    let service = app.service().await;
    create_flag(&service, "adm.gamma", "").await;
    create_flag(&service, "spaced", "two words").await;
    create_flag(&service, "umlaut", "Ärger im Paradies").await;
    let (_, everything) = search(&service, "limit=1").await;

    // Letter case is ignored.
    let (events, _) = search(&service, "query=TWO%20WORDS").await;
    assert!(
        events.iter().any(|event| event["featureName"] == "spaced"),
        "{events:?}"
    );

    // Text outside ASCII is found as it was written.
    let (events, _) = search(&service, "query=%C3%84rger").await;
    assert!(
        events.iter().any(|event| event["featureName"] == "umlaut"),
        "{events:?}"
    );

    // A query of blanks is text like any other, not no query.
    let (events, total) = search(&service, "query=%20").await;
    assert!(total > 0 && total < everything, "{total} of {everything}");
    for event in &events {
        let text = format!("{}{}{}", event["data"], event["preData"], event["tags"]);
        assert!(text.contains(' '), "{event}");
    }

    // `_` and `%` are wildcards, as in Unleash's ILIKE.
    let (events, _) = search(&service, "query=adm_gamma").await;
    assert!(
        events.iter().any(|event| event["featureName"] == "adm.gamma"),
        "{events:?}"
    );
    let (events, _) = search(&service, "query=two%25words").await;
    assert!(
        events.iter().any(|event| event["featureName"] == "spaced"),
        "{events:?}"
    );

    // The data before and the flag's tags are searched too.
    let (status, body) = send(
        &service,
        post(
            "/api/admin/features/adm.gamma/tags",
            ADMIN,
            json!({"type": "simple", "value": "needle"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, _) = send(
        &service,
        delete("/api/admin/features/adm.gamma/tags/simple/needle", ADMIN),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (events, _) = search(&service, "query=NEEDLE").await;
    let types: Vec<&str> = events.iter().filter_map(|event| event["type"].as_str()).collect();
    assert_eq!(
        types,
        ["feature-untagged", "feature-tagged", "tag-created"],
        "{events:?}"
    );
}
