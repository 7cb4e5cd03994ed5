//! API tokens: list, create, delete. Only their SHA-256 verifiers are stored, and a secret is
//! shown once, when it is made; unless the operator gives a key (`HALYARD_SECRETS_KEY`), under
//! which new secrets are also stored sealed, and read back by admins as Unleash lists them
//! (what Terraform finds its tokens by). Tokens made before the key stay masked.

pub mod types;

use flag_store::models::{NewApiToken, TokenProjects};
use flag_store::{StoreError, queries};

use crate::identity::auth::{Access, Caller, DEFAULT_ENVIRONMENT};
use crate::identity::tokens::types::{
    CreateToken, CreatedTokenOut, TokenOut, TokensOut, UpdateToken, project_field, project_part,
};
use crate::runtime::domain::{Permission, TokenType};
use crate::{AdminError, runtime::Runtime, runtime::db, runtime::secrets};

/// Who may list the API tokens.
pub const LIST: Access = Access::AdminRead;

/// Every token: its secret masked, or, with the operator's key and to a caller who may read
/// secrets (an Admin, an admin token for every environment), as made when it was sealed.
pub async fn list(ctx: &Runtime, caller: &Caller) -> Result<TokensOut, AdminError> {
    let key = ctx
        .settings()
        .sealing
        .clone()
        .filter(|_| caller.principal().may_read_secrets());
    let wanted = key.is_some();
    let (rows, sealed) = db::run(&ctx.store, move |conn| {
        let sealed = if wanted {
            queries::access::all_sealed(conn)?
        } else {
            Vec::new()
        };
        Ok((queries::api_tokens::list(conn)?, sealed))
    })
    .await?;
    let sealed: std::collections::HashMap<String, String> =
        sealed.into_iter().map(|row| (row.owner, row.sealed)).collect();
    let tokens = rows
        .into_iter()
        .map(|row| {
            let secret = key.as_ref().and_then(|key| {
                reveal(
                    key,
                    sealed.get(&queries::access::api_token_owner(&row.secret_hash)),
                )
            });
            let mut token = TokenOut::from(row);
            if let Some(secret) = secret {
                token.secret = secret;
            }
            token
        })
        .collect();
    Ok(TokensOut { tokens })
}

/// The secret `sealed` holds, opened with the operator's key; `None` without a sealed value.
/// One that does not open is logged (never its value) and stays masked.
fn reveal(key: &crate::runtime::secrets::SealingKey, sealed: Option<&String>) -> Option<String> {
    match key.open(sealed?) {
        Ok(secret) => Some(secret),
        Err(error) => {
            tracing::error!(%error, "a sealed API token secret does not open; it is listed masked");
            None
        }
    }
}

/// Who may create an API token.
pub const CREATE: Access = Access::Root(Permission::CreateClientApiToken);

/// Creates a client, backend or frontend token for an existing environment
/// ([`DEFAULT_ENVIRONMENT`] when none is named) and existing projects (every project when none is
/// named, or when `*` is among them). Its secret reads `<project>:<environment>.<random part>`,
/// as Unleash's do. An environment or a project that does not exist is refused with Unleash's
/// messages (`Project=<name> does not exist`).
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateToken,
) -> Result<CreatedTokenOut, AdminError> {
    if request.token_type == TokenType::Admin {
        return Err(AdminError::invalid(
            "/type",
            "/type must be client, backend or frontend",
        ));
    }
    if request.token_type == TokenType::Frontend {
        caller.require_root(Permission::CreateFrontendApiToken)?;
    }
    let token_name = request
        .token_name
        .or(request.username)
        .map(|name| name.trim().to_owned())
        .unwrap_or_default();
    if token_name.is_empty() {
        return Err(AdminError::invalid("/tokenName", "/tokenName must not be empty"));
    }
    let mut projects = request
        .projects
        .or_else(|| request.project.map(|project| vec![project]))
        .unwrap_or_else(|| vec!["*".into()]);
    if projects.is_empty() {
        return Err(AdminError::invalid(
            "/projects",
            "/projects must name at least one project",
        ));
    }
    let environment = request.environment.unwrap_or_else(|| DEFAULT_ENVIRONMENT.into());
    if environment == "*" {
        let kind = if request.token_type == TokenType::Frontend {
            "Frontend"
        } else {
            "Client"
        };
        return Err(AdminError::invalid(
            "/environment",
            format!("{kind} token cannot be scoped to all environments"),
        ));
    }
    // A token for every project and some more is a token for every project, as in Unleash.
    if projects.iter().any(|project| project == "*") {
        projects = vec!["*".into()];
    }
    let project = project_part(&projects);
    let random = secrets::random_hex(28).map_err(|error| AdminError::Internal(error.to_string()))?;
    let secret = format!("{project}:{environment}.{random}");
    let token = NewApiToken::new(
        token_name,
        secrets::verifier(&secret),
        request.token_type,
        environment.clone(),
        TokenProjects::from(projects.clone()),
        request.expires_at.map(|at| at.0.naive_utc()),
        ctx.now(),
    );
    let scope = (environment, projects.clone());
    let sealed = match &ctx.settings().sealing {
        Some(key) => Some((
            queries::access::api_token_owner(&token.secret_hash),
            key.seal(&secret)
                .map_err(|error| AdminError::Internal(error.to_string()))?,
        )),
        None => None,
    };
    // The store answers a refused request as `Ok(Err(..))`: the lookups worked, the request did not.
    let created = caller
        .write(ctx, move |conn, actor, _| {
            let (environment, projects) = scope;
            // What is not there is a mistake in the request, not a missing resource: Unleash answers
            // 400, naming the first environment or project it did not find.
            if !exists(queries::environments::get(conn, &environment))? {
                return Ok(Err(AdminError::invalid(
                    "/environment",
                    format!("Environment={environment} does not exist"),
                )));
            }
            for project in projects.iter().filter(|project| *project != "*") {
                if !exists(queries::projects::get(conn, project))? {
                    return Ok(Err(AdminError::invalid(
                        "/projects",
                        format!("Project={project} does not exist"),
                    )));
                }
            }
            let created = queries::api_tokens::create(conn, &token, actor)?;
            if let Some((owner, sealed)) = &sealed {
                queries::access::put_sealed(conn, owner, sealed)?;
            }
            Ok(Ok(created))
        })
        .await;
    let row = created??;
    Ok(CreatedTokenOut {
        secret,
        token_name: row.token_name,
        token_type: row.token_type.as_str().to_owned(),
        project: project_field(&projects),
        projects,
        environment: row.environment,
        expires_at: row.expires_at.map(crate::runtime::input::iso),
        created_at: crate::runtime::input::iso(row.created_at),
        alias: None,
        secure: false,
    })
}

