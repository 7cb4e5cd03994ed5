//! Change requests: an environment of a project may take changes only through requests that
//! other people approve. The rule is kept here; the store refuses every direct write it covers,
//! whatever interface asks for it (`flag_store::queries::change_requests::guard`).

pub mod types;

/// Where a request is in its life.
pub use flag_store::models::ChangeRequestState as State;

use flag_store::queries;

use crate::AdminError;
use crate::catalogue::change_requests::types::{ChangeRequestEnvironmentConfig, UpdateChangeRequestConfigIn};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::runtime::{Runtime, db};

/// The fewest and most approvals a rule may ask for.
pub const APPROVALS: std::ops::RangeInclusive<i64> = 1..=10;

/// Who may read which environments of a project take changes only through change requests.
pub const CONFIG: Access = Access::Read;

/// The environments of `project`, each with its rule.
pub async fn config(
    ctx: &Runtime,
    _caller: &Caller,
    project: String,
) -> Result<Vec<ChangeRequestEnvironmentConfig>, AdminError> {
    db::run(&ctx.store, move |conn| {
        queries::projects::get(conn, &project)?;
        let rules = queries::change_requests::rules(conn, &project)?;
        let used = queries::projects::environments_of(conn, &project)?;
        let environments = queries::environments::list(conn)?;
        Ok(environments
            .into_iter()
            .filter(|environment| used.contains(&environment.name))
            .map(|environment| {
                let rule = rules.iter().find(|rule| rule.environment == environment.name);
                ChangeRequestEnvironmentConfig {
                    change_request_enabled: rule.is_some(),
                    required_approvals: rule.map(|rule| rule.required_approvals),
                    environment: environment.name,
                    environment_type: environment.environment_type,
                }
            })
            .collect())
    })
    .await
}

/// Who may turn change requests on or off: the project's owners, and administrators.
pub const SET_CONFIG: Access = Access::Write(Permission::UpdateProject);

/// Turns change requests on (with the approvals they need, brought within [`APPROVALS`]) or off
/// for `environment` of `project`.
pub async fn set_config(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    environment: String,
    request: UpdateChangeRequestConfigIn,
) -> Result<(), AdminError> {
    let approvals = request
        .change_requests_enabled
        .then(|| {
            request
                .required_approvals
                .unwrap_or(1)
                .clamp(*APPROVALS.start(), *APPROVALS.end())
        })
        .map(|approvals| i32::try_from(approvals).unwrap_or(1));
    caller
        .write(ctx, move |conn, actor, now| {
            queries::change_requests::set_rule(conn, &project, &environment, approvals, actor, now)
        })
        .await?;
    Ok(())
}

/// A change, parsed and checked once, at the edge, by the same rules as the direct write it
/// stands for.
#[derive(Debug, Clone, PartialEq)]
enum Change {
    UpdateEnabled {
        enabled: bool,
        activate_disabled: bool,
    },
    AddStrategy(serde_json::Value),
    UpdateStrategy {
        id: String,
        strategy: serde_json::Value,
    },
    DeleteStrategy {
        id: String,
    },
    ReorderStrategy(Vec<(String, i32)>),
    PatchVariant(Vec<flag_eval::Variant>),
    ArchiveFeature,
    AddDependency {
        parent: String,
        enabled: bool,
        variants: Vec<String>,
    },
    DeleteDependency,
    UpdateSegment {
        id: i32,
        segment: serde_json::Value,
    },
}

/// The actions a request can hold, as Unleash names them.
pub const ACTIONS: [&str; 10] = [
    "updateEnabled",
    "addStrategy",
    "updateStrategy",
    "deleteStrategy",
    "reorderStrategy",
    "patchVariant",
    "archiveFeature",
    "addDependency",
    "deleteDependency",
    "updateSegment",
];

/// `payload` without what names its target (`id`) or a read adds to it (`snapshot`): the body
/// the direct write takes.
fn target_removed(payload: &serde_json::Value) -> serde_json::Value {
    let mut body = payload.clone();
    if let Some(fields) = body.as_object_mut() {
        fields.remove("id");
        fields.remove("snapshot");
    }
    body
}

fn payload_field<'a>(
    payload: &'a serde_json::Value,
    field: &str,
    at: &str,
) -> Result<&'a serde_json::Value, AdminError> {
    payload.get(field).ok_or_else(|| {
        AdminError::invalid(
            format!("{at}/payload/{field}"),
            format!("{at}/payload/{field} is required"),
        )
    })
}

