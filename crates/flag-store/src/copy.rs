//! Copying a whole database to another, of either backend: how an installation outgrows SQLite
//! (`admin-api copy-database --from flags.db --to postgres://...`).
//!
//! Every table is copied row for row, ids included, so API token verifiers, login sessions,
//! signup links and the audit log keep working and keep their history. Rows are copied as
//! stored: typed columns (a token's type, a user's root role) are not read on the way. The copy
//! runs in one transaction on the target and is checked table by table against the source's row
//! counts before it commits; a target that already holds data is refused.

use diesel::prelude::*;

use crate::connection::{DbConnection, insert_rows};
use crate::error::StoreError;
use crate::models::{
    AddonRow, ClientApplicationRow, ClientInstanceRow, ContextFieldRow, DependencyRow, EnvironmentRow,
    EventRow, FeatureEnvironmentRow, FeatureRow, FeatureTypeRow, GroupRow, GroupUserRow, IntegrationEventRow,
    LifecycleRow, OidcLoginRow, ProjectAccessRow, RolePermissionRow, RoleRow, SealedSecretRow, SegmentRow,
    SessionRow, SettingRow, SignupTokenRow, StoredApiToken, StoredProject, StoredUser, StrategyRow,
    StrategyTypeRow, TagTypeRow, UnknownFlagRow, UsageRow,
};
use crate::schema::{
    addons, api_tokens, client_applications, client_instances, client_usage, context_fields, environments,
    events, feature_dependencies, feature_environments, feature_lifecycles, feature_strategies,
    feature_strategy_segments, feature_tags, feature_types, features, group_users, groups,
    integration_events, login_sessions, oidc_logins, personal_access_tokens, project_access,
    project_environments, projects, public_signup_token_users, public_signup_tokens, role_permissions, roles,
    sealed_secrets, segments, settings, strategy_types, tag_types, tags, unknown_flags, user_splashes, users,
};
use crate::{Backend, Store};

/// Rows per INSERT: well under PostgreSQL's 65,535 parameters and SQLite's 32,766 at 11 columns.
const CHUNK: usize = 500;

/// A project's environment.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = project_environments)]
struct ProjectEnvironmentRow {
    project_id: String,
    environment_name: String,
}

/// A strategy's segment.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_strategy_segments)]
struct StrategySegmentRow {
    strategy_id: String,
    segment_id: i32,
}

/// A user who signed up through a link.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = public_signup_token_users)]
struct SignupTokenUserRow {
    secret: String,
    user_id: i32,
    created_at: chrono::NaiveDateTime,
}

/// A tag.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = tags)]
struct TagRow {
    tag_type: String,
    value: String,
    created_at: chrono::NaiveDateTime,
}

/// A tag on a flag.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = feature_tags)]
struct FeatureTagRow {
    feature_name: String,
    tag_type: String,
    tag_value: String,
    created_by_user_id: Option<i32>,
    created_at: chrono::NaiveDateTime,
}

/// A personal access token, as stored.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = personal_access_tokens)]
struct PersonalTokenCopy {
    id: i32,
    secret_hash: String,
    description: String,
    user_id: i32,
    expires_at: chrono::NaiveDateTime,
    created_at: chrono::NaiveDateTime,
    seen_at: Option<chrono::NaiveDateTime>,
}

/// A one-time dialog a user closed.
#[derive(Debug, Queryable, Selectable, Insertable)]
#[diesel(table_name = user_splashes)]
struct SplashRow {
    user_id: i32,
    splash_id: String,
    seen: bool,
}

/// The tables the migrations fill with a fresh installation's rows (roles, the two environments,
/// the default project, built-in strategy types and context fields). A target that holds only
/// these, and no audit event, has never been written to.
const SEEDED: [&str; 8] = [
    "roles",
    "environments",
    "projects",
    "project_environments",
    "strategy_types",
    "context_fields",
    "feature_types",
    "tag_types",
];

/// Rows copied, by table, in the order they were copied (parents before children).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// `(table, rows)`.
    pub tables: Vec<(&'static str, i64)>,
}

