//! The hand-written part of the API description, for the operations whose handlers do not yet
//! describe themselves. [`super::document`] adds an entry only where the generated document has
//! none, so this table shrinks as handlers gain `#[utoipa::path]`.

use serde_json::{Map, Value, json};

/// One operation of the API.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// HTTP method, lower-case.
    pub method: &'static str,
    /// Path, with `{parameters}`.
    pub path: &'static str,
    /// Group in the API page.
    pub tag: &'static str,
    /// One line.
    pub summary: &'static str,
    /// Whether it needs credentials.
    pub authenticated: bool,
    /// Statuses it can answer with (besides the envelope errors every route can give).
    pub statuses: &'static [u16],
    /// The request body schema's name in `components.schemas`, if it takes one.
    pub body: Option<&'static str>,
    /// Whether Unleash marks it deprecated.
    pub deprecated: bool,
}

const fn op(method: &'static str, path: &'static str, tag: &'static str, summary: &'static str) -> Operation {
    Operation {
        method,
        path,
        tag,
        summary,
        authenticated: true,
        statuses: &[200, 400, 401, 403],
        body: None,
        deprecated: false,
    }
}

/// Every route the server serves.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        statuses: &[200, 401, 403],
        ..op(
            "get",
            "/api/admin/environments",
            "Environments",
            "List environments",
        )
    },
    Operation {
        statuses: &[201, 400, 401, 403, 409],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/environments",
            "Environments",
            "Create an environment",
        )
    },
    Operation {
        statuses: &[204, 401, 403, 404],
        ..op(
            "post",
            "/api/admin/environments/{name}/on",
            "Environments",
            "Turn an environment on",
        )
    },
    Operation {
        statuses: &[204, 401, 403, 404],
        ..op(
            "post",
            "/api/admin/environments/{name}/off",
            "Environments",
            "Turn an environment off",
        )
    },
    Operation {
        statuses: &[200, 401, 403],
        ..op("get", "/api/admin/projects", "Projects", "List projects")
    },
    Operation {
        statuses: &[201, 400, 401, 403, 409],
        body: Some("Object"),
        ..op("post", "/api/admin/projects", "Projects", "Create a project")
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "get",
            "/api/admin/projects/{projectId}",
            "Projects",
            "One project with its environments and features",
        )
    },
    Operation {
        statuses: &[200, 400, 401, 403, 404, 409],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/projects/{projectId}/environments",
            "Projects",
            "Enable an environment in a project",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "delete",
            "/api/admin/projects/{projectId}/environments/{environment}",
            "Projects",
            "Disable an environment in a project",
        )
    },
    Operation {
        statuses: &[200, 401, 403],
        ..op("get", "/api/admin/context", "Context", "List context fields")
    },
    Operation {
        statuses: &[201, 400, 401, 403, 409],
        body: Some("Object"),
        ..op("post", "/api/admin/context", "Context", "Create a context field")
    },
    Operation {
        statuses: &[200, 401, 403],
        ..op(
            "get",
            "/api/admin/strategies",
            "Strategies",
            "List strategy types",
        )
    },
    Operation {
        statuses: &[201, 400, 401, 403, 409],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/strategies",
            "Strategies",
            "Register a custom strategy type",
        )
    },
    Operation {
        statuses: &[200, 401, 403],
        ..op("get", "/api/admin/segments", "Segments", "List segments")
    },
    Operation {
        statuses: &[201, 400, 401, 403, 409],
        body: Some("Object"),
        ..op("post", "/api/admin/segments", "Segments", "Create a segment")
    },
    Operation {
        statuses: &[200, 401, 403],
        ..op(
            "get",
            "/api/admin/api-tokens",
            "API tokens",
            "List API tokens (never their secrets)",
        )
    },
    Operation {
        statuses: &[201, 400, 401, 403],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/api-tokens",
            "API tokens",
            "Create a client, backend or frontend token; the secret is shown once",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "delete",
            "/api/admin/api-tokens/{token}",
            "API tokens",
            "Revoke a token, given by its secret",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "get",
            "/api/admin/projects/{projectId}/features",
            "Features",
            "List a project's features",
        )
    },
    Operation {
        statuses: &[201, 400, 401, 403, 404, 409],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/projects/{projectId}/features",
            "Features",
            "Create a feature",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "get",
            "/api/admin/projects/{projectId}/features/{featureName}",
            "Features",
            "One feature with its state, strategies and variants per environment",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on",
            "Features",
            "Turn a feature on in an environment",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
            "Features",
            "Turn a feature off in an environment",
        )
    },
    Operation {
        statuses: &[200, 400, 401, 403, 404],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
            "Strategies",
            "Add a strategy",
        )
    },
    Operation {
        statuses: &[200, 400, 401, 403, 404],
        body: Some("Object"),
        ..op(
            "put",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
            "Strategies",
            "Replace a strategy",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "delete",
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
            "Strategies",
            "Delete a strategy",
        )
    },
    Operation {
        statuses: &[200, 400, 401, 403, 404],
        body: Some("Object"),
        ..op(
            "post",
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
            "Features",
            "Make a feature depend on a parent (replacing any earlier one)",
        )
    },
    Operation {
        statuses: &[200, 401, 403, 404],
        ..op(
            "delete",
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
            "Features",
            "Remove a feature's dependency",
        )
    },
];

