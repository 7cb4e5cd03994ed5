//! The compiled flag set and its SDK-style evaluation.

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use rustc_hash::FxHashMap;

use crate::context::Context;
use crate::error::{ValidationError, Warning};
use crate::model::{ClientFeatures, Delta, DeltaEvent, Feature, Segment, State};
use crate::strategy::{CompileOptions, CompiledSegment, CompiledStrategy};
use crate::text::{Key, KeyedText, middle_word};
use crate::variant::{CompiledVariants, ResolvedVariant};

/// A compiled flag set: parse once, then evaluate any number of times.
///
/// Evaluation ([`Engine::is_enabled`], [`Engine::variant`]) does no parsing of flag data and no
/// heap allocation, except to lower-case a context value holding a capital sigma under
/// `caseInsensitive`. [`Engine::explain`] reports the same decision with its reasons.
#[derive(Debug, Clone, Default)]
pub struct Engine {
    pub(crate) flags: FlagTable,
    /// Segments by slot; a slot whose segment does not exist (yet) is `None`. Strategies hold
    /// slots, resolved once at compile time, and a copy of their segments' constraints, which is
    /// what evaluation reads; explanations read the segments here.
    segment_slots: Vec<Option<CompiledSegment>>,
    segment_ids: FxHashMap<i64, u32>,
    options: CompileOptions,
}

#[derive(Debug, Clone)]
pub(crate) struct CompiledDependency {
    pub(crate) parent: Box<str>,
    pub(crate) enabled: bool,
    pub(crate) variants: Box<[Box<str>]>,
}

/// What a flag's answer is known to be before looking at the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shortcut {
    /// Off in this environment.
    Off,
    /// On, without parents, with no active strategy or a first active strategy that always holds.
    On,
    /// Depends on the context.
    Evaluate,
}

/// Flags by name. Names compare by their prepared keys ([`Key`]) rather than through `memcmp`,
/// which was half the cost of answering a flag that has no rules, and a name of up to 16 bytes is
/// hashed from its key, so its bytes are read once.
///
/// Each flag also gets an ordinal when it is first inserted, kept when it is replaced and never
/// reused while the table lives, so that callers can keep their own data per flag in a vector.
#[derive(Debug, Clone, Default)]
pub(crate) struct FlagTable {
    table: HashTable<CompiledFlag>,
    next_ordinal: usize,
    /// While a hydration refills the table: the ordinals its flags had before, by name, so a
    /// flag that stays keeps its number.
    previous: FxHashMap<Box<str>, usize>,
}

impl FlagTable {
    /// The flag named `name`. A name of up to 16 bytes, the usual, is found inline by its key; a
    /// longer one out of line (by its key and middle word up to 24 bytes), so that the common
    /// look-up stays small enough to inline.
    #[inline(always)]
    pub(crate) fn get(&self, name: &str) -> Option<&CompiledFlag> {
        let key = Key::of(name.as_bytes());
        if !key.is_exact() {
            return self.get_long(key, name);
        }
        self.table.find(key.hash_short(0), |flag| flag.name.key() == key)
    }

    /// A name of more than 16 bytes: up to 24, compared by its key and middle word; beyond, by
    /// its bytes.
    #[inline(never)]
    fn get_long(&self, key: Key, name: &str) -> Option<&CompiledFlag> {
        if key.is_short() {
            let middle = middle_word(name.as_bytes());
            return self.table.find(key.hash_short(middle), |flag| {
                flag.name.key() == key && flag.name_middle == middle
            });
        }
        self.table
            .find(key.hash(name), |flag| flag.name.matches(key, name))
    }

