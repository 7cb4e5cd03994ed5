//! The edge: the server's delivery in front of an upstream (Unleash, or another Halyard or edge)
//! instead of over a database of its own.
//!
//! An edge is the same application over a private SQLite store that only [`Edge`] writes.
//! What differs is where that store's content comes from:
//!
//! - **Flags.** One follower per token scope (an environment and its projects), a
//!   [`flag_client::Client`] that streams from the upstream, or polls it with `If-None-Match`
//!   when it has no stream, and writes each document it receives into the store with
//!   `flag_store::queries::mirror::apply`. From there on, the server's own code answers: the
//!   client API with its `ETag`s, the delta API and streams, the frontend API and OFREP.
//! - **Tokens.** Each token is validated upstream (`POST /edge/validate`) before it is written
//!   into the store, where the server's token cache finds it; the tokens given at start at once,
//!   others on first use, once per token however many requests wait. Every token is validated
//!   again at an interval, and one the upstream no longer knows is deleted.
//! - **Usage.** What SDKs report is aggregated as the server aggregates it and forwarded to the
//!   upstream's `POST /api/client/metrics/bulk` instead of written ([`Edge::forward_usage`]).

pub mod types;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use flag_eval::ClientFeatures;
use flag_store::Store;
use flag_store::models::{Actor, NewApiToken, TokenProjects, TokenType};
use flag_store::queries::{self, client_metrics::Batch, mirror};
use sha2::{Digest as _, Sha256};

use self::types::{BackstageToken, EdgeStatus, PretrustedToken, ScopeStatus, UpstreamToken};
use crate::delivery::usage::Usage;
use crate::runtime::error::AdminError;
use crate::runtime::secrets;

/// How the edge reaches its upstream and what it serves.
#[derive(Debug, Clone)]
pub struct EdgeSettings {
    /// The upstream's base URL, without a trailing slash (`https://unleash.example.com/api` and
    /// `https://unleash.example.com` both work: a trailing `/api` is dropped).
    pub upstream: String,
    /// Tokens to validate and follow at start.
    pub tokens: Vec<String>,
    /// Frontend tokens trusted without validation, each for its environment and every project.
    pub pretrusted: Vec<PretrustedToken>,
    /// Where each scope's last document and the validated tokens are kept, to start from when
    /// the upstream is away; none keeps them in a temporary directory for the process's life.
    pub backup_folder: Option<PathBuf>,
    /// How often to poll an upstream that has no stream.
    pub refresh_interval: Duration,
    /// How often to send usage upstream.
    pub metrics_interval: Duration,
    /// How often to validate every token again.
    pub revalidation_interval: Duration,
    /// Headers sent with every upstream request.
    pub headers: Vec<(String, String)>,
    /// The edge's application name upstream.
    pub app_name: String,
    /// The edge's instance id upstream.
    pub instance_id: String,
}

/// `POST /edge/validate`'s answer.
#[derive(serde::Deserialize)]
struct Answer {
    tokens: Vec<UpstreamToken>,
}

/// What the edge knows of a token.
#[derive(Debug, Clone)]
struct Known {
    token: UpstreamToken,
    scope: Option<mirror::Scope>,
    validated_at: DateTime<Utc>,
}

/// One scope's follower: the client reading the upstream, and what it last wrote.
struct Follower {
    state: Arc<FollowerState>,
    /// Dropping it stops the client's threads.
    _client: flag_client::Client,
}

struct FollowerState {
    scope: mirror::Scope,
    /// The token the scope is fetched with.
    token: String,
    /// The fingerprints of the document last written, which the next one is compared with.
    previous: Mutex<mirror::Fingerprints>,
    /// Where the flags served came from, and since when.
    served: tokio::sync::watch::Sender<Option<(flag_client::Source, DateTime<Utc>)>>,
    /// The last upstream failure, with when it happened.
    failure: Mutex<Option<(String, DateTime<Utc>)>>,
    /// The last write into the store that failed.
    write_failure: Mutex<Option<String>>,
}

