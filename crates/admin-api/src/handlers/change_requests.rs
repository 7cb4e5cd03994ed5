//! Change requests: `/api/admin/projects/{projectId}/change-requests`.

use actix_web::web;
use flag_admin::catalogue::change_requests;
use flag_admin::catalogue::change_requests::types::{
    ChangeIn, ChangeRequestEnvironmentConfig, ChangeRequestOut, ChangeStateIn, ChangesIn, CommentIn,
    ScheduledOut, TitleIn, UpdateChangeRequestConfigIn,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
use crate::respond::{Done, NoContent};
use crate::state::AppState;

/// Which environments of a project take changes only through change requests, and how many
/// approvals each needs.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/change-requests/config",
    tag = "Change Requests",
    operation_id = "getProjectChangeRequestConfig",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "Each environment the project uses, with its rule", body = Vec<ChangeRequestEnvironmentConfig>),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn config(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<Vec<ChangeRequestEnvironmentConfig>>, ApiError> {
    Ok(web::Json(
        change_requests::config(&state.app, &caller, path.into_inner()).await?,
    ))
}

/// Turns change requests on or off for one environment of a project. While they are on, every
/// direct write that would change the environment is refused (403 `PermissionError`).
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/environments/{environment}/change-requests/config",
    tag = "Change Requests",
    operation_id = "updateProjectChangeRequestConfig",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("environment" = String, Path, description = "An environment the project uses"),
    ),
    request_body = UpdateChangeRequestConfigIn,
    responses(
        (status = 204, description = "Changed, as Unleash's Terraform provider expects"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such project, or the project does not use the environment", body = ErrorBody),
    ),
)]
pub async fn set_config(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    ObjectBody(request): ObjectBody<UpdateChangeRequestConfigIn>,
) -> Result<NoContent, ApiError> {
    let (project, environment) = path.into_inner();
    change_requests::set_config(&state.app, &caller, project, environment, request).await?;
    Ok(NoContent)
}

/// Adds one change, or several, to the caller's draft for an environment, making the draft when
/// there is none. Each change is checked as its direct write would be, and needs that write's
/// permission in the environment.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/environments/{environment}/change-requests",
    tag = "Change Requests",
    operation_id = "changeRequest",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("environment" = String, Path, description = "An environment the project uses"),
    ),
    request_body = ChangesIn,
    responses(
        (status = 200, description = "The draft, with the change", body = ChangeRequestOut),
        (status = 400, description = "A change breaks the rules of its direct write, or names an unknown action", body = ErrorBody),
        (status = 404, description = "No such project, environment, flag or strategy", body = ErrorBody),
    ),
)]
pub async fn add(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
    Body(changes): Body<ChangesIn>,
) -> Result<web::Json<ChangeRequestOut>, ApiError> {
    let (project, environment) = path.into_inner();
    Ok(web::Json(
        change_requests::add(&state.app, &caller, project, environment, changes.into_vec()).await?,
    ))
}

/// The newest 300 change requests of a project (drafts only the caller's own).
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/change-requests",
    tag = "Change Requests",
    operation_id = "getChangeRequestsForProject",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "Newest first", body = Vec<ChangeRequestOut>),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<Vec<ChangeRequestOut>>, ApiError> {
    Ok(web::Json(
        change_requests::list(&state.app, &caller, path.into_inner(), false).await?,
    ))
}

/// The change requests of a project not yet applied, cancelled or rejected.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/change-requests/open",
    tag = "Change Requests",
    operation_id = "getOpenChangeRequestsForUser",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "Newest first", body = Vec<ChangeRequestOut>),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn open(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<web::Json<Vec<ChangeRequestOut>>, ApiError> {
    Ok(web::Json(
        change_requests::list(&state.app, &caller, path.into_inner(), true).await?,
    ))
}

/// The change requests not yet closed whose changes touch a flag.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/change-requests/pending/{featureName}",
    tag = "Change Requests",
    operation_id = "getPendingChangeRequestsForFeature",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("featureName" = String, Path, description = "The flag"),
    ),
    responses((status = 200, description = "Oldest first", body = Vec<ChangeRequestOut>)),
)]
pub async fn pending_for_feature(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<Vec<ChangeRequestOut>>, ApiError> {
    let (project, feature) = path.into_inner();
    Ok(web::Json(
        change_requests::pending_for_feature(&state.app, &caller, project, feature).await?,
    ))
}

/// The scheduled change requests that change any of the flags named by `feature` (the parameter
/// repeated); none when none is named.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/change-requests/scheduled",
    tag = "Change Requests",
    operation_id = "getScheduledChangeRequests",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("feature" = Option<Vec<String>>, Query, description = "A flag, repeated for several"),
    ),
    responses((status = 200, description = "The scheduled requests", body = Vec<ScheduledOut>)),
)]
pub async fn scheduled(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    request: actix_web::HttpRequest,
) -> Result<web::Json<Vec<ScheduledOut>>, ApiError> {
    let features: Vec<String> = url::form_urlencoded::parse(request.query_string().as_bytes())
        .filter(|(key, _)| key == "feature")
        .map(|(_, value)| value.into_owned())
        .collect();
    Ok(web::Json(
        change_requests::scheduled(&state.app, &caller, path.into_inner(), features).await?,
    ))
}

