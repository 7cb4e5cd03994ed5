//! The usage pipeline against the backend under test (`HALYARD_TEST_DATABASE`): a flush saves
//! every row the database takes, whatever one row does, and every row expires.

use chrono::{DurationRound as _, TimeDelta};
use flag_admin::delivery::usage::{FlagCount, InstanceReport, Usage};
use flag_store::queries::client_metrics;
use flag_store::scratch::Scratch;

fn count(name: &str, yes: i64) -> FlagCount {
    FlagCount {
        feature_name: name.into(),
        yes,
        no: 0,
        variants: std::collections::BTreeMap::new(),
    }
}

#[tokio::test]
async fn issue_26_a_row_the_database_refuses_costs_only_itself() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = Scratch::new()?;
    let store = scratch.open()?;
    let usage = Usage::default();
    let now = flag_admin::now();
    // Past the checks every route applies (as if a route had none): a NUL, which PostgreSQL
    // refuses in text, among many good rows, in more rows than one write takes.
    let mut counts: Vec<FlagCount> = (0..Usage::ROWS_PER_WRITE + 20)
        .map(|n| count(&format!("flag-{n}"), 1))
        .collect();
    counts.push(count("bad\u{0}name", 1));
    usage.count("web", "development", None, now, counts);
    usage.instance(
        InstanceReport::new("web".into(), "i-1".into(), "development".into(), None, "backend"),
        now,
    )?;
    let recorded = usage.flush(&store, now).await?;
    // No flag exists, so every good name is an unknown flag; the bad one is saved where the
    // backend takes it and dropped, alone, where it does not.
    let unknown = client_metrics::unknown(&mut *store.connection()?)?;
    let names: std::collections::BTreeSet<&str> = unknown.iter().map(|row| row.name.as_str()).collect();
    for n in 0..Usage::ROWS_PER_WRITE + 20 {
        assert!(names.contains(format!("flag-{n}").as_str()), "flag-{n} was saved");
    }
    let saved_bad = names.contains("bad\u{0}name");
    assert_eq!(
        recorded.unknown,
        Usage::ROWS_PER_WRITE + 20 + usize::from(saved_bad)
    );
    assert_eq!(usage.dropped(), u64::from(!saved_bad));
    let (applications, _) = client_metrics::applications(&mut *store.connection()?, &[], 0, 10, false)?;
    assert_eq!(
        applications.len(),
        1,
        "the application of the same flush is saved"
    );
    Ok(())
}

#[tokio::test]
async fn issue_26_usage_expires_whatever_time_it_claims() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = Scratch::new()?;
    let store = scratch.open()?;
    let now = flag_admin::now();
    let hour = |offset: TimeDelta| (now + offset).duration_trunc(TimeDelta::hours(1)).unwrap_or(now);
    // Rows as they could have been stored before reports were checked: far ahead and far back.
    let batch = client_metrics::Batch {
        usage: [TimeDelta::days(3000), TimeDelta::zero(), TimeDelta::days(-3)]
            .into_iter()
            .enumerate()
            .map(|(index, offset)| client_metrics::UsageCount {
                feature_name: "f".into(),
                app_name: format!("web-{index}"),
                environment: "development".into(),
                hour: hour(offset),
                projects: None,
                yes: 1,
                no: 0,
                variants: std::collections::BTreeMap::new(),
                reported_at: hour(offset),
            })
            .collect(),
        ..client_metrics::Batch::default()
    };
    let mut conn = store.connection()?;
    client_metrics::record(&mut conn, &batch, now)?;
    client_metrics::prune(&mut conn, now)?;
    // The names no flag has are kept only while they are recent too.
    let unknown = client_metrics::unknown(&mut conn)?;
    let apps: Vec<&str> = unknown.iter().map(|row| row.app_name.as_str()).collect();
    assert_eq!(apps, ["web-1"], "only the row of this hour is left");
    Ok(())
}