/// The edge's state: the tokens it knows, its followers, and the way upstream.
pub struct Edge {
    settings: EdgeSettings,
    store: Store,
    agent: ureq::Agent,
    known: Mutex<HashMap<String, Known>>,
    /// Tokens the upstream refused, and when: asked again only after
    /// [`Edge::REFUSED_FOR`].
    refused: Mutex<HashMap<String, Instant>>,
    /// Validations under way, so concurrent first uses of one token ask upstream once.
    flights: Mutex<HashMap<String, Arc<tokio::sync::OnceCell<bool>>>>,
    followers: Mutex<HashMap<mirror::Scope, Follower>>,
    /// Where backups go when no folder is configured.
    _temporary: Option<tempfile::TempDir>,
    backups: PathBuf,
    started: DateTime<Utc>,
    /// Usage rows sent upstream, and sends that failed.
    forwarded: std::sync::atomic::AtomicU64,
    forward_failures: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Edge {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Edge")
            .field("upstream", &self.settings.upstream)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The name a backup of `scope` is kept under.
fn backup_name(scope: &mirror::Scope) -> String {
    let projects = scope
        .projects
        .as_ref()
        .map_or_else(|| "*".to_owned(), |projects| projects.join(","));
    let digest = Sha256::digest(format!("{}\0{projects}", scope.environment));
    format!("features-{}.json", hex::encode(&digest[..8]))
}

impl Edge {
    /// How long a token the upstream refused is refused without asking again.
    pub const REFUSED_FOR: Duration = Duration::from_secs(10);
    /// Most refused tokens remembered.
    const REFUSED_KEPT: usize = 10_000;
    /// How long a first request waits for its scope's first document.
    pub const FIRST_DOCUMENT_WAIT: Duration = Duration::from_secs(5);
    /// Most bytes of one upstream document or stream event: about 120,000 flags of the
    /// benchmark's kind (10,000 are 5 MB).
    pub const UPSTREAM_BODY_LIMIT: u64 = 64 << 20;
    /// Most usage rows per upstream request.
    pub const ROWS_PER_SEND: usize = 1_000;
    /// The file the validated tokens are kept in, in the backup folder.
    const TOKENS_FILE: &'static str = "tokens.json";

    /// An edge writing into `store` (an empty store of its own).
    pub fn new(mut settings: EdgeSettings, store: Store) -> std::io::Result<Self> {
        settings.upstream = settings.upstream.trim_end_matches('/').to_owned();
        if let Some(root) = settings.upstream.strip_suffix("/api") {
            settings.upstream = root.to_owned();
        }
        let (temporary, backups) = match &settings.backup_folder {
            Some(folder) => {
                std::fs::create_dir_all(folder)?;
                (None, folder.clone())
            }
            None => {
                let directory = tempfile::tempdir()?;
                let path = directory.path().to_owned();
                (Some(directory), path)
            }
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_secs(30)))
            .build()
            .into();
        Ok(Self {
            settings,
            store,
            agent,
            known: Mutex::default(),
            refused: Mutex::default(),
            flights: Mutex::default(),
            followers: Mutex::default(),
            _temporary: temporary,
            backups,
            started: Utc::now(),
            forwarded: std::sync::atomic::AtomicU64::new(0),
            forward_failures: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &EdgeSettings {
        &self.settings
    }

    fn request<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        let mut request = request
            .header("unleash-appname", &self.settings.app_name)
            .header("unleash-instanceid", &self.settings.instance_id)
            .header("unleash-sdk", concat!("halyard-edge:", env!("CARGO_PKG_VERSION")))
            .header("User-Agent", concat!("halyard-edge/", env!("CARGO_PKG_VERSION")));
        for (name, value) in &self.settings.headers {
            request = request.header(name, value);
        }
        request
    }

    /// Asks the upstream which of `tokens` are valid (blocking).
    fn validate_upstream(&self, tokens: &[String]) -> Result<Vec<UpstreamToken>, AdminError> {
        let unavailable = |error: String| {
            tracing::warn!(%error, "the upstream did not validate tokens");
            AdminError::Unavailable
        };
        let mut response = self
            .request(
                self.agent
                    .post(format!("{}/edge/validate", self.settings.upstream)),
            )
            .header("Content-Type", "application/json")
            .send_json(serde_json::json!({ "tokens": tokens }))
            .map_err(|error| unavailable(error.to_string()))?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(unavailable(format!("POST /edge/validate answered {status}")));
        }
        let answer: Answer = response
            .body_mut()
            .with_config()
            .limit(16 << 20)
            .read_json()
            .map_err(|error| unavailable(format!("POST /edge/validate answered no token list: {error}")))?;
        let asked: HashSet<&str> = tokens.iter().map(String::as_str).collect();
        // Unleash's `/edge/validate` can keep answering for a token deleted after it first looked
        // it up (that cache of its is never read again), while its SDK APIs stop accepting the
        // token within a minute: so each token it lists is also asked of the API it is for.
        Ok(answer
            .tokens
            .into_iter()
            .filter(|token| asked.contains(token.token.as_str()) && self.still_accepted(token))
            .collect())
    }

    /// Validates the tokens given at start, and those trusted without validation, and starts
    /// following their scopes. When the upstream cannot be asked, the tokens validated by an
    /// earlier run (in the backup folder) are served, and the start tokens are asked about again
    /// by the next revalidation.
    pub async fn start(self: &Arc<Self>) -> Result<(), AdminError> {
        let pretrusted: Vec<UpstreamToken> = self
            .settings
            .pretrusted
            .iter()
            .map(|trusted| UpstreamToken {
                token: trusted.token.clone(),
                token_type: "frontend".into(),
                environment: Some(trusted.environment.clone()),
                projects: vec!["*".into()],
            })
            .collect();
        for token in pretrusted {
            self.accept(token).await?;
        }
        if self.settings.tokens.is_empty() {
            return Ok(());
        }
        let edge = Arc::clone(self);
        let tokens = self.settings.tokens.clone();
        let validated = tokio::task::spawn_blocking(move || edge.validate_upstream(&tokens))
            .await
            .map_err(|error| AdminError::Internal(format!("token validation stopped: {error}")))?;
        match validated {
            Ok(valid) => {
                let valid_names: HashSet<String> = valid.iter().map(|token| token.token.clone()).collect();
                for token in &self.settings.tokens {
                    if !valid_names.contains(token) {
                        tracing::warn!(
                            token = %types::masked(token),
                            "the upstream does not know a token given at start; it is not served"
                        );
                    }
                }
                for token in valid {
                    self.accept(token).await?;
                }
            }
            Err(_) => {
                let saved = self.saved_tokens();
                tracing::warn!(
                    tokens = saved.len(),
                    "the upstream is away: serving the {} tokens an earlier run validated, from the backup",
                    saved.len()
                );
                for token in saved {
                    if self.settings.tokens.contains(&token.token) {
                        self.accept(token).await?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The tokens an earlier run validated.
    fn saved_tokens(&self) -> Vec<UpstreamToken> {
        std::fs::read(self.backups.join(Self::TOKENS_FILE))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Keeps the validated tokens beside the documents, through a temporary file.
    fn save_tokens(&self) {
        let tokens: Vec<UpstreamToken> = lock(&self.known)
            .values()
            .map(|known| known.token.clone())
            .collect();
        let path = self.backups.join(Self::TOKENS_FILE);
        let temporary = self
            .backups
            .join(format!("{}.{}.tmp", Self::TOKENS_FILE, uuid_like()));
        let written = serde_json::to_vec(&tokens)
            .map_err(std::io::Error::other)
            .and_then(|bytes| write_private(&temporary, &bytes))
            .and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(error) = written {
            let _ = std::fs::remove_file(&temporary);
            tracing::warn!(%error, path = %path.display(), "cannot keep the validated tokens in the backup folder");
        }
    }

    /// Writes `token` into the store and follows its scope (client and backend tokens).
    async fn accept(self: &Arc<Self>, token: UpstreamToken) -> Result<(), AdminError> {
        let token_type = TokenType::parse(&token.token_type)
            .ok_or_else(|| AdminError::bad_request(format!("unknown token type {:?}", token.token_type)))?;
        if token_type == TokenType::Admin {
            return Err(AdminError::bad_request(
                "an edge serves SDK tokens, not admin tokens",
            ));
        }
        // Unleash may leave the environment out: the token's own text then names it.
        let environment = token
            .environment
            .clone()
            .or_else(|| {
                let (scope, _) = token.token.split_once('.')?;
                Some(scope.split_once(':')?.1.to_owned())
            })
            .unwrap_or_else(|| "*".into());
        let projects = if token.projects.is_empty() {
            vec!["*".to_owned()]
        } else {
            token.projects.clone()
        };
        let scope = matches!(token_type, TokenType::Client | TokenType::Backend).then(|| mirror::Scope {
            environment: if environment == "*" {
                crate::identity::auth::DEFAULT_ENVIRONMENT.into()
            } else {
                environment.clone()
            },
            projects: (!projects.iter().any(|project| project == "*")).then(|| {
                let mut projects = projects.clone();
                projects.sort_unstable();
                projects.dedup();
                projects
            }),
        });
        let row = NewApiToken::new(
            format!("edge-{}", token_type.as_str()),
            secrets::verifier(&token.token),
            token_type,
            environment,
            TokenProjects::from(projects),
            None,
            crate::now(),
        );
        crate::runtime::db::run(&self.store, move |conn| {
            queries::api_tokens::create_unless_stored(conn, &row, &Actor::system())
        })
        .await?;
        let known = Known {
            token: token.clone(),
            scope: scope.clone(),
            validated_at: Utc::now(),
        };
        lock(&self.known).insert(token.token.clone(), known);
        lock(&self.refused).remove(&token.token);
        self.save_tokens();
        if let Some(scope) = scope {
            self.follow(scope, &token.token);
        }
        Ok(())
    }

    /// Starts following `scope` with `token`, unless it is followed.
    fn follow(&self, scope: mirror::Scope, token: &str) {
        let mut followers = lock(&self.followers);
        if followers.contains_key(&scope) {
            return;
        }
        let state = Arc::new(FollowerState {
            scope: scope.clone(),
            token: token.to_owned(),
            previous: Mutex::default(),
            served: tokio::sync::watch::Sender::new(None),
            failure: Mutex::new(None),
            write_failure: Mutex::new(None),
        });
        let store = self.store.clone();
        let writer = Arc::clone(&state);
        let listener = Arc::clone(&state);
        let mut builder = flag_client::Client::builder(self.settings.upstream.clone() + "/api", token)
            .app_name(self.settings.app_name.clone())
            .instance_id(self.settings.instance_id.clone())
            .environment(scope.environment.clone())
            .refresh_interval(self.settings.refresh_interval)
            .metrics_interval(None)
            .documents_only()
            .body_limit(Self::UPSTREAM_BODY_LIMIT)
            .backup_path(self.backups.join(backup_name(&scope)))
            .on_document(move |document, source| writer.write(&store, document, source))
            .on_event(move |event| {
                if let flag_client::Event::Error(error) = event {
                    *lock(&listener.failure) = Some((error.to_string(), Utc::now()));
                }
            });
        for (name, value) in &self.settings.headers {
            builder = builder.header(name.clone(), value.clone());
        }
        match builder.build() {
            Ok(client) => {
                tracing::info!(
                    environment = %scope.environment,
                    projects = ?scope.projects,
                    "following the upstream for environment {} and projects {:?}",
                    scope.environment,
                    scope.projects
                );
                followers.insert(
                    scope,
                    Follower {
                        state,
                        _client: client,
                    },
                );
            }
            Err(error) => tracing::error!(%error, "cannot follow the upstream"),
        }
    }

    /// Admits `token`, unknown to the store, on its first use: asks the upstream once however
    /// many requests carry it meanwhile, writes it into the store when valid, and waits (up to
    /// [`Edge::FIRST_DOCUMENT_WAIT`]) for its scope's first document. Whether it is valid.
    pub async fn admit(self: &Arc<Self>, token: &str) -> Result<bool, AdminError> {
        // Offline, there is no one to ask: the tokens given are all there are.
        if self.settings.upstream.is_empty() {
            return Ok(false);
        }
        if lock(&self.known).contains_key(token) {
            return Ok(true);
        }
        if lock(&self.refused)
            .get(token)
            .is_some_and(|at| at.elapsed() < Self::REFUSED_FOR)
        {
            return Ok(false);
        }
        let flight = Arc::clone(lock(&self.flights).entry(token.to_owned()).or_default());
        let edge = Arc::clone(self);
        let asked = token.to_owned();
        let valid = flight
            .get_or_try_init(|| async move {
                let probe = Arc::clone(&edge);
                let tokens = vec![asked.clone()];
                let answer = tokio::task::spawn_blocking(move || probe.validate_upstream(&tokens))
                    .await
                    .map_err(|error| AdminError::Internal(format!("token validation stopped: {error}")))??;
                match answer.into_iter().next() {
                    Some(valid) => {
                        edge.accept(valid).await?;
                        Ok::<bool, AdminError>(true)
                    }
                    None => {
                        let mut refused = lock(&edge.refused);
                        if refused.len() >= Self::REFUSED_KEPT {
                            refused.retain(|_, at| at.elapsed() < Self::REFUSED_FOR);
                            if refused.len() >= Self::REFUSED_KEPT {
                                refused.clear();
                            }
                        }
                        refused.insert(asked, Instant::now());
                        Ok(false)
                    }
                }
            })
            .await
            .copied();
        lock(&self.flights).remove(token);
        let valid = valid?;
        if valid {
            self.first_document(token).await;
        }
        Ok(valid)
    }

    /// Admits every token of `tokens` the store does not hold and the upstream knows, asking
    /// the upstream once for all of them: what another edge's `POST /edge/validate` needs.
    pub async fn admit_all(self: &Arc<Self>, tokens: &[String]) -> Result<(), AdminError> {
        if self.settings.upstream.is_empty() {
            return Ok(());
        }
        let unknown: Vec<String> = {
            let known = lock(&self.known);
            let refused = lock(&self.refused);
            let mut unknown: Vec<String> = tokens
                .iter()
                .filter(|token| {
                    !known.contains_key(*token)
                        && refused
                            .get(*token)
                            .is_none_or(|at| at.elapsed() >= Self::REFUSED_FOR)
                })
                .cloned()
                .collect();
            unknown.sort_unstable();
            unknown.dedup();
            unknown
        };
        if unknown.is_empty() {
            return Ok(());
        }
        let edge = Arc::clone(self);
        let question = unknown.clone();
        let valid = tokio::task::spawn_blocking(move || edge.validate_upstream(&question))
            .await
            .map_err(|error| AdminError::Internal(format!("token validation stopped: {error}")))??;
        let valid_names: HashSet<String> = valid.iter().map(|token| token.token.clone()).collect();
        for token in valid {
            self.accept(token).await?;
        }
        let mut refused = lock(&self.refused);
        if refused.len() + unknown.len() > Self::REFUSED_KEPT {
            refused.clear();
        }
        for token in unknown.into_iter().filter(|token| !valid_names.contains(token)) {
            refused.insert(token, Instant::now());
        }
        Ok(())
    }

    /// Waits for the first document of `token`'s scope, up to [`Edge::FIRST_DOCUMENT_WAIT`].
    async fn first_document(&self, token: &str) {
        let scope = lock(&self.known).get(token).and_then(|known| known.scope.clone());
        let Some(scope) = scope else { return };
        let receiver = lock(&self.followers)
            .get(&scope)
            .map(|follower| follower.state.served.subscribe());
        if let Some(mut receiver) = receiver {
            let _ = tokio::time::timeout(Self::FIRST_DOCUMENT_WAIT, receiver.wait_for(Option::is_some)).await;
        }
    }

    /// Validates every known token again; deletes from the store those the upstream no longer
    /// knows, and stops following scopes no token needs. An upstream that cannot be asked
    /// revokes nothing.
    pub async fn revalidate(self: &Arc<Self>) -> Result<usize, AdminError> {
        let tokens: Vec<String> = lock(&self.known)
            .iter()
            .filter(|(token, _)| !self.is_pretrusted(token))
            .map(|(token, _)| token.clone())
            .collect();
        // Start tokens the upstream could not be asked about at start are asked about now.
        let mut asked = tokens.clone();
        for token in &self.settings.tokens {
            if !asked.contains(token) {
                asked.push(token.clone());
            }
        }
        if asked.is_empty() {
            return Ok(0);
        }
        let edge = Arc::clone(self);
        let question = asked.clone();
        let valid = tokio::task::spawn_blocking(move || {
            let valid = edge.validate_upstream(&question)?;
            // Unleash's `/edge/validate` can keep answering for a token deleted since it first
            // looked it up (its cache there is never read again); its SDK APIs stop accepting it
            // within a minute. So each token it still lists is also asked of the API it is for.
            Ok::<_, AdminError>(
                valid
                    .into_iter()
                    .filter(|token| edge.still_accepted(token))
                    .collect::<Vec<_>>(),
            )
        })
        .await
        .map_err(|error| AdminError::Internal(format!("token validation stopped: {error}")))??;
        let valid_names: HashSet<&str> = valid.iter().map(|token| token.token.as_str()).collect();
        let gone: Vec<String> = tokens
            .iter()
            .filter(|token| !valid_names.contains(token.as_str()))
            .cloned()
            .collect();
        for token in valid.iter().filter(|token| !tokens.contains(&token.token)) {
            self.accept(token.clone()).await?;
        }
        let now = Utc::now();
        for known in lock(&self.known).values_mut() {
            if valid_names.contains(known.token.token.as_str()) {
                known.validated_at = now;
            }
        }
        for token in &gone {
            tracing::warn!(token = %types::masked(token), "the upstream no longer knows a token; it is no longer served");
            let verifier = secrets::verifier(token);
            crate::runtime::db::run(&self.store, move |conn| match queries::api_tokens::find_by_hash(
                conn, &verifier,
            )? {
                Some(row) => queries::api_tokens::delete(conn, row.id, &Actor::system(), crate::now()),
                None => Ok(()),
            })
            .await?;
            lock(&self.known).remove(token);
        }
        if !gone.is_empty() {
            self.save_tokens();
            self.retire_scopes();
        }
        Ok(gone.len())
    }

    /// Whether the upstream's own SDK API still accepts `token` (blocking): a request for no flag
    /// of the client API, or the frontend API's answer. Only a refusal (401 or 403) says no; an
    /// upstream that cannot answer revokes nothing.
    fn still_accepted(&self, token: &UpstreamToken) -> bool {
        let path = match token.token_type.as_str() {
            "client" | "backend" => "/api/client/features?namePrefix=%00halyard-edge-probe",
            "frontend" => "/api/frontend",
            _ => return true,
        };
        let response = self
            .request(self.agent.get(format!("{}{path}", self.settings.upstream)))
            .header("Authorization", &token.token)
            .call();
        !matches!(response.map(|response| response.status().as_u16()), Ok(401 | 403))
    }

    fn is_pretrusted(&self, token: &str) -> bool {
        self.settings
            .pretrusted
            .iter()
            .any(|trusted| trusted.token == token)
    }

    /// Stops followers whose token is gone: another token of the same scope takes over, or the
    /// scope is no longer followed.
    fn retire_scopes(&self) {
        let known = lock(&self.known).clone();
        let mut followers = lock(&self.followers);
        let orphaned: Vec<mirror::Scope> = followers
            .iter()
            .filter(|(_, follower)| !known.contains_key(&follower.state.token))
            .map(|(scope, _)| scope.clone())
            .collect();
        for scope in orphaned {
            followers.remove(&scope);
            let heir = known
                .values()
                .find(|known| known.scope.as_ref() == Some(&scope))
                .map(|known| known.token.token.clone());
            if let Some(heir) = heir {
                drop(followers);
                self.follow(scope, &heir);
                followers = lock(&self.followers);
            }
        }
    }

    /// Sends what SDKs reported upstream, per environment with a token of that environment.
    pub async fn forward_usage(self: &Arc<Self>, usage: &Usage) -> Result<usize, AdminError> {
        let edge = Arc::clone(self);
        let sent = usage
            .forward(Self::ROWS_PER_SEND, move |batch| {
                let edge = Arc::clone(&edge);
                async move {
                    tokio::task::spawn_blocking(move || edge.send_usage(batch))
                        .await
                        .map_err(|error| AdminError::Internal(format!("the usage send stopped: {error}")))?
                }
            })
            .await;
        match &sent {
            Ok(rows) => {
                self.forwarded
                    .fetch_add(*rows as u64, std::sync::atomic::Ordering::Relaxed);
            }
            Err(error) => {
                self.forward_failures
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::warn!(%error, "SDK usage could not be sent upstream; it is kept for the next send");
            }
        }
        sent
    }

    /// Posts one batch upstream as Unleash's bulk report, split by environment (blocking).
    fn send_usage(&self, batch: Batch) -> Result<(), AdminError> {
        let bodies = types::bulk_reports(batch);
        for (environment, body) in bodies {
            let Some(token) = self.token_for(&environment) else {
                tracing::warn!(
                    environment = %environment,
                    "no client token of environment {environment} is known: its usage is not sent"
                );
                continue;
            };
            let response = self
                .request(
                    self.agent
                        .post(format!("{}/api/client/metrics/bulk", self.settings.upstream)),
                )
                .header("Authorization", &token)
                .header("Content-Type", "application/json")
                .send_json(&body)
                .map_err(|error| {
                    tracing::warn!(%error, "the upstream did not take SDK usage");
                    AdminError::Unavailable
                })?;
            let status = response.status().as_u16();
            if !(200..300).contains(&status) {
                tracing::warn!(status, "the upstream refused SDK usage");
                // A refusal of the report itself would be refused again: only an upstream that
                // is unavailable gets it again.
                if status >= 500 || status == 429 {
                    return Err(AdminError::Unavailable);
                }
            }
        }
        Ok(())
    }

    /// A client token of `environment`, else one of every environment.
    fn token_for(&self, environment: &str) -> Option<String> {
        let known = lock(&self.known);
        let client = |known: &&Known| matches!(known.token.token_type.as_str(), "client" | "backend");
        known
            .values()
            .filter(client)
            .find(|known| known.token.environment.as_deref() == Some(environment))
            .or_else(|| {
                known
                    .values()
                    .filter(client)
                    .find(|known| matches!(known.token.environment.as_deref(), None | Some("*")))
            })
            .map(|known| known.token.token.clone())
    }

    /// What the edge serves, from where, and since when: the readiness answer and the log.
    pub fn status(&self) -> EdgeStatus {
        let followers = lock(&self.followers);
        let scopes: Vec<ScopeStatus> = followers
            .values()
            .map(|follower| {
                let served = *follower.state.served.borrow();
                let failure = lock(&follower.state.failure).clone();
                ScopeStatus {
                    environment: follower.state.scope.environment.clone(),
                    projects: follower.state.scope.projects.clone(),
                    source: served.map(|(source, _)| types::source_name(source).to_owned()),
                    since: served.map(|(_, since)| since),
                    last_failure_at: failure.as_ref().map(|(_, at)| *at),
                    last_failure: failure.map(|(error, _)| error),
                    write_failure: lock(&follower.state.write_failure).clone(),
                }
            })
            .collect();
        EdgeStatus {
            upstream: self.settings.upstream.clone(),
            started: self.started,
            // Ready once every followed scope has flags; an edge given tokens follows at least one.
            ready: (self.settings.tokens.is_empty() || !scopes.is_empty())
                && scopes.iter().all(|scope| scope.source.is_some()),
            scopes,
            tokens: lock(&self.known).len(),
            usage_rows_forwarded: self.forwarded.load(std::sync::atomic::Ordering::Relaxed),
            usage_send_failures: self.forward_failures.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// The tokens the edge serves, masked, for an operator.
    pub fn tokens(&self) -> Vec<BackstageToken> {
        let mut tokens: Vec<BackstageToken> = lock(&self.known)
            .values()
            .map(|known| BackstageToken {
                token: types::masked(&known.token.token),
                token_type: known.token.token_type.clone(),
                environment: known.token.environment.clone(),
                projects: known.token.projects.clone(),
                status: "Validated".into(),
                validated_at: known.validated_at,
            })
            .collect();
        tokens.sort_by(|left, right| left.token.cmp(&right.token));
        tokens
    }

    /// The documents the edge serves, by scope, read from its store, for an operator.
    pub async fn documents(&self) -> Result<Vec<(mirror::Scope, ClientFeatures)>, AdminError> {
        let scopes: Vec<mirror::Scope> = lock(&self.followers).keys().cloned().collect();
        crate::runtime::db::run(&self.store, move |conn| {
            scopes
                .into_iter()
                .map(|scope| {
                    let projects = scope.projects.clone().map_or(
                        queries::evaluation::ProjectScope::All,
                        queries::evaluation::ProjectScope::Only,
                    );
                    let document = queries::evaluation::client_features(conn, &projects, &scope.environment)?;
                    Ok((scope, document))
                })
                .collect()
        })
        .await
    }
}

impl FollowerState {
    /// Writes a document the client received into the store (on the client's thread).
    fn write(&self, store: &Store, document: &ClientFeatures, source: flag_client::Source) {
        let mut previous = lock(&self.previous);
        let written = store.connection().map_err(AdminError::from).and_then(|mut conn| {
            mirror::apply(
                &mut conn,
                &self.scope,
                document,
                &previous,
                &Actor::system(),
                crate::now(),
            )
            .map_err(AdminError::from)
        });
        // The rows of a large document lie between what the store's caches keep.
        crate::runtime::memory::release_free_pages();
        match written {
            Ok((done, fingerprints)) => {
                *previous = fingerprints;
                *lock(&self.write_failure) = None;
                if done.changed() {
                    tracing::info!(
                        environment = %self.scope.environment,
                        written = done.written,
                        removed = done.removed,
                        segments = done.segments,
                        source = types::source_name(source),
                        "flags of environment {} from the {}: {} written, {} removed",
                        self.scope.environment,
                        types::source_name(source),
                        done.written,
                        done.removed
                    );
                }
                let since = Utc::now();
                self.served.send_if_modified(|served| {
                    let same = served.is_some_and(|(held, _)| held == source);
                    if !same {
                        *served = Some((source, since));
                    }
                    !same
                });
            }
            Err(error) => {
                tracing::error!(%error, environment = %self.scope.environment, "the upstream's flags could not be kept; the last ones stand");
                *lock(&self.write_failure) = Some(error.to_string());
            }
        }
    }
}

/// A short random name part.
fn uuid_like() -> String {
    hex::encode(getrandom::u64().unwrap_or(0).to_be_bytes())
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// `halyard offline`: the flags of a file served with tokens given on the command line, with
/// no upstream, as Unleash Edge's offline mode serves them.
#[derive(Debug)]
pub struct Offline {
    store: Store,
    file: PathBuf,
    environments: Vec<String>,
    previous: Mutex<mirror::Fingerprints>,
}

impl Offline {
    /// Writes the tokens into `store` and loads `file` into every environment they name (a
    /// token of every environment serves `development`).
    pub fn start(
        store: Store,
        file: PathBuf,
        client_tokens: &[String],
        frontend_tokens: &[String],
    ) -> Result<Self, AdminError> {
        let mut environments = Vec::new();
        let mut conn = store.connection()?;
        for (tokens, token_type) in [
            (client_tokens, TokenType::Client),
            (frontend_tokens, TokenType::Frontend),
        ] {
            for token in tokens.iter().filter(|token| !token.is_empty()) {
                let (project, environment) = token
                    .split_once('.')
                    .and_then(|(scope, _)| scope.split_once(':'))
                    .unwrap_or(("*", "*"));
                let served = if environment == "*" {
                    crate::identity::auth::DEFAULT_ENVIRONMENT
                } else {
                    environment
                };
                if !environments.iter().any(|known: &String| known == served) {
                    environments.push(served.to_owned());
                }
                queries::api_tokens::create_unless_stored(
                    &mut conn,
                    &NewApiToken::new(
                        format!("offline-{}", token_type.as_str()),
                        secrets::verifier(token),
                        token_type,
                        environment.to_owned(),
                        TokenProjects::from(vec![project.to_owned()]),
                        None,
                        crate::now(),
                    ),
                    &Actor::system(),
                )?;
            }
        }
        drop(conn);
        let offline = Self {
            store,
            file,
            environments,
            previous: Mutex::default(),
        };
        offline.reload()?;
        Ok(offline)
    }

    /// Reads the file again and serves what it holds; a file that does not read leaves the flags
    /// as they were.
    pub fn reload(&self) -> Result<(), AdminError> {
        let bytes = std::fs::read(&self.file).map_err(|error| {
            AdminError::bad_request(format!("cannot read {}: {error}", self.file.display()))
        })?;
        let document: ClientFeatures = serde_json::from_slice(&bytes).map_err(|error| {
            AdminError::bad_request(format!(
                "{} is not a client-features document: {error}",
                self.file.display()
            ))
        })?;
        let mut previous = lock(&self.previous);
        let mut conn = self.store.connection()?;
        let mut written = mirror::Fingerprints::default();
        for environment in &self.environments {
            (_, written) = mirror::apply(
                &mut conn,
                &mirror::Scope {
                    environment: environment.clone(),
                    projects: None,
                },
                &document,
                &previous,
                &Actor::system(),
                crate::now(),
            )?;
        }
        *previous = written;
        Ok(())
    }
}

/// Lets browsers of `origins` call the frontend API and OFREP (`*` for any): an edge's
/// `--cors-origin`, kept where the server keeps its own setting.
pub fn allow_origins(store: &Store, origins: &[String]) -> Result<(), AdminError> {
    let origins: Vec<String> = origins
        .iter()
        .map(|origin| origin.trim().to_owned())
        .filter(|origin| !origin.is_empty())
        .collect();
    if origins.is_empty() {
        return Ok(());
    }
    queries::settings::put(
        &mut *store.connection()?,
        crate::identity::auth::FRONTEND_ORIGINS,
        &origins,
        &Actor::system(),
        crate::now(),
    )?;
    Ok(())
}

/// What an edge answers for `question`: the upstream's documents carry no tags, so an edge
/// cannot filter by them and answers the flags of every tag, as Unleash Edge does (an SDK that
/// asks for tags gets more flags than it asked for, never fewer).
pub fn answerable(
    mut question: crate::delivery::client::types::ClientFeaturesQuery,
) -> crate::delivery::client::types::ClientFeaturesQuery {
    question.tag = None;
    question
}

/// What `halyard health` and `halyard ready` ask of an edge at `edge_url`, as Unleash Edge's
/// subcommands of the same names do for container health checks: `/internal-backstage/health`
/// answering 200, or `/internal-backstage/ready` answering 200 with `"status": "READY"`.
pub fn probe(edge_url: &str, ready: bool) -> Result<(), String> {
    let path = if ready { "ready" } else { "health" };
    let url = format!("{}/internal-backstage/{path}", edge_url.trim_end_matches('/'));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut response = agent
        .get(&url)
        .call()
        .map_err(|error| format!("{url}: {error}"))?;
    let status = response.status().as_u16();
    let body: serde_json::Value = response
        .body_mut()
        .with_config()
        .limit(1 << 20)
        .read_json()
        .unwrap_or(serde_json::Value::Null);
    let expected = if ready { "READY" } else { "OK" };
    if status == 200 && body["status"] == expected {
        Ok(())
    } else {
        Err(format!("{url} answered {status} {body}"))
    }
}
