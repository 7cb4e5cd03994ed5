//! Every public operation of the crate is called from these tests: a module's `pub fn` or
//! `pub async fn` at its top level is named, with its module, by at least one test file.

use std::path::Path;

/// The files whose top-level public functions are operations or what interfaces call.
fn operation_files(root: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for wing in ["identity", "catalogue", "delivery"] {
        for entry in std::fs::read_dir(root.join(wing))? {
            let path = entry?.path();
            if path.extension().is_some_and(|extension| extension == "rs")
                && path.file_name().is_some_and(|name| name != "mod.rs")
            {
                files.push(path);
            }
        }
    }
    files.push(root.join("runtime/health.rs"));
    files.push(root.join("app/seeding.rs"));
    Ok(files)
}

/// The names of `text`'s top-level public functions.
fn public_functions(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| {
            line.strip_prefix("pub async fn ")
                .or_else(|| line.strip_prefix("pub fn "))
        })
        .filter_map(|rest| rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next())
        .collect()
}

/// Whether `text` calls `name` of `module`: by its path, or by its name in a file that names the
/// module.
fn calls(text: &str, module: &str, name: &str) -> bool {
    text.contains(&format!("{module}::{name}"))
        || (text.contains(module)
            && text.match_indices(&format!("{name}(")).any(|(at, _)| {
                !text[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|before| before.is_alphanumeric() || before == '_')
            }))
}

#[test]
fn every_public_operation_is_called_from_the_crates_own_tests() -> std::io::Result<()> {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut tests = Vec::new();
    for entry in std::fs::read_dir(crate_root.join("tests/it"))? {
        let path = entry?.path();
        if path.file_name().is_some_and(|name| name != "coverage.rs") {
            tests.push(std::fs::read_to_string(path)?);
        }
    }
    let mut uncalled = Vec::new();
    for file in operation_files(&crate_root.join("src"))? {
        let module = file
            .file_stem()
            .and_then(|stem| stem.to_str())
            .unwrap_or_default()
            .to_owned();
        let text = std::fs::read_to_string(&file)?;
        for name in public_functions(&text) {
            if !tests.iter().any(|test| calls(test, &module, name)) {
                uncalled.push(format!("{module}::{name}"));
            }
        }
    }
    assert!(uncalled.is_empty(), "operations no test calls: {uncalled:?}");
    Ok(())
}
