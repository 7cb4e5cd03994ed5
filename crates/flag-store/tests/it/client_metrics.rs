//! What SDKs report, written in batches: a batch merges with what is stored exactly as reports
//! one at a time would, across the statements a large batch is cut into.

use std::collections::BTreeMap;

use chrono::{DurationRound as _, TimeDelta};
use flag_store::models::ClientInstanceRow;
use flag_store::queries::client_metrics::{self, Batch, SeenApplication, UsageCount};

use crate::common::{TestDb, feature, now};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// More rows of each kind than one statement takes.
const ROWS: usize = 1_201;

fn instance(
    app_name: &str,
    sdk_version: Option<&str>,
    last_seen: chrono::NaiveDateTime,
) -> ClientInstanceRow {
    ClientInstanceRow {
        app_name: app_name.into(),
        instance_id: "i-1".into(),
        environment: "development".into(),
        sdk_version: sdk_version.map(str::to_owned),
        sdk_type: "backend".into(),
        client_ip: None,
        projects: r#"["*"]"#.into(),
        started: None,
        interval_ms: Some(15_000),
        created_at: last_seen,
        last_seen,
    }
}

fn usage(
    feature_name: &str,
    app_name: &str,
    hour: chrono::NaiveDateTime,
    yes: i64,
    variant: &str,
) -> UsageCount {
    UsageCount {
        feature_name: feature_name.into(),
        app_name: app_name.into(),
        environment: "development".into(),
        hour,
        projects: None,
        yes,
        no: 1,
        variants: BTreeMap::from([(variant.to_owned(), yes)]),
        reported_at: hour,
    }
}

#[test]
fn batches_merge_with_what_is_stored() -> TestResult {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    feature(&mut conn, "known")?;
    let start = now().duration_trunc(TimeDelta::seconds(1))?;
    let hour = start.duration_trunc(TimeDelta::hours(1))?;
    let later = start + TimeDelta::seconds(10);
    let apps: Vec<String> = (0..ROWS).map(|n| format!("app-{n:04}")).collect();

    let first = Batch {
        applications: apps
            .iter()
            .map(|app| SeenApplication {
                app_name: app.clone(),
                strategies: Vec::new(),
                seen_at: start,
            })
            .collect(),
        instances: apps
            .iter()
            .map(|app| instance(app, Some("unleash-node:6.1.0"), later))
            .collect(),
        usage: apps
            .iter()
            .flat_map(|app| {
                [
                    usage("known", app, hour, 2, "blue"),
                    usage(&format!("missing-{app}"), app, later, 1, "x"),
                ]
            })
            .collect(),
    };
    let recorded = client_metrics::record(&mut conn, &first, start)?;
    assert_eq!((recorded.counted, recorded.unknown), (ROWS, ROWS));

    // The same keys again, and twice within the batch: strategies first named now are kept,
    // a report without an SDK version keeps the stored one, `last_seen` never goes back, counts
    // add up, and an unknown name keeps the latest time it was asked for.
    let second = Batch {
        applications: apps
            .iter()
            .flat_map(|app| {
                [
                    SeenApplication {
                        app_name: app.clone(),
                        strategies: vec!["default".into()],
                        seen_at: later,
                    },
                    SeenApplication {
                        app_name: app.clone(),
                        strategies: vec!["flexibleRollout".into()],
                        seen_at: later,
                    },
                ]
            })
            .collect(),
        instances: apps.iter().map(|app| instance(app, None, start)).collect(),
        usage: apps
            .iter()
            .flat_map(|app| {
                [
                    usage("known", app, hour, 3, "green"),
                    usage(&format!("missing-{app}"), app, start, 1, "x"),
                ]
            })
            .collect(),
    };
    client_metrics::record(&mut conn, &second, later)?;

    for app in [&apps[0], &apps[ROWS / 2], &apps[ROWS - 1]] {
        let stored = client_metrics::application(&mut conn, app)?.ok_or("the application was saved")?;
        assert_eq!(stored.strategies()?, ["default"], "{app}");
        assert_eq!((stored.created_at, stored.seen_at), (start, later), "{app}");
        let instances = client_metrics::instances(&mut conn, app, None, None)?;
        assert_eq!(instances.len(), 1, "{app}");
        assert_eq!(
            instances[0].sdk_version.as_deref(),
            Some("unleash-node:6.1.0"),
            "{app}"
        );
        assert_eq!(instances[0].last_seen, later, "{app}");
        let rows = client_metrics::usage_of_application(&mut conn, app, hour)?;
        assert_eq!(rows.len(), 1, "{app}: {rows:?}");
        assert_eq!((rows[0].yes, rows[0].no), (5, 2), "{app}");
        assert_eq!(
            rows[0].variants()?,
            BTreeMap::from([("blue".to_owned(), 2), ("green".to_owned(), 3)])
        );
    }
    let (listed, total) = client_metrics::applications(&mut conn, &[], 0, 1, false)?;
    assert_eq!((listed.len(), total), (1, ROWS as i64));
    let unknown = client_metrics::unknown(&mut conn)?;
    assert_eq!(unknown.len(), 1_000, "at most 1,000 names are listed");
    assert!(
        unknown.iter().all(|row| row.seen_at == later),
        "{:?}",
        unknown.first()
    );
    Ok(())
}
