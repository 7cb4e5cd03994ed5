//! Answers of the operational endpoints, `/health` and `/ready`.

use serde::Serialize;
use utoipa::ToSchema;

/// Unleash's `healthCheckSchema`: `{"health": "GOOD"}`.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
pub struct HealthResponse {
    /// Always `GOOD`: any other state is answered with an error.
    #[schema(example = "GOOD")]
    health: &'static str,
}

impl HealthResponse {
    /// The only healthy answer.
    pub const GOOD: Self = Self { health: "GOOD" };
}
