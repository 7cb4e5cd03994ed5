//! An Unleash-compatible feature-flag evaluation engine.
//!
//! `flag-eval` reads Unleash's client-features document (what `GET /api/client/features`
//! returns), compiles it once, and then answers [`Engine::is_enabled`] and [`Engine::variant`]
//! exactly as Unleash's SDKs do, with no parsing and no heap allocation per call (one exception:
//! under `caseInsensitive`, a context value holding a capital sigma is lower-cased whole).
//! [`Engine::explain`] gives the playground's view of the same decision: every strategy,
//! constraint and segment with its result.
//!
//! The crate does no IO. It never reads a clock, a random source, the environment or the host
//! name: the current time and a random seed travel on the [`Context`], and the host name for
//! `applicationHostname` strategies is a [`CompileOptions`] field.
//!
//! ```
//! use flag_eval::{ClientFeatures, Context, Engine};
//!
//! let document: ClientFeatures = serde_json::from_str(r#"{
//!     "version": 2,
//!     "features": [{
//!         "name": "checkout.new",
//!         "enabled": true,
//!         "strategies": [{
//!             "name": "flexibleRollout",
//!             "parameters": {"rollout": "100", "stickiness": "userId", "groupId": "checkout.new"},
//!             "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]
//!         }],
//!         "variants": [{"name": "blue", "weight": 1000}]
//!     }]
//! }"#)?;
//! let (engine, warnings) = Engine::compile(&document);
//! assert!(warnings.is_empty());
//!
//! let pro = Context::for_user("42").with_property("plan", "pro");
//! assert!(engine.is_enabled("checkout.new", &pro));
//! assert_eq!(engine.variant("checkout.new", &pro).name, "blue");
//!
//! let free = Context::for_user("42").with_property("plan", "free");
//! let explanation = engine.explain("checkout.new", &free).ok_or("no such flag")?;
//! assert!(!explanation.is_enabled);
//! assert!(!explanation.strategies[0].constraints[0].result);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod combinations;
mod constraint;
mod context;
mod engine;
mod error;
mod explain;
mod hash;
pub mod model;
mod properties;
mod strategy;
mod text;
mod variant;

pub use combinations::{
    Combination, CombinationLimitExceeded, ContextBytesExceeded, ContextCombinations, ContextCursor,
    DEFAULT_COMBINATION_LIMIT, DEFAULT_CONTEXT_BYTES_LIMIT, context_from_json,
};
pub use constraint::{DEFAULT_REGEX_SIZE_LIMIT, Operator, fold_case};
pub use context::{Context, CurrentTime, Randomness, parse_time, parse_time_strict};
pub use engine::{Engine, Flag, PreparedFlag};
pub use error::{ValidationError, Warning};
pub use explain::{
    ConstraintResult, EvaluationStatus, Explanation, PlaygroundVariant, SegmentResult, StrategyExplanation,
    StrategyResult, StrategyVariant, Tristate,
};
pub use hash::{STRATEGY_SEED, VARIANT_SEED, bucket, murmur};
pub use model::{
    ClientFeatures, Constraint, Delta, DeltaEvent, Dependency, Feature, Parameters, Payload, Segment, State,
    Strategy, Variant, parameter_text,
};
pub use properties::Properties;
pub use strategy::CompileOptions;
pub use variant::{ResolvedVariant, VariantWeightError, fix_variant_weights};

/// Compiles a client-features document with default options; see [`Engine::compile`].
pub fn compile(document: &ClientFeatures) -> (Engine, Vec<Warning>) {
    Engine::compile(document)
}

/// Checks a flag strictly, as the admin API does before a write: every problem that compiling
/// would turn into a warning is an error here. `known_segments` are the segment ids that exist.
pub fn validate(feature: &Feature, known_segments: &[i64]) -> Result<(), ValidationError> {
    let segments: Vec<Segment> = known_segments
        .iter()
        .map(|id| Segment {
            id: *id,
            ..Segment::default()
        })
        .collect();
    let document = ClientFeatures {
        version: 2,
        features: vec![feature.clone()],
        segments,
    };
    let (_, warnings) = Engine::compile(&document);
    match warnings.into_iter().next() {
        Some(warning) => Err(warning.error),
        None => Ok(()),
    }
}

/// Checks constraints strictly, as the admin API does before writing a strategy or a segment:
/// each must compile, and a date must be one JavaScript reads as the same instant (see
/// [`parse_time_strict`]). Returns the index of the first bad constraint with its problem.
pub fn validate_constraints(constraints: &[Constraint]) -> Result<(), (usize, ValidationError)> {
    for (index, constraint) in constraints.iter().enumerate() {
        let (_, error) = constraint::CompiledConstraint::compile(constraint, DEFAULT_REGEX_SIZE_LIMIT);
        if let Some(error) = error {
            return Err((index, error));
        }
        let is_date = matches!(
            Operator::parse(&constraint.operator),
            Some(Operator::DateAfter | Operator::DateBefore)
        );
        if let (true, Some(value)) = (is_date, constraint.value.as_deref())
            && parse_time_strict(value).is_none()
        {
            return Err((
                index,
                ValidationError::InvalidDate {
                    value: value.to_owned(),
                },
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_reports_unknown_segments_and_operators() {
        let mut feature = Feature {
            name: "f".into(),
            enabled: true,
            strategies: vec![Strategy {
                name: "default".into(),
                segments: vec![7],
                ..Strategy::default()
            }],
            ..Feature::default()
        };
        assert_eq!(
            validate(&feature, &[]),
            Err(ValidationError::UnknownSegment { id: 7 })
        );
        assert_eq!(validate(&feature, &[7]), Ok(()));
        feature.strategies[0].constraints.push(Constraint {
            context_name: "userId".into(),
            operator: "LIKE".into(),
            ..Constraint::default()
        });
        assert_eq!(
            validate(&feature, &[7]),
            Err(ValidationError::UnknownOperator {
                operator: "LIKE".into()
            })
        );
    }
}
