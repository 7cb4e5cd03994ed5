//! flag-eval and Yggdrasil (`unleash-yggdrasil`, Unleash's Rust engine) side by side on the
//! benchmark workload.
//!
//! ```text
//! cargo bench -p benches --bench versus_yggdrasil
//! ```
//!
//! Group `versus`, ids `WORKLOAD/ENGINE`: `default`, `flexible50`, `constraints5`, `segments2`
//! (`is_enabled`) and `variants4` (`variant`) from micro.json; `all1000` (`is_enabled` for each of
//! the 1,000 flags of state-1000.json, one iteration covering all of them) and `compile1000`
//! (compiling that state from its parsed document).
//! The workload is the copy vendored in `crates/flag-eval/tests/data/workload`, whose expected
//! answers flag-eval's tests check; set `HALYARD_WORKLOAD_DIR` to read another copy.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Map, Value};

const FLAG_EVAL: &str = "flag-eval";
const YGGDRASIL: &str = "yggdrasil";

/// The micro workloads: benchmark id, flag name, and whether to time `variant`.
const MICRO: [(&str, &str, bool); 5] = [
    ("default", "bench.default", false),
    ("flexible50", "bench.flexible50", false),
    ("constraints5", "bench.constraints5", false),
    ("segments2", "bench.segments2", false),
    ("variants4", "bench.variants4", true),
];

struct Workload {
    state: Value,
    context: Map<String, Value>,
    flags: Vec<String>,
}

fn load(file: &str) -> Workload {
    let dir = std::env::var_os("HALYARD_WORKLOAD_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../crates/flag-eval/tests/data/workload"),
        PathBuf::from,
    );
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let spec: Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let context = spec["tests"][0]["context"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let flags = spec["state"]["features"]
        .as_array()
        .map(|features| {
            features
                .iter()
                .filter_map(|feature| feature["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    Workload {
        state: spec["state"].clone(),
        context,
        flags,
    }
}

struct Engines {
    ours: flag_eval::Engine,
    our_context: flag_eval::Context,
    theirs: unleash_yggdrasil::EngineState,
    their_context: unleash_yggdrasil::Context,
}

fn build_engines(workload: &Workload) -> Engines {
    let document: flag_eval::ClientFeatures = serde_json::from_value(workload.state.clone())
        .unwrap_or_else(|error| panic!("flag-eval state: {error}"));
    let (ours, warnings) = flag_eval::Engine::compile(&document);
    assert!(warnings.is_empty(), "{warnings:?}");

    let theirs = unleash_yggdrasil::EngineState::initial_state(chrono::Utc::now());
    let features: unleash_yggdrasil::ClientFeatures = serde_json::from_value(workload.state.clone())
        .unwrap_or_else(|error| panic!("yggdrasil state: {error}"));
    let warnings = theirs.take_state(unleash_yggdrasil::UpdateMessage::FullResponse(features));
    assert!(warnings.is_none(), "{warnings:?}");

    let their_context = serde_json::from_value(Value::Object(workload.context.clone()))
        .unwrap_or_else(|error| panic!("yggdrasil context: {error}"));
    Engines {
        ours,
        our_context: flag_eval::context_from_json(&workload.context),
        theirs,
        their_context,
    }
}

fn versus(c: &mut Criterion) {
    let mut group = c.benchmark_group("versus");

    let micro = load("micro.json");
    let engines = build_engines(&micro);
    for (id, flag, time_variant) in MICRO {
        // Both engines must agree before their speed means anything.
        let ours = engines.ours.variant(flag, &engines.our_context);
        let theirs = engines.theirs.get_variant(flag, &engines.their_context, &None);
        assert_eq!(ours.name, theirs.name, "{flag}");
        assert_eq!(ours.feature_enabled, theirs.feature_enabled, "{flag}");

        if time_variant {
            group.bench_function(BenchmarkId::new(id, FLAG_EVAL), |b| {
                b.iter(|| {
                    engines
                        .ours
                        .variant(black_box(flag), black_box(&engines.our_context))
                        .enabled
                });
            });
            group.bench_function(BenchmarkId::new(id, YGGDRASIL), |b| {
                b.iter(|| {
                    engines
                        .theirs
                        .get_variant(black_box(flag), black_box(&engines.their_context), &None)
                        .enabled
                });
            });
        } else {
            group.bench_function(BenchmarkId::new(id, FLAG_EVAL), |b| {
                b.iter(|| {
                    engines
                        .ours
                        .is_enabled(black_box(flag), black_box(&engines.our_context))
                });
            });
            group.bench_function(BenchmarkId::new(id, YGGDRASIL), |b| {
                b.iter(|| {
                    engines
                        .theirs
                        .is_enabled(black_box(flag), black_box(&engines.their_context), &None)
                });
            });
        }
    }

    let state = load("state-1000.json");
    let engines = build_engines(&state);
    let flags = &state.flags;
    let ours_on = flags
        .iter()
        .filter(|flag| engines.ours.is_enabled(flag, &engines.our_context))
        .count();
    let theirs_on = flags
        .iter()
        .filter(|flag| engines.theirs.is_enabled(flag, &engines.their_context, &None))
        .count();
    assert_eq!(ours_on, theirs_on);

    group.throughput(Throughput::Elements(flags.len() as u64));
    group.bench_function(BenchmarkId::new("all1000", FLAG_EVAL), |b| {
        b.iter(|| {
            flags
                .iter()
                .filter(|flag| {
                    engines
                        .ours
                        .is_enabled(black_box(flag), black_box(&engines.our_context))
                })
                .count()
        });
    });
    group.bench_function(BenchmarkId::new("all1000", YGGDRASIL), |b| {
        b.iter(|| {
            flags
                .iter()
                .filter(|flag| {
                    engines
                        .theirs
                        .is_enabled(black_box(flag), black_box(&engines.their_context), &None)
                })
                .count()
        });
    });

    let our_document: flag_eval::ClientFeatures =
        serde_json::from_value(state.state.clone()).unwrap_or_else(|error| panic!("{error}"));
    let their_document: unleash_yggdrasil::ClientFeatures =
        serde_json::from_value(state.state.clone()).unwrap_or_else(|error| panic!("{error}"));
    group.throughput(Throughput::Elements(1));
    group.sample_size(20);
    group.bench_function(BenchmarkId::new("compile1000", FLAG_EVAL), |b| {
        b.iter(|| flag_eval::Engine::compile(black_box(&our_document)).0.len());
    });
    group.bench_function(BenchmarkId::new("compile1000", YGGDRASIL), |b| {
        b.iter(|| {
            unleash_yggdrasil::compile_state(black_box(&their_document))
                .0
                .len()
        });
    });
    group.finish();
}

criterion_group!(benches, versus);
criterion_main!(benches);
