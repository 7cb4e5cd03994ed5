//! REGEX constraint patterns and inputs: compiling any pattern either succeeds within the size
//! limit or yields a warning, and matching never panics.
#![no_main]

use flag_eval::{ClientFeatures, Context, Engine};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, input) = text.split_once('\n').unwrap_or((&text, "input"));
    for case_insensitive in [false, true] {
        let document: ClientFeatures = serde_json::from_value(json!({
            "version": 2,
            "features": [{"name": "r", "enabled": true, "strategies": [{"name": "default", "constraints": [
                {"contextName": "userId", "operator": "REGEX", "value": pattern, "caseInsensitive": case_insensitive}
            ]}]}]
        }))
        .expect("the document is well formed");
        let (engine, warnings) = Engine::compile(&document);
        let enabled = engine.is_enabled("r", &Context::for_user(input));
        if !warnings.is_empty() {
            assert!(!enabled, "a pattern that did not compile matched");
        }
    }
});
