//! Explanations: the playground's view of one flag for one context.
//!
//! An explanation reports every strategy, constraint and segment with its result, the flag's
//! aggregate result (`true`, `false` or `"unknown"`), and the variant in the shapes Unleash's
//! playground uses. It is computed from the same compiled engine as [`Engine::is_enabled`], and the
//! two agree wherever the explanation is complete.
//!
//! The playground differs from an SDK in three ways: disabled strategies are shown as
//! `unevaluated` (an SDK never receives them), custom strategies and `applicationHostname` are
//! `incomplete` (the server cannot run them), and so the aggregate can be `"unknown"`.

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::context::Context;
use crate::engine::{CompiledFlag, Engine};
use crate::model::{Constraint, Strategy, Variant};
use crate::strategy::{CompiledStrategy, Kind};

/// `true`, `false` or `"unknown"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tristate {
    /// Evaluated to false.
    False,
    /// Evaluated to true.
    True,
    /// Could not be evaluated.
    Unknown,
}

impl From<bool> for Tristate {
    fn from(value: bool) -> Self {
        if value { Self::True } else { Self::False }
    }
}

impl Serialize for Tristate {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::False => serializer.serialize_bool(false),
            Self::True => serializer.serialize_bool(true),
            Self::Unknown => serializer.serialize_str("unknown"),
        }
    }
}

/// How far a strategy could be evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EvaluationStatus {
    /// Fully evaluated.
    Complete,
    /// A custom or `applicationHostname` strategy: only its constraints and segments are known.
    Incomplete,
    /// A disabled strategy.
    Unevaluated,
}

/// A variant chosen by a strategy: `{name, enabled: true, payload?}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StrategyVariant<'a> {
    /// Variant name.
    pub name: &'a str,
    /// Always true.
    pub enabled: bool,
    /// Payload, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<&'a crate::model::Payload>,
}

impl<'a> From<&'a Variant> for StrategyVariant<'a> {
    fn from(variant: &'a Variant) -> Self {
        Self {
            name: &variant.name,
            enabled: true,
            payload: variant.payload.as_ref(),
        }
    }
}

/// The result of one strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyResult<'a> {
    /// Whether it enables the flag.
    pub enabled: Tristate,
    /// How far it was evaluated.
    pub evaluation_status: EvaluationStatus,
    /// For a complete strategy with variants: the one it picks, even when it is false.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<StrategyVariant<'a>>,
    /// For a complete strategy with variants: its variant list.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variants: Option<&'a [Variant]>,
}

/// A constraint as defined, with its result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConstraintResult<'a> {
    /// The definition.
    #[serde(flatten)]
    pub constraint: &'a Constraint,
    /// Whether it holds.
    pub result: bool,
}

/// A segment with its result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentResult<'a> {
    /// Segment id.
    pub id: i64,
    /// Segment name; empty for a segment that does not exist.
    pub name: &'a str,
    /// Whether all its constraints hold; false for a segment that does not exist.
    pub result: bool,
    /// Its constraints.
    pub constraints: Vec<ConstraintResult<'a>>,
}

/// One strategy with its result and reasons.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StrategyExplanation<'a> {
    /// The definition.
    #[serde(skip)]
    pub strategy: &'a Strategy,
    /// Strategy name.
    pub name: &'a str,
    /// Strategy id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// Strategy title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<&'a str>,
    /// Whether the strategy is disabled.
    pub disabled: bool,
    /// The result.
    pub result: StrategyResult<'a>,
    /// Each constraint with its result.
    pub constraints: Vec<ConstraintResult<'a>>,
    /// Each segment with its result.
    pub segments: Vec<SegmentResult<'a>>,
}

/// The flag-level variant, in the four shapes of Unleash's playground.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlaygroundVariant<'a> {
    /// The flag is not enabled: `{name: "disabled", enabled: false, feature_enabled: false}`.
    Disabled,
    /// The winning strategy picked it: `{name, enabled: true, payload?, feature_enabled: true}`.
    Strategy(&'a Variant),
    /// Picked from the flag's variants:
    /// `{name, payload?, enabled: true, feature_enabled: true, featureEnabled: true}`.
    Feature(&'a Variant),
    /// Enabled, but no variant applies:
    /// `{feature_enabled: true, featureEnabled: true, name: "disabled", enabled: false}`.
    None,
}

impl PlaygroundVariant<'_> {
    /// The variant's name, `disabled` when there is none.
    pub fn name(&self) -> &str {
        match self {
            Self::Strategy(variant) | Self::Feature(variant) => &variant.name,
            Self::Disabled | Self::None => "disabled",
        }
    }
}

