//! Change requests: the rule that an environment of a project takes changes only through them
//! (and the guard every audited write passes, `guard`), the requests, their changes, reviews
//! and comments, and applying one exactly once.

use std::cell::RefCell;
use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{
    Actor, ChangeRequestRecord, ChangeRequestRow, ChangeRequestRuleRow, ChangeRequestState, ChangeRow,
    CommentRow, EventType, NewChange, NewEvent, ReviewRow,
};
use crate::queries::{events, to_json};
use crate::schema::{
    change_request_changes, change_request_comments, change_request_reviews, change_request_settings,
    change_requests,
};

// The rule.

/// The environments of `project` that take changes only through change requests.
pub fn rules(conn: &mut DbConnection, project: &str) -> Result<Vec<ChangeRequestRuleRow>, StoreError> {
    Ok(change_request_settings::table
        .filter(change_request_settings::project.eq(project))
        .order(change_request_settings::environment)
        .select(ChangeRequestRuleRow::as_select())
        .load(conn)?)
}

/// The rule of `environment` in `project`, if it has one.
pub fn rule(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
) -> Result<Option<ChangeRequestRuleRow>, StoreError> {
    Ok(change_request_settings::table
        .find((project, environment))
        .select(ChangeRequestRuleRow::as_select())
        .first(conn)
        .optional()?)
}

/// Turns the rule of `environment` in `project` on, with `required_approvals`, or off (`None`).
/// The project must use the environment.
pub fn set_rule(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    required_approvals: Option<i32>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        crate::queries::projects::get(conn, project)?;
        if !crate::queries::projects::environments_of(conn, project)?
            .iter()
            .any(|name| name == environment)
        {
            return Err(StoreError::not_found(
                "environment",
                format!("{environment} in project {project}"),
            ));
        }
        let before = rule(conn, project, environment)?;
        diesel::delete(change_request_settings::table.find((project, environment))).execute(conn)?;
        if let Some(required_approvals) = required_approvals {
            diesel::insert_into(change_request_settings::table)
                .values(ChangeRequestRuleRow {
                    project: project.to_owned(),
                    environment: environment.to_owned(),
                    required_approvals,
                })
                .execute(conn)?;
        }
        let json = |rule: Option<i32>| {
            serde_json::json!({
                "environment": environment,
                "changeRequestsEnabled": rule.is_some(),
                "requiredApprovals": rule,
            })
        };
        events::record(
            conn,
            &NewEvent {
                project: Some(project.to_owned()),
                environment: Some(environment.to_owned()),
                data: Some(to_json("data", &json(required_approvals))?),
                pre_data: Some(to_json(
                    "pre_data",
                    &json(before.map(|rule| rule.required_approvals)),
                )?),
                ..NewEvent::new(EventType::ChangeRequestConfigurationUpdated, actor, now)
            },
        )
    })
}

