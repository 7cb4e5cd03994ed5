//! What can be wrong with a flag definition.

use std::fmt;

/// A problem in a flag definition, found by [`crate::validate`] or while compiling.
///
/// Compiling never fails: each problem becomes a [`Warning`] and only the part it concerns (one
/// constraint, one strategy or one variant list) evaluates as off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// The constraint operator is not one Unleash defines.
    #[error("unknown operator {operator}")]
    UnknownOperator {
        /// The operator as given.
        operator: String,
    },
    /// A single-value operator has no `value`.
    #[error("operator {operator} needs a value")]
    MissingValue {
        /// The operator.
        operator: String,
    },
    /// A `NUM_*` value is not a number.
    #[error("invalid number {value:?}")]
    InvalidNumber {
        /// The value as given.
        value: String,
    },
    /// A `DATE_*` value is not an RFC 3339 timestamp.
    #[error("invalid date {value:?}")]
    InvalidDate {
        /// The value as given.
        value: String,
    },
    /// A `SEMVER_*` value is not a semantic version.
    #[error("invalid semver {value:?}")]
    InvalidSemver {
        /// The value as given.
        value: String,
    },
    /// A `REGEX` pattern does not compile, or is larger than the limit.
    #[error("invalid regex {value:?}: {reason}")]
    InvalidRegex {
        /// The pattern as given.
        value: String,
        /// Why it was refused.
        reason: String,
    },
    /// An `IN_CIDR` value or a `remoteAddress` entry is neither an IP address nor a network.
    #[error("invalid ip network {value:?}")]
    InvalidNetwork {
        /// The value as given.
        value: String,
    },
    /// A strategy refers to a segment that does not exist.
    #[error("unknown segment id {id}")]
    UnknownSegment {
        /// The segment id.
        id: i64,
    },
    /// A strategy parameter has a value the strategy cannot use.
    #[error("invalid {parameter} {value:?} for strategy {strategy}")]
    InvalidParameter {
        /// The strategy name.
        strategy: String,
        /// The parameter name.
        parameter: String,
        /// The value as given, empty when missing.
        value: String,
    },
    /// A variant weight is negative or above 1000.
    #[error("invalid weight {weight} for variant {variant}")]
    InvalidWeight {
        /// The variant name.
        variant: String,
        /// The weight as given.
        weight: i64,
    },
}

/// A compile-time problem, with the flag it was found in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The flag's name, or empty for a problem in a segment.
    pub flag: String,
    /// What is wrong.
    pub error: ValidationError,
}

impl fmt::Display for Warning {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.flag.is_empty() {
            write!(formatter, "{}", self.error)
        } else {
            write!(formatter, "flag {}: {}", self.flag, self.error)
        }
    }
}
