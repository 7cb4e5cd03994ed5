//! The application assembled from its wings: [`Ctx`] holds the runtime and each wing's state,
//! and the first start's seeding.

pub mod edge;
pub mod migrate;
pub mod seeding;

use std::ops::Deref;

use flag_store::Store;

use crate::catalogue::{events, webhooks};
use crate::delivery::Delivery;
use crate::identity::Identity;
use crate::runtime::Runtime;
use crate::runtime::error::AdminError;
use crate::runtime::settings::Settings;

/// The whole application: one per process, held by every interface. It dereferences to the
/// [`Runtime`], which catalogue operations take; the identity and delivery operations take
/// their wing's state beside it.
#[derive(Debug)]
pub struct Ctx {
    runtime: Runtime,
    identity: Identity,
    delivery: Delivery,
}

impl Ctx {
    /// The application over `store` with these settings; fails only when no CPU-pool thread
    /// can start.
    pub fn new(store: Store, settings: Settings) -> Result<Self, rayon::ThreadPoolBuildError> {
        Ok(Self {
            identity: Identity::new(&settings),
            delivery: Delivery::new(&settings),
            runtime: Runtime::new(store, settings)?,
        })
    }

    /// The identity wing's state.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// The delivery wing's state.
    pub fn delivery(&self) -> &Delivery {
        &self.delivery
    }

    /// Starts delivering the audit log's new events to webhooks, on threads of their own.
    pub fn start_webhooks(&self) -> std::io::Result<webhooks::Webhooks> {
        webhooks::Webhooks::start(
            self.runtime.store.clone(),
            self.runtime.settings.webhook_urls.clone(),
            events::EventFormatter::new(&self.runtime.settings.unleash_url, events::Bold::Simple),
            self.runtime.settings.clock.clone(),
        )
    }

    /// Writes what SDKs reported and is still in memory.
    pub async fn flush_usage(&self) -> Result<flag_store::queries::client_metrics::Recorded, AdminError> {
        self.delivery
            .usage
            .flush(&self.runtime.store, self.runtime.now())
            .await
    }
}

impl Deref for Ctx {
    type Target = Runtime;

    fn deref(&self) -> &Runtime {
        &self.runtime
    }
}
