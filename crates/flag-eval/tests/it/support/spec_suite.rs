//! Runs client-specification files: Unleash's cross-SDK conformance format
//! (`{name, state, tests, variantTests}`), as published in `@unleash/client-specification`.
//!
//! Shared by the `client_spec` example (the command-line runner) and the `client_spec` module of
//! the `it` test binary (`tests/it/client_spec.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use flag_eval::{CompileOptions, Engine, State, context_from_json};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecFile {
    #[serde(default)]
    name: String,
    state: State,
    #[serde(default)]
    tests: Vec<EnabledCase>,
    #[serde(default)]
    variant_tests: Vec<VariantCase>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EnabledCase {
    description: String,
    #[serde(default)]
    context: Map<String, Value>,
    toggle_name: String,
    expected_result: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VariantCase {
    description: String,
    #[serde(default)]
    context: Map<String, Value>,
    toggle_name: String,
    expected_result: ExpectedVariant,
}

#[derive(Deserialize)]
struct ExpectedVariant {
    name: String,
    #[serde(default)]
    payload: Option<Value>,
    enabled: bool,
    #[serde(default, alias = "featureEnabled")]
    feature_enabled: Option<bool>,
}

/// The outcome of one specification file.
#[derive(Debug)]
pub struct FileReport {
    /// The file's `name`, or its file name.
    pub name: String,
    /// Cases that gave the expected answer.
    pub passed: usize,
    /// One line per case that did not.
    pub failures: Vec<String>,
}

/// Expands the command-line paths: a directory means the files its `index.json` lists, or every
/// `.json` file in it when there is no index.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let index = path.join("index.json");
        if index.is_file() {
            let text = fs::read_to_string(&index).map_err(|error| format!("{}: {error}", index.display()))?;
            let names: Vec<String> =
                serde_json::from_str(&text).map_err(|error| format!("{}: {error}", index.display()))?;
            files.extend(names.iter().map(|name| path.join(name)));
        } else {
            let mut found: Vec<PathBuf> = fs::read_dir(path)
                .map_err(|error| format!("{}: {error}", path.display()))?
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|file| file.extension().is_some_and(|ext| ext == "json"))
                .collect();
            found.sort();
            files.extend(found);
        }
    }
    Ok(files)
}

/// Runs every case of one file. A context without `currentTime` is evaluated at the current
/// time, as an SDK would.
pub fn run_file(path: &Path) -> Result<FileReport, String> {
    let text = fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let spec: SpecFile =
        serde_json::from_str(&text).map_err(|error| format!("{}: {error}", path.display()))?;
    let (engine, _warnings) = Engine::compile_state(&spec.state, CompileOptions::default());
    let now = chrono::Utc::now();
    let context_for = |json: &Map<String, Value>| {
        let mut context = context_from_json(json);
        context.current_time = context.current_time.or_at(now);
        context
    };

    let mut report = FileReport {
        name: if spec.name.is_empty() {
            path.display().to_string()
        } else {
            spec.name.clone()
        },
        passed: 0,
        failures: Vec::new(),
    };
    for case in &spec.tests {
        let actual = engine.is_enabled(&case.toggle_name, &context_for(&case.context));
        if actual == case.expected_result {
            report.passed += 1;
        } else {
            report.failures.push(format!(
                "{}: expected {}, got {actual}",
                case.description, case.expected_result
            ));
        }
    }
    for case in &spec.variant_tests {
        let actual = engine.variant(&case.toggle_name, &context_for(&case.context));
        let expected = &case.expected_result;
        let actual_payload = actual
            .payload
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| e.to_string())?;
        let matches = actual.name == expected.name
            && actual.enabled == expected.enabled
            && expected
                .feature_enabled
                .is_none_or(|flag| flag == actual.feature_enabled)
            && actual_payload == expected.payload;
        if matches {
            report.passed += 1;
        } else {
            report.failures.push(format!(
                "{}: expected {} (enabled {}, feature_enabled {:?}, payload {:?}), got {} (enabled {}, \
                 feature_enabled {}, payload {:?})",
                case.description,
                expected.name,
                expected.enabled,
                expected.feature_enabled,
                expected.payload,
                actual.name,
                actual.enabled,
                actual.feature_enabled,
                actual_payload,
            ));
        }
    }
    Ok(report)
}
