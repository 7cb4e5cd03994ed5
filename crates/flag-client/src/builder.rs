//! [`Builder`]: the client's settings, and starting it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use flag_eval::ClientFeatures;

use crate::state::{Config, Shared, Threads};
use crate::{Client, Error, Event, Source};

/// How the client learns of changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// The server's event stream when it offers one, else polling the whole document; a server
    /// that sheds the stream (`fetch-mode: polling`, 429, 503) is polled for five minutes, then
    /// the stream is tried again.
    #[default]
    Auto,
    /// The event stream only; polling only while the server refuses it.
    Streaming,
    /// The delta API, polled; the whole document when the server has no delta API.
    Delta,
    /// The whole document, polled with `If-None-Match`.
    Polling,
}

/// Settings for a [`Client`].
pub struct Builder {
    url: String,
    token: String,
    app_name: String,
    instance_id: Option<String>,
    environment: String,
    mode: Mode,
    refresh_interval: Duration,
    metrics_interval: Option<Duration>,
    backup: Option<PathBuf>,
    bootstrap: Option<ClientFeatures>,
    headers: Vec<(String, String)>,
    document_listener: Option<crate::state::DocumentListener>,
    evaluates: bool,
    body_limit: u64,
    listener: Option<crate::state::Listener>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Builder")
            .field("url", &self.url)
            .field("app_name", &self.app_name)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Builder {
    pub(crate) fn new(url: String, token: String) -> Self {
        Self {
            url,
            token,
            app_name: "flag-client".into(),
            instance_id: None,
            environment: "default".into(),
            mode: Mode::default(),
            refresh_interval: Duration::from_secs(15),
            metrics_interval: Some(Duration::from_secs(60)),
            backup: None,
            bootstrap: None,
            headers: Vec::new(),
            document_listener: None,
            evaluates: true,
            body_limit: crate::fetch::BODY_LIMIT,
            listener: None,
        }
    }

    /// The application's name, as the usage views show it (`flag-client` by default).
    pub fn app_name(mut self, name: impl Into<String>) -> Self {
        self.app_name = name.into();
        self
    }

    /// This instance's id (a random one by default).
    pub fn instance_id(mut self, id: impl Into<String>) -> Self {
        self.instance_id = Some(id.into());
        self
    }

    /// The environment reported with usage (`default`); the token decides which flags are sent.
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.environment = environment.into();
        self
    }

    /// How the client learns of changes ([`Mode::Auto`] by default).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// How often to poll (15 s by default, as Unleash's SDKs).
    pub fn refresh_interval(mut self, interval: Duration) -> Self {
        self.refresh_interval = interval.max(Duration::from_millis(10));
        self
    }

    /// How often to post usage (60 s by default); `None` posts none and does not register.
    pub fn metrics_interval(mut self, interval: Option<Duration>) -> Self {
        self.metrics_interval = interval.map(|interval| interval.max(Duration::from_millis(10)));
        self
    }

    /// Where to write each state received and to start from when the server cannot be reached
    /// (by default `flag-client-<app name>.json` in the system's temporary directory).
    pub fn backup_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.backup = Some(path.into());
        self
    }

    /// A document to answer with until the server's first answer, instead of the backup.
    pub fn bootstrap(mut self, document: ClientFeatures) -> Self {
        self.bootstrap = Some(document);
        self
    }

    /// Sends `name: value` with every request to the server, besides the client's own headers
    /// (a proxy's or gateway's credentials, say).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Called with the whole document each time the flags change (from the server, the backup
    /// or the bootstrap document), on the thread where it happens: for a program that keeps or
    /// forwards the flags themselves, such as an edge in front of the server.
    pub fn on_document(mut self, listener: impl Fn(&ClientFeatures, Source) + Send + Sync + 'static) -> Self {
        self.document_listener = Some(Box::new(listener));
        self
    }

    /// Compiles nothing: the client only follows the server and hands each document to
    /// [`Builder::on_document`], and its evaluations answer as for unknown flags. For a program
    /// that serves the flags itself, which would otherwise hold two compiled copies it never
    /// reads.
    pub fn documents_only(mut self) -> Self {
        self.evaluates = false;
        self
    }

    /// Refuses answers (and stream events) of more than `bytes` (256 MiB by default, 64 MiB at
    /// most for one stream event), so a server answering without end costs at most that.
    pub fn body_limit(mut self, bytes: u64) -> Self {
        self.body_limit = bytes.max(1);
        self
    }

    /// Called with every [`Event`], on the thread where it happens: keep it quick.
    pub fn on_event(mut self, listener: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.listener = Some(Box::new(listener));
        self
    }

    /// Starts the client: answers from the bootstrap document or the backup at once, when there
    /// is one, and starts fetching and reporting on threads of its own.
    pub fn build(self) -> Result<Client, Error> {
        let url = self.url.trim_end_matches('/').to_owned();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(Error::Config(format!("{url:?} is not an http or https URL")));
        }
        if self.token.is_empty() {
            return Err(Error::Config("the API token is empty".into()));
        }
        let backup = self.backup.unwrap_or_else(|| {
            let name: String = self
                .app_name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            std::env::temp_dir().join(format!("flag-client-{name}.json"))
        });
        let config = Config {
            url,
            token: self.token,
            app_name: self.app_name,
            instance_id: self
                .instance_id
                .unwrap_or_else(|| format!("flag-client-{}", uuid::Uuid::new_v4())),
            connection_id: uuid::Uuid::new_v4().to_string(),
            environment: self.environment,
            mode: self.mode,
            refresh_interval: self.refresh_interval,
            metrics_interval: self.metrics_interval,
            backup,
            headers: self.headers,
            evaluates: self.evaluates,
            body_limit: self.body_limit,
        };
        let shared = Arc::new(Shared::new(config, self.listener, self.document_listener));
        if let Some(document) = self.bootstrap {
            shared.document_changed(&document, Source::Bootstrap);
            shared.publish(document, Source::Bootstrap);
        } else if let Some(document) = shared.read_backup() {
            shared.document_changed(&document, Source::Backup);
            shared.publish(document, Source::Backup);
        }
        let threads = Threads::start(&shared)?;
        Ok(Client {
            shared,
            _threads: Arc::new(threads),
        })
    }
}
