//! Unleash's client specification, one named test per file, plus the benchmark workload.
//!
//! The files are vendored in `tests/data/client-specification` (Unleash's official suite, 22
//! files and 279 cases) and `tests/data/workload`; set `HALYARD_CLIENT_SPEC_DIR` / `HALYARD_WORKLOAD_DIR` to run
//! other copies, such as the npm package `@unleash/client-specification`.

use std::path::PathBuf;

use crate::support::spec_suite::{expand_paths, run_file};
use crate::support::{spec_dir, workload_dir};

fn run(path: PathBuf) -> Result<usize, String> {
    let report = run_file(&path)?;
    if report.failures.is_empty() {
        Ok(report.passed)
    } else {
        Err(format!("{}:\n  {}", report.name, report.failures.join("\n  ")))
    }
}

macro_rules! spec_files {
    ($($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() -> Result<(), String> {
                let passed = run(spec_dir().join($file))?;
                assert!(passed > 0, "{} has no cases", $file);
                Ok(())
            }
        )*

        /// Every file the suite's index lists has a test above, so a new file cannot be skipped.
        #[test]
        fn every_indexed_file_is_covered() -> Result<(), String> {
            let listed = expand_paths(&[spec_dir()])?;
            let covered = [$($file),*];
            assert_eq!(listed.len(), covered.len());
            for file in listed {
                let name = file.file_name().and_then(|name| name.to_str()).unwrap_or_default();
                assert!(covered.contains(&name), "{name} is not covered");
            }
            Ok(())
        }
    };
}

spec_files! {
    simple_examples => "01-simple-examples.json",
    user_with_id_strategy => "02-user-with-id-strategy.json",
    gradual_rollout_user_id_strategy => "03-gradual-rollout-user-id-strategy.json",
    gradual_rollout_session_id_strategy => "04-gradual-rollout-session-id-strategy.json",
    gradual_rollout_random_strategy => "05-gradual-rollout-random-strategy.json",
    remote_address_strategy => "06-remote-address-strategy.json",
    multiple_strategies => "07-multiple-strategies.json",
    variants => "08-variants.json",
    strategy_constraints => "09-strategy-constraints.json",
    flexible_rollout_strategy => "10-flexible-rollout-strategy.json",
    strategy_constraints_edge_cases => "11-strategy-constraints-edge-cases.json",
    custom_stickiness => "12-custom-stickiness.json",
    constraint_operators => "13-constraint-operators.json",
    constraint_semver_operators => "14-constraint-semver-operators.json",
    global_constraints => "15-global-constraints.json",
    strategy_variants => "16-strategy-variants.json",
    dependent_features => "17-dependent-features.json",
    utf8_flag_names => "18-utf8-flag-names.json",
    delta_api_hydration => "19-delta-api-hydration.json",
    delta_api_events => "20-delta-api-events.json",
    regex_constraint_operators => "21-regex-constraint-operators.json",
    cidr_constraint_operators => "22-cidr-constraint-operators.json",
}

#[test]
fn whole_suite_has_279_cases() -> Result<(), String> {
    let mut total = 0;
    for file in expand_paths(&[spec_dir()])? {
        total += run(file)?;
    }
    assert_eq!(total, 279);
    Ok(())
}

#[test]
fn benchmark_workload_answers_match_yggdrasil_and_node() -> Result<(), String> {
    let workload = workload_dir();
    let micro = run(workload.join("micro.json"))?;
    let state = run(workload.join("state-1000.json"))?;
    assert_eq!(micro, 5);
    assert!(state >= 2000, "state-1000 has {state} cases");
    Ok(())
}
