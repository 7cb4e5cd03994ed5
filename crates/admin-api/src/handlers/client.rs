//! `GET /api/client/features` and `/api/client/features/{name}`: what Unleash SDKs poll.

use std::sync::Arc;

use actix_web::{HttpRequest, web};
use flag_store::queries::{self, evaluation::ProjectScope};
use sha2::{Digest as _, Sha256};

use crate::AppState;
use crate::auth::ClientAccess;
use crate::client_cache::{Answer, Cached, Precompressed};
use crate::dto::client::{
    ClientFeatureResponse, ClientFeaturesMeta, ClientFeaturesQuery, ClientFeaturesResponse, ClientQuery,
    FeatureQuery,
};
use crate::error::{ApiError, ErrorBody};

/// The client API's operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(features, feature))]
pub struct Api;

/// Whether the `Unleash-Client-Spec` header asks for segments sent separately (4.2.0 or later).
fn separate_segments(request: &HttpRequest) -> Result<bool, ApiError> {
    let Some(header) = request.headers().get("Unleash-Client-Spec") else {
        return Ok(false);
    };
    let text = header.to_str().unwrap_or_default().trim();
    let version = semver::Version::parse(text.trim_start_matches('v')).map_err(|_| {
        ApiError::bad_request(format!("Unleash-Client-Spec {text:?} is not a semantic version"))
    })?;
    Ok(version >= semver::Version::new(4, 2, 0))
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
    security(("apiKey" = []))
)]
pub async fn features(
    state: web::Data<AppState>,
    access: ClientAccess,
    request: HttpRequest,
    query: web::Query<ClientQuery>,
) -> Result<Cached, ApiError> {
    let query = query.into_inner();
    let separate = separate_segments(&request)?;
    let question = ClientFeaturesQuery {
        environment: access
            .environment
            .clone()
            .or(query.environment)
            .unwrap_or_else(|| "development".into()),
        project: access
            .projects
            .clone()
            .or_else(|| query.project.map(|project| vec![project])),
        name_prefix: query.name_prefix,
        inline_segment_constraints: !separate,
    };
    let revision = state.revision.current(&state.store).await?;
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
) -> Result<Arc<Answer>, ApiError> {
    let scope = question
        .project
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    let environment = question.environment.clone();
    let (document, revision) = crate::db::run(&state.store, move |conn| {
        queries::snapshot(conn, |conn| {
            let revision = queries::events::latest_id(conn)?;
            Ok((
                queries::evaluation::client_features(conn, &scope, &environment)?,
                revision,
            ))
        })
    })
    .await?;
    state
        .cpu
        .run(move || {
            // Hashed as it is serialised, without holding a second copy of the document.
            let mut hasher = DigestWriter(Sha256::new());
            serde_json::to_writer(&mut hasher, &document)
                .map_err(|error| ApiError::Internal(format!("cannot serialise client features: {error}")))?;
            let digest: [u8; 32] = hasher.0.finalize().into();
            if let Some(previous) = previous.filter(|previous| previous.digest == digest) {
                return Ok(previous);
            }
            let query_hash = question.hash()?;
            let etag = format!("\"{query_hash}:{}:v1\"", hex::encode(&digest[..8]));
            let meta = ClientFeaturesMeta {
                revision_id: revision,
                etag: etag.clone(),
                query_hash,
            };
            let json = serde_json::to_vec(&ClientFeaturesResponse::new(document, question, meta))
                .map_err(|error| ApiError::Internal(format!("cannot serialise client features: {error}")))?;
            let body = Precompressed::new(json)
                .map_err(|error| ApiError::Internal(format!("cannot compress client features: {error}")))?;
            crate::memory::release_free_pages();
            Ok(Arc::new(Answer { etag, digest, body }))
        })
        .await?
}

/// Feeds what is written to a digest.
struct DigestWriter(Sha256);

impl std::io::Write for DigestWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    security(("apiKey" = []))
)]
pub async fn feature(
    state: web::Data<AppState>,
    access: ClientAccess,
    request: HttpRequest,
    path: web::Path<String>,
    query: web::Query<FeatureQuery>,
) -> Result<web::Json<ClientFeatureResponse>, ApiError> {
    let name = path.into_inner();
    let separate = separate_segments(&request)?;
    let environment = access
        .environment
        .clone()
        .or(query.into_inner().environment)
        .unwrap_or_else(|| "development".into());
    let projects = access.projects.clone();
    let document = crate::db::run(&state.store, move |conn| {
        let scope = projects.map_or(ProjectScope::All, ProjectScope::Only);
        queries::evaluation::client_features(conn, &scope, &environment)
    })
    .await?;
    let feature = document
        .features
        .into_iter()
        .find(|feature| feature.name == name)
        .ok_or_else(|| ApiError::NotFound(format!("could not find feature flag {name}")))?;
    Ok(web::Json(ClientFeatureResponse::new(
        feature,
        &document.segments,
        separate,
    )))
}
