//! Activation strategies and segments, compiled.

use ipnet::IpNet;

use crate::constraint::{CompiledConstraint, Field, StrSet, all_hold, parse_network};
use crate::context::Context;
use crate::error::ValidationError;
use crate::hash::{GroupHash, STRATEGY_SEED};
use crate::model::{Segment, Strategy};
use crate::variant::{CompiledVariants, Stickiness};

/// Options that apply to a whole compile.
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// The host name `applicationHostname` strategies compare against. The engine reads no
    /// environment; without a host name those strategies are off.
    pub hostname: Option<String>,
    /// Largest compiled size of a `REGEX` pattern, in bytes.
    pub regex_size_limit: usize,
}

impl Default for CompileOptions {
    fn default() -> Self {
        Self {
            hostname: None,
            regex_size_limit: crate::constraint::DEFAULT_REGEX_SIZE_LIMIT,
        }
    }
}

/// How the playground classifies a strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A strategy SDKs and the playground evaluate completely.
    Builtin,
    /// `applicationHostname` compiled without a host name, as the server's playground compiles
    /// it: it cannot know an application's host. Compiled with one, as an SDK does, it is
    /// [`Kind::Builtin`].
    Hostname,
    /// A custom strategy: off for SDKs, unknown in the playground.
    Custom,
}

#[derive(Debug, Clone)]
enum Rule {
    Default,
    UserWithId(StrSet),
    /// `flexibleRollout` and the gradual rollouts: bucket of the sticky value at most `percent`.
    Rollout {
        percent: f64,
        stickiness: Stickiness,
        /// The hash of `"{groupId}:"`, which every sticky value continues.
        group: GroupHash,
    },
    RandomRollout {
        percent: f64,
    },
    RemoteAddress {
        exact: StrSet,
        networks: Box<[IpNet]>,
    },
    /// `applicationHostname`, decided at compile time from [`CompileOptions::hostname`].
    Hostname(bool),
    /// Custom strategies and broken definitions.
    Off,
}

/// A segment ready to evaluate.
#[derive(Debug, Clone)]
pub(crate) struct CompiledSegment {
    pub(crate) source: Segment,
    pub(crate) constraints: Box<[CompiledConstraint]>,
}

impl CompiledSegment {
    pub(crate) fn compile(
        segment: &Segment,
        options: &CompileOptions,
        errors: &mut Vec<ValidationError>,
    ) -> Self {
        Self {
            source: segment.clone(),
            constraints: compile_constraints(&segment.constraints, options, errors),
        }
    }
}

/// A strategy ready to evaluate.
#[derive(Debug, Clone)]
pub(crate) struct CompiledStrategy {
    pub(crate) kind: Kind,
    rule: Rule,
    pub(crate) disabled: bool,
    /// What evaluation tests: the strategy's own constraints, then those of each of its segments
    /// (one that never holds for a segment that does not exist), so that segments cost no look-up
    /// when a flag is answered. The engine fills in the segments' part, and refills it when one
    /// of them changes.
    pub(crate) checks: Box<[CompiledConstraint]>,
    /// How many of `checks` are the strategy's own.
    own: usize,
    pub(crate) segments: Box<[i64]>,
    /// The segments' slots in the engine, parallel to `segments`; filled in by the engine.
    pub(crate) segment_slots: Box<[u32]>,
    /// Strategy variants; `None` when the strategy has none.
    pub(crate) variants: Option<CompiledVariants>,
    /// Where the strategy stands in its flag's list, so that its variants' names and payloads
    /// are read from the flag's definition; filled in by the engine.
    pub(crate) position: u32,
}

