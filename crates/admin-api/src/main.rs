//! The `admin-api` binary: configuration, logging, the store, and the HTTP server.

use actix_web::web;
use admin_api::config::{Command, Config, LogFormat};
use admin_api::{AppState, ensure_admin_token, seed_tokens, server};
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

    for (token_type, tokens) in config.initial_tokens() {
        seed_tokens(&store, token_type, tokens)?;
    }
    if let Some(path) = ensure_admin_token(&store, &database)? {
        tracing::warn!(path = %path.display(), "no admin API token was configured; created one in {}", path.display());
    }

    let state = web::Data::new(AppState::new(store, config.settings()).context("starting the CPU pool")?);
    tracing::info!(host = %config.host, port = config.port, "listening on {}:{}", config.host, config.port);
    let server = server::start(state.clone(), (config.host.as_str(), config.port))
        .context("binding the HTTP listener")?;
    server::run(server, state)
        .await
        .context("running the HTTP server")?;
    tracing::info!("stopped");
    Ok(())
}