impl Serialize for PlaygroundVariant<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Disabled => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("name", "disabled")?;
                map.serialize_entry("enabled", &false)?;
                map.serialize_entry("feature_enabled", &false)?;
                map.end()
            }
            Self::Strategy(variant) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("name", &variant.name)?;
                map.serialize_entry("enabled", &true)?;
                if let Some(payload) = &variant.payload {
                    map.serialize_entry("payload", payload)?;
                }
                map.serialize_entry("feature_enabled", &true)?;
                map.end()
            }
            Self::Feature(variant) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("name", &variant.name)?;
                if let Some(payload) = &variant.payload {
                    map.serialize_entry("payload", payload)?;
                }
                map.serialize_entry("enabled", &true)?;
                map.serialize_entry("feature_enabled", &true)?;
                map.serialize_entry("featureEnabled", &true)?;
                map.end()
            }
            Self::None => {
                let mut map = serializer.serialize_map(Some(4))?;
                map.serialize_entry("feature_enabled", &true)?;
                map.serialize_entry("featureEnabled", &true)?;
                map.serialize_entry("name", "disabled")?;
                map.serialize_entry("enabled", &false)?;
                map.end()
            }
        }
    }
}

/// Why a flag is on or off for one context.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation<'a> {
    /// Flag name.
    pub name: &'a str,
    /// Project, when the document names one.
    #[serde(rename = "projectId", skip_serializing_if = "Option::is_none")]
    pub project: Option<&'a str>,
    /// Whether the flag is enabled: the aggregate is `true`, the environment is on and every
    /// dependency is satisfied.
    pub is_enabled: bool,
    /// The flag's switch in this environment.
    pub is_enabled_in_current_environment: bool,
    /// Whether a parent is not in the state this flag needs.
    pub has_unsatisfied_dependency: bool,
    /// The aggregate of the strategies.
    pub result: Tristate,
    /// The resolved variant.
    pub variant: PlaygroundVariant<'a>,
    /// The winning strategy's variants if it picked one, else the flag's variants.
    pub variants: &'a [Variant],
    /// Every strategy, in evaluation order.
    pub strategies: Vec<StrategyExplanation<'a>>,
}

impl Explanation<'_> {
    /// Whether every strategy was fully evaluated, so the result is what an SDK decides.
    pub fn is_complete(&self) -> bool {
        self.strategies
            .iter()
            .all(|strategy| strategy.result.evaluation_status == EvaluationStatus::Complete)
    }
}