    fn insert(&mut self, mut flag: CompiledFlag) {
        let entry = self.table.entry(
            flag.name.hash(),
            |existing| existing.name == flag.name,
            |existing| existing.name.hash(),
        );
        match entry {
            Entry::Occupied(mut occupied) => {
                flag.ordinal = occupied.get().ordinal;
                *occupied.get_mut() = flag;
            }
            Entry::Vacant(vacant) => {
                flag.ordinal = match self.previous.get(flag.name.as_str()) {
                    Some(ordinal) => *ordinal,
                    None => {
                        self.next_ordinal += 1;
                        self.next_ordinal - 1
                    }
                };
                vacant.insert(flag);
            }
        }
    }

    fn remove(&mut self, name: &str) {
        let key = Key::of(name.as_bytes());
        if let Ok(found) = self
            .table
            .find_entry(key.hash(name), |flag| flag.name.matches(key, name))
        {
            found.remove();
        }
    }

    /// Empties the table for a hydration, remembering each flag's ordinal until
    /// [`FlagTable::end_hydration`], so that ordinals are neither lost nor reused.
    fn begin_hydration(&mut self) {
        self.previous = self
            .table
            .drain()
            .map(|flag| (flag.name.as_str().into(), flag.ordinal))
            .collect();
    }

    fn end_hydration(&mut self) {
        self.previous = FxHashMap::default();
    }

    fn reserve(&mut self, additional: usize) {
        self.table.reserve(additional, |flag| flag.name.hash());
    }

    fn len(&self) -> usize {
        self.table.len()
    }

    fn iter(&self) -> impl Iterator<Item = &CompiledFlag> {
        self.table.iter()
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut CompiledFlag> {
        self.table.iter_mut()
    }
}

/// A flag compiled on its own, to be gathered with others into an engine by
/// [`Engine::assemble`]; its segments are resolved then.
#[derive(Debug, Clone)]
pub struct PreparedFlag {
    flag: CompiledFlag,
    /// What compiling it found wrong.
    warnings: Vec<Warning>,
}

impl PreparedFlag {
    /// Compiles `feature`, which it keeps as the source of explanations, with `options`.
    pub fn new(feature: Feature, options: &CompileOptions) -> Self {
        let mut warnings = Vec::new();
        let flag = CompiledFlag::compile(feature, options, &mut warnings);
        Self { flag, warnings }
    }

    /// The flag's name.
    pub fn name(&self) -> &str {
        self.flag.name.as_str()
    }
}

/// A flag found by name, to evaluate and describe without looking it up again.
#[derive(Debug, Clone, Copy)]
pub struct Flag<'e> {
    engine: &'e Engine,
    flag: &'e CompiledFlag,
}

impl<'e> Flag<'e> {
    /// Whether the flag is enabled for `context`: [`Engine::is_enabled`] without the look-up.
    #[inline]
    pub fn is_enabled(self, context: &Context) -> bool {
        match self.flag.shortcut {
            Shortcut::Off => false,
            Shortcut::On => true,
            Shortcut::Evaluate => matches!(self.engine.outcome(self.flag, context), Outcome::On(_)),
        }
    }

    /// The variant for `context`: [`Engine::variant`] without the look-up.
    #[inline]
    pub fn variant(self, context: &Context) -> ResolvedVariant<'e> {
        Engine::variant_of(self.flag, self.engine.outcome(self.flag, context), context)
    }

    /// The flag's definition.
    pub fn feature(self) -> &'e Feature {
        &self.flag.source
    }

    /// A number for this flag, below [`Engine::ordinal_bound`]: given when the flag first entered
    /// the engine, kept while delta updates (hydrations included) replace its definition, and not
    /// reused by another flag of the same engine, so data kept per flag can live in a vector.
    /// Numbers grow with the names an engine has seen, not with its updates.
    pub fn ordinal(self) -> usize {
        self.flag.ordinal
    }
}

