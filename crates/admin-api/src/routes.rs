//! Every operation the server answers, in one table that both registers the routes and lets the
//! tests compare them with the API description. A path's other methods answer 405; GET
//! operations answer HEAD as well.

use actix_web::http::Method;
use actix_web::{Route, guard, web};

use crate::handlers::{
    self, applications, client, context, dependencies, edge, environments, flags, frontend, invite, ofrep,
    playground, projects, segments, session, strategies, strategy_types, tokens, usage, users, variants,
};

/// One operation: a method on a path (OpenAPI's `{parameter}` syntax, which actix reads too),
/// and the handler's route.
#[derive(Debug)]
pub struct Operation {
    /// The method.
    pub method: Method,
    /// The path.
    pub path: &'static str,
    route: fn() -> Route,
}

fn get(path: &'static str, route: fn() -> Route) -> Operation {
    Operation {
        method: Method::GET,
        path,
        route,
    }
}

fn post(path: &'static str, route: fn() -> Route) -> Operation {
    Operation {
        method: Method::POST,
        path,
        route,
    }
}

fn put(path: &'static str, route: fn() -> Route) -> Operation {
    Operation {
        method: Method::PUT,
        path,
        route,
    }
}

fn delete(path: &'static str, route: fn() -> Route) -> Operation {
    Operation {
        method: Method::DELETE,
        path,
        route,
    }
}