/// Applies `$body` to every table in an order that satisfies foreign keys: `$body` is a macro
/// taking the table module and its row type.
macro_rules! for_each_table {
    ($apply:ident) => {
        $apply!(roles, RoleRow, roles::id);
        $apply!(projects, StoredProject, projects::id);
        $apply!(environments, EnvironmentRow, environments::name);
        $apply!(
            project_environments,
            ProjectEnvironmentRow,
            (
                project_environments::project_id,
                project_environments::environment_name
            )
        );
        $apply!(features, FeatureRow, features::name);
        $apply!(
            feature_environments,
            FeatureEnvironmentRow,
            (
                feature_environments::feature_name,
                feature_environments::environment_name
            )
        );
        $apply!(strategy_types, StrategyTypeRow, strategy_types::name);
        $apply!(feature_strategies, StrategyRow, feature_strategies::id);
        $apply!(segments, SegmentRow, segments::id);
        $apply!(
            feature_strategy_segments,
            StrategySegmentRow,
            (
                feature_strategy_segments::strategy_id,
                feature_strategy_segments::segment_id
            )
        );
        $apply!(
            feature_dependencies,
            DependencyRow,
            feature_dependencies::child
        );
        $apply!(context_fields, ContextFieldRow, context_fields::name);
        $apply!(feature_types, FeatureTypeRow, feature_types::id);
        $apply!(tag_types, TagTypeRow, tag_types::name);
        $apply!(tags, TagRow, (tags::tag_type, tags::value));
        $apply!(
            feature_tags,
            FeatureTagRow,
            (
                feature_tags::feature_name,
                feature_tags::tag_type,
                feature_tags::tag_value
            )
        );
        $apply!(
            feature_lifecycles,
            LifecycleRow,
            (feature_lifecycles::feature_name, feature_lifecycles::stage)
        );
        $apply!(users, StoredUser, users::id);
        $apply!(
            user_splashes,
            SplashRow,
            (user_splashes::user_id, user_splashes::splash_id)
        );
        $apply!(
            public_signup_tokens,
            SignupTokenRow,
            public_signup_tokens::secret
        );
        $apply!(
            public_signup_token_users,
            SignupTokenUserRow,
            (
                public_signup_token_users::secret,
                public_signup_token_users::user_id
            )
        );
        $apply!(
            role_permissions,
            RolePermissionRow,
            (
                role_permissions::role_id,
                role_permissions::permission,
                role_permissions::environment
            )
        );
        $apply!(groups, GroupRow, groups::id);
        $apply!(
            group_users,
            GroupUserRow,
            (group_users::group_id, group_users::user_id)
        );
        $apply!(project_access, ProjectAccessRow, project_access::id);
        $apply!(
            personal_access_tokens,
            PersonalTokenCopy,
            personal_access_tokens::id
        );
        $apply!(api_tokens, StoredApiToken, api_tokens::id);
        $apply!(sealed_secrets, SealedSecretRow, sealed_secrets::owner);
        $apply!(login_sessions, SessionRow, login_sessions::token_hash);
        $apply!(oidc_logins, OidcLoginRow, oidc_logins::cookie_hash);
        $apply!(events, EventRow, events::id);
        $apply!(addons, AddonRow, addons::id);
        $apply!(
            integration_events,
            IntegrationEventRow,
            integration_events::id
        );
        $apply!(settings, SettingRow, settings::name);
        $apply!(
            client_applications,
            ClientApplicationRow,
            client_applications::app_name
        );
        $apply!(
            client_instances,
            ClientInstanceRow,
            (
                client_instances::app_name,
                client_instances::instance_id,
                client_instances::environment
            )
        );
        $apply!(
            client_usage,
            UsageRow,
            (
                client_usage::feature_name,
                client_usage::app_name,
                client_usage::environment,
                client_usage::hour
            )
        );
        $apply!(
            unknown_flags,
            UnknownFlagRow,
            (
                unknown_flags::name,
                unknown_flags::app_name,
                unknown_flags::environment
            )
        );
    };
}

/// Row counts of every table, by table name.
fn counts(conn: &mut DbConnection) -> Result<Vec<(&'static str, i64)>, StoreError> {
    let mut counts = Vec::new();
    macro_rules! count {
        ($table:ident, $row:ty, $order:expr) => {
            counts.push((
                stringify!($table),
                $table::table.count().get_result::<i64>(conn)?,
            ));
        };
    }
    for_each_table!(count);
    Ok(counts)
}

/// Copies everything in `source` into `target`, both already opened (and so migrated to the
/// same version). Refuses a target that has been written to.
pub fn copy_database(source: &Store, target: &Store) -> Result<CopyReport, StoreError> {
    let mut from = source.connection()?;
    let mut to = target.connection()?;
    let occupied: Vec<String> = counts(&mut to)?
        .into_iter()
        .filter(|(table, rows)| *rows > 0 && !SEEDED.contains(table))
        .map(|(table, rows)| format!("{table} ({rows} rows)"))
        .collect();
    if !occupied.is_empty() {
        return Err(StoreError::Rejected {
            message: format!(
                "the target database is not empty: {}; copy into a new, empty database",
                occupied.join(", ")
            ),
        });
    }
    crate::connection::read(&mut from, |from| {
        let expected = counts(from)?;
        crate::connection::write(&mut to, |to| {
            // The target's own seed rows give way to the source's, which may have changed them.
            for table in SEEDED.iter().rev() {
                diesel::sql_query(format!("DELETE FROM {table}")).execute(to)?;
            }
            macro_rules! copy {
                ($table:ident, $row:ty, $order:expr) => {
                    let rows: Vec<$row> = $table::table
                        .select(<$row as Selectable<crate::connection::MultiBackend>>::construct_selection())
                        .order($order)
                        .load(from)?;
                    for chunk in rows.chunks(CHUNK) {
                        insert_rows!(&mut *to, $table::table, chunk)?;
                    }
                };
            }
            for_each_table!(copy);
            if to.backend() == Backend::Postgres {
                // Identity columns continue after the copied ids.
                for table in [
                    "roles",
                    "segments",
                    "users",
                    "api_tokens",
                    "groups",
                    "project_access",
                    "personal_access_tokens",
                    "events",
                    "addons",
                    "integration_events",
                ] {
                    diesel::sql_query(format!(
                        "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) \
                         FROM {table}"
                    ))
                    .execute(to)?;
                }
            }
            // The copied history has happened: webhooks hear only what happens next.
            diesel::update(events::table)
                .set(events::announced.eq(true))
                .execute(to)?;
            let copied = counts(to)?;
            if copied != expected {
                let differences: Vec<String> = expected
                    .iter()
                    .zip(&copied)
                    .filter(|(source, target)| source != target)
                    .map(|((table, source), (_, target))| {
                        format!("{table}: {source} in the source, {target} copied")
                    })
                    .collect();
                return Err(StoreError::Rejected {
                    message: format!(
                        "row counts differ after copying, nothing kept: {}",
                        differences.join("; ")
                    ),
                });
            }
            Ok(CopyReport { tables: copied })
        })
    })
}