/// Checks that the caller may `change` (delete or update) a token of `token_type`, beyond the
/// client-token permission the operation declares: a frontend token needs its own permission,
/// an admin token administration.
fn require_for(caller: &Caller, token_type: TokenType, frontend: Permission) -> Result<(), AdminError> {
    match token_type {
        TokenType::Admin => caller.require_root(Permission::Admin),
        TokenType::Frontend => caller.require_root(frontend),
        TokenType::Client | TokenType::Backend => Ok(()),
    }
}

/// The type of the token whose verifier is `hash`, when there is one.
async fn type_of(ctx: &Runtime, hash: String) -> Result<Option<TokenType>, AdminError> {
    Ok(db::run(&ctx.store, move |conn| {
        queries::api_tokens::find_by_hash(conn, &hash)
    })
    .await?
    .map(|token| token.token_type))
}

/// Who may delete an API token by its secret.
pub const DELETE: Access = Access::Root(Permission::DeleteClientApiToken);

/// Deletes the token whose secret is `secret`; an unknown secret changes nothing and is no
/// error, as in Unleash.
pub async fn delete(ctx: &Runtime, caller: &Caller, secret: &str) -> Result<(), AdminError> {
    let hash = secrets::verifier(secret);
    if let Some(token_type) = type_of(ctx, hash.clone()).await? {
        require_for(caller, token_type, Permission::DeleteFrontendApiToken)?;
    }
    caller
        .write(
            ctx,
            move |conn, actor, now| match queries::api_tokens::find_by_hash(conn, &hash)? {
                Some(token) => queries::api_tokens::delete(conn, token.id, actor, now),
                None => Ok(()),
            },
        )
        .await
}

/// Who may delete an API token by its id.
pub const DELETE_BY_ID: Access = Access::Root(Permission::DeleteClientApiToken);

/// Deletes the token with `id`, as the token list numbers them: for the console, which shows
/// tokens without their secrets.
pub async fn delete_by_id(ctx: &Runtime, caller: &Caller, id: i32) -> Result<(), AdminError> {
    let token_type = db::run(&ctx.store, move |conn| {
        queries::api_tokens::list(conn)?
            .into_iter()
            .find(|token| token.id == id)
            .map(|token| token.token_type)
            .ok_or_else(|| flag_store::StoreError::not_found("api token", id.to_string()))
    })
    .await?;
    require_for(caller, token_type, Permission::DeleteFrontendApiToken)?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::api_tokens::delete(conn, id, actor, now)
        })
        .await
}

/// Who may find API tokens by name.
pub const BY_NAME: Access = Access::AdminRead;

/// The tokens named `name`, without their secrets; names need not be unique.
pub async fn by_name(ctx: &Runtime, caller: &Caller, name: String) -> Result<TokensOut, AdminError> {
    let mut tokens = list(ctx, caller).await?;
    tokens.tokens.retain(|token| token.token_name == name);
    Ok(tokens)
}

/// Who may change when an API token expires.
pub const SET_EXPIRY: Access = Access::Root(Permission::UpdateClientApiToken);

