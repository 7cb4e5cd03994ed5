//! flag-eval's integration tests, in one binary so that the crate and its dependencies are linked
//! once instead of once per test file.
//!
//! The binary installs the counting allocator of `allocations`; it counts per thread, so the
//! tests of the other modules, which run on other threads, never disturb its assertions.

mod allocations;
mod client_spec;
mod explain;
mod properties;
mod support;
