//! Searching flags.

use actix_web::web;
use flag_admin::catalogue::search;
use flag_admin::catalogue::search::types::{SearchOut, SearchQuery};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;

/// Searches flags with Unleash's filters (`project=IS:default`, `tag=INCLUDE:simple:web`,
/// `state=IS:stale`, `createdAt=IS_BEFORE:2026-01-01`, `archived=IS:true`...), sorted and
/// paged; live flags unless archived ones are asked for.
#[utoipa::path(
    get,
    path = "/api/admin/search/features",
    tag = "Search",
    operation_id = "searchFeatures",
    params(SearchQuery),
    responses(
        (status = 200, description = "A page of flags, and how many match", body = SearchOut),
        (status = 400, description = "A filter, or the sort order, is malformed", body = ErrorBody),
    ),
)]
pub async fn features(
    state: web::Data<AppState>,
    _caller: Admitted,
    query: web::Query<SearchQuery>,
) -> Result<web::Json<SearchOut>, ApiError> {
    Ok(web::Json(search::search(&state.app, query.into_inner()).await?))
}