fn schemas() -> Value {
    let string = json!({"type": "string"});
    let date = json!({"type": "string", "format": "date-time", "pattern": "^[0-9]{4}-",
        "description": "RFC 3339 with a time zone, a four-digit year and no leap second"});
    // Like Unleash, numbers, booleans and null in string fields are coerced to strings.
    let coerced = json!({"type": ["string", "number", "boolean", "null"],
        "description": "a string; numbers, booleans and null are coerced to strings, as Unleash does"});
    let context = json!({
        "type": "object",
        "required": ["appName"],
        "additionalProperties": true,
        "properties": {
            "appName": {"type": ["string", "number", "boolean"], "minLength": 1},
            "currentTime": date,
            "environment": coerced, "remoteAddress": coerced, "sessionId": coerced, "userId": coerced,
            "properties": {"type": "object", "additionalProperties": coerced}
        }
    });
    let projects =
        json!({"oneOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string", "enum": ["*"]}]});
    json!({
        "Error": {
            "type": "object",
            "required": ["id", "name", "message"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "name": {"type": "string", "examples": ["ValidationError", "AuthenticationRequired", "NoAccessError", "NotFoundError", "NameExistsError"]},
                "message": string,
                "details": {"type": "array", "items": {"type": "object", "required": ["message"], "properties": {"message": string, "path": string}}}
            }
        },
        "Object": {"type": "object"},
        "PlaygroundRequest": {
            "type": "object",
            "required": ["environment", "context"],
            "properties": {"environment": {"type": ["string", "number", "boolean"], "description": "coerced to a string"}, "projects": projects, "context": context}
        },
        "AdvancedPlaygroundRequest": {
            "type": "object",
            "required": ["environments", "context"],
            "properties": {
                "environments": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": "^[a-zA-Z0-9~_.-]+$"}},
                "projects": projects,
                "context": context
            }
        }
    })
}

/// The OpenAPI 3.1 document.
pub(super) fn document() -> Value {
    let mut paths = Map::new();
    for operation in OPERATIONS {
        let parameters: Vec<Value> = operation
            .path
            .split('/')
            .filter_map(|part| part.strip_prefix('{').and_then(|part| part.strip_suffix('}')))
            .map(|name| {
                // User ids are numbers; every other path parameter is a name.
                let kind = if name == "id" { "integer" } else { "string" };
                json!({"name": name, "in": "path", "required": true, "schema": {"type": kind}})
            })
            .collect();
        let mut responses = Map::new();
        // Every body can be too large or of the wrong type, and every database call can fail or
        // find the database busy.
        let mut statuses = operation.statuses.to_vec();
        if operation.body.is_some() {
            statuses.extend([413, 415]);
        }
        if operation.path != "/health" && operation.path != "/internal-backstage/prometheus" {
            statuses.extend([500, 503]);
        }
        statuses.sort_unstable();
        statuses.dedup();
        for status in &statuses {
            let entry = if (200..300).contains(status) || *status == 304 {
                json!({"description": "success"})
            } else {
                json!({"description": "error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
            };
            responses.insert(status.to_string(), entry);
        }
        let mut entry = json!({
            "tags": [operation.tag],
            "summary": operation.summary,
            "parameters": parameters,
            "responses": responses,
        });
        if operation.deprecated {
            entry["deprecated"] = json!(true);
        }
        if operation.authenticated {
            entry["security"] = json!([{"apiKey": []}, {"session": []}]);
        }
        if let Some(schema) = operation.body {
            entry["requestBody"] = json!({
                "required": true,
                "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
            });
        }
        let methods = paths.entry(operation.path).or_insert_with(|| json!({}));
        methods[operation.method] = entry;
    }
    json!({
        "openapi": "3.1.0",
        "info": {"title": "flagd", "version": env!("CARGO_PKG_VERSION"), "description": super::DIFFERENCES},
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": {
                "apiKey": {"type": "apiKey", "in": "header", "name": "Authorization",
                    "description": "An API token such as `*:*.secret`; a `Bearer ` prefix is accepted"},
                "session": {"type": "apiKey", "in": "cookie", "name": crate::auth::SESSION_COOKIE}
            }
        }
    })
}