impl Change {
    /// The change `action` with `payload` makes to `feature`, checked; `at` is where it stands in
    /// the request's body, for the error.
    fn parse(action: &str, payload: &serde_json::Value, feature: &str, at: &str) -> Result<Self, AdminError> {
        let bad = |message: String| AdminError::invalid(format!("{at}/payload"), message);
        let strategy = |body: serde_json::Value| -> Result<serde_json::Value, AdminError> {
            let request: crate::catalogue::strategies::types::StrategyRequest =
                serde_json::from_value(body.clone())
                    .map_err(|error| bad(format!("not a strategy: {error}")))?;
            request.into_input(feature)?;
            Ok(body)
        };
        Ok(match action {
            "updateEnabled" => Self::UpdateEnabled {
                enabled: payload_field(payload, "enabled", at)?
                    .as_bool()
                    .ok_or_else(|| bad("enabled must be true or false".into()))?,
                activate_disabled: payload
                    .get("shouldActivateDisabledStrategies")
                    .and_then(serde_json::Value::as_bool)
                    .unwrap_or(false),
            },
            "addStrategy" => Self::AddStrategy(strategy(target_removed(payload))?),
            "updateStrategy" => Self::UpdateStrategy {
                id: payload_field(payload, "id", at)?
                    .as_str()
                    .ok_or_else(|| bad("id must be a strategy id".into()))?
                    .to_owned(),
                strategy: strategy(target_removed(payload))?,
            },
            "deleteStrategy" => Self::DeleteStrategy {
                id: payload_field(payload, "id", at)?
                    .as_str()
                    .ok_or_else(|| bad("id must be a strategy id".into()))?
                    .to_owned(),
            },
            "reorderStrategy" => {
                let orders: Vec<crate::catalogue::features::types::StrategyOrder> =
                    serde_json::from_value(payload.clone())
                        .map_err(|error| bad(format!("not a list of {{id, sortOrder}}: {error}")))?;
                Self::ReorderStrategy(
                    orders
                        .into_iter()
                        .map(|order| (order.id, order.sort_order))
                        .collect(),
                )
            }
            "patchVariant" => Self::PatchVariant(crate::catalogue::variants::types::environment_variants(
                payload_field(payload, "variants", at)?.clone(),
                &format!("{at}/payload/variants"),
            )?),
            "archiveFeature" => Self::ArchiveFeature,
            "addDependency" => {
                let dependency: crate::catalogue::dependencies::types::AddDependency =
                    serde_json::from_value(payload.clone())
                        .map_err(|error| bad(format!("not a dependency: {error}")))?;
                Self::AddDependency {
                    parent: dependency.feature,
                    enabled: dependency.enabled.unwrap_or(true),
                    variants: dependency.variants,
                }
            }
            "deleteDependency" => Self::DeleteDependency,
            "updateSegment" => {
                let id = payload_field(payload, "id", at)?
                    .as_i64()
                    .and_then(|id| i32::try_from(id).ok())
                    .ok_or_else(|| bad("id must be a segment's id".into()))?;
                let segment = target_removed(payload);
                segment_input(&segment, "", chrono::NaiveDateTime::default()).map_err(
                    |error| match error {
                        SegmentError::Refused(error) => error,
                        SegmentError::Store(error) => AdminError::from(error),
                    },
                )?;
                Self::UpdateSegment { id, segment }
            }
            other => {
                return Err(AdminError::invalid(
                    format!("{at}/action"),
                    format!(
                        "{other:?} is not an action a change request holds; one of {}",
                        ACTIONS.join(", ")
                    ),
                ));
            }
        })
    }

    /// The permission its direct write needs.
    fn permission(&self) -> Permission {
        match self {
            Self::UpdateEnabled { .. } => Permission::UpdateFeatureEnvironment,
            Self::AddStrategy(_) => Permission::CreateFeatureStrategy,
            Self::UpdateStrategy { .. } | Self::ReorderStrategy(_) => Permission::UpdateFeatureStrategy,
            Self::DeleteStrategy { .. } => Permission::DeleteFeatureStrategy,
            Self::PatchVariant(_) => Permission::UpdateFeatureEnvironmentVariants,
            Self::ArchiveFeature => Permission::DeleteFeature,
            Self::AddDependency { .. } | Self::DeleteDependency => Permission::UpdateFeatureDependency,
            Self::UpdateSegment { .. } => Permission::UpdateSegment,
        }
    }

    /// What it changes, as it is now: the flag's switch, the strategy, the order, the variants;
    /// `None` for what has no earlier state to be overtaken (a new strategy, archiving, a
    /// dependency). `Ok(None)` also when a strategy is gone: [`Change::conflict`] says so.
    fn snapshot(
        &self,
        conn: &mut flag_store::DbConnection,
        (project, feature, environment): (&str, &str, &str),
    ) -> Result<Option<serde_json::Value>, flag_store::StoreError> {
        Ok(match self {
            Self::UpdateEnabled { .. } => Some(serde_json::json!({
                "enabled": queries::features::environment(conn, feature, environment)?.enabled
            })),
            Self::UpdateStrategy { id, .. } | Self::DeleteStrategy { id } => {
                match queries::strategies::by_id(conn, id) {
                    Ok((row, strategy))
                        if row.feature_name == feature && row.environment_name == environment =>
                    {
                        Some(serde_json::to_value(strategy).map_err(|source| {
                            flag_store::StoreError::Encode {
                                column: "snapshot",
                                source,
                            }
                        })?)
                    }
                    Ok(_) | Err(flag_store::StoreError::NotFound { .. }) => None,
                    Err(error) => return Err(error),
                }
            }
            Self::ReorderStrategy(_) => Some(serde_json::json!(
                queries::strategies::list(conn, feature, environment)?
                    .into_iter()
                    .map(|row| row.id)
                    .collect::<Vec<_>>()
            )),
            Self::PatchVariant(_) => Some(
                serde_json::to_value(queries::variants::get(conn, project, feature, environment)?).map_err(
                    |source| flag_store::StoreError::Encode {
                        column: "snapshot",
                        source,
                    },
                )?,
            ),
            Self::UpdateSegment { id, .. } => match queries::segments::get(conn, *id) {
                Ok(row) => Some(queries::segments::segment_json(&row)?),
                Err(flag_store::StoreError::NotFound { .. }) => None,
                Err(error) => return Err(error),
            },
            Self::AddStrategy(_)
            | Self::ArchiveFeature
            | Self::AddDependency { .. }
            | Self::DeleteDependency => None,
        })
    }

