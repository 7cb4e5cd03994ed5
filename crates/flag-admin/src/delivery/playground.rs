//! The playgrounds: why each flag is on or off for a context, in one environment (Unleash's
//! deprecated playground) or for every combination of context values in several (the advanced
//! one). Answers can be hundreds of megabytes, so each is made in parts of about
//! [`CHUNK_BYTES`] as the interface writes it, never held whole.

pub mod types;

use std::sync::Arc;

use flag_eval::{ContextCombinations, ContextCursor};
use serde::Serialize;
use serde_json::Value;

use self::types::EvaluatedFeature;
use crate::delivery::Delivery;
use crate::delivery::engines::{self, Compiled, PastParts};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime};

/// The size both playgrounds' answers are written in: large enough that handing each chunk
/// between threads costs little, small enough that a few per request are nothing to hold.
pub const CHUNK_BYTES: usize = 256 * 1024;

fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    // Without OS randomness, random rollouts fall back to a fixed sequence; nothing else depends on it.
    getrandom::fill(&mut bytes).unwrap_or_default();
    u64::from_le_bytes(bytes)
}

fn internal(error: serde_json::Error) -> AdminError {
    AdminError::Internal(error.to_string())
}

/// An answer written in parts of about [`CHUNK_BYTES`], each made on the CPU pool.
pub trait Chunked: Send + 'static {
    /// The next part; `None` once the answer is all written.
    fn next_chunk(&mut self) -> Option<Result<Vec<u8>, AdminError>>;

    /// Whether every part has been made.
    fn is_finished(&self) -> bool;
}

/// The deprecated playground's answer, `{"input": ..., "features": [...]}`, each flag explained
/// as it is written: at 10,000 flags the answer is 9 MB, and neither it nor a list of
/// explanations is ever held whole.
pub struct PlaygroundAnswer {
    environments: Environments,
    /// The next flag to explain, in the playground's order.
    next: usize,
    context: flag_eval::Context,
    environment: String,
    /// `{"input":<body>,"features":[`, until it is written.
    head: Vec<u8>,
    /// What closes the answer: `]`, the revision that answered when asked about a past moment,
    /// and `}`.
    end: Vec<u8>,
    wrote_feature: bool,
    finished: bool,
}

impl std::fmt::Debug for PlaygroundAnswer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PlaygroundAnswer")
            .field("environment", &self.environment)
            .finish_non_exhaustive()
    }
}

impl Chunked for PlaygroundAnswer {
    fn next_chunk(&mut self) -> Option<Result<Vec<u8>, AdminError>> {
        if self.finished {
            return None;
        }
        let mut out = std::mem::take(&mut self.head);
        out.reserve(CHUNK_BYTES + CHUNK_BYTES / 4);
        while out.len() < CHUNK_BYTES {
            let (compiled, index) = match self.environments.reach(self.next) {
                Ok(None) => {
                    out.append(&mut self.end);
                    self.finished = true;
                    break;
                }
                Err(error) => {
                    self.finished = true;
                    return Some(Err(error));
                }
                Ok(Some(next)) => next,
            };
            self.next += 1;
            let Some(explanation) = compiled
                .feature_at(index)
                .and_then(|feature| compiled.engine.explain(&feature.name, &self.context))
            else {
                continue;
            };
            if self.wrote_feature {
                out.push(b',');
            }
            let entry = EvaluatedFeature::new(&explanation, &self.environment, None);
            if let Err(error) = serde_json::to_writer(&mut out, &entry) {
                self.finished = true;
                return Some(Err(internal(error)));
            }
            self.wrote_feature = true;
        }
        Some(Ok(out))
    }

    fn is_finished(&self) -> bool {
        self.finished
    }
}

/// The environments an answer explains: compiled whole (in request order), or read from their
/// history a part at a time ([`engines::compile_parts_at`]; one per distinct environment, in the
/// order of the advanced answer's groups), the parts of all holding the same flags.
enum Environments {
    Whole(Vec<Arc<Compiled>>),
    Past(Box<PastWindow>),
}

/// The parts of each environment being explained.
struct PastWindow {
    parts: Vec<PastParts>,
    /// Each environment's current part, all holding the same flags.
    current: Vec<Arc<Compiled>>,
    /// The place among all flags of the current parts' first (before the first part, that of
    /// the first flag asked for).
    start: usize,
    /// The parts explained, freed with the answer (off its path, once its last part is made).
    spent: Vec<Arc<Compiled>>,
}

