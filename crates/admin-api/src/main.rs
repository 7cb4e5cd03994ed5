//! The `admin-api` binary: configuration, logging, the store, and the HTTP server.

use actix_web::{HttpServer, web};
use admin_api::config::{Command, Config, LogFormat};
use admin_api::{AppState, build_app, ensure_admin_token, seed_admin_tokens};
use anyhow::Context as _;
use flag_store::{Store, StoreConfig};
use tracing_subscriber::EnvFilter;

#[actix_web::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::load();
    let filter = EnvFilter::try_new(&config.log_level).unwrap_or_else(|_| EnvFilter::new("info"));
    match config.log_format {
        LogFormat::Plain => tracing_subscriber::fmt().with_env_filter(filter).init(),
        LogFormat::Json => tracing_subscriber::fmt().json().with_env_filter(filter).init(),
    }

    let database = config.database_path();
    let store = Store::open(&StoreConfig::new(&database))
        .with_context(|| format!("opening the database at {}", database.display()))?;
    tracing::info!(database = %database.display(), "database ready at {}", database.display());

    if let Some(Command::Import {
        file,
        project,
        environment,
    }) = &config.command
    {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let document: flag_eval::ClientFeatures =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        let (_, warnings) = flag_eval::Engine::compile(&document);
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        let now = chrono::Utc::now().naive_utc();
        let report = flag_store::queries::import::client_features(
            &mut *store.connection()?,
            project,
            environment,
            &document,
            "import",
            now,
        )?;
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

    seed_admin_tokens(&store, &config.init_admin_api_tokens)?;
    if let Some(path) = ensure_admin_token(&store, &database)? {
        tracing::warn!(path = %path.display(), "no admin API token was configured; created one in {}", path.display());
    }

    let state = web::Data::new(AppState::new(store, config.settings()).context("starting the CPU pool")?);
    let address = (config.host.clone(), config.port);
    tracing::info!(host = %config.host, port = config.port, "listening on {}:{}", config.host, config.port);
    let app_state = state.clone();
    let server = HttpServer::new(move || build_app(app_state.clone()))
        .bind(address)
        .context("binding the HTTP listener")?
        // Database work runs on the blocking pool; more threads than pooled connections only
        // queue for a connection while each holds its own allocator arena.
        .worker_max_blocking_threads(4)
        .shutdown_timeout(30)
        .disable_signals()
        .run();
    let handle = server.handle();
    actix_web::rt::spawn(async move {
        shutdown_signal().await;
        // Readiness goes first, so a load balancer stops sending traffic while requests drain.
        state
            .shutting_down
            .store(true, std::sync::atomic::Ordering::SeqCst);
        tracing::info!("shutting down: finishing requests in flight");
        handle.stop(true).await;
    });
    server.await.context("running the HTTP server")?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use actix_web::rt::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut terminate), Ok(mut interrupt)) => {
                futures_util::future::select(Box::pin(terminate.recv()), Box::pin(interrupt.recv())).await;
            }
            _ => {
                let _ = actix_web::rt::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = actix_web::rt::signal::ctrl_c().await;
    }
}