/// One change request, with each change's conflict when what it changes moved since it was made.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/change-requests/{id}",
    tag = "Change Requests",
    operation_id = "getChangeRequest",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("id" = i32, Path, description = "The change request"),
    ),
    responses(
        (status = 200, description = "The change request", body = ChangeRequestOut),
        (status = 404, description = "No such change request in the project, or another's draft", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
) -> Result<web::Json<ChangeRequestOut>, ApiError> {
    let (project, id) = path.into_inner();
    Ok(web::Json(
        change_requests::get(&state.app, &caller, project, id).await?,
    ))
}

/// Discards a draft.
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/change-requests/{id}",
    tag = "Change Requests",
    operation_id = "deleteChangeRequest",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("id" = i32, Path, description = "The draft"),
    ),
    responses(
        (status = 200, description = "Discarded"),
        (status = 404, description = "No such draft", body = ErrorBody),
    ),
)]
pub async fn discard(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
) -> Result<Done, ApiError> {
    let (project, id) = path.into_inner();
    change_requests::discard(&state.app, &caller, project, id).await?;
    Ok(Done)
}

/// Moves a change request: `In review` (its author), `Approved` and `Rejected` (others with
/// `APPROVE_CHANGE_REQUEST`), `Applied` and `Scheduled` (with `APPLY_CHANGE_REQUEST`; a
/// scheduled request applies itself at `scheduledAt`, exactly once), `Cancelled` (its author or
/// an administrator).
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/change-requests/{id}/state",
    tag = "Change Requests",
    operation_id = "updateChangeRequestState",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("id" = i32, Path, description = "The change request"),
    ),
    request_body = ChangeStateIn,
    responses(
        (status = 200, description = "The change request, moved", body = ChangeRequestOut),
        (status = 400, description = "An unknown state, or a time missing, without a time zone or in the past", body = ErrorBody),
        (status = 404, description = "No such change request", body = ErrorBody),
        (status = 409, description = "A change conflicts with what changed since it was made: nothing was applied", body = ErrorBody),
    ),
)]
pub async fn change_state(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
    ObjectBody(request): ObjectBody<ChangeStateIn>,
) -> Result<web::Json<ChangeRequestOut>, ApiError> {
    let (project, id) = path.into_inner();
    Ok(web::Json(
        change_requests::change_state(&state.app, &caller, project, id, request).await?,
    ))
}

/// Sets a change request's title (its author).
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/change-requests/{id}/title",
    tag = "Change Requests",
    operation_id = "updateChangeRequestTitle",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("id" = i32, Path, description = "The change request"),
    ),
    request_body = TitleIn,
    responses(
        (status = 200, description = "Changed"),
        (status = 400, description = "An empty or too long title", body = ErrorBody),
        (status = 404, description = "No such change request", body = ErrorBody),
    ),
)]
pub async fn set_title(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
    ObjectBody(request): ObjectBody<TitleIn>,
) -> Result<Done, ApiError> {
    let (project, id) = path.into_inner();
    change_requests::set_title(&state.app, &caller, project, id, request).await?;
    Ok(Done)
}

/// Adds a comment to a change request.
#[utoipa::path(
    post,
    path = "/api/admin/projects/{projectId}/change-requests/{id}/comments",
    tag = "Change Requests",
    operation_id = "addChangeRequestComment",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("id" = i32, Path, description = "The change request"),
    ),
    request_body = CommentIn,
    responses(
        (status = 200, description = "Added"),
        (status = 400, description = "An empty or too long comment", body = ErrorBody),
        (status = 404, description = "No such change request", body = ErrorBody),
    ),
)]
pub async fn comment(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32)>,
    ObjectBody(request): ObjectBody<CommentIn>,
) -> Result<Done, ApiError> {
    let (project, id) = path.into_inner();
    change_requests::comment(&state.app, &caller, project, id, request).await?;
    Ok(Done)
}

/// Replaces one change of a change request (its author); an approved request goes back to review.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/change-requests/{changeRequestId}/changes/{changeId}",
    tag = "Change Requests",
    operation_id = "editChange",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("changeRequestId" = i32, Path, description = "The change request"),
        ("changeId" = i32, Path, description = "The change"),
    ),
    request_body = ChangeIn,
    responses(
        (status = 200, description = "The change request", body = ChangeRequestOut),
        (status = 400, description = "The change breaks the rules of its direct write", body = ErrorBody),
        (status = 404, description = "No such change request or change", body = ErrorBody),
    ),
)]
pub async fn edit_change(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32, i32)>,
    ObjectBody(change): ObjectBody<ChangeIn>,
) -> Result<web::Json<ChangeRequestOut>, ApiError> {
    let (project, id, change_id) = path.into_inner();
    Ok(web::Json(
        change_requests::edit_change(&state.app, &caller, project, (id, change_id), change).await?,
    ))
}

/// Removes one change from a change request (its author).
#[utoipa::path(
    delete,
    path = "/api/admin/projects/{projectId}/change-requests/{changeRequestId}/changes/{changeId}",
    tag = "Change Requests",
    operation_id = "deleteChange",
    params(
        ("projectId" = String, Path, description = "The project"),
        ("changeRequestId" = i32, Path, description = "The change request"),
        ("changeId" = i32, Path, description = "The change"),
    ),
    responses(
        (status = 200, description = "Removed"),
        (status = 404, description = "No such change request or change", body = ErrorBody),
    ),
)]
pub async fn discard_change(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, i32, i32)>,
) -> Result<Done, ApiError> {
    let (project, id, change_id) = path.into_inner();
    change_requests::discard_change(&state.app, &caller, project, (id, change_id)).await?;
    Ok(Done)
}
