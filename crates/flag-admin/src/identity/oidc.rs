//! Single sign-on with OpenID Connect: the authorization-code flow with PKCE, the ID token
//! verified in full (signature, `iss`, `aud`, `exp`, `nonce`), users matched by email and
//! created on first login, and root roles from a groups claim on every login.
//!
//! The settings come from the environment (`OIDC_*`, see the server's configuration) or, when
//! none are given there, from the setting Unleash keeps them in, which the admin API edits. A
//! login that has left for the provider is stored (see `flag_store::queries::sessions`) under
//! the hash of a cookie only this browser holds, so the callback may reach any replica and
//! `state` is bound to the browser. The provider's discovery document and keys are cached for
//! an hour, and fetched again at once when a token names a key they lack.

pub mod types;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use flag_store::models::{Actor, NewUser, OidcLoginRow, UserChanges};
use flag_store::queries::{self, settings as stored};
use openidconnect::core::{
    CoreAuthenticationFlow, CoreClient, CoreGenderClaim, CoreJsonWebKey, CoreJweContentEncryptionAlgorithm,
    CoreJwsSigningAlgorithm, CoreTokenResponse,
};
use openidconnect::{
    AdditionalClaims, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointMaybeSet, EndpointNotSet,
    EndpointSet, HttpRequest, HttpResponse, IdToken, IdTokenVerifier, IssuerUrl, JsonWebKeySet, Nonce,
    PkceCodeChallenge, PkceCodeVerifier, ProviderMetadataWithLogout, RedirectUrl, Scope, TokenResponse as _,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::identity::Identity;
use crate::identity::auth::{Access, Caller};
use crate::identity::oidc::types::{OidcSettings, PasswordAuthSettings};
use crate::identity::session::{LoggedIn, Proof};
use crate::runtime::domain::RootRole;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Where Unleash keeps the OpenID Connect settings.
pub const SETTING: &str = "unleash.enterprise.auth.oidc";
/// Where Unleash keeps whether password login is off.
pub const PASSWORD_SETTING: &str = "unleash.auth.simple";
/// The secret as reads show it.
const MASKED: &str = "*****";
/// What the stored settings hold in place of a secret sealed under the operator's key.
const SEALED: &str = "(sealed)";
/// How long the provider's discovery document and keys are used before they are fetched again.
const DISCOVERY_TTL: Duration = Duration::from_secs(3600);
/// How long one request to the provider may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// Where the provider sends the browser back, under the public URL.
pub const CALLBACK_PATH: &str = "/auth/oidc/callback";
/// Where a login starts.
pub const LOGIN_PATH: &str = "/auth/oidc/login";

/// The settings in force, parsed once: every rule about them is checked here.
#[derive(Debug, Clone)]
struct Config {
    issuer: IssuerUrl,
    client_id: ClientId,
    secret: ClientSecret,
    scopes: Vec<String>,
    acr_values: Option<String>,
    algorithm: CoreJwsSigningAlgorithm,
    auto_create: bool,
    email_domains: Vec<String>,
    default_role: RootRole,
    group_syncing: bool,
    group_path: Vec<String>,
    group_roles: BTreeMap<String, RootRole>,
    single_sign_out: bool,
}

fn invalid(field: &str, message: impl Into<String>) -> AdminError {
    AdminError::invalid(format!("/{field}"), message)
}

fn root_role(field: &str, name: &str) -> Result<RootRole, AdminError> {
    match name {
        "Admin" => Ok(RootRole::Admin),
        "Editor" => Ok(RootRole::Editor),
        "Viewer" => Ok(RootRole::Viewer),
        _ => Err(invalid(
            field,
            format!("{field} must be Admin, Editor or Viewer, not {name:?}"),
        )),
    }
}

fn words(text: Option<&str>, separator: char) -> Vec<String> {
    text.unwrap_or_default()
        .split(separator)
        .map(str::trim)
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Config {
    /// Checks enabled settings; `None` when single sign-on is off.
    fn parse(settings: &OidcSettings) -> Result<Option<Self>, AdminError> {
        if !settings.enabled {
            return Ok(None);
        }
        let discover = settings
            .discover_url
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
            .ok_or_else(|| invalid("discoverUrl", "discoverUrl is required when OIDC is enabled"))?;
        // The issuer exactly as given (some end in `/`, and discovery compares it exactly).
        let issuer = discover
            .strip_suffix("/.well-known/openid-configuration")
            .unwrap_or(discover);
        let parsed = url::Url::parse(issuer)
            .map_err(|error| invalid("discoverUrl", format!("discoverUrl is not a URL: {error}")))?;
        let loopback = match parsed.host() {
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            Some(url::Host::Domain(name)) => name == "localhost",
            None => false,
        };
        if parsed.scheme() != "https" && !(parsed.scheme() == "http" && loopback) {
            return Err(invalid(
                "discoverUrl",
                "discoverUrl must be an https URL (http only on loopback)",
            ));
        }
        let required = |field: &str, value: &Option<String>| {
            value
                .as_deref()
                .map(str::trim)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| invalid(field, format!("{field} is required when OIDC is enabled")))
        };
        let client_id = required("clientId", &settings.client_id)?;
        let secret = required("secret", &settings.secret)?;
        let default_role = match (
            settings.default_root_role_id,
            settings.default_root_role.as_deref(),
        ) {
            (Some(id), _) => RootRole::from_id(id)
                .filter(|role| matches!(role, RootRole::Admin | RootRole::Editor | RootRole::Viewer))
                .ok_or_else(|| {
                    invalid(
                        "defaultRootRoleId",
                        format!("defaultRootRoleId must be 1, 2 or 3, not {id}"),
                    )
                })?,
            (None, Some(name)) => root_role("defaultRootRole", name)?,
            (None, None) => RootRole::Viewer,
        };
        let algorithm = match settings.id_token_signing_algorithm.as_deref() {
            None | Some("RS256") => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256,
            Some("RS384") => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha384,
            Some("RS512") => CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha512,
            Some(other) => {
                return Err(invalid(
                    "idTokenSigningAlgorithm",
                    format!("idTokenSigningAlgorithm must be RS256, RS384 or RS512, not {other:?}"),
                ));
            }
        };
        let mut group_roles = BTreeMap::new();
        for (group, role) in settings.group_root_roles.iter().flatten() {
            group_roles.insert(group.clone(), root_role("groupRootRoles", role)?);
        }
        let mut scopes = vec!["email".to_owned(), "profile".to_owned()];
        if settings.add_groups_scope {
            scopes.push("groups".to_owned());
        }
        for scope in words(settings.extra_scopes.as_deref(), ' ') {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        Ok(Some(Self {
            issuer: IssuerUrl::new(issuer.to_owned())
                .map_err(|error| invalid("discoverUrl", format!("discoverUrl is not a URL: {error}")))?,
            client_id: ClientId::new(client_id),
            secret: ClientSecret::new(secret),
            scopes,
            acr_values: settings
                .acr_values
                .clone()
                .filter(|values| !values.trim().is_empty()),
            algorithm,
            auto_create: settings.auto_create,
            email_domains: words(settings.email_domains.as_deref(), ',')
                .into_iter()
                .map(|domain| flag_eval::fold_case(domain.trim_start_matches('@')))
                .collect(),
            default_role,
            group_syncing: settings.enable_group_syncing,
            group_path: words(Some(settings.group_json_path.as_deref().unwrap_or("groups")), '.'),
            group_roles,
            single_sign_out: settings.enable_single_sign_out,
        }))
    }

    /// The provider's groups the claims name, with group syncing. `None` without group syncing,
    /// and when the token has no groups claim at all (a provider that did not release it, or
    /// too many groups to list), so that a missing claim never demotes anyone or empties a
    /// group.
    fn groups_from(&self, claims: &Map<String, Value>) -> Option<Vec<String>> {
        if !self.group_syncing {
            return None;
        }
        let mut at: Option<&Value> = None;
        for (index, name) in self.group_path.iter().enumerate() {
            at = if index == 0 {
                claims.get(name)
            } else {
                at.and_then(|value| value.get(name))
            };
        }
        match at {
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
            ),
            Some(Value::String(one)) => Some(vec![one.clone()]),
            _ => {
                tracing::warn!(
                    path = %self.group_path.join("."),
                    "the ID token has no groups claim at {}; the user's root role and groups are left as they are",
                    self.group_path.join(".")
                );
                None
            }
        }
    }

    /// The root role `groups` give: the strongest a group maps to, or the default.
    fn role_from(&self, groups: &[String]) -> RootRole {
        let mut found = None;
        for group in groups {
            if let Some(&role) = self.group_roles.get(group) {
                found = Some(match found {
                    Some(best) if strength(best) >= strength(role) => best,
                    _ => role,
                });
            }
        }
        found.unwrap_or(self.default_role)
    }
}

fn strength(role: RootRole) -> u8 {
    match role {
        RootRole::Admin => 3,
        RootRole::Editor => 2,
        _ => 1,
    }
}

/// The provider as last discovered.
struct Discovered {
    issuer: IssuerUrl,
    metadata: ProviderMetadataWithLogout,
    fetched: Instant,
}

/// What single sign-on keeps between requests: the provider's discovery document and keys, and
/// the last failure to discover it, so that while the provider is down each login fails at once
/// instead of waiting its turn for another timeout.
#[derive(Default)]
pub struct Oidc {
    discovered: tokio::sync::Mutex<Option<Arc<Discovered>>>,
    failed: std::sync::Mutex<Option<(Instant, String)>>,
}

/// How long a failed discovery is answered from memory.
const FAILURE_TTL: Duration = Duration::from_secs(5);

impl std::fmt::Debug for Oidc {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Oidc").finish_non_exhaustive()
    }
}