/// Sets when the token whose secret is `secret` stops working; a time in the past revokes it.
/// An unknown secret changes nothing.
pub async fn set_expiry(
    ctx: &Runtime,
    caller: &Caller,
    secret: &str,
    request: UpdateToken,
) -> Result<(), AdminError> {
    let hash = secrets::verifier(secret);
    if let Some(token_type) = type_of(ctx, hash.clone()).await? {
        require_for(caller, token_type, Permission::UpdateFrontendApiToken)?;
    }
    let expires_at = flag_store::time::stored(request.expires_at.0.naive_utc());
    caller
        .write(ctx, move |conn, actor, now| {
            queries::api_tokens::set_expiry(conn, &hash, expires_at, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may list a project's API tokens.
pub const OF_PROJECT: Access = Access::AdminRead;

/// The client and frontend tokens that reach `project`, without their secrets: those limited
/// to it (alone or with others) and those for every project.
pub async fn of_project(ctx: &Runtime, caller: &Caller, project: String) -> Result<TokensOut, AdminError> {
    let check = project.clone();
    db::run(&ctx.store, move |conn| queries::projects::get(conn, &check)).await?;
    let mut tokens = list(ctx, caller).await?;
    tokens.tokens.retain(|token| {
        token.token_type != "admin"
            && token
                .projects
                .iter()
                .any(|reached| *reached == project || reached == "*")
    });
    Ok(tokens)
}

/// Who may create an API token for a project.
pub const CREATE_FOR_PROJECT: Access = Access::Admin;

/// Creates a token for `project` alone.
pub async fn create_for_project(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    mut request: CreateToken,
) -> Result<CreatedTokenOut, AdminError> {
    let check = project.clone();
    db::run(&ctx.store, move |conn| queries::projects::get(conn, &check)).await?;
    request.projects = Some(vec![project]);
    request.project = None;
    create(ctx, caller, request).await
}

/// Who may delete a project's API token.
pub const DELETE_FOR_PROJECT: Access = Access::Admin;

/// Deletes the token whose secret is `secret`, which must be limited to `project` alone.
pub async fn delete_for_project(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    secret: &str,
) -> Result<(), AdminError> {
    let hash = secrets::verifier(secret);
    let row = db::run(&ctx.store, move |conn| {
        queries::api_tokens::find_by_hash(conn, &hash)?
            .ok_or_else(|| flag_store::StoreError::not_found("api token", "(secret)"))
    })
    .await?;
    if row.projects.as_slice() != [project] {
        return Err(AdminError::bad_request(
            "the token is not limited to this project alone",
        ));
    }
    delete(ctx, caller, secret).await
}

/// Whether a lookup found its row: `false` for [`StoreError::NotFound`], other failures as they
/// are.
fn exists<T>(found: Result<T, StoreError>) -> Result<bool, StoreError> {
    match found {
        Ok(_) => Ok(true),
        Err(StoreError::NotFound { .. }) => Ok(false),
        Err(other) => Err(other),
    }
}

/// Checks the stored sealed secrets against the operator's key as the server starts: with a
/// key, every one must have been sealed under it (a wrong key is refused, never used to show
/// masked secrets silently); without one, sealed secrets stay masked. Answers how many there are.
pub fn check_sealing_key(
    store: &flag_store::Store,
    key: Option<&crate::runtime::secrets::SealingKey>,
) -> Result<usize, AdminError> {
    let mut conn = store.connection()?;
    let sealed = queries::access::all_sealed(&mut conn)?;
    if let Some(key) = key {
        let other: Vec<&str> = sealed
            .iter()
            .filter_map(|row| crate::runtime::secrets::sealed_under(&row.sealed))
            .filter(|under| *under != key.id())
            .collect();
        if let Some(first) = other.first() {
            return Err(AdminError::InvalidOperation(format!(
                "{} stored secrets are sealed under the key {first}, not under the key given ({}); start with \
                 the key they were sealed under, or move them to a new key with `halyard rotate-secrets-key`",
                other.len(),
                key.id()
            )));
        }
        for row in &sealed {
            key.open(&row.sealed).map_err(|error| {
                AdminError::InvalidOperation(format!(
                    "the sealed secret of {} does not open: {error}",
                    row.owner
                ))
            })?;
        }
    }
    Ok(sealed.len())
}

/// Seals every stored secret under `new` instead of `current`, reading and writing them in one
/// write: the rotation of the operator's key. A secret that does not open with `current` stops
/// it, changing nothing. Answers how many were sealed again.
pub fn rotate_sealing_key(
    store: &flag_store::Store,
    current: &crate::runtime::secrets::SealingKey,
    new: &crate::runtime::secrets::SealingKey,
) -> Result<usize, AdminError> {
    let mut conn = store.connection()?;
    queries::access::reseal(&mut conn, |row: &flag_store::models::SealedSecretRow| {
        let secret = current.open(&row.sealed).map_err(|error| {
            format!(
                "the sealed secret of {} does not open with the current key: {error}",
                row.owner
            )
        })?;
        new.seal(&secret).map_err(|error| error.to_string())
    })
    .map_err(|error| match error {
        flag_store::StoreError::Rejected { message } => AdminError::InvalidOperation(message),
        other => other.into(),
    })
}
