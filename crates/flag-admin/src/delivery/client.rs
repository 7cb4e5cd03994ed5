//! The client API: the document Unleash's server-side SDKs poll, for a token's environment and
//! projects.

pub mod types;

use flag_store::models::TagRef;
use flag_store::queries::{self, evaluation::ProjectScope};
use sha2::{Digest as _, Sha256};

use crate::delivery::client::types::{
    ClientFeatureResponse, ClientFeaturesMeta, ClientFeaturesQuery, ClientFeaturesResponse, ClientQuery,
};
use crate::identity::auth::{Access, ClientAccess, DEFAULT_ENVIRONMENT};
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

/// How an SDK's question is answered, which decides what of its query the answer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// The whole document (`/api/client/features`): only flags with any of the query's tags, and
    /// segments inlined or sent apart as the SDK's client specification says.
    Features(ClientSpec),
    /// Events (`/api/client/delta`, `/api/client/streaming`): as in Unleash's delta API,
    /// segments always travel apart from the flags that name them and tags do not filter, so
    /// the query's tags are not read and one that is not `type:value` is no error.
    Delta,
}

/// What a request asks for: the token's environment, else the query's, else
/// [`DEFAULT_ENVIRONMENT`]; the token's projects, else the query's; the name prefix; and what
/// `protocol` reads besides: the tags, and whether segment constraints are inlined.
///
/// The document echoes its query as Unleash does, so it keeps the query's projects in their
/// order and an empty name prefix. Events echo nothing, so their question is normalised (the
/// projects sorted and without repeats, an empty prefix none), and questions that select the
/// same flags share a feed and one place within a token's limit on streamed questions.
pub fn question(
    access: &ClientAccess,
    query: ClientQuery,
    protocol: Protocol,
) -> Result<ClientFeaturesQuery, AdminError> {
    let (tag, inline_segment_constraints) = match protocol {
        Protocol::Features(spec) => (query.tags()?, spec.inlines_segments()),
        Protocol::Delta => (None, false),
    };
    let mut project = access.projects.clone().or(query.project);
    let mut name_prefix = query.name_prefix;
    if protocol == Protocol::Delta {
        if let Some(projects) = &mut project {
            projects.sort_unstable();
            projects.dedup();
        }
        name_prefix = name_prefix.filter(|prefix| !prefix.is_empty());
    }
    Ok(ClientFeaturesQuery {
        environment: access
            .environment
            .clone()
            .or(query.environment)
            .unwrap_or_else(|| DEFAULT_ENVIRONMENT.into()),
        project,
        name_prefix,
        tag,
        inline_segment_constraints,
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

/// Who may read the flags as a server-side SDK sees them: client and backend tokens.
pub const RENDER: Access = Access::Client;

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

/// Who may read one flag as a server-side SDK sees it: client and backend tokens.
pub const FEATURE: Access = Access::Client;

/// The flag `name` as the token's SDK sees it, in the token's environment, else `environment`,
/// else [`DEFAULT_ENVIRONMENT`].
pub async fn feature(
    ctx: &Runtime,
    access: &ClientAccess,
    name: String,
    environment: Option<String>,
    spec: ClientSpec,
) -> Result<ClientFeatureResponse, AdminError> {
    let query = ClientQuery {
        environment,
        ..ClientQuery::default()
    };
    let ClientFeaturesQuery {
        environment,
        project,
        inline_segment_constraints,
        ..
    } = question(access, query, Protocol::Features(spec))?;
    let scope = project.map_or(ProjectScope::All, ProjectScope::Only);
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
        !inline_segment_constraints,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    type Outcome = Result<(), Box<dyn std::error::Error>>;

    fn access(environment: Option<&str>, projects: Option<&[&str]>) -> ClientAccess {
        ClientAccess {
            environment: environment.map(str::to_owned),
            projects: projects.map(|projects| projects.iter().map(|project| (*project).to_owned()).collect()),
            token: "token".into(),
        }
    }

    fn query(pairs: &[(&str, &str)]) -> ClientQuery {
        ClientQuery::from_pairs(
            pairs
                .iter()
                .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                .collect(),
        )
    }

    fn separate() -> Result<Protocol, AdminError> {
        Ok(Protocol::Features(ClientSpec::parse(Some("5.2.0"))?))
    }

    #[test]
    fn the_document_and_the_delta_api_read_one_query_alike() -> Outcome {
        let pairs = [
            ("environment", "production"),
            ("project", "billing"),
            ("project", "shop"),
            ("namePrefix", "checkout-"),
        ];
        let token = access(None, None);
        let document = question(&token, query(&pairs), separate()?)?;
        let delta = question(&token, query(&pairs), Protocol::Delta)?;
        assert_eq!(document, delta);
        assert_eq!(
            document,
            ClientFeaturesQuery {
                environment: "production".into(),
                project: Some(vec!["billing".into(), "shop".into()]),
                name_prefix: Some("checkout-".into()),
                tag: None,
                inline_segment_constraints: false,
            }
        );
        Ok(())
    }

    #[test]
    fn the_document_echoes_its_query_and_events_normalise_theirs() -> Outcome {
        let token = access(None, None);
        let asked = || {
            query(&[
                ("project", "b"),
                ("project", "a"),
                ("project", "b"),
                ("namePrefix", ""),
            ])
        };
        let document = question(&token, asked(), separate()?)?;
        assert_eq!(document.project, Some(vec!["b".into(), "a".into(), "b".into()]));
        assert_eq!(document.name_prefix, Some(String::new()));
        let delta = question(&token, asked(), Protocol::Delta)?;
        let same = question(
            &token,
            query(&[("project", "a"), ("project", "b")]),
            Protocol::Delta,
        )?;
        assert_eq!(delta, same);
        assert_eq!(delta.name_prefix, None);
        Ok(())
    }

    #[test]
    fn the_tokens_environment_and_projects_win_over_the_querys() -> Outcome {
        let pairs = [("environment", "development"), ("project", "other")];
        let bound = access(Some("production"), Some(&["alpha", "beta"]));
        for protocol in [separate()?, Protocol::Delta] {
            let asked = question(&bound, query(&pairs), protocol)?;
            assert_eq!(asked.environment, "production");
            assert_eq!(asked.project, Some(vec!["alpha".into(), "beta".into()]));
            let unbound = question(&access(None, None), query(&[]), protocol)?;
            assert_eq!(unbound.environment, DEFAULT_ENVIRONMENT);
            assert_eq!(unbound.project, None);
            let every_project = question(&access(None, None), query(&[("project", "*")]), protocol)?;
            assert_eq!(every_project.project, None);
        }
        Ok(())
    }

    #[test]
    fn only_the_document_reads_tags_and_the_client_specification() -> Outcome {
        let token = access(None, None);
        let tagged = [("tag", "simple:web"), ("tag", "simple:mobile")];
        let inlined = question(
            &token,
            query(&tagged),
            Protocol::Features(ClientSpec::parse(None)?),
        )?;
        assert_eq!(
            inlined.tag,
            Some(vec![
                ["simple".into(), "web".into()],
                ["simple".into(), "mobile".into()]
            ])
        );
        assert!(inlined.inline_segment_constraints);
        let delta = question(&token, query(&tagged), Protocol::Delta)?;
        assert_eq!(delta.tag, None);
        assert!(!delta.inline_segment_constraints);
        // A tag that is not `type:value` is refused by the document and unread by the delta API.
        let untyped = [("tag", "untyped")];
        assert!(matches!(
            question(&token, query(&untyped), separate()?),
            Err(AdminError::Validation { .. })
        ));
        assert_eq!(
            question(&token, query(&untyped), Protocol::Delta)?,
            question(&token, query(&[]), Protocol::Delta)?
        );
        Ok(())
    }
}
