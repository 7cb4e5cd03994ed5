//! Runs Unleash client-specification files against flag-eval.
//!
//! ```text
//! cargo run --release -p flag-eval --example client_spec -- PATH...
//! ```
//!
//! A directory means the files its `index.json` lists. Prints one line per file with its
//! failures, then `N passed, M failed`; exits with 0 only when nothing failed.

use std::path::PathBuf;
use std::process::ExitCode;

#[path = "../tests/it/support/spec_suite.rs"]
mod spec_suite;

fn main() -> ExitCode {
    let paths: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        eprintln!("usage: client_spec PATH...  (files, or directories with an index.json)");
        return ExitCode::from(2);
    }
    let files = match spec_suite::expand_paths(&paths) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        match spec_suite::run_file(file) {
            Ok(report) => {
                passed += report.passed;
                failed += report.failures.len();
                let status = if report.failures.is_empty() {
                    "ok"
                } else {
                    "FAILED"
                };
                println!(
                    "{status} {} ({} passed, {} failed)",
                    report.name,
                    report.passed,
                    report.failures.len()
                );
                for failure in &report.failures {
                    println!("    {failure}");
                }
            }
            Err(error) => {
                failed += 1;
                println!("FAILED {error}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
