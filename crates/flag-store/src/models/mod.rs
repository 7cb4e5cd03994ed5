//! Rows as stored, one type per table, and the `Insertable` types for new rows.
//!
//! JSON columns stay `String` here, as written. Each has an accessor of the same name that
//! decodes it into its type (`ContextFieldRow::legal_values`, `SegmentRow::constraints`...)
//! or fails with [`StoreError::Corrupt`](crate::StoreError::Corrupt) naming the row and column,
//! so no caller parses JSON text and nothing falls back to a silent default.
//!
//! A few columns are typed in the row itself, read once as the row is loaded and written by
//! Diesel's `ToSql`: an API token's [`TokenType`] and [`TokenProjects`], a user's [`RootRole`].
//! Their rows load through a `Stored*` twin that holds the text or number as stored, so a value
//! that does not read fails the load with the same `Corrupt` error naming the row and column.
//!
//! The types live in one module per resource and are re-exported here, so each is named
//! `flag_store::models::X` whatever module holds it.

mod access;
mod addons;
mod change_requests;
mod client_metrics;
mod context_fields;
mod events;
mod features;
mod projects;
mod segments;
mod settings;
mod strategies;
mod tokens;
mod users;

pub use access::{
    GroupRow, GroupUserRow, Holder, NewGroup, NewPersonalToken, PersonalTokenRow, ProjectAccessRow,
    RolePermissionRow, SealedSecretRow,
};
pub use addons::{Addon, AddonConfig, AddonRow, IntegrationEventRow, NewIntegrationEvent};
pub use change_requests::{
    ChangeRequestRecord, ChangeRequestRow, ChangeRequestRuleRow, ChangeRequestState, ChangeRow, CommentRow,
    NewChange, ReviewRow,
};
pub use client_metrics::{ClientApplicationRow, ClientInstanceRow, UnknownFlagRow, UsageRow};
pub use context_fields::{ContextFieldRow, LegalValue};
pub use events::{Actor, EventRow, EventType, NewEvent};
pub use features::{
    DependencyRow, FeatureEnvironmentRow, FeatureRow, FeatureTypeRow, LifecycleRow, TagRef, TagTypeRow,
};
pub(crate) use projects::StoredProject;
pub use projects::{EnvironmentRow, ProjectRow, ProjectSettingsRow};
pub use segments::{NewSegment, SegmentRow};
pub use settings::SettingRow;
pub use strategies::{StrategyParameter, StrategyRow, StrategyTypeRow};
pub(crate) use tokens::StoredApiToken;
pub use tokens::{ApiTokenRow, NewApiToken, SignupTokenRow, TokenProjects, TokenType, UnreadableToken};
pub(crate) use users::StoredUser;
pub use users::{NewUser, OidcLoginRow, RoleRow, RootRole, SessionRow, UserChanges, UserRow};

#[cfg(test)]
mod tests {
    use std::fmt::Debug;

    use diesel::prelude::*;
    use diesel::sql_types::Text;

    use super::*;
    use crate::DbConnection;
    use crate::error::StoreError;
    use crate::queries::evaluation::ProjectScope;
    use crate::queries::strategies::StrategyInput;
    use crate::queries::{self, api_tokens, dependencies, evaluation, features, segments, strategies};
    use crate::schema::feature_strategies;
    use crate::testing::{TestResult, TestStore, now};

    /// Asserts that `result` is `Corrupt` for this row and column, and that its message names all
    /// three, so the row can be found from a log line.
    fn assert_corrupt<T: Debug>(result: Result<T, StoreError>, entity: &str, key: &str, column: &str) {
        let message = match &result {
            Err(
                error @ StoreError::Corrupt {
                    entity: found_entity,
                    key: found_key,
                    column: found_column,
                    ..
                },
            ) if (*found_entity, found_key.as_str(), *found_column) == (entity, key, column) => {
                error.to_string()
            }
            _ => String::new(),
        };
        assert!(
            [entity, key, column].iter().all(|part| message.contains(part)),
            "expected the stored {column} of {entity} {key} to be corrupt, got {result:?}"
        );
    }

    /// Overwrites one JSON column of the rows `filter` selects with raw SQL, as a bad migration or
    /// a hand edit would.
    fn overwrite(
        conn: &mut DbConnection,
        table: &str,
        column: &str,
        filter: &str,
        text: &str,
    ) -> QueryResult<usize> {
        let placeholder = match conn.backend() {
            crate::Backend::Sqlite => "?",
            crate::Backend::Postgres => "$1",
        };
        diesel::sql_query(format!(
            "UPDATE {table} SET {column} = {placeholder} WHERE {filter}"
        ))
        .bind::<Text, _>(text)
        .execute(conn)
    }

    const GARBAGE: &str = "{not json";

    fn feature(conn: &mut DbConnection, name: &str) -> Result<FeatureRow, StoreError> {
        features::create(
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
            &crate::models::Actor::system(),
        )
    }

