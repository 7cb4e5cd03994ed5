//! flag-eval and Yggdrasil agree on generated flag sets and contexts.
//!
//! Each proptest case is a byte string the shared generator turns into a document and contexts;
//! the cargo-fuzz target `differential` runs the same check for as long as it is given.

use arbitrary::Unstructured;
use proptest::collection::vec;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn flag_eval_and_yggdrasil_agree(bytes in vec(any::<u8>(), 64..2048)) {
        let case = differential::generate(&mut Unstructured::new(&bytes))
            .map_err(|error| TestCaseError::fail(format!("generator: {error}")))?;
        if let Err(failure) = differential::check(&case) {
            return Err(TestCaseError::fail(failure.to_string()));
        }
    }
}