thread_local! {
    /// The project and environment of the change request whose changes the write running on
    /// this thread makes: the rule lets its writes through there, and only there.
    static APPLYING: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Refuses `event`'s write when what it changes is in an environment that takes changes only
/// through change requests: the one check every audited write passes, whatever interface asked
/// for it (API, console, import, a file at start, a migration), so none can go around it. A change
/// request being applied passes in its own project and environment, and nowhere else: a request
/// for `development` cannot archive a flag whose `production` is protected.
///
/// - Writes to one environment of a flag (its switch, strategies, their order, its variants, an
///   import into the environment, the environment leaving the project) are refused where that
///   environment has the rule.
/// - Writes to a flag in every environment (archiving or reviving it, through its own operations
///   or its metadata, and its dependencies) are refused where any environment of its project has
///   it.
/// - A segment's change or deletion is refused where a strategy in such an environment uses it.
/// - Switching off or deleting an environment is refused while any project protects it.
pub(crate) fn guard(conn: &mut DbConnection, event: &NewEvent) -> Result<(), StoreError> {
    let protected: Vec<(String, String)> = match event.event_type {
        EventType::FeatureStrategyAdd
        | EventType::FeatureStrategyRemove
        | EventType::FeatureStrategyUpdate
        | EventType::FeatureEnvironmentEnabled
        | EventType::FeatureEnvironmentDisabled
        | EventType::FeatureEnvironmentVariantsUpdated
        | EventType::StrategyOrderChanged
        | EventType::FeaturesImported
        | EventType::ProjectEnvironmentRemoved => match (&event.project, &event.environment) {
            // A request's own place passes without looking.
            (Some(project), Some(environment)) if is_applying(project, environment) => Vec::new(),
            (Some(project), Some(environment)) => rule(conn, project, environment)?
                .into_iter()
                .map(|rule| (rule.project, rule.environment))
                .collect(),
            _ => Vec::new(),
        },
        EventType::FeatureArchived
        | EventType::FeatureRevived
        | EventType::FeatureDependencyAdded
        | EventType::FeatureDependenciesRemoved => protected_in(conn, event.project.as_deref())?,
        EventType::FeatureMetadataUpdated if archives_or_revives(event) => {
            protected_in(conn, event.project.as_deref())?
        }
        EventType::SegmentUpdated | EventType::SegmentDeleted => match segment_of(event) {
            Some(segment) => protected_uses_of_segment(conn, segment)?,
            None => Vec::new(),
        },
        EventType::EnvironmentDisabled | EventType::EnvironmentDeleted => match &event.environment {
            Some(environment) => change_request_settings::table
                .filter(change_request_settings::environment.eq(environment))
                .order(change_request_settings::project)
                .select((
                    change_request_settings::project,
                    change_request_settings::environment,
                ))
                .load(conn)?,
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    let applying = APPLYING.with(|applying| applying.borrow().clone());
    match protected
        .into_iter()
        .find(|place| Some(place) != applying.as_ref())
    {
        Some((project, environment)) => Err(StoreError::ChangeRequestRequired { project, environment }),
        None => Ok(()),
    }
}

/// Whether the write running on this thread applies a change request for `environment` of
/// `project`.
fn is_applying(project: &str, environment: &str) -> bool {
    APPLYING.with(|applying| {
        applying
            .borrow()
            .as_ref()
            .is_some_and(|(p, e)| p == project && e == environment)
    })
}

/// The protected environments of `project`, as `(project, environment)`.
fn protected_in(conn: &mut DbConnection, project: Option<&str>) -> Result<Vec<(String, String)>, StoreError> {
    Ok(match project {
        Some(project) => rules(conn, project)?
            .into_iter()
            .map(|rule| (rule.project, rule.environment))
            .collect(),
        None => Vec::new(),
    })
}

/// Whether a flag's metadata event archives or revives it: its `archived` before and after differ.
fn archives_or_revives(event: &NewEvent) -> bool {
    let archived = |json: &Option<String>| {
        json.as_deref()
            .and_then(|json| serde_json::from_str::<serde_json::Value>(json).ok())
            .and_then(|value| value.get("archived").and_then(serde_json::Value::as_bool))
            .unwrap_or(false)
    };
    archived(&event.data) != archived(&event.pre_data)
}

/// The segment a segment event is about: the `id` of what it records.
pub(crate) fn segment_of(event: &NewEvent) -> Option<i32> {
    [&event.data, &event.pre_data]
        .into_iter()
        .flatten()
        .find_map(|json| {
            let value: serde_json::Value = serde_json::from_str(json).ok()?;
            i32::try_from(value.get("id")?.as_i64()?).ok()
        })
}

/// The protected environments, as `(project, environment)`, in which a strategy of a live flag
/// uses `segment`.
fn protected_uses_of_segment(
    conn: &mut DbConnection,
    segment: i32,
) -> Result<Vec<(String, String)>, StoreError> {
    use crate::schema::{feature_strategies, feature_strategy_segments, features};
    Ok(feature_strategy_segments::table
        .inner_join(feature_strategies::table.inner_join(features::table))
        .inner_join(
            change_request_settings::table.on(change_request_settings::project
                .eq(features::project_id)
                .and(change_request_settings::environment.eq(feature_strategies::environment_name))),
        )
        .filter(feature_strategy_segments::segment_id.eq(segment))
        .filter(features::archived_at.is_null())
        .select((
            change_request_settings::project,
            change_request_settings::environment,
        ))
        .distinct()
        .load(conn)?)
}

/// Runs `work`, the writes of an approved change request for `environment` of `project`, past
/// the rule there; put back as it was when `work` returns or unwinds.
fn applying<T>(project: &str, environment: &str, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<(String, String)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            APPLYING.with(|applying| *applying.borrow_mut() = previous);
        }
    }
    let _restore = Restore(APPLYING.with(|applying| {
        applying
            .borrow_mut()
            .replace((project.to_owned(), environment.to_owned()))
    }));
    work()
}

// Requests.

/// A request by id, with its changes, reviews and comments.
pub fn get(conn: &mut DbConnection, id: i32) -> Result<ChangeRequestRecord, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let request = change_requests::table
            .find(id)
            .select(ChangeRequestRow::as_select())
            .first(conn)
            .map_err(StoreError::or_not_found("change request", id.to_string()))?;
        let changes = change_request_changes::table
            .filter(change_request_changes::change_request_id.eq(id))
            .order(change_request_changes::id)
            .select(ChangeRow::as_select())
            .load(conn)?;
        let reviews = change_request_reviews::table
            .filter(change_request_reviews::change_request_id.eq(id))
            .order((
                change_request_reviews::created_at,
                change_request_reviews::user_id,
            ))
            .select(ReviewRow::as_select())
            .load(conn)?;
        let comments = change_request_comments::table
            .filter(change_request_comments::change_request_id.eq(id))
            .order(change_request_comments::id)
            .select(CommentRow::as_select())
            .load(conn)?;
        Ok(ChangeRequestRecord {
            request,
            changes,
            reviews,
            comments,
        })
    })
}