    /// Why it cannot be applied as made, if what it changes moved since `then`.
    fn conflict(
        &self,
        conn: &mut flag_store::DbConnection,
        place: (&str, &str, &str),
        then: Option<&serde_json::Value>,
    ) -> Result<Option<String>, flag_store::StoreError> {
        let now = self.snapshot(conn, place)?;
        Ok(match (self, then, now) {
            (Self::UpdateStrategy { .. } | Self::DeleteStrategy { .. }, Some(_), None) => {
                Some("Strategy has been deleted".into())
            }
            (Self::UpdateSegment { .. }, Some(_), None) => Some("Segment has been deleted".into()),
            (_, Some(then), Some(now)) if *then != now => Some(
                match self {
                    Self::UpdateEnabled { .. } => {
                        "The flag was switched in this environment since this change was made"
                    }
                    Self::ReorderStrategy(_) => "The strategies changed since this change was made",
                    Self::PatchVariant(_) => "The variants changed since this change was made",
                    Self::UpdateSegment { .. } => "The segment changed since this change was made",
                    _ => "The strategy changed since this change was made",
                }
                .into(),
            ),
            _ => None,
        })
    }

    /// Makes the change, with the same store writes as its direct operation.
    fn make(
        &self,
        conn: &mut flag_store::DbConnection,
        (project, feature, environment): (&str, &str, &str),
        actor: &flag_store::models::Actor,
        now: chrono::NaiveDateTime,
    ) -> Result<(), flag_store::StoreError> {
        let refused = |error: AdminError| flag_store::StoreError::Rejected {
            message: error.to_string(),
        };
        let input = |body: &serde_json::Value| {
            serde_json::from_value::<crate::catalogue::strategies::types::StrategyRequest>(body.clone())
                .map_err(|error| flag_store::StoreError::Rejected {
                    message: error.to_string(),
                })?
                .into_input(feature)
                .map_err(refused)
        };
        match self {
            Self::UpdateEnabled {
                enabled,
                activate_disabled,
            } => queries::features::switch(
                conn,
                project,
                feature,
                environment,
                queries::features::Switch {
                    enabled: *enabled,
                    activate_disabled: *activate_disabled,
                },
                actor,
                now,
            ),
            Self::AddStrategy(body) => {
                queries::strategies::add(conn, project, feature, environment, &input(body)?, actor, now)
                    .map(drop)
            }
            Self::UpdateStrategy { id, strategy } => queries::strategies::update(
                conn,
                project,
                feature,
                environment,
                id,
                &input(strategy)?,
                actor,
                now,
            )
            .map(drop),
            Self::DeleteStrategy { id } => {
                queries::strategies::delete(conn, project, feature, environment, id, actor, now)
            }
            Self::ReorderStrategy(orders) => {
                queries::strategies::set_sort_order(conn, project, feature, environment, orders, actor, now)
            }
            Self::PatchVariant(variants) => {
                let variants = variants.clone();
                queries::variants::change_in_environment::<std::convert::Infallible>(
                    conn,
                    (project, feature, environment),
                    actor,
                    now,
                    move |_| Ok(variants),
                )
                .map(drop)
            }
            Self::ArchiveFeature => {
                queries::archive::archive(conn, project, &[feature.to_owned()], actor, now)
            }
            Self::AddDependency {
                parent,
                enabled,
                variants,
            } => queries::dependencies::set(conn, project, feature, parent, *enabled, variants, actor, now),
            Self::DeleteDependency => queries::dependencies::remove(conn, project, feature, actor, now),
            Self::UpdateSegment { id, segment } => {
                let changes = segment_input(segment, &actor.name, now).map_err(|error| match error {
                    SegmentError::Refused(error) => refused(error),
                    SegmentError::Store(error) => error,
                })?;
                queries::segments::update(conn, *id, &changes, actor, now).map(drop)
            }
        }
    }
}

/// Why a segment's payload is not a segment.
enum SegmentError {
    Refused(AdminError),
    Store(flag_store::StoreError),
}

/// A segment's payload as the segment it makes, by the direct update's rules.
fn segment_input(
    body: &serde_json::Value,
    author: &str,
    now: chrono::NaiveDateTime,
) -> Result<flag_store::models::NewSegment, SegmentError> {
    let request: crate::catalogue::segments::types::CreateSegment = serde_json::from_value(body.clone())
        .map_err(|error| {
            SegmentError::Refused(AdminError::invalid("/payload", format!("not a segment: {error}")))
        })?;
    crate::catalogue::segments::check(&request).map_err(SegmentError::Refused)?;
    flag_store::models::NewSegment::new(
        request.name,
        request.description,
        request.project,
        &request.constraints,
        Some(author.to_owned()),
        now,
    )
    .map_err(SegmentError::Store)
}

/// The change a stored row holds.
fn stored(row: &flag_store::models::ChangeRow) -> Result<Change, flag_store::StoreError> {
    let payload = row.payload()?;
    Change::parse(
        &row.action,
        &payload,
        row.feature.as_deref().unwrap_or_default(),
        "",
    )
    .map_err(|error| flag_store::StoreError::Rejected {
        message: format!("change {} no longer reads: {error}", row.id),
    })
}

/// The user behind `caller`: change requests are made, reviewed and applied by people, so that
/// the approvals of a request are those of distinct people.
fn person(caller: &Caller) -> Result<i32, AdminError> {
    person_id(caller.principal())
}

