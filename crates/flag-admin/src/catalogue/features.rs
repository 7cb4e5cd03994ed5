//! Features: create, list, read, and switch on and off in an environment.

pub mod types;

use std::collections::HashMap;

use flag_store::models::FeatureRow;
use flag_store::queries;
use flag_store::queries::features::FeatureMetadata;

use crate::catalogue::features::types::{
    BulkSwitch, CloneFeature, CollaboratorsOut, CreateFeature, DependencyOut, EnvironmentStrategyOut,
    FeatureDetailOut, FeatureEnvironmentOut, FeatureEnvironmentSummary, FeatureInEnvironmentOut,
    FeatureListItem, FeatureOut, FeatureQuery, FeatureStrategyOut, FeatureTypeOut, FeatureTypesOut,
    FeaturesOut, LifecycleOut, SwitchQuery, UpdateFeature, UpdateLifetime, ValidateFeatureName,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::{Permission, ResourceName};
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may create a flag.
pub const CREATE: Access = Access::Write(Permission::CreateFeature);

/// Creates a feature in `project`.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: CreateFeature,
) -> Result<FeatureOut, AdminError> {
    crate::catalogue::projects::check_flag_name(ctx, &project, request.name.as_str()).await?;
    let creator = caller.actor().user_id;
    let row = caller
        .write(ctx, move |conn, actor, now| {
            let row = FeatureRow {
                name: request.name.into_string(),
                project_id: project,
                feature_type: request.feature_type.as_str().to_owned(),
                description: request.description,
                impression_data: request.impression_data,
                stale: false,
                archived_at: None,
                created_at: now,
                created_by_user_id: Some(creator),
            };
            queries::features::create(conn, &row, actor)
        })
        .await?;
    Ok(FeatureOut::from(row))
}

/// Who may list a project's flags.
pub const LIST: Access = Access::Read;

/// The features of `project`, each with its switch, variant count and strategies in the
/// environments the caller may read, by environment sort order.
pub async fn list(ctx: &Runtime, caller: &Caller, project: String) -> Result<FeaturesOut, AdminError> {
    let (rows, states) = db::run(&ctx.store, move |conn| {
        queries::projects::get(conn, &project)?;
        Ok((
            queries::features::list(conn, &project)?,
            queries::projects::flags_in_environments(conn, &project)?,
        ))
    })
    .await?;
    let mut by_feature: HashMap<String, Vec<FeatureEnvironmentSummary>> = HashMap::new();
    for flag in states
        .into_iter()
        .filter(|flag| caller.may_read(&flag.state.environment_name))
    {
        let variant_count = flag.state.variants()?.len();
        by_feature
            .entry(flag.state.feature_name)
            .or_default()
            .push(FeatureEnvironmentSummary {
                name: flag.state.environment_name,
                enabled: flag.state.enabled,
                environment_type: flag.environment_type,
                sort_order: flag.sort_order,
                variant_count,
                last_seen_at: flag.state.last_seen_at.map(crate::runtime::input::iso),
                has_strategies: flag.has_strategies,
                has_enabled_strategies: flag.has_enabled_strategies,
            });
    }
    Ok(FeaturesOut {
        version: 2,
        features: rows
            .into_iter()
            .map(|row| FeatureListItem {
                environments: by_feature.remove(&row.name).unwrap_or_default(),
                feature: FeatureOut::from(row),
            })
            .collect(),
    })
}

/// Who may read a flag.
pub const GET: Access = Access::Read;

