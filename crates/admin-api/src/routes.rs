//! Every operation the server answers, each declared once: its handler, its description (the
//! handler's `#[utoipa::path]`, which gives the method and the path) and the access it needs.
//! The router, the API description and the access checks all read these declarations.
//!
//! A path's other methods answer 405, GET operations answer HEAD as well, and a trailing slash
//! names the same path.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::uri::{PathAndQuery, Uri};
use actix_web::middleware::Next;
use actix_web::{FromRequest, Handler, Responder, Route, guard, web};
use flag_admin::identity::auth::Access;
use flag_admin::runtime::domain::Permission;
use utoipa::openapi::path::{HttpMethod, Operation as Documented};
use utoipa::openapi::{RefOr, Schema};

use crate::auth::Declared;
use crate::handlers::{
    self, addons, applications, archive, client, context, dependencies, edge, environments, events, export,
    flags, frontend, invite, lifecycle, me, ofrep, playground, projects, search, segments, session, sso,
    strategies, strategy_types, tags, tokens, usage, users, variants,
};

/// One operation: how it is documented, who may call it, and its handler.
pub struct Operation {
    /// The method.
    pub method: Method,
    /// The path, in OpenAPI's `{parameter}` syntax, which actix reads too.
    pub path: String,
    /// Who may call it.
    pub access: Access,
    /// Its description in the API document, made only when the document is: the router needs
    /// none of it.
    pub describe: fn() -> Documented,
    /// Adds the schemas its description refers to.
    pub schemas: fn(&mut Vec<(String, RefOr<Schema>)>),
    route: Box<dyn Fn() -> Route>,
}

impl std::fmt::Debug for Operation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Operation")
            .field("method", &self.method)
            .field("path", &self.path)
            .field("access", &self.access)
            .finish_non_exhaustive()
    }
}

/// Declares `handler`, described by `#[utoipa::path]` (whose generated type is `described`),
/// with `access`.
fn operation<D, F, Args>(_described: D, handler: F, access: Access) -> Operation
where
    D: utoipa::Path + utoipa::__dev::SchemaReferences,
    F: Handler<Args> + Clone,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    let methods = D::methods();
    let method = match methods.first() {
        Some(HttpMethod::Get) => Method::GET,
        Some(HttpMethod::Post) => Method::POST,
        Some(HttpMethod::Put) => Method::PUT,
        Some(HttpMethod::Delete) => Method::DELETE,
        Some(HttpMethod::Patch) => Method::PATCH,
        Some(HttpMethod::Head) => Method::HEAD,
        Some(HttpMethod::Options) => Method::OPTIONS,
        Some(HttpMethod::Trace) => Method::TRACE,
        None => Method::GET,
    };
    Operation {
        method,
        path: D::path(),
        access,
        describe: D::operation,
        schemas: D::schemas,
        route: Box::new(move || web::to(handler.clone())),
    }
}

