//! What SDKs read and report: the client API and its cache, the delta API and streams, the
//! frontend API, OFREP, the playground, usage reports and their limits, Edge, and the official
//! SDKs against the real server.

mod client;
pub(crate) mod client_cache;
mod edge;
mod edge_mode;
pub(crate) mod frontend;
mod ofrep;
mod playground;
mod sdk_surface;
mod sdks;
mod streaming;
mod usage;
mod usage_caps;
