//! `POST /api/admin/playground` (deprecated) and `POST /api/admin/playground/advanced`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use actix_web::{HttpResponse, web};
use flag_eval::{ClientFeatures, CompileOptions, ContextCombinations, Engine, Explanation};
use flag_store::queries::{
    self,
    evaluation::{ProjectScope, playground_input},
};
use futures_util::StreamExt;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Map, Value};

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{self, EvaluatedFeature, Projects};
use crate::error::ApiError;
use crate::extract::Body;

/// A compiled environment: the document, its engine, and the store revision it reflects.
#[derive(Debug)]
pub struct Compiled {
    revision: i32,
    document: ClientFeatures,
    engine: Engine,
}

/// Compiled environments by environment and projects. An entry is used only while the store's
/// revision (its newest event) is unchanged, so every write, by this process or another replica
/// on the same database, is seen by the next request.
#[derive(Debug, Default)]
pub struct EngineCache {
    entries: Mutex<HashMap<(String, Projects), Arc<Compiled>>>,
}

impl EngineCache {
    /// Most entries kept; past this the cache starts over.
    const CAPACITY: usize = 64;
}

/// The compiled environment, from the cache when the store has not changed since; one trip to
/// the blocking pool either way.
async fn compile(
    state: &AppState,
    projects: &Projects,
    environment: &str,
) -> Result<Arc<Compiled>, ApiError> {
    let key = (environment.to_owned(), projects.clone());
    let cache = Arc::clone(&state.engines);
    crate::db::run(&state.store, move |conn| {
        let revision = queries::events::latest_id(conn)?;
        let lock = || {
            cache
                .entries
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(compiled) = lock().get(&key).filter(|compiled| compiled.revision == revision) {
            return Ok(Arc::clone(compiled));
        }
        let scope = match &key.1 {
            Projects::All => ProjectScope::All,
            Projects::Only(ids) => ProjectScope::Only(ids),
        };
        let document = playground_input(conn, scope, &key.0)?;
        let (engine, _warnings) = Engine::compile_with(&document, CompileOptions::default());
        let compiled = Arc::new(Compiled {
            revision,
            document,
            engine,
        });
        let mut entries = lock();
        if entries.len() >= EngineCache::CAPACITY {
            entries.clear();
        }
        entries.insert(key, Arc::clone(&compiled));
        Ok(compiled)
    })
    .await
}

fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    // Without OS randomness, random rollouts fall back to a fixed sequence; nothing else depends on it.
    getrandom::fill(&mut bytes).unwrap_or_default();
    u64::from_le_bytes(bytes)
}

#[derive(Serialize)]
struct PlaygroundResponse<'a> {
    input: &'a Value,
    features: Vec<EvaluatedFeature<'a>>,
}

/// `POST /api/admin/playground`: evaluates a context in one environment (deprecated).
pub async fn playground(
    state: web::Data<AppState>,
    _principal: Principal,
    Body(mut body): Body<Value>,
) -> Result<HttpResponse, ApiError> {
    let Value::Object(fields) = &mut body else {
        return Err(ApiError::invalid("/", "the body must be an object"));
    };
    let environment = match fields.get_mut("environment") {
        Some(value @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => {
            if !value.is_string() {
                *value = Value::String(value.to_string());
            }
            value.as_str().unwrap_or_default().to_owned()
        }
        Some(_) => return Err(ApiError::invalid("/environment", "/environment must be a string")),
        None => return Err(ApiError::invalid("/environment", "/environment is required")),
    };
    // Non-string custom values are dropped as the advanced playground drops them, without warnings.
    let dto::PlaygroundScope {
        projects, context, ..
    } = dto::playground_scope(fields)?;

    let compiled = compile(&state, &projects, &environment).await?;
    let now = chrono::Utc::now();
    let evaluation = dto::evaluation_context(&context, now, seed());
    let explanations: Vec<_> = compiled
        .document
        .features
        .iter()
        .filter_map(|feature| compiled.engine.explain(&feature.name, &evaluation))
        .collect();
    let features = explanations
        .iter()
        .map(|explanation| EvaluatedFeature::new(explanation, &environment, None))
        .collect();
    Ok(HttpResponse::Ok().json(PlaygroundResponse {
        input: &body,
        features,
    }))
}

#[derive(Serialize)]
struct AdvancedFeature<'a> {
    name: &'a str,
    #[serde(rename = "projectId")]
    project_id: &'a str,
    environments: EnvironmentEntries<'a>,
}

/// Entries by environment, in request order; a repeated environment adds to its first key.
struct EnvironmentEntries<'a>(Vec<(&'a str, Vec<EvaluatedFeature<'a>>)>);

impl Serialize for EnvironmentEntries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (environment, entries) in &self.0 {
            map.serialize_entry(environment, entries)?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct Warnings<'a> {
    #[serde(rename = "invalidContextProperties")]
    invalid_context_properties: &'a [String],
}