impl Environments {
    /// Past environments' parts, the first beginning at flag `start`.
    fn past(parts: Vec<PastParts>, start: usize) -> Self {
        Self::Past(Box::new(PastWindow {
            parts,
            current: Vec::new(),
            start,
            spent: Vec::new(),
        }))
    }

    /// Flag `index` (in the first environment's order): the compiled environment, or the part of
    /// the first environment, that holds it, and its place there; `None` past the last. A past
    /// environment's parts before it are passed over, and its next parts waited for here.
    fn reach(&mut self, index: usize) -> Result<Option<(Arc<Compiled>, usize)>, AdminError> {
        match self {
            Self::Whole(compiled) => Ok(compiled
                .first()
                .filter(|first| index < first.len())
                .map(|first| (Arc::clone(first), index))),
            Self::Past(window) => {
                while window
                    .current
                    .first()
                    .is_none_or(|part| index >= window.start + part.len())
                {
                    let mut next = Vec::with_capacity(window.parts.len());
                    for parts in &window.parts {
                        match parts.next_part() {
                            Some(part) => next.push(Arc::new(part?)),
                            None => return Ok(None),
                        }
                    }
                    if next.iter().any(|part| !part.lists_the_same_flags(&next[0])) {
                        return Err(AdminError::Internal(
                            "environments read at one past moment list different flags".into(),
                        ));
                    }
                    window.start += window.current.first().map_or(0, |part| part.len());
                    let spent = std::mem::replace(&mut window.current, next);
                    window.spent.extend(spent);
                }
                Ok(window
                    .current
                    .first()
                    .map(|first| (Arc::clone(first), index - window.start)))
            }
        }
    }

    /// The compiled environment (or its current part) of the answer's group `group`, which is
    /// requested at `request`.
    fn environment(&self, group: usize, request: usize) -> &Compiled {
        match self {
            Self::Whole(compiled) => &compiled[request],
            Self::Past(window) => &window.current[group],
        }
    }
}

/// `environments` without repeats, in the order each first appears.
fn distinct(environments: &[String]) -> Vec<String> {
    let mut distinct: Vec<String> = Vec::with_capacity(environments.len());
    for environment in environments {
        if !distinct.contains(environment) {
            distinct.push(environment.clone());
        }
    }
    distinct
}

/// Who may use the deprecated playground.
pub const DEPRECATED: Access = Access::ReadIn(Permission::Playground);

/// Evaluates a context in one environment (Unleash's deprecated playground): the answer, to be
/// written in parts.
pub async fn deprecated(
    ctx: &Runtime,
    delivery: &Delivery,
    caller: &Caller,
    mut body: Value,
) -> Result<PlaygroundAnswer, AdminError> {
    let Value::Object(fields) = &mut body else {
        return Err(AdminError::invalid("/", "the body must be an object"));
    };
    let environment = match fields.get_mut("environment") {
        Some(value @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
            if !value.is_string() {
                *value = Value::String(value.to_string());
            }
            value.as_str().unwrap_or_default().to_owned()
        }
        Some(_) => {
            return Err(AdminError::invalid(
                "/environment",
                "/environment must be a string",
            ));
        }
        None => return Err(AdminError::invalid("/environment", "/environment is required")),
    };
    caller.require_in(&environment)?;
    // Non-string custom values are dropped as the advanced playground drops them, without warnings.
    let types::PlaygroundScope {
        projects,
        context,
        at,
        ..
    } = types::playground_scope(fields)?;
    let environments = std::slice::from_ref(&environment);
    let (environments, as_of) = match at {
        None => (
            Environments::Whole(engines::compile(ctx, delivery, &projects, environments).await?),
            None,
        ),
        Some(at) => {
            let (as_of, parts) =
                engines::compile_parts_at(ctx, &projects, environments, at, 0..usize::MAX).await?;
            (Environments::past(parts, 0), Some(as_of))
        }
    };
    let mut head = b"{\"input\":".to_vec();
    serde_json::to_writer(&mut head, &body).map_err(internal)?;
    head.extend_from_slice(b",\"features\":[");
    let mut end = b"]".to_vec();
    end.extend(as_of.map(|as_of| as_of.field()).unwrap_or_default());
    end.push(b'}');
    Ok(PlaygroundAnswer {
        environments,
        next: 0,
        // At a past moment, dates are judged as they were then, unless the context says otherwise.
        context: types::evaluation_context(&context, at.unwrap_or_else(|| ctx.now_utc()), seed()),
        environment,
        head,
        end,
        wrote_feature: false,
        finished: false,
    })
}