/// The user `principal` is; an API token is no person.
fn person_id(principal: &crate::identity::auth::Principal) -> Result<i32, AdminError> {
    match principal {
        crate::identity::auth::Principal::User { id, .. } => Ok(*id),
        crate::identity::auth::Principal::AdminToken { .. } => {
            Err(AdminError::NoAccess(crate::identity::auth::PEOPLE_ONLY.into()))
        }
    }
}

/// Checks that `principal` holds `permission` in `environment` of `project`.
fn require(
    principal: &crate::identity::auth::Principal,
    permission: Permission,
    project: &str,
    environment: &str,
) -> Result<(), AdminError> {
    if principal.holds(permission, Some(project), Some(environment)) && principal.may_read(environment) {
        Ok(())
    } else {
        Err(AdminError::NoAccess(format!(
            "You don't have the required permissions to perform this operation. To perform this action, you need the \"{permission}\" permission in the \"{environment}\" environment."
        )))
    }
}

/// Who may propose changes: anyone who may make them directly, each change checked against the
/// permission of its own direct write in the environment.
pub const ADD: Access = Access::Person;

/// Adds `changes` to the caller's draft for `environment` of `project` (made when there is
/// none), each checked as its direct write would be and kept with a snapshot of what it changes;
/// the draft.
pub async fn add(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    environment: String,
    changes: Vec<types::ChangeIn>,
) -> Result<types::ChangeRequestOut, AdminError> {
    person(caller)?;
    if changes.is_empty() {
        return Err(AdminError::invalid(
            "/",
            "a change request needs at least one change",
        ));
    }
    let mut parsed = Vec::with_capacity(changes.len());
    for (index, change) in changes.into_iter().enumerate() {
        let at = if index == 0 {
            String::new()
        } else {
            format!("/{index}")
        };
        let made = parse_change(&change, &at)?;
        require(caller.principal(), made.permission(), &project, &environment)?;
        parsed.push((change, made));
    }
    let (place_project, place_environment) = (project.clone(), environment.clone());
    let id = caller
        .write(ctx, move |conn, actor, now| {
            queries::projects::get(conn, &place_project)?;
            if !queries::projects::environments_of(conn, &place_project)?.contains(&place_environment) {
                return Err(flag_store::StoreError::not_found(
                    "environment",
                    format!("{place_environment} in project {place_project}"),
                ));
            }
            let mut new = Vec::with_capacity(parsed.len());
            for (change, made) in &parsed {
                new.push(kept(conn, (&place_project, &place_environment), change, made)?);
            }
            queries::change_requests::add_to_draft(conn, &place_project, &place_environment, &new, actor, now)
        })
        .await?;
    read(ctx, caller, project, id).await
}

/// `change` parsed: a flag's action names its flag, a segment's none.
fn parse_change(change: &types::ChangeIn, at: &str) -> Result<Change, AdminError> {
    let made = Change::parse(
        &change.action,
        &change.payload,
        change.feature.as_deref().unwrap_or_default(),
        at,
    )?;
    match (
        matches!(made, Change::UpdateSegment { .. }),
        change.feature.is_some(),
    ) {
        (true, false) | (false, true) => Ok(made),
        (true, true) => Err(AdminError::invalid(
            format!("{at}/feature"),
            "a segment's change names no flag",
        )),
        (false, false) => Err(AdminError::invalid(
            format!("{at}/feature"),
            format!("{at}/feature is required"),
        )),
    }
}

/// The change as kept: what it changes exists in `project` (a live flag, or a segment of the
/// project, whose change reaches only its project's flags), with a snapshot of it.
fn kept(
    conn: &mut flag_store::DbConnection,
    (project, environment): (&str, &str),
    change: &types::ChangeIn,
    made: &Change,
) -> Result<flag_store::models::NewChange, flag_store::StoreError> {
    let feature = change.feature.as_deref().unwrap_or_default();
    let segment_id = match made {
        Change::UpdateSegment { id, .. } => {
            let segment = queries::segments::get(conn, *id)?;
            if segment.project_id.as_deref() != Some(project) {
                return Err(flag_store::StoreError::InvalidOperation {
                    message: format!(
                        "segment {id} is not a segment of project {project}: only a project's own segments change through its change requests"
                    ),
                });
            }
            Some(*id)
        }
        _ => {
            let flag = queries::features::get(conn, project, feature)?;
            if flag.archived_at.is_some() {
                return Err(flag_store::StoreError::Archived);
            }
            None
        }
    };
    let snapshot = made.snapshot(conn, (project, feature, environment))?;
    if matches!(
        made,
        Change::UpdateStrategy { .. } | Change::DeleteStrategy { .. }
    ) && snapshot.is_none()
    {
        return Err(flag_store::StoreError::not_found(
            "strategy",
            change.payload["id"].to_string(),
        ));
    }
    Ok(flag_store::models::NewChange {
        feature: change.feature.clone(),
        segment_id,
        action: change.action.clone(),
        payload: change.payload.clone(),
        snapshot,
    })
}

/// Who may read change requests: anyone who may read the project.
pub const GET: Access = Access::Person;

/// Request `id` of `project`, with what conflicts. A draft is its author's alone.
pub async fn get(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    id: i32,
) -> Result<types::ChangeRequestOut, AdminError> {
    read(ctx, caller, project, id).await
}

