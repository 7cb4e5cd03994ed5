//! The test fixture: a fresh database on the backend under test (`HALYARD_TEST_DATABASE`, see
//! `flag_store::scratch`), opened with the real pool settings and migrations. Nothing is shared
//! between tests.

use chrono::NaiveDateTime;
use flag_store::models::FeatureRow;
use flag_store::scratch::Scratch;
use flag_store::{DbConnection, Store, StoreConfig, StoreError, queries};

pub struct TestDb {
    pub store: Store,
    pub config: StoreConfig,
    _scratch: Scratch,
}

impl TestDb {
    pub fn new() -> Result<Self, StoreError> {
        Self::with_pool_size(8)
    }

    pub fn with_pool_size(pool_size: u32) -> Result<Self, StoreError> {
        let mut scratch = Scratch::new()?;
        scratch.config.pool_size = pool_size;
        Ok(Self {
            store: scratch.open()?,
            config: scratch.config.clone(),
            _scratch: scratch,
        })
    }
}

pub fn now() -> NaiveDateTime {
    chrono::Utc::now().naive_utc()
}

/// Creates a feature in project `default`, which has `development` and `production`.
pub fn feature(conn: &mut DbConnection, name: &str) -> Result<FeatureRow, StoreError> {
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
            created_by_user_id: None,
        },
        &flag_store::models::Actor::system(),
    )
}
