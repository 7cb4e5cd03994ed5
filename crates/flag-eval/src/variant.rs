//! Variant selection: overrides first, then a sticky hash over the weights.

use serde::Serialize;

use crate::constraint::{Field, StrSet};
use crate::context::Context;
use crate::error::ValidationError;
use crate::hash::{GroupHash, VARIANT_SEED};
use crate::model::{Payload, Variant};

/// The variant an SDK call resolves to, borrowed from the compiled engine.
///
/// Serialises as Unleash's SDKs report it: `{name, payload?, enabled, feature_enabled}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ResolvedVariant<'a> {
    /// The variant's name, or `disabled`.
    pub name: &'a str,
    /// Its payload, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload: Option<&'a Payload>,
    /// Whether a real variant was chosen.
    pub enabled: bool,
    /// Whether the flag itself is enabled.
    pub feature_enabled: bool,
}

impl ResolvedVariant<'_> {
    /// The name Unleash uses when no variant applies.
    pub const DISABLED_NAME: &'static str = "disabled";

    /// No variant: `enabled` false, with the flag's own state.
    pub fn disabled(feature_enabled: bool) -> ResolvedVariant<'static> {
        ResolvedVariant {
            name: Self::DISABLED_NAME,
            payload: None,
            enabled: false,
            feature_enabled,
        }
    }
}

/// Which context value keeps a user on one bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stickiness {
    /// The first of userId, sessionId (and remoteAddress for variants) that is set, else random.
    Default,
    /// Always random.
    Random,
    /// One named field.
    Field(Field),
}

impl Stickiness {
    pub(crate) fn parse(name: Option<&str>) -> Self {
        match name {
            None | Some("" | "default") => Self::Default,
            Some("random") => Self::Random,
            Some(field) => Self::Field(Field::parse(field)),
        }
    }
}

#[derive(Debug, Clone)]
struct Override {
    field: Field,
    values: StrSet,
}

#[derive(Debug, Clone)]
struct CompiledVariant {
    weight: u32,
    overrides: Box<[Override]>,
}

/// A variant list ready for selection. The list it was compiled from is not kept: the flag's
/// definition holds it, and selection is given it back for names and payloads.
///
/// One pointer wide, and no allocation for an empty list: every flag and strategy has one, and
/// most lists are empty.
#[derive(Debug, Clone)]
pub(crate) struct CompiledVariants(Option<Box<VariantTable>>);

#[derive(Debug, Clone)]
struct VariantTable {
    compiled: Box<[CompiledVariant]>,
    total_weight: u32,
    stickiness: Stickiness,
    /// The hash of `"{groupId}:"`, which every sticky value continues.
    group: GroupHash,
}

impl CompiledVariants {
    /// Compiles `variants`, hashed within `group_id` on `stickiness` (`None` is `default`).
    ///
    /// A flag's variants are sticky on their first variant's field; a strategy's variants on the
    /// strategy's own `stickiness` parameter, whatever the variants say, as in Yggdrasil and the
    /// Node SDK.
    pub(crate) fn compile(
        variants: &[Variant],
        group_id: &str,
        stickiness: Option<&str>,
        errors: &mut Vec<ValidationError>,
    ) -> Self {
        if variants.is_empty() {
            return Self(None);
        }
        let compiled: Box<[CompiledVariant]> = variants
            .iter()
            .map(|variant| {
                let weight = match u32::try_from(variant.weight) {
                    Ok(weight) if weight <= 1000 => weight,
                    _ => {
                        errors.push(ValidationError::InvalidWeight {
                            variant: variant.name.clone(),
                            weight: variant.weight,
                        });
                        0
                    }
                };
                let overrides = variant
                    .overrides
                    .iter()
                    .map(|rule| Override {
                        field: Field::parse(&rule.context_name),
                        values: StrSet::new(rule.values.iter().map(String::as_str)),
                    })
                    .collect();
                CompiledVariant { weight, overrides }
            })
            .collect();
        Self(Some(Box::new(VariantTable {
            total_weight: compiled.iter().map(|variant| variant.weight).sum(),
            compiled,
            stickiness: Stickiness::parse(stickiness),
            group: GroupHash::new(group_id, VARIANT_SEED),
        })))
    }

    /// Chooses a variant of `source`, the list this was compiled from, for `context`; `None`
    /// when the list is empty or all weights are 0.
    pub(crate) fn select<'v>(&self, source: &'v [Variant], context: &Context) -> Option<&'v Variant> {
        self.0.as_deref()?.select(source, context)
    }
}

impl VariantTable {
    fn select<'v>(&self, source: &'v [Variant], context: &Context) -> Option<&'v Variant> {
        if let Some(index) = self.overridden(context) {
            return source.get(index);
        }
        if self.total_weight == 0 {
            return None;
        }
        let target = match self.sticky_value(context) {
            Some(value) => self.group.bucket(value, self.total_weight),
            None => context.random.one_to(self.total_weight),
        };
        let mut running = 0;
        for (variant, compiled) in source.iter().zip(self.compiled.iter()) {
            // A weight-0 variant is never chosen, even when the running total already reaches the
            // target.
            if compiled.weight == 0 {
                continue;
            }
            running += compiled.weight;
            if running >= target {
                return Some(variant);
            }
        }
        None
    }

    fn overridden(&self, context: &Context) -> Option<usize> {
        self.compiled.iter().position(|variant| {
            variant.overrides.iter().any(|rule| {
                rule.field
                    .get(context)
                    .is_some_and(|value| rule.values.contains(value))
            })
        })
    }

    fn sticky_value<'c>(&self, context: &'c Context) -> Option<&'c str> {
        match &self.stickiness {
            Stickiness::Default => [
                context.user_id.as_deref(),
                context.session_id.as_deref(),
                context.remote_address.as_deref(),
            ]
            .into_iter()
            .flatten()
            .find(|value| !value.is_empty()),
            Stickiness::Random => None,
            Stickiness::Field(field) => field.get(context),
        }
    }
}