/// One compiled flag; the source definition is kept (boxed, off the hot path) for explanations.
#[derive(Debug, Clone)]
pub(crate) struct CompiledFlag {
    /// The flag's name and its key, kept beside the rules so that a look-up does not reach into
    /// the source.
    name: KeyedText,
    /// The name's [`middle_word`], which the look-up of names of 17 to 24 bytes compares.
    name_middle: u64,
    /// See [`Flag::ordinal`]; given by the table.
    ordinal: usize,
    pub(crate) source: Box<Feature>,
    pub(crate) enabled: bool,
    shortcut: Shortcut,
    pub(crate) strategies: Box<[CompiledStrategy]>,
    /// Whether any strategy is not disabled; a flag whose strategies are all disabled reaches SDKs
    /// with none, and is then on.
    pub(crate) has_active_strategy: bool,
    pub(crate) variants: CompiledVariants,
    pub(crate) dependencies: Box<[CompiledDependency]>,
}

/// The result of evaluating a flag's own state, dependencies and strategies.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Outcome<'a> {
    Off,
    /// On, through this strategy (`None`: the flag has no active strategy).
    On(Option<&'a CompiledStrategy>),
}

impl CompiledFlag {
    /// The variant list `strategy`, one of this flag's, was compiled from.
    pub(crate) fn strategy_variants(&self, strategy: &CompiledStrategy) -> &[crate::model::Variant] {
        self.source
            .strategies
            .get(strategy.position as usize)
            .map_or(&[], |source| source.variants.as_slice())
    }

    /// Compiles `feature`, which it keeps as the source of explanations.
    fn compile(mut feature: Feature, options: &CompileOptions, warnings: &mut Vec<Warning>) -> Self {
        let mut errors = Vec::new();
        let strategies: Box<[CompiledStrategy]> = feature
            .strategies
            .iter()
            .zip(0..)
            .map(|(strategy, position)| {
                let mut compiled = CompiledStrategy::compile(strategy, &feature.name, options, &mut errors);
                compiled.position = position;
                compiled
            })
            .collect();
        let variants = CompiledVariants::compile(
            &feature.variants,
            &feature.name,
            feature
                .variants
                .first()
                .and_then(|first| first.stickiness.as_deref()),
            &mut errors,
        );
        let dependencies: Box<[CompiledDependency]> = feature
            .dependencies
            .iter()
            .map(|dependency| CompiledDependency {
                parent: dependency.feature.as_str().into(),
                enabled: dependency.enabled.unwrap_or(true),
                variants: dependency
                    .variants
                    .iter()
                    .flatten()
                    .map(|name| name.as_str().into())
                    .collect(),
            })
            .collect();
        warnings.extend(errors.into_iter().map(|error| Warning {
            flag: feature.name.clone(),
            error,
        }));
        let first_active = strategies.iter().find(|strategy| !strategy.disabled);
        let shortcut = if !feature.enabled {
            Shortcut::Off
        } else if dependencies.is_empty() && first_active.is_none_or(CompiledStrategy::always_holds) {
            Shortcut::On
        } else {
            Shortcut::Evaluate
        };
        compact(&mut feature);
        Self {
            name: KeyedText::new(&feature.name),
            name_middle: middle_word(feature.name.as_bytes()),
            ordinal: 0,
            enabled: feature.enabled,
            source: Box::new(feature),
            shortcut,
            has_active_strategy: first_active.is_some(),
            strategies,
            variants,
            dependencies,
        }
    }
}

impl Engine {
    /// Compiles a client-features document with default options.
    ///
    /// Never fails: each problem becomes a [`Warning`], and only the constraint, strategy or
    /// variant list it concerns evaluates as off.
    pub fn compile(document: &ClientFeatures) -> (Self, Vec<Warning>) {
        Self::compile_with(document, CompileOptions::default())
    }

    /// Compiles a client-features document.
    pub fn compile_with(document: &ClientFeatures, options: CompileOptions) -> (Self, Vec<Warning>) {
        let mut engine = Self {
            options,
            ..Self::default()
        };
        let mut warnings = Vec::new();
        engine.hydrate(
            document.features.iter().cloned(),
            &document.segments,
            &mut warnings,
        );
        (engine, warnings)
    }

