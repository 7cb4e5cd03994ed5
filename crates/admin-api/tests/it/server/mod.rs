//! The HTTP server itself: health, readiness and metrics, the error envelope, the console's
//! pages, what Unleash's web UI reads first, hardening, logging, the real binary's start and
//! shutdown, and replicas on one database.

mod console;
mod errors;
mod hardening;
mod logging;
mod monitoring;
mod replicas;
mod shutdown;
mod webui;
