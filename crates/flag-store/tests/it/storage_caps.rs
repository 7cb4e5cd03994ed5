//! Storage bounded under report floods: past its caps the store evicts the least recently seen
//! unknown flag names (per environment), applications and instances (in all), and says how
//! many went. The caps are passed in, small, so the tests write a few rows, not thousands.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DurationRound as _, NaiveDateTime, TimeDelta};
use flag_store::DbConnection;
use flag_store::models::ClientInstanceRow;
use flag_store::queries::client_metrics::{
    self, Batch, Evicted, STORED_APPLICATIONS, STORED_INSTANCES, STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT,
    SeenApplication, StorageCaps, UsageCount,
};

use crate::common::{TestDb, now};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Caps too large to bind, but for the one under test.
const WIDE: StorageCaps = StorageCaps {
    unknown_flags_per_environment: 1_000,
    applications: 1_000,
    instances: 1_000,
};

/// A time a few minutes ago, in whole seconds, to count seconds from.
fn start() -> Result<NaiveDateTime, Box<dyn std::error::Error>> {
    Ok((now() - TimeDelta::minutes(10)).duration_trunc(TimeDelta::seconds(1))?)
}

/// A count of a name no flag has, asked for by `web` in `environment` at `seen_at`.
fn unknown(name: &str, environment: &str, seen_at: NaiveDateTime) -> UsageCount {
    UsageCount {
        feature_name: name.into(),
        app_name: "web".into(),
        environment: environment.into(),
        hour: seen_at.duration_trunc(TimeDelta::hours(1)).unwrap_or(seen_at),
        projects: None,
        yes: 1,
        no: 0,
        variants: BTreeMap::new(),
        reported_at: seen_at,
    }
}

fn application(app_name: &str, seen_at: NaiveDateTime) -> SeenApplication {
    SeenApplication {
        app_name: app_name.into(),
        strategies: Vec::new(),
        seen_at,
    }
}

fn instance(
    app_name: &str,
    instance_id: &str,
    environment: &str,
    last_seen: NaiveDateTime,
) -> ClientInstanceRow {
    ClientInstanceRow {
        app_name: app_name.into(),
        instance_id: instance_id.into(),
        environment: environment.into(),
        sdk_version: None,
        sdk_type: "backend".into(),
        client_ip: None,
        projects: r#"["*"]"#.into(),
        started: None,
        interval_ms: None,
        created_at: last_seen,
        last_seen,
    }
}

/// The unknown names stored, as `(environment, name)`.
fn unknown_names(conn: &mut DbConnection) -> Result<BTreeSet<(String, String)>, flag_store::StoreError> {
    Ok(client_metrics::unknown(conn)?
        .into_iter()
        .map(|row| (row.environment, row.name))
        .collect())
}

fn application_names(conn: &mut DbConnection) -> Result<Vec<String>, flag_store::StoreError> {
    let (rows, _) = client_metrics::applications(conn, &[], 0, 1_000, false)?;
    Ok(rows.into_iter().map(|row| row.app_name).collect())
}

/// The instances stored, as `app/instance/environment`.
fn instance_keys(
    conn: &mut DbConnection,
    app_names: &[&str],
) -> Result<BTreeSet<String>, flag_store::StoreError> {
    let mut keys = BTreeSet::new();
    for app_name in app_names {
        for row in client_metrics::instances(conn, app_name, None, None)? {
            keys.insert(format!(
                "{}/{}/{}",
                row.app_name, row.instance_id, row.environment
            ));
        }
    }
    Ok(keys)
}

#[test]
fn storage_bounded_under_report_floods_unknown_flags_per_environment() -> TestResult {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    let start = start()?;
    let at = |seconds: i64| start + TimeDelta::seconds(seconds);
    let mut usage: Vec<UsageCount> = (0..5)
        .map(|n| unknown(&format!("dev-{n}"), "development", at(n)))
        .collect();
    usage.extend((0..2).map(|n| unknown(&format!("prod-{n}"), "production", at(n))));
    client_metrics::record(
        &mut conn,
        &Batch {
            usage,
            ..Batch::default()
        },
        at(5),
    )?;
    // Asked for again, the oldest name is the most recently seen: eviction goes by the last
    // time a name was asked for, not by the first.
    let again = vec![unknown("dev-0", "development", at(10))];
    client_metrics::record(
        &mut conn,
        &Batch {
            usage: again,
            ..Batch::default()
        },
        at(10),
    )?;

    let caps = StorageCaps {
        unknown_flags_per_environment: 3,
        ..WIDE
    };
    let evicted = client_metrics::evict(&mut conn, caps)?;
    assert_eq!(
        evicted,
        Evicted {
            unknown_flags: 2,
            ..Evicted::default()
        }
    );
    let kept: BTreeSet<(String, String)> = [
        ("development", "dev-0"),
        ("development", "dev-3"),
        ("development", "dev-4"),
        ("production", "prod-0"),
        ("production", "prod-1"),
    ]
    .into_iter()
    .map(|(environment, name)| (environment.to_owned(), name.to_owned()))
    .collect();
    assert_eq!(
        unknown_names(&mut conn)?,
        kept,
        "each environment keeps its own newest; production is under its cap"
    );
    assert_eq!(
        client_metrics::evict(&mut conn, caps)?,
        Evicted::default(),
        "within the caps nothing more goes"
    );
    Ok(())
}

