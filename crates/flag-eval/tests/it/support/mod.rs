//! Helpers shared by the test modules: where the vendored test data lives, and the
//! client-specification runner.

use std::path::PathBuf;

pub mod spec_suite;

/// Unleash's client specification (22 files, 279 cases), vendored from the npm package
/// `@unleash/client-specification` 6.1.0; `HALYARD_CLIENT_SPEC_DIR` points the tests at another copy.
pub fn spec_dir() -> PathBuf {
    data_dir("HALYARD_CLIENT_SPEC_DIR", "client-specification")
}

/// The benchmark workload (`micro.json`, `state-1000.json`) that the benches time;
/// `HALYARD_WORKLOAD_DIR` points the tests at another copy.
pub fn workload_dir() -> PathBuf {
    data_dir("HALYARD_WORKLOAD_DIR", "workload")
}

/// The directory the environment variable names, or else the vendored one under `tests/data`, so
/// that a fresh clone needs nothing outside the repository.
fn data_dir(variable: &str, vendored: &str) -> PathBuf {
    std::env::var_os(variable).map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(vendored)
        },
        PathBuf::from,
    )
}