/// Every claim of the ID token, for the groups claim wherever it is.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct AllClaims(Map<String, Value>);
impl AdditionalClaims for AllClaims {}

type Token = IdToken<AllClaims, CoreGenderClaim, CoreJweContentEncryptionAlgorithm, CoreJwsSigningAlgorithm>;
type Client = CoreClient<
    EndpointSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointNotSet,
    EndpointMaybeSet,
    EndpointMaybeSet,
>;

/// The agent every request to the provider goes through: no redirects followed, statuses
/// handed back to the OpenID code (which reads the provider's error bodies), a time limit.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(PROVIDER_TIMEOUT))
        .build()
        .into()
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Transport(String);

/// Sends one request to the provider (blocking: called on the blocking pool).
fn send(agent: &ureq::Agent, request: HttpRequest) -> Result<HttpResponse, Transport> {
    let response = agent.run(request).map_err(|error| Transport(error.to_string()))?;
    let (parts, mut body) = response.into_parts();
    let bytes = body
        .with_config()
        .limit(1 << 20)
        .read_to_vec()
        .map_err(|error| Transport(error.to_string()))?;
    Ok(HttpResponse::from_parts(parts, bytes))
}

async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Result<T, AdminError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| AdminError::Internal(format!("an OpenID request did not finish: {error}")))
}

