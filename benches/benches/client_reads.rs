//! What a read through `flag-client` costs against the same evaluation by `flag-eval` directly,
//! side by side: the client adds one atomic load of the current flags and a usage counter.
//!
//! ```text
//! cargo bench -p benches --bench client_reads
//! ```
//!
//! Group `client`, ids `WORKLOAD/READER`: the micro workloads `default` and `constraints5`
//! (`is_enabled`) and `variants4` (`variant`; `flag-client` reads it with `with_variant`, and
//! `flag-client-owned` with `variant`, which copies it out), by `flag-eval` (`Engine`) and by `flag-client`
//! (`Client`, started from the same document as its bootstrap, counting usage, with a context
//! that carries everything the client would otherwise complete).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use flag_eval::{ClientFeatures, Engine};

fn micro() -> (ClientFeatures, flag_eval::Context) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/flag-eval/tests/data/workload/micro.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let spec: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}"));
    let document: ClientFeatures =
        serde_json::from_value(spec["state"].clone()).unwrap_or_else(|error| panic!("{error}"));
    let context = flag_eval::context_from_json(
        spec["tests"][0]["context"]
            .as_object()
            .unwrap_or(&serde_json::Map::new()),
    );
    (document, context)
}

fn reads(c: &mut Criterion) {
    let (document, context) = micro();
    let (engine, _) = Engine::compile(&document);
    // A server that cannot be reached: the client answers from its bootstrap document.
    let backup = std::env::temp_dir().join(format!("flag-client-bench-{}.json", std::process::id()));
    let client = flag_client::Client::builder("http://127.0.0.1:9/api", "*:development.bench")
        .app_name("bench")
        .bootstrap(document)
        .backup_path(&backup)
        .refresh_interval(Duration::from_secs(3600))
        .metrics_interval(Some(Duration::from_secs(3600)))
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(client.is_ready());
    let mut group = c.benchmark_group("client");
    for (id, flag, variant) in [
        ("default", "bench.default", false),
        ("constraints5", "bench.constraints5", false),
        ("variants4", "bench.variants4", true),
    ] {
        assert_eq!(
            engine.is_enabled(flag, &context),
            client.is_enabled(flag, &context),
            "{flag}"
        );
        if variant {
            group.bench_function(BenchmarkId::new(id, "flag-eval"), |b| {
                b.iter(|| black_box(engine.variant(black_box(flag), black_box(&context)).enabled));
            });
            group.bench_function(BenchmarkId::new(id, "flag-client"), |b| {
                b.iter(|| {
                    black_box(
                        client.with_variant(black_box(flag), black_box(&context), |variant| variant.enabled),
                    )
                });
            });
            group.bench_function(BenchmarkId::new(id, "flag-client-owned"), |b| {
                b.iter(|| black_box(client.variant(black_box(flag), black_box(&context)).enabled));
            });
        } else {
            group.bench_function(BenchmarkId::new(id, "flag-eval"), |b| {
                b.iter(|| black_box(engine.is_enabled(black_box(flag), black_box(&context))));
            });
            group.bench_function(BenchmarkId::new(id, "flag-client"), |b| {
                b.iter(|| black_box(client.is_enabled(black_box(flag), black_box(&context))));
            });
        }
    }
    group.finish();
    drop(client);
    let _ = std::fs::remove_file(&backup);
}

criterion_group!(benches, reads);
criterion_main!(benches);
