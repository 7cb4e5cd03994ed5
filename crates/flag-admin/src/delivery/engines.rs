//! The compiled-engine cache: each environment's flags compiled once per store revision.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use flag_eval::{ClientFeatures, CompileOptions, Engine, Feature, PreparedFlag};
use flag_store::StoreError;
use flag_store::queries::{self, evaluation::ProjectScope, history::Part};

use crate::delivery::Delivery;
use crate::runtime::Runtime;
use crate::runtime::cache::RevisionCache;
use crate::runtime::error::AdminError;

/// A compiled environment: its engine and the order its flags are listed in. The engine keeps
/// each flag's definition; nothing else holds a copy.
#[derive(Debug)]
pub struct Compiled {
    /// The flags' names, in the playground's order.
    order: Box<[Box<str>]>,
    /// The engine, with every flag's definition.
    pub engine: Engine,
}

impl Compiled {
    fn new(document: ClientFeatures) -> Self {
        let order = document
            .features
            .iter()
            .map(|feature| feature.name.as_str().into())
            .collect();
        let (engine, _warnings) = Engine::compile_owned(document, CompileOptions::default());
        Self { order, engine }
    }

    /// A part of an environment read from its history ([`queries::history::PastFlags::parts`]):
    /// its flags in their order, with the parents they depend on from outside it (compiled, not
    /// listed), and the segments.
    fn from_part(part: Part<PreparedFlag>, segments: &[flag_eval::Segment]) -> Self {
        let Part {
            names,
            mut flags,
            parents,
        } = part;
        flags.extend(parents);
        let (engine, _warnings) = Engine::assemble(flags, segments, CompileOptions::default());
        Self {
            order: names.into_iter().map(String::into_boxed_str).collect(),
            engine,
        }
    }

    /// How many flags there are.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether `other` lists the same flags in the same order.
    pub fn lists_the_same_flags(&self, other: &Self) -> bool {
        self.order == other.order
    }

    /// The flags' definitions, in the playground's order.
    pub fn features(&self) -> impl Iterator<Item = &Feature> {
        self.order.iter().filter_map(|name| self.engine.feature(name))
    }

    /// The definition of the flag at `index` in that order.
    pub fn feature_at(&self, index: usize) -> Option<&Feature> {
        self.order.get(index).and_then(|name| self.engine.feature(name))
    }
}

/// Compiled environments by environment and projects, as of the store's revision, so every
/// write, by this process or another replica on the same database, is seen by the next request.
///
/// Every environment that does not exist evaluates alike (every flag off, no strategies), so all
/// of them share one entry under one key: requests naming many unknown environments neither
/// compile each one nor push known environments out of the cache.
pub type EngineCache = RevisionCache<(String, ProjectScope), Compiled>;

/// Most compiled environments kept.
pub const CAPACITY: usize = 64;

/// The key all unknown environments share; no environment can be named with an empty string.
const UNKNOWN: &str = "";

/// The entries of every environment in `environments` (by its own name), when all reflect
/// `revision`.
fn all(
    cache: &EngineCache,
    environments: &[String],
    projects: &ProjectScope,
    revision: i32,
) -> Option<Vec<Arc<Compiled>>> {
    environments
        .iter()
        .map(|environment| cache.get(&(environment.clone(), projects.clone()), revision))
        .collect()
}

/// A compiled environment found in the cache, or the document to compile for it.
enum Found {
    Cached(Arc<Compiled>),
    Load((String, ProjectScope), ClientFeatures),
}

