//! `GET /api/client/features` and `/api/client/features/{name}`: what Unleash SDKs poll.

use actix_web::{HttpRequest, web};
use flag_store::queries::{self, evaluation::ProjectScope};

use crate::AppState;
use crate::auth::ClientAccess;
use crate::dto::client::{
    ClientFeatureResponse, ClientFeaturesMeta, ClientFeaturesQuery, ClientFeaturesResponse, ClientQuery,
    FeatureQuery,
};
use crate::error::{ApiError, ErrorBody};
use crate::respond::Tagged;

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
            headers(("ETag" = String, description = "Changes with the query and with every write"))),
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
) -> Result<Tagged<ClientFeaturesResponse>, ApiError> {
    let query = query.into_inner();
    let separate = separate_segments(&request)?;
    let echo = ClientFeaturesQuery {
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
    let query_hash = echo.hash()?;
    let scope_projects = echo.project.clone();
    let scope_environment = echo.environment.clone();
    let if_none_match = Tagged::<ClientFeaturesResponse>::if_none_match(&request);
    let tag = |query_hash: &str, revision: i32| format!("\"{query_hash}:{revision}:v1\"");
    // An SDK whose document is current gets 304 without database work while the revision
    // reading stands, and after one question when it does not.
    if let Some(revision) = state.revision.fresh() {
        let etag = tag(&query_hash, revision);
        if Tagged::<ClientFeaturesResponse>::names(if_none_match.as_deref(), &etag) {
            return Ok(Tagged::NotModified { etag });
        }
    }
    let hash = query_hash.clone();
    let watch = std::sync::Arc::clone(&state.revision);
    let (document, revision) = crate::db::run(&state.store, move |conn| {
        let revision = watch.read(conn)?;
        if Tagged::<ClientFeaturesResponse>::names(if_none_match.as_deref(), &tag(&hash, revision)) {
            return Ok((None, revision));
        }
        // One snapshot: the ETag's revision is the one the document reflects.
        queries::snapshot(conn, |conn| {
            let revision = queries::events::latest_id(conn)?;
            let scope = scope_projects.map_or(ProjectScope::All, ProjectScope::Only);
            Ok((
                Some(queries::evaluation::client_features(
                    conn,
                    &scope,
                    &scope_environment,
                )?),
                revision,
            ))
        })
    })
    .await?;
    let etag = tag(&query_hash, revision);
    let Some(document) = document else {
        return Ok(Tagged::NotModified { etag });
    };
    if Tagged::<ClientFeaturesResponse>::is_current(&request, &etag) {
        return Ok(Tagged::NotModified { etag });
    }
    let meta = ClientFeaturesMeta {
        revision_id: revision,
        etag: etag.clone(),
        query_hash,
    };
    Ok(Tagged::Fresh {
        etag,
        body: ClientFeaturesResponse::new(document, echo, meta),
    })
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