/// A flag as Unleash's read shows it: its state, strategies (and, when asked, variants) in each
/// environment of its project that the caller may read, with last hour's usage there, its
/// parents and children, lifecycle stage, creator and collaborators. An archived flag is not
/// found.
pub async fn get(
    ctx: &Runtime,
    caller: &Caller,
    (project, name): (String, String),
    query: FeatureQuery,
) -> Result<FeatureDetailOut, AdminError> {
    let with_variants = query.variant_environments.as_deref() == Some("true");
    if let Some(at) = &query.at {
        let at = crate::runtime::domain::Timestamp::read(at)
            .map_err(|message| AdminError::invalid("/at", format!("/at: {message}")))?
            .0;
        return get_at(ctx, caller, (project, name), with_variants, at).await;
    }
    let since = ctx.now() - chrono::Duration::hours(1);
    let read = db::run(&ctx.store, move |conn| {
        let row = queries::features::get(conn, &project, &name)?;
        if row.archived_at.is_some() {
            return Err(flag_store::StoreError::NotFound {
                entity: "feature flag with name",
                key: name,
            });
        }
        let writers = queries::events::writers_of_feature(conn, &name)?;
        let mut ids: Vec<i32> = writers.iter().filter_map(|(id, _)| *id).collect();
        ids.extend(row.created_by_user_id);
        Ok(Detail {
            states: queries::features::environments_of(conn, &name)?,
            environments: queries::environments::list(conn)?,
            strategies: queries::strategies::by_environment(conn, &name)?,
            usage: queries::client_metrics::usage_of_feature(conn, &name, since, None)?,
            parent: queries::dependencies::of(conn, &name)?,
            children: queries::dependencies::children_of(conn, &name)?,
            stages: queries::lifecycle::of(conn, std::slice::from_ref(&name))?,
            users: queries::users::with_ids(conn, &ids)?,
            writers,
            row,
        })
    })
    .await?;
    let Detail {
        row,
        states,
        environments,
        mut strategies,
        usage,
        parent,
        children,
        stages,
        users,
        writers,
    } = read;
    let mut shown: Vec<FeatureEnvironmentOut> = Vec::new();
    for state in states
        .into_iter()
        .filter(|state| caller.may_read(&state.environment_name))
    {
        let environment = environments
            .iter()
            .find(|environment| environment.name == state.environment_name);
        let (yes, no) = usage
            .iter()
            .filter(|entry| entry.environment == state.environment_name)
            .fold((0, 0), |(yes, no), entry| (yes + entry.yes, no + entry.no));
        shown.push(FeatureEnvironmentOut {
            last_seen_at: state.last_seen_at.map(crate::runtime::input::iso),
            variants: if with_variants {
                Some(state.variants()?)
            } else {
                None
            },
            enabled: state.enabled,
            yes,
            no,
            environment_type: environment
                .map(|environment| environment.environment_type.clone())
                .unwrap_or_default(),
            sort_order: environment.map_or(0, |environment| environment.sort_order),
            strategies: strategies
                .remove(&state.environment_name)
                .unwrap_or_default()
                .into_iter()
                .map(FeatureStrategyOut::of)
                .collect(),
            name: state.environment_name,
        });
    }
    shown.sort_by(|left, right| {
        left.sort_order
            .cmp(&right.sort_order)
            .then_with(|| left.name.cmp(&right.name))
    });
    let user = |id: i32| users.iter().find(|user| user.id == id);
    Ok(FeatureDetailOut {
        environments: shown,
        impression_data: row.impression_data,
        description: row.description,
        project: row.project_id,
        stale: row.stale,
        created_at: crate::runtime::input::iso(row.created_at),
        created_by: row
            .created_by_user_id
            .map(|id| crate::catalogue::features::types::person(id, user(id), "")),
        feature_type: row.feature_type,
        archived: false,
        dependencies: match parent {
            Some(parent) => vec![DependencyOut {
                variants: parent.variants()?,
                feature: parent.parent,
                enabled: parent.enabled,
            }],
            None => Vec::new(),
        },
        children,
        lifecycle: current_stage(&stages),
        links: Vec::new(),
        collaborators: CollaboratorsOut {
            users: writers
                .iter()
                .filter_map(|(id, written)| {
                    id.map(|id| crate::catalogue::features::types::person(id, user(id), written))
                })
                .collect(),
        },
        as_of: None,
        name: row.name,
    })
}

