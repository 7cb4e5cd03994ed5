//! Public signup tokens (`/api/admin/invite-link/tokens`) and signing up with one
//! (`/invite/{token}/...`).

use actix_web::http::header::LOCATION;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::{Months, NaiveDateTime, Utc};
use flag_store::models::{NewUser, SignupTokenRow};
use flag_store::queries::{self, signup_tokens::SignupToken};
use serde::{Deserialize, Serialize};

use crate::AppState;
use crate::auth::Principal;
use crate::dto::{self, Timestamp, UserOut, iso};
use crate::error::{ApiError, Detail};
use crate::extract::Body;
use crate::{password, secrets};

#[derive(Serialize)]
struct RoleOut<'a> {
    id: i32,
    name: &'a str,
    #[serde(rename = "type")]
    role_type: &'a str,
}

#[derive(Serialize)]
struct TokenUserOut<'a> {
    id: i32,
    name: Option<&'a str>,
    username: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TokenOut<'a> {
    secret: &'a str,
    name: &'a str,
    url: Option<&'a str>,
    expires_at: String,
    enabled: bool,
    created_at: String,
    created_by: Option<&'a str>,
    role: RoleOut<'a>,
    users: Vec<TokenUserOut<'a>>,
}

impl<'a> TokenOut<'a> {
    fn new(token: &'a SignupToken, now: NaiveDateTime) -> Self {
        Self {
            secret: &token.token.secret,
            name: &token.token.name,
            url: token.token.url.as_deref(),
            expires_at: iso(token.token.expires_at),
            // An expired token is never shown as enabled.
            enabled: token.is_usable(now),
            created_at: iso(token.token.created_at),
            created_by: token.token.created_by.as_deref(),
            role: RoleOut {
                id: token.role.id,
                name: &token.role.name,
                role_type: &token.role.role_type,
            },
            users: token
                .users
                .iter()
                .map(|user| TokenUserOut {
                    id: user.id,
                    name: user.name.as_deref(),
                    username: user.username.as_deref(),
                })
                .collect(),
        }
    }
}

/// `GET /api/admin/invite-link/tokens`.
pub async fn list(state: web::Data<AppState>, principal: Principal) -> Result<HttpResponse, ApiError> {
    principal.require_admin_read()?;
    let tokens = crate::db::run(&state.store, queries::signup_tokens::list).await?;
    let now = Utc::now().naive_utc();
    let tokens: Vec<TokenOut<'_>> = tokens.iter().map(|token| TokenOut::new(token, now)).collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({ "tokens": tokens })))
}

/// `GET /api/admin/invite-link/tokens/{token}`.
pub async fn get(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin_read()?;
    let secret = path.into_inner();
    let token = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::get(conn, &secret)
    })
    .await?;
    Ok(HttpResponse::Ok().json(TokenOut::new(&token, Utc::now().naive_utc())))
}

/// Body of `POST /api/admin/invite-link/tokens`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTokenRequest {
    name: String,
    expires_at: Timestamp,
}

/// `POST /api/admin/invite-link/tokens`: 201 with the token; expiry is capped at one month.
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateTokenRequest>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    if request.name.trim().is_empty() {
        return Err(ApiError::invalid("/name", "/name must not be empty"));
    }
    let now = Utc::now();
    let cap = now.checked_add_months(Months::new(1)).unwrap_or(now);
    let secret = secrets::random_hex(16).map_err(|error| ApiError::Internal(error.to_string()))?;
    let row = SignupTokenRow {
        url: Some(format!(
            "{}/new-user?invite={secret}",
            state.settings.unleash_url.trim_end_matches('/')
        )),
        secret,
        name: request.name,
        role_id: queries::users::VIEWER,
        enabled: true,
        expires_at: request.expires_at.0.min(cap).naive_utc(),
        created_at: now.naive_utc(),
        created_by: Some(principal.actor().to_owned()),
    };
    let actor = principal.actor().to_owned();
    let token = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::create(conn, &row, &actor)
    })
    .await?;
    Ok(HttpResponse::Created()
        .insert_header((LOCATION, format!("tokens/{}", token.token.secret)))
        .json(TokenOut::new(&token, now.naive_utc())))
}