/// The requests of `project`, newest first, at most `limit`; with `states`, only those in them.
pub fn of_project(
    conn: &mut DbConnection,
    project: &str,
    states: Option<&[ChangeRequestState]>,
    limit: i64,
) -> Result<Vec<ChangeRequestRecord>, StoreError> {
    let mut query = change_requests::table
        .filter(change_requests::project.eq(project))
        .select(change_requests::id)
        .order(change_requests::id.desc())
        .limit(limit)
        .into_boxed();
    if let Some(states) = states {
        query = query.filter(change_requests::state.eq_any(states.iter().map(|state| state.as_str())));
    }
    let ids: Vec<i32> = query.load(conn)?;
    ids.into_iter().map(|id| get(conn, id)).collect()
}

/// The requests not yet closed whose changes touch `feature`.
pub fn pending_for_feature(
    conn: &mut DbConnection,
    project: &str,
    feature: &str,
) -> Result<Vec<ChangeRequestRecord>, StoreError> {
    let open = [
        ChangeRequestState::Draft,
        ChangeRequestState::InReview,
        ChangeRequestState::Approved,
        ChangeRequestState::Scheduled,
    ];
    let ids: Vec<i32> = change_requests::table
        .inner_join(change_request_changes::table)
        .filter(change_requests::project.eq(project))
        .filter(change_request_changes::feature.eq(feature))
        .filter(change_requests::state.eq_any(open.iter().map(|state| state.as_str())))
        .select(change_requests::id)
        .distinct()
        .order(change_requests::id)
        .load(conn)?;
    ids.into_iter().map(|id| get(conn, id)).collect()
}

/// Adds `changes` to the draft `user` keeps for `environment` in `project`, making the draft
/// when there is none; the draft's id.
pub fn add_to_draft(
    conn: &mut DbConnection,
    project: &str,
    environment: &str,
    changes: &[NewChange],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<i32, StoreError> {
    crate::queries::write(conn, |conn| {
        let rule = rule(conn, project, environment)?;
        let draft: Option<i32> = change_requests::table
            .filter(change_requests::project.eq(project))
            .filter(change_requests::environment.eq(environment))
            .filter(change_requests::created_by_user_id.eq(actor.user_id))
            .filter(change_requests::state.eq(ChangeRequestState::Draft.as_str()))
            .select(change_requests::id)
            .first(conn)
            .optional()?;
        let id = match draft {
            Some(id) => id,
            None => {
                let stamps = BTreeMap::from([(ChangeRequestState::Draft.as_str(), crate::time::iso(now))]);
                let id: i32 = diesel::insert_into(change_requests::table)
                    .values((
                        change_requests::project.eq(project),
                        change_requests::environment.eq(environment),
                        change_requests::state.eq(ChangeRequestState::Draft.as_str()),
                        change_requests::min_approvals.eq(rule.map_or(1, |rule| rule.required_approvals)),
                        change_requests::created_by_user_id.eq(actor.user_id),
                        change_requests::created_at.eq(now),
                        change_requests::state_timestamps.eq(to_json("state_timestamps", &stamps)?),
                    ))
                    .returning(change_requests::id)
                    .get_result(conn)?;
                record(
                    conn,
                    EventType::ChangeRequestCreated,
                    id,
                    project,
                    environment,
                    None,
                    actor,
                    now,
                )?;
                id
            }
        };
        for change in changes {
            insert_change(conn, id, change, actor, now)?;
            record(
                conn,
                EventType::ChangeAdded,
                id,
                project,
                environment,
                change.feature.as_deref(),
                actor,
                now,
            )?;
        }
        Ok(id)
    })
}

fn insert_change(
    conn: &mut DbConnection,
    id: i32,
    change: &NewChange,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    diesel::insert_into(change_request_changes::table)
        .values((
            change_request_changes::change_request_id.eq(id),
            change_request_changes::feature.eq(&change.feature),
            change_request_changes::segment_id.eq(change.segment_id),
            change_request_changes::action.eq(&change.action),
            change_request_changes::payload.eq(to_json("payload", &change.payload)?),
            change_request_changes::snapshot.eq(change
                .snapshot
                .as_ref()
                .map(|snapshot| to_json("snapshot", snapshot))
                .transpose()?),
            change_request_changes::created_by_user_id.eq(actor.user_id),
            change_request_changes::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Replaces change `change_id` of request `id` with `change`; an edit of an approved request
/// sends it back for review and drops its approvals.
pub fn edit_change(
    conn: &mut DbConnection,
    id: i32,
    change_id: i32,
    change: &NewChange,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let request = editable(conn, id)?;
        remove_change(conn, id, change_id)?;
        insert_change(conn, id, change, actor, now)?;
        reopen(conn, &request, now)?;
        record(
            conn,
            EventType::ChangeEdited,
            id,
            &request.project,
            &request.environment,
            change.feature.as_deref(),
            actor,
            now,
        )
    })
}

/// Removes change `change_id` from request `id`.
pub fn discard_change(
    conn: &mut DbConnection,
    id: i32,
    change_id: i32,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let request = editable(conn, id)?;
        let feature = remove_change(conn, id, change_id)?;
        reopen(conn, &request, now)?;
        record(
            conn,
            EventType::ChangeDiscarded,
            id,
            &request.project,
            &request.environment,
            feature.as_deref(),
            actor,
            now,
        )
    })
}

