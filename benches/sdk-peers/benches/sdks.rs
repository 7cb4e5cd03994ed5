//! Reads through the Rust SDKs and their engines, side by side in one criterion run: `flag-eval`
//! and `flag-client` against Yggdrasil (`unleash-yggdrasil`, the version `unleash-api-client`
//! is built on) and `unleash-api-client`, the official Rust SDK a Rust user would pick today.
//!
//! ```text
//! scripts/sdk-bench
//! ```
//!
//! Group `sdks`, ids `WORKLOAD/READER`, on the micro workloads: `default`, `flexible50`,
//! `constraints5` and `segments2` time `is_enabled` (`is_enabled_str` for `unleash-api-client`),
//! `variants4` times the variant (`with_variant` for `flag-client`, `get_variant_str` for
//! `unleash-api-client`). Every reader gets the same flags and the same context, and all must
//! agree before any is timed. Both clients are offline: `flag-client` starts from the document as
//! its bootstrap, and `unleash-api-client` has it memoized through a transport that never
//! connects.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::Value;
use unleash_api_client::client::{Client as UnleashClient, ClientBuilder, FeatureKey};
use unleash_api_client::http::{Request, Response, Transport};

/// `unleash-api-client` keys flags by an enum; this bench reads them by name only.
#[derive(Debug, Clone, Copy, FeatureKey)]
enum NoKeys {
    _Unused,
}

/// A transport that never connects: the flags are memoized by the bench.
struct Offline;

#[async_trait::async_trait]
impl Transport for Offline {
    async fn execute(&self, _request: Request) -> Result<Response, anyhow::Error> {
        anyhow::bail!("offline")
    }
}

const MICRO: [(&str, &str, bool); 5] = [
    ("default", "bench.default", false),
    ("flexible50", "bench.flexible50", false),
    ("constraints5", "bench.constraints5", false),
    ("segments2", "bench.segments2", false),
    ("variants4", "bench.variants4", true),
];

fn micro() -> Value {
    let path = std::env::var_os("HALYARD_WORKLOAD_DIR")
        .map_or_else(
            || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../crates/flag-eval/tests/data/workload"),
            PathBuf::from,
        )
        .join("micro.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn sdks(c: &mut Criterion) {
    let spec = micro();
    let state = spec["state"].clone();
    let context_json = spec["tests"][0]["context"].clone();

    let document: flag_eval::ClientFeatures =
        serde_json::from_value(state.clone()).unwrap_or_else(|error| panic!("{error}"));
    let (engine, warnings) = flag_eval::Engine::compile(&document);
    assert!(warnings.is_empty(), "{warnings:?}");
    let context = flag_eval::context_from_json(context_json.as_object().unwrap_or(&serde_json::Map::new()));

    let backup = std::env::temp_dir().join(format!("sdk-peers-{}.json", std::process::id()));
    let client = flag_client::Client::builder("http://127.0.0.1:9/api", "*:development.bench")
        .app_name("bench")
        .bootstrap(document)
        .backup_path(&backup)
        .refresh_interval(Duration::from_secs(3600))
        .metrics_interval(Some(Duration::from_secs(3600)))
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(client.is_ready());

    let yggdrasil = unleash_yggdrasil::EngineState::default();
    // The document type is the one `unleash-types` version of this engine, inferred.
    let features = serde_json::from_value(state.clone()).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        yggdrasil
            .take_state(unleash_yggdrasil::UpdateMessage::FullResponse(features))
            .is_none()
    );
    let yggdrasil_context: unleash_yggdrasil::Context =
        serde_json::from_value(context_json.clone()).unwrap_or_else(|error| panic!("{error}"));

    let unleash: UnleashClient<NoKeys> = ClientBuilder::default()
        .enable_string_features()
        .disable_metric_submission()
        .into_client_with_transport("http://127.0.0.1:9", "bench", "bench-1", None, Arc::new(Offline))
        .unwrap_or_else(|error| panic!("{error}"));
    unleash
        .memoize(serde_json::from_value(state).unwrap_or_else(|error| panic!("{error}")))
        .unwrap_or_else(|error| panic!("{error}"));
    let unleash_context: unleash_api_client::Context =
        serde_json::from_value(context_json).unwrap_or_else(|error| panic!("{error}"));

    let mut group = c.benchmark_group("sdks");
    for (id, flag, variant) in MICRO {
        // Every reader must give the same answer before its speed means anything.
        let ours = engine.variant(flag, &context);
        assert_eq!(client.variant(flag, &context).name, ours.name, "{flag}");
        assert_eq!(
            yggdrasil.get_variant(flag, &yggdrasil_context, &None).name,
            ours.name,
            "{flag}"
        );
        assert_eq!(
            unleash.get_variant_str(flag, &unleash_context).name,
            ours.name,
            "{flag}"
        );
        let enabled = engine.is_enabled(flag, &context);
        assert_eq!(client.is_enabled(flag, &context), enabled, "{flag}");
        assert_eq!(
            yggdrasil.is_enabled(flag, &yggdrasil_context, &None),
            enabled,
            "{flag}"
        );
        assert_eq!(
            unleash.is_enabled_str(flag, Some(&unleash_context), !enabled),
            enabled,
            "{flag}"
        );

        if variant {
            group.bench_function(BenchmarkId::new(id, "flag-eval"), |b| {
                b.iter(|| black_box(engine.variant(black_box(flag), black_box(&context)).enabled));
            });
            group.bench_function(BenchmarkId::new(id, "flag-client"), |b| {
                b.iter(|| {
                    black_box(client.with_variant(black_box(flag), black_box(&context), |v| v.enabled))
                });
            });
            group.bench_function(BenchmarkId::new(id, "yggdrasil"), |b| {
                b.iter(|| {
                    black_box(
                        yggdrasil
                            .get_variant(black_box(flag), black_box(&yggdrasil_context), &None)
                            .enabled,
                    )
                });
            });
            group.bench_function(BenchmarkId::new(id, "unleash-api-client"), |b| {
                b.iter(|| {
                    black_box(
                        unleash
                            .get_variant_str(black_box(flag), black_box(&unleash_context))
                            .enabled,
                    )
                });
            });
        } else {
            group.bench_function(BenchmarkId::new(id, "flag-eval"), |b| {
                b.iter(|| black_box(engine.is_enabled(black_box(flag), black_box(&context))));
            });
            group.bench_function(BenchmarkId::new(id, "flag-client"), |b| {
                b.iter(|| black_box(client.is_enabled(black_box(flag), black_box(&context))));
            });
            group.bench_function(BenchmarkId::new(id, "yggdrasil"), |b| {
                b.iter(|| {
                    black_box(yggdrasil.is_enabled(black_box(flag), black_box(&yggdrasil_context), &None))
                });
            });
            group.bench_function(BenchmarkId::new(id, "unleash-api-client"), |b| {
                b.iter(|| {
                    black_box(unleash.is_enabled_str(
                        black_box(flag),
                        Some(black_box(&unleash_context)),
                        false,
                    ))
                });
            });
        }
    }
    group.finish();
    drop(client);
    let _ = std::fs::remove_file(&backup);
}

criterion_group!(benches, sdks);
criterion_main!(benches);
