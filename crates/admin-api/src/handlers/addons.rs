//! Webhooks, as Unleash's addons: `/api/admin/addons`.

use actix_web::web;
use flag_admin::catalogue::addons;
use flag_admin::catalogue::addons::types::{AddonIn, AddonOut, AddonsOut, DeliveriesOut, DeliveriesQuery};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// Every webhook, sensitive parameters masked, and the providers this server delivers to.
#[utoipa::path(
    get,
    path = "/api/admin/addons",
    tag = "Addons",
    operation_id = "getAddons",
    responses(
        (status = 200, description = "The webhooks and providers", body = AddonsOut),
    ),
)]
pub async fn list(state: web::Data<AppState>, _caller: Admitted) -> Result<web::Json<AddonsOut>, ApiError> {
    Ok(web::Json(addons::list(&state.app).await?))
}

/// Creates a webhook. Its URL must be http or https and resolve to addresses webhooks may post
/// to (public ones, unless the server allows more).
#[utoipa::path(
    post,
    path = "/api/admin/addons",
    tag = "Addons",
    operation_id = "createAddon",
    request_body = AddonIn,
    responses(
        (status = 201, description = "The webhook, its parameters as given", body = AddonOut),
        (status = 400, description = "The body breaks the schema, the provider is unknown, a required parameter is missing, or the URL is refused", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<AddonIn>,
) -> Result<Created<AddonOut>, ApiError> {
    Ok(Created::new(addons::create(&state.app, &caller, request).await?))
}

/// One webhook, sensitive parameters masked.
#[utoipa::path(
    get,
    path = "/api/admin/addons/{id}",
    tag = "Addons",
    operation_id = "getAddon",
    params(
        ("id" = i32, Path, description = "The webhook"),
    ),
    responses(
        (status = 200, description = "The webhook", body = AddonOut),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
) -> Result<web::Json<AddonOut>, ApiError> {
    Ok(web::Json(addons::get(&state.app, path.into_inner()).await?))
}

/// Replaces a webhook's settings; a sensitive parameter sent as `*****` keeps its value.
#[utoipa::path(
    put,
    path = "/api/admin/addons/{id}",
    tag = "Addons",
    operation_id = "updateAddon",
    params(
        ("id" = i32, Path, description = "The webhook"),
    ),
    request_body = AddonIn,
    responses(
        (status = 200, description = "The webhook as stored", body = AddonOut),
        (status = 400, description = "The body breaks the schema, the provider is unknown, a required parameter is missing, or the URL is refused", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
    ObjectBody(request): ObjectBody<AddonIn>,
) -> Result<web::Json<AddonOut>, ApiError> {
    Ok(web::Json(
        addons::update(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Deletes a webhook and the record of its deliveries.
#[utoipa::path(
    delete,
    path = "/api/admin/addons/{id}",
    tag = "Addons",
    operation_id = "deleteAddon",
    params(
        ("id" = i32, Path, description = "The webhook"),
    ),
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 400, description = "The id is not a number", body = ErrorBody),
        (status = 404, description = "No such webhook", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<i32>,
) -> Result<Done, ApiError> {
    addons::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// What a webhook's newest deliveries did: the event, the request and the answer.
#[utoipa::path(
    get,
    path = "/api/admin/addons/{id}/events",
    tag = "Addons",
    operation_id = "getIntegrationEvents",
    params(
        ("id" = i32, Path, description = "The webhook"),
        DeliveriesQuery,
    ),
    responses(
        (status = 200, description = "The deliveries, newest first; none for an unknown webhook", body = DeliveriesOut),
        (status = 400, description = "The id is not a number", body = ErrorBody),
    ),
)]
pub async fn deliveries(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<i32>,
    query: web::Query<DeliveriesQuery>,
) -> Result<web::Json<DeliveriesOut>, ApiError> {
    Ok(web::Json(
        addons::deliveries(&state.app, path.into_inner(), query.into_inner()).await?,
    ))
}