/// [`get`] at a past moment: the flag as the history holds it then.
async fn get_at(
    ctx: &Runtime,
    caller: &Caller,
    (project, name): (String, String),
    with_variants: bool,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<FeatureDetailOut, AdminError> {
    let missing = {
        let name = name.clone();
        move || flag_store::StoreError::NotFound {
            entity: "feature flag with name",
            key: name,
        }
    };
    let now = ctx.now_utc();
    let read = db::run(&ctx.store, move |conn| {
        queries::snapshot(conn, |conn| {
            let revision = match crate::catalogue::history::revision_at(conn, at, now)? {
                Ok(revision) => revision,
                Err(message) => return Ok(Err(message)),
            };
            let flag = queries::history::flag_at(conn, &name, revision)?
                .filter(|flag| flag.project == project)
                .ok_or_else(missing)?;
            let row = queries::features::find(conn, &name)?;
            let writers = queries::events::writers_of_feature(conn, &name)?;
            let mut ids: Vec<i32> = writers.iter().filter_map(|(id, _)| *id).collect();
            ids.extend(row.as_ref().and_then(|row| row.created_by_user_id));
            Ok(Ok((
                revision,
                flag,
                row,
                queries::environments::list(conn)?,
                queries::history::children_at(conn, &name, revision)?,
                queries::lifecycle::of(conn, std::slice::from_ref(&name))?,
                queries::users::with_ids(conn, &ids)?,
                writers,
            )))
        })
    })
    .await?;
    let (revision, flag, row, environments, children, stages, users, writers) =
        read.map_err(|message| AdminError::invalid("/at", format!("/at {message}")))?;
    let then = at.naive_utc();
    let stages: Vec<_> = stages
        .into_iter()
        .filter(|stage| stage.created_at <= then)
        .collect();
    let Some(first) = flag.environments.first().map(|(_, _, feature)| feature.clone()) else {
        return Err(AdminError::from(flag_store::StoreError::NotFound {
            entity: "feature flag with name",
            key: String::new(),
        }));
    };
    let mut shown: Vec<FeatureEnvironmentOut> = flag
        .environments
        .into_iter()
        .filter(|(environment, in_project, _)| *in_project && caller.may_read(environment))
        .map(|(environment, _, feature)| {
            let known = environments.iter().find(|known| known.name == environment);
            FeatureEnvironmentOut {
                last_seen_at: None,
                variants: with_variants.then_some(feature.variants),
                enabled: feature.enabled,
                yes: 0,
                no: 0,
                environment_type: known
                    .map(|known| known.environment_type.clone())
                    .unwrap_or_default(),
                sort_order: known.map_or(0, |known| known.sort_order),
                strategies: feature
                    .strategies
                    .into_iter()
                    .map(FeatureStrategyOut::of)
                    .collect(),
                name: environment,
            }
        })
        .collect();
    shown.sort_by(|left, right| {
        left.sort_order
            .cmp(&right.sort_order)
            .then_with(|| left.name.cmp(&right.name))
    });
    let user = |id: i32| users.iter().find(|user| user.id == id);
    Ok(FeatureDetailOut {
        environments: shown,
        impression_data: first.impression_data.unwrap_or(false),
        description: first.description,
        project: flag.project,
        stale: first.stale.unwrap_or(false),
        created_at: row
            .as_ref()
            .map(|row| crate::runtime::input::iso(row.created_at))
            .unwrap_or_default(),
        created_by: row
            .as_ref()
            .and_then(|row| row.created_by_user_id)
            .map(|id| crate::catalogue::features::types::person(id, user(id), "")),
        feature_type: first.feature_type.unwrap_or_default(),
        archived: flag.archived,
        dependencies: first
            .dependencies
            .into_iter()
            .map(|dependency| DependencyOut {
                variants: dependency.variants.unwrap_or_default(),
                enabled: dependency.enabled.unwrap_or(true),
                feature: dependency.feature,
            })
            .collect(),
        children,
        lifecycle: current_stage(&stages),
        links: Vec::new(),
        collaborators: CollaboratorsOut {
            users: writers
                .iter()
                .filter_map(|(id, written)| {
                    id.map(|id| crate::catalogue::features::types::person(id, user(id), written))
                })
                .collect(),
        },
        as_of: Some(crate::catalogue::features::types::AsOfOut {
            at: at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            revision,
        }),
        name: first.name,
    })
}

/// What a flag's read gathers in one visit to the database.
struct Detail {
    row: FeatureRow,
    states: Vec<flag_store::models::FeatureEnvironmentRow>,
    environments: Vec<flag_store::models::EnvironmentRow>,
    strategies: HashMap<String, Vec<flag_eval::Strategy>>,
    usage: Vec<flag_store::models::UsageRow>,
    parent: Option<flag_store::models::DependencyRow>,
    children: Vec<String>,
    stages: Vec<flag_store::models::LifecycleRow>,
    users: Vec<flag_store::models::UserRow>,
    writers: Vec<(Option<i32>, String)>,
}

/// A flag's current lifecycle stage, as Unleash picks it: the first it entered of archived,
/// completed, live, pre-live and initial.
pub fn current_stage(stages: &[flag_store::models::LifecycleRow]) -> Option<LifecycleOut> {
    ["archived", "completed", "live", "pre-live", "initial"]
        .into_iter()
        .find_map(|stage| stages.iter().find(|row| row.stage == stage))
        .map(|row| LifecycleOut {
            stage: row.stage.clone(),
            status: row.status.clone(),
            entered_stage_at: crate::runtime::input::iso(row.created_at),
        })
}

/// Who may change a flag.
pub const UPDATE: Access = Access::Write(Permission::UpdateFeature);

/// Updates a flag of `project`: every field is set, one left out of the request takes its
/// default, as in Unleash. A flag cannot be renamed or moved.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    (project, name): (String, String),
    request: UpdateFeature,
) -> Result<FeatureOut, AdminError> {
    if request.name.as_ref().is_some_and(|given| *given != name) {
        return Err(AdminError::invalid("/name", "Cannot change name of feature flag"));
    }
    let metadata = FeatureMetadata {
        feature_type: request.feature_type.as_str().to_owned(),
        description: request.description.filter(|text| !text.is_empty()),
        stale: request.stale,
        impression_data: request.impression_data,
        archived: request.archived,
    };
    write_metadata(ctx, caller, project, name, metadata, false).await
}

