//! The rest of the admin API at Unleash's paths: environments, projects, context fields, strategy
//! types, dependencies, segments and API tokens.

use actix_web::http::header::LOCATION;
use actix_web::{HttpResponse, web};
use chrono::Utc;
use flag_store::models::{ContextFieldRow, NewApiToken, StrategyTypeRow};
use flag_store::queries;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{Timestamp, iso};
use crate::error::ApiError;
use crate::extract::Body;
use crate::secrets;

fn now() -> chrono::NaiveDateTime {
    Utc::now().naive_utc()
}

fn required_name(name: &str, path: &str) -> Result<String, ApiError> {
    let name = name.trim();
    let valid = !name.is_empty()
        && name.len() <= 100
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'));
    if valid {
        Ok(name.to_owned())
    } else {
        Err(ApiError::invalid(
            path,
            format!("{path} must be 1 to 100 URL-friendly characters"),
        ))
    }
}

/// `GET /api/admin/context`.
pub async fn context_fields(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<HttpResponse, ApiError> {
    let rows = crate::db::run(&state.store, queries::context_fields::list).await?;
    let fields: Vec<Value> = rows
        .iter()
        .map(|row| {
            let legal = row.legal_values()?;
            Ok(json!({"name": row.name, "description": row.description,
                   "stickiness": row.stickiness, "sortOrder": row.sort_order, "legalValues": legal,
                   "createdAt": iso(row.created_at)}))
        })
        .collect::<Result<_, flag_store::StoreError>>()?;
    Ok(HttpResponse::Ok().json(fields))
}

/// Body of `POST /api/admin/context`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateContextField {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    stickiness: bool,
    #[serde(default)]
    sort_order: Option<i32>,
    #[serde(default)]
    legal_values: Vec<Value>,
}

/// `POST /api/admin/context`: 201.
pub async fn create_context_field(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateContextField>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let row = ContextFieldRow {
        name: required_name(&request.name, "/name")?,
        description: request.description,
        stickiness: request.stickiness,
        sort_order: request.sort_order.unwrap_or(10),
        legal_values: serde_json::to_string(&request.legal_values)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        created_at: now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::context_fields::create(conn, &row, &actor)
    })
    .await?;
    Ok(HttpResponse::Created()
        .json(json!({"name": row.name, "description": row.description, "stickiness": row.stickiness})))
}

/// `GET /api/admin/strategies`.
pub async fn strategy_types(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<HttpResponse, ApiError> {
    let rows = crate::db::run(&state.store, queries::strategies::list_types).await?;
    let strategies: Vec<Value> = rows
        .iter()
        .map(|row| {
            let parameters = row.parameters()?;
            Ok(json!({"name": row.name, "title": row.title, "description": row.description, "editable": !row.built_in,
                   "deprecated": false, "parameters": parameters}))
        })
        .collect::<Result<_, flag_store::StoreError>>()?;
    Ok(HttpResponse::Ok().json(json!({"version": 1, "strategies": strategies})))
}

/// Body of `POST /api/admin/strategies`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateStrategyType {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Vec<Value>,
}

/// `POST /api/admin/strategies`: registers a custom strategy type; 201.
pub async fn create_strategy_type(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateStrategyType>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let row = StrategyTypeRow {
        name: required_name(&request.name, "/name")?,
        title: request.title,
        description: request.description,
        parameters: serde_json::to_string(&request.parameters)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        built_in: false,
        created_at: now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::strategies::register_type(conn, &row, &actor)
    })
    .await?;
    Ok(HttpResponse::Created().json(
        json!({"name": row.name, "title": row.title, "description": row.description,
        "editable": true, "deprecated": false, "parameters": request.parameters}),
    ))
}

/// `GET /api/admin/segments`.
pub async fn segments(state: web::Data<AppState>, _principal: Principal) -> Result<HttpResponse, ApiError> {
    let rows = crate::db::run(&state.store, queries::segments::list).await?;
    let segments: Vec<Value> = rows
        .iter()
        .map(|row| {
            let constraints = row.constraints()?;
            Ok(json!({"id": row.id, "name": row.name, "description": row.description, "constraints": constraints,
                   "project": row.project_id, "createdBy": row.created_by, "createdAt": iso(row.created_at)}))
        })
        .collect::<Result<_, flag_store::StoreError>>()?;
    Ok(HttpResponse::Ok().json(json!({"segments": segments})))
}