/// The compiled environments for `environments` (in that order; a repeated name shares one
/// compilation), from the cache when the store has not changed since. The documents of the
/// others are read in one trip to the blocking pool and compiled on the CPU pool.
///
/// One compilation runs at a time: a request that misses the cache waits for the one under way
/// and then looks again, so a burst of requests after a write (or on a cold start) compiles each
/// environment once, and holds one copy of its rows and engine, not one per request.
pub async fn compile(
    ctx: &Runtime,
    delivery: &Delivery,
    projects: &ProjectScope,
    environments: &[String],
) -> Result<Vec<Arc<Compiled>>, AdminError> {
    let projects = projects.clone();
    let requested = environments.to_vec();
    let cache = Arc::clone(&delivery.engines);
    // The usual case, every environment cached at the current revision, needs no database work
    // while the revision reading stands, and one question when it does not.
    if let Some(compiled) = ctx
        .revision
        .fresh()
        .and_then(|revision| all(&delivery.engines, environments, &projects, revision))
    {
        return Ok(compiled);
    }
    // The revision is read before waiting for the lock, so that a database that cannot answer
    // fails each request in its own time rather than one after another behind the lock, and a
    // request that finds everything cached after all never waits.
    let revision = ctx.revision.current(&ctx.store).await?;
    if let Some(compiled) = all(&delivery.engines, environments, &projects, revision) {
        return Ok(compiled);
    }
    let _compiling = delivery.compiling.lock().await;
    let watch = Arc::clone(&ctx.revision);
    let (revision, order, found) = crate::runtime::db::run(&ctx.store, move |conn| {
        let revision = watch.read(conn)?;
        if let Some(hits) = all(&cache, &requested, &projects, revision) {
            return Ok((
                revision,
                (0..hits.len()).collect(),
                hits.into_iter().map(Found::Cached).collect(),
            ));
        }
        queries::snapshot(conn, |conn| {
            // One snapshot: every compiled entry reflects exactly the revision it is stored under.
            let revision = queries::events::latest_id(conn)?;
            // Read only when an environment is not cached: it decides whether the name is known.
            let mut known: Option<HashSet<String>> = None;
            let mut by_name: HashMap<&str, usize> = HashMap::new();
            let mut by_key: HashMap<(String, ProjectScope), usize> = HashMap::new();
            let mut order = Vec::with_capacity(requested.len());
            let mut found: Vec<Found> = Vec::new();
            for environment in &requested {
                if let Some(&index) = by_name.get(environment.as_str()) {
                    order.push(index);
                    continue;
                }
                let index = match cache.get(&(environment.clone(), projects.clone()), revision) {
                    Some(hit) => {
                        found.push(Found::Cached(hit));
                        found.len() - 1
                    }
                    None => {
                        if known.is_none() {
                            let names = queries::environments::list(conn)?.into_iter().map(|row| row.name);
                            known = Some(names.collect());
                        }
                        let name = if known.as_ref().is_some_and(|known| known.contains(environment)) {
                            environment.clone()
                        } else {
                            UNKNOWN.to_owned()
                        };
                        let key = (name, projects.clone());
                        match (by_key.get(&key), cache.get(&key, revision)) {
                            (Some(&index), _) => index,
                            (None, Some(hit)) => {
                                found.push(Found::Cached(hit));
                                by_key.insert(key, found.len() - 1);
                                found.len() - 1
                            }
                            (None, None) => {
                                let document = queries::evaluation::playground_input(conn, &key.1, &key.0)?;
                                by_key.insert(key.clone(), found.len());
                                found.push(Found::Load(key, document));
                                found.len() - 1
                            }
                        }
                    }
                };
                by_name.insert(environment, index);
                order.push(index);
            }
            Ok((revision, order, found))
        })
    })
    .await?;

    let resolve = |found: Found| match found {
        Found::Cached(hit) => Some(hit),
        Found::Load(..) => None,
    };
    // The usual case, every environment cached, needs no trip to the CPU pool.
    if found.iter().all(|found| matches!(found, Found::Cached(_))) {
        let compiled: Vec<Arc<Compiled>> = found.into_iter().filter_map(resolve).collect();
        return Ok(order
            .into_iter()
            .map(|index| Arc::clone(&compiled[index]))
            .collect());
    }
    let cache = Arc::clone(&delivery.engines);
    ctx.cpu
        .run(move || {
            // The rows the documents were read from are freed by now; their pages go back before
            // compiling, and the compiler's own scratch after it.
            crate::runtime::memory::release_free_pages();
            let compiled: Vec<Arc<Compiled>> = found
                .into_iter()
                .map(|found| match found {
                    Found::Cached(hit) => hit,
                    Found::Load(key, document) => {
                        let entry = Arc::new(Compiled::new(document));
                        cache.insert(key, revision, Arc::clone(&entry));
                        entry
                    }
                })
                .collect();
            crate::runtime::memory::release_free_pages();
            order
                .into_iter()
                .map(|index| Arc::clone(&compiled[index]))
                .collect()
        })
        .await
}

/// The configuration an answer for a past moment was evaluated against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsOf {
    /// The moment asked for.
    pub at: chrono::DateTime<chrono::Utc>,
    /// The revision in force then: the newest audit event recorded at or before it.
    pub revision: i32,
}

impl AsOf {
    /// `,"asOf":{"at":…,"revision":…}`, as it follows the other fields of an answer.
    pub fn field(&self) -> Vec<u8> {
        format!(
            ",\"asOf\":{{\"at\":\"{}\",\"revision\":{}}}",
            self.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            self.revision
        )
        .into_bytes()
    }
}

