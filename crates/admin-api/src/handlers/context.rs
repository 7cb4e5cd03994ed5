//! Context fields: list and create.

use actix_web::web;
use flag_admin::catalogue::context_fields;
use flag_admin::catalogue::context_fields::types::{
    ContextFieldOut, ContextStrategiesOut, CreateContextField, LegalValueIn, UpdateContextField,
};
use flag_admin::catalogue::segments::types::NameIn;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
use crate::respond::{Created, Done};
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
        (status = 201, description = "The context field", body = ContextFieldOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateContextField>,
) -> Result<Created<ContextFieldOut>, ApiError> {
    Ok(Created::new(
        context_fields::create(&state.app, &caller, request).await?,
    ))
}

/// One context field.
#[utoipa::path(
    get,
    path = "/api/admin/context/{contextField}",
    tag = "Context",
    operation_id = "getContextField",
    params(
        ("contextField" = String, Path, description = "The context field"),
    ),
    responses(
        (status = 200, description = "The field", body = ContextFieldOut),
        (status = 404, description = "No such field", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ContextFieldOut>, ApiError> {
    Ok(web::Json(
        context_fields::get(&state.app, path.into_inner()).await?,
    ))
}

/// Replaces a field's stickiness and legal values (none when left out), and its description and order when given.
#[utoipa::path(
    put,
    path = "/api/admin/context/{contextField}",
    tag = "Context",
    operation_id = "updateContextField",
    params(
        ("contextField" = String, Path, description = "The context field"),
    ),
    request_body = UpdateContextField,
    responses(
        (status = 200, description = "Replaced; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such field", body = ErrorBody),
    ),
)]
pub async fn update(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateContextField>,
) -> Result<Done, ApiError> {
    context_fields::update(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Deletes a field that no strategy of a live flag constrains on.
#[utoipa::path(
    delete,
    path = "/api/admin/context/{contextField}",
    tag = "Context",
    operation_id = "deleteContextField",
    params(
        ("contextField" = String, Path, description = "The context field"),
    ),
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 404, description = "No such field", body = ErrorBody),
        (status = 409, description = "Strategies constrain on it", body = ErrorBody),
    ),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    context_fields::delete(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Checks that a context field could have this name.
#[utoipa::path(
    post,
    path = "/api/admin/context/validate",
    tag = "Context",
    operation_id = "validateContextFieldName",
    request_body = NameIn,
    responses(
        (status = 200, description = "It could; no body"),
        (status = 400, description = "The name is not URL-friendly", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn validate(
    state: web::Data<AppState>,
    _caller: Admitted,
    ObjectBody(request): ObjectBody<NameIn>,
) -> Result<Done, ApiError> {
    context_fields::validate_name(&state.app, request).await?;
    Ok(Done)
}

/// Adds a legal value to a field, or changes the description of one it has.
#[utoipa::path(
    post,
    path = "/api/admin/context/{contextField}/legal-values",
    tag = "Context",
    operation_id = "updateContextFieldLegalValue",
    params(
        ("contextField" = String, Path, description = "The context field"),
    ),
    request_body = LegalValueIn,
    responses(
        (status = 200, description = "Added; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such field", body = ErrorBody),
    ),
)]
pub async fn add_legal_value(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<LegalValueIn>,
) -> Result<Done, ApiError> {
    context_fields::add_legal_value(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Removes a legal value from a field; removing one it lacks is not an error.
#[utoipa::path(
    delete,
    path = "/api/admin/context/{contextField}/legal-values/{legalValue}",
    tag = "Context",
    operation_id = "deleteContextFieldLegalValue",
    params(
        ("contextField" = String, Path, description = "The context field"),
        ("legalValue" = String, Path, description = "The value"),
    ),
    responses(
        (status = 200, description = "Removed; no body"),
        (status = 404, description = "No such field", body = ErrorBody),
    ),
)]
pub async fn remove_legal_value(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    let (name, value) = path.into_inner();
    context_fields::remove_legal_value(&state.app, &caller, name, value).await?;
    Ok(Done)
}

/// The strategies of live flags with a constraint on a field.
#[utoipa::path(
    get,
    path = "/api/admin/context/{contextField}/strategies",
    tag = "Context",
    operation_id = "getStrategiesByContextField",
    params(
        ("contextField" = String, Path, description = "The context field"),
    ),
    responses(
        (status = 200, description = "The strategies; none for an unknown field", body = ContextStrategiesOut),
    ),
)]
pub async fn strategies(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<ContextStrategiesOut>, ApiError> {
    Ok(web::Json(
        context_fields::strategies(&state.app, path.into_inner()).await?,
    ))
}

/// Checks one constraint as a strategy's would be checked.
#[utoipa::path(
    post,
    path = "/api/admin/constraints/validate",
    tag = "Context",
    operation_id = "validateConstraint",
    request_body = flag_admin::catalogue::model::ConstraintSchema,
    responses(
        (status = 204, description = "It is valid; no body"),
        (status = 400, description = "It is not: the operator, a value, or a value the context field does not allow", body = ErrorBody),
    ),
)]
pub async fn validate_constraint(
    state: web::Data<AppState>,
    _caller: Admitted,
    Body(constraint): Body<flag_eval::Constraint>,
) -> Result<crate::respond::NoContent, ApiError> {
    context_fields::validate_constraint(&state.app, constraint).await?;
    Ok(crate::respond::NoContent)
}

/// The context fields a project's strategies may constrain on: every field, since fields are
/// not scoped to projects here.
#[utoipa::path(
    get,
    path = "/api/admin/projects/{projectId}/context",
    tag = "Context",
    operation_id = "getContextFieldsForProject",
    params(("projectId" = String, Path, description = "The project")),
    responses(
        (status = 200, description = "The context fields", body = Vec<ContextFieldOut>),
        (status = 404, description = "No such project", body = ErrorBody),
    ),
)]
pub async fn of_project(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<Vec<ContextFieldOut>>, ApiError> {
    Ok(web::Json(
        context_fields::of_project(&state.app, path.into_inner()).await?,
    ))
}