/// The request, if its changes may still be edited: a draft, or one in review or approved.
fn editable(conn: &mut DbConnection, id: i32) -> Result<ChangeRequestRow, StoreError> {
    let request = row(conn, id)?;
    match request.state()? {
        ChangeRequestState::Draft | ChangeRequestState::InReview | ChangeRequestState::Approved => {
            Ok(request)
        }
        state => Err(StoreError::InvalidOperation {
            message: format!("a change request that is {} cannot be changed", state.as_str()),
        }),
    }
}

fn remove_change(conn: &mut DbConnection, id: i32, change_id: i32) -> Result<Option<String>, StoreError> {
    let feature: Option<String> = diesel::delete(
        change_request_changes::table
            .filter(change_request_changes::id.eq(change_id))
            .filter(change_request_changes::change_request_id.eq(id)),
    )
    .returning(change_request_changes::feature)
    .get_result(conn)
    .map_err(StoreError::or_not_found(
        "change",
        format!("{change_id} in change request {id}"),
    ))?;
    Ok(feature)
}

/// An edit drops the approvals given to what was there before, and sends an approved request
/// back for review: every approval is of the request as it is.
fn reopen(conn: &mut DbConnection, request: &ChangeRequestRow, now: NaiveDateTime) -> Result<(), StoreError> {
    let state = request.state()?;
    if matches!(state, ChangeRequestState::InReview | ChangeRequestState::Approved) {
        diesel::delete(
            change_request_reviews::table.filter(change_request_reviews::change_request_id.eq(request.id)),
        )
        .execute(conn)?;
    }
    if state == ChangeRequestState::Approved {
        enter(conn, request, ChangeRequestState::InReview, now)?;
    }
    Ok(())
}

fn row(conn: &mut DbConnection, id: i32) -> Result<ChangeRequestRow, StoreError> {
    change_requests::table
        .find(id)
        .select(ChangeRequestRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("change request", id.to_string()))
}

/// Moves `request` into `state`, noting when.
fn enter(
    conn: &mut DbConnection,
    request: &ChangeRequestRow,
    state: ChangeRequestState,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let mut stamps = request.state_timestamps()?;
    stamps.insert(state.as_str().to_owned(), crate::time::iso(now));
    diesel::update(change_requests::table.find(request.id))
        .set((
            change_requests::state.eq(state.as_str()),
            change_requests::state_timestamps.eq(to_json("state_timestamps", &stamps)?),
        ))
        .execute(conn)?;
    Ok(())
}

/// What a state change asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transition {
    /// Send a draft for review, with the approvals its environment needs now.
    SendToReview,
    /// Approve, as one more distinct person.
    Approve,
    /// Reject.
    Reject,
    /// Withdraw.
    Cancel,
    /// Apply at `at`, by the approval of whoever scheduled it.
    Schedule {
        /// When.
        at: NaiveDateTime,
    },
}

