//! Migrations and the integrity rules the schema enforces.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use flag_store::{Backend, DbConnection, StoreError, queries};

use crate::common;

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

fn tables(conn: &mut DbConnection) -> QueryResult<Vec<String>> {
    let query = match conn.backend() {
        Backend::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             AND name != '__diesel_schema_migrations' ORDER BY name"
        }
        Backend::Postgres => {
            "SELECT table_name::text AS name FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' \
             AND table_name != '__diesel_schema_migrations' ORDER BY name"
        }
    };
    Ok(diesel::sql_query(query)
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
    assert_eq!(created.len(), 46, "{created:?}");
    flag_store::revert_all(&mut conn)?;
    assert!(tables(&mut conn)?.is_empty());
    flag_store::migrate(&mut conn)?;
    assert_eq!(tables(&mut conn)?, created);
    // The seed data comes back too.
    assert_eq!(queries::environments::list(&mut conn)?.len(), 2);
    assert_eq!(queries::users::role(&mut conn, 3)?.name, "Viewer");
    Ok(())
}

/// SQLite connections use WAL and a page cache of 512 KiB; PostgreSQL connections wait for the write lock as long as SQLite
/// waits for a busy database, in the scratch schema.
#[test]
fn connections_are_configured_for_their_backend() -> Result<(), Box<dyn std::error::Error>> {
    #[derive(QueryableByName)]
    struct Setting {
        #[diesel(sql_type = Text)]
        value: String,
    }
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    match conn.backend() {
        Backend::Sqlite => {
            let mode: Setting = diesel::sql_query("SELECT journal_mode AS value FROM pragma_journal_mode()")
                .get_result(&mut conn)?;
            assert_eq!(mode.value, "wal");
            let cache: Setting =
                diesel::sql_query("SELECT CAST(cache_size AS TEXT) AS value FROM pragma_cache_size()")
                    .get_result(&mut conn)?;
            assert_eq!(cache.value, "-512");
        }
        Backend::Postgres => {
            let timeout: Setting =
                diesel::sql_query("SELECT current_setting('lock_timeout') AS value").get_result(&mut conn)?;
            assert_eq!(timeout.value, "5s");
            let schema: Setting =
                diesel::sql_query("SELECT current_schema()::text AS value").get_result(&mut conn)?;
            assert!(schema.value.starts_with("scratch_"), "{}", schema.value);
        }
    }
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
    assert!(
        message.contains("FOREIGN KEY") || message.contains("violates foreign key constraint"),
        "{message}"
    );
    // Through the query API the same mistake is a typed not-found error.
    let mut row = common::feature(&mut conn, "ok")?;
    row.name = "orphan".into();
    row.project_id = "no-such-project".into();
    let error = queries::features::create(&mut conn, &row, &flag_store::models::Actor::system()).err();
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
    let mut scratch = flag_store::scratch::Scratch::new()?;
    scratch.config.pool_size = 1;
    scratch.config.checkout_timeout = std::time::Duration::from_millis(200);
    let store = scratch.open()?;
    let _held = store.connection()?;
    let error = store.connection().err();
    assert!(
        matches!(&error, Some(error) if error.is_unavailable()),
        "{error:?}"
    );
    Ok(())
}

/// One column as the database reports it.
#[derive(QueryableByName)]
struct Column {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    r#type: String,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    notnull: i32,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pk: i32,
}

/// One `table!` declaration of schema.rs.
struct DeclaredTable {
    keys: Vec<String>,
    columns: Vec<(String, String)>,
}

/// The `table!` declarations of schema.rs, by table name.
fn declared_schema() -> std::collections::BTreeMap<String, DeclaredTable> {
    let mut tables = std::collections::BTreeMap::new();
    let mut current: Option<(String, DeclaredTable)> = None;
    for line in include_str!("../../src/schema.rs").lines().map(str::trim) {
        if let Some((name, keys)) = line.strip_suffix(") {").and_then(|head| head.split_once(" (")) {
            let keys = keys.split(',').map(|key| key.trim().to_owned()).collect();
            current = Some((
                name.to_owned(),
                DeclaredTable {
                    keys,
                    columns: Vec::new(),
                },
            ));
        } else if let Some((column, kind)) = line.strip_suffix(',').and_then(|line| line.split_once(" -> ")) {
            if let Some((_, table)) = current.as_mut() {
                table.columns.push((column.to_owned(), kind.to_owned()));
            }
        } else if line == "}"
            && let Some((name, table)) = current.take()
        {
            tables.insert(name, table);
        }
    }
    tables
}

