//! Criterion benchmarks comparing flag-eval with Yggdrasil; see `benches/versus_yggdrasil.rs`.
