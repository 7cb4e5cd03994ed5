//! Crash safety: a writer killed with SIGKILL at a random moment loses no reported write, leaves
//! no half-written variants-batch, and leaves a database that passes `PRAGMA integrity_check`
//! (on SQLite; PostgreSQL's server outlives the writer and rolls its open transaction back).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use diesel::prelude::*;
use diesel::sql_types::Text;
use flag_eval::Variant;
use flag_store::queries::variants::set_variants_batch;
use flag_store::{Backend, Database, Store, StoreConfig, StoreError, queries};

use crate::common;

/// The database the child writes to: a file path or a PostgreSQL URL.
const CHILD_ENV: &str = "HALYARD_CRASH_WRITER_DB";
/// The PostgreSQL schema the child writes in, when there is one.
const CHILD_SCHEMA_ENV: &str = "HALYARD_CRASH_WRITER_SCHEMA";

/// The child's environment for `database`.
fn child_environment(database: &Database) -> Vec<(&'static str, String)> {
    match database {
        Database::Sqlite(path) => vec![(CHILD_ENV, path.display().to_string())],
        Database::Postgres(postgres) => {
            let mut variables = vec![(CHILD_ENV, postgres.connection.expose().to_owned())];
            variables.extend(postgres.schema.clone().map(|schema| (CHILD_SCHEMA_ENV, schema)));
            variables
        }
    }
}

/// The database the parent named in the child's environment.
fn child_database(location: &str) -> Result<Database, Box<dyn std::error::Error>> {
    let mut database = Database::from_url(location)?;
    if let Database::Postgres(postgres) = &mut database {
        postgres.schema = std::env::var(CHILD_SCHEMA_ENV).ok();
    }
    Ok(database)
}
const ENVIRONMENTS: [&str; 2] = ["development", "production"];

fn payload(write: u64) -> Vec<Variant> {
    vec![Variant {
        name: format!("write-{write:08}"),
        weight: 1000,
        ..Variant::default()
    }]
}

/// Writes batches forever (as the child) or `limit` of them, reporting each commit on stdout.
fn write_batches(database: &Database, limit: Option<u64>) -> Result<u64, StoreError> {
    let store = Store::open(&StoreConfig::new(database.clone()))?;
    let mut conn = store.connection()?;
    let environments: Vec<String> = ENVIRONMENTS.iter().map(|name| (*name).to_owned()).collect();
    let mut stdout = std::io::stdout().lock();
    let mut write = 0;
    while limit.is_none_or(|limit| write < limit) {
        set_variants_batch(
            &mut conn,
            "default",
            "crashy",
            &environments,
            &payload(write),
            &flag_store::models::Actor::system(),
            common::now(),
        )?;
        // Reported only once the transaction has committed.
        writeln!(stdout, "committed {write}")
            .and_then(|()| stdout.flush())
            .map_err(|e| StoreError::Migration(e.to_string()))?;
        write += 1;
    }
    Ok(write)
}

/// The name libtest gives `crash_writer`: its module path without the crate's, such as
/// `crash::crash_writer`, so that the child, which is this same test binary, runs that test and
/// no other wherever this module sits.
fn crash_writer_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::crash_writer"),
        None => "crash_writer".to_owned(),
    }
}

/// The child's entry point when `CHILD_ENV` is set; otherwise a bounded run of the same loop.
#[test]
fn crash_writer() -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(location) = std::env::var(CHILD_ENV) {
        write_batches(&child_database(&location)?, None)?;
        return Ok(());
    }
    let db = common::TestDb::new()?;
    common::feature(&mut *db.store.connection()?, "crashy")?;
    assert_eq!(write_batches(&db.config.database, Some(20))?, 20);
    let stored = queries::variants::get(&mut *db.store.connection()?, "default", "crashy", "production")?;
    assert_eq!(stored, payload(19));
    Ok(())
}

#[derive(QueryableByName)]
struct Check {
    #[diesel(sql_type = Text)]
    integrity_check: String,
}

#[test]
fn sigkill_during_writes_loses_nothing_that_was_reported() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    common::feature(&mut *db.store.connection()?, "crashy")?;
    let database = db.config.database.clone();
    let writer = crash_writer_test_name();

    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe()?)
            .args(["--exact", &writer, "--nocapture", "--test-threads=1"])
            .envs(child_environment(&database))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (reports, reported) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(write) = line
                    .strip_prefix("committed ")
                    .and_then(|n| n.parse::<u64>().ok())
                {
                    let _ = reports.send(write);
                }
            }
        });
        // Start the clock at the first commit, not at the spawn: a loaded machine can take long
        // to start the child, and a kill before any write proves nothing.
        let first = reported.recv_timeout(Duration::from_secs(30));
        if first.is_err() {
            let _ = child.kill();
            return Err(format!("round {round}: the writer reported nothing within 30 s").into());
        }
        // A moment that differs between rounds and runs: 0 to 400 ms into the writing.
        let jitter = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)?
            .subsec_nanos()
            % 400;
        std::thread::sleep(Duration::from_millis(u64::from(jitter)));
        child.kill()?;
        child.wait()?;
        reader.join().map_err(|_| "reader panicked")?;
        let last_reported = reported.try_iter().last().or(first.ok()).ok_or("no report")?;

        let store = Store::open(&StoreConfig::new(database.clone()))?;
        let mut conn = store.connection()?;
        if store.backend() == Backend::Sqlite {
            let check: Check = diesel::sql_query("PRAGMA integrity_check").get_result(&mut conn)?;
            assert_eq!(check.integrity_check, "ok");
        }
        let development = queries::variants::get(&mut conn, "default", "crashy", "development")?;
        let production = queries::variants::get(&mut conn, "default", "crashy", "production")?;
        assert_eq!(development, production, "round {round}: a half-written batch");
        let stored: u64 = development[0].name.trim_start_matches("write-").parse()?;
        assert!(
            stored >= last_reported,
            "round {round}: write {last_reported} was reported but {stored} is stored"
        );
        let events = queries::events::for_feature(&mut conn, "crashy", "production")?;
        for pair in events.windows(2) {
            assert_eq!(
                pair[1].pre_data, pair[0].data,
                "round {round}: gap in the audit chain"
            );
        }
    }
    Ok(())
}