/// Makes `transition` on request `id`, checking it against the request's state as it is in the
/// transaction (so two approvals or an approval and a cancellation at once each see the other),
/// and `rule`s that are the application's: the caller has already checked who may do it. The
/// request's new state.
pub fn transition(
    conn: &mut DbConnection,
    id: i32,
    transition: &Transition,
    comment: Option<&str>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<ChangeRequestState, StoreError> {
    crate::queries::write(conn, |conn| {
        let request = row(conn, id)?;
        let state = request.state()?;
        let refuse = |what: &str| {
            Err(StoreError::InvalidOperation {
                message: format!("a change request that is {} cannot be {what}", state.as_str()),
            })
        };
        let (project, environment) = (request.project.clone(), request.environment.clone());
        let event = |conn: &mut DbConnection, event_type| {
            record(conn, event_type, id, &project, &environment, None, actor, now)
        };
        let next = match transition {
            Transition::SendToReview => {
                if !state.may_become(ChangeRequestState::InReview) {
                    return refuse("sent for review");
                }
                let changes: i64 = change_request_changes::table
                    .filter(change_request_changes::change_request_id.eq(id))
                    .count()
                    .get_result(conn)?;
                if changes == 0 {
                    return Err(StoreError::InvalidOperation {
                        message: "a change request without changes cannot be sent for review".into(),
                    });
                }
                let required = rule(conn, &project, &environment)?.map_or(1, |rule| rule.required_approvals);
                diesel::update(change_requests::table.find(id))
                    .set(change_requests::min_approvals.eq(required))
                    .execute(conn)?;
                event(conn, EventType::ChangeRequestSentToReview)?;
                ChangeRequestState::InReview
            }
            Transition::Approve => {
                if !state.may_become(ChangeRequestState::Approved) {
                    return refuse("approved");
                }
                review(conn, id, "approved", actor, now).map_err(|error| match error {
                    StoreError::Conflict { .. } => StoreError::InvalidOperation {
                        message: "you have already approved this change request".into(),
                    },
                    other => other,
                })?;
                event(conn, EventType::ChangeRequestApprovalAdded)?;
                let approvals: i64 = change_request_reviews::table
                    .filter(change_request_reviews::change_request_id.eq(id))
                    .filter(change_request_reviews::decision.eq("approved"))
                    .count()
                    .get_result(conn)?;
                if approvals >= i64::from(request.min_approvals) {
                    event(conn, EventType::ChangeRequestApproved)?;
                    ChangeRequestState::Approved
                } else {
                    ChangeRequestState::InReview
                }
            }
            Transition::Reject => {
                if !state.may_become(ChangeRequestState::Rejected) {
                    return refuse("rejected");
                }
                review(conn, id, "rejected", actor, now)?;
                clear_schedule(conn, id)?;
                event(conn, EventType::ChangeRequestRejected)?;
                ChangeRequestState::Rejected
            }
            Transition::Cancel => {
                if !state.may_become(ChangeRequestState::Cancelled) {
                    return refuse("cancelled");
                }
                clear_schedule(conn, id)?;
                event(conn, EventType::ChangeRequestCancelled)?;
                ChangeRequestState::Cancelled
            }
            Transition::Schedule { at } => {
                if !state.may_become(ChangeRequestState::Scheduled) {
                    return refuse("scheduled");
                }
                diesel::update(change_requests::table.find(id))
                    .set((
                        change_requests::scheduled_at.eq(Some(*at)),
                        change_requests::scheduled_by_user_id.eq(Some(actor.user_id)),
                        change_requests::schedule_status.eq(Some("pending")),
                        change_requests::schedule_reason.eq(None::<String>),
                    ))
                    .execute(conn)?;
                events::record(
                    conn,
                    &NewEvent {
                        project: Some(project.clone()),
                        environment: Some(environment.clone()),
                        data: Some(to_json(
                            "data",
                            &serde_json::json!({"changeRequestId": id, "scheduledDate": crate::time::iso(*at)}),
                        )?),
                        ..NewEvent::new(EventType::ChangeRequestScheduled, actor, now)
                    },
                )?;
                ChangeRequestState::Scheduled
            }
        };
        if let Some(text) = comment.filter(|text| !text.trim().is_empty()) {
            insert_comment(conn, id, text, actor, now)?;
        }
        if next != state {
            enter(conn, &request, next, now)?;
        }
        Ok(next)
    })
}

/// `actor`'s approval or rejection of request `id`: one of each per person, by its key.
fn review(
    conn: &mut DbConnection,
    id: i32,
    decision: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    diesel::insert_into(change_request_reviews::table)
        .values((
            change_request_reviews::change_request_id.eq(id),
            change_request_reviews::user_id.eq(actor.user_id),
            change_request_reviews::decision.eq(decision),
            change_request_reviews::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

fn clear_schedule(conn: &mut DbConnection, id: i32) -> Result<(), StoreError> {
    diesel::update(change_requests::table.find(id))
        .set((
            change_requests::scheduled_at.eq(None::<NaiveDateTime>),
            change_requests::scheduled_by_user_id.eq(None::<i32>),
            change_requests::schedule_status.eq(None::<String>),
            change_requests::schedule_reason.eq(None::<String>),
        ))
        .execute(conn)?;
    Ok(())
}

/// Adds a comment to request `id`.
pub fn comment(
    conn: &mut DbConnection,
    id: i32,
    text: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        row(conn, id)?;
        insert_comment(conn, id, text, actor, now)
    })
}

fn insert_comment(
    conn: &mut DbConnection,
    id: i32,
    text: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    diesel::insert_into(change_request_comments::table)
        .values((
            change_request_comments::change_request_id.eq(id),
            change_request_comments::text.eq(text),
            change_request_comments::created_by_user_id.eq(actor.user_id),
            change_request_comments::created_at.eq(now),
        ))
        .execute(conn)?;
    Ok(())
}

/// Sets request `id`'s title.
pub fn set_title(conn: &mut DbConnection, id: i32, title: &str) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        editable(conn, id)?;
        diesel::update(change_requests::table.find(id))
            .set(change_requests::title.eq(Some(title)))
            .execute(conn)?;
        Ok(())
    })
}

/// Deletes draft `id`.
pub fn discard_draft(
    conn: &mut DbConnection,
    id: i32,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let request = row(conn, id)?;
        if request.state()? != ChangeRequestState::Draft {
            return Err(StoreError::InvalidOperation {
                message: "only a draft can be discarded; cancel a change request sent for review".into(),
            });
        }
        diesel::delete(change_requests::table.find(id)).execute(conn)?;
        record(
            conn,
            EventType::ChangeRequestDiscarded,
            id,
            &request.project,
            &request.environment,
            None,
            actor,
            now,
        )
    })
}