/// What `diesel print-schema` writes for a column.
fn diesel_type(column: &Column) -> String {
    let base = match column.r#type.to_ascii_uppercase().as_str() {
        "TEXT" => "Text",
        "INTEGER" => "Integer",
        "BIGINT" => "BigInt",
        "BOOLEAN" => "Bool",
        "TIMESTAMP" | "TIMESTAMP WITHOUT TIME ZONE" => "Timestamp",
        other => return format!("unknown {other}"),
    };
    if column.notnull == 0 && column.pk == 0 {
        format!("Nullable<{base}>")
    } else {
        base.to_owned()
    }
}

/// Each column of `table` as (name, type, notnull, position in the primary key or 0).
fn columns_query(backend: Backend, table: &str) -> String {
    match backend {
        Backend::Sqlite => format!("SELECT name, type, \"notnull\", pk FROM pragma_table_info('{table}')"),
        Backend::Postgres => format!(
            "SELECT c.column_name::text AS name, c.data_type::text AS type, \
                    CASE WHEN c.is_nullable = 'NO' THEN 1 ELSE 0 END AS notnull, \
                    COALESCE((SELECT k.ordinal_position::integer \
                              FROM information_schema.table_constraints t \
                              JOIN information_schema.key_column_usage k \
                                ON k.constraint_name = t.constraint_name AND k.table_schema = t.table_schema \
                               AND k.table_name = t.table_name \
                              WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema \
                                AND t.table_name = c.table_name AND k.column_name = c.column_name), 0) AS pk \
             FROM information_schema.columns c \
             WHERE c.table_schema = current_schema() AND c.table_name = '{table}' \
             ORDER BY c.ordinal_position"
        ),
    }
}

/// schema.rs agrees with what the migrations create: the same tables, columns, types,
/// nullability and primary keys (scripts/check-schema regenerates it with `diesel print-schema`).
#[test]
fn schema_rs_matches_the_migrations() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let declared = declared_schema();
    let actual_tables = tables(&mut conn)?;
    assert_eq!(declared.keys().cloned().collect::<Vec<_>>(), actual_tables);
    for table in &actual_tables {
        let columns: Vec<Column> = diesel::sql_query(columns_query(conn.backend(), table)).load(&mut conn)?;
        let DeclaredTable {
            keys,
            columns: declared_columns,
        } = &declared[table];
        let actual: Vec<(String, String)> =
            columns.iter().map(|c| (c.name.clone(), diesel_type(c))).collect();
        assert_eq!(&actual, declared_columns, "columns of {table}");
        let mut primary: Vec<&Column> = columns.iter().filter(|c| c.pk > 0).collect();
        primary.sort_by_key(|c| c.pk);
        let primary: Vec<String> = primary.iter().map(|c| c.name.clone()).collect();
        assert_eq!(&primary, keys, "primary key of {table}");
    }
    Ok(())
}

/// The libpq built into the binary speaks TLS: `sslmode=require` in the URL gives an encrypted
/// connection (the test cluster has a self-signed certificate). PostgreSQL only, on every run:
/// without `HALYARD_TEST_POSTGRES_URL` it fails, saying so.
#[test]
fn postgres_connections_use_tls_when_the_url_requires_it() -> Result<(), Box<dyn std::error::Error>> {
    #[derive(QueryableByName)]
    struct Encrypted {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        ssl: bool,
    }
    let mut scratch = flag_store::scratch::Scratch::on(Backend::Postgres)?;
    if let flag_store::Database::Postgres(postgres) = &mut scratch.config.database {
        let url = postgres.connection.expose();
        let separator = if url.contains('?') { '&' } else { '?' };
        postgres.connection = flag_store::ConnectionString::new(format!("{url}{separator}sslmode=require"));
    }
    let store = scratch.open()?;
    let mut conn = store.connection()?;
    let encrypted: Encrypted = diesel::sql_query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .get_result(&mut conn)?;
    assert!(encrypted.ssl, "the connection is not encrypted");
    Ok(())
}

/// A new SQLite database holds password hashes, session and token verifiers and invite
/// secrets: it is created readable by its owner only, and so are its `-wal` and `-shm` files.
#[cfg(unix)]
#[test]
fn issue_26_a_new_sqlite_database_is_readable_by_its_owner_only() -> Result<(), Box<dyn std::error::Error>> {
    use std::os::unix::fs::PermissionsExt as _;
    let scratch = flag_store::scratch::Scratch::on(flag_store::Backend::Sqlite)?;
    let store = scratch.open()?;
    // A write, so that the write-ahead log and its index exist.
    flag_store::queries::events::latest_id(&mut *store.connection()?)?;
    let mut checked = 0;
    for name in ["flags.db", "flags.db-wal", "flags.db-shm"] {
        let path = scratch.directory().join(name);
        if let Ok(metadata) = std::fs::metadata(&path) {
            assert_eq!(metadata.permissions().mode() & 0o777, 0o600, "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 2, "the database and its write-ahead log exist");
    Ok(())
}