fn unreachable_provider(what: &str, error: impl std::fmt::Display) -> AdminError {
    AdminError::ProviderUnavailable(format!("the OpenID provider's {what} could not be read: {error}"))
}

async fn fetch_metadata(issuer: IssuerUrl) -> Result<Arc<Discovered>, AdminError> {
    let metadata = blocking(move || {
        let agent = agent();
        ProviderMetadataWithLogout::discover(&issuer, &|request| send(&agent, request))
            .map(|metadata| (issuer, metadata))
    })
    .await?
    .map_err(|error| unreachable_provider("discovery document", error))?;
    Ok(Arc::new(Discovered {
        issuer: metadata.0,
        metadata: metadata.1,
        fetched: Instant::now(),
    }))
}

impl Oidc {
    /// The provider of `config`, discovered at most [`DISCOVERY_TTL`] ago. One request
    /// discovers it while the others wait for that answer.
    async fn provider(&self, config: &Config) -> Result<Arc<Discovered>, AdminError> {
        let mut discovered = self.discovered.lock().await;
        if let Some(known) = discovered.as_ref()
            && known.issuer == config.issuer
            && known.fetched.elapsed() < DISCOVERY_TTL
        {
            return Ok(Arc::clone(known));
        }
        if let Some((at, message)) = self.failure()
            && at.elapsed() < FAILURE_TTL
        {
            return Err(AdminError::ProviderUnavailable(message));
        }
        match fetch_metadata(config.issuer.clone()).await {
            Ok(found) => {
                *discovered = Some(Arc::clone(&found));
                Ok(found)
            }
            Err(error) => {
                *self
                    .failed
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some((Instant::now(), error.to_string()));
                Err(error)
            }
        }
    }