#[derive(Serialize)]
struct Warnings<'a> {
    #[serde(rename = "invalidContextProperties")]
    invalid_context_properties: &'a [String],
}

/// Who may use the advanced playground.
pub const ADVANCED: Access = Access::ReadIn(Permission::Playground);

/// Evaluates every combination of comma-separated context values in several environments
/// (Unleash's advanced playground), once the limits pass: the answer, to be written in parts.
pub async fn advanced(
    ctx: &Runtime,
    delivery: &Delivery,
    caller: &Caller,
    body: Value,
) -> Result<AdvancedAnswer, AdminError> {
    advanced_window(ctx, delivery, caller, body, None).await
}

/// [`advanced`], answering only the flags at `window` (positions in the answer's order, by
/// name), whose limits count only those flags; every flag when `None`.
async fn advanced_window(
    ctx: &Runtime,
    delivery: &Delivery,
    caller: &Caller,
    mut body: Value,
    window: Option<std::ops::Range<usize>>,
) -> Result<AdvancedAnswer, AdminError> {
    let Value::Object(fields) = &mut body else {
        return Err(AdminError::invalid("/", "the body must be an object"));
    };
    let environments: Vec<String> = match fields.get("environments") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(index, item)| types::environment_name(item, &format!("/environments/{index}")))
            .collect::<Result<_, _>>()?,
        Some(Value::Array(_)) => {
            return Err(AdminError::invalid(
                "/environments",
                "/environments must have at least 1 item",
            ));
        }
        Some(_) => {
            return Err(AdminError::invalid(
                "/environments",
                "/environments must be an array",
            ));
        }
        None => return Err(AdminError::invalid("/environments", "/environments is required")),
    };
    for environment in &environments {
        caller.require_in(environment)?;
    }
    let types::PlaygroundScope {
        projects,
        context,
        invalid,
        at,
    } = types::playground_scope(fields)?;
    let combinations = ContextCombinations::expand(&context);
    drop(context);

    // The limits count the features of the first environment, as Unleash does; nothing else is
    // compiled until they pass (at a past moment, every environment is read at once, and its
    // parts compiled while the answer is written).
    let past = match at {
        Some(at) => {
            let within = window.clone().unwrap_or(0..usize::MAX);
            Some(engines::compile_parts_at(ctx, &projects, &distinct(&environments), at, within).await?)
        }
        None => None,
    };
    let first = match &past {
        Some(_) => None,
        None => Some(engines::compile(ctx, delivery, &projects, &environments[..1]).await?),
    };
    let all = match (&past, &first) {
        (Some((_, parts)), _) => parts.first().map_or(0, engines::PastParts::len),
        (None, Some(first)) => first.first().map_or(0, |compiled| compiled.len()),
        (None, None) => 0,
    };
    let window = window.unwrap_or(0..all);
    let window = window.start.min(all)..window.end.min(all);
    let features = window.len();
    combinations
        .check_limit(environments.len(), features, ctx.settings.combination_limit)
        .map_err(|error| AdminError::bad_request(error.to_string()))?;
    combinations
        .check_bytes(environments.len(), features, ctx.settings.context_bytes_limit)
        .map_err(|error| AdminError::bad_request(error.to_string()))?;
    let (compiled, as_of) = match past {
        Some((as_of, parts)) => (Environments::past(parts, window.start), Some(as_of)),
        None => (
            Environments::Whole(engines::compile(ctx, delivery, &projects, &environments).await?),
            None,
        ),
    };

    let mut tail = b"],\"input\":".to_vec();
    serde_json::to_writer(&mut tail, &body).map_err(internal)?;
    drop(body);
    if !invalid.is_empty() {
        tail.extend_from_slice(b",\"warnings\":");
        let warnings = Warnings {
            invalid_context_properties: &invalid,
        };
        serde_json::to_writer(&mut tail, &warnings).map_err(internal)?;
    }
    tail.extend(as_of.map(|as_of| as_of.field()).unwrap_or_default());
    tail.push(b'}');

    // At a past moment, dates are judged as they were then, unless the context says otherwise.
    let now = at.unwrap_or_else(|| ctx.now_utc());
    let mut answer = AdvancedAnswer::new(compiled, all, &environments, combinations, tail, now);
    answer.position.feature = window.start;
    answer.window = window;
    Ok(answer)
}