async fn read(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    id: i32,
) -> Result<types::ChangeRequestOut, AdminError> {
    let viewer = person(caller).ok();
    db::run(&ctx.store, move |conn| {
        let record = queries::change_requests::get(conn, id)?;
        if record.request.project != project
            || (record.request.state()? == flag_store::models::ChangeRequestState::Draft
                && viewer != Some(record.request.created_by_user_id))
        {
            return Err(flag_store::StoreError::not_found(
                "change request",
                id.to_string(),
            ));
        }
        view(conn, record)
    })
    .await
}

/// Who may list a project's change requests.
pub const LIST: Access = Access::Person;

/// The newest 300 requests of `project` (drafts only the caller's own); with `open`, only those
/// not yet applied, cancelled or rejected.
pub async fn list(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    open: bool,
) -> Result<Vec<types::ChangeRequestOut>, AdminError> {
    use flag_store::models::ChangeRequestState as State;
    let viewer = person(caller).ok();
    db::run(&ctx.store, move |conn| {
        queries::projects::get(conn, &project)?;
        let states = [State::Draft, State::InReview, State::Approved, State::Scheduled];
        let records = queries::change_requests::of_project(conn, &project, open.then_some(&states[..]), 300)?;
        visible(conn, records, viewer)
    })
    .await
}

fn visible(
    conn: &mut flag_store::DbConnection,
    records: Vec<flag_store::models::ChangeRequestRecord>,
    viewer: Option<i32>,
) -> Result<Vec<types::ChangeRequestOut>, flag_store::StoreError> {
    let mut out = Vec::with_capacity(records.len());
    for record in records {
        if record.request.state()? == flag_store::models::ChangeRequestState::Draft
            && viewer != Some(record.request.created_by_user_id)
        {
            continue;
        }
        out.push(view(conn, record)?);
    }
    Ok(out)
}

/// Who may list the requests pending for a flag.
pub const PENDING_FOR_FEATURE: Access = Access::Person;

/// The requests of `project` not yet closed whose changes touch `feature`.
pub async fn pending_for_feature(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    feature: String,
) -> Result<Vec<types::ChangeRequestOut>, AdminError> {
    let viewer = person(caller).ok();
    db::run(&ctx.store, move |conn| {
        let records = queries::change_requests::pending_for_feature(conn, &project, &feature)?;
        visible(conn, records, viewer)
    })
    .await
}

/// Who may list scheduled requests.
pub const SCHEDULED: Access = Access::Person;

/// The scheduled requests of `project` that change any of `features`; none when none is named.
pub async fn scheduled(
    ctx: &Runtime,
    _caller: &Caller,
    project: String,
    features: Vec<String>,
) -> Result<Vec<types::ScheduledOut>, AdminError> {
    use flag_store::models::ChangeRequestState as State;
    db::run(&ctx.store, move |conn| {
        let records = queries::change_requests::of_project(conn, &project, Some(&[State::Scheduled]), 300)?;
        Ok(records
            .into_iter()
            .filter(|record| {
                record.changes.iter().any(|change| {
                    change
                        .feature
                        .as_ref()
                        .is_some_and(|feature| features.contains(feature))
                })
            })
            .map(|record| types::ScheduledOut {
                id: record.request.id,
                environment: record.request.environment,
                title: record.request.title,
            })
            .collect())
    })
    .await
}

/// A change's payload as read: with the snapshot of what it changes, as Unleash reads it.
fn with_snapshot(mut payload: serde_json::Value, snapshot: Option<serde_json::Value>) -> serde_json::Value {
    if let (Some(snapshot), Some(fields)) = (snapshot, payload.as_object_mut()) {
        fields.insert("snapshot".into(), snapshot);
    }
    payload
}

