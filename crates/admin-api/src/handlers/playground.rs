//! `POST /api/admin/playground` (deprecated) and `POST /api/admin/playground/advanced`.

use actix_web::{HttpResponse, web};
use flag_eval::{ClientFeatures, CompileOptions, ContextCombinations, Engine};
use flag_store::queries::evaluation::{ProjectScope, playground_input};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{self, EvaluatedFeature, Projects};
use crate::error::ApiError;
use crate::extract::Body;

/// A compiled environment: the document and its engine.
struct Compiled {
    document: ClientFeatures,
    engine: Engine,
}

/// Loads and compiles one environment on the blocking pool.
async fn compile(state: &AppState, projects: &Projects, environment: &str) -> Result<Compiled, ApiError> {
    let projects = projects.clone();
    let environment = environment.to_owned();
    crate::db::run(&state.store, move |conn| {
        let scope = match &projects {
            Projects::All => ProjectScope::All,
            Projects::Only(ids) => ProjectScope::Only(ids),
        };
        let document = playground_input(conn, scope, &environment)?;
        let (engine, _warnings) = Engine::compile_with(&document, CompileOptions::default());
        Ok(Compiled { document, engine })
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
    dto::validate_context(fields.get_mut("context"), "/context")?;
    let projects = dto::projects(fields.get("projects"))?;
    let mut context: Map<String, Value> = fields
        .get("context")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // Non-string custom values are dropped as the advanced playground drops them, without warnings.
    dto::drop_invalid_properties(&mut context);

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
    environments: Map<String, Value>,
}

#[derive(Serialize)]
struct Warnings<'a> {
    #[serde(rename = "invalidContextProperties")]
    invalid_context_properties: &'a [String],
}

#[derive(Serialize)]
struct AdvancedResponse<'a> {
    features: Vec<AdvancedFeature<'a>>,
    input: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<Warnings<'a>>,
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
    dto::validate_context(fields.get_mut("context"), "/context")?;
    let projects = dto::projects(fields.get("projects"))?;
    let mut context: Map<String, Value> = fields
        .get("context")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let invalid = dto::drop_invalid_properties(&mut context);
    let combinations = ContextCombinations::expand(&context);
    let mut compiled: Vec<(String, Compiled)> = Vec::new();
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

    let mut features: Vec<AdvancedFeature<'_>> = first
        .document
        .features
        .iter()
        .map(|feature| AdvancedFeature {
            name: &feature.name,
            project_id: feature.project.as_deref().unwrap_or("default"),
            environments: Map::new(),
        })
        .collect();
    for environment in &environments {
        let Some((_, environment_compiled)) = compiled.iter().find(|(name, _)| name == environment) else {
            continue;
        };
        for feature in &mut features {
            let mut entries = Vec::with_capacity(contexts.len());
            for combination in &contexts {
                let evaluation = dto::evaluation_context(combination, now, seed());
                if let Some(explanation) = environment_compiled.engine.explain(feature.name, &evaluation) {
                    let entry =
                        EvaluatedFeature::new(&explanation, environment, Some((combination, environment)));
                    entries.push(
                        serde_json::to_value(entry).map_err(|error| ApiError::Internal(error.to_string()))?,
                    );
                }
            }
            match feature.environments.get_mut(environment.as_str()) {
                Some(Value::Array(existing)) => existing.extend(entries),
                _ => {
                    feature
                        .environments
                        .insert(environment.clone(), Value::Array(entries));
                }
            }
        }
    }
    Ok(HttpResponse::Ok().json(AdvancedResponse {
        features,
        input: &body,
        warnings: (!invalid.is_empty()).then_some(Warnings {
            invalid_context_properties: &invalid,
        }),
    }))
}
