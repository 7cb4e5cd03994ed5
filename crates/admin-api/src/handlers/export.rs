//! Export and import of flags in Unleash's export document.

use actix_web::web;
use flag_admin::catalogue::export;
use flag_admin::catalogue::export::types::{
    ExportDocument, ExportDocumentSchema, ExportQuery, ImportCheckOut, ImportRequest,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{Body, ObjectBody};
use crate::respond::Done;
use crate::state::AppState;

/// Exports flags with their strategies, variants and switch in one environment, their tags,
/// the segments and context fields they use, and their parents.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/export",
    tag = "Import/Export",
    operation_id = "exportFeatures",
    request_body = ExportQuery,
    responses(
        (status = 200, description = "The export document", body = ExportDocumentSchema),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such environment", body = ErrorBody),
    ),
)]
pub async fn export(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(query): Body<ExportQuery>,
) -> Result<web::Json<ExportDocument>, ApiError> {
    Ok(web::Json(export::export(&state.app, &caller, query).await?))
}

/// What importing a document would do: errors that stop it and warnings; nothing is written.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/validate",
    tag = "Import/Export",
    operation_id = "validateImport",
    request_body = ImportRequest,
    responses(
        (status = 200, description = "The findings", body = ImportCheckOut),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such project or environment", body = ErrorBody),
    ),
)]
pub async fn validate(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<ImportRequest>,
) -> Result<web::Json<ImportCheckOut>, ApiError> {
    Ok(web::Json(export::validate(&state.app, &caller, request).await?))
}

/// Imports a document into a project and environment, in one transaction.
#[utoipa::path(
    post,
    path = "/api/admin/features-batch/import",
    tag = "Import/Export",
    operation_id = "importToggles",
    request_body = ImportRequest,
    responses(
        (status = 200, description = "Imported; no body"),
        (status = 400, description = "The body breaks the schema, or validation found an error", body = ErrorBody),
        (status = 404, description = "No such project or environment", body = ErrorBody),
    ),
)]
pub async fn import(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<ImportRequest>,
) -> Result<Done, ApiError> {
    export::import(&state.app, &caller, request).await?;
    Ok(Done)
}