/// Who may apply: the request is approved, or scheduled (then only when due, for the scheduler,
/// or at once, by a person).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applier {
    /// A person, now: the request must be approved or scheduled.
    Person,
    /// The scheduler, for a schedule due at or before `now`.
    Scheduler,
}

/// What applying a request did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Its changes were made and it is `Applied`.
    Done,
    /// It was not (or no longer) to be applied: already applied, cancelled, rescheduled, not due.
    NotDue,
    /// A change could not be made; nothing was, and (for a schedule) it is marked failed with
    /// this reason.
    Failed(String),
}

/// Applies request `id` exactly once: in one transaction that holds the write lock, its state is
/// read, each change made by `make` (past the rule) at the time `clock` reads once the lock is
/// held, and the state set to `Applied`; a change that fails undoes them all. A schedule that
/// fails is kept, marked `failed` with the reason, and its failure recorded.
pub fn apply(
    conn: &mut DbConnection,
    id: i32,
    applier: Applier,
    actor: &Actor,
    clock: impl Fn() -> NaiveDateTime,
    mut make: impl FnMut(
        &mut DbConnection,
        &ChangeRequestRow,
        &ChangeRow,
        NaiveDateTime,
    ) -> Result<(), StoreError>,
) -> Result<Applied, StoreError> {
    crate::queries::write(conn, |conn| {
        let now = crate::time::stored(clock());
        let request = row(conn, id)?;
        let mut changes = changes_of(conn, &[id])?;
        let mut approvals = approvals_of(conn, &[id])?;
        let mut finish = Finish::default();
        let applied = apply_loaded(
            conn,
            Loaded {
                changes: changes.remove(&id).unwrap_or_default(),
                approved_by: approvals.remove(&id).unwrap_or_default(),
                request,
            },
            (applier, actor, now),
            &mut make,
            &mut finish,
        )?;
        finish.write(conn)?;
        Ok(applied)
    })
}

/// What is left to write of the requests applied in one write, written together at its end:
/// their new states and their events.
#[derive(Debug, Default)]
struct Finish {
    /// Each applied request, and its state timestamps with the time it was applied.
    applied: Vec<(i32, String)>,
    events: Vec<events::Held>,
}

impl Finish {
    /// Writes what is left: on PostgreSQL in two statements, however many requests.
    fn write(self, conn: &mut DbConnection) -> Result<(), StoreError> {
        match conn {
            DbConnection::Postgres(postgres) if !self.applied.is_empty() => {
                let (ids, stamps): (Vec<i32>, Vec<String>) = self.applied.into_iter().unzip();
                diesel::sql_query(
                    "UPDATE change_requests SET state = $1, state_timestamps = applied.stamps, \
                     scheduled_at = NULL, scheduled_by_user_id = NULL, schedule_status = NULL, \
                     schedule_reason = NULL \
                     FROM (SELECT unnest($2::integer[]) AS id, unnest($3::text[]) AS stamps) AS applied \
                     WHERE change_requests.id = applied.id",
                )
                .bind::<diesel::sql_types::Text, _>(ChangeRequestState::Applied.as_str())
                .bind::<diesel::sql_types::Array<diesel::sql_types::Integer>, _>(ids)
                .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(stamps)
                .execute(postgres)?;
            }
            _ => {
                for (id, stamps) in self.applied {
                    diesel::update(change_requests::table.find(id))
                        .set((
                            change_requests::state.eq(ChangeRequestState::Applied.as_str()),
                            change_requests::state_timestamps.eq(stamps),
                            change_requests::scheduled_at.eq(None::<NaiveDateTime>),
                            change_requests::scheduled_by_user_id.eq(None::<i32>),
                            change_requests::schedule_status.eq(None::<String>),
                            change_requests::schedule_reason.eq(None::<String>),
                        ))
                        .execute(conn)?;
                }
            }
        }
        events::record_held(conn, self.events)
    }
}

/// A request and what applying it needs, read in the write that applies it.
struct Loaded {
    request: ChangeRequestRow,
    changes: Vec<ChangeRow>,
    approved_by: Vec<i32>,
}