    /// Compiles a client-features document it takes over: each flag's definition becomes the
    /// source its explanations quote, with no copy made, so a caller needs to keep nothing else.
    pub fn compile_owned(document: ClientFeatures, options: CompileOptions) -> (Self, Vec<Warning>) {
        let mut engine = Self {
            options,
            ..Self::default()
        };
        let mut warnings = Vec::new();
        engine.hydrate(document.features, &document.segments, &mut warnings);
        (engine, warnings)
    }

    /// Gathers flags compiled apart ([`PreparedFlag`]) and `segments` into an engine: the engine
    /// [`Engine::compile_owned`] makes of a document with these flags, in this order, and these
    /// segments, with the same warnings, at the cost of resolving the flags' segments only. Lets
    /// a caller compile a large set of flags on several threads.
    ///
    /// Every flag must have been prepared with `options`.
    pub fn assemble<I>(prepared: I, segments: &[Segment], options: CompileOptions) -> (Self, Vec<Warning>)
    where
        I: IntoIterator<Item = PreparedFlag, IntoIter: ExactSizeIterator>,
    {
        let mut engine = Self {
            options,
            ..Self::default()
        };
        let mut warnings = Vec::new();
        for segment in segments {
            engine.upsert_segment(segment, &mut warnings);
        }
        let prepared = prepared.into_iter();
        engine.flags.reserve(prepared.len());
        for PreparedFlag {
            flag,
            warnings: compiled,
        } in prepared
        {
            warnings.extend(compiled);
            engine.insert_compiled(flag, &mut warnings);
        }
        (engine, warnings)
    }

    /// Compiles either form of state: a full document, or a delta applied to an empty engine.
    pub fn compile_state(state: &State, options: CompileOptions) -> (Self, Vec<Warning>) {
        match state {
            State::Full(document) => Self::compile_with(document, options),
            State::Delta(delta) => {
                let mut engine = Self {
                    options,
                    ..Self::default()
                };
                let warnings = engine.apply_delta(delta);
                (engine, warnings)
            }
        }
    }

    /// Applies delta events in order, recompiling only what they touch.
    pub fn apply_delta(&mut self, delta: &Delta) -> Vec<Warning> {
        let mut warnings = Vec::new();
        for event in &delta.events {
            match event {
                DeltaEvent::Hydration {
                    features, segments, ..
                } => self.hydrate(features.iter().cloned(), segments, &mut warnings),
                DeltaEvent::FeatureUpdated { feature, .. } => {
                    self.upsert_feature(feature.clone(), &mut warnings);
                }
                DeltaEvent::FeatureRemoved { feature_name, .. } => {
                    self.flags.remove(feature_name.as_str());
                }
                DeltaEvent::SegmentUpdated { segment, .. } => self.upsert_segment(segment, &mut warnings),
                DeltaEvent::SegmentRemoved { segment_id, .. } => {
                    if let Some(slot) = self.segment_ids.get(segment_id).copied() {
                        self.segment_slots[slot as usize] = None;
                        self.refresh_segment(slot);
                    }
                }
            }
        }
        warnings
    }

    fn hydrate<I>(&mut self, features: I, segments: &[Segment], warnings: &mut Vec<Warning>)
    where
        I: IntoIterator<Item = Feature, IntoIter: ExactSizeIterator>,
    {
        self.flags.begin_hydration();
        self.segment_slots.clear();
        self.segment_ids.clear();
        for segment in segments {
            self.upsert_segment(segment, warnings);
        }
        let features = features.into_iter();
        self.flags.reserve(features.len());
        for feature in features {
            self.upsert_feature(feature, warnings);
        }
        self.flags.end_hydration();
    }

