//! The test fixture: a fresh database file in its own temporary directory, opened with the real
//! pool settings and migrations. Nothing is shared between tests.

use chrono::NaiveDateTime;
use flag_store::models::FeatureRow;
use flag_store::{Store, StoreConfig, StoreError, queries};
use tempfile::TempDir;

pub struct TestDb {
    pub store: Store,
    pub config: StoreConfig,
    _dir: TempDir,
}

impl TestDb {
    pub fn new() -> Result<Self, StoreError> {
        Self::with_pool_size(8)
    }

    pub fn with_pool_size(pool_size: u32) -> Result<Self, StoreError> {
        let dir = tempfile::tempdir().map_err(|error| StoreError::Migration(error.to_string()))?;
        let mut config = StoreConfig::new(dir.path().join("flags.db"));
        config.pool_size = pool_size;
        Ok(Self {
            store: Store::open(&config)?,
            config,
            _dir: dir,
        })
    }
}

pub fn now() -> NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

/// Creates a feature in project `default`, which has `development` and `production`.
pub fn feature(conn: &mut diesel::SqliteConnection, name: &str) -> Result<FeatureRow, StoreError> {
    queries::features::create(
        conn,
        &FeatureRow {
            name: name.into(),
            project_id: "default".into(),
            feature_type: "release".into(),
            description: None,
            impression_data: false,
            stale: false,
            archived_at: None,
            created_at: now(),
        },
        "test",
    )
}