impl CompiledStrategy {
    pub(crate) fn compile(
        strategy: &Strategy,
        flag_name: &str,
        options: &CompileOptions,
        errors: &mut Vec<ValidationError>,
    ) -> Self {
        let parameter = |name: &str| strategy.parameters.get(name);
        let mut invalid = |name: &str| {
            errors.push(ValidationError::InvalidParameter {
                strategy: strategy.name.clone(),
                parameter: name.to_owned(),
                value: parameter(name).unwrap_or_default().to_owned(),
            });
            Rule::Off
        };
        let group_id = parameter("groupId").unwrap_or(flag_name);
        let (kind, rule) = match strategy.name.as_str() {
            "default" => (Kind::Builtin, Rule::Default),
            "userWithId" => (
                Kind::Builtin,
                Rule::UserWithId(StrSet::new(comma_list(parameter("userIds").unwrap_or_default()))),
            ),
            "flexibleRollout" => (
                Kind::Builtin,
                match percentage(parameter("rollout")) {
                    Some(percent) => Rule::Rollout {
                        percent,
                        stickiness: Stickiness::parse(parameter("stickiness")),
                        group: GroupHash::new(group_id, STRATEGY_SEED),
                    },
                    None => invalid("rollout"),
                },
            ),
            "gradualRolloutUserId" | "gradualRolloutSessionId" => {
                let field = if strategy.name == "gradualRolloutUserId" {
                    Field::UserId
                } else {
                    Field::SessionId
                };
                (
                    Kind::Builtin,
                    match percentage(parameter("percentage")) {
                        Some(percent) => Rule::Rollout {
                            percent,
                            stickiness: Stickiness::Field(field),
                            group: GroupHash::new(parameter("groupId").unwrap_or_default(), STRATEGY_SEED),
                        },
                        None => invalid("percentage"),
                    },
                )
            }
            "gradualRolloutRandom" => (
                Kind::Builtin,
                match percentage(parameter("percentage")) {
                    Some(percent) => Rule::RandomRollout { percent },
                    None => invalid("percentage"),
                },
            ),
            "remoteAddress" => {
                let entries: Vec<&str> = comma_list(parameter("IPs").unwrap_or_default()).collect();
                (
                    Kind::Builtin,
                    Rule::RemoteAddress {
                        exact: StrSet::new(entries.iter().copied()),
                        networks: entries.iter().filter_map(|entry| parse_network(entry)).collect(),
                    },
                )
            }
            "applicationHostname" => {
                let host = options.hostname.as_deref().map(str::to_lowercase);
                // An engine that knows its host (an SDK's) decides the strategy and explains it
                // as it decides it; one that does not (the server's playground) cannot.
                let kind = if host.is_some() {
                    Kind::Builtin
                } else {
                    Kind::Hostname
                };
                let matches = host.is_some_and(|host| {
                    comma_list(parameter("hostNames").unwrap_or_default())
                        .any(|name| name.to_lowercase() == host)
                });
                (kind, Rule::Hostname(matches))
            }
            _ => (Kind::Custom, Rule::Off),
        };
        let constraints = compile_constraints(&strategy.constraints, options, errors);
        let variants = (!strategy.variants.is_empty()).then(|| {
            CompiledVariants::compile(&strategy.variants, group_id, parameter("stickiness"), errors)
        });
        Self {
            kind,
            rule,
            disabled: strategy.disabled.unwrap_or(false),
            own: constraints.len(),
            checks: constraints,
            segments: strategy.segments.iter().copied().collect(),
            segment_slots: Box::default(),
            variants,
            position: 0,
        }
    }

    /// Whether the strategy holds for every context: a `default` with no constraints or segments.
    pub(crate) fn always_holds(&self) -> bool {
        matches!(self.rule, Rule::Default) && self.own == 0 && self.segments.is_empty()
    }

    /// The strategy's own constraints.
    pub(crate) fn constraints(&self) -> &[CompiledConstraint] {
        self.checks.get(..self.own).unwrap_or_default()
    }