    fn upsert_segment(&mut self, segment: &Segment, warnings: &mut Vec<Warning>) {
        let mut errors = Vec::new();
        let compiled = CompiledSegment::compile(segment, &self.options, &mut errors);
        warnings.extend(errors.into_iter().map(|error| Warning {
            flag: String::new(),
            error,
        }));
        let slot = self.segment_slot(segment.id);
        self.segment_slots[slot as usize] = Some(compiled);
        self.refresh_segment(slot);
    }

    /// Copies the segment in `slot`, changed or removed, into the strategies that use it.
    fn refresh_segment(&mut self, slot: u32) {
        let segment_slots = &self.segment_slots;
        for flag in self.flags.iter_mut() {
            for strategy in &mut flag.strategies {
                if strategy.segment_slots.contains(&slot) {
                    strategy.set_segments(|slot| segment_in(segment_slots, slot));
                }
            }
        }
    }

    /// The slot of a segment id, allocated empty on first use.
    fn segment_slot(&mut self, id: i64) -> u32 {
        if let Some(slot) = self.segment_ids.get(&id) {
            return *slot;
        }
        let slot = u32::try_from(self.segment_slots.len()).unwrap_or(u32::MAX);
        self.segment_slots.push(None);
        self.segment_ids.insert(id, slot);
        slot
    }

    /// The segment in a slot, if it exists.
    #[inline]
    pub(crate) fn segment(&self, slot: u32) -> Option<&CompiledSegment> {
        segment_in(&self.segment_slots, slot)
    }

    fn upsert_feature(&mut self, feature: Feature, warnings: &mut Vec<Warning>) {
        let compiled = CompiledFlag::compile(feature, &self.options, warnings);
        self.insert_compiled(compiled, warnings);
    }

    /// Adds a compiled flag, its strategies' segments resolved against this engine's.
    fn insert_compiled(&mut self, mut compiled: CompiledFlag, warnings: &mut Vec<Warning>) {
        for strategy in &mut compiled.strategies {
            let slots: Box<[u32]> = strategy
                .segments
                .iter()
                .map(|id| self.segment_slot(*id))
                .collect();
            for (id, slot) in strategy.segments.iter().zip(slots.iter()) {
                if self.segment(*slot).is_none() {
                    warnings.push(Warning {
                        flag: compiled.source.name.clone(),
                        error: ValidationError::UnknownSegment { id: *id },
                    });
                }
            }
            strategy.segment_slots = slots;
            strategy.set_segments(|slot| self.segment(slot));
        }
        self.flags.insert(compiled);
    }

    /// Number of flags.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// Whether there are no flags.
    pub fn is_empty(&self) -> bool {
        self.flags.len() == 0
    }