    fn failure(&self) -> Option<(Instant, String)> {
        self.failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Forgets the provider, for settings that may name another.
    async fn forget(&self) {
        *self.discovered.lock().await = None;
        *self
            .failed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// Fetches the provider's keys again, for a token signed with a key they lacked.
    async fn refresh_keys(&self, config: &Config) -> Result<Arc<Discovered>, AdminError> {
        let known = self.provider(config).await?;
        if known.fetched.elapsed() < Duration::from_secs(10) {
            return Ok(known);
        }
        let uri = known.metadata.jwks_uri().clone();
        let keys = blocking(move || {
            let agent = agent();
            JsonWebKeySet::<CoreJsonWebKey>::fetch(&uri, &|request| send(&agent, request))
        })
        .await?
        .map_err(|error| unreachable_provider("keys", error))?;
        let renewed = Arc::new(Discovered {
            issuer: known.issuer.clone(),
            metadata: known.metadata.clone().set_jwks(keys),
            fetched: Instant::now(),
        });
        *self.discovered.lock().await = Some(Arc::clone(&renewed));
        Ok(renewed)
    }
}

fn client(config: &Config, provider: &Discovered, redirect: RedirectUrl) -> Client {
    CoreClient::from_provider_metadata(
        provider.metadata.clone(),
        config.client_id.clone(),
        Some(config.secret.clone()),
    )
    .set_redirect_uri(redirect)
}

fn redirect_url(ctx: &Runtime) -> Result<RedirectUrl, AdminError> {
    RedirectUrl::new(format!(
        "{}{CALLBACK_PATH}",
        ctx.settings().unleash_url.trim_end_matches('/')
    ))
    .map_err(|error| AdminError::Internal(format!("the callback URL is not a URL: {error}")))
}

/// The settings in force: the environment's when it gives any, else the stored ones.
async fn current(ctx: &Runtime) -> Result<OidcSettings, AdminError> {
    if let Some(settings) = &ctx.settings().oidc {
        return Ok(settings.clone());
    }
    let (settings, sealed) = db::run(&ctx.store, |conn| {
        Ok((
            stored::get::<OidcSettings>(conn, SETTING)?,
            queries::access::sealed(conn, queries::access::OIDC_CLIENT_SECRET)?,
        ))
    })
    .await?;
    let mut settings = settings.unwrap_or_default();
    if settings.secret.as_deref() == Some(SEALED) {
        // Sealed under the operator's key: without it, single sign-on cannot work.
        let key = ctx.settings().sealing.as_ref().ok_or_else(|| {
            AdminError::Internal(
                "the OpenID client secret is sealed; start the server with the HALYARD_SECRETS_KEY it was sealed under"
                    .into(),
            )
        })?;
        let sealed = sealed
            .ok_or_else(|| AdminError::Internal("the sealed OpenID client secret is missing".into()))?;
        settings.secret = Some(
            key.open(&sealed)
                .map_err(|error| AdminError::Internal(format!("the OpenID client secret: {error}")))?,
        );
    }
    Ok(settings)
}

async fn config(ctx: &Runtime) -> Result<Option<Config>, AdminError> {
    // Read at each use, so that a change on any replica applies at once; the stored settings
    // were checked when saved and the environment's at start, so this fails only on a stored
    // document written by another version.
    Config::parse(&current(ctx).await?)
}

/// Who may read the single sign-on settings.
pub const SETTINGS: Access = Access::AdminRead;

/// `GET /api/admin/auth/oidc/settings`: the settings in force, the secret masked; with the
/// operator's key, to a caller who may read secrets, the secret as it was saved (what Terraform
/// reads back).
pub async fn settings(ctx: &Runtime, caller: &Caller) -> Result<OidcSettings, AdminError> {
    let mut settings = current(ctx).await?;
    let revealed = ctx.settings().sealing.is_some()
        && !configured_through_env(ctx)
        && caller.principal().may_read_secrets();
    if settings.secret.is_some() && !revealed {
        settings.secret = Some(MASKED.to_owned());
    }
    Ok(settings)
}

/// Whether the settings come from the environment, and so cannot be changed through the API.
pub fn configured_through_env(ctx: &Runtime) -> bool {
    ctx.settings().oidc.is_some()
}

/// Checks settings from the environment, as the server starts.
pub fn check(settings: &OidcSettings) -> Result<(), AdminError> {
    Config::parse(settings).map(|_| ())
}

/// Who may change the single sign-on settings.
pub const SAVE_SETTINGS: Access = Access::Admin;

/// `POST /api/admin/auth/oidc/settings`: checks and stores the settings; `*****` as the secret
/// keeps the stored one.
pub async fn save_settings(
    ctx: &Runtime,
    identity: &Identity,
    caller: &Caller,
    mut settings: OidcSettings,
) -> Result<OidcSettings, AdminError> {
    if configured_through_env(ctx) {
        return Err(AdminError::InvalidOperation(
            "OIDC is configured through the environment (OIDC_ENABLED); change it there".into(),
        ));
    }
    if settings.secret.as_deref() == Some(MASKED) {
        settings.secret = current(ctx).await?.secret;
    }
    Config::parse(&settings)?;
    if !settings.enabled && !password_login_allowed(ctx).await? {
        return Err(AdminError::InvalidOperation(
            "password login is off; switch it on before switching single sign-on off".into(),
        ));
    }
    let mut saved = settings.clone();
    // With the operator's key the secret is kept sealed, apart from the settings.
    let sealed = match (&ctx.settings().sealing, saved.secret.take()) {
        (Some(key), Some(secret)) => {
            saved.secret = Some(SEALED.to_owned());
            Some(
                key.seal(&secret)
                    .map_err(|error| AdminError::Internal(error.to_string()))?,
            )
        }
        (_, secret) => {
            saved.secret = secret;
            None
        }
    };
    caller
        .write(ctx, move |conn, actor, now| {
            stored::put_hidden(conn, SETTING, &saved, actor, now)?;
            match &sealed {
                Some(sealed) => {
                    queries::access::put_sealed(conn, queries::access::OIDC_CLIENT_SECRET, sealed)
                }
                None => queries::access::delete_sealed(conn, queries::access::OIDC_CLIENT_SECRET),
            }
        })
        .await?;
    // The provider may have changed: discover it again at the next login.
    identity.oidc.forget().await;
    self::settings(ctx, caller).await
}

/// Who may read whether password logins are allowed.
pub const PASSWORD_SETTINGS: Access = Access::AdminRead;

/// `GET /api/admin/auth/simple/settings`.
pub async fn password_settings(ctx: &Runtime) -> Result<PasswordAuthSettings, AdminError> {
    Ok(db::run(&ctx.store, |conn| {
        stored::get::<PasswordAuthSettings>(conn, PASSWORD_SETTING)
    })
    .await?
    .unwrap_or_default())
}

/// Who may allow or forbid password logins.
pub const SAVE_PASSWORD_SETTINGS: Access = Access::Admin;

/// `POST /api/admin/auth/simple/settings`: password login may be switched off only while
/// single sign-on is on, so that someone can always sign in.
pub async fn save_password_settings(
    ctx: &Runtime,
    caller: &Caller,
    settings: PasswordAuthSettings,
) -> Result<PasswordAuthSettings, AdminError> {
    if settings.disabled && config(ctx).await?.is_none() {
        return Err(AdminError::InvalidOperation(
            "single sign-on is off; switch it on before switching password login off".into(),
        ));
    }
    caller
        .write(ctx, move |conn, actor, now| {
            stored::put(conn, PASSWORD_SETTING, &settings, actor, now)
        })
        .await?;
    Ok(settings)
}

/// Whether logging in with a password is on.
pub async fn password_login_allowed(ctx: &Runtime) -> Result<bool, AdminError> {
    Ok(!password_settings(ctx).await?.disabled)
}

/// How users may sign in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoginOptions {
    /// With a password.
    pub password: bool,
    /// Through the OpenID provider.
    pub oidc: bool,
}

/// How users may sign in now.
pub async fn login_options(ctx: &Runtime) -> Result<LoginOptions, AdminError> {
    let oidc = config(ctx).await?.is_some();
    Ok(LoginOptions {
        password: !oidc || password_login_allowed(ctx).await?,
        oidc,
    })
}

/// A login that is leaving for the provider.
pub struct Started {
    /// The secret for the browser's cookie, which the callback must bring back.
    pub cookie: String,
    /// Where to send the browser.
    pub authorize_url: String,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Started")
            .field("cookie", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// Starts a login for a browser at `address`: stores what the callback checks and answers
/// where to send the browser. Starts count against the address's login attempts.
pub async fn start(
    ctx: &Runtime,
    identity: &Identity,
    address: std::net::IpAddr,
    return_to: &str,
) -> Result<Started, AdminError> {
    identity.login_limiter.admit(address)?;
    let config = config(ctx)
        .await?
        .ok_or_else(|| AdminError::NotFound("single sign-on is not enabled".into()))?;
    let provider = identity.oidc.provider(&config).await?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let client = client(&config, &provider, redirect_url(ctx)?);
    let mut request = client
        .authorize_url(
            CoreAuthenticationFlow::AuthorizationCode,
            CsrfToken::new_random,
            Nonce::new_random,
        )
        .set_pkce_challenge(challenge);
    for scope in &config.scopes {
        request = request.add_scope(Scope::new(scope.clone()));
    }
    if let Some(values) = &config.acr_values {
        request = request.add_extra_param("acr_values", values.clone());
    }
    let (url, state, nonce) = request.url();
    let cookie =
        crate::runtime::secrets::random_hex(32).map_err(|error| AdminError::Internal(error.to_string()))?;
    let login = OidcLoginRow {
        cookie_hash: crate::runtime::secrets::verifier(&cookie),
        state: state.secret().clone(),
        nonce: nonce.secret().clone(),
        pkce_verifier: verifier.secret().clone(),
        return_to: return_to.to_owned(),
        created_at: ctx.now(),
    };
    db::run(&ctx.store, move |conn| {
        queries::sessions::start_oidc_login(conn, &login)
    })
    .await?;
    Ok(Started {
        cookie,
        authorize_url: url.to_string(),
    })
}

/// What the provider sends the browser back with.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Callback {
    /// The authorization code.
    pub code: Option<String>,
    /// The state sent.
    pub state: Option<String>,
    /// The provider's refusal, such as `access_denied`.
    pub error: Option<String>,
    /// Its explanation.
    pub error_description: Option<String>,
}

/// A finished login: the session, and where to go.
#[derive(Debug)]
pub struct Finished {
    /// The session opened.
    pub logged_in: LoggedIn,
    /// The console path the login started from.
    pub return_to: String,
}

fn failed(message: impl Into<String>) -> AdminError {
    AdminError::SignInFailed(message.into())
}

type ExchangeError = openidconnect::RequestTokenError<
    Transport,
    openidconnect::StandardErrorResponse<openidconnect::core::CoreErrorResponseType>,
>;

/// Words a failed code exchange after the part that failed: the provider's refusal, the request
/// to its token endpoint, that endpoint's answer, or the ID token in it.
fn exchange_failed(error: ExchangeError) -> AdminError {
    use openidconnect::RequestTokenError;
    match error {
        RequestTokenError::ServerResponse(response) => failed(format!(
            "the OpenID provider refused the authorization code ({}); sign in again",
            response.error()
        )),
        RequestTokenError::Request(error) => unreachable_provider("token endpoint", error),
        RequestTokenError::Parse(error, body) => match unreadable_id_token(&body) {
            Some(reason) => AdminError::ProviderUnavailable(format!(
                "the ID token the OpenID provider sent could not be read: {reason}"
            )),
            None => AdminError::ProviderUnavailable(format!(
                "the OpenID provider's token endpoint answered what is not a token response: {error}"
            )),
        },
        RequestTokenError::Other(message) => AdminError::ProviderUnavailable(format!(
            "the OpenID provider's token endpoint answered unexpectedly: {message}"
        )),
    }
}

/// Why the ID token in the token endpoint's answer `body` does not read, when it is the part
/// that does not. It is read with the answer it came in, so a claim of the wrong type (such as an
/// `email_verified` that is neither a boolean nor "true" or "false") fails the whole answer, and
/// the answer's own error cannot say where: the token's fields are flattened into it.
fn unreadable_id_token(body: &[u8]) -> Option<String> {
    let answer: Value = serde_json::from_slice(body).ok()?;
    let raw = answer.get("id_token")?.as_str()?;
    raw.parse::<Token>().err().map(|error| error.to_string())
}

/// A boolean claim as providers send it: a boolean, or the string "true" or "false".
fn lenient_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(value) => Some(*value),
        Value::String(text) => text.parse().ok(),
        _ => None,
    }
}