/// Every operation, in the order the API description lists them, grouped by resource.
#[expect(
    deprecated,
    reason = "the deprecated playground is still served, as Unleash serves it"
)]
pub fn operations() -> Vec<Operation> {
    use Access::{Admin, AdminRead, Client, Frontend, Public, Read, ReadIn, Write, WriteIn};
    vec![
        // Operations.
        operation(handlers::__path_health, handlers::health, Public),
        operation(handlers::__path_ready, handlers::ready, Public),
        operation(handlers::__path_prometheus, handlers::prometheus, Public),
        // Sessions and invitations.
        operation(session::__path_login, session::login, Public),
        operation(session::__path_logout, session::logout, Public),
        operation(invite::__path_validate, invite::validate, Public),
        operation(invite::__path_sign_up, invite::sign_up, Public),
        // The playgrounds.
        operation(
            playground::__path_playground,
            playground::playground,
            ReadIn(Permission::Playground),
        ),
        operation(
            playground::__path_advanced,
            playground::advanced,
            ReadIn(Permission::Playground),
        ),
        // The signed-in caller.
        operation(me::__path_get, me::get, Read),
        operation(me::__path_profile, me::profile, Read),
        operation(me::__path_close_splash, me::close_splash, Read),
        // Invite links.
        operation(invite::__path_list, invite::list, AdminRead),
        operation(invite::__path_create, invite::create, Admin),
        operation(invite::__path_get, invite::get, AdminRead),
        operation(invite::__path_update, invite::update, Admin),
        // Single sign-on.
        operation(sso::__path_get_oidc, sso::get_oidc, AdminRead),
        operation(sso::__path_set_oidc, sso::set_oidc, Admin),
        operation(sso::__path_get_password, sso::get_password, AdminRead),
        operation(sso::__path_set_password, sso::set_password, Admin),
        // Webhooks.
        operation(addons::__path_list, addons::list, Read),
        operation(addons::__path_create, addons::create, Admin),
        operation(addons::__path_get, addons::get, Read),
        operation(addons::__path_update, addons::update, Admin),
        operation(addons::__path_delete, addons::delete, Admin),
        operation(addons::__path_deliveries, addons::deliveries, AdminRead),
        // Environments.
        operation(environments::__path_list, environments::list, Read),
        operation(environments::__path_create, environments::create, Admin),
        operation(environments::__path_on, environments::on, Admin),
        operation(environments::__path_off, environments::off, Admin),
        operation(environments::__path_get, environments::get, Read),
        operation(environments::__path_sort_order, environments::sort_order, Admin),
        operation(environments::__path_of_project, environments::of_project, Read),
        // Projects.
        operation(projects::__path_list, projects::list, Read),
        operation(projects::__path_create, projects::create, Admin),
        operation(projects::__path_get, projects::get, Read),
        operation(projects::__path_overview, projects::overview, Read),
        operation(projects::__path_status, projects::status, Read),
        operation(projects::__path_flag_creators, projects::flag_creators, Read),
        operation(projects::__path_dashboard, projects::dashboard, Read),
        operation(
            projects::__path_dashboard_project,
            projects::dashboard_project,
            Read,
        ),
        operation(
            projects::__path_enable_environment,
            projects::enable_environment,
            Admin,
        ),
        operation(
            projects::__path_disable_environment,
            projects::disable_environment,
            Admin,
        ),
        // Context fields, strategy types and segments.
        operation(context::__path_list, context::list, Read),
        operation(context::__path_create, context::create, Admin),
        operation(strategy_types::__path_list, strategy_types::list, Read),
        operation(strategy_types::__path_create, strategy_types::create, Admin),
        operation(segments::__path_list, segments::list, Read),
        operation(
            segments::__path_create,
            segments::create,
            Write(Permission::CreateSegment),
        ),
        operation(context::__path_get, context::get, Read),
        operation(context::__path_of_project, context::of_project, Read),
        operation(context::__path_update, context::update, Admin),
        operation(context::__path_delete, context::delete, Admin),
        operation(context::__path_validate, context::validate, Admin),
        operation(context::__path_add_legal_value, context::add_legal_value, Admin),
        operation(
            context::__path_remove_legal_value,
            context::remove_legal_value,
            Admin,
        ),
        operation(context::__path_strategies, context::strategies, Read),
        operation(
            context::__path_validate_constraint,
            context::validate_constraint,
            Read,
        ),
        operation(strategy_types::__path_get, strategy_types::get, Read),
        operation(strategy_types::__path_update, strategy_types::update, Admin),
        operation(strategy_types::__path_delete, strategy_types::delete, Admin),
        operation(strategy_types::__path_deprecate, strategy_types::deprecate, Admin),
        operation(
            strategy_types::__path_reactivate,
            strategy_types::reactivate,
            Admin,
        ),
        operation(segments::__path_get, segments::get, Read),
        operation(
            segments::__path_update,
            segments::update,
            Write(Permission::UpdateSegment),
        ),
        operation(
            segments::__path_delete,
            segments::delete,
            Write(Permission::DeleteSegment),
        ),
        operation(segments::__path_strategies, segments::strategies, Read),
        operation(segments::__path_of_strategy, segments::of_strategy, Read),
        operation(segments::__path_validate, segments::validate, Read),
        // API tokens and users.
        operation(tokens::__path_list, tokens::list, AdminRead),
        operation(tokens::__path_create, tokens::create, Admin),
        operation(tokens::__path_delete, tokens::delete, Admin),
        operation(tokens::__path_by_name, tokens::by_name, AdminRead),
        operation(tokens::__path_set_expiry, tokens::set_expiry, Admin),
        operation(tokens::__path_of_project, tokens::of_project, AdminRead),
        operation(
            tokens::__path_create_for_project,
            tokens::create_for_project,
            Admin,
        ),
        operation(
            tokens::__path_delete_for_project,
            tokens::delete_for_project,
            Admin,
        ),
        operation(users::__path_list, users::list, AdminRead),
        operation(users::__path_create, users::create, Admin),
        operation(users::__path_update, users::update, Admin),
        operation(users::__path_delete, users::delete, Admin),
        // Features.
        operation(flags::__path_list, flags::list, Read),
        operation(
            flags::__path_create,
            flags::create,
            Write(Permission::CreateFeature),
        ),
        operation(flags::__path_get, flags::get, Read),
        operation(
            flags::__path_update,
            flags::update,
            Write(Permission::UpdateFeature),
        ),
        operation(
            flags::__path_patch,
            flags::patch,
            Write(Permission::UpdateFeature),
        ),
        operation(
            flags::__path_clone,
            flags::clone,
            Write(Permission::CreateFeature),
        ),
        operation(flags::__path_validate_name, flags::validate_name, Read),
        operation(flags::__path_types, flags::types, Read),
        operation(flags::__path_set_lifetime, flags::set_lifetime, Admin),
        operation(
            flags::__path_environment,
            flags::environment,
            ReadIn(Permission::ReadFeatureEnvironmentVariants),
        ),
        operation(
            flags::__path_bulk_on,
            flags::bulk_on,
            WriteIn(Permission::UpdateFeatureEnvironment),
        ),
        operation(
            flags::__path_bulk_off,
            flags::bulk_off,
            WriteIn(Permission::UpdateFeatureEnvironment),
        ),
        operation(
            archive::__path_stale,
            archive::stale,
            Write(Permission::UpdateFeature),
        ),
        // The archive.
        operation(
            archive::__path_archive_one,
            archive::archive_one,
            Write(Permission::DeleteFeature),
        ),
        operation(
            archive::__path_archive_many,
            archive::archive_many,
            Write(Permission::DeleteFeature),
        ),
        operation(archive::__path_validate, archive::validate, Read),
        operation(
            archive::__path_revive_one,
            archive::revive_one,
            Write(Permission::UpdateFeature),
        ),
        operation(
            archive::__path_revive_many,
            archive::revive_many,
            Write(Permission::UpdateFeature),
        ),
        operation(
            archive::__path_delete_one,
            archive::delete_one,
            Write(Permission::DeleteFeature),
        ),
        operation(
            archive::__path_delete_many,
            archive::delete_many,
            Write(Permission::DeleteFeature),
        ),
        operation(search::__path_features, search::features, Read),
        // Export and import.
        operation(
            export::__path_export,
            export::export,
            ReadIn(Permission::ReadFeatureEnvironmentVariants),
        ),
        operation(
            export::__path_validate,
            export::validate,
            ReadIn(Permission::ReadFeatureEnvironmentVariants),
        ),
        operation(
            export::__path_import,
            export::import,
            Write(Permission::UpdateFeature),
        ),
        // Lifecycles.
        operation(lifecycle::__path_stages, lifecycle::stages, Read),
        operation(
            lifecycle::__path_complete,
            lifecycle::complete,
            Write(Permission::UpdateFeature),
        ),
        operation(
            lifecycle::__path_uncomplete,
            lifecycle::uncomplete,
            Write(Permission::UpdateFeature),
        ),
        operation(lifecycle::__path_count, lifecycle::count, Read),
        // The audit log.
        operation(events::__path_list, events::list, AdminRead),
        operation(events::__path_of_feature, events::of_feature, Read),
        operation(events::__path_search, events::search, Read),
        operation(events::__path_creators, events::creators, Read),
        // Tags.
        operation(tags::__path_list_types, tags::list_types, Read),
        operation(
            tags::__path_create_type,
            tags::create_type,
            Write(Permission::CreateTagType),
        ),
        operation(tags::__path_validate_type, tags::validate_type, Read),
        operation(tags::__path_get_type, tags::get_type, Read),
        operation(
            tags::__path_update_type,
            tags::update_type,
            Write(Permission::UpdateTagType),
        ),
        operation(
            tags::__path_delete_type,
            tags::delete_type,
            Write(Permission::DeleteTagType),
        ),
        operation(tags::__path_list, tags::list, Read),
        operation(
            tags::__path_create,
            tags::create,
            Write(Permission::UpdateFeature),
        ),
        operation(tags::__path_list_of_type, tags::list_of_type, Read),
        operation(tags::__path_get, tags::get, Read),
        operation(
            tags::__path_delete,
            tags::delete,
            Write(Permission::UpdateFeature),
        ),
        operation(tags::__path_of_feature, tags::of_feature, Read),
        operation(
            tags::__path_add_to_feature,
            tags::add_to_feature,
            Write(Permission::UpdateFeature),
        ),
        operation(
            tags::__path_update_feature,
            tags::update_feature,
            Write(Permission::UpdateFeature),
        ),
        operation(
            tags::__path_remove_from_feature,
            tags::remove_from_feature,
            Write(Permission::UpdateFeature),
        ),
        operation(
            tags::__path_update_many,
            tags::update_many,
            Write(Permission::UpdateFeature),
        ),
        operation(
            dependencies::__path_add,
            dependencies::add,
            Write(Permission::UpdateFeatureDependency),
        ),
        operation(
            dependencies::__path_remove,
            dependencies::remove,
            Write(Permission::UpdateFeatureDependency),
        ),
        operation(flags::__path_parent_options, flags::parent_options, Read),
        operation(flags::__path_parent_variants, flags::parent_variants, Read),
        operation(flags::__path_has_dependencies, flags::has_dependencies, Read),
        operation(
            variants::__path_variants_batch,
            variants::variants_batch,
            WriteIn(Permission::UpdateFeatureEnvironmentVariants),
        ),
        operation(
            variants::__path_environment_variants,
            variants::environment_variants,
            ReadIn(Permission::ReadFeatureEnvironmentVariants),
        ),
        operation(
            variants::__path_overwrite_environment_variants,
            variants::overwrite_environment_variants,
            WriteIn(Permission::UpdateFeatureEnvironmentVariants),
        ),
        operation(
            variants::__path_patch_environment_variants,
            variants::patch_environment_variants,
            WriteIn(Permission::UpdateFeatureEnvironmentVariants),
        ),
        operation(
            flags::__path_on,
            flags::on,
            WriteIn(Permission::UpdateFeatureEnvironment),
        ),
        operation(
            flags::__path_off,
            flags::off,
            WriteIn(Permission::UpdateFeatureEnvironment),
        ),
        operation(
            strategies::__path_list,
            strategies::list,
            ReadIn(Permission::ReadFeatureEnvironmentVariants),
        ),
        operation(
            strategies::__path_add,
            strategies::add,
            WriteIn(Permission::CreateFeatureStrategy),
        ),
        operation(
            strategies::__path_get,
            strategies::get,
            ReadIn(Permission::ReadFeatureEnvironmentVariants),
        ),
        operation(
            strategies::__path_set_sort_order,
            strategies::set_sort_order,
            WriteIn(Permission::UpdateFeatureStrategy),
        ),
        operation(
            strategies::__path_patch,
            strategies::patch,
            WriteIn(Permission::UpdateFeatureStrategy),
        ),
        operation(
            strategies::__path_update,
            strategies::update,
            WriteIn(Permission::UpdateFeatureStrategy),
        ),
        operation(
            strategies::__path_delete,
            strategies::delete,
            WriteIn(Permission::DeleteFeatureStrategy),
        ),
        // The client API and SDK usage.
        operation(client::__path_features, client::features, Client),
        operation(client::__path_feature, client::feature, Client),
        operation(client::__path_delta, client::delta, Client),
        operation(client::__path_streaming, client::streaming, Client),
        operation(usage::__path_register, usage::register, Client),
        operation(usage::__path_metrics, usage::metrics, Client),
        operation(usage::__path_bulk, usage::bulk, Client),
        operation(edge::__path_instance_data, edge::instance_data, Client),
        operation(edge::__path_validate, edge::validate, Public),
        // The frontend API and OFREP.
        operation(frontend::__path_get_features, frontend::get_features, Frontend),
        operation(frontend::__path_post_features, frontend::post_features, Frontend),
        operation(frontend::__path_ui_config, frontend::ui_config, Read),
        operation(ofrep::__path_evaluate_flag, ofrep::evaluate_flag, Frontend),
        operation(ofrep::__path_evaluate_flags, ofrep::evaluate_flags, Frontend),
        operation(frontend::__path_set_cors, frontend::set_cors, Admin),
        operation(
            usage::__path_frontend_register,
            usage::frontend_register,
            Frontend,
        ),
        operation(usage::__path_frontend_metrics, usage::frontend_metrics, Frontend),
        operation(
            frontend::__path_client_features,
            frontend::client_features,
            Frontend,
        ),
        operation(frontend::__path_health, frontend::health, Frontend),
        operation(frontend::__path_prometheus, frontend::prometheus, Frontend),
        // What SDKs reported.
        operation(applications::__path_list, applications::list, Read),
        operation(applications::__path_get, applications::get, Read),
        operation(applications::__path_overview, applications::overview, Read),
        operation(applications::__path_instances, applications::instances, Read),
        operation(
            applications::__path_feature_usage,
            applications::feature_usage,
            Read,
        ),
        operation(applications::__path_raw_usage, applications::raw_usage, Read),
        operation(
            applications::__path_outdated_sdks,
            applications::outdated_sdks,
            Read,
        ),
        operation(
            applications::__path_outdated_project_sdks,
            applications::outdated_project_sdks,
            Read,
        ),
        operation(applications::__path_of_project, applications::of_project, Read),
        operation(
            applications::__path_unknown_flags,
            applications::unknown_flags,
            Read,
        ),
    ]
}