/// A request as answered: its changes by flag with their conflicts, its reviews and comments,
/// each person by id and name.
fn view(
    conn: &mut flag_store::DbConnection,
    record: flag_store::models::ChangeRequestRecord,
) -> Result<types::ChangeRequestOut, flag_store::StoreError> {
    use crate::runtime::input::iso;
    let request = &record.request;
    let mut names = std::collections::HashMap::new();
    let mut user = |conn: &mut flag_store::DbConnection,
                    id: i32|
     -> Result<types::ChangeRequestUser, flag_store::StoreError> {
        if let std::collections::hash_map::Entry::Vacant(entry) = names.entry(id) {
            let name = match queries::users::get(conn, id) {
                Ok(row) => row.username.or(row.email).or(row.name),
                Err(flag_store::StoreError::NotFound { .. }) => None,
                Err(error) => return Err(error),
            };
            entry.insert(name);
        }
        Ok(types::ChangeRequestUser {
            id,
            username: names.get(&id).cloned().flatten(),
            image_url: None,
        })
    };
    let mut features: Vec<types::FeatureChangesOut> = Vec::new();
    let mut segments: Vec<types::SegmentChangeOut> = Vec::new();
    let open = !request.state()?.is_closed();
    for change in &record.changes {
        if let Some(segment) = change.segment_id {
            let snapshot = change.snapshot()?;
            let name = match queries::segments::get(conn, segment) {
                Ok(row) => row.name,
                Err(flag_store::StoreError::NotFound { .. }) => String::new(),
                Err(error) => return Err(error),
            };
            let place = (request.project.as_str(), "", request.environment.as_str());
            let conflict = match (open, stored(change)) {
                (true, Ok(made)) => made.conflict(conn, place, snapshot.as_ref())?,
                (true, Err(error)) => Some(error.to_string()),
                (false, _) => None,
            };
            segments.push(types::SegmentChangeOut {
                id: change.id,
                action: change.action.clone(),
                name,
                payload: with_snapshot(change.payload()?, snapshot),
                conflict,
                created_by: user(conn, change.created_by_user_id)?,
                created_at: iso(change.created_at),
            });
            continue;
        }
        let feature = change.feature.clone().unwrap_or_default();
        let place = (
            request.project.as_str(),
            feature.as_str(),
            request.environment.as_str(),
        );
        let flag = queries::features::find(conn, &feature)?;
        let feature_conflict = match &flag {
            None => Some("Feature has been deleted".to_owned()),
            Some(flag) if flag.archived_at.is_some() => Some("Feature has been archived".to_owned()),
            Some(_) => None,
        };
        let snapshot = change.snapshot()?;
        let conflict = match (open, &feature_conflict, stored(change)) {
            (true, None, Ok(made)) => made.conflict(conn, place, snapshot.as_ref())?,
            (true, None, Err(error)) => Some(error.to_string()),
            _ => None,
        };
        let out = types::ChangeOut {
            id: change.id,
            action: change.action.clone(),
            payload: with_snapshot(change.payload()?, snapshot),
            conflict,
            created_by: user(conn, change.created_by_user_id)?,
            created_at: iso(change.created_at),
        };
        match features.iter_mut().find(|group| group.name == feature) {
            Some(group) => group.changes.push(out),
            None => features.push(types::FeatureChangesOut {
                name: feature,
                conflict: if open { feature_conflict } else { None },
                changes: vec![out],
            }),
        }
    }
    let mut approvals = Vec::new();
    let mut rejections = Vec::new();
    for review in &record.reviews {
        let out = types::ReviewOut {
            created_by: user(conn, review.user_id)?,
            created_at: iso(review.created_at),
        };
        if review.decision == "approved" {
            approvals.push(out);
        } else {
            rejections.push(out);
        }
    }
    let mut comments = Vec::new();
    for comment in &record.comments {
        comments.push(types::CommentOut {
            id: comment.id,
            text: comment.text.clone(),
            created_by: user(conn, comment.created_by_user_id)?,
            created_at: iso(comment.created_at),
        });
    }
    let state = request.state()?;
    Ok(types::ChangeRequestOut {
        id: request.id,
        title: request.title.clone(),
        environment: request.environment.clone(),
        project: request.project.clone(),
        min_approvals: request.min_approvals,
        state: state.as_str().to_owned(),
        schedule: match (state, request.scheduled_at) {
            (flag_store::models::ChangeRequestState::Scheduled, Some(at)) => Some(types::ScheduleOut {
                scheduled_at: iso(at),
                status: request
                    .schedule_status
                    .clone()
                    .unwrap_or_else(|| "pending".into()),
                reason: request.schedule_reason.clone(),
                failure_reason: request.schedule_reason.clone(),
            }),
            _ => None,
        },
        created_by: user(conn, request.created_by_user_id)?,
        created_at: iso(request.created_at),
        state_timestamps: request.state_timestamps()?,
        features,
        segments,
        approvals,
        rejections,
        comments,
    })
}

/// Who may move a request along: each move is checked against who the caller is to the request
/// (its author, a reviewer with `APPROVE_CHANGE_REQUEST`, an applier with `APPLY_CHANGE_REQUEST`
/// in its environment) by [`change_state`].
pub const CHANGE_STATE: Access = Access::Person;

/// The longest comment.
pub const COMMENT_LENGTH: usize = 1000;

/// Moves request `id` of `project` as `request` asks:
/// - `In review`: its author sends a draft with changes;
/// - `Approved`: a person other than its author, with `APPROVE_CHANGE_REQUEST` in its
///   environment, adds their approval; it is approved once it has as many as it needs;
/// - `Rejected`: the same, at any time before it is applied;
/// - `Applied`: someone with `APPLY_CHANGE_REQUEST` applies an approved (or scheduled) one now,
///   refused when a change conflicts;
/// - `Scheduled`: the same, for a time in the future, when it applies itself;
/// - `Cancelled`: its author, or an administrator.
pub async fn change_state(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    id: i32,
    request: types::ChangeStateIn,
) -> Result<types::ChangeRequestOut, AdminError> {
    use flag_store::models::ChangeRequestState as State;
    use queries::change_requests::Transition;
    person(caller)?;
    let state = State::parse(&request.state).ok_or_else(|| {
        AdminError::invalid(
            "/state",
            format!(
                "{:?} is not a state; one of {}",
                request.state,
                State::ALL.map(State::as_str).join(", ")
            ),
        )
    })?;
    if let Some(comment) = &request.comment
        && comment.chars().count() > COMMENT_LENGTH
    {
        return Err(AdminError::invalid(
            "/comment",
            format!("/comment is longer than {COMMENT_LENGTH} characters"),
        ));
    }
    if state != State::Scheduled && request.scheduled_at.is_some() {
        return Err(AdminError::invalid(
            "/scheduledAt",
            "/scheduledAt goes only with the state Scheduled",
        ));
    }
    let current = read(ctx, caller, project.clone(), id).await?;
    check_move(caller.principal(), &current, state)?;
    let transition = match state {
        State::Draft => {
            return Err(AdminError::invalid(
                "/state",
                "a change request cannot be made a draft again",
            ));
        }
        State::InReview => Transition::SendToReview,
        State::Approved => Transition::Approve,
        State::Rejected => Transition::Reject,
        State::Cancelled => Transition::Cancel,
        State::Scheduled => {
            let at = request
                .scheduled_at
                .ok_or_else(|| AdminError::invalid("/scheduledAt", "/scheduledAt is required to schedule"))?;
            let at = flag_store::time::stored(at.0.naive_utc());
            if at <= ctx.now() {
                return Err(AdminError::invalid(
                    "/scheduledAt",
                    "/scheduledAt must be in the future; apply it now instead",
                ));
            }
            Transition::Schedule { at }
        }
        State::Applied => {
            let applied = apply(ctx, id, queries::change_requests::Applier::Person, caller.actor()).await?;
            if let queries::change_requests::Applied::Failed(reason) = applied {
                return Err(AdminError::Conflict(reason));
            }
            if let Some(comment) = request.comment.filter(|comment| !comment.trim().is_empty()) {
                caller
                    .write(ctx, move |conn, actor, now| {
                        queries::change_requests::comment(conn, id, &comment, actor, now)
                    })
                    .await?;
            }
            return read(ctx, caller, project, id).await;
        }
    };
    let comment = request.comment;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::change_requests::transition(conn, id, &transition, comment.as_deref(), actor, now)
        })
        .await?;
    read(ctx, caller, project, id).await
}

