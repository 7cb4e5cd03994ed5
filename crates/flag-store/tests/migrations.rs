//! Migrations and the integrity rules the schema enforces.

mod common;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use flag_store::{StoreError, queries};

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

fn tables(conn: &mut SqliteConnection) -> QueryResult<Vec<String>> {
    Ok(diesel::sql_query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name != '__diesel_schema_migrations' ORDER BY name",
    )
    .load::<Name>(conn)?
    .into_iter()
    .map(|row| row.name)
    .collect())
}

#[test]
fn migrations_run_up_down_and_up_again() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let created = tables(&mut conn)?;
    assert_eq!(created.len(), 18, "{created:?}");
    flag_store::revert_all(&mut conn)?;
    assert!(tables(&mut conn)?.is_empty());
    flag_store::migrate(&mut conn)?;
    assert_eq!(tables(&mut conn)?, created);
    // The seed data comes back too.
    assert_eq!(queries::environments::list(&mut conn)?.len(), 2);
    assert_eq!(queries::users::role(&mut conn, 3)?.name, "Viewer");
    Ok(())
}

#[test]
fn connections_use_wal_and_foreign_keys() -> Result<(), Box<dyn std::error::Error>> {
    #[derive(QueryableByName)]
    struct Mode {
        #[diesel(sql_type = Text)]
        journal_mode: String,
    }
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let mode: Mode = diesel::sql_query("PRAGMA journal_mode").get_result(&mut conn)?;
    assert_eq!(mode.journal_mode, "wal");
    Ok(())
}

#[test]
fn a_foreign_key_violation_fails() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let result = conn.batch_execute(
        "INSERT INTO features (name, project_id, feature_type, created_at) \
         VALUES ('orphan', 'no-such-project', 'release', '2026-01-01 00:00:00')",
    );
    let message = result.err().map(|error| error.to_string()).unwrap_or_default();
    assert!(message.contains("FOREIGN KEY"), "{message}");
    // Through the query API the same mistake is a typed not-found error.
    let mut row = common::feature(&mut conn, "ok")?;
    row.name = "orphan".into();
    row.project_id = "no-such-project".into();
    let error = queries::features::create(&mut conn, &row, "test").err();
    assert!(
        matches!(
            error,
            Some(StoreError::NotFound {
                entity: "project",
                ..
            })
        ),
        "{error:?}"
    );
    Ok(())
}

#[test]
fn duplicate_names_are_typed_conflicts() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    common::feature(&mut conn, "twice")?;
    let error = common::feature(&mut conn, "twice").err();
    assert!(
        matches!(
            error,
            Some(StoreError::Conflict {
                entity: "feature",
                ..
            })
        ),
        "{error:?}"
    );
    Ok(())
}

#[test]
fn pool_checkout_times_out_with_a_typed_error() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut config = flag_store::StoreConfig::new(dir.path().join("small.db"));
    config.pool_size = 1;
    config.checkout_timeout = std::time::Duration::from_millis(200);
    let store = flag_store::Store::open(&config)?;
    let _held = store.connection()?;
    let error = store.connection().err();
    assert!(
        matches!(&error, Some(error) if error.is_unavailable()),
        "{error:?}"
    );
    Ok(())
}
