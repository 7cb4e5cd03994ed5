//! Features and their per-environment switch.

use crate::connection::DbConnection;
use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::error::StoreError;
use crate::models::{Actor, EventType, FeatureEnvironmentRow, FeatureRow, NewEvent};
use crate::queries::{events, lifecycle, projects, strategies, to_json};
use crate::schema::{feature_environments, features};

/// Creates a feature with a disabled row in each environment of its project. Names are unique
/// across projects and archived features.
pub fn create(conn: &mut DbConnection, row: &FeatureRow, actor: &Actor) -> Result<FeatureRow, StoreError> {
    crate::queries::write(conn, |conn| {
        projects::get(conn, &row.project_id)?;
        diesel::insert_into(features::table).values(row).execute(conn)?;
        let rows: Vec<FeatureEnvironmentRow> = projects::environments_of(conn, &row.project_id)?
            .into_iter()
            .map(|environment_name| FeatureEnvironmentRow {
                feature_name: row.name.clone(),
                environment_name,
                enabled: false,
                variants: "[]".into(),
                last_seen_at: None,
            })
            .collect();
        crate::connection::insert_rows!(conn, feature_environments::table, &rows)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(row.project_id.clone()),
                feature_name: Some(row.name.clone()),
                data: Some(to_json("data", &feature_json(row))?),
                ..NewEvent::new(EventType::FeatureCreated, actor, row.created_at)
            },
        )?;
        lifecycle::enter(conn, &row.name, "initial", row.created_at)?;
        Ok(row.clone())
    })
}

/// The non-archived features of a project, by name.
pub fn list(conn: &mut DbConnection, project: &str) -> Result<Vec<FeatureRow>, StoreError> {
    Ok(features::table
        .filter(features::project_id.eq(project))
        .filter(features::archived_at.is_null())
        .order(features::name.asc())
        .select(FeatureRow::as_select())
        .load(conn)?)
}

/// A feature, which must belong to `project`.
pub fn get(conn: &mut DbConnection, project: &str, name: &str) -> Result<FeatureRow, StoreError> {
    features::table
        .find(name)
        .filter(features::project_id.eq(project))
        .select(FeatureRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("feature", format!("{project}/{name}")))
}

/// A feature's rows for every environment of its project.
pub fn environments_of(
    conn: &mut DbConnection,
    name: &str,
) -> Result<Vec<FeatureEnvironmentRow>, StoreError> {
    Ok(feature_environments::table
        .filter(feature_environments::feature_name.eq(name))
        .order(feature_environments::environment_name.asc())
        .select(FeatureEnvironmentRow::as_select())
        .load(conn)?)
}

/// The rows of every feature of `project`, by feature and environment.
pub fn environments_of_project(
    conn: &mut DbConnection,
    project: &str,
) -> Result<Vec<FeatureEnvironmentRow>, StoreError> {
    Ok(feature_environments::table
        .inner_join(features::table)
        .filter(features::project_id.eq(project))
        .order((
            feature_environments::feature_name.asc(),
            feature_environments::environment_name.asc(),
        ))
        .select(FeatureEnvironmentRow::as_select())
        .load(conn)?)
}

/// A feature's row in one environment.
pub fn environment(
    conn: &mut DbConnection,
    name: &str,
    environment: &str,
) -> Result<FeatureEnvironmentRow, StoreError> {
    feature_environments::table
        .find((name, environment))
        .select(FeatureEnvironmentRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found(
            "feature environment",
            format!("{name} in {environment}"),
        ))
}

/// Turns a feature on or off in one environment, as Unleash does: switching on a feature with no
/// active strategy there first adds the default one ([`strategies::default_for`]).
pub fn set_enabled(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    environment_name: &str,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    switch(
        conn,
        project,
        name,
        environment_name,
        Switch::new(enabled),
        actor,
        now,
    )
}

/// How to switch a feature in an environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switch {
    /// On or off.
    pub enabled: bool,
    /// When switching on a feature whose strategies there are all disabled: enable them, instead
    /// of adding the default strategy (Unleash's `shouldActivateDisabledStrategies`).
    pub activate_disabled: bool,
}

impl Switch {
    /// On or off, adding the default strategy when switching on with no active one.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            activate_disabled: false,
        }
    }
}

/// Switches a feature in one environment, as Unleash does: an archived feature cannot be
/// switched; switching on with no active strategy there enables the disabled ones (when asked)
/// or adds the default strategy ([`strategies::default_for`]).
pub fn switch(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    environment_name: &str,
    how: Switch,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let enabled = how.enabled;
    crate::queries::write(conn, |conn| {
        let feature = get(conn, project, name)?;
        if feature.archived_at.is_some() {
            return Err(StoreError::Archived);
        }
        let before = environment(conn, name, environment_name)?;
        if enabled && how.activate_disabled && !strategies::has_active(conn, name, environment_name)? {
            strategies::enable_all(conn, project, name, environment_name, actor, now)?;
        }
        // So SDKs, the playground and feature reads all see the same rule.
        if enabled && !strategies::has_active(conn, name, environment_name)? {
            strategies::add(
                conn,
                project,
                name,
                environment_name,
                &strategies::default_for(name),
                actor,
                now,
            )?;
        }
        store_switch(conn, project, &before, enabled, actor, now)
    })
}