/// Checks that `principal` may move `request` to `state` now: the move is one its state allows,
/// and the principal is who makes it (see [`change_state`]). The one rule the API and the
/// console's buttons share.
pub fn check_move(
    principal: &crate::identity::auth::Principal,
    request: &types::ChangeRequestOut,
    state: flag_store::models::ChangeRequestState,
) -> Result<(), AdminError> {
    use flag_store::models::ChangeRequestState as State;
    let me = person_id(principal)?;
    let current = State::parse(&request.state)
        .ok_or_else(|| AdminError::Internal(format!("{:?} is no state", request.state)))?;
    if state == State::Draft {
        return Err(AdminError::invalid(
            "/state",
            "a change request cannot be made a draft again",
        ));
    }
    if !current.may_become(state) {
        return Err(AdminError::InvalidOperation(format!(
            "a change request that is {} cannot become {}",
            current.as_str(),
            state.as_str()
        )));
    }
    let author = request.created_by.id == me;
    let holds = |permission| require(principal, permission, &request.project, &request.environment);
    match state {
        State::Draft => Ok(()),
        State::InReview if author => Ok(()),
        State::InReview => Err(AdminError::NoAccess(
            "only its author sends a change request for review".into(),
        )),
        State::Approved if author => Err(AdminError::NoAccess(
            "you cannot approve your own change request".into(),
        )),
        State::Approved
            if request
                .approvals
                .iter()
                .any(|approval| approval.created_by.id == me) =>
        {
            Err(AdminError::InvalidOperation(
                "you have already approved this change request".into(),
            ))
        }
        State::Approved | State::Rejected => holds(Permission::ApproveChangeRequest),
        State::Applied | State::Scheduled => holds(Permission::ApplyChangeRequest),
        State::Cancelled if author || principal.administers() => Ok(()),
        State::Cancelled => Err(AdminError::NoAccess(
            "only its author or an administrator cancels a change request".into(),
        )),
    }
}

/// The states `principal` may move `request` to now, for the buttons an interface shows.
pub fn moves(
    principal: &crate::identity::auth::Principal,
    request: &types::ChangeRequestOut,
) -> Vec<flag_store::models::ChangeRequestState> {
    flag_store::models::ChangeRequestState::ALL
        .into_iter()
        .filter(|state| check_move(principal, request, *state).is_ok())
        .collect()
}

/// Applies request `id` once: each change re-read from its stored form and made in one
/// transaction, refused whole when any conflicts.
async fn apply(
    ctx: &Runtime,
    id: i32,
    applier: queries::change_requests::Applier,
    actor: flag_store::models::Actor,
) -> Result<queries::change_requests::Applied, AdminError> {
    let clock = ctx.settings.clock.clone();
    db::run(&ctx.store, move |conn| {
        queries::change_requests::apply(
            conn,
            id,
            applier,
            &actor,
            || clock.now(),
            |conn, request, row, now| make_checked(conn, (request, row), &actor, now),
        )
    })
    .await
}

/// Makes the change `row` of `request`, refused when its flag or what it changes moved since it
/// was made.
fn make_checked(
    conn: &mut flag_store::DbConnection,
    (request, row): (
        &flag_store::models::ChangeRequestRow,
        &flag_store::models::ChangeRow,
    ),
    actor: &flag_store::models::Actor,
    now: chrono::NaiveDateTime,
) -> Result<(), flag_store::StoreError> {
    let feature = row.feature.as_deref().unwrap_or_default();
    let place = (request.project.as_str(), feature, request.environment.as_str());
    let made = stored(row)?;
    match row
        .feature
        .as_ref()
        .map(|_| queries::features::find(conn, feature))
        .transpose()?
    {
        None => {}
        Some(None) => {
            return Err(flag_store::StoreError::InUse {
                message: format!("{feature}: Feature has been deleted"),
            });
        }
        Some(Some(flag)) if flag.archived_at.is_some() => {
            return Err(flag_store::StoreError::InUse {
                message: format!("{feature}: Feature has been archived"),
            });
        }
        Some(Some(_)) => {}
    }
    if let Some(conflict) = made.conflict(conn, place, row.snapshot()?.as_ref())? {
        return Err(flag_store::StoreError::InUse {
            message: format!(
                "{}: {conflict}; change {} must be made again",
                row.feature
                    .clone()
                    .unwrap_or_else(|| format!("segment {}", row.segment_id.unwrap_or_default())),
                row.id
            ),
        });
    }
    made.make(conn, place, actor, now)
}