    #[test]
    fn garbage_in_a_json_column_is_corrupt_naming_entity_key_and_column() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let conn = &mut *conn;
        feature(conn, "parent")?;
        feature(conn, "child")?;
        dependencies::set(
            conn,
            "default",
            "child",
            "parent",
            true,
            &[],
            &crate::models::Actor::system(),
            now(),
        )?;
        let strategy = strategies::add(
            conn,
            "default",
            "parent",
            "development",
            &StrategyInput {
                name: "default".into(),
                ..StrategyInput::default()
            },
            &crate::models::Actor::system(),
            now(),
        )?;
        let strategy_id = strategy.id.unwrap_or_default();
        let segment = segments::create(
            conn,
            &NewSegment {
                name: "beta".into(),
                description: None,
                project_id: None,
                constraints: "[]".into(),
                created_by: None,
                created_at: now(),
            },
            &crate::models::Actor::system(),
        )?;
        let token = api_tokens::create(
            conn,
            &NewApiToken {
                token_name: "sdk".into(),
                secret_hash: "00".repeat(32),
                token_type: TokenType::Client,
                environment: "development".into(),
                projects: TokenProjects::from(vec!["default".to_owned()]),
                expires_at: None,
                created_at: now(),
            },
            &crate::models::Actor::system(),
        )?;
        let client_features =
            |conn: &mut DbConnection| evaluation::client_features(conn, &ProjectScope::All, "development");
        let strategy_row = |conn: &mut DbConnection| -> QueryResult<StrategyRow> {
            feature_strategies::table
                .find(&strategy_id)
                .select(StrategyRow::as_select())
                .first(conn)
        };

        overwrite(conn, "context_fields", "legal_values", "name = 'userId'", GARBAGE)?;
        let fields = queries::context_fields::list(conn)?;
        let field = fields.iter().find(|field| field.name == "userId");
        assert_corrupt(
            field.map(ContextFieldRow::legal_values).transpose(),
            "context field",
            "userId",
            "legal_values",
        );

        overwrite(
            conn,
            "strategy_types",
            "parameters",
            "name = 'remoteAddress'",
            GARBAGE,
        )?;
        let types = strategies::list_types(conn)?;
        let strategy_type = types.iter().find(|row| row.name == "remoteAddress");
        assert_corrupt(
            strategy_type.map(StrategyTypeRow::parameters).transpose(),
            "strategy type",
            "remoteAddress",
            "parameters",
        );

        // Typed columns fail the load of their row, wherever it is loaded.
        overwrite(conn, "api_tokens", "projects", "TRUE", GARBAGE)?;
        let token_key = token.id.to_string();
        assert_corrupt(
            api_tokens::find_by_hash(conn, &token.secret_hash),
            "api token",
            &token_key,
            "projects",
        );
        assert_corrupt(api_tokens::list(conn), "api token", &token_key, "projects");
        overwrite(conn, "api_tokens", "projects", "TRUE", r#"["default"]"#)?;
        overwrite(conn, "api_tokens", "token_type", "TRUE", "root")?;
        assert_corrupt(api_tokens::list(conn), "api token", &token_key, "token_type");
        overwrite(conn, "api_tokens", "token_type", "TRUE", "client")?;
        assert_eq!(api_tokens::list(conn)?, [token]);

        // The columns the evaluation reads: each is checked through its accessor and through
        // every query that decodes it, then put back so the next one is the only fault.
        let segment_key = segment.id.to_string();
        let segment_filter = format!("id = {}", segment.id);
        overwrite(conn, "segments", "constraints", &segment_filter, GARBAGE)?;
        assert_corrupt(
            segments::get(conn, segment.id)?.constraints(),
            "segment",
            &segment_key,
            "constraints",
        );
        assert_corrupt(client_features(conn), "segment", &segment_key, "constraints");
        overwrite(conn, "segments", "constraints", &segment_filter, "[]")?;

        let state = "feature_name = 'parent' AND environment_name = 'development'";
        overwrite(conn, "feature_environments", "variants", state, GARBAGE)?;
        let key = "parent in development";
        assert_corrupt(
            features::environment(conn, "parent", "development")?.variants(),
            "feature environment",
            key,
            "variants",
        );
        assert_corrupt(
            queries::variants::get(conn, "default", "parent", "development"),
            "feature environment",
            key,
            "variants",
        );
        assert_corrupt(client_features(conn), "feature environment", key, "variants");
        overwrite(conn, "feature_environments", "variants", state, "[]")?;

        let strategy_filter = format!("id = '{strategy_id}'");
        for column in ["parameters", "constraints", "variants"] {
            let good = if column == "parameters" { "{}" } else { "[]" };
            overwrite(conn, "feature_strategies", column, &strategy_filter, GARBAGE)?;
            let row = strategy_row(conn)?;
            let accessor = match column {
                "parameters" => row.parameters().map(drop),
                "constraints" => row.constraints().map(drop),
                _ => row.variants().map(drop),
            };
            assert_corrupt(accessor, "strategy", &strategy_id, column);
            assert_corrupt(
                strategies::list(conn, "parent", "development"),
                "strategy",
                &strategy_id,
                column,
            );
            assert_corrupt(
                strategies::get(conn, "parent", "development", &strategy_id),
                "strategy",
                &strategy_id,
                column,
            );
            assert_corrupt(client_features(conn), "strategy", &strategy_id, column);
            overwrite(conn, "feature_strategies", column, &strategy_filter, good)?;
        }

        overwrite(
            conn,
            "feature_dependencies",
            "variants",
            "child = 'child'",
            GARBAGE,
        )?;
        assert_corrupt(
            dependencies::of(conn, "child")?
                .map(|row| row.variants())
                .transpose(),
            "feature dependency",
            "child",
            "variants",
        );
        assert_corrupt(client_features(conn), "feature dependency", "child", "variants");
        overwrite(conn, "feature_dependencies", "variants", "child = 'child'", "[]")?;

        // With every column put back, the document reads again.
        assert_eq!(client_features(conn)?.features.len(), 2);
        Ok(())
    }
}