/// Who may change a flag with a JSON Patch.
pub const PATCH: Access = Access::Write(Permission::UpdateFeature);

/// Changes a flag of `project` with a JSON Patch over `{name, description, type, project, stale,
/// createdAt, impressionData, archivedAt?, archived}`; the name, project and times cannot
/// change, and variants have operations of their own.
pub async fn patch(
    ctx: &Runtime,
    caller: &Caller,
    (project, name): (String, String),
    operations: json_patch::Patch,
) -> Result<FeatureOut, AdminError> {
    if operations
        .iter()
        .any(|operation| operation.path().as_str().contains("/variants"))
    {
        return Err(AdminError::InvalidOperation(
            "Changing variants is done via PATCH operation to /api/admin/projects/:project/features/:feature/variants"
                .into(),
        ));
    }
    let (read_project, read_name) = (project.clone(), name.clone());
    let row = db::run(&ctx.store, move |conn| {
        queries::features::get(conn, &read_project, &read_name)
    })
    .await?;
    let mut document = queries::features::feature_json(&row);
    crate::runtime::input::apply_patch(&mut document, &operations).map_err(AdminError::bad_request)?;
    let patched: UpdateFeature = crate::runtime::input::parse_value(document)?;
    let metadata = FeatureMetadata {
        feature_type: patched.feature_type.as_str().to_owned(),
        description: patched.description.filter(|text| !text.is_empty()),
        stale: patched.stale,
        impression_data: patched.impression_data,
        archived: patched.archived,
    };
    if patched.name.as_ref().is_some_and(|given| *given != name) {
        return Err(AdminError::invalid("/name", "Cannot change name of feature flag"));
    }
    write_metadata(ctx, caller, project, name, metadata, true).await
}

