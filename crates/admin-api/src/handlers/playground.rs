//! The playgrounds' operations: the application makes each answer in parts, and these send
//! them, the first part whole when it is the only one.

use actix_web::{HttpResponse, web};
use flag_admin::delivery::playground::types::playground_schema::{
    AdvancedPlaygroundRequest, AdvancedPlaygroundResponse, PlaygroundRequest, PlaygroundResponse,
};
use flag_admin::delivery::playground::{self, Chunked};
use futures_util::{StreamExt, stream};
use serde_json::Value;

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::Body;
use crate::state::AppState;

/// Sends `answer`. One that fits in its first part goes whole, with its length; a longer one is
/// streamed: while one part is written to the client, the next is made on the CPU pool, so at
/// most two exist at a time and no thread waits on the client. Once its last part is made, the
/// answer (with what it evaluated, which for a past moment is an environment compiled for it
/// alone) is freed on the CPU pool while that part is written.
pub(crate) async fn send_from_pool<A: Chunked>(
    state: web::Data<AppState>,
    answer: A,
) -> Result<HttpResponse, ApiError> {
    let next = |state: &AppState, mut answer: A| {
        state.app.cpu().spawn(move || {
            let chunk = answer.next_chunk();
            (answer, chunk)
        })
    };
    let (answer, first) = next(&state, answer).await?;
    let first = first.unwrap_or_else(|| Ok(Vec::new()))?;
    if answer.is_finished() {
        state.app.cpu().release(answer);
        return Ok(HttpResponse::Ok().content_type("application/json").body(first));
    }
    let following = next(&state, answer);
    let rest = stream::unfold(Some(following), move |pending| {
        let state = state.clone();
        async move {
            match pending?.await {
                Ok((answer, Some(chunk))) => {
                    let following = if answer.is_finished() {
                        state.app.cpu().release(answer);
                        None
                    } else {
                        Some(next(&state, answer))
                    };
                    Some((chunk.map(web::Bytes::from).map_err(ApiError::from), following))
                }
                Ok((answer, None)) => {
                    state.app.cpu().release(answer);
                    None
                }
                Err(error) => Some((Err(ApiError::from(error)), None)),
            }
        }
    });
    let chunks = stream::once(std::future::ready(Ok(web::Bytes::from(first)))).chain(rest);
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .streaming(chunks))
}

/// Evaluates a context in one environment (deprecated).
#[utoipa::path(
    post,
    path = "/api/admin/playground",
    tag = "Playground",
    operation_id = "getPlayground",
    request_body = PlaygroundRequest,
    responses(
        (status = 200, description = "Every flag of the chosen projects, evaluated", body = PlaygroundResponse),
        (status = 400, description = "The body breaks the schema or a limit", body = ErrorBody),
    ),
)]
#[deprecated = "Unleash deprecates it in favour of the advanced playground"]
pub async fn playground(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(body): Body<Value>,
) -> Result<HttpResponse, ApiError> {
    let answer = playground::deprecated(&state.app, state.app.delivery(), &caller, body).await?;
    send_from_pool(state, answer).await
}

/// Evaluates every combination of comma-separated context values in several environments.
#[utoipa::path(
    post,
    path = "/api/admin/playground/advanced",
    tag = "Playground",
    operation_id = "getAdvancedPlayground",
    request_body = AdvancedPlaygroundRequest,
    responses(
        (status = 200, description = "Every flag in every environment and combination", body = AdvancedPlaygroundResponse),
        (status = 400, description = "The body breaks the schema or a limit", body = ErrorBody),
    ),
)]
pub async fn advanced(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    Body(body): Body<Value>,
) -> Result<HttpResponse, ApiError> {
    let answer = playground::advanced(&state.app, state.app.delivery(), &caller, body).await?;
    send_from_pool(state, answer).await
}