/// Finishes a login: checks the callback against the login this browser started, exchanges the
/// code, verifies the ID token, and signs the user in, created or with the role their groups
/// give when the settings say so.
pub async fn finish(
    ctx: &Runtime,
    identity: &Identity,
    cookie: Option<&str>,
    callback: Callback,
) -> Result<Finished, AdminError> {
    let config = config(ctx)
        .await?
        .ok_or_else(|| AdminError::NotFound("single sign-on is not enabled".into()))?;
    let cookie_hash = cookie.map(crate::runtime::secrets::verifier).ok_or_else(|| {
        failed("this browser did not start a login here, or its cookie expired; sign in again")
    })?;
    let now = ctx.now();
    let login = db::run(&ctx.store, move |conn| {
        queries::sessions::take_oidc_login(conn, &cookie_hash, now)
    })
    .await?
    .ok_or_else(|| failed("this login was already used or took over ten minutes; sign in again"))?;
    if let Some(error) = callback.error {
        let detail = callback
            .error_description
            .map(|text| format!(": {text}"))
            .unwrap_or_default();
        return Err(failed(format!(
            "the OpenID provider refused the login ({error}){detail}"
        )));
    }
    let state = callback.state.unwrap_or_default();
    if !bool::from(subtle::ConstantTimeEq::ct_eq(
        state.as_bytes(),
        login.state.as_bytes(),
    )) {
        return Err(failed(
            "the login's state does not match the one this browser started; sign in again",
        ));
    }
    let code = callback
        .code
        .filter(|code| !code.is_empty())
        .ok_or_else(|| failed("the OpenID provider sent no authorization code"))?;
    let provider = identity.oidc.provider(&config).await?;
    let redirect = redirect_url(ctx)?;
    let verifier = PkceCodeVerifier::new(login.pkce_verifier.clone());
    let (exchange_config, exchange_provider) = (config.clone(), Arc::clone(&provider));
    let response: CoreTokenResponse = blocking(move || {
        let client = client(&exchange_config, &exchange_provider, redirect);
        let exchange = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|error| {
                AdminError::ProviderUnavailable(format!(
                    "the OpenID provider's discovery document names no token endpoint: {error}"
                ))
            })?
            .set_pkce_verifier(verifier);
        let agent = agent();
        exchange
            .request(&|request| send(&agent, request))
            .map_err(exchange_failed)
    })
    .await??;
    let raw = response
        .id_token()
        .ok_or_else(|| failed("the OpenID provider sent no ID token"))?
        .to_string();
    let token: Token = raw
        .parse()
        .map_err(|_| failed("the ID token is not a signed JWT"))?;
    let nonce = Nonce::new(login.nonce.clone());
    let verify = |provider: &Discovered| {
        let verifier: IdTokenVerifier<'_, CoreJsonWebKey> = IdTokenVerifier::new_confidential_client(
            config.client_id.clone(),
            config.secret.clone(),
            provider.issuer.clone(),
            provider.metadata.jwks().clone(),
        )
        .set_allowed_algs(vec![config.algorithm.clone()]);
        token.claims(&verifier, &nonce).cloned()
    };
    let claims = match verify(&provider) {
        Err(openidconnect::ClaimsVerificationError::SignatureVerification(
            openidconnect::SignatureVerificationError::NoMatchingKey,
        )) => verify(&*identity.oidc.refresh_keys(&config).await?),
        other => other,
    }
    .map_err(|error| failed(format!("the ID token does not verify: {error}")))?;
    let email = claims
        .email()
        .map(|email| email.as_str().trim().to_owned())
        .filter(|email| email.contains('@'))
        .ok_or_else(|| failed("the ID token has no email; ask the provider to release the email claim"))?;
    // `xms_edov` is Microsoft Entra ID's word on whether the email's domain is verified.
    let entra_verified = claims
        .additional_claims()
        .0
        .get("xms_edov")
        .and_then(lenient_bool);
    if claims.email_verified() == Some(false) || entra_verified == Some(false) {
        return Err(AdminError::NoAccess(format!(
            "the provider has not verified {email}"
        )));
    }
    let name = claims
        .name()
        .and_then(|names| names.get(None))
        .map(|name| name.as_str().to_owned());
    let groups = config.groups_from(&claims.additional_claims().0);
    let role = groups.as_deref().map(|groups| config.role_from(groups));
    let user = sign_in_user(ctx, &config, &email, name, role).await?;
    if let Some(groups) = groups {
        // Membership of the groups that map the provider's groups follows the claim.
        let id = user.id;
        db::run(&ctx.store, move |conn| {
            queries::access::sync_sso_groups(conn, id, &groups, &Actor::system(), now)
        })
        .await?;
    }
    // Kept with the session, on the server only, for `id_token_hint` when signing out at the
    // provider too; without single sign-out it has no use, and is not kept.
    let id_token = config.single_sign_out.then_some(raw);
    let logged_in = crate::identity::session::open(ctx, user, now, Proof::Oidc { id_token }).await?;
    Ok(Finished {
        logged_in,
        return_to: login.return_to,
    })
}