/// Body of `POST /api/admin/api-tokens`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateApiToken {
    token_name: String,
    #[serde(rename = "type")]
    token_type: String,
    #[serde(default)]
    environment: Option<String>,
    #[serde(default)]
    projects: Option<Vec<String>>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    expires_at: Option<Timestamp>,
}

/// `POST /api/admin/api-tokens`: a client, backend or frontend token; the secret is shown once.
pub async fn create_api_token(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateApiToken>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let token_type = request.token_type.to_lowercase();
    if !matches!(token_type.as_str(), "client" | "backend" | "frontend") {
        return Err(ApiError::invalid(
            "/type",
            "/type must be client, backend or frontend",
        ));
    }
    if request.token_name.trim().is_empty() {
        return Err(ApiError::invalid("/tokenName", "/tokenName must not be empty"));
    }
    let environment = request.environment.unwrap_or_else(|| "development".into());
    let projects = request
        .projects
        .or_else(|| request.project.map(|project| vec![project]))
        .unwrap_or_else(|| vec!["*".into()]);
    let project_part = match projects.as_slice() {
        [single] => single.clone(),
        _ => "[]".into(),
    };
    let secret = format!(
        "{project_part}:{environment}.{}",
        secrets::random_hex(28).map_err(|error| ApiError::Internal(error.to_string()))?
    );
    let created_at = now();
    let token = NewApiToken {
        token_name: request.token_name.trim().to_owned(),
        secret_hash: secrets::verifier(&secret),
        token_type: token_type.clone(),
        environment: environment.clone(),
        projects: serde_json::to_string(&projects).map_err(|error| ApiError::Internal(error.to_string()))?,
        expires_at: request.expires_at.map(|at| at.0.naive_utc()),
        created_at,
    };
    let actor = principal.actor().to_owned();
    let check_environment = environment.clone();
    let row = crate::db::run(&state.store, move |conn| {
        queries::environments::get(conn, &check_environment)?;
        queries::api_tokens::create(conn, &token, &actor)
    })
    .await
    .map_err(|error| match error {
        ApiError::NotFound(message) => ApiError::bad_request(message),
        other => other,
    })?;
    Ok(HttpResponse::Created().insert_header((LOCATION, "api-tokens")).json(json!({
        "secret": secret, "tokenName": row.token_name, "type": row.token_type, "environment": row.environment,
        "project": project_part, "projects": projects, "expiresAt": row.expires_at.map(iso),
        "createdAt": iso(row.created_at), "seenAt": null, "alias": null
    })))
}

/// `GET /api/admin/api-tokens`: every token without its secret, which is never stored.
pub async fn list_api_tokens(
    state: web::Data<AppState>,
    principal: Principal,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin_read()?;
    let rows = crate::db::run(&state.store, queries::api_tokens::list).await?;
    let tokens: Vec<Value> = rows
        .iter()
        .map(|row| {
            let projects = row.projects()?;
            Ok(json!({"id": row.id, "tokenName": row.token_name, "type": row.token_type, "environment": row.environment,
                   "projects": projects, "expiresAt": row.expires_at.map(iso), "createdAt": iso(row.created_at),
                   "seenAt": row.seen_at.map(iso)}))
        })
        .collect::<Result<_, flag_store::StoreError>>()?;
    Ok(HttpResponse::Ok().json(json!({"tokens": tokens})))
}

/// `DELETE /api/admin/api-tokens/{token}`: the token given by its secret; 200.
pub async fn delete_api_token(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    let hash = secrets::verifier(&path.into_inner());
    let actor = principal.actor().to_owned();
    crate::db::run(&state.store, move |conn| {
        let token = queries::api_tokens::find_by_hash(conn, &hash)?
            .ok_or_else(|| flag_store::StoreError::not_found("api token", "(secret)"))?;
        queries::api_tokens::delete(conn, token.id, &actor, now())
    })
    .await?;
    Ok(HttpResponse::Ok().finish())
}