    /// Whether a flag of that name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.flags.get(name).is_some()
    }

    /// The flags' source definitions, in no particular order.
    pub fn features(&self) -> impl Iterator<Item = &Feature> {
        self.flags.iter().map(|flag| &*flag.source)
    }

    /// A flag's source definition.
    pub fn feature(&self, name: &str) -> Option<&Feature> {
        self.flags.get(name).map(|flag| &*flag.source)
    }

    /// The flag of that name, to evaluate without looking it up again.
    #[inline]
    pub fn flag(&self, name: &str) -> Option<Flag<'_>> {
        self.flags.get(name).map(|flag| Flag { engine: self, flag })
    }

    /// A bound every [`Flag::ordinal`] of this engine is below: one more than the largest ever
    /// given, so possibly more than the flags it holds now.
    pub fn ordinal_bound(&self) -> usize {
        self.flags.next_ordinal
    }

    /// Whether the flag is enabled for `context`, as Unleash's SDKs decide; unknown flags are off.
    #[inline]
    pub fn is_enabled(&self, name: &str, context: &Context) -> bool {
        self.flag(name).is_some_and(|flag| flag.is_enabled(context))
    }

    /// The variant the flag resolves to for `context`, as Unleash's SDKs decide.
    #[inline]
    pub fn variant(&self, name: &str, context: &Context) -> ResolvedVariant<'_> {
        match self.flag(name) {
            Some(flag) => flag.variant(context),
            None => ResolvedVariant::disabled(false),
        }
    }

    pub(crate) fn variant_of<'a>(
        flag: &'a CompiledFlag,
        outcome: Outcome<'a>,
        context: &Context,
    ) -> ResolvedVariant<'a> {
        let Outcome::On(winner) = outcome else {
            return ResolvedVariant::disabled(false);
        };
        let (variants, source) =
            match winner.and_then(|strategy| Some((strategy.variants.as_ref()?, strategy))) {
                Some((variants, strategy)) => (variants, flag.strategy_variants(strategy)),
                None => (&flag.variants, flag.source.variants.as_slice()),
            };
        match variants.select(source, context) {
            Some(variant) => ResolvedVariant {
                name: &variant.name,
                payload: variant.payload.as_ref(),
                enabled: true,
                feature_enabled: true,
            },
            None => ResolvedVariant::disabled(true),
        }
    }

    /// Evaluates a flag in SDK order: its environment switch, its parents, then its strategies.
    pub(crate) fn outcome<'a>(&'a self, flag: &'a CompiledFlag, context: &Context) -> Outcome<'a> {
        if !flag.enabled || !(flag.dependencies.is_empty() || self.dependencies_satisfied(flag, context)) {
            return Outcome::Off;
        }
        if !flag.has_active_strategy {
            return Outcome::On(None);
        }
        flag.strategies
            .iter()
            .find(|strategy| !strategy.disabled && strategy.holds(context))
            .map_or(Outcome::Off, |strategy| Outcome::On(Some(strategy)))
    }

    /// Whether every parent is in the state it must be. A parent must exist and must not have
    /// parents of its own.
    pub(crate) fn dependencies_satisfied(&self, flag: &CompiledFlag, context: &Context) -> bool {
        flag.dependencies.iter().all(|dependency| {
            let Some(parent) = self.flags.get(&dependency.parent) else {
                return false;
            };
            if !parent.dependencies.is_empty() {
                return false;
            }
            let outcome = self.outcome(parent, context);
            match (dependency.enabled, outcome) {
                (false, outcome) => matches!(outcome, Outcome::Off),
                (true, Outcome::Off) => false,
                (true, on) => {
                    dependency.variants.is_empty() || {
                        let variant = Self::variant_of(parent, on, context);
                        dependency.variants.iter().any(|name| **name == *variant.name)
                    }
                }
            }
        })
    }
}

/// The segment in `slot` of `slots`, if it exists: [`Engine::segment`], for where the engine is
/// borrowed in parts.
fn segment_in(slots: &[Option<CompiledSegment>], slot: u32) -> Option<&CompiledSegment> {
    slots.get(slot as usize).and_then(Option::as_ref)
}

/// Gives back the spare capacity of every list in `feature`, which is kept for as long as the
/// engine: lists read from JSON or built row by row hold up to twice what they use.
fn compact(feature: &mut Feature) {
    for strategy in &mut feature.strategies {
        for constraint in &mut strategy.constraints {
            constraint.values.shrink_to_fit();
        }
        strategy.constraints.shrink_to_fit();
        strategy.segments.shrink_to_fit();
        compact_variants(&mut strategy.variants);
    }
    feature.strategies.shrink_to_fit();
    compact_variants(&mut feature.variants);
    for dependency in &mut feature.dependencies {
        if let Some(variants) = &mut dependency.variants {
            variants.shrink_to_fit();
        }
    }
    feature.dependencies.shrink_to_fit();
}

fn compact_variants(variants: &mut Vec<crate::model::Variant>) {
    for variant in variants.iter_mut() {
        for rule in &mut variant.overrides {
            rule.values.shrink_to_fit();
        }
        variant.overrides.shrink_to_fit();
    }
    variants.shrink_to_fit();
}
