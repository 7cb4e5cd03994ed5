//! Documents and contexts → compile, evaluate, explain.
//!
//! The input is a client-features document and a context, as JSON, separated by a NUL byte.
//! Properties checked: nothing panics; a document survives serialise-then-parse unchanged and
//! compiles to the same answers; a complete explanation agrees with `is_enabled` and `variant`.
#![no_main]

use flag_eval::{ClientFeatures, Engine, context_from_json};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |byte| *byte == 0);
    let document = parts.next().unwrap_or_default();
    let context = parts.next().unwrap_or_default();
    let Ok(document) = serde_json::from_slice::<ClientFeatures>(document) else {
        return;
    };
    let context = serde_json::from_slice::<Map<String, Value>>(context).unwrap_or_default();
    let seed = data.len() as u64;

    let (engine, _warnings) = Engine::compile(&document);
    let text = serde_json::to_string(&document).expect("a parsed document serialises");
    let reparsed: ClientFeatures = serde_json::from_str(&text).expect("a serialised document parses");
    assert_eq!(reparsed, document, "serialise then parse changed the document");
    let (again, _) = Engine::compile(&reparsed);

    for feature in &document.features {
        let name = feature.name.as_str();
        let fresh = || context_from_json(&context).with_random_seed(seed);
        let enabled = engine.is_enabled(name, &fresh());
        assert_eq!(enabled, again.is_enabled(name, &fresh()));
        let variant = engine.variant(name, &fresh());
        let explanation = engine.explain(name, &fresh()).expect("the flag exists");
        serde_json::to_string(&explanation).expect("an explanation serialises");
        // Duplicate names: the last definition wins in the engine, so only unique names compare.
        let unique = document.features.iter().filter(|other| other.name == feature.name).count() == 1;
        if unique && explanation.is_complete() {
            assert_eq!(explanation.is_enabled, enabled, "{name}");
            assert_eq!(explanation.variant.name(), variant.name, "{name}");
        }
    }
});
