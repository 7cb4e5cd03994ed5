//! Bytes → a generated flag set and contexts → flag-eval and Yggdrasil must give the same
//! `is_enabled` and `variant` for every flag and context.
//!
//! The generator and the comparison live in `crates/differential`, shared with the proptest that
//! `./scripts/test` runs; see there for the Yggdrasil bugs the generator steers around.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(case) = differential::generate(&mut Unstructured::new(data)) else {
        return;
    };
    if let Err(failure) = differential::check(&case) {
        panic!("{failure}");
    }
});
