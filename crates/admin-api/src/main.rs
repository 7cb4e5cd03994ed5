//! The `admin-api` binary: configuration, logging, the store, and the HTTP server.

use actix_web::web;
use std::sync::Arc;

use admin_api::config::{Command, Config, EdgeArgs, LogFormat, MigrateArgs, OfflineArgs};
use admin_api::{AppState, server};
use anyhow::Context as _;
use flag_admin::Ctx;
use flag_admin::app::edge::{Edge, EdgeSettings, Offline, allow_origins};
use flag_admin::app::seeding::{
    AdminUser, ensure_admin_token, ensure_admin_user, import, import_file, seed_tokens,
};
use flag_store::{Database, Store, StoreConfig};
use tracing_subscriber::EnvFilter;

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    flag_admin::runtime::memory::configure();
    let config = Config::load();
    let filter = EnvFilter::try_new(&config.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    // The HTTP client logs whole requests and answers below `warn`, tokens and secrets included.
    let filter = ["ureq=warn", "ureq_proto=warn"]
        .into_iter()
        .filter_map(|directive| directive.parse().ok())
        .fold(filter, EnvFilter::add_directive);
    match config.log_format {
        LogFormat::Plain => tracing_subscriber::fmt().with_env_filter(filter).init(),
        LogFormat::Json => tracing_subscriber::fmt().json().with_env_filter(filter).init(),
    }

    let store_config = config.store_config()?;
    let database = store_config.database.describe();
    if let Some(Command::CopyDatabase { from, to }) = &config.command {
        return copy_database(&config, from, &to.0);
    }
    match &config.command {
        Some(Command::Health { edge_url }) => return probe(edge_url, false),
        Some(Command::Ready { edge_url }) => return probe(edge_url, true),
        Some(Command::Edge(args)) => return run_edge(&config, args).await,
        Some(Command::Offline(args)) => return run_offline(&config, args).await,
        _ => {}
    }
    let store = Store::open(&store_config).with_context(|| format!("opening the database at {database}"))?;
    tracing::info!(database = %database, backend = store.backend().as_str(), "database ready at {database}");

    if let Some(Command::Migrate(args)) = &config.command {
        return migrate(&store, args);
    }
    let sealing = config.sealing_key()?;
    if let Some(Command::RotateSecretsKey {
        new_key,
        new_key_file,
    }) = &config.command
    {
        let current = sealing
            .context("rotating needs the current key in HALYARD_SECRETS_KEY or HALYARD_SECRETS_KEY_FILE")?;
        let new = admin_api::config::sealing_key(
            "HALYARD_NEW_SECRETS_KEY",
            new_key.as_ref(),
            new_key_file.as_deref(),
        )?
        .context("give the new key with --new-key-file or HALYARD_NEW_SECRETS_KEY")?;
        flag_admin::identity::tokens::check_sealing_key(&store, Some(&current))?;
        let count = flag_admin::identity::tokens::rotate_sealing_key(&store, &current, &new)?;
        tracing::info!(
            count,
            key = new.id(),
            "sealed {count} secrets under the key {}; start the server with it",
            new.id()
        );
        return Ok(());
    }
    let sealed = flag_admin::identity::tokens::check_sealing_key(&store, sealing.as_ref())?;
    match &sealing {
        Some(key) => tracing::info!(
            key = key.id(),
            sealed,
            "API token and OpenID client secrets are kept readable, sealed under the key {}",
            key.id()
        ),
        None if sealed > 0 => tracing::warn!(
            sealed,
            "{sealed} secrets are sealed, and no HALYARD_SECRETS_KEY was given: they read as masked, and a sealed OpenID client secret stops single sign-on"
        ),
        None => {}
    }

    if let Some(Command::Import {
        file,
        project,
        environment,
    }) = &config.command
    {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let document: flag_eval::ClientFeatures =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        let (warnings, report) = import(&store, project, environment, &document)?;
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        tracing::info!(
            project = %project,
            environment = %environment,
            "imported into project {project}, environment {environment}: {} features created, {} updated, {} segments created",
            report.created,
            report.updated,
            report.segments
        );
        return Ok(());
    }

    for (token_type, tokens) in config.initial_tokens() {
        let secrets: Vec<String> = tokens.iter().map(|secret| secret.0.clone()).collect();
        seed_tokens(&store, token_type, &secrets)?;
    }
    if let Some(path) = ensure_admin_token(&store, &store_config.database.local_directory())? {
        tracing::warn!(path = %path.display(), "no admin API token was configured; created one in {}", path.display());
    }
    let directory = store_config.database.local_directory();
    let password_file = match ensure_admin_user(&store, &directory, &config.first_admin())? {
        AdminUser::Exists => Some(directory.join("admin-password")).filter(|path| path.exists()),
        AdminUser::Created => {
            tracing::info!(
                username = %config.default_admin_username,
                "created the first admin user, {}, with the password UNLEASH_DEFAULT_ADMIN_PASSWORD gives",
                config.default_admin_username
            );
            None
        }
        AdminUser::Generated(path) => {
            tracing::warn!(
                username = %config.default_admin_username,
                path = %path.display(),
                "created the first admin user, {}; its password is in {}",
                config.default_admin_username,
                path.display()
            );
            Some(path)
        }
    };

    if let Some(file) = &config.import_file {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let done = import_file(&store, &config.import_project, &config.import_environment, &bytes)
            .with_context(|| format!("importing {}", file.display()))?;
        tracing::info!(file = %file.display(), "flags file {}: {done:?}", file.display());
    }

    let mut settings = settings(&config);
    settings.sealing = sealing;
    if let Some(oidc) = &settings.oidc {
        flag_admin::identity::oidc::check(oidc)
            .map_err(|error| anyhow::anyhow!("the OIDC_* settings: {error}"))?;
    }
    let app = Ctx::new(store, settings).context("starting the CPU pool")?;
    let state = web::Data::new(AppState::new(app));
    tracing::info!("{}", welcome(&config, password_file.as_deref()));
    serve(&config, state).await
}

