//! Answers of the client API (`/api/client/features`), the document Unleash SDKs poll.

use flag_eval::{ClientFeatures, Constraint, Dependency, Feature, Parameters, Segment, Strategy, Variant};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::{IntoParams, ToSchema};

use crate::catalogue::variants::types::VariantSchema;
use crate::runtime::error::AdminError;

/// Query string of `GET /api/client/features`; `project` and `tag` may repeat.
#[derive(Debug, Default, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ClientQuery {
    /// The environment, when the token is not bound to one; `development` when neither says.
    pub environment: Option<String>,
    /// Projects, when the token is not limited to some; any of them.
    pub project: Option<Vec<String>>,
    /// Only features whose name starts with this.
    #[param(rename = "namePrefix")]
    pub name_prefix: Option<String>,
    /// Only features with any of these tags, each `type:value`.
    pub tag: Option<Vec<String>>,
}

impl ClientQuery {
    /// The query from its `key=value` pairs, keys repeated for lists; unknown keys are ignored.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Self {
        let mut query = Self::default();
        for (key, value) in pairs {
            match key.as_str() {
                "environment" => query.environment = Some(value),
                "project" if value != "*" => query.project.get_or_insert_with(Vec::new).push(value),
                "namePrefix" => query.name_prefix = Some(value),
                "tag" => query.tag.get_or_insert_with(Vec::new).push(value),
                _ => {}
            }
        }
        query
    }

    /// The tags asked for, as `[type, value]`; one that is not `type:value` is a 400.
    pub fn tags(&self) -> Result<Option<Vec<[String; 2]>>, AdminError> {
        self.tag
            .as_ref()
            .map(|tags| {
                tags.iter()
                    .map(|tag| match tag.split_once(':') {
                        Some((kind, value)) if !kind.is_empty() && !value.is_empty() => {
                            Ok([kind.to_owned(), value.to_owned()])
                        }
                        _ => Err(AdminError::invalid(
                            "/query/tag",
                            format!("{tag:?} is not a tag: type:value"),
                        )),
                    })
                    .collect()
            })
            .transpose()
    }
}

/// Query string of `GET /api/client/features/{featureName}`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FeatureQuery {
    /// The environment, when the token is not bound to one; `development` when neither says.
    #[serde(default)]
    pub environment: Option<String>,
}

/// What the document was made for, as the answer repeats it and its `ETag` hashes it; made by
/// [`question`](crate::delivery::client::question) alone, so every protocol reads a query alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientFeaturesQuery {
    /// The token's environment, else the query's, else `development`.
    pub environment: String,
    /// The token's projects, else the query's project, sorted and without repeats; absent for
    /// every project.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<Vec<String>>,
    /// The query's name prefix; absent when none, or an empty one, was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_prefix: Option<String>,
    /// The query's tags, as `[type, value]`: features with any of them; absent when none were
    /// given, and for the delta API, where tags do not filter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<Vec<[String; 2]>>,
    /// False when the SDK asked for segments separately (`Unleash-Client-Spec` 4.2.0 or later),
    /// and always for the delta API.
    pub inline_segment_constraints: bool,
}

impl ClientFeaturesQuery {
    /// The first 8 bytes of the SHA-256 of the query as JSON, in hex: part of the `ETag`.
    pub fn hash(&self) -> Result<String, AdminError> {
        let json = serde_json::to_vec(self).map_err(|error| AdminError::Internal(error.to_string()))?;
        Ok(hex::encode(&Sha256::digest(&json)[..8]))
    }
}

/// Which version of the document an answer is.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientFeaturesMeta {
    /// The latest audit event's id: any write changes it.
    pub revision_id: i32,
    /// The `ETag` header's value, quoted.
    pub etag: String,
    /// The first 8 bytes of the SHA-256 of `query` as JSON, in hex.
    pub query_hash: String,
}