/// The advanced playground for an interface that shows its answer rather than passing it on, a
/// page of flags at a time: `query` evaluated as [`advanced`] evaluates the body it stands for,
/// under the same access ([`ADVANCED`]), for the flags at positions `flags` (by name; the limits
/// count only those), and the answer read back whole on the CPU pool with how many flags there
/// are in all; `None` when it would pass `max_bytes`.
pub async fn advanced_shown(
    ctx: &Runtime,
    delivery: &Delivery,
    caller: &Caller,
    query: &types::PlaygroundQuery,
    flags: std::ops::Range<usize>,
    max_bytes: usize,
) -> Result<Option<(types::shown::Answer, usize)>, AdminError> {
    let mut answer = advanced_window(ctx, delivery, caller, query.body(), Some(flags)).await?;
    let total = answer.total;
    ctx.cpu
        .run(move || {
            let mut bytes = Vec::new();
            while let Some(chunk) = answer.next_chunk() {
                bytes.extend_from_slice(&chunk?);
                if bytes.len() > max_bytes {
                    return Ok(None);
                }
            }
            serde_json::from_slice(&bytes)
                .map(|shown| Some((shown, total)))
                .map_err(internal)
        })
        .await?
}

/// Where the writer of an advanced answer stands.
#[derive(Debug, Default)]
struct Position {
    feature: usize,
    group: usize,
    occurrence: usize,
    combination: u64,
    in_feature: bool,
    in_group: bool,
    wrote_entry: bool,
    started: bool,
    finished: bool,
}

/// An advanced answer being written: everything it needs, owned, and where it stands, so each
/// chunk can be made on whichever pool thread is free.
///
/// The answer is `{"features": [...], "input": ..., "warnings"?: ...}`. Each feature lists its
/// environments in request order; a repeated environment adds its entries to its first key, one
/// run of combinations per time it was named.
pub struct AdvancedAnswer {
    /// The requested environments, compiled.
    environments: Environments,
    /// How many flags the first environment has.
    total: usize,
    /// Distinct environment names in order of first appearance, each with the indices of its
    /// occurrences in `compiled`.
    groups: Vec<(String, Vec<usize>)>,
    combinations: ContextCombinations,
    cursor: ContextCursor,
    seed: u64,
    draws: u64,
    tail: Vec<u8>,
    position: Position,
    /// The flags answered, by position.
    window: std::ops::Range<usize>,
}