/// Body of `PUT /api/admin/invite-link/tokens/{token}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateTokenRequest {
    #[serde(default)]
    expires_at: Option<Timestamp>,
    #[serde(default)]
    enabled: Option<bool>,
}

/// `PUT /api/admin/invite-link/tokens/{token}`: changes expiry and/or the switch; answers with
/// the whole token, as GET does.
pub async fn update(
    state: web::Data<AppState>,
    principal: Principal,
    path: web::Path<String>,
    Body(request): Body<UpdateTokenRequest>,
) -> Result<HttpResponse, ApiError> {
    principal.require_admin()?;
    if request.expires_at.is_none() && request.enabled.is_none() {
        return Err(ApiError::invalid("/", "give expiresAt, enabled or both"));
    }
    let secret = path.into_inner();
    let actor = principal.actor().to_owned();
    let now = Utc::now().naive_utc();
    let token = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::update(
            conn,
            &secret,
            request.expires_at.map(|time| time.0.naive_utc()),
            request.enabled,
            &actor,
            now,
        )
    })
    .await?;
    Ok(HttpResponse::Ok().json(TokenOut::new(&token, now)))
}

/// `GET /invite/{token}/validate`: 200 when the token can be used, otherwise 400.
pub async fn validate(state: web::Data<AppState>, path: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let secret = path.into_inner();
    let now = Utc::now().naive_utc();
    crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::validate(conn, &secret, now)
    })
    .await?;
    Ok(HttpResponse::Ok().finish())
}

/// Body of `POST /invite/{token}/signup`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignupRequest {
    #[serde(default)]
    username: Option<String>,
    email: String,
    name: String,
    password: String,
}

fn check_signup(request: &SignupRequest) -> Result<(), ApiError> {
    let mut details = dto::person_problems(
        Some(&request.email),
        request.username.as_deref(),
        Some(&request.name),
    );
    details.extend(
        password::broken_rules(&request.password)
            .into_iter()
            .map(|rule| Detail::at("/password", rule)),
    );
    ApiError::check(details)
}

/// `POST /invite/{token}/signup`: creates a Viewer linked to the token.
pub async fn sign_up(
    state: web::Data<AppState>,
    http: HttpRequest,
    path: web::Path<String>,
    Body(request): Body<SignupRequest>,
) -> Result<HttpResponse, ApiError> {
    state.signup_limiter.admit(&http)?;
    check_signup(&request)?;
    let secret = path.into_inner();
    let now = Utc::now().naive_utc();
    // Check the token first so an unusable one never pays for a hash; the signup transaction
    // checks it again.
    let token = secret.clone();
    crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::validate(conn, &token, now)
    })
    .await?;
    let password = request.password;
    let hash = state
        .cpu
        .run(move || password::hash(&password))
        .await?
        .map_err(|error| ApiError::Internal(format!("password hashing failed: {error}")))?;
    let user = NewUser {
        name: Some(request.name.trim().to_owned()),
        username: request.username.map(|username| username.trim().to_owned()),
        email: Some(request.email.trim().to_owned()),
        password_hash: Some(hash),
        root_role: queries::users::VIEWER,
        created_at: now,
    };
    let user = crate::db::run(&state.store, move |conn| {
        queries::signup_tokens::sign_up(conn, &secret, &user, now)
    })
    .await
    .map_err(|error| match error {
        ApiError::NameExists(_) => {
            ApiError::NameExists("a user with that email or username already exists".into())
        }
        other => other,
    })?;
    Ok(HttpResponse::Ok().json(UserOut::from(user)))
}