/// One environment as it was at a past moment, compiled a part at a time while its answer is
/// written: the parts of [`compile_parts_at`], each [`Compiled`] on its own, in the playground's
/// order.
#[derive(Debug)]
pub struct PastParts {
    parts: std::sync::mpsc::Receiver<Result<Compiled, StoreError>>,
    len: usize,
}

impl PastParts {
    /// The next part, waiting until it is compiled; `None` after the last.
    pub fn next_part(&self) -> Option<Result<Compiled, AdminError>> {
        self.parts.recv().ok().map(|part| part.map_err(AdminError::from))
    }

    /// How many flags the environment has in all (the parts may hold only some of them).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The environments `environments` (distinct, in that order) as they were at `at`, read from the
/// store's history ([`queries::history`]), with the revision that answered; a moment before the
/// history begins, or after now, is refused with the range it covers. Nothing is kept: each
/// question reads and compiles its environments anew.
///
/// Both playgrounds answer flag by flag in the playground's order, and a flag's answer reads
/// only its own definition, its parents' and the segments. So each environment is compiled
/// [`crate::Settings::past_part`] flags at a time, each part with the parents its flags have
/// outside it and the segments; the answer begins when the first part is ready and is written
/// while the rest are compiled. Every environment's flags are those of the same moment, so the
/// parts of several environments hold the same flags, part for part.
///
/// Only the flags at positions `within` are compiled (a page of the console's playground); the
/// parts begin at its start.
///
/// Each environment's database connection is held only for its read; its parts are compiled
/// after it, on the same blocking thread, and stop being compiled when the answer is dropped.
pub async fn compile_parts_at(
    ctx: &Runtime,
    projects: &ProjectScope,
    environments: &[String],
    at: chrono::DateTime<chrono::Utc>,
    within: std::ops::Range<usize>,
) -> Result<(AsOf, Vec<PastParts>), AdminError> {
    let size = ctx.settings.past_part;
    let mut revision = None;
    let now = ctx.now_utc();
    let mut all = Vec::with_capacity(environments.len());
    for environment in environments {
        let projects = projects.clone();
        let environment = environment.clone();
        let within = within.clone();
        let (sender, parts) = std::sync::mpsc::channel();
        let known = revision;
        let (found, len) = crate::runtime::db::run_then(
            &ctx.store,
            move |conn| {
                let revision = match known {
                    Some(revision) => revision,
                    None => match crate::catalogue::history::revision_at(conn, at, now)? {
                        Ok(revision) => revision,
                        Err(message) => return Ok((Err(message), None)),
                    },
                };
                let past = queries::history::past_flags(conn, &projects, &environment, revision)?;
                Ok((Ok((revision, past.len())), Some(past)))
            },
            move |past| {
                let Some(mut past) = past else { return };
                let segments = std::mem::take(&mut past.segments);
                let options = CompileOptions::default();
                for part in past.parts(within, size, |feature| PreparedFlag::new(feature, &options)) {
                    let part = part.map(|part| Compiled::from_part(part, &segments));
                    let failed = part.is_err();
                    // The answer was dropped (its client went away): nothing waits for the rest.
                    if sender.send(part).is_err() || failed {
                        return;
                    }
                }
            },
        )
        .await?
        .map_err(|message| AdminError::invalid("/at", format!("/at {message}")))?;
        revision = Some(found);
        all.push(PastParts { parts, len });
    }
    let revision = revision.ok_or_else(|| AdminError::Internal("no environment to read".into()))?;
    Ok((AsOf { at, revision }, all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiled_environment_lists_its_flags_in_the_document_order() {
        let feature = |name: &str| Feature {
            name: name.into(),
            enabled: true,
            ..Feature::default()
        };
        let document = ClientFeatures {
            version: 2,
            features: vec![feature("zeta"), feature("alpha"), feature("mid")],
            segments: Vec::new(),
        };
        let compiled = Compiled::new(document);
        assert_eq!(compiled.len(), 3);
        assert!(!compiled.is_empty());
        let names: Vec<&str> = compiled.features().map(|feature| feature.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
        assert_eq!(
            compiled.feature_at(1).map(|feature| feature.name.as_str()),
            Some("alpha")
        );
        assert_eq!(compiled.feature_at(3), None);
        assert!(compiled.engine.is_enabled("mid", &flag_eval::Context::default()));
    }
}