impl std::fmt::Debug for AdvancedAnswer {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AdvancedAnswer")
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl Chunked for AdvancedAnswer {
    fn next_chunk(&mut self) -> Option<Result<Vec<u8>, AdminError>> {
        if self.position.finished {
            return None;
        }
        let mut out = Vec::with_capacity(CHUNK_BYTES + CHUNK_BYTES / 4);
        match self.fill(&mut out) {
            Ok(()) => Some(Ok(out)),
            Err(error) => {
                self.position.finished = true;
                Some(Err(error))
            }
        }
    }

    fn is_finished(&self) -> bool {
        self.position.finished
    }
}

impl AdvancedAnswer {
    fn new(
        compiled: Environments,
        total: usize,
        environments: &[String],
        combinations: ContextCombinations,
        tail: Vec<u8>,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Self {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        let mut group_of: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (index, environment) in environments.iter().enumerate() {
            match group_of.get(environment.as_str()) {
                Some(&group) => groups[group].1.push(index),
                None => {
                    group_of.insert(environment, groups.len());
                    groups.push((environment.clone(), vec![index]));
                }
            }
        }
        let cursor = ContextCursor::new(&combinations, now);
        Self {
            environments: compiled,
            total,
            groups,
            combinations,
            cursor,
            seed: seed(),
            draws: 0,
            tail,
            position: Position::default(),
            window: 0..usize::MAX,
        }
    }

    fn fill(&mut self, out: &mut Vec<u8>) -> Result<(), AdminError> {
        let count = self.combinations.count();
        if !self.position.started {
            out.extend_from_slice(b"{\"features\":[");
            self.position.started = true;
        }
        while out.len() < CHUNK_BYTES {
            let reached = if self.position.feature < self.window.end {
                self.environments.reach(self.position.feature)?
            } else {
                None
            };
            let Some((first, index)) = reached else {
                out.append(&mut self.tail);
                self.position.finished = true;
                return Ok(());
            };
            let Some(feature) = first.feature_at(index) else {
                out.append(&mut self.tail);
                self.position.finished = true;
                return Ok(());
            };
            let position = &mut self.position;
            if !position.in_feature {
                if position.feature > self.window.start {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"name\":");
                serde_json::to_writer(&mut *out, &feature.name).map_err(internal)?;
                out.extend_from_slice(b",\"projectId\":");
                serde_json::to_writer(&mut *out, feature.project.as_deref().unwrap_or("default"))
                    .map_err(internal)?;
                out.extend_from_slice(b",\"environments\":{");
                position.in_feature = true;
            }
            let (environment, occurrences) = &self.groups[position.group];
            if !position.in_group {
                if position.group > 0 {
                    out.push(b',');
                }
                serde_json::to_writer(&mut *out, environment).map_err(internal)?;
                out.extend_from_slice(b":[");
                position.in_group = true;
                position.wrote_entry = false;
            }

            let compiled = self
                .environments
                .environment(position.group, occurrences[position.occurrence]);
            self.cursor.seek(&self.combinations, position.combination);
            self.draws += 1;
            let context = self.cursor.context();
            context
                .random
                .reseed(self.seed ^ self.draws.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            if let Some(explanation) = compiled.engine.explain(&feature.name, context) {
                if position.wrote_entry {
                    out.push(b',');
                }
                let combination = self.cursor.combination(&self.combinations);
                let entry =
                    EvaluatedFeature::new(&explanation, environment, Some((combination, environment)));
                serde_json::to_writer(&mut *out, &entry).map_err(internal)?;
                position.wrote_entry = true;
            }

            position.combination += 1;
            if position.combination < count {
                continue;
            }
            position.combination = 0;
            position.occurrence += 1;
            if position.occurrence < occurrences.len() {
                continue;
            }
            position.occurrence = 0;
            out.push(b']');
            position.in_group = false;
            position.group += 1;
            if position.group < self.groups.len() {
                continue;
            }
            position.group = 0;
            out.extend_from_slice(b"}}");
            position.in_feature = false;
            position.feature += 1;
        }
        Ok(())
    }
}

/// Who may try a strategy before saving it: whoever may read a flag's strategies there.
pub const PREVIEW_STRATEGY: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// Evaluates `request`, as it would be saved on `feature` in `environment`, for `context`
/// (field names to values; names other than Unleash's own are custom properties), without
/// saving anything: the definition is checked as a save checks it, and its segments are read
/// as stored.
pub async fn preview_strategy(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): crate::catalogue::strategies::Place,
    request: crate::catalogue::strategies::types::StrategyRequest,
    context: std::collections::BTreeMap<String, String>,
) -> Result<types::PreviewOut, AdminError> {
    caller.require_in(&environment)?;
    let input = request.into_input(&feature)?;
    let ids = input.segments.clone();
    let rows = crate::runtime::db::run(&ctx.store, move |conn| {
        ids.iter()
            .map(|&id| flag_store::queries::segments::get(conn, id))
            .collect::<Result<Vec<_>, _>>()
    })
    .await?;
    let segments = rows
        .into_iter()
        .map(|row| {
            Ok(flag_eval::Segment {
                id: i64::from(row.id),
                constraints: row.constraints()?,
                name: row.name,
            })
        })
        .collect::<Result<Vec<_>, flag_store::StoreError>>()?;
    let strategy = flag_eval::Strategy {
        name: input.name,
        title: input.title,
        disabled: Some(input.disabled),
        parameters: input.parameters.into(),
        constraints: input.constraints,
        segments: input.segments.iter().map(|&id| i64::from(id)).collect(),
        variants: input.variants,
        ..flag_eval::Strategy::default()
    };
    let document = flag_eval::ClientFeatures {
        version: 2,
        features: vec![flag_eval::Feature {
            name: feature.clone(),
            enabled: true,
            project: Some(project),
            strategies: vec![strategy],
            ..flag_eval::Feature::default()
        }],
        segments,
    };
    let (engine, _) = flag_eval::Engine::compile_owned(document, flag_eval::CompileOptions::default());
    let mut fields: serde_json::Map<String, serde_json::Value> = serde_json::Map::new();
    let mut properties = serde_json::Map::new();
    for (name, value) in context {
        if matches!(
            name.as_str(),
            "userId" | "sessionId" | "remoteAddress" | "currentTime" | "appName"
        ) {
            fields.insert(name, serde_json::Value::String(value));
        } else {
            properties.insert(name, serde_json::Value::String(value));
        }
    }
    fields.insert("environment".into(), serde_json::Value::String(environment));
    fields.insert("properties".into(), serde_json::Value::Object(properties));
    let context = types::evaluation_context(&fields, ctx.now_utc(), seed());
    let explanation = engine
        .explain(&feature, &context)
        .ok_or_else(|| AdminError::Internal("the tried flag was not compiled".into()))?;
    Ok(types::PreviewOut::of(&explanation))
}
