//! The shapes of the history's answers (our extension).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::catalogue::events::types::EventOut;
use crate::catalogue::features::types::AsOfOut;

/// The query of `GET /api/admin/history/changes`.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChangesQuery {
    /// The environment.
    pub environment: Option<String>,
    /// The start of the span (RFC 3339 with a time zone), within the history.
    pub from: Option<String>,
    /// Its end, after `from` and not after now; now when absent.
    pub to: Option<String>,
}

/// What changed in an environment between two moments.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangesOut {
    /// The environment.
    pub environment: String,
    /// The start, and the revision in force then.
    pub from: AsOfOut,
    /// The end, and the revision in force then.
    pub to: AsOfOut,
    /// Each flag whose definition there differs between them, by project then name.
    pub features: Vec<ChangedOut>,
}

/// A flag that changed, and how.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChangedOut {
    /// The flag.
    pub name: String,
    /// Its project.
    pub project: String,
    /// `created`, `deleted`, `archived`, `revived` or `changed`.
    pub change: String,
    /// The flag as the engine read it there at the start (none: it did not exist).
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    /// The same at the end (none: it no longer existed).
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    /// The audit events between them that name it, oldest first.
    pub events: Vec<EventOut>,
}
