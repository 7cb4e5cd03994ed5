//! OpenFeature Remote OfrepEvaluation Protocol (OFREP) shapes: `/ofrep/v1/evaluate/flags[/{key}]`.

use serde::Serialize;
use utoipa::ToSchema;

/// An evaluation request: `{"context": {"targetingKey": "user-1", ...}}`.
#[derive(Debug, serde::Deserialize, ToSchema)]
pub struct OfrepRequest {
    /// The evaluation context.
    pub context: OfrepContext,
}

/// OFREP's evaluation context: the targeting key, when there is one, is the `userId`; every
/// other field is an Unleash context field (`appName`, `sessionId`, `remoteAddress`, or a custom
/// field), a string, number or boolean.
#[derive(Debug, serde::Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfrepContext {
    /// The user the flags are evaluated for; a context without one evaluates as one without a
    /// `userId`.
    pub targeting_key: Option<String>,
    /// Other context fields.
    #[serde(flatten)]
    pub fields: std::collections::BTreeMap<String, serde_json::Value>,
}

/// Why a flag has its value (OFREP's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OfrepReason {
    /// The flag's environment switch is off.
    Disabled,
    /// The flag's strategies decided, for this context.
    TargetingMatch,
    /// A variant was chosen by weight.
    Split,
}

/// What went wrong (OFREP's `errorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OfrepErrorCode {
    /// The body is not JSON of the protocol's shape.
    ParseError,
    /// A context field has a value that is not a string, number or boolean.
    InvalidContext,
    /// No flag has this key in the token's environment and projects.
    FlagNotFound,
}

/// Facts about an evaluation beyond its value.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfrepMetadata {
    /// Whether the flag is on for the context.
    pub feature_enabled: bool,
}

/// One flag's evaluation (OFREP's `evaluationSuccess`).
///
/// A flag without variants has a boolean value: whether it is on. A flag whose evaluation
/// chose a variant has the variant's payload as its value (a JSON payload as JSON, a number as
/// a number, other payloads as strings), or the variant's name when it has no payload.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OfrepEvaluation {
    /// The flag.
    pub key: String,
    /// Its value for the context.
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
    /// Why.
    pub reason: OfrepReason,
    /// The variant's name, `enabled` or `disabled` for a flag without variants.
    pub variant: String,
    /// More about it.
    pub metadata: OfrepMetadata,
}

/// A failed evaluation (OFREP's `evaluationFailure`, `flagNotFound` and
/// `bulkEvaluationFailure`).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OfrepFailure {
    /// The flag, for a single-flag request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// What went wrong.
    pub error_code: OfrepErrorCode,
    /// In words.
    pub error_details: String,
}

/// `POST /ofrep/v1/evaluate/flags` (OFREP's `bulkEvaluationSuccess`).
#[derive(Debug, Serialize, ToSchema)]
pub struct OfrepBulkEvaluation {
    /// Every flag of the token's environment and projects.
    pub flags: Vec<OfrepEvaluation>,
}