/// The user `email` signs in as: the one with that email, with the role their groups give; or
/// a new one when the settings allow it.
async fn sign_in_user(
    ctx: &Runtime,
    config: &Config,
    email: &str,
    name: Option<String>,
    role: Option<RootRole>,
) -> Result<flag_store::models::UserRow, AdminError> {
    let lookup = email.to_owned();
    let existing = db::run(&ctx.store, move |conn| {
        queries::users::find_by_email(conn, &lookup)
    })
    .await?;
    let now = ctx.now();
    let actor = Actor::system();
    let user = match existing {
        Some(user) => match role {
            Some(role) if role != user.root_role => {
                let changes = UserChanges {
                    root_role: Some(role),
                    ..UserChanges::default()
                };
                let id = user.id;
                db::run(&ctx.store, move |conn| {
                    queries::users::update(conn, id, &changes, &actor, now)
                })
                .await?
            }
            _ => user,
        },
        None => {
            if !config.auto_create {
                return Err(AdminError::NoAccess(format!(
                    "there is no user with the email {email}; ask an admin to invite you"
                )));
            }
            let domain = flag_eval::fold_case(email.rsplit('@').next().unwrap_or_default());
            if !config.email_domains.is_empty() && !config.email_domains.contains(&domain) {
                return Err(AdminError::NoAccess(format!(
                    "users with {domain} emails are not created here; ask an admin to invite you"
                )));
            }
            let user = NewUser {
                name,
                username: None,
                email: Some(email.to_owned()),
                password_hash: None,
                root_role: role.unwrap_or(config.default_role),
                created_at: now,
            };
            db::run(&ctx.store, move |conn| {
                queries::users::create(conn, &user, &actor)
            })
            .await?
        }
    };
    let id = user.id;
    db::run(&ctx.store, move |conn| {
        queries::users::record_login(conn, id, true, now)
    })
    .await?;
    let mut user = user;
    user.seen_at = Some(now);
    user.login_attempts = 0;
    Ok(user)
}