/// Sets a feature's switch in one environment and nothing else: an import reproduces its
/// document as it is, without the default strategy [`set_enabled`] adds.
pub(crate) fn write_enabled(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    environment_name: &str,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        get(conn, project, name)?;
        let before = environment(conn, name, environment_name)?;
        store_switch(conn, project, &before, enabled, actor, now)
    })
}

/// Writes the switch of the checked row `before` and its audit event.
fn store_switch(
    conn: &mut DbConnection,
    project: &str,
    before: &FeatureEnvironmentRow,
    enabled: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let (name, environment_name) = (before.feature_name.as_str(), before.environment_name.as_str());
    let event = NewEvent {
        project: Some(project.into()),
        environment: Some(environment_name.into()),
        feature_name: Some(name.into()),
        // As Unleash's switch events, these hold no data: their type says it all.
        ..NewEvent::new(
            if enabled {
                EventType::FeatureEnvironmentEnabled
            } else {
                EventType::FeatureEnvironmentDisabled
            },
            actor,
            now,
        )
    };
    if before.enabled == enabled {
        // Nothing to write, but a switch the change-request rule refuses is refused all the same.
        return crate::queries::change_requests::guard(conn, &event);
    }
    diesel::update(feature_environments::table.find((name, environment_name)))
        .set(feature_environments::enabled.eq(enabled))
        .execute(conn)?;
    events::record(conn, &event)
}

/// A feature as Unleash writes it in events and in the answers of writes:
/// `{name, description, type, project, stale, createdAt, impressionData, archivedAt?, archived}`,
/// with `archivedAt` left out while the feature is live.
pub fn feature_json(row: &FeatureRow) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    object.insert("name".into(), row.name.clone().into());
    object.insert("description".into(), row.description.clone().into());
    object.insert("type".into(), row.feature_type.clone().into());
    object.insert("project".into(), row.project_id.clone().into());
    object.insert("stale".into(), row.stale.into());
    object.insert("createdAt".into(), crate::time::iso(row.created_at).into());
    object.insert("impressionData".into(), row.impression_data.into());
    if let Some(archived_at) = row.archived_at {
        object.insert("archivedAt".into(), crate::time::iso(archived_at).into());
    }
    object.insert("archived".into(), row.archived_at.is_some().into());
    serde_json::Value::Object(object)
}

/// What an update of a feature sets: every one of these fields, as Unleash's update replaces
/// them all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureMetadata {
    /// `release`, `experiment`...
    pub feature_type: String,
    /// Free text; `None` clears it.
    pub description: Option<String>,
    /// Marked stale.
    pub stale: bool,
    /// Whether SDKs emit impression events.
    pub impression_data: bool,
    /// Archived: archives a live feature, revives an archived one, without the checks and
    /// events of the archive operations, as in Unleash.
    pub archived: bool,
}

/// Updates a feature of `project`, recording `feature-metadata-updated` (unless nothing changed)
/// and, with `stale_events`, `feature-stale-on` or `feature-stale-off` when staleness changed.
pub fn update_metadata(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    metadata: &FeatureMetadata,
    stale_events: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<FeatureRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get(conn, project, name)?;
        let archived_at = match (metadata.archived, before.archived_at) {
            (true, Some(at)) => Some(at),
            (true, None) => Some(now),
            (false, _) => None,
        };
        diesel::update(features::table.find(name))
            .set((
                features::feature_type.eq(&metadata.feature_type),
                features::description.eq(&metadata.description),
                features::stale.eq(metadata.stale),
                features::impression_data.eq(metadata.impression_data),
                features::archived_at.eq(archived_at),
            ))
            .execute(conn)?;
        let after = get(conn, project, name)?;
        events::record(
            conn,
            &NewEvent {
                project: Some(project.into()),
                feature_name: Some(name.into()),
                data: Some(to_json("data", &feature_json(&after))?),
                pre_data: Some(to_json("pre_data", &feature_json(&before))?),
                ..NewEvent::new(EventType::FeatureMetadataUpdated, actor, now)
            },
        )?;
        if stale_events && before.stale != after.stale {
            record_stale(conn, project, name, after.stale, actor, now)?;
        }
        Ok(after)
    })
}

