//! The client API's cache: answers kept per question and revision, one scope never given
//! another's, and compressed copies made once. Tokens are checked in memory too: that is in
//! `identity::token_scope`.

use std::io::Read as _;

use crate::common::{ADMIN, TestApp, flag_names, get, post, send};
use actix_web::body::MessageBody;
use actix_web::dev::{Service, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::test;
use serde_json::{Value, json};

const DEFAULT_PROJECT: &str = "default:production.default-project-secret";
const SHOP_PROJECT: &str = "shop:production.shop-project-secret";
const EVERY_PROJECT: &str = "*:development.every-project-secret";

/// A feature named `name` in `project`, on in production with the default strategy.
async fn feature_in<S, B>(service: &S, project: &str, name: &str)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let base = format!("/api/admin/projects/{project}/features");
    let (status, body) = send(service, post(&base, ADMIN, json!({"name": name}))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let environment = format!("{base}/{name}/environments/production");
    let (status, body) = send(
        service,
        post(
            &format!("{environment}/strategies"),
            ADMIN,
            json!({"name": "default"}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = send(service, post(&format!("{environment}/on"), ADMIN, json!({}))).await;
    assert_eq!(status, StatusCode::OK);
}

/// Two projects with a feature each, and a token for each project.
async fn two_projects() -> TestApp {
    let app = TestApp::new();
    app.store_token(DEFAULT_PROJECT, "client", "production", &["default"])
        .unwrap_or_else(|error| panic!("{error}"));
    app.store_token(SHOP_PROJECT, "client", "production", &["shop"])
        .unwrap_or_else(|error| panic!("{error}"));
    app.store_token(EVERY_PROJECT, "backend", "development", &["*"])
        .unwrap_or_else(|error| panic!("{error}"));
    {
        let service = app.service().await;
        let (status, body) = send(
            &service,
            post(
                "/api/admin/projects",
                ADMIN,
                json!({"id": "shop", "name": "Shop", "environments": ["development", "production"]}),
            ),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        feature_in(&service, "default", "checkout").await;
        feature_in(&service, "shop", "basket").await;
    }
    app
}

/// The answer's status, `ETag` and body as JSON.
pub(crate) async fn fetch<S, B>(service: &S, token: &str, etag: Option<&str>) -> (StatusCode, String, Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let mut request = get("/api/client/features", token);
    if let Some(etag) = etag {
        request = request.insert_header(("If-None-Match", etag));
    }
    let response = test::call_service(service, request.to_request()).await;
    let status = response.status();
    let tag = response
        .headers()
        .get("ETag")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = test::read_body(response).await;
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, tag, body)
}

#[actix_web::test]
async fn a_write_changes_only_the_answers_that_show_it() {
    let app = two_projects().await;
    let service = app.service().await;
    let (status, default_tag, body) = fetch(&service, DEFAULT_PROJECT, None).await;
    assert_eq!((status, flag_names(&body)), (StatusCode::OK, vec!["checkout"]));
    let (status, shop_tag, body) = fetch(&service, SHOP_PROJECT, None).await;
    assert_eq!((status, flag_names(&body)), (StatusCode::OK, vec!["basket"]));
    let (_, every_tag, body) = fetch(&service, EVERY_PROJECT, None).await;
    assert_eq!(flag_names(&body), vec!["checkout", "basket"]);

    // Turning the shop's feature off in production changes the shop's answer only.
    let (status, _) = send(
        &service,
        post(
            "/api/admin/projects/shop/features/basket/environments/production/off",
            ADMIN,
            json!({}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (status, tag, _) = fetch(&service, DEFAULT_PROJECT, Some(&default_tag)).await;
    assert_eq!((status, tag), (StatusCode::NOT_MODIFIED, default_tag.clone()));
    let (status, tag, _) = fetch(&service, EVERY_PROJECT, Some(&every_tag)).await;
    assert_eq!((status, tag), (StatusCode::NOT_MODIFIED, every_tag.clone()));
    let (status, new_shop_tag, body) = fetch(&service, SHOP_PROJECT, Some(&shop_tag)).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(new_shop_tag, shop_tag);
    assert_eq!(body["features"][0]["enabled"], false);
    assert_eq!(body["meta"]["etag"], json!(new_shop_tag));

    // A replica whose cache never held the shop's old answer gives the unchanged answers the
    // same tags, so SDKs behind a load balancer keep getting 304.
    let replica = actix_web::web::Data::new(admin_api::AppState::new(
        flag_admin::Ctx::new(app.store.clone(), flag_admin::Settings::default())
            .unwrap_or_else(|error| panic!("{error}")),
    ));
    let other = test::init_service(admin_api::build_app(replica)).await;
    let (status, tag, _) = fetch(&other, DEFAULT_PROJECT, Some(&default_tag)).await;
    assert_eq!((status, tag), (StatusCode::NOT_MODIFIED, default_tag.clone()));
    let (status, tag, _) = fetch(&other, SHOP_PROJECT, None).await;
    assert_eq!((status, tag), (StatusCode::OK, new_shop_tag.clone()));
    // A tag a proxy marked weak still matches, and so does `*`.
    let weak = format!("W/{default_tag}");
    let (status, _, _) = fetch(&service, DEFAULT_PROJECT, Some(&weak)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    let (status, _, _) = fetch(&service, DEFAULT_PROJECT, Some("*")).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);

    // The new answer is cached under its own tag, and the old one no longer matches.
    let (status, _, _) = fetch(&service, SHOP_PROJECT, Some(&new_shop_tag)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    let (status, _, body) = fetch(&service, SHOP_PROJECT, Some(&shop_tag)).await;
    assert_eq!(
        (status, body["features"][0]["enabled"].clone()),
        (StatusCode::OK, json!(false))
    );
}

#[actix_web::test]
async fn one_scope_never_gets_another_scopes_answer() {
    let app = two_projects().await;
    let service = app.service().await;
    // Interleaved, and repeated so that the second round comes from the cache.
    for _ in 0..3 {
        let (_, default_tag, default_body) = fetch(&service, DEFAULT_PROJECT, None).await;
        let (_, shop_tag, shop_body) = fetch(&service, SHOP_PROJECT, None).await;
        let (_, every_tag, every_body) = fetch(&service, EVERY_PROJECT, None).await;
        assert_eq!(flag_names(&default_body), vec!["checkout"]);
        assert_eq!(flag_names(&shop_body), vec!["basket"]);
        assert_eq!(flag_names(&every_body), vec!["checkout", "basket"]);
        assert_eq!(default_body["query"]["project"], json!(["default"]));
        assert_eq!(every_body["query"]["environment"], "development");
        assert!(default_tag != shop_tag && shop_tag != every_tag && default_tag != every_tag);
        // One scope's tag names nothing in another's.
        let (status, _, body) = fetch(&service, SHOP_PROJECT, Some(&default_tag)).await;
        assert_eq!((status, flag_names(&body)), (StatusCode::OK, vec!["basket"]));
    }
    // The query string narrows a token for every project, as a question of its own.
    let (_, _, body) = send_query(&service, "/api/client/features?project=shop").await;
    assert_eq!(flag_names(&body), vec!["basket"]);
    let (_, _, body) = send_query(&service, "/api/client/features?namePrefix=check").await;
    assert_eq!(flag_names(&body), vec!["checkout"]);
    assert!(
        app.state.answers.len() >= 5,
        "{} answers",
        app.state.answers.len()
    );
}

async fn send_query<S, B>(service: &S, path: &str) -> (StatusCode, String, Value)
where
    S: Service<actix_http::Request, Response = ServiceResponse<B>, Error = actix_web::Error>,
    B: MessageBody,
{
    let (status, body) = send(service, get(path, EVERY_PROJECT)).await;
    (status, String::new(), body)
}

#[actix_web::test]
async fn compressed_answers_decompress_to_the_plain_bytes() {
    let app = two_projects().await;
    let service = app.service().await;
    let mut plain = Vec::new();
    for (accept, expected) in [
        (None, None),
        (Some("gzip"), Some("gzip")),
        (Some("gzip, deflate, br"), Some("br")),
        (Some("br;q=0.5, gzip"), Some("gzip")),
    ] {
        let mut request = get("/api/client/features", EVERY_PROJECT);
        if let Some(accept) = accept {
            request = request.insert_header(("Accept-Encoding", accept));
        }
        let response = test::call_service(&service, request.to_request()).await;
        assert_eq!(response.status(), StatusCode::OK);
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
        };
        assert_eq!(header("Content-Encoding").as_deref(), expected, "{accept:?}");
        assert_eq!(
            header("Vary").map(|vary| vary.to_lowercase()).as_deref(),
            Some("accept-encoding")
        );
        let bytes = test::read_body(response).await.to_vec();
        let mut decoded = Vec::new();
        match expected {
            None => decoded = bytes,
            Some("gzip") => {
                flate2::read::GzDecoder::new(&bytes[..])
                    .read_to_end(&mut decoded)
                    .unwrap_or_else(|error| panic!("{error}"));
            }
            Some(_) => {
                brotli::Decompressor::new(&bytes[..], 4096)
                    .read_to_end(&mut decoded)
                    .unwrap_or_else(|error| panic!("{error}"));
            }
        }
        if plain.is_empty() {
            plain = decoded;
        } else {
            assert_eq!(decoded, plain, "{accept:?}");
        }
    }
    assert!(serde_json::from_slice::<Value>(&plain).is_ok());
}