/// `halyard migrate`: reads the source, then plans (`--dry-run`) or writes, and prints the report.
/// Progress goes to standard error: a line that updates itself on a terminal, log lines otherwise.
fn migrate(store: &Store, args: &MigrateArgs) -> anyhow::Result<()> {
    use flag_admin::app::migrate::{self, ApiSource, Progress, Report};
    use std::io::{IsTerminal as _, Write as _};

    let source = ApiSource::new(
        &args.from,
        &args.token.0,
        std::time::Duration::from_secs(args.timeout_seconds.max(1)),
    )?;
    let terminal = std::io::stderr().is_terminal();
    let mut last: Option<flag_store::queries::migrate::Kind> = None;
    let mut progress = |step: Progress| {
        if terminal {
            if last.is_some_and(|kind| kind != step.kind) {
                eprintln!();
            }
            eprint!("\rreading {}: {}", step.kind.plural(), step.count);
            let _ = std::io::stderr().flush();
        } else {
            tracing::info!(
                kind = step.kind.plural(),
                count = step.count,
                "read {} {}",
                step.count,
                step.kind.plural()
            );
        }
        last = Some(step.kind);
    };
    let mut read = source
        .read(args.events_since, &mut progress)
        .with_context(|| format!("reading {}", args.from))?;
    if let Some(url) = &args.from_database {
        let mut database = flag_store::queries::migrate::UnleashDatabase::open(&url.0)
            .context("opening the source's database (--from-database)")?;
        read.add_database(&mut database, args.events_since)
            .context("reading the source's database (--from-database)")?;
    }
    if terminal {
        eprintln!();
    }
    tracing::info!(version = %read.version, "read the source, Unleash {}", read.version);
    let plan = if args.dry_run {
        migrate::plan(store, &read)?
    } else {
        tracing::info!("writing into the database in one transaction");
        migrate::apply(store, &read, args.merge).context("writing into the database; nothing was written")?
    };
    print!(
        "{}",
        Report {
            read: &read,
            plan: &plan,
            dry_run: args.dry_run,
            merge: args.merge,
            source: &args.from,
        }
    );
    Ok(())
}