/// A trailing slash names the same resource, as in Unleash's (non-strict) router: the slash is
/// trimmed before routing, so every route keeps one static pattern, which the router matches
/// without a regular expression. The API page keeps its own (`/docs/`).
pub async fn trim_trailing_slash(
    mut request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let path = request.path();
    if path.len() > 1 && path.ends_with('/') && !path.starts_with("/docs") {
        let trimmed = match path.trim_end_matches('/') {
            "" => "/",
            trimmed => trimmed,
        };
        let mut parts = request.head().uri.clone().into_parts();
        let path_and_query = match parts.path_and_query.as_ref().and_then(|pq| pq.query()) {
            Some(query) => format!("{trimmed}?{query}"),
            None => trimmed.to_owned(),
        };
        if let Ok(path_and_query) = PathAndQuery::try_from(path_and_query) {
            parts.path_and_query = Some(path_and_query);
            if let Ok(uri) = Uri::from_parts(parts) {
                request.match_info_mut().get_mut().update(&uri);
                request.head_mut().uri = uri;
            }
        }
    }
    next.call(request).await
}

/// Registers every operation on `config`: one resource per path, which holds the accesses its
/// operations declare and answers its other methods with 405 (404 under the frontend API, as
/// Unleash's router answers them).
pub fn configure(config: &mut web::ServiceConfig) {
    let mut paths: Vec<(String, Vec<Operation>)> = Vec::new();
    // The router tries resources in the order they are registered, so the paths SDKs poll
    // thousands of times a second come first.
    // A static segment is tried before a parameter in the same place, so that
    // `/api/admin/tag-types/validate` is not taken for the tag type `validate`.
    let mut declared = operations();
    declared.sort_by_key(|operation| {
        (
            !matches!(operation.access, Access::Client | Access::Frontend),
            operation
                .path
                .split('/')
                .map(|segment| segment.starts_with('{'))
                .collect::<Vec<bool>>(),
        )
    });
    // Operations whose paths differ only in their parameters' names (`/api-tokens/{name}` and
    // `/api-tokens/{token}`) share one resource: handlers read parameters by position.
    let shape = |path: &str| -> String {
        path.split('/')
            .map(|segment| if segment.starts_with('{') { "{}" } else { segment })
            .collect::<Vec<_>>()
            .join("/")
    };
    for operation in declared {
        match paths
            .iter_mut()
            .find(|(path, _)| shape(path) == shape(&operation.path))
        {
            Some((_, operations)) => operations.push(operation),
            None => paths.push((operation.path.clone(), vec![operation])),
        }
    }
    for (path, operations) in paths {
        let declared = Declared(
            operations
                .iter()
                .map(|operation| (operation.method.clone(), operation.access))
                .collect(),
        );
        // Unleash's frontend API router answers a method it does not serve as an unknown path.
        let other_methods = if path.starts_with("/api/frontend") {
            web::to(handlers::not_found)
        } else {
            web::to(handlers::method_not_allowed)
        };
        let mut resource = web::resource(path)
            .app_data(declared)
            .default_service(other_methods);
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