/// Unleash's weight normalisation for a variant list a client writes (`fixVariantWeights`).
///
/// Variants without a `weightType` become `variable`. `fix` weights are kept; what they leave of
/// 1000 is shared among the `variable` variants, `floor(rest / n)` each, and the first
/// `rest % n` (in list order) get one more. An empty list is fine; a non-empty list needs at
/// least one `variable` variant, and `fix` weights may total at most 1000.
pub fn fix_variant_weights(variants: &mut [Variant]) -> Result<(), VariantWeightError> {
    if variants.is_empty() {
        return Ok(());
    }
    for variant in variants.iter_mut() {
        if variant.weight_type.is_none() {
            variant.weight_type = Some("variable".into());
        }
    }
    let is_fixed = |variant: &Variant| variant.weight_type.as_deref() == Some("fix");
    let fixed: i64 = variants
        .iter()
        .filter(|variant| is_fixed(variant))
        .map(|variant| variant.weight)
        .sum();
    if fixed > 1000 {
        return Err(VariantWeightError::FixedOverTotal);
    }
    let variable = variants.iter().filter(|variant| !is_fixed(variant)).count() as i64;
    if variable == 0 {
        return Err(VariantWeightError::NoVariableVariant);
    }
    let rest = 1000 - fixed;
    let (share, mut extra) = (rest / variable, rest % variable);
    for variant in variants.iter_mut().filter(|variant| !is_fixed(variant)) {
        variant.weight = share + i64::from(extra > 0);
        extra -= 1;
    }
    Ok(())
}

/// Why a variant list's weights cannot be normalised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VariantWeightError {
    /// Every variant is `fix`.
    #[error("there must be at least one \"variable\" variant")]
    NoVariableVariant,
    /// `fix` weights total more than 1000.
    #[error("the traffic distribution total must equal 100%")]
    FixedOverTotal,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_are_fixed_as_unleash_does() {
        let mut three = [variant("a", 1), variant("b", 1), variant("c", 1)];
        fix_variant_weights(&mut three).unwrap_or_default();
        assert_eq!(
            three.iter().map(|v| v.weight).collect::<Vec<_>>(),
            [334, 333, 333]
        );

        let mut fixed = [variant("f", 300), variant("v", 0), variant("w", 0)];
        fixed[0].weight_type = Some("fix".into());
        fix_variant_weights(&mut fixed).unwrap_or_default();
        assert_eq!(
            fixed.iter().map(|v| v.weight).collect::<Vec<_>>(),
            [300, 350, 350]
        );

        let mut all_fixed = [variant("f", 300)];
        all_fixed[0].weight_type = Some("fix".into());
        assert_eq!(
            fix_variant_weights(&mut all_fixed),
            Err(VariantWeightError::NoVariableVariant)
        );

        let mut over = [variant("f", 1001), variant("v", 0)];
        over[0].weight_type = Some("fix".into());
        assert_eq!(
            fix_variant_weights(&mut over),
            Err(VariantWeightError::FixedOverTotal)
        );
    }

    fn variant(name: &str, weight: i64) -> Variant {
        Variant {
            name: name.into(),
            weight,
            ..Variant::default()
        }
    }

    #[test]
    fn all_weights_zero_gives_no_variant() {
        let variants = [variant("a", 0), variant("b", 0)];
        let compiled = CompiledVariants::compile(&variants, "f", None, &mut Vec::new());
        for user in ["1", "2", "3"] {
            assert_eq!(compiled.select(&variants, &Context::for_user(user)), None);
        }
        assert_eq!(compiled.select(&variants, &Context::default()), None);
    }

    #[test]
    fn zero_weight_variants_are_never_chosen() {
        let variants = [variant("zero", 0), variant("one", 1)];
        let compiled = CompiledVariants::compile(&variants, "f", None, &mut Vec::new());
        for user in 0..1000 {
            let chosen = compiled.select(&variants, &Context::for_user(&user.to_string()));
            assert_eq!(chosen.map(|v| v.name.as_str()), Some("one"));
        }
    }

    #[test]
    fn overrides_win_over_weights() {
        let mut forced = variant("forced", 0);
        forced.overrides = vec![crate::model::Override {
            context_name: "plan".into(),
            values: vec!["pro".into()],
        }];
        let variants = [variant("normal", 1000), forced];
        let compiled = CompiledVariants::compile(&variants, "f", None, &mut Vec::new());
        let context = Context::for_user("1").with_property("plan", "pro");
        assert_eq!(
            compiled.select(&variants, &context).map(|v| v.name.as_str()),
            Some("forced")
        );
    }

    #[test]
    fn negative_weights_are_reported_and_ignored() {
        let mut errors = Vec::new();
        let variants = [variant("a", -5), variant("b", 10)];
        let compiled = CompiledVariants::compile(&variants, "f", None, &mut errors);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            compiled
                .select(&variants, &Context::for_user("x"))
                .map(|v| v.name.as_str()),
            Some("b")
        );
    }
}
