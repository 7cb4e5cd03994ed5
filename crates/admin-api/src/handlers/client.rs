//! `GET /api/client/features` and `/api/client/features/{name}`: what Unleash SDKs poll.

use std::sync::Arc;

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, mime, web};
use flag_admin::delivery::client::types::{
    ClientFeatureResponse, ClientFeaturesQuery, ClientFeaturesResponse, ClientQuery, DeltaSchema,
    FeatureQuery,
};
use flag_admin::delivery::client::{self, ClientSpec, Protocol};
use flag_admin::delivery::delta::DeltaAnswer;

use crate::auth::ClientToken;
use crate::client_cache::{Answer, Cached, Precompressed};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

/// The client specification the request's SDK follows; a header that is not text is refused
/// as one that is not a version is.
fn client_spec(request: &HttpRequest) -> Result<ClientSpec, ApiError> {
    let header = request
        .headers()
        .get("Unleash-Client-Spec")
        .map(|value| value.to_str().unwrap_or("(not text)"));
    Ok(ClientSpec::parse(header)?)
}

/// The client-features document SDKs poll.
///
/// With an `ETag`, and 304 when `If-None-Match` names the current one.
#[utoipa::path(
    get,
    path = "/api/client/features",
    tag = "Client",
    operation_id = "getAllClientFeatures",
    params(
        ClientQuery,
        ("Unleash-Client-Spec" = Option<String>, Header, description = "The client specification the SDK follows; 4.2.0 or later gets segments separately instead of inlined"),
        ("If-None-Match" = Option<String>, Header, description = "An `ETag` from an earlier answer"),
    ),
    responses(
        (status = 200, description = "The features of the token's environment and projects", body = ClientFeaturesResponse,
            headers(("ETag" = String, description = "`\"<query hash>:<document digest>:v1\"`: changes with the query and with the answer, the same on every replica"))),
        (status = 304, description = "Nothing changed since the `ETag` in `If-None-Match`",
            headers(("ETag" = String, description = "The same `ETag`"))),
        (status = 400, description = "`Unleash-Client-Spec` is not a semantic version, or the query string is malformed", body = ErrorBody),
    ),
)]
pub async fn features(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<Cached, ApiError> {
    let query = ClientQuery::from_pairs(query.into_inner());
    let mut question = client::question(&access, query, Protocol::Features(client_spec(&request)?))?;
    if state.edge.is_some() {
        question = flag_admin::app::edge::answerable(question);
    }
    let revision = state.app.revision().await?;
    let answer = state
        .answers
        .get_or_build(&question, revision, |previous| {
            build_answer(&state, question.clone(), previous)
        })
        .await?;
    Ok(Cached(answer))
}

/// Reads the document for `question` in one snapshot with the revision it reflects, then
/// serialises and compresses it on the CPU pool; or keeps `previous` when the document is
/// the same.
///
/// The `ETag` is `"<query hash>:<digest>:v1"`, Unleash's form with a digest of the document in
/// place of the revision: it changes exactly when the answer does, and every replica gives the
/// same answer the same tag, however its caches came to hold it.
async fn build_answer(
    state: &AppState,
    question: ClientFeaturesQuery,
    previous: Option<Arc<Answer>>,
) -> Result<Arc<Answer>, flag_admin::AdminError> {
    let Some(rendered) = client::render(
        &state.app,
        question,
        previous.as_ref().map(|answer| answer.digest),
    )
    .await?
    else {
        return previous.ok_or_else(|| flag_admin::AdminError::Internal("no answer to keep".into()));
    };
    state
        .app
        .cpu()
        .run(move || {
            let body = Precompressed::new(rendered.json).map_err(|error| {
                flag_admin::AdminError::Internal(format!("cannot compress client features: {error}"))
            })?;
            flag_admin::runtime::memory::release_free_pages();
            Ok(Arc::new(Answer {
                etag: rendered.etag,
                digest: rendered.digest,
                body,
            }))
        })
        .await?
}

/// One feature as SDKs see it.
#[utoipa::path(
    get,
    path = "/api/client/features/{featureName}",
    tag = "Client",
    operation_id = "getClientFeature",
    params(
        ("featureName" = String, Path, description = "The feature"),
        FeatureQuery,
        ("Unleash-Client-Spec" = Option<String>, Header, description = "The client specification the SDK follows; 4.2.0 or later gets segment ids instead of inlined constraints"),
    ),
    responses(
        (status = 200, description = "The feature in the token's environment", body = ClientFeatureResponse),
        (status = 400, description = "`Unleash-Client-Spec` is not a semantic version", body = ErrorBody),
        (status = 404, description = "No such feature in the token's projects", body = ErrorBody),
    ),
)]
pub async fn feature(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    path: web::Path<String>,
    query: web::Query<FeatureQuery>,
) -> Result<web::Json<ClientFeatureResponse>, ApiError> {
    let spec = client_spec(&request)?;
    let environment = query.into_inner().environment;
    Ok(web::Json(
        client::feature(&state.app, &access, path.into_inner(), environment, spec).await?,
    ))
}

/// The revision an SDK holds, from its `If-None-Match` or `Last-Event-ID`: a number, quoted or
/// not, weak or not. Anything else holds nothing, and gets a hydration.
fn held_revision(request: &HttpRequest, header: header::HeaderName) -> Option<i32> {
    let value = request.headers().get(header)?.to_str().ok()?.trim();
    let value = value.strip_prefix("W/").unwrap_or(value);
    value.trim_matches('"').parse().ok()
}