impl Engine {
    /// Explains the flag for `context`, or `None` when there is no such flag.
    ///
    /// Random draws happen in the same order as in [`Engine::is_enabled`] and [`Engine::variant`],
    /// so with equal seeds the explanation and the SDK answer agree even for random rollouts.
    pub fn explain<'a>(&'a self, name: &str, context: &Context) -> Option<Explanation<'a>> {
        let flag = self.flags.get(name)?;
        Some(self.explain_flag(flag, context))
    }

    fn explain_flag<'a>(&'a self, flag: &'a CompiledFlag, context: &Context) -> Explanation<'a> {
        let environment_on = flag.enabled;
        // Evaluate parents first, as an SDK does, but only when the flag is on: a parent's random
        // rollout must not consume draws an SDK would not make.
        let dependencies_satisfied = !environment_on || self.dependencies_satisfied(flag, context);
        let has_unsatisfied_dependency = if environment_on {
            !dependencies_satisfied
        } else {
            let saved = context.random.state();
            let satisfied = self.dependencies_satisfied(flag, context);
            context.random.reseed(saved);
            !satisfied
        };

        let mut strategies = Vec::with_capacity(flag.strategies.len());
        let mut winner: Option<(PlaygroundVariant<'a>, &'a [Variant])> = None;
        let mut any_unknown = false;
        for (source, compiled) in flag.source.strategies.iter().zip(flag.strategies.iter()) {
            let mut explained = self.explain_strategy(source, compiled, context, winner.is_none());
            match explained.result.enabled {
                Tristate::Unknown => any_unknown = true,
                Tristate::True if winner.is_none() => {
                    let (variant, variants) = winning_variant(flag, &source.variants, compiled, context);
                    if let PlaygroundVariant::Strategy(chosen) = variant {
                        explained.result.variant = Some(StrategyVariant::from(chosen));
                    }
                    winner = Some((variant, variants));
                }
                _ => {}
            }
            strategies.push(explained);
        }

        let result = if flag.source.strategies.is_empty() {
            Tristate::from(environment_on)
        } else if winner.is_some() {
            Tristate::True
        } else if any_unknown {
            Tristate::Unknown
        } else {
            Tristate::False
        };
        let is_enabled = result == Tristate::True && environment_on && !has_unsatisfied_dependency;
        let (variant, variants) = match winner {
            Some(winner) => winner,
            None if flag.source.strategies.is_empty() && is_enabled => (
                flag.variants
                    .select(&flag.source.variants, context)
                    .map_or(PlaygroundVariant::None, PlaygroundVariant::Feature),
                flag.source.variants.as_slice(),
            ),
            None => (PlaygroundVariant::Disabled, flag.source.variants.as_slice()),
        };
        Explanation {
            name: &flag.source.name,
            project: flag.source.project.as_deref(),
            is_enabled,
            is_enabled_in_current_environment: environment_on,
            has_unsatisfied_dependency,
            result,
            variant: if is_enabled {
                variant
            } else {
                PlaygroundVariant::Disabled
            },
            variants,
            strategies,
        }
    }

    fn explain_strategy<'a>(
        &'a self,
        source: &'a Strategy,
        compiled: &'a CompiledStrategy,
        context: &Context,
        before_winner: bool,
    ) -> StrategyExplanation<'a> {
        let constraints: Vec<ConstraintResult<'a>> = source
            .constraints
            .iter()
            .zip(compiled.constraints().iter())
            .map(|(constraint, rule)| ConstraintResult {
                constraint,
                result: rule.evaluate(context),
            })
            .collect();
        let segments: Vec<SegmentResult<'a>> = compiled
            .segments
            .iter()
            .zip(compiled.segment_slots.iter())
            .map(|(id, slot)| match self.segment(*slot) {
                Some(segment) => {
                    let constraints: Vec<ConstraintResult<'a>> = segment
                        .source
                        .constraints
                        .iter()
                        .zip(segment.constraints.iter())
                        .map(|(constraint, rule)| ConstraintResult {
                            constraint,
                            result: rule.evaluate(context),
                        })
                        .collect();
                    SegmentResult {
                        id: *id,
                        name: &segment.source.name,
                        result: constraints.iter().all(|constraint| constraint.result),
                        constraints,
                    }
                }
                None => SegmentResult {
                    id: *id,
                    name: "",
                    result: false,
                    constraints: Vec::new(),
                },
            })
            .collect();
        let preconditions = constraints.iter().all(|constraint| constraint.result)
            && segments.iter().all(|segment| segment.result);

        let result = match compiled.kind {
            Kind::Custom | Kind::Hostname => StrategyResult {
                enabled: if preconditions {
                    Tristate::Unknown
                } else {
                    Tristate::False
                },
                evaluation_status: EvaluationStatus::Incomplete,
                variant: None,
                variants: None,
            },
            Kind::Builtin if compiled.disabled => StrategyResult {
                enabled: Tristate::Unknown,
                evaluation_status: EvaluationStatus::Unevaluated,
                variant: None,
                variants: None,
            },
            Kind::Builtin => {
                // The rule runs only when the constraints and segments hold, as in an SDK, so
                // random rollouts draw the same numbers.
                let enabled = preconditions && compiled.rule_matches(context);
                let (variant, variants) = match &compiled.variants {
                    // The winner's variant is drawn separately, in SDK order; a strategy that is
                    // not the winner shows its pick without disturbing the draws.
                    Some(variants) if !(enabled && before_winner) => {
                        let saved = context.random.state();
                        let picked = variants
                            .select(&source.variants, context)
                            .map(StrategyVariant::from);
                        context.random.reseed(saved);
                        (picked, Some(source.variants.as_slice()))
                    }
                    Some(_) => (None, Some(source.variants.as_slice())),
                    None => (None, None),
                };
                StrategyResult {
                    enabled: Tristate::from(enabled),
                    evaluation_status: EvaluationStatus::Complete,
                    variant,
                    variants,
                }
            }
        };
        StrategyExplanation {
            strategy: source,
            name: &source.name,
            id: source.id.as_deref(),
            title: source.title.as_deref().filter(|title| !title.is_empty()),
            disabled: source.disabled.unwrap_or(false),
            result,
            constraints,
            segments,
        }
    }
}

/// The variant the winning strategy leads to, drawn right after its rule as an SDK draws it:
/// from its own variants when it has some, else from the flag's.
fn winning_variant<'a>(
    flag: &'a CompiledFlag,
    strategy_variants: &'a [Variant],
    strategy: &'a CompiledStrategy,
    context: &Context,
) -> (PlaygroundVariant<'a>, &'a [Variant]) {
    match &strategy.variants {
        Some(variants) => (
            variants
                .select(strategy_variants, context)
                .map_or(PlaygroundVariant::None, PlaygroundVariant::Strategy),
            strategy_variants,
        ),
        None => (
            flag.variants
                .select(&flag.source.variants, context)
                .map_or(PlaygroundVariant::None, PlaygroundVariant::Feature),
            flag.source.variants.as_slice(),
        ),
    }
}