/// The settings, with the SDK stream limit lowered to what the open-file limit allows: each
/// stream holds a descriptor, and past the process's limit connections would fail at accept
/// instead of getting a clear 503.
fn settings(config: &Config) -> flag_admin::Settings {
    let mut settings = config.settings();
    if let Some(open_files) = flag_admin::runtime::system::raise_open_files() {
        let allowed = flag_admin::runtime::system::streams_allowed(open_files);
        if settings.streams > allowed {
            tracing::warn!(
                open_files,
                streams = allowed,
                "the open-file limit allows at most {allowed} SDK streams, fewer than HALYARD_STREAMING_MAX_CONNECTIONS; raise `ulimit -n` for more"
            );
            settings.streams = allowed;
        }
    }
    settings
}

/// Listens and serves until SIGTERM or SIGINT.
async fn serve(config: &Config, state: web::Data<AppState>) -> anyhow::Result<()> {
    tracing::info!(host = %config.host, port = config.port, "listening on {}:{}", config.host, config.port);
    let server = server::start(state.clone(), (config.host.as_str(), config.port))
        .context("binding the HTTP listener")?;
    server::run(server, state)
        .await
        .context("running the HTTP server")?;
    tracing::info!("stopped");
    Ok(())
}

/// A store of the edge's own, in a private temporary directory removed when the process ends.
fn edge_store() -> anyhow::Result<(tempfile::TempDir, Store)> {
    let directory = tempfile::Builder::new()
        .prefix("halyard-edge-")
        .tempdir()
        .context("making the edge's temporary directory")?;
    let store = Store::open(&StoreConfig::new(directory.path().join("edge.db")))
        .context("opening the edge's store")?;
    Ok((directory, store))
}

/// `halyard health` and `halyard ready`: exit 0 when the edge answers, else 1 with the reason.
fn probe(edge_url: &str, ready: bool) -> anyhow::Result<()> {
    flag_admin::app::edge::probe(edge_url, ready).map_err(|reason| anyhow::anyhow!(reason))
}

/// `halyard edge`: serves SDKs from the upstream's flags.
async fn run_edge(config: &Config, args: &EdgeArgs) -> anyhow::Result<()> {
    let (_directory, store) = edge_store()?;
    let seconds = |value: u64| std::time::Duration::from_secs(value.max(1));
    let edge = Arc::new(
        Edge::new(
            EdgeSettings {
                upstream: args.upstream_url.clone(),
                tokens: args.tokens.iter().map(|token| token.0.clone()).collect(),
                pretrusted: args.pretrusted()?,
                backup_folder: args.backup_folder.clone(),
                refresh_interval: seconds(args.features_refresh_interval_seconds),
                metrics_interval: seconds(args.metrics_interval_seconds),
                revalidation_interval: seconds(args.token_revalidation_interval_seconds),
                headers: args.headers()?,
                app_name: args.app_name.clone(),
                instance_id: format!("{}-{}", args.app_name, uuid::Uuid::new_v4()),
            },
            store.clone(),
        )
        .context("preparing the backup folder")?,
    );
    allow_origins(&store, &config.cors_origin).context("keeping the CORS origins")?;
    let app = Ctx::new(store, settings(config)).context("starting the CPU pool")?;
    edge.start().await.context("validating the start tokens")?;
    tracing::info!(upstream = %edge.settings().upstream, "an edge in front of {}", edge.settings().upstream);
    let state = web::Data::new(AppState::edge(app, edge, config.base_path.as_deref()));
    serve(config, state).await
}

