//! Proves the hot path allocates nothing: a counting global allocator wraps the system one, and
//! after a warm-up (which fills the regex engine's per-thread cache) every `is_enabled` and
//! `variant` call on the benchmark workload must leave the count unchanged.
//!
//! The allocator serves the whole `it` binary, whose other tests run at the same time on other
//! threads. It counts per thread, and each test here measures only work on its own thread with an
//! engine of its own, so those tests can neither add to a count nor hide an allocation;
//! `allocations_on_other_threads_are_not_counted` checks that this holds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use flag_eval::{ClientFeatures, Context, Engine, context_from_json};
use serde_json::Value;

use crate::support::workload_dir;

struct CountingAllocator;

thread_local! {
    /// Allocations made by this thread; other test threads do not disturb the count.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

#[expect(
    unsafe_code,
    reason = "a global allocator can only be installed through an unsafe impl"
)]
// SAFETY: every call is forwarded unchanged to the system allocator; the count is a side effect.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|count| count.set(count.get() + 1));
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations_during(work: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    work();
    ALLOCATIONS.with(Cell::get) - before
}

fn load(file: &str) -> Result<(Engine, Context, Vec<String>), Box<dyn std::error::Error>> {
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(workload_dir().join(file))?)?;
    let document: ClientFeatures = serde_json::from_value(spec["state"].clone())?;
    let (engine, warnings) = Engine::compile(&document);
    assert!(warnings.is_empty(), "{warnings:?}");
    let context = context_from_json(spec["tests"][0]["context"].as_object().ok_or("no context")?);
    let names = document
        .features
        .iter()
        .map(|feature| feature.name.clone())
        .collect();
    Ok((engine, context, names))
}

fn assert_no_allocations(engine: &Engine, context: &Context, names: &[String]) {
    for name in names {
        // Warm-up: the first regex search on a thread fills a cache that later searches reuse.
        std::hint::black_box(engine.is_enabled(name, context));
        std::hint::black_box(engine.variant(name, context));
    }
    for name in names {
        let enabled = allocations_during(|| {
            for _ in 0..100 {
                std::hint::black_box(engine.is_enabled(std::hint::black_box(name), context));
            }
        });
        assert_eq!(enabled, 0, "is_enabled({name}) allocated");
        let variant = allocations_during(|| {
            for _ in 0..100 {
                std::hint::black_box(engine.variant(std::hint::black_box(name), context));
            }
        });
        assert_eq!(variant, 0, "variant({name}) allocated");
    }
}

#[test]
fn counter_sees_allocations() {
    let counted = allocations_during(|| {
        std::hint::black_box(vec![1u8; 64]);
    });
    assert!(counted >= 1, "the counting allocator is not installed");
}

/// The property that lets this module share a binary with tests that allocate freely.
#[test]
fn allocations_on_other_threads_are_not_counted() -> Result<(), Box<dyn std::error::Error>> {
    let start = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        // Spawned before the measurement, since spawning a thread allocates on the spawning one.
        let other = scope.spawn(|| {
            while !start.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            let counted = allocations_during(|| {
                for _ in 0..100 {
                    std::hint::black_box(vec![1u8; 64]);
                }
            });
            done.store(true, Ordering::Release);
            counted
        });
        let here = allocations_during(|| {
            start.store(true, Ordering::Release);
            while !done.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
        });
        let there = other.join().map_err(|_| "the allocating thread panicked")?;
        assert!(there >= 100, "the other thread counted {there} allocations");
        assert_eq!(here, 0, "another thread's allocations were counted here");
        Ok(())
    })
}

#[test]
fn micro_workload_evaluates_without_allocating() -> Result<(), Box<dyn std::error::Error>> {
    let (engine, context, names) = load("micro.json")?;
    assert_eq!(names.len(), 5);
    assert_no_allocations(&engine, &context, &names);
    Ok(())
}

#[test]
fn every_flag_of_the_large_state_evaluates_without_allocating() -> Result<(), Box<dyn std::error::Error>> {
    let (engine, context, names) = load("state-1000.json")?;
    assert_eq!(names.len(), 1000);
    assert_no_allocations(&engine, &context, &names);
    Ok(())
}

#[test]
fn case_insensitive_and_regex_constraints_do_not_allocate() -> Result<(), Box<dyn std::error::Error>> {
    let document: ClientFeatures = serde_json::from_str(
        r#"{"version":2,"features":[{"name":"ci","enabled":true,"strategies":[{"name":"default",
        "constraints":[
          {"contextName":"userId","operator":"IN","caseInsensitive":true,
           "values":["a","b","c","d","e","f","g","h","i","User-7"]},
          {"contextName":"userId","operator":"STR_CONTAINS","caseInsensitive":true,"values":["ER-"]},
          {"contextName":"userId","operator":"STR_ENDS_WITH","caseInsensitive":true,"values":["-7"]},
          {"contextName":"userId","operator":"REGEX","caseInsensitive":true,"value":"^user-\\d$"},
          {"contextName":"remoteAddress","operator":"IN_CIDR","values":["10.0.0.0/8"]}
        ]}],"variants":[{"name":"v","weight":1000,"stickiness":"default"}]}]}"#,
    )?;
    let (engine, _) = Engine::compile(&document);
    let mut context = Context::for_user("User-7");
    context.remote_address = Some("10.1.2.3".into());
    assert!(engine.is_enabled("ci", &context));
    assert_no_allocations(&engine, &context, &["ci".to_owned()]);
    Ok(())
}
