//! Every flag's answer for a list of contexts, as one JSON document: what the `evaluate`
//! example prints, to compare a client's answers with another SDK's or the playground's.

use serde_json::{Map, Value, json};

use crate::{Client, Error};

/// Answers every flag the client knows for each context of `input`
/// (`{"contexts": [{"context": {…an Unleash context…}}, …]}`), as
/// `{"flags": [names, sorted], "results": {flag: {"<context index>": {"enabled", "variant"}}}}`,
/// the variant as `{name, enabled, feature_enabled, payload?}`.
pub fn evaluate(client: &Client, input: &Value) -> Result<Value, Error> {
    let contexts = input["contexts"]
        .as_array()
        .ok_or_else(|| Error::Config("the input has no \"contexts\" list".into()))?;
    let contexts: Vec<flag_eval::Context> = contexts
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            entry["context"]
                .as_object()
                .map(flag_eval::context_from_json)
                .ok_or_else(|| Error::Config(format!("contexts[{index}] has no \"context\" object")))
        })
        .collect::<Result<_, _>>()?;
    let flags = client.flag_names();
    let mut results = Map::new();
    for flag in &flags {
        let mut answers = Map::new();
        for (index, context) in contexts.iter().enumerate() {
            let variant = client.variant(flag, context);
            answers.insert(
                index.to_string(),
                json!({"enabled": client.is_enabled(flag, context), "variant": variant}),
            );
        }
        results.insert(flag.clone(), Value::Object(answers));
    }
    Ok(json!({"flags": flags, "results": results}))
}