/// Every operation, in the order the API description lists them.
#[expect(
    deprecated,
    reason = "the deprecated playground is still served, as Unleash serves it"
)]
pub fn operations() -> Vec<Operation> {
    vec![
        get("/health", || web::to(handlers::health)),
        get("/ready", || web::to(handlers::ready)),
        get("/internal-backstage/prometheus", || web::to(handlers::prometheus)),
        post("/auth/simple/login", || web::to(session::login)),
        post("/logout", || web::to(session::logout)),
        get("/invite/{token}/validate", || web::to(invite::validate)),
        post("/invite/{token}/signup", || web::to(invite::sign_up)),
        post("/api/admin/playground", || web::to(playground::playground)),
        post("/api/admin/playground/advanced", || web::to(playground::advanced)),
        get("/api/admin/invite-link/tokens", || web::to(invite::list)),
        post("/api/admin/invite-link/tokens", || web::to(invite::create)),
        get("/api/admin/invite-link/tokens/{token}", || web::to(invite::get)),
        put("/api/admin/invite-link/tokens/{token}", || {
            web::to(invite::update)
        }),
        get("/api/admin/environments", || web::to(environments::list)),
        post("/api/admin/environments", || web::to(environments::create)),
        post("/api/admin/environments/{name}/on", || web::to(environments::on)),
        post("/api/admin/environments/{name}/off", || {
            web::to(environments::off)
        }),
        get("/api/admin/projects", || web::to(projects::list)),
        post("/api/admin/projects", || web::to(projects::create)),
        get("/api/admin/projects/{projectId}", || web::to(projects::get)),
        post("/api/admin/projects/{projectId}/environments", || {
            web::to(projects::enable_environment)
        }),
        delete(
            "/api/admin/projects/{projectId}/environments/{environment}",
            || web::to(projects::disable_environment),
        ),
        get("/api/admin/context", || web::to(context::list)),
        post("/api/admin/context", || web::to(context::create)),
        get("/api/admin/strategies", || web::to(strategy_types::list)),
        post("/api/admin/strategies", || web::to(strategy_types::create)),
        get("/api/admin/segments", || web::to(segments::list)),
        post("/api/admin/segments", || web::to(segments::create)),
        get("/api/admin/api-tokens", || web::to(tokens::list)),
        post("/api/admin/api-tokens", || web::to(tokens::create)),
        delete("/api/admin/api-tokens/{token}", || web::to(tokens::delete)),
        get("/api/admin/user-admin", || web::to(users::list)),
        post("/api/admin/user-admin", || web::to(users::create)),
        put("/api/admin/user-admin/{id}", || web::to(users::update)),
        delete("/api/admin/user-admin/{id}", || web::to(users::delete)),
        get("/api/admin/projects/{projectId}/features", || {
            web::to(flags::list)
        }),
        post("/api/admin/projects/{projectId}/features", || {
            web::to(flags::create)
        }),
        get("/api/admin/projects/{projectId}/features/{featureName}", || {
            web::to(flags::get)
        }),
        post(
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
            || web::to(dependencies::add),
        ),
        delete(
            "/api/admin/projects/{projectId}/features/{featureName}/dependencies",
            || web::to(dependencies::remove),
        ),
        put(
            "/api/admin/projects/{projectId}/features/{featureName}/variants-batch",
            || web::to(variants::variants_batch),
        ),
        get(
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants",
            || web::to(variants::environment_variants),
        ),
        post(
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on",
            || web::to(flags::on),
        ),
        post(
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off",
            || web::to(flags::off),
        ),
        post(
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies",
            || web::to(strategies::add),
        ),
        put(
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
            || web::to(strategies::update),
        ),
        delete(
            "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
            || web::to(strategies::delete),
        ),
        get("/api/client/features", || web::to(client::features)),
        get("/api/client/features/{featureName}", || web::to(client::feature)),
        post("/api/client/register", || web::to(usage::register)),
        post("/api/client/metrics", || web::to(usage::metrics)),
        post("/api/client/metrics/bulk", || web::to(usage::bulk)),
        post("/api/client/metrics/edge", || web::to(edge::instance_data)),
        post("/edge/validate", || web::to(edge::validate)),
        get("/api/frontend", || web::to(frontend::get_features)),
        post("/api/frontend", || web::to(frontend::post_features)),
        get("/api/admin/ui-config", || web::to(frontend::ui_config)),
        post("/ofrep/v1/evaluate/flags/{key}", || web::to(ofrep::evaluate_flag)),
        post("/ofrep/v1/evaluate/flags", || web::to(ofrep::evaluate_flags)),
        post("/api/admin/ui-config/cors", || web::to(frontend::set_cors)),
        post("/api/frontend/client/register", || {
            web::to(usage::frontend_register)
        }),
        post("/api/frontend/client/metrics", || {
            web::to(usage::frontend_metrics)
        }),
        get("/api/admin/metrics/applications", || web::to(applications::list)),
        get("/api/admin/metrics/applications/{appName}", || {
            web::to(applications::get)
        }),
        get("/api/admin/metrics/applications/{appName}/overview", || {
            web::to(applications::overview)
        }),
        get(
            "/api/admin/metrics/instances/{appName}/environment/{environment}",
            || web::to(applications::instances),
        ),
        get("/api/admin/client-metrics/features/{name}", || {
            web::to(applications::feature_usage)
        }),
        get("/api/admin/client-metrics/features/{name}/raw", || {
            web::to(applications::raw_usage)
        }),
        get("/api/admin/metrics/unknown-flags", || {
            web::to(applications::unknown_flags)
        }),
    ]
}

/// Registers every operation on `config`: one resource per path, whose other methods answer 405.
pub fn configure(config: &mut web::ServiceConfig) {
    let mut paths: Vec<(&'static str, Vec<Operation>)> = Vec::new();
    for operation in operations() {
        match paths.iter_mut().find(|(path, _)| *path == operation.path) {
            Some((_, operations)) => operations.push(operation),
            None => paths.push((operation.path, vec![operation])),
        }
    }
    for (path, operations) in paths {
        // A trailing slash names the same resource, as in Unleash's (non-strict) router.
        let mut resource = web::resource([path.to_owned(), format!("{path}/")])
            .default_service(web::to(handlers::method_not_allowed));
        for operation in operations {
            let route = (operation.route)();
            resource = resource.route(if operation.method == Method::GET {
                route.guard(guard::Any(guard::Get()).or(guard::Head()))
            } else {
                route.method(operation.method)
            });
        }
        config.service(resource);
    }
}