/// `POST /api/admin/playground/advanced`: evaluates every combination of comma-separated context
/// values in several environments.
pub async fn advanced(
    state: web::Data<AppState>,
    _principal: Principal,
    Body(mut body): Body<Value>,
) -> Result<HttpResponse, ApiError> {
    let Value::Object(fields) = &mut body else {
        return Err(ApiError::invalid("/", "the body must be an object"));
    };
    let environments: Vec<String> = match fields.get("environments") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .enumerate()
            .map(|(index, item)| dto::environment_name(item, &format!("/environments/{index}")))
            .collect::<Result<_, _>>()?,
        Some(Value::Array(_)) => {
            return Err(ApiError::invalid(
                "/environments",
                "/environments must have at least 1 item",
            ));
        }
        Some(_) => {
            return Err(ApiError::invalid(
                "/environments",
                "/environments must be an array",
            ));
        }
        None => return Err(ApiError::invalid("/environments", "/environments is required")),
    };
    let dto::PlaygroundScope {
        projects,
        context,
        invalid,
    } = dto::playground_scope(fields)?;
    let combinations = ContextCombinations::expand(&context);
    let mut compiled: Vec<(String, Arc<Compiled>)> = Vec::new();
    for environment in &environments {
        if !compiled.iter().any(|(name, _)| name == environment) {
            compiled.push((
                environment.clone(),
                compile(&state, &projects, environment).await?,
            ));
        }
    }
    let Some((_, first)) = compiled.first() else {
        return Err(ApiError::Internal("no environment compiled".into()));
    };
    // The limit counts the features of the first environment, as Unleash does.
    combinations
        .check_limit(
            environments.len(),
            first.document.features.len(),
            state.settings.combination_limit,
        )
        .map_err(|error| ApiError::bad_request(error.to_string()))?;
    let contexts: Vec<Map<String, Value>> = combinations.iter().collect();
    let now = chrono::Utc::now();

    // One evaluation context per combination, shared by every feature and environment.
    let evaluations: Vec<flag_eval::Context> = contexts
        .iter()
        .map(|combination| dto::evaluation_context(combination, now, seed()))
        .collect();
    let mut tail = b"],\"input\":".to_vec();
    serde_json::to_writer(&mut tail, &body).map_err(|error| ApiError::Internal(error.to_string()))?;
    if !invalid.is_empty() {
        tail.extend_from_slice(b",\"warnings\":");
        let warnings = Warnings {
            invalid_context_properties: &invalid,
        };
        serde_json::to_writer(&mut tail, &warnings).map_err(|error| ApiError::Internal(error.to_string()))?;
    }
    tail.push(b'}');

    // The answer can be megabytes: it is evaluated and written one feature at a time as the
    // client reads it, so memory stays flat however many requests are in flight.
    let answer = AdvancedAnswer {
        compiled,
        environments,
        contexts,
        evaluations,
    };
    let features = answer.feature_count();
    let chunks =
        futures_util::stream::iter(0..features + 2).map(move |index| -> Result<web::Bytes, ApiError> {
            if index == 0 {
                Ok(web::Bytes::from_static(b"{\"features\":["))
            } else if index <= features {
                answer.feature_json(index - 1).map(web::Bytes::from)
            } else {
                Ok(web::Bytes::from(std::mem::take(&mut tail)))
            }
        });
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .streaming(chunks))
}

/// Everything one advanced answer needs, owned, so features can be rendered lazily.
struct AdvancedAnswer {
    compiled: Vec<(String, Arc<Compiled>)>,
    environments: Vec<String>,
    contexts: Vec<Map<String, Value>>,
    evaluations: Vec<flag_eval::Context>,
}

impl AdvancedAnswer {
    fn feature_count(&self) -> usize {
        self.compiled
            .first()
            .map_or(0, |(_, first)| first.document.features.len())
    }

    /// The JSON of feature `index`, with a leading comma after the first.
    fn feature_json(&self, index: usize) -> Result<Vec<u8>, ApiError> {
        let Some((_, first)) = self.compiled.first() else {
            return Ok(Vec::new());
        };
        let Some(feature) = first.document.features.get(index) else {
            return Ok(Vec::new());
        };
        let mut explanations: Vec<(&str, Vec<Explanation<'_>>)> = Vec::new();
        for environment in &self.environments {
            let Some((_, compiled)) = self.compiled.iter().find(|(name, _)| name == environment) else {
                continue;
            };
            let evaluated: Vec<Explanation<'_>> = self
                .evaluations
                .iter()
                .filter_map(|evaluation| compiled.engine.explain(&feature.name, evaluation))
                .collect();
            explanations.push((environment, evaluated));
        }
        let mut entries: Vec<(&str, Vec<EvaluatedFeature<'_>>)> = Vec::new();
        for (environment, evaluated) in &explanations {
            let rendered = self
                .contexts
                .iter()
                .zip(evaluated)
                .map(|(combination, explanation)| {
                    EvaluatedFeature::new(explanation, environment, Some((combination, environment)))
                });
            match entries.iter_mut().find(|(name, _)| name == environment) {
                Some((_, existing)) => existing.extend(rendered),
                None => entries.push((environment, rendered.collect())),
            }
        }
        let out = AdvancedFeature {
            name: &feature.name,
            project_id: feature.project.as_deref().unwrap_or("default"),
            environments: EnvironmentEntries(entries),
        };
        let mut bytes = if index == 0 { Vec::new() } else { vec![b','] };
        serde_json::to_writer(&mut bytes, &out).map_err(|error| ApiError::Internal(error.to_string()))?;
        Ok(bytes)
    }
}