#[test]
fn storage_bounded_under_report_floods_applications_and_instances_in_all() -> TestResult {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    let start = start()?;
    let at = |seconds: i64| start + TimeDelta::seconds(seconds);
    let apps: Vec<String> = (0..6).map(|n| format!("app-{n}")).collect();
    let mut applications: Vec<SeenApplication> = apps
        .iter()
        .zip(0..)
        .map(|(app, n)| application(app, at(n)))
        .collect();
    // Heard from again, the first application is the most recently seen.
    applications.push(application("app-0", at(10)));
    // Instances of two applications in two environments, the cap counts them all together.
    let mut instances = Vec::new();
    for n in 0..6 {
        let environment = if n % 2 == 0 { "development" } else { "production" };
        let app_name = if n < 3 { "app-0" } else { "app-5" };
        instances.push(instance(app_name, &format!("i-{n}"), environment, at(n)));
    }
    instances.push(instance("app-0", "i-0", "development", at(10)));
    client_metrics::record(
        &mut conn,
        &Batch {
            applications,
            instances,
            usage: Vec::new(),
        },
        at(10),
    )?;

    let caps = StorageCaps {
        applications: 3,
        instances: 4,
        ..WIDE
    };
    let evicted = client_metrics::evict(&mut conn, caps)?;
    assert_eq!(
        evicted,
        Evicted {
            unknown_flags: 0,
            applications: 3,
            instances: 2,
        }
    );
    assert_eq!(application_names(&mut conn)?, ["app-0", "app-4", "app-5"]);
    let kept: BTreeSet<String> = [
        "app-0/i-0/development",
        "app-5/i-3/production",
        "app-5/i-4/development",
        "app-5/i-5/production",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(instance_keys(&mut conn, &["app-0", "app-5"])?, kept);
    assert_eq!(client_metrics::evict(&mut conn, caps)?, Evicted::default());
    Ok(())
}

/// A flood arrives in reports of many rows with one time each (a metrics bucket's `stop`, a
/// flush's `now`): rows seen at the same time are still cut to exactly the cap.
#[test]
fn storage_bounded_under_report_floods_rows_seen_together_are_cut_to_the_cap() -> TestResult {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    let seen = start()?;
    let apps: Vec<String> = (0..10).map(|n| format!("app-{n}")).collect();
    let batch = Batch {
        applications: apps.iter().map(|app| application(app, seen)).collect(),
        instances: apps
            .iter()
            .map(|app| instance(app, "i-1", "development", seen))
            .collect(),
        usage: (0..10)
            .map(|n| unknown(&format!("made-up-{n}"), "development", seen))
            .collect(),
    };
    client_metrics::record(&mut conn, &batch, seen)?;
    let caps = StorageCaps {
        unknown_flags_per_environment: 4,
        applications: 4,
        instances: 4,
    };
    assert_eq!(
        client_metrics::evict(&mut conn, caps)?,
        Evicted {
            unknown_flags: 6,
            applications: 6,
            instances: 6,
        }
    );
    assert_eq!(unknown_names(&mut conn)?.len(), 4);
    assert_eq!(application_names(&mut conn)?.len(), 4);
    let app_names: Vec<&str> = apps.iter().map(String::as_str).collect();
    assert_eq!(instance_keys(&mut conn, &app_names)?.len(), 4);
    Ok(())
}

/// The caps the server runs with are the ones docs/DEPLOYMENT.md states.
#[test]
fn storage_bounded_under_report_floods_the_production_caps_are_documented() -> TestResult {
    assert_eq!(
        StorageCaps::default(),
        StorageCaps {
            unknown_flags_per_environment: STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT,
            applications: STORED_APPLICATIONS,
            instances: STORED_INSTANCES,
        }
    );
    let deployment =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/DEPLOYMENT.md"))?;
    for (what, cap) in [
        (
            "unknown flag names per environment",
            STORED_UNKNOWN_FLAGS_PER_ENVIRONMENT,
        ),
        ("applications", STORED_APPLICATIONS),
        ("instances", STORED_INSTANCES),
    ] {
        let row = format!("| {what} | {} |", thousands(cap));
        assert!(deployment.contains(&row), "docs/DEPLOYMENT.md has no row `{row}`");
    }
    Ok(())
}

/// `n` as the docs write numbers: `10,000`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
