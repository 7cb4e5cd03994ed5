//! The client API: the document Unleash's server-side SDKs poll, for a token's environment and
//! projects.

pub mod types;

use flag_store::models::TagRef;
use flag_store::queries::{self, evaluation::ProjectScope};
use sha2::{Digest as _, Sha256};

use crate::delivery::client::types::{
    ClientFeatureResponse, ClientFeaturesMeta, ClientFeaturesQuery, ClientFeaturesResponse, ClientQuery,
};
use crate::identity::auth::{ClientAccess, DEFAULT_ENVIRONMENT};
use crate::{AdminError, runtime::Runtime, runtime::db};

/// The client specification an SDK follows, from its `Unleash-Client-Spec` header: SDKs of
/// 4.2.0 or later take segments apart from the strategies that name them; older ones, and SDKs
/// that send no version, get each segment's constraints inlined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientSpec {
    inline_segment_constraints: bool,
}

impl ClientSpec {
    /// The specification `header` names; a value that is not a semantic version is refused.
    pub fn parse(header: Option<&str>) -> Result<Self, AdminError> {
        let Some(text) = header.map(str::trim) else {
            return Ok(Self {
                inline_segment_constraints: true,
            });
        };
        let version = semver::Version::parse(text.trim_start_matches('v')).map_err(|_| {
            AdminError::bad_request(format!("Unleash-Client-Spec {text:?} is not a semantic version"))
        })?;
        Ok(Self {
            inline_segment_constraints: version < semver::Version::new(4, 2, 0),
        })
    }

    /// Whether segments' constraints are inlined into the strategies that name them.
    pub fn inlines_segments(self) -> bool {
        self.inline_segment_constraints
    }
}

/// What a request asks for: the token's environment, else the query's, else
/// [`DEFAULT_ENVIRONMENT`]; the token's projects, else the query's project; and whether segment
/// constraints are inlined (SDKs before client specification 4.2.0) or sent apart.
pub fn question(
    access: &ClientAccess,
    query: ClientQuery,
    spec: ClientSpec,
) -> Result<ClientFeaturesQuery, AdminError> {
    let tag = query.tags()?;
    Ok(ClientFeaturesQuery {
        environment: access
            .environment
            .clone()
            .or(query.environment)
            .unwrap_or_else(|| DEFAULT_ENVIRONMENT.into()),
        project: access.projects.clone().or(query.project),
        name_prefix: query.name_prefix,
        tag,
        inline_segment_constraints: spec.inlines_segments(),
    })
}

/// The document answering a question, as JSON, with its `ETag` and digest.
#[derive(Debug)]
pub struct Rendered {
    /// `"<query hash>:<digest>:v1"`: Unleash's form, with a digest of the document in place of
    /// the revision, so it changes exactly when the answer does and every replica gives the same
    /// answer the same tag.
    pub etag: String,
    /// SHA-256 of the document.
    pub digest: [u8; 32],
    /// The answer.
    pub json: Vec<u8>,
}

/// Reads the document for `question` in one snapshot with the revision it reflects, then
/// serialises it on the CPU pool; `None` when its digest is `previous`, the digest of the
/// answer it would replace, which then still stands.
pub async fn render(
    ctx: &Runtime,
    question: ClientFeaturesQuery,
    previous: Option<[u8; 32]>,
) -> Result<Option<Rendered>, AdminError> {
    let scope = question
        .project
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    let environment = question.environment.clone();
    let tags: Option<Vec<TagRef>> = question.tag.as_ref().map(|tags| {
        tags.iter()
            .map(|[tag_type, value]| TagRef {
                tag_type: tag_type.clone(),
                value: value.clone(),
            })
            .collect()
    });
    let (mut document, revision, tagged) = db::run(&ctx.store, move |conn| {
        queries::snapshot(conn, |conn| {
            let revision = queries::events::latest_id(conn)?;
            let tagged = tags
                .map(|tags| queries::tags::features_with_any(conn, &tags))
                .transpose()?;
            Ok((
                queries::evaluation::client_features(conn, &scope, &environment)?,
                revision,
                tagged,
            ))
        })
    })
    .await?;
    if let Some(tagged) = tagged {
        document
            .features
            .retain(|feature| tagged.binary_search(&feature.name).is_ok());
    }
    let unserialisable =
        |error: serde_json::Error| AdminError::Internal(format!("cannot serialise client features: {error}"));
    ctx.cpu
        .run(move || {
            // Hashed as it is serialised, without holding a second copy of the document.
            let mut hasher = DigestWriter(Sha256::new());
            serde_json::to_writer(&mut hasher, &document).map_err(unserialisable)?;
            let digest: [u8; 32] = hasher.0.finalize().into();
            if previous == Some(digest) {
                return Ok(None);
            }
            let query_hash = question.hash()?;
            let etag = format!("\"{query_hash}:{}:v1\"", hex::encode(&digest[..8]));
            let meta = ClientFeaturesMeta {
                revision_id: revision,
                etag: etag.clone(),
                query_hash,
            };
            let json = serde_json::to_vec(&ClientFeaturesResponse::new(document, question, meta))
                .map_err(unserialisable)?;
            Ok(Some(Rendered { etag, digest, json }))
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

/// The flag `name` as the token's SDK sees it, in the token's environment, else `environment`,
/// else [`DEFAULT_ENVIRONMENT`].
pub async fn feature(
    ctx: &Runtime,
    access: &ClientAccess,
    name: String,
    environment: Option<String>,
    spec: ClientSpec,
) -> Result<ClientFeatureResponse, AdminError> {
    let environment = access
        .environment
        .clone()
        .or(environment)
        .unwrap_or_else(|| DEFAULT_ENVIRONMENT.into());
    let scope = access
        .projects
        .clone()
        .map_or(ProjectScope::All, ProjectScope::Only);
    let document = db::run(&ctx.store, move |conn| {
        queries::evaluation::client_features(conn, &scope, &environment)
    })
    .await?;
    let feature = document
        .features
        .into_iter()
        .find(|feature| feature.name == name)
        .ok_or_else(|| AdminError::NotFound(format!("could not find feature flag {name}")))?;
    Ok(ClientFeatureResponse::new(
        feature,
        &document.segments,
        !spec.inlines_segments(),
    ))
}
