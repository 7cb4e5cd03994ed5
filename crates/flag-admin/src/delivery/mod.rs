//! What SDKs get and give back: the client document, the delta API and streams, the frontend
//! API, OFREP, the playgrounds, the compiled engines they evaluate with, and the registrations
//! and usage SDKs report, with the views of them.
//!
//! [`Delivery`] is the state it owns: the compiled environments, the feeds SDKs follow and the
//! usage waiting to be written.

pub mod applications;
pub mod client;
pub mod delta;
pub mod engines;
pub mod frontend;
pub mod ofrep;
pub mod playground;
pub mod reports;
pub mod usage;

use std::sync::Arc;

use crate::runtime::settings::Settings;

/// What the delivery wing keeps in memory.
#[derive(Debug)]
pub struct Delivery {
    /// Compiled environments for the playground, the frontend API and OFREP.
    pub(crate) engines: Arc<engines::EngineCache>,
    /// Held while environments are read and compiled, so that requests missing the cache at
    /// once wait for one compilation instead of each making its own.
    pub(crate) compiling: tokio::sync::Mutex<()>,
    /// The questions SDKs follow through the delta API and streams, with their changes.
    pub(crate) feeds: delta::Feeds,
    /// What SDKs registered and reported, waiting to be written.
    pub(crate) usage: usage::Usage,
    /// The clock SDKs' reports are dated by.
    pub(crate) clock: crate::runtime::clock::Clock,
}

impl Delivery {
    /// The delivery wing's state, with the stream limits `settings` sets.
    pub fn new(settings: &Settings) -> Self {
        Self {
            engines: Arc::new(engines::EngineCache::new(engines::CAPACITY)),
            compiling: tokio::sync::Mutex::new(()),
            feeds: delta::Feeds::new(settings.streams, settings.streams_per_token),
            usage: usage::Usage::default(),
            clock: settings.clock.clone(),
        }
    }

    /// The usage pipeline.
    pub fn usage(&self) -> &usage::Usage {
        &self.usage
    }

    /// The questions SDKs follow, with their changes.
    pub fn feeds(&self) -> &delta::Feeds {
        &self.feeds
    }

    /// How many compiled environments are kept.
    pub fn compiled_environments(&self) -> usize {
        self.engines.len()
    }
}
