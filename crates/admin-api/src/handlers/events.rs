//! The audit log, and the history of what it recorded.

use actix_web::web;
use flag_admin::catalogue::events::types::{
    EventCreatorOut, EventSearchOut, EventSearchQuery, EventsOut, EventsQuery, FeatureEventsOut,
};
use flag_admin::catalogue::history::types::{ChangesOut, ChangesQuery};
use flag_admin::catalogue::{events, history};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

/// The newest 100 events, or a project's newest 50.
#[utoipa::path(
    get,
    path = "/api/admin/events",
    tag = "Events",
    operation_id = "getEvents",
    params(EventsQuery),
    responses(
        (status = 200, description = "The events, newest first", body = EventsOut),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
    query: web::Query<EventsQuery>,
) -> Result<web::Json<EventsOut>, ApiError> {
    Ok(web::Json(events::list(&state.app, query.into_inner()).await?))
}

/// A flag's newest 50 events.
#[utoipa::path(
    get,
    path = "/api/admin/events/{featureName}",
    tag = "Events",
    operation_id = "getEventsForToggle",
    params(("featureName" = String, Path, description = "The flag")),
    responses((status = 200, description = "Its events, newest first; none for an unknown flag", body = FeatureEventsOut)),
)]
pub async fn of_feature(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<FeatureEventsOut>, ApiError> {
    Ok(web::Json(
        events::of_feature(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// Searches the audit log: filters `IS:value` or `IS_ANY_OF:value,value`, days `IS:yyyy-MM-dd`,
/// newest first, 50 at a time unless `limit` says otherwise.
#[utoipa::path(
    get,
    path = "/api/admin/search/events",
    tag = "Events",
    operation_id = "searchEvents",
    params(EventSearchQuery),
    responses(
        (status = 200, description = "A page of events, and how many match", body = EventSearchOut),
        (status = 400, description = "A filter is malformed", body = ErrorBody),
    ),
)]
pub async fn search(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    query: web::Query<EventSearchQuery>,
) -> Result<web::Json<EventSearchOut>, ApiError> {
    Ok(web::Json(
        events::search(&state.app, &caller, query.into_inner()).await?,
    ))
}

/// Everyone who wrote events.
#[utoipa::path(
    get,
    path = "/api/admin/event-creators",
    tag = "Events",
    operation_id = "getEventCreators",
    responses((status = 200, description = "Them, by id", body = Vec<EventCreatorOut>)),
)]
pub async fn creators(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<Vec<EventCreatorOut>>, ApiError> {
    Ok(web::Json(events::creators(&state.app).await?))
}

/// Our extension: the flags whose definition in an environment differs between two moments
/// (`from`, and `to` or now), each before and after, with the events between them that name it.
#[utoipa::path(
    get,
    path = "/api/admin/history/changes",
    tag = "History",
    operation_id = "getHistoryChanges",
    params(ChangesQuery),
    responses(
        (status = 200, description = "The flags that changed, and how", body = ChangesOut),
        (status = 400, description = "A moment is malformed or outside the history", body = ErrorBody),
    ),
)]
pub async fn history_changes(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    query: web::Query<ChangesQuery>,
) -> Result<web::Json<ChangesOut>, ApiError> {
    Ok(web::Json(
        history::changes(&state.app, &caller, query.into_inner()).await?,
    ))
}
