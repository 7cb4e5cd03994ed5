//! The crate's floor plan, as the code states it: each wing uses only the wings below it, and
//! `lib.rs` only declares and re-exports.

use std::path::{Path, PathBuf};

/// The wings from the bottom up: each may use those before it, never one after it.
const FLOORS: [&str; 5] = ["runtime", "identity", "catalogue", "delivery", "app"];

fn sources(directory: &Path, found: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(directory)? {
        let path = entry?.path();
        if path.is_dir() {
            sources(&path, found)?;
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
    Ok(())
}

/// The wings `text` names through `crate::`, in a path or a `use crate::{…}` group.
fn wings_named(text: &str) -> Vec<&'static str> {
    FLOORS
        .into_iter()
        .filter(|wing| {
            text.contains(&format!("crate::{wing}::"))
                || text.contains(&format!("crate::{wing};"))
                || text.split("crate::{").skip(1).any(|group| {
                    group
                        .split('}')
                        .next()
                        .is_some_and(|group| group.contains(&format!("{wing}::")))
                })
        })
        .collect()
}

#[test]
fn no_wing_uses_a_wing_above_it() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut upward = Vec::new();
    for (floor, wing) in FLOORS.into_iter().enumerate() {
        let mut files = Vec::new();
        sources(&root.join(wing), &mut files)?;
        assert!(!files.is_empty(), "src/{wing} holds no source file");
        for file in files {
            let text = std::fs::read_to_string(&file)?;
            for named in wings_named(&text) {
                let above = FLOORS
                    .iter()
                    .position(|other| *other == named)
                    .is_some_and(|at| at > floor);
                // `Ctx` is the app's: a wing below it must not name it either.
                if above {
                    upward.push(format!("{} uses {named}", file.display()));
                }
            }
            if floor < FLOORS.len() - 1
                && (text.contains("crate::Ctx") || text.contains(" Ctx,") || text.contains("&Ctx"))
            {
                upward.push(format!(
                    "{} uses Ctx, which the app assembles above the wings",
                    file.display()
                ));
            }
        }
    }
    assert!(upward.is_empty(), "wings reaching up:\n{}", upward.join("\n"));
    Ok(())
}

#[test]
fn the_crate_root_holds_the_wings_and_nothing_else() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut entries: Vec<String> = std::fs::read_dir(&root)?
        .map(|entry| entry.map(|entry| entry.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    let mut expected: Vec<String> = FLOORS.iter().map(|wing| (*wing).to_owned()).collect();
    expected.push("lib.rs".into());
    expected.sort();
    assert_eq!(entries, expected);
    let lib = std::fs::read_to_string(root.join("lib.rs"))?;
    assert!(
        lib.lines().count() < 60,
        "lib.rs has {} lines",
        lib.lines().count()
    );
    assert!(
        !lib.lines().any(
            |line| line.trim_start().starts_with("pub struct") || line.trim_start().starts_with("struct")
        ),
        "lib.rs declares a struct"
    );
    Ok(())
}

/// Operations read the time from their runtime's clock, which a test can set, never from the
/// system's: every write of the identity, catalogue and delivery wings is dated by it, and so is
/// every question about now. Their unit tests may read the system's.
#[test]
fn the_wings_read_the_time_from_the_runtimes_clock() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut system = Vec::new();
    for wing in ["identity", "catalogue", "delivery"] {
        let mut files = Vec::new();
        sources(&root.join(wing), &mut files)?;
        for file in files {
            let text = std::fs::read_to_string(&file)?;
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for call in ["crate::now()", "Utc::now()", "SystemTime::now()", "clock::now()"] {
                if code.contains(call) {
                    system.push(format!("{} calls {call}", file.display()));
                }
            }
        }
    }
    assert!(
        system.is_empty(),
        "read the runtime's clock instead:\n{}",
        system.join("\n")
    );
    Ok(())
}
