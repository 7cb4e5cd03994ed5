//! Context fields: list and create.

use actix_web::web;
use flag_store::models::ContextFieldRow;
use flag_store::queries;

use crate::AppState;
use crate::auth::Principal;
use crate::dto::context::{ContextFieldOut, CreateContextField, CreatedContextFieldOut};
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Created;

/// The context fields' operations.
#[derive(Debug, utoipa::OpenApi)]
#[openapi(paths(list, create))]
pub struct Api;

/// Every context field.
#[utoipa::path(
    get,
    path = "/api/admin/context",
    tag = "Context",
    operation_id = "getContextFields",
    responses(
        (status = 200, description = "The context fields", body = Vec<ContextFieldOut>),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn list(
    state: web::Data<AppState>,
    _principal: Principal,
) -> Result<web::Json<Vec<ContextFieldOut>>, ApiError> {
    let rows = crate::db::run(&state.store, queries::context_fields::list).await?;
    let fields = rows
        .into_iter()
        .map(ContextFieldOut::try_from)
        .collect::<Result<_, _>>()?;
    Ok(web::Json(fields))
}

/// Creates a context field.
#[utoipa::path(
    post,
    path = "/api/admin/context",
    tag = "Context",
    operation_id = "createContextField",
    request_body = CreateContextField,
    responses(
        (status = 201, description = "The context field", body = CreatedContextFieldOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 403, description = "Not an administrator", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
    security(("apiKey" = []), ("session" = []))
)]
pub async fn create(
    state: web::Data<AppState>,
    principal: Principal,
    Body(request): Body<CreateContextField>,
) -> Result<Created<CreatedContextFieldOut>, ApiError> {
    principal.require_admin()?;
    let row = ContextFieldRow {
        name: request.name.into_string(),
        description: request.description,
        stickiness: request.stickiness,
        sort_order: request.sort_order.unwrap_or(10),
        legal_values: serde_json::to_string(&request.legal_values)
            .map_err(|error| ApiError::Internal(error.to_string()))?,
        created_at: crate::now(),
    };
    let actor = principal.actor().to_owned();
    let row = crate::db::run(&state.store, move |conn| {
        queries::context_fields::create(conn, &row, &actor)
    })
    .await?;
    Ok(Created::new(CreatedContextFieldOut {
        name: row.name,
        description: row.description,
        stickiness: row.stickiness,
    }))
}