/// What one look for due requests did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Due {
    /// Requests applied.
    pub applied: usize,
    /// Requests that could not apply, marked failed.
    pub failed: usize,
    /// When the next pending one is due, UTC.
    pub next: Option<chrono::NaiveDateTime>,
}

/// How many due requests one transaction applies, so that a burst does not hold the write lock
/// for long.
const DUE_BATCH: i64 = 200;

/// Applies every scheduled request that is due, each once whichever replica gets to it first
/// (the state is read under the write lock), in transactions of 200: how many were
/// applied, how many failed, and when the next pending one is due.
pub async fn apply_due(ctx: &Runtime) -> Result<Due, AdminError> {
    let clock = ctx.settings.clock.clone();
    db::run(&ctx.store, move |conn| {
        let system = flag_store::models::Actor::system();
        let (mut applied, mut failed) = (0, 0);
        loop {
            let outcomes =
                queries::change_requests::apply_due(conn, || clock.now(), DUE_BATCH, &system, |conn, request, row, now| {
                    make_checked(conn, (request, row), &system, now)
                })?;
            for (id, outcome) in &outcomes {
                match outcome {
                    queries::change_requests::Applied::Done => applied += 1,
                    queries::change_requests::Applied::Failed(reason) => {
                        tracing::warn!(change_request = id, %reason, "a scheduled change request could not be applied");
                        failed += 1;
                    }
                    queries::change_requests::Applied::NotDue => {}
                }
            }
            if (outcomes.len() as i64) < DUE_BATCH {
                return Ok(Due {
                    applied,
                    failed,
                    next: queries::change_requests::next_due(conn)?,
                });
            }
        }
    })
    .await
}

/// Who may comment on a request.
pub const COMMENT: Access = Access::Person;

/// Adds a comment to request `id`.
pub async fn comment(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    id: i32,
    request: types::CommentIn,
) -> Result<(), AdminError> {
    person(caller)?;
    let text = request.text.trim().to_owned();
    if text.is_empty() || text.chars().count() > COMMENT_LENGTH {
        return Err(AdminError::invalid(
            "/text",
            format!("/text must hold 1 to {COMMENT_LENGTH} characters"),
        ));
    }
    read(ctx, caller, project, id).await?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::change_requests::comment(conn, id, &text, actor, now)
        })
        .await
}

/// Checks that `caller` wrote request `id` of `project`, which only its author edits.
async fn authored(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    id: i32,
) -> Result<types::ChangeRequestOut, AdminError> {
    let me = person(caller)?;
    let current = read(ctx, caller, project, id).await?;
    if current.created_by.id == me {
        Ok(current)
    } else {
        Err(AdminError::NoAccess(
            "only its author changes a change request".into(),
        ))
    }
}

/// Who may retitle a request: its author.
pub const SET_TITLE: Access = Access::Person;

/// Sets request `id`'s title.
pub async fn set_title(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    id: i32,
    request: types::TitleIn,
) -> Result<(), AdminError> {
    let title = request.title.trim().to_owned();
    if title.is_empty() || title.chars().count() > 255 {
        return Err(AdminError::invalid(
            "/title",
            "/title must hold 1 to 255 characters",
        ));
    }
    authored(ctx, caller, project, id).await?;
    caller
        .write(ctx, move |conn, _, _| {
            queries::change_requests::set_title(conn, id, &title)
        })
        .await
}

/// Who may change or discard one change of a request: its author.
pub const EDIT_CHANGE: Access = Access::Person;

/// Replaces change `change_id` of request `id` with `change`, checked as when it was added; an
/// approved request goes back to review without its approvals.
pub async fn edit_change(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    (id, change_id): (i32, i32),
    change: types::ChangeIn,
) -> Result<types::ChangeRequestOut, AdminError> {
    let current = authored(ctx, caller, project.clone(), id).await?;
    let made = parse_change(&change, "")?;
    require(
        caller.principal(),
        made.permission(),
        &project,
        &current.environment,
    )?;
    let (place_project, environment) = (project.clone(), current.environment.clone());
    caller
        .write(ctx, move |conn, actor, now| {
            let new = kept(conn, (&place_project, &environment), &change, &made)?;
            queries::change_requests::edit_change(conn, id, change_id, &new, actor, now)
        })
        .await?;
    read(ctx, caller, project, id).await
}

/// Who may discard one change.
pub const DISCARD_CHANGE: Access = Access::Person;

/// Removes change `change_id` from request `id`.
pub async fn discard_change(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    (id, change_id): (i32, i32),
) -> Result<(), AdminError> {
    authored(ctx, caller, project, id).await?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::change_requests::discard_change(conn, id, change_id, actor, now)
        })
        .await
}

/// Who may discard a draft: its author.
pub const DISCARD: Access = Access::Person;

/// Deletes draft `id`.
pub async fn discard(ctx: &Runtime, caller: &Caller, project: String, id: i32) -> Result<(), AdminError> {
    authored(ctx, caller, project, id).await?;
    caller
        .write(ctx, move |conn, actor, now| {
            queries::change_requests::discard_draft(conn, id, actor, now)
        })
        .await
}