    /// Sets what evaluation tests: the strategy's own constraints, then the constraints of the
    /// segment in each of its `segment_slots`, as `segment` finds it (`None` for one that does
    /// not exist).
    pub(crate) fn set_segments<'s>(&mut self, segment: impl Fn(u32) -> Option<&'s CompiledSegment>) {
        if self.segment_slots.is_empty() && self.checks.len() == self.own {
            // No segments, before or now: the strategy's own constraints, as they are.
            return;
        }
        let mut checks = self.constraints().to_vec();
        for slot in &self.segment_slots {
            match segment(*slot) {
                Some(segment) => checks.extend(segment.constraints.iter().cloned()),
                None => checks.push(CompiledConstraint::never()),
            }
        }
        self.checks = checks.into_boxed_slice();
    }

    /// Whether the strategy holds for `context`: its constraints, its segments' and its rule.
    #[inline]
    pub(crate) fn holds(&self, context: &Context) -> bool {
        (self.checks.is_empty() || all_hold(&self.checks, context)) && self.rule_matches(context)
    }

    /// The strategy's own rule, without constraints or segments. `default`, the most common, is
    /// answered inline; the other rules out of line.
    #[inline(always)]
    pub(crate) fn rule_matches(&self, context: &Context) -> bool {
        matches!(self.rule, Rule::Default) || self.other_rule_matches(context)
    }

    #[inline(never)]
    fn other_rule_matches(&self, context: &Context) -> bool {
        match &self.rule {
            Rule::Default => true,
            Rule::UserWithId(ids) => context.user_id.as_deref().is_some_and(|id| ids.contains(id)),
            Rule::Rollout {
                percent,
                stickiness,
                group,
            } => {
                let sticky = match stickiness {
                    Stickiness::Default => context.user_id.as_deref().or(context.session_id.as_deref()),
                    Stickiness::Random => None,
                    Stickiness::Field(field) => match field.get(context) {
                        Some(value) => Some(value),
                        // A missing custom stickiness field turns the strategy off.
                        None => return false,
                    },
                };
                let position = match sticky {
                    Some(value) => group.bucket(value, 100),
                    None => context.random.one_to(100),
                };
                f64::from(position) <= *percent
            }
            Rule::RandomRollout { percent } => f64::from(context.random.one_to(100)) <= *percent,
            Rule::RemoteAddress { exact, networks } => match context.remote_address.as_deref() {
                Some(address) => {
                    exact.contains(address)
                        || address
                            .trim()
                            .parse::<std::net::IpAddr>()
                            .is_ok_and(|ip| networks.iter().any(|network| network.contains(&ip)))
                }
                None => false,
            },
            Rule::Hostname(matches) => *matches,
            Rule::Off => false,
        }
    }
}

/// Compiles constraints, collecting each one's problem.
fn compile_constraints(
    constraints: &[crate::model::Constraint],
    options: &CompileOptions,
    errors: &mut Vec<ValidationError>,
) -> Box<[CompiledConstraint]> {
    constraints
        .iter()
        .map(|constraint| {
            let (compiled, error) = CompiledConstraint::compile(constraint, options.regex_size_limit);
            errors.extend(error);
            compiled
        })
        .collect()
}

/// Splits a comma-separated parameter, trimming entries and dropping empty ones.
fn comma_list(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|entry| !entry.is_empty())
}

/// A rollout percentage: a number from 0 to 100.
fn percentage(text: Option<&str>) -> Option<f64> {
    text?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|percent| (0.0..=100.0).contains(percent))
}

#[cfg(test)]
mod tests {

    use super::*;

    fn strategy(name: &str, parameters: &[(&str, &str)]) -> Strategy {
        Strategy {
            name: name.into(),
            parameters: parameters
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            ..Strategy::default()
        }
    }

    fn compile(strategy: &Strategy, options: &CompileOptions) -> (CompiledStrategy, Vec<ValidationError>) {
        let mut errors = Vec::new();
        let compiled = CompiledStrategy::compile(strategy, "flag", options, &mut errors);
        (compiled, errors)
    }

    #[test]
    fn hostname_comes_from_the_options() {
        let rule = strategy("applicationHostname", &[("hostNames", "a.example, B.example")]);
        let (off, _) = compile(&rule, &CompileOptions::default());
        assert!(!off.rule_matches(&Context::default()));
        let options = CompileOptions {
            hostname: Some("b.EXAMPLE".into()),
            ..CompileOptions::default()
        };
        let (on, _) = compile(&rule, &options);
        assert!(on.rule_matches(&Context::default()));
    }

    #[test]
    fn bad_rollout_is_reported_and_off() {
        let (compiled, errors) = compile(
            &strategy("flexibleRollout", &[("rollout", "lots")]),
            &CompileOptions::default(),
        );
        assert_eq!(errors.len(), 1);
        assert!(!compiled.rule_matches(&Context::for_user("1")));
    }

    #[test]
    fn remote_address_matches_exact_entries_and_v6_networks() {
        let (compiled, _) = compile(
            &strategy("remoteAddress", &[("IPs", "10.0.0.1, 2001:db8::/32, not-an-ip")]),
            &CompileOptions::default(),
        );
        let at = |address: &str| Context {
            remote_address: Some(address.into()),
            ..Context::default()
        };
        assert!(compiled.rule_matches(&at("10.0.0.1")));
        assert!(compiled.rule_matches(&at("2001:db8::42")));
        assert!(compiled.rule_matches(&at("not-an-ip")));
        assert!(!compiled.rule_matches(&at("10.0.0.2")));
    }
}