async fn write_metadata(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    name: String,
    metadata: FeatureMetadata,
    stale_events: bool,
) -> Result<FeatureOut, AdminError> {
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::features::update_metadata(conn, &project, &name, &metadata, stale_events, actor, now)
        })
        .await?;
    Ok(FeatureOut::from(row))
}

/// Who may check a new flag's name.
pub const VALIDATE_NAME: Access = Access::Read;

/// Checks that `name` could name a new flag: URL-friendly and not taken, by a live or an
/// archived flag.
pub async fn validate_name(ctx: &Runtime, request: ValidateFeatureName) -> Result<(), AdminError> {
    let name =
        ResourceName::try_from(request.name.as_str()).map_err(|error| AdminError::invalid("/name", error))?;
    let existing = db::run(&ctx.store, move |conn| {
        queries::features::find(conn, name.as_str())
    })
    .await?;
    match existing {
        None => Ok(()),
        Some(row) if row.archived_at.is_some() => Err(AdminError::NameExists(
            "An archived flag with that name already exists".into(),
        )),
        Some(_) => Err(AdminError::NameExists(
            "A flag with that name already exists".into(),
        )),
    }
}

/// Who may list the flag types.
pub const TYPES: Access = Access::Read;

/// The feature types, in Unleash's order.
pub async fn types(ctx: &Runtime) -> Result<FeatureTypesOut, AdminError> {
    let rows = db::run(&ctx.store, queries::feature_types::list).await?;
    Ok(FeatureTypesOut {
        version: 1,
        types: rows.into_iter().map(FeatureTypeOut::from).collect(),
    })
}

/// Who may change a flag type's expected lifetime.
pub const SET_LIFETIME: Access = Access::Admin;

/// Sets after how many days a flag of type `id` (in any letter case) is potentially stale;
/// `0` means never.
pub async fn set_lifetime(
    ctx: &Runtime,
    caller: &Caller,
    id: String,
    request: UpdateLifetime,
) -> Result<FeatureTypeOut, AdminError> {
    let days = match request.lifetime_days {
        None | Some(0) => None,
        Some(days) => Some(
            i32::try_from(days)
                .map_err(|_| AdminError::invalid("/lifetimeDays", "must be at most 2147483647"))?,
        ),
    };
    let id = id.to_lowercase();
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::feature_types::set_lifetime(conn, &id, days, actor, now).map_err(|error| match error {
                flag_store::StoreError::NotFound { .. } => flag_store::StoreError::NotFound {
                    entity: "feature type",
                    key: id.clone(),
                },
                other => other,
            })
        })
        .await?;
    Ok(FeatureTypeOut::from(row))
}

/// Who may read a flag in one environment.
pub const ENVIRONMENT: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// A flag of `project` in one environment, with its strategies there.
pub async fn environment(
    ctx: &Runtime,
    caller: &Caller,
    (project, name, environment): (String, String, String),
) -> Result<FeatureInEnvironmentOut, AdminError> {
    caller.require_in(&environment)?;
    let (state, strategies) = db::run(&ctx.store, move |conn| {
        queries::features::get(conn, &project, &name)?;
        let state = queries::features::environment(conn, &name, &environment)?;
        let strategies = queries::strategies::list(conn, &name, &environment)?;
        Ok((state, strategies))
    })
    .await?;
    Ok(FeatureInEnvironmentOut {
        strategies: strategies
            .into_iter()
            .map(|strategy| EnvironmentStrategyOut {
                id: strategy.id.unwrap_or_default(),
                feature_name: state.feature_name.clone(),
                title: strategy.title,
                parameters: strategy.parameters,
                constraints: strategy.constraints,
                variants: strategy.variants,
                sort_order: strategy.sort_order.unwrap_or(0),
                disabled: strategy.disabled.unwrap_or(false),
                name: strategy.name,
            })
            .collect(),
        name: state.feature_name,
        environment: state.environment_name,
        enabled: state.enabled,
    })
}

