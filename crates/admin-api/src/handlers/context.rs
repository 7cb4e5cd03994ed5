//! Context fields: list and create.

use actix_web::web;
use flag_admin::context_fields;
use flag_admin::dto::context::{ContextFieldOut, CreateContextField, CreatedContextFieldOut};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::respond::Created;
use crate::state::AppState;

/// Every context field.
#[utoipa::path(
    get,
    path = "/api/admin/context",
    tag = "Context",
    operation_id = "getContextFields",
    responses(
        (status = 200, description = "The context fields", body = Vec<ContextFieldOut>),
    ),
)]
pub async fn list(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<Vec<ContextFieldOut>>, ApiError> {
    Ok(web::Json(context_fields::list(&state.app).await?))
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
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(request): Body<CreateContextField>,
) -> Result<Created<CreatedContextFieldOut>, ApiError> {
    Ok(Created::new(
        context_fields::create(&state.app, &caller, request).await?,
    ))
}