thread_local! {
    /// Set while a batch of scheduled requests is applied optimistically: any failure fails the
    /// whole batch (which is then applied again one request at a time), so the writes inside it
    /// need no savepoints of their own.
    static WHOLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the write running on this thread fails whole on any error, so a nested write needs no
/// savepoint: see [`apply_due`].
pub(crate) fn fails_whole() -> bool {
    WHOLE.with(std::cell::Cell::get)
}

/// Applies one loaded request inside the caller's write (see [`apply`]).
fn apply_loaded(
    conn: &mut DbConnection,
    Loaded {
        request,
        changes,
        approved_by,
    }: Loaded,
    (applier, actor, now): (Applier, &Actor, NaiveDateTime),
    make: &mut impl FnMut(
        &mut DbConnection,
        &ChangeRequestRow,
        &ChangeRow,
        NaiveDateTime,
    ) -> Result<(), StoreError>,
    finish: &mut Finish,
) -> Result<Applied, StoreError> {
    let id = request.id;
    // Its events form a group of their own, also when applied beside others in one transaction.
    events::in_group(|| {
        let state = request.state()?;
        let due = match applier {
            Applier::Person => state.may_become(ChangeRequestState::Applied),
            Applier::Scheduler => {
                state == ChangeRequestState::Scheduled
                    && request.schedule_status.as_deref() == Some("pending")
                    && request.scheduled_at.is_some_and(|at| at <= now)
            }
        };
        if !due {
            return match applier {
                Applier::Person => Err(StoreError::InvalidOperation {
                    message: format!(
                        "a change request that is {} cannot be applied; it must be approved first",
                        state.as_str()
                    ),
                }),
                Applier::Scheduler => Ok(Applied::NotDue),
            };
        }
        // Every change in one savepoint: one that fails undoes the others. Applied whole (see
        // `WHOLE`), a failure fails the batch instead, and the savepoint is not needed.
        let made = crate::queries::write(conn, |conn| {
            applying(&request.project, &request.environment, || {
                for change in &changes {
                    make(conn, &request, change, now)?;
                }
                Ok(())
            })
        });
        let scheduled = state == ChangeRequestState::Scheduled;
        match made {
            Ok(()) => {
                let mut stamps = request.state_timestamps()?;
                stamps.insert(
                    ChangeRequestState::Applied.as_str().to_owned(),
                    crate::time::iso(now),
                );
                finish.applied.push((id, to_json("state_timestamps", &stamps)?));
                // What was applied and on whose approval, beside the changes' own events.
                let mut recorded = vec![NewEvent {
                    project: Some(request.project.clone()),
                    environment: Some(request.environment.clone()),
                    data: Some(to_json(
                        "data",
                        &serde_json::json!({
                            "changeRequestId": id,
                            "title": request.title,
                            "createdByUserId": request.created_by_user_id,
                            "approvedByUserIds": approved_by,
                            "changes": changes.iter().map(|change| serde_json::json!({
                                "id": change.id,
                                "feature": change.feature,
                                "action": change.action,
                            })).collect::<Vec<_>>(),
                        }),
                    )?),
                    ..NewEvent::new(EventType::ChangeRequestApplied, actor, now)
                }];
                if scheduled && applier == Applier::Scheduler {
                    recorded.push(about(
                        EventType::ChangeRequestScheduledApplicationSuccess,
                        id,
                        (&request.project, &request.environment),
                        None,
                        actor,
                        now,
                    )?);
                }
                for event in recorded {
                    // Made ready in the request's own group, written with the others' at the end.
                    finish.events.extend(events::hold(conn, event)?);
                }
                Ok(Applied::Done)
            }
            Err(error) if error.is_unavailable() || fails_whole() => Err(error),
            Err(error) if applier == Applier::Scheduler => {
                let reason = error.to_string();
                diesel::update(change_requests::table.find(id))
                    .set((
                        change_requests::schedule_status.eq(Some("failed")),
                        change_requests::schedule_reason.eq(Some(&reason)),
                    ))
                    .execute(conn)?;
                events::record(
                    conn,
                    &NewEvent {
                        project: Some(request.project.clone()),
                        environment: Some(request.environment.clone()),
                        data: Some(to_json(
                            "data",
                            &serde_json::json!({"changeRequestId": id, "reason": reason}),
                        )?),
                        ..NewEvent::new(EventType::ChangeRequestScheduledApplicationFailure, actor, now)
                    },
                )?;
                Ok(Applied::Failed(reason))
            }
            Err(error) => Err(error),
        }
    })
}

/// Applies the scheduled requests due at `now`, at most `limit`, in one transaction (each with
/// its own group of events): what became of each.
///
/// The batch is read in three statements and first applied whole, its writes without
/// savepoints, the requests' new states and events written together at the end (two statements
/// on PostgreSQL); when any request in it fails, that attempt is rolled back and the batch applied
/// again with each request's changes in a savepoint, so that a failing one is marked failed and
/// the others still apply. Each round trip to the database counts: see `scripts/schedule-bench`.
pub fn apply_due(
    conn: &mut DbConnection,
    clock: impl Fn() -> NaiveDateTime,
    limit: i64,
    actor: &Actor,
    mut make: impl FnMut(
        &mut DbConnection,
        &ChangeRequestRow,
        &ChangeRow,
        NaiveDateTime,
    ) -> Result<(), StoreError>,
) -> Result<Vec<(i32, Applied)>, StoreError> {
    // Looked for first without the write lock, so that a look that finds nothing writes nothing.
    if due(conn, crate::time::stored(clock()), 1)?.is_empty() {
        return Ok(Vec::new());
    }
    let mut batch = |conn: &mut DbConnection| {
        crate::queries::write(conn, |conn| {
            // Due, and dated, by the clock read once the lock is held.
            let now = crate::time::stored(clock());
            let ids = due(conn, now, limit)?;
            let requests: Vec<ChangeRequestRow> = change_requests::table
                .filter(change_requests::id.eq_any(&ids))
                .order((change_requests::scheduled_at, change_requests::id))
                .select(ChangeRequestRow::as_select())
                .load(conn)?;
            let mut changes = changes_of(conn, &ids)?;
            let mut approvals = approvals_of(conn, &ids)?;
            let mut outcomes = Vec::with_capacity(requests.len());
            let mut finish = Finish::default();
            for request in requests {
                let id = request.id;
                let loaded = Loaded {
                    changes: changes.remove(&id).unwrap_or_default(),
                    approved_by: approvals.remove(&id).unwrap_or_default(),
                    request,
                };
                let applied = apply_loaded(
                    conn,
                    loaded,
                    (Applier::Scheduler, actor, now),
                    &mut make,
                    &mut finish,
                )?;
                outcomes.push((id, applied));
            }
            finish.write(conn)?;
            Ok(outcomes)
        })
    };
    match whole(|| batch(conn)) {
        Err(error) if !error.is_unavailable() => batch(conn),
        applied => applied,
    }
}

/// Runs `work` with [`WHOLE`] set; put back as it was when `work` returns or unwinds.
fn whole<T>(work: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            WHOLE.with(|whole| whole.set(self.0));
        }
    }
    let _restore = Restore(WHOLE.with(|whole| whole.replace(true)));
    work()
}