/// `halyard offline`: serves SDKs the flags of a file.
async fn run_offline(config: &Config, args: &OfflineArgs) -> anyhow::Result<()> {
    let (_directory, store) = edge_store()?;
    let secrets =
        |tokens: &[admin_api::config::Secret]| tokens.iter().map(|token| token.0.clone()).collect::<Vec<_>>();
    if args.client_tokens.is_empty() && args.frontend_tokens.is_empty() {
        anyhow::bail!("offline mode needs --client-tokens or --frontend-tokens");
    }
    let offline = Arc::new(
        Offline::start(
            store.clone(),
            args.bootstrap_file.clone(),
            &secrets(&args.client_tokens),
            &secrets(&args.frontend_tokens),
        )
        .with_context(|| format!("loading {}", args.bootstrap_file.display()))?,
    );
    if args.reload_interval > 0 {
        let every = std::time::Duration::from_secs(args.reload_interval);
        let reloading = Arc::clone(&offline);
        actix_web::rt::spawn(async move {
            let mut interval = actix_web::rt::time::interval(every);
            interval.tick().await;
            loop {
                interval.tick().await;
                let offline = Arc::clone(&reloading);
                match actix_web::rt::task::spawn_blocking(move || offline.reload()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(error)) => {
                        tracing::warn!(%error, "reloading the bootstrap file failed; the flags stand");
                    }
                    Err(error) => tracing::warn!(%error, "reloading the bootstrap file stopped"),
                }
            }
        });
    }
    allow_origins(&store, &config.cors_origin).context("keeping the CORS origins")?;
    let app = Ctx::new(store, settings(config)).context("starting the CPU pool")?;
    let edge = Arc::new(
        Edge::new(
            EdgeSettings {
                upstream: String::new(),
                tokens: Vec::new(),
                pretrusted: Vec::new(),
                backup_folder: None,
                refresh_interval: std::time::Duration::from_secs(15),
                metrics_interval: std::time::Duration::from_secs(3600),
                revalidation_interval: std::time::Duration::from_secs(3600),
                headers: Vec::new(),
                app_name: "halyard-offline".into(),
                instance_id: "halyard-offline".into(),
            },
            app.store().clone(),
        )
        .context("preparing the offline mode")?,
    );
    let state = web::Data::new(AppState::edge(app, edge, config.base_path.as_deref()));
    serve(config, state).await
}

/// `copy-database`: opens both databases (migrating each to this version), copies, and reports.
fn copy_database(config: &Config, from: &str, to: &str) -> anyhow::Result<()> {
    let source = Database::from_url(from)?;
    if !matches!(source, Database::Sqlite(ref path) if path.exists()) {
        anyhow::bail!(
            "--from must name an existing SQLite database file, not {}",
            source.describe()
        );
    }
    // The target takes the same `DATABASE_*` settings as the server would (schema, TLS, pool).
    let target_config = Config {
        database_url: Some(admin_api::config::Secret(to.to_owned())),
        ..config.clone()
    }
    .store_config()?;
    let target_name = target_config.database.describe();
    let source = Store::open(&StoreConfig::new(source)).context("opening the source database")?;
    let target = Store::open(&target_config)
        .with_context(|| format!("opening the target database at {target_name}"))?;
    let report = flag_store::copy::copy_database(&source, &target)?;
    for (table, rows) in &report.tables {
        tracing::info!(table, rows, "copied {rows} rows of {table}");
    }
    let total: i64 = report.tables.iter().map(|(_, rows)| rows).sum();
    tracing::info!(
        rows = total,
        "copied {total} rows into {target_name}; row counts match"
    );
    Ok(())
}

/// Where a person goes once the server listens: the console's address, and the first admin's
/// name and where its generated password is, while that file is there.
fn welcome(config: &Config, password_file: Option<&std::path::Path>) -> String {
    let host = match config.host.as_str() {
        "0.0.0.0" | "::" | "[::]" => "127.0.0.1",
        host => host,
    };
    let console = if host.contains(':') {
        format!("http://[{host}]:{}/", config.port)
    } else {
        format!("http://{host}:{}/", config.port)
    };
    match password_file {
        Some(path) => format!(
            "open {console} and sign in as {}; the password is in {}",
            config.default_admin_username,
            path.display()
        ),
        None => format!("open {console} and sign in"),
    }
}
