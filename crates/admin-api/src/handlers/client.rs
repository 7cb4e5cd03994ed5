//! `GET /api/client/features` and `/api/client/features/{name}`: what Unleash SDKs poll.

use std::sync::Arc;

use actix_web::{HttpRequest, web};
use flag_admin::client::{self, ClientSpec};
use flag_admin::dto::client::{
    ClientFeatureResponse, ClientFeaturesQuery, ClientFeaturesResponse, ClientQuery, FeatureQuery,
};

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
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "An admin or frontend token: the client API takes client and backend tokens only", body = ErrorBody),
    ),
)]
pub async fn features(
    state: web::Data<AppState>,
    ClientToken(access): ClientToken,
    request: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<Cached, ApiError> {
    let query = ClientQuery::from_pairs(query.into_inner());
    let question = client::question(&access, query, client_spec(&request)?)?;
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
            flag_admin::memory::release_free_pages();
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
        (status = 401, description = "No token, or an unknown one", body = ErrorBody),
        (status = 403, description = "An admin or frontend token: the client API takes client and backend tokens only", body = ErrorBody),
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