/// The changes of requests `ids`, in order, by request.
fn changes_of(
    conn: &mut DbConnection,
    ids: &[i32],
) -> Result<std::collections::HashMap<i32, Vec<ChangeRow>>, StoreError> {
    let rows: Vec<ChangeRow> = change_request_changes::table
        .filter(change_request_changes::change_request_id.eq_any(ids))
        .order(change_request_changes::id)
        .select(ChangeRow::as_select())
        .load(conn)?;
    let mut by_request = std::collections::HashMap::<i32, Vec<ChangeRow>>::new();
    for row in rows {
        by_request.entry(row.change_request_id).or_default().push(row);
    }
    Ok(by_request)
}

/// Who approved requests `ids`, in the order they did, by request.
fn approvals_of(
    conn: &mut DbConnection,
    ids: &[i32],
) -> Result<std::collections::HashMap<i32, Vec<i32>>, StoreError> {
    let rows: Vec<(i32, i32)> = change_request_reviews::table
        .filter(change_request_reviews::change_request_id.eq_any(ids))
        .filter(change_request_reviews::decision.eq("approved"))
        .order((
            change_request_reviews::created_at,
            change_request_reviews::user_id,
        ))
        .select((
            change_request_reviews::change_request_id,
            change_request_reviews::user_id,
        ))
        .load(conn)?;
    let mut by_request = std::collections::HashMap::<i32, Vec<i32>>::new();
    for (request, user) in rows {
        by_request.entry(request).or_default().push(user);
    }
    Ok(by_request)
}

/// The scheduled requests due at `now`, soonest first, at most `limit`.
pub fn due(conn: &mut DbConnection, now: NaiveDateTime, limit: i64) -> Result<Vec<i32>, StoreError> {
    Ok(change_requests::table
        .filter(change_requests::state.eq(ChangeRequestState::Scheduled.as_str()))
        .filter(change_requests::schedule_status.eq("pending"))
        .filter(change_requests::scheduled_at.le(now))
        .order((change_requests::scheduled_at, change_requests::id))
        .select(change_requests::id)
        .limit(limit)
        .load(conn)?)
}

/// When the next pending schedule is due, if any is.
pub fn next_due(conn: &mut DbConnection) -> Result<Option<NaiveDateTime>, StoreError> {
    Ok(change_requests::table
        .filter(change_requests::state.eq(ChangeRequestState::Scheduled.as_str()))
        .filter(change_requests::schedule_status.eq("pending"))
        .select(diesel::dsl::min(change_requests::scheduled_at))
        .first::<Option<NaiveDateTime>>(conn)?)
}

/// Records a change-request event about request `id`.
#[allow(clippy::too_many_arguments)]
fn record(
    conn: &mut DbConnection,
    event_type: EventType,
    id: i32,
    project: &str,
    environment: &str,
    feature: Option<&str>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    events::record(
        conn,
        &about(event_type, id, (project, environment), feature, actor, now)?,
    )
}

/// A change-request event about request `id` in `(project, environment)`.
fn about(
    event_type: EventType,
    id: i32,
    (project, environment): (&str, &str),
    feature: Option<&str>,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<NewEvent, StoreError> {
    Ok(NewEvent {
        project: Some(project.to_owned()),
        environment: Some(environment.to_owned()),
        feature_name: feature.map(str::to_owned),
        data: Some(to_json("data", &serde_json::json!({"changeRequestId": id}))?),
        ..NewEvent::new(event_type, actor, now)
    })
}