/// Every feature an SDK sees (Unleash's `clientFeaturesSchema`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ClientFeaturesResponse {
    /// Always 2.
    #[schema(example = 2)]
    version: u32,
    features: Vec<ClientFeatureResponse>,
    query: ClientFeaturesQuery,
    meta: ClientFeaturesMeta,
    /// The segments strategies name, when the SDK asked for them separately.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<SegmentSchema>)]
    segments: Option<Vec<Segment>>,
}

impl ClientFeaturesResponse {
    /// The answer for `query`: the document's features whose names start with its prefix,
    /// with segment constraints inlined unless `query` asks for segments separately.
    pub fn new(document: ClientFeatures, query: ClientFeaturesQuery, meta: ClientFeaturesMeta) -> Self {
        let ClientFeatures {
            features, segments, ..
        } = document;
        let separate = !query.inline_segment_constraints;
        let prefix = query.name_prefix.as_deref().unwrap_or_default();
        let features = features
            .into_iter()
            .filter(|feature| feature.name.starts_with(prefix))
            .map(|feature| ClientFeatureResponse::new(feature, &segments, separate))
            .collect();
        Self {
            version: 2,
            features,
            query,
            meta,
            segments: separate.then_some(segments),
        }
    }
}

/// One feature as an SDK sees it in one environment (Unleash's `clientFeatureSchema`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientFeatureResponse {
    name: String,
    /// `release`, `experiment`, `operational`, `kill-switch`, `permission`...
    #[serde(rename = "type")]
    feature_type: String,
    enabled: bool,
    project: String,
    stale: bool,
    /// The enabled strategies, in evaluation order.
    strategies: Vec<ClientStrategy>,
    #[schema(value_type = Vec<VariantSchema>)]
    variants: Vec<Variant>,
    description: Option<String>,
    impression_data: bool,
    /// Parent features; absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(value_type = Vec<DependencySchema>)]
    dependencies: Vec<ClientDependency>,
}

/// A dependency as the client API writes it, as Unleash sends it: `enabled` always; `variants`
/// on an enabled parent (`[]` when the dependency names none), never on a disabled one, as the
/// store reads them (`queries::evaluation`).
#[derive(Debug, Serialize)]
struct ClientDependency {
    feature: String,
    enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    variants: Option<Vec<String>>,
}

impl From<Dependency> for ClientDependency {
    fn from(dependency: Dependency) -> Self {
        Self {
            feature: dependency.feature,
            enabled: dependency.enabled.unwrap_or(true),
            variants: dependency.variants,
        }
    }
}

impl ClientFeatureResponse {
    /// `feature` as sent to SDKs: with the constraints of its strategies' segments appended to
    /// each strategy's own, unless `separate`, when strategies name their segments instead.
    pub fn new(feature: Feature, segments: &[Segment], separate: bool) -> Self {
        let strategy_out = |strategy: Strategy| {
            let mut constraints = strategy.constraints;
            if !separate {
                for id in &strategy.segments {
                    if let Some(segment) = segments.iter().find(|segment| segment.id == *id) {
                        constraints.extend(segment.constraints.iter().cloned());
                    }
                }
            }
            ClientStrategy {
                name: strategy.name,
                constraints,
                parameters: strategy.parameters,
                variants: strategy.variants,
                segments: separate.then_some(strategy.segments),
            }
        };
        Self {
            name: feature.name,
            feature_type: feature.feature_type.unwrap_or_else(|| "release".into()),
            enabled: feature.enabled,
            project: feature.project.unwrap_or_else(|| "default".into()),
            stale: feature.stale.unwrap_or(false),
            strategies: feature.strategies.into_iter().map(strategy_out).collect(),
            variants: feature.variants,
            description: feature.description,
            impression_data: feature.impression_data.unwrap_or(false),
            dependencies: feature
                .dependencies
                .into_iter()
                .map(ClientDependency::from)
                .collect(),
        }
    }
}