/// Whether signing out also signs out at the provider.
pub async fn single_sign_out(ctx: &Runtime) -> bool {
    config(ctx)
        .await
        .ok()
        .flatten()
        .is_some_and(|config| config.single_sign_out)
}

/// Where to send the browser after its session ended: the provider's end-session endpoint, when
/// single sign-out is on and the provider has one, coming back to `signed_out`. `handle` (see
/// [`crate::identity::session::SignedOut`]) reads the ended session's ID token, once, for `id_token_hint`.
pub async fn logout_url(
    ctx: &Runtime,
    identity: &Identity,
    signed_out: &str,
    handle: Option<&str>,
) -> Option<String> {
    let config = config(ctx).await.ok().flatten()?;
    if !config.single_sign_out {
        return None;
    }
    // Taken before the provider is asked, so that it is read at most once whatever happens
    // next. A handle is 64 hex digits; anything else names no session and is not looked up.
    let id_token = match handle
        .filter(|handle| handle.len() == 64 && handle.bytes().all(|byte| byte.is_ascii_hexdigit()))
    {
        Some(handle) => {
            let handle_hash = crate::runtime::secrets::verifier(handle);
            let now = ctx.now();
            db::run(&ctx.store, move |conn| {
                queries::sessions::take_id_token(conn, &handle_hash, now)
            })
            .await
            .unwrap_or_else(|error| {
                tracing::warn!(%error, "the ID token of a session that ended could not be read");
                None
            })
        }
        None => None,
    };
    let provider = identity.oidc.provider(&config).await.ok()?;
    let end = provider
        .metadata
        .additional_metadata()
        .end_session_endpoint
        .clone()?;
    let mut url = end.url().clone();
    {
        let mut query = url.query_pairs_mut();
        // Okta, among others, signs out only with the ID token it issued for this session.
        if let Some(id_token) = &id_token {
            query.append_pair("id_token_hint", id_token);
        }
        query
            .append_pair("client_id", config.client_id.as_str())
            .append_pair("post_logout_redirect_uri", signed_out);
    }
    Some(url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> OidcSettings {
        OidcSettings {
            enabled: true,
            discover_url: Some(
                "https://login.example.com/realms/acme/.well-known/openid-configuration".into(),
            ),
            client_id: Some("halyard".into()),
            secret: Some("s".into()),
            enable_group_syncing: true,
            group_json_path: Some("realm_access.roles".into()),
            group_root_roles: Some(BTreeMap::from([
                ("flag-admins".to_owned(), "Admin".to_owned()),
                ("flag-editors".to_owned(), "Editor".to_owned()),
            ])),
            ..OidcSettings::default()
        }
    }

    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_issuer_is_the_discovery_url_without_its_well_known_part() -> Result<(), AdminError> {
        let config = Config::parse(&settings())?.ok_or_else(|| AdminError::Internal("enabled".into()))?;
        assert_eq!(config.issuer.as_str(), "https://login.example.com/realms/acme");
        let mut trailing = settings();
        trailing.discover_url = Some("https://tenant.auth0.com/".into());
        let config = Config::parse(&trailing)?.ok_or_else(|| AdminError::Internal("enabled".into()))?;
        assert_eq!(
            config.issuer.as_str(),
            "https://tenant.auth0.com/",
            "kept exactly"
        );
        assert!(
            Config::parse(&OidcSettings::default())?.is_none(),
            "off by default"
        );
        Ok(())
    }

    #[test]
    fn the_strongest_mapped_group_wins_and_a_missing_claim_changes_nothing() -> Result<(), AdminError> {
        let config = Config::parse(&settings())?.ok_or_else(|| AdminError::Internal("enabled".into()))?;
        let role = |value| {
            config
                .groups_from(&claims(value))
                .map(|groups| config.role_from(&groups))
        };
        assert_eq!(
            role(serde_json::json!({"realm_access": {"roles": ["staff", "flag-editors", "flag-admins"]}})),
            Some(RootRole::Admin)
        );
        assert_eq!(
            role(serde_json::json!({"realm_access": {"roles": ["flag-editors"]}})),
            Some(RootRole::Editor)
        );
        assert_eq!(
            role(serde_json::json!({"realm_access": {"roles": ["staff"]}})),
            Some(RootRole::Viewer),
            "no group maps: the default role"
        );
        assert_eq!(
            role(serde_json::json!({"email": "a@b.c"})),
            None,
            "no claim: no change"
        );
        let mut off = settings();
        off.enable_group_syncing = false;
        let config = Config::parse(&off)?.ok_or_else(|| AdminError::Internal("enabled".into()))?;
        assert_eq!(
            config.groups_from(&claims(
                serde_json::json!({"realm_access": {"roles": ["flag-admins"]}})
            )),
            None
        );
        Ok(())
    }

    #[tokio::test]
    async fn users_are_matched_by_email_and_created_only_as_allowed() -> Result<(), Box<dyn std::error::Error>>
    {
        let scratch = flag_store::scratch::Scratch::new()?;
        let ctx = Runtime::new(scratch.open()?, crate::Settings::default())?;
        let parse = |settings: OidcSettings| {
            Config::parse(&settings)?.ok_or_else(|| AdminError::Internal("enabled".into()))
        };
        let off = parse(OidcSettings {
            auto_create: false,
            ..settings()
        })?;
        let refused = sign_in_user(&ctx, &off, "new@example.com", None, None).await;
        assert!(
            matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("no user with the email")),
            "{refused:?}"
        );
        let on = parse(OidcSettings {
            auto_create: true,
            email_domains: Some("@Example.com, example.org".into()),
            default_root_role: Some("Editor".into()),
            ..settings()
        })?;
        let refused = sign_in_user(&ctx, &on, "mallory@elsewhere.net", None, None).await;
        assert!(
            matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("elsewhere.net emails are not created")),
            "{refused:?}"
        );
        let created = sign_in_user(&ctx, &on, "New@Example.com", Some("New".into()), None).await?;
        assert_eq!(
            (created.email.as_deref(), created.root_role),
            (Some("new@example.com"), RootRole::Editor)
        );
        // The same person in another letter case, now in a group that maps to Admin.
        let again = sign_in_user(&ctx, &off, "NEW@example.COM", None, Some(RootRole::Admin)).await?;
        assert_eq!((again.id, again.root_role), (created.id, RootRole::Admin));
        // No groups claim: the role stays.
        let kept = sign_in_user(&ctx, &off, "new@example.com", None, None).await?;
        assert_eq!((kept.id, kept.root_role), (created.id, RootRole::Admin));
        Ok(())
    }

    /// Apple sends `email_verified` (and `is_private_email`) as the strings "true" and "false".
    #[test]
    fn email_verified_as_a_string_reads_as_a_boolean() -> Result<(), serde_json::Error> {
        type Claims = openidconnect::IdTokenClaims<AllClaims, CoreGenderClaim>;
        let claims = |verified: Value| {
            serde_json::from_value::<Claims>(serde_json::json!({
                "iss": "https://appleid.apple.com", "aud": "halyard", "sub": "001",
                "iat": 1, "exp": 2, "email": "a@example.com", "email_verified": verified,
            }))
        };
        assert_eq!(claims(Value::from("true"))?.email_verified(), Some(true));
        assert_eq!(claims(Value::from("false"))?.email_verified(), Some(false));
        assert_eq!(claims(Value::from(true))?.email_verified(), Some(true));
        assert!(claims(Value::from("yes")).is_err());
        assert_eq!(lenient_bool(&Value::from("false")), Some(false));
        assert_eq!(lenient_bool(&Value::from(true)), Some(true));
        assert_eq!(lenient_bool(&Value::from("maybe")), None);
        Ok(())
    }

    /// A token answer that does not read is worded after the part that failed: the ID token in
    /// it is not "the token endpoint".
    #[test]
    fn an_unreadable_exchange_names_the_part_that_failed() {
        let parsed = |body: Value| {
            let bytes = body.to_string().into_bytes();
            let mut reader = serde_json::Deserializer::from_slice(&bytes);
            match serde_path_to_error::deserialize::<_, CoreTokenResponse>(&mut reader) {
                Ok(_) => String::from("it read"),
                Err(error) => {
                    exchange_failed(openidconnect::RequestTokenError::Parse(error, bytes)).to_string()
                }
            }
        };
        let id_token = parsed(serde_json::json!({
            "access_token": "a", "token_type": "Bearer", "id_token": "not-a-jwt"
        }));
        assert!(
            id_token.contains("the ID token the OpenID provider sent could not be read")
                && !id_token.contains("token endpoint"),
            "{id_token}"
        );
        let answer = parsed(serde_json::json!({"token_type": "Bearer"}));
        assert!(
            answer.contains("token endpoint answered what is not a token response")
                && answer.contains("access_token"),
            "{answer}"
        );
        let unreachable = exchange_failed(openidconnect::RequestTokenError::Request(Transport(
            "connection refused".into(),
        )));
        assert_eq!(
            unreachable.to_string(),
            "the OpenID provider's token endpoint could not be read: connection refused"
        );
    }

    #[test]
    fn the_secret_never_shows_in_debug_output() {
        let shown = format!("{:?}", settings());
        assert!(
            shown.contains("<redacted>") && !shown.contains("secret: Some(\"s\")"),
            "{shown}"
        );
    }
}