/// Records `feature-stale-on` or `feature-stale-off`.
pub(crate) fn record_stale(
    conn: &mut DbConnection,
    project: &str,
    name: &str,
    stale: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    events::record(
        conn,
        &NewEvent {
            project: Some(project.into()),
            feature_name: Some(name.into()),
            ..NewEvent::new(
                if stale {
                    EventType::FeatureStaleOn
                } else {
                    EventType::FeatureStaleOff
                },
                actor,
                now,
            )
        },
    )
}

/// Whether a feature (live or archived) has this name.
pub fn find(conn: &mut DbConnection, name: &str) -> Result<Option<FeatureRow>, StoreError> {
    Ok(features::table
        .find(name)
        .select(FeatureRow::as_select())
        .first(conn)
        .optional()?)
}

/// The features with these names, live or archived, by name.
pub fn named(conn: &mut DbConnection, names: &[String]) -> Result<Vec<FeatureRow>, StoreError> {
    Ok(features::table
        .filter(features::name.eq_any(names))
        .order(features::name.asc())
        .select(FeatureRow::as_select())
        .load(conn)?)
}

/// When SDKs last used each of `names`, in any environment; flags never used are absent.
pub fn last_seen(
    conn: &mut DbConnection,
    names: &[String],
) -> Result<std::collections::HashMap<String, NaiveDateTime>, StoreError> {
    use diesel::dsl::max;
    let rows: Vec<(String, Option<NaiveDateTime>)> = feature_environments::table
        .filter(feature_environments::feature_name.eq_any(names))
        .group_by(feature_environments::feature_name)
        .select((
            feature_environments::feature_name,
            max(feature_environments::last_seen_at),
        ))
        .load(conn)?;
    Ok(rows
        .into_iter()
        .filter_map(|(name, seen)| seen.map(|seen| (name, seen)))
        .collect())
}

/// Every feature, live and archived, by name.
pub fn all(conn: &mut DbConnection) -> Result<Vec<FeatureRow>, StoreError> {
    Ok(features::table
        .order(features::name.asc())
        .select(FeatureRow::as_select())
        .load(conn)?)
}

/// Switches several features of `project` in one environment in one transaction: all or none.
pub fn switch_many(
    conn: &mut DbConnection,
    project: &str,
    names: &[String],
    environment_name: &str,
    how: Switch,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        for name in names {
            switch(conn, project, name, environment_name, how, actor, now)?;
        }
        Ok(())
    })
}

/// Copies the live flag `source` of `project` as `name` in the same project: its fields, its
/// variants and strategies in every environment (switched off), and its parent; with
/// `replace_group_id`, strategies grouped by the old name are grouped by the new one.
pub fn clone(
    conn: &mut DbConnection,
    project: &str,
    source: &str,
    name: &str,
    replace_group_id: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<FeatureRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let original = get(conn, project, source)?;
        if original.archived_at.is_some() {
            return Err(StoreError::NotFound {
                entity: "feature flag with name",
                key: source.to_owned(),
            });
        }
        if let Some(existing) = find(conn, name)? {
            return Err(StoreError::Conflict {
                entity: if existing.archived_at.is_some() {
                    "archived flag"
                } else {
                    "flag"
                },
                key: String::new(),
            });
        }
        let copy = create(
            conn,
            &FeatureRow {
                name: name.to_owned(),
                archived_at: None,
                created_at: now,
                created_by_user_id: Some(actor.user_id),
                ..original.clone()
            },
            actor,
        )?;
        for state in environments_of(conn, source)? {
            diesel::update(feature_environments::table.find((name, state.environment_name.as_str())))
                .set(feature_environments::variants.eq(&state.variants))
                .execute(conn)?;
            for strategy in strategies::list(conn, source, &state.environment_name)? {
                let mut parameters: std::collections::BTreeMap<String, String> = strategy
                    .parameters
                    .iter()
                    .map(|(key, value)| (key.to_owned(), value.to_owned()))
                    .collect();
                if replace_group_id && let Some(group) = parameters.get_mut("groupId") {
                    *group = name.to_owned();
                }
                let input = strategies::StrategyInput {
                    name: strategy.name,
                    title: strategy.title,
                    disabled: strategy.disabled.unwrap_or(false),
                    sort_order: strategy.sort_order.and_then(|order| i32::try_from(order).ok()),
                    parameters,
                    constraints: strategy.constraints,
                    segments: strategy
                        .segments
                        .iter()
                        .filter_map(|id| i32::try_from(*id).ok())
                        .collect(),
                    variants: strategy.variants,
                };
                strategies::add(conn, project, name, &state.environment_name, &input, actor, now)?;
            }
        }
        if let Some(parent) = crate::queries::dependencies::of(conn, source)? {
            crate::queries::dependencies::set(
                conn,
                project,
                name,
                &parent.parent,
                parent.enabled,
                &parent.variants()?,
                actor,
                now,
            )?;
        }
        Ok(copy)
    })
}
