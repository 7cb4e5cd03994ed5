//! Export and import of flags in Unleash's export document.

pub mod types;

use flag_store::queries;
use flag_store::queries::export::{ExportDocument, Selection};

use crate::catalogue::export::types::{ExportQuery, FindingOut, ImportCheckOut, ImportRequest};
use crate::identity::auth::{Access, Caller, Principal};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Unleash's refusal of an import by an admin API token.
pub const ADMIN_TOKEN_IMPORT: &str = "You can't use an admin token to import features. Please use either a personal access token (https://docs.getunleash.io/reference/api-tokens-and-client-keys#personal-access-tokens) or a service account (https://docs.getunleash.io/reference/service-accounts).";

/// Who may export flags from an environment.
pub const EXPORT: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// The export document of the flags asked for, in one environment. As in Unleash, the
/// environment need not exist: its strategies and switches are then simply absent.
pub async fn export(
    ctx: &Runtime,
    caller: &Caller,
    query: ExportQuery,
) -> Result<ExportDocument, AdminError> {
    caller.require_in(&query.environment)?;
    let selection = match (query.features, query.tag, query.project) {
        (Some(features), _, _) if !features.is_empty() => Selection::Named(features),
        (_, Some(tag), _) => Selection::Tagged(tag),
        (_, _, Some(project)) => Selection::Project(project),
        _ => Selection::All,
    };
    let environment = query.environment;
    db::run(&ctx.store, move |conn| {
        queries::export::export(conn, &selection, &environment)
    })
    .await
}

/// Who may check an import into an environment.
pub const VALIDATE: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// What importing a document would do, writing nothing.
pub async fn validate(
    ctx: &Runtime,
    caller: &Caller,
    request: ImportRequest,
) -> Result<ImportCheckOut, AdminError> {
    caller.require_in(&request.environment)?;
    let check = db::run(&ctx.store, move |conn| {
        queries::export::check(conn, &request.project, &request.environment, &request.data)
    })
    .await?;
    Ok(ImportCheckOut {
        errors: check.errors.into_iter().map(FindingOut::from).collect(),
        warnings: check.warnings.into_iter().map(FindingOut::from).collect(),
        permissions: Vec::new(),
    })
}

/// Who may import flags.
pub const IMPORT: Access = Access::Write(Permission::UpdateFeature);

/// Imports a document in one transaction, as the signed-in user who asks (who then created the
/// flags it adds); any error its validation reports refuses it whole. As in Unleash, an admin
/// API token may validate an import but not make one.
pub async fn import(ctx: &Runtime, caller: &Caller, request: ImportRequest) -> Result<(), AdminError> {
    if matches!(caller.principal(), Principal::AdminToken { .. }) {
        return Err(AdminError::bad_request(ADMIN_TOKEN_IMPORT));
    }
    caller.require_in(&request.environment)?;
    // The project's naming pattern holds for imported flags as for new ones.
    for feature in &request.data.features {
        crate::catalogue::projects::check_flag_name(ctx, &request.project, &feature.name).await?;
    }
    caller
        .write(ctx, move |conn, actor, now| {
            queries::export::import(
                conn,
                &request.project,
                &request.environment,
                &request.data,
                actor,
                now,
            )
        })
        .await
}