/// A strategy as SDKs see it: no id, title or switch.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientStrategy {
    /// `default`, `flexibleRollout`, or a custom strategy type.
    name: String,
    /// The strategy's constraints, then, for SDKs that do not read segments, its segments'.
    #[schema(value_type = Vec<crate::catalogue::model::ConstraintSchema>)]
    constraints: Vec<Constraint>,
    #[schema(value_type = BTreeMap<String, String>)]
    parameters: Parameters,
    #[schema(value_type = Vec<VariantSchema>)]
    variants: Vec<Variant>,
    /// Segment ids, for SDKs that read segments separately.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Vec<i64>)]
    segments: Option<Vec<i64>>,
}

pub use schema::{DependencySchema, SegmentSchema};

/// The OpenAPI description of flag-eval's types as the client API writes them.
mod schema {
    #![allow(dead_code, reason = "schema-only types: read by utoipa, never built")]

    use utoipa::ToSchema;

    use crate::catalogue::model::ConstraintSchema;

    /// A segment, sent separately to SDKs that ask for it (Unleash's `clientSegmentSchema`).
    #[derive(Debug, ToSchema)]
    #[schema(as = ClientSegment)]
    pub struct SegmentSchema {
        id: i64,
        name: String,
        constraints: Vec<ConstraintSchema>,
    }

    /// A dependency on a parent feature (Unleash's `dependentFeatureSchema`).
    #[derive(Debug, ToSchema)]
    #[schema(as = FeatureDependency)]
    pub struct DependencySchema {
        /// The parent feature.
        feature: String,
        /// Whether the parent must be enabled or disabled.
        enabled: bool,
        /// The parent's variant must be one of these; absent when the dependency names none.
        variants: Option<Vec<String>>,
    }
}

pub use delta_schema::{DeltaEventSchema, DeltaSchema};

/// The OpenAPI description of the delta API's document, which `flag_admin::delta` writes
/// directly, each flag and segment serialised once.
mod delta_schema {
    #![allow(dead_code, reason = "schema-only types: read by utoipa, never built")]

    use serde::Serialize;
    use utoipa::ToSchema;

    use super::{ClientFeatureResponse, SegmentSchema};

    /// Changes to apply in order (Unleash's `clientFeaturesDeltaSchema`).
    #[derive(Debug, Serialize, ToSchema)]
    #[schema(as = ClientFeaturesDelta)]
    pub struct DeltaSchema {
        events: Vec<DeltaEventSchema>,
    }

    /// What an event does.
    #[derive(Debug, Serialize, ToSchema)]
    #[serde(rename_all = "kebab-case")]
    enum DeltaEventType {
        /// The whole state: `features` and `segments` replace everything held.
        Hydration,
        /// `feature` is added or replaces the flag of its name.
        FeatureUpdated,
        /// The flag `featureName` of `project` is gone: archived, deleted, renamed away from the
        /// name prefix, or moved out of the token's projects.
        FeatureRemoved,
        /// `segment` is added or replaces the segment of its id.
        SegmentUpdated,
        /// The segment `segmentId` is gone.
        SegmentRemoved,
    }

    /// One event; `type` says which other fields it has.
    #[derive(Debug, Serialize, ToSchema)]
    #[serde(rename_all = "camelCase")]
    #[schema(as = ClientFeaturesDeltaEvent)]
    pub struct DeltaEventSchema {
        /// The revision the SDK holds after this event: the store's newest audit event id when
        /// the state it leads to was read.
        event_id: i32,
        #[serde(rename = "type")]
        kind: DeltaEventType,
        /// `hydration`: every flag.
        features: Option<Vec<ClientFeatureResponse>>,
        /// `hydration`: every segment.
        #[schema(value_type = Option<Vec<SegmentSchema>>)]
        segments: Option<Vec<serde_json::Value>>,
        /// `feature-updated`: the flag.
        feature: Option<ClientFeatureResponse>,
        /// `feature-removed`: the flag's name.
        feature_name: Option<String>,
        /// `feature-removed`: the project it was in.
        project: Option<String>,
        /// `segment-updated`: the segment.
        #[schema(value_type = Option<SegmentSchema>)]
        segment: Option<serde_json::Value>,
        /// `segment-removed`: the segment's id.
        segment_id: Option<i64>,
    }
}