/// The changes since the revision the SDK holds (Unleash's delta API).
///
/// `If-None-Match: "<revision>"` gets the events since that revision, or 304 when nothing the
/// token sees changed; no `If-None-Match`, or a revision this server cannot resume from, gets one
/// `hydration` event with the whole state. The `ETag` is the revision the events lead to. The
/// token's projects and environment filter the events: a flag that leaves them is
/// `feature-removed`.
#[utoipa::path(
    get,
    path = "/api/client/delta",
    tag = "Client",
    operation_id = "getDelta",
    params(
        ("environment" = Option<String>, Query, description = "The environment, when the token is not bound to one; `development` when neither says"),
        ("project" = Option<Vec<String>>, Query, description = "Projects, when the token is not limited to some"),
        ("namePrefix" = Option<String>, Query, description = "Only flags whose name starts with this"),
        ("If-None-Match" = Option<String>, Header, description = "The `ETag` of the last answer: `\"<revision>\"`"),
    ),
    responses(
        (status = 200, description = "The events since the revision in `If-None-Match`, or a hydration", body = DeltaSchema,
            headers(("ETag" = String, description = "`\"<revision>\"`: the revision the events lead to"))),
        (status = 304, description = "Nothing the token sees changed since the revision in `If-None-Match`",
            headers(("ETag" = String, description = "The same `ETag`"))),
        (status = 400, description = "The query string is malformed", body = ErrorBody),
    ),
)]
pub async fn delta(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, ApiError> {
    let question = client::question(
        &access,
        ClientQuery::from_pairs(query.into_inner()),
        Protocol::Delta,
    )?;
    let known = held_revision(&request, header::IF_NONE_MATCH);
    let feed = state.app.delivery().feeds().feed(question);
    let revision = state.app.revision().await?;
    let etag = |revision: i32| header::ETag(header::EntityTag::new_strong(revision.to_string()));
    Ok(match feed.delta(&state.app, revision, known).await? {
        DeltaAnswer::NotModified { revision } => {
            HttpResponse::NotModified().insert_header(etag(revision)).finish()
        }
        DeltaAnswer::Events { revision, body } => HttpResponse::Ok()
            .content_type(mime::APPLICATION_JSON)
            .insert_header(etag(revision))
            .body(body),
        DeltaAnswer::Hydration(snapshot) => HttpResponse::Ok()
            .content_type(mime::APPLICATION_JSON)
            .insert_header(etag(snapshot.revision()))
            .body(crate::streaming::shared(snapshot.hydration())),
    })
}

/// Flag changes as server-sent events, as they happen (Unleash's streaming API).
///
/// `unleash-connected` first, with a hydration or, given `Last-Event-ID`, the changes since that
/// revision; then `unleash-updated` with the events of each change, each with the revision as
/// its `id`; a `:keep-alive` comment every 15 seconds; `fetch-mode: polling` when the stream falls
/// so far behind that the changes it missed are gone. The stream ends when the server stops.
#[utoipa::path(
    get,
    path = "/api/client/streaming",
    tag = "Client",
    operation_id = "streamClientFeatures",
    params(
        ("environment" = Option<String>, Query, description = "The environment, when the token is not bound to one; `development` when neither says"),
        ("project" = Option<Vec<String>>, Query, description = "Projects, when the token is not limited to some"),
        ("namePrefix" = Option<String>, Query, description = "Only flags whose name starts with this"),
        ("Last-Event-ID" = Option<String>, Header, description = "The `id` of the last event received, to resume from"),
    ),
    responses(
        (status = 200, description = "An endless `text/event-stream` of `unleash-connected`, `unleash-updated` and `fetch-mode` events, each `data` a delta document",
            content_type = "text/event-stream", body = String),
        (status = 400, description = "The query string is malformed", body = ErrorBody),
        (status = 429, description = "The token holds as many streams as one token may; poll `/api/client/features`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait before trying again"))),
        (status = 503, description = "The server holds as many streams as it may; poll `/api/client/features`", body = ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds to wait before trying again"))),
    ),
)]
pub async fn streaming(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, ApiError> {
    let question = client::question(
        &access,
        ClientQuery::from_pairs(query.into_inner()),
        Protocol::Delta,
    )?;
    let last = held_revision(&request, header::HeaderName::from_static("last-event-id"));
    let stream =
        flag_admin::delivery::delta::follow(&state.app, state.app.delivery(), &access, question, last)
            .await?;
    // An HTTP/1.1 body is chunked, and goes on out of the dispatcher once its head is written.
    // HTTP/1.0 has no chunked bodies: the events run until the connection closes.
    let chunked = request.version() >= actix_web::http::Version::HTTP_11;
    let handoff = chunked
        .then(|| {
            request
                .conn_data::<std::rc::Rc<crate::handoff::Handoff>>()
                .cloned()
        })
        .flatten();
    let mut response = HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        // Sent as written: compressing would hold events back until a block fills.
        .insert_header((header::CONTENT_ENCODING, "identity"))
        // Proxies such as nginx pass the events on at once instead of buffering them.
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(if request.method() == actix_web::http::Method::HEAD {
            // The head a stream opens with, and no stream: the place is given back at once and
            // the connection takes its next request.
            drop(stream);
            futures_util::future::Either::Left(futures_util::stream::empty())
        } else {
            futures_util::future::Either::Right(crate::streaming::body(
                state.clone(),
                stream,
                state.stopping.subscribe(),
                handoff,
            ))
        });
    response.head_mut().no_chunking(!chunked);
    Ok(response)
}
