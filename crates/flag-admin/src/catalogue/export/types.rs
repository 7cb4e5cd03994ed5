//! Export and import of flags: `/api/admin/features-batch`.

pub use flag_store::queries::export::ExportDocument;
use flag_store::queries::export::Finding;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /api/admin/features-batch/export`: the flags named, else those with a tag of
/// this value, else a project's live flags, else every live flag.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExportQuery {
    /// The environment whose strategies, variants and switch are exported.
    pub environment: String,
    /// The flags, archived ones included.
    #[serde(default)]
    pub features: Option<Vec<String>>,
    /// A tag value.
    #[serde(default)]
    pub tag: Option<String>,
    /// A project.
    #[serde(default)]
    pub project: Option<String>,
    /// Accepted, with no effect: the answer is always JSON.
    #[serde(default)]
    pub download_file: Option<bool>,
}

/// Body of the import and its validation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// The project to import into.
    pub project: String,
    /// The environment whose state the document sets.
    pub environment: String,
    /// The export document.
    #[schema(value_type = ExportDocumentSchema)]
    pub data: ExportDocument,
}

/// The export document (Unleash's `exportResultSchema`), as the export answers it and the import
/// takes it. Schema only: the document is [`ExportDocument`].
#[derive(Debug, ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code, reason = "schema-only: the document is ExportDocument")]
pub struct ExportDocumentSchema {
    /// The flags: name, type, project, description, stale, impression data, created-at, archived.
    #[schema(value_type = Vec<Object>)]
    features: Vec<serde_json::Value>,
    /// Their strategies in the environment, each with `featureName` and its constraints, segments
    /// (ids), variants, title and sort order.
    #[schema(value_type = Vec<Object>)]
    feature_strategies: Vec<serde_json::Value>,
    /// Their state in the environment: `enabled` and variants.
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    feature_environments: Option<Vec<serde_json::Value>>,
    /// The context fields they use, with legal values.
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    context_fields: Option<Vec<serde_json::Value>>,
    /// Their tags: `featureName`, `tagType`, `tagValue`.
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    feature_tags: Option<Vec<serde_json::Value>>,
    /// The segments their strategies name, with their constraints.
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    segments: Option<Vec<serde_json::Value>>,
    /// The tag types their tags use.
    #[schema(value_type = Vec<Object>)]
    tag_types: Vec<serde_json::Value>,
    /// Their parents: `{feature, dependencies: [{feature, enabled, variants}]}`.
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    dependencies: Option<Vec<serde_json::Value>>,
    /// Links.
    #[schema(nullable = false, value_type = Option<Vec<Object>>)]
    links: Option<Vec<serde_json::Value>>,
}

/// A finding: what, and which items.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FindingOut {
    /// What.
    pub message: String,
    /// Which.
    pub affected_items: Vec<String>,
}

impl From<Finding> for FindingOut {
    fn from(finding: Finding) -> Self {
        Self {
            message: finding.message,
            affected_items: finding.affected_items,
        }
    }
}

/// What importing a document would do.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportCheckOut {
    /// What stops the import.
    pub errors: Vec<FindingOut>,
    /// What the import will do that may surprise.
    pub warnings: Vec<FindingOut>,
    /// Permissions the caller lacks: none, since the import is declared for writers.
    pub permissions: Vec<FindingOut>,
}
