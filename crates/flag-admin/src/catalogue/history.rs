//! The past: which revision was in force at a moment, and what changed between two (our
//! extension). The store keeps every flag's and segment's definition by revision
//! ([`flag_store::queries::history`]); the playground answers at a past moment from it too.

pub mod types;

use flag_store::queries;

use crate::catalogue::features::types::AsOfOut;
use crate::catalogue::history::types::{ChangedOut, ChangesOut, ChangesQuery};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Timestamp;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// The revision in force at `at`, or why the history cannot answer for it (a moment before it
/// began, or after `now`), naming the range it covers: the one check of every question about the
/// past.
pub fn revision_at(
    conn: &mut flag_store::DbConnection,
    at: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Result<i32, String>, flag_store::StoreError> {
    Ok(
        match queries::history::start(conn)?.map(|start| start.and_utc()) {
            Some(start) if at >= start && at <= now => {
                Ok(queries::history::revision_at(conn, at.naive_utc())?)
            }
            Some(start) => Err(format!(
                "{} is outside the history: it answers from {} until now ({})",
                time(at),
                time(start),
                time(now)
            )),
            None => Err("the history has not begun".to_owned()),
        },
    )
}

fn time(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Who may read what changed.
pub const CHANGES: Access = Access::Read;

/// The flags whose definition in an environment differs between two moments, with the events
/// between them that name each.
pub async fn changes(ctx: &Runtime, caller: &Caller, query: ChangesQuery) -> Result<ChangesOut, AdminError> {
    let environment = query
        .environment
        .ok_or_else(|| AdminError::invalid("/environment", "/environment is required"))?;
    caller.require_in(&environment)?;
    let moment =
        |text: Option<String>, path: &str| -> Result<Option<chrono::DateTime<chrono::Utc>>, AdminError> {
            text.map(|text| {
                Timestamp::read(&text)
                    .map(|at| at.0)
                    .map_err(|message| AdminError::invalid(path, format!("{path}: {message}")))
            })
            .transpose()
        };
    let from =
        moment(query.from, "/from")?.ok_or_else(|| AdminError::invalid("/from", "/from is required"))?;
    let now = ctx.now_utc();
    let to = moment(query.to, "/to")?.unwrap_or(now);
    if to < from {
        return Err(AdminError::invalid("/to", "/to must not be before /from"));
    }
    let read = {
        let environment = environment.clone();
        db::run(&ctx.store, move |conn| {
            queries::snapshot(conn, |conn| {
                let (start, end) = match (revision_at(conn, from, now)?, revision_at(conn, to, now)?) {
                    (Ok(start), Ok(end)) => (start, end),
                    (Err(message), _) => return Ok(Err(("/from", message))),
                    (_, Err(message)) => return Ok(Err(("/to", message))),
                };
                Ok(Ok((
                    start,
                    end,
                    queries::history::changes_between(conn, &environment, start, end)?,
                )))
            })
        })
        .await?
    };
    let (start, end, changed) =
        read.map_err(|(path, message)| AdminError::invalid(path, format!("{path} {message}")))?;
    let definition = |side: &queries::history::Side| -> Result<Option<serde_json::Value>, AdminError> {
        side.as_ref()
            .map(|(_, feature)| {
                serde_json::to_value(feature).map_err(|error| AdminError::Internal(error.to_string()))
            })
            .transpose()
    };
    let features = changed
        .into_iter()
        .map(|changed| {
            let change = match (&changed.before, &changed.after) {
                (None, _) => "created",
                (_, None) => "deleted",
                (Some((false, _)), Some((true, _))) => "archived",
                (Some((true, _)), Some((false, _))) => "revived",
                _ => "changed",
            };
            Ok(ChangedOut {
                change: change.to_owned(),
                before: definition(&changed.before)?,
                after: definition(&changed.after)?,
                events: changed
                    .events
                    .into_iter()
                    .map(crate::catalogue::events::types::EventOut::of)
                    .collect(),
                project: changed.project,
                name: changed.feature,
            })
        })
        .collect::<Result<Vec<_>, AdminError>>()?;
    Ok(ChangesOut {
        environment,
        from: AsOfOut {
            at: time(from),
            revision: start,
        },
        to: AsOfOut {
            at: time(to),
            revision: end,
        },
        features,
    })
}