/// Who may switch a flag on or off in an environment.
pub const SWITCH_WITH: Access = Access::WriteIn(Permission::UpdateFeatureEnvironment);

/// Switches a flag of `project` on or off in `environment`; switching on with
/// `activate_disabled` enables its disabled strategies there instead of adding the default one.
pub async fn switch_with(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): (String, String, String),
    enabled: bool,
    query: SwitchQuery,
) -> Result<(), AdminError> {
    let how = query.switch(enabled);
    caller.require_in(&environment)?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::features::switch(conn, &project, &feature, &environment, how, actor, now)
        })
        .await
}

/// Who may switch several flags on or off in an environment.
pub const SWITCH_MANY: Access = Access::WriteIn(Permission::UpdateFeatureEnvironment);

/// Switches several flags of `project` in `environment` at once: all or none.
pub async fn switch_many(
    ctx: &Runtime,
    caller: &Caller,
    (project, environment): (String, String),
    request: BulkSwitch,
    enabled: bool,
    query: SwitchQuery,
) -> Result<(), AdminError> {
    let how = query.switch(enabled);
    caller.require_in(&environment)?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::features::switch_many(conn, &project, &request.features, &environment, how, actor, now)
        })
        .await
}

/// Who may list the flags a flag may depend on.
pub const PARENT_OPTIONS: Access = Access::Read;

/// The flags of `child`'s project that could be its parent: live, not `child`, and without a
/// parent of their own.
pub async fn parent_options(ctx: &Runtime, child: String) -> Result<Vec<String>, AdminError> {
    db::run(&ctx.store, move |conn| {
        queries::dependencies::parent_options(conn, &child)
    })
    .await
}

/// Who may list a parent flag's variants.
pub const PARENT_VARIANTS: Access = Access::Read;

/// The variant names of `parent` in any environment, sorted, for a dependency on one of them.
pub async fn parent_variants(ctx: &Runtime, parent: String) -> Result<Vec<String>, AdminError> {
    let states = db::run(&ctx.store, move |conn| {
        queries::features::environments_of(conn, &parent)
    })
    .await?;
    let mut names = std::collections::BTreeSet::new();
    for state in states {
        for variant in state.variants()? {
            names.insert(variant.name);
        }
    }
    Ok(names.into_iter().collect())
}

/// Who may ask whether a project's flags have dependencies.
pub const HAS_DEPENDENCIES: Access = Access::Read;

/// Whether any flag of `project` depends on another.
pub async fn has_dependencies(ctx: &Runtime, project: String) -> Result<bool, AdminError> {
    db::run(&ctx.store, move |conn| {
        queries::dependencies::exist_in(conn, &project)
    })
    .await
}

/// Who may copy a flag.
pub const CLONE: Access = Access::Write(Permission::CreateFeature);

/// Copies a live flag of `project` under a new name, switched off everywhere.
pub async fn clone(
    ctx: &Runtime,
    caller: &Caller,
    (project, source): (String, String),
    request: CloneFeature,
) -> Result<FeatureOut, AdminError> {
    crate::catalogue::projects::check_flag_name(ctx, &project, request.name.as_str()).await?;
    let row = caller
        .write(ctx, move |conn, actor, now| {
            queries::features::clone(
                conn,
                &project,
                &source,
                request.name.as_str(),
                request.replace_group_id,
                actor,
                now,
            )
        })
        .await?;
    Ok(FeatureOut::from(row))
}
