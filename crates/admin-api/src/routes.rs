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
use flag_admin::{catalogue, delivery, identity};
use utoipa::openapi::path::{HttpMethod, Operation as Documented};

use crate::auth::Declared;
use crate::handlers::{
    self, addons, applications, archive, change_requests, client, context, dependencies, edge, environments,
    events, export, flags, frontend, invite, lifecycle, me, ofrep, playground, projects, search, segments,
    session, sso, strategies, strategy_types, tags, teams, tokens, usage, users, variants,
};
use crate::state::AppState;

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
    D: utoipa::Path,
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
        route: Box::new(move || web::to(handler.clone())),
    }
}

/// Declares the operations from one list of `operation(description, handler, access)`:
/// [`operations`], which the router and the document read, and [`Described`], which collects
/// the schemas the same handlers' descriptions name (utoipa gathers them only through an
/// `OpenApi` derive). So an operation is declared once, and no interface can miss it.
macro_rules! declare {
    ($(operation($described:path, $handler:path, $access:expr $(,)?)),* $(,)?) => {
        /// Every operation, in the order the API description lists them, grouped by resource. Each
        /// access is the one its operation declares beside its function in `flag_admin`, which the
        /// console reads too; only the server's own health and metrics, which no operation of the
        /// application answers (`/ready` asks the runtime, a floor below the accesses), are declared
        /// public here.
        #[expect(
            deprecated,
            reason = "the deprecated playground is still served, as Unleash serves it"
        )]
        pub fn operations() -> Vec<Operation> {
            vec![$(operation($described, $handler, $access)),*]
        }

        /// The schemas the operations' descriptions name; only its components are read.
        #[derive(Debug, utoipa::OpenApi)]
        #[openapi(paths($($handler),*))]
        pub struct Described;
    };
}

declare! {
    // Operations.
    operation(handlers::__path_health, handlers::health, Access::Public),
    operation(handlers::__path_ready, handlers::ready, Access::Public),
    operation(handlers::__path_prometheus, handlers::prometheus, Access::Public),
    // Sessions and invitations.
    operation(session::__path_login, session::login, identity::session::LOGIN),
    operation(session::__path_logout, session::logout, identity::session::LOGOUT),
    operation(
        invite::__path_validate,
        invite::validate,
        identity::invite::VALIDATE,
    ),
    operation(invite::__path_sign_up, invite::sign_up, identity::invite::SIGN_UP),
    // The playgrounds.
    operation(
        playground::__path_playground,
        playground::playground,
        delivery::playground::DEPRECATED,
    ),
    operation(
        playground::__path_advanced,
        playground::advanced,
        delivery::playground::ADVANCED,
    ),
    // The signed-in caller.
    operation(me::__path_get, me::get, identity::me::GET),
    operation(me::__path_profile, me::profile, identity::me::PROFILE),
    operation(
        me::__path_close_splash,
        me::close_splash,
        identity::me::CLOSE_SPLASH,
    ),
    // Invite links.
    operation(invite::__path_list, invite::list, identity::invite::LIST),
    operation(invite::__path_create, invite::create, identity::invite::CREATE),
    operation(invite::__path_get, invite::get, identity::invite::GET),
    operation(invite::__path_update, invite::update, identity::invite::UPDATE),
    // Single sign-on.
    operation(sso::__path_get_oidc, sso::get_oidc, identity::oidc::SETTINGS),
    operation(sso::__path_set_oidc, sso::set_oidc, identity::oidc::SAVE_SETTINGS),
    operation(
        sso::__path_get_password,
        sso::get_password,
        identity::oidc::PASSWORD_SETTINGS,
    ),
    operation(
        sso::__path_set_password,
        sso::set_password,
        identity::oidc::SAVE_PASSWORD_SETTINGS,
    ),
    // Webhooks.
    operation(addons::__path_list, addons::list, catalogue::addons::LIST),
    operation(addons::__path_create, addons::create, catalogue::addons::CREATE),
    operation(addons::__path_get, addons::get, catalogue::addons::GET),
    operation(addons::__path_update, addons::update, catalogue::addons::UPDATE),
    operation(addons::__path_delete, addons::delete, catalogue::addons::DELETE),
    operation(
        addons::__path_deliveries,
        addons::deliveries,
        catalogue::addons::DELIVERIES,
    ),
    // Environments.
    operation(
        environments::__path_list,
        environments::list,
        catalogue::environments::LIST,
    ),
    operation(
        environments::__path_create,
        environments::create,
        catalogue::environments::CREATE,
    ),
    operation(
        environments::__path_on,
        environments::on,
        catalogue::environments::SWITCH,
    ),
    operation(
        environments::__path_off,
        environments::off,
        catalogue::environments::SWITCH,
    ),
    operation(
        environments::__path_get,
        environments::get,
        catalogue::environments::GET,
    ),
    operation(
        environments::__path_sort_order,
        environments::sort_order,
        catalogue::environments::SET_SORT_ORDER,
    ),
    operation(
        environments::__path_update,
        environments::update,
        catalogue::environments::UPDATE,
    ),
    operation(
        environments::__path_delete,
        environments::delete,
        catalogue::environments::DELETE,
    ),
    operation(
        environments::__path_of_project,
        environments::of_project,
        catalogue::environments::OF_PROJECT,
    ),
    // Projects.
    operation(projects::__path_list, projects::list, catalogue::overview::LIST),
    operation(
        projects::__path_create,
        projects::create,
        catalogue::projects::CREATE,
    ),
    operation(projects::__path_get, projects::get, catalogue::projects::GET),
    operation(
        projects::__path_update,
        projects::update,
        catalogue::projects::UPDATE,
    ),
    operation(
        change_requests::__path_config,
        change_requests::config,
        catalogue::change_requests::CONFIG,
    ),
    operation(
        change_requests::__path_set_config,
        change_requests::set_config,
        catalogue::change_requests::SET_CONFIG,
    ),
    operation(
        change_requests::__path_add,
        change_requests::add,
        catalogue::change_requests::ADD,
    ),
    operation(
        change_requests::__path_list,
        change_requests::list,
        catalogue::change_requests::LIST,
    ),
    operation(
        change_requests::__path_open,
        change_requests::open,
        catalogue::change_requests::LIST,
    ),
    operation(
        change_requests::__path_pending_for_feature,
        change_requests::pending_for_feature,
        catalogue::change_requests::PENDING_FOR_FEATURE,
    ),
    operation(
        change_requests::__path_scheduled,
        change_requests::scheduled,
        catalogue::change_requests::SCHEDULED,
    ),
    operation(
        change_requests::__path_get,
        change_requests::get,
        catalogue::change_requests::GET,
    ),
    operation(
        change_requests::__path_discard,
        change_requests::discard,
        catalogue::change_requests::DISCARD,
    ),
    operation(
        change_requests::__path_change_state,
        change_requests::change_state,
        catalogue::change_requests::CHANGE_STATE,
    ),
    operation(
        change_requests::__path_set_title,
        change_requests::set_title,
        catalogue::change_requests::SET_TITLE,
    ),
    operation(
        change_requests::__path_comment,
        change_requests::comment,
        catalogue::change_requests::COMMENT,
    ),
    operation(
        change_requests::__path_edit_change,
        change_requests::edit_change,
        catalogue::change_requests::EDIT_CHANGE,
    ),
    operation(
        change_requests::__path_discard_change,
        change_requests::discard_change,
        catalogue::change_requests::DISCARD_CHANGE,
    ),
    operation(
        projects::__path_update_settings,
        projects::update_settings,
        catalogue::projects::UPDATE_SETTINGS,
    ),
    operation(
        projects::__path_delete,
        projects::delete,
        catalogue::projects::DELETE,
    ),
    operation(
        projects::__path_overview,
        projects::overview,
        catalogue::overview::OVERVIEW,
    ),
    operation(
        projects::__path_status,
        projects::status,
        catalogue::overview::STATUS,
    ),
    operation(
        projects::__path_flag_creators,
        projects::flag_creators,
        catalogue::overview::FLAG_CREATORS,
    ),
    operation(
        projects::__path_dashboard,
        projects::dashboard,
        catalogue::overview::DASHBOARD,
    ),
    operation(
        projects::__path_dashboard_project,
        projects::dashboard_project,
        catalogue::overview::DASHBOARD_PROJECT,
    ),
    operation(
        projects::__path_enable_environment,
        projects::enable_environment,
        catalogue::projects::ENABLE_ENVIRONMENT,
    ),
    operation(
        projects::__path_disable_environment,
        projects::disable_environment,
        catalogue::projects::DISABLE_ENVIRONMENT,
    ),
    // Context fields, strategy types and segments.
    operation(
        context::__path_list,
        context::list,
        catalogue::context_fields::LIST,
    ),
    operation(
        context::__path_create,
        context::create,
        catalogue::context_fields::CREATE,
    ),
    operation(
        strategy_types::__path_list,
        strategy_types::list,
        catalogue::strategy_types::LIST,
    ),
    operation(
        strategy_types::__path_create,
        strategy_types::create,
        catalogue::strategy_types::CREATE,
    ),
    operation(segments::__path_list, segments::list, catalogue::segments::LIST),
    operation(
        segments::__path_create,
        segments::create,
        catalogue::segments::CREATE,
    ),
    operation(context::__path_get, context::get, catalogue::context_fields::GET),
    operation(
        context::__path_of_project,
        context::of_project,
        catalogue::context_fields::OF_PROJECT,
    ),
    operation(
        context::__path_update,
        context::update,
        catalogue::context_fields::UPDATE,
    ),
    operation(
        context::__path_delete,
        context::delete,
        catalogue::context_fields::DELETE,
    ),
    operation(
        context::__path_validate,
        context::validate,
        catalogue::context_fields::VALIDATE_NAME,
    ),
    operation(
        context::__path_add_legal_value,
        context::add_legal_value,
        catalogue::context_fields::ADD_LEGAL_VALUE,
    ),
    operation(
        context::__path_remove_legal_value,
        context::remove_legal_value,
        catalogue::context_fields::REMOVE_LEGAL_VALUE,
    ),
    operation(
        context::__path_strategies,
        context::strategies,
        catalogue::context_fields::STRATEGIES,
    ),
    operation(
        context::__path_validate_constraint,
        context::validate_constraint,
        catalogue::context_fields::VALIDATE_CONSTRAINT,
    ),
    operation(
        strategy_types::__path_get,
        strategy_types::get,
        catalogue::strategy_types::GET,
    ),
    operation(
        strategy_types::__path_update,
        strategy_types::update,
        catalogue::strategy_types::UPDATE,
    ),
    operation(
        strategy_types::__path_delete,
        strategy_types::delete,
        catalogue::strategy_types::DELETE,
    ),
    operation(
        strategy_types::__path_deprecate,
        strategy_types::deprecate,
        catalogue::strategy_types::SET_DEPRECATED,
    ),
    operation(
        strategy_types::__path_reactivate,
        strategy_types::reactivate,
        catalogue::strategy_types::SET_DEPRECATED,
    ),
    operation(segments::__path_get, segments::get, catalogue::segments::GET),
    operation(
        segments::__path_update,
        segments::update,
        catalogue::segments::UPDATE,
    ),
    operation(
        segments::__path_delete,
        segments::delete,
        catalogue::segments::DELETE,
    ),
    operation(
        segments::__path_strategies,
        segments::strategies,
        catalogue::segments::STRATEGIES,
    ),
    operation(
        segments::__path_of_strategy,
        segments::of_strategy,
        catalogue::segments::OF_STRATEGY,
    ),
    operation(
        segments::__path_validate,
        segments::validate,
        catalogue::segments::VALIDATE_NAME,
    ),
    // API tokens and users.
    operation(tokens::__path_list, tokens::list, identity::tokens::LIST),
    operation(tokens::__path_create, tokens::create, identity::tokens::CREATE),
    operation(tokens::__path_delete, tokens::delete, identity::tokens::DELETE),
    operation(tokens::__path_by_name, tokens::by_name, identity::tokens::BY_NAME),
    operation(
        tokens::__path_set_expiry,
        tokens::set_expiry,
        identity::tokens::SET_EXPIRY,
    ),
    operation(
        tokens::__path_of_project,
        tokens::of_project,
        identity::tokens::OF_PROJECT,
    ),
    operation(
        tokens::__path_create_for_project,
        tokens::create_for_project,
        identity::tokens::CREATE_FOR_PROJECT,
    ),
    operation(
        tokens::__path_delete_for_project,
        tokens::delete_for_project,
        identity::tokens::DELETE_FOR_PROJECT,
    ),
    // Teams.
    operation(teams::__path_permissions, teams::permissions, identity::teams::PERMISSIONS),
    operation(teams::__path_roles, teams::roles, identity::teams::ROLES),
    operation(teams::__path_role, teams::role, identity::teams::ROLE),
    operation(teams::__path_create_role, teams::create_role, identity::teams::CREATE_ROLE),
    operation(teams::__path_update_role, teams::update_role, identity::teams::UPDATE_ROLE),
    operation(teams::__path_delete_role, teams::delete_role, identity::teams::DELETE_ROLE),
    operation(teams::__path_groups, teams::groups, identity::teams::GROUPS),
    operation(teams::__path_group, teams::group, identity::teams::GROUP),
    operation(teams::__path_create_group, teams::create_group, identity::teams::CREATE_GROUP),
    operation(teams::__path_update_group, teams::update_group, identity::teams::UPDATE_GROUP),
    operation(teams::__path_delete_group, teams::delete_group, identity::teams::DELETE_GROUP),
    operation(teams::__path_project_access, teams::project_access, identity::teams::PROJECT_ACCESS),
    operation(teams::__path_set_project_access, teams::set_project_access, identity::teams::SET_PROJECT_ACCESS),
    operation(teams::__path_add_project_access, teams::add_project_access, identity::teams::ADD_PROJECT_ACCESS),
    operation(teams::__path_remove_user_access, teams::remove_user_access, identity::teams::REMOVE_PROJECT_ACCESS),
    operation(teams::__path_remove_group_access, teams::remove_group_access, identity::teams::REMOVE_PROJECT_ACCESS),
    operation(teams::__path_service_accounts, teams::service_accounts, identity::teams::SERVICE_ACCOUNTS),
    operation(teams::__path_create_service_account, teams::create_service_account, identity::teams::CREATE_SERVICE_ACCOUNT),
    operation(teams::__path_update_service_account, teams::update_service_account, identity::teams::UPDATE_SERVICE_ACCOUNT),
    operation(teams::__path_delete_service_account, teams::delete_service_account, identity::teams::DELETE_SERVICE_ACCOUNT),
    operation(teams::__path_tokens, teams::tokens, identity::teams::TOKENS),
    operation(teams::__path_create_token, teams::create_token, identity::teams::CREATE_TOKEN),
    operation(teams::__path_delete_token, teams::delete_token, identity::teams::DELETE_TOKEN),
    operation(users::__path_list, users::list, identity::users::LIST),
    operation(users::__path_search, users::search, identity::users::SEARCH),
    operation(users::__path_get, users::get, identity::users::GET),
    operation(users::__path_create, users::create, identity::users::CREATE),
    operation(users::__path_update, users::update, identity::users::UPDATE),
    operation(users::__path_delete, users::delete, identity::users::DELETE),
    operation(
        users::__path_change_password,
        users::change_password,
        identity::users::CHANGE_PASSWORD,
    ),
    // Features.
    operation(flags::__path_list, flags::list, catalogue::features::LIST),
    operation(flags::__path_create, flags::create, catalogue::features::CREATE),
    operation(flags::__path_get, flags::get, catalogue::features::GET),
    operation(flags::__path_update, flags::update, catalogue::features::UPDATE),
    operation(flags::__path_patch, flags::patch, catalogue::features::PATCH),
    operation(flags::__path_clone, flags::clone, catalogue::features::CLONE),
    operation(
        flags::__path_validate_name,
        flags::validate_name,
        catalogue::features::VALIDATE_NAME,
    ),
    operation(flags::__path_types, flags::types, catalogue::features::TYPES),
    operation(
        flags::__path_set_lifetime,
        flags::set_lifetime,
        catalogue::features::SET_LIFETIME,
    ),
    operation(
        flags::__path_environment,
        flags::environment,
        catalogue::features::ENVIRONMENT,
    ),
    operation(
        flags::__path_bulk_on,
        flags::bulk_on,
        catalogue::features::SWITCH_MANY,
    ),
    operation(
        flags::__path_bulk_off,
        flags::bulk_off,
        catalogue::features::SWITCH_MANY,
    ),
    operation(
        archive::__path_stale,
        archive::stale,
        catalogue::archive::STALE_MANY,
    ),
    // The archive.
    operation(
        archive::__path_archive_one,
        archive::archive_one,
        catalogue::archive::ARCHIVE_ONE,
    ),
    operation(
        archive::__path_archive_many,
        archive::archive_many,
        catalogue::archive::ARCHIVE_MANY,
    ),
    operation(
        archive::__path_validate,
        archive::validate,
        catalogue::archive::VALIDATE,
    ),
    operation(
        archive::__path_revive_one,
        archive::revive_one,
        catalogue::archive::REVIVE_ONE,
    ),
    operation(
        archive::__path_revive_many,
        archive::revive_many,
        catalogue::archive::REVIVE_MANY,
    ),
    operation(
        archive::__path_delete_one,
        archive::delete_one,
        catalogue::archive::DELETE_ONE,
    ),
    operation(
        archive::__path_delete_many,
        archive::delete_many,
        catalogue::archive::DELETE_MANY,
    ),
    operation(
        search::__path_features,
        search::features,
        catalogue::search::SEARCH,
    ),
    // Export and import.
    operation(export::__path_export, export::export, catalogue::export::EXPORT),
    operation(
        export::__path_validate,
        export::validate,
        catalogue::export::VALIDATE,
    ),
    operation(export::__path_import, export::import, catalogue::export::IMPORT),
    // Lifecycles.
    operation(
        lifecycle::__path_stages,
        lifecycle::stages,
        catalogue::lifecycle::STAGES,
    ),
    operation(
        lifecycle::__path_complete,
        lifecycle::complete,
        catalogue::lifecycle::COMPLETE,
    ),
    operation(
        lifecycle::__path_uncomplete,
        lifecycle::uncomplete,
        catalogue::lifecycle::UNCOMPLETE,
    ),
    operation(
        lifecycle::__path_count,
        lifecycle::count,
        catalogue::lifecycle::COUNT,
    ),
    // The audit log.
    operation(events::__path_list, events::list, catalogue::events::LIST),
    operation(
        events::__path_of_feature,
        events::of_feature,
        catalogue::events::OF_FEATURE,
    ),
    operation(events::__path_search, events::search, catalogue::events::SEARCH),
    operation(
        events::__path_history_changes,
        events::history_changes,
        catalogue::history::CHANGES,
    ),
    operation(
        events::__path_creators,
        events::creators,
        catalogue::events::CREATORS,
    ),
    // Tags.
    operation(tags::__path_list_types, tags::list_types, catalogue::tags::TYPES),
    operation(
        tags::__path_create_type,
        tags::create_type,
        catalogue::tags::CREATE_TYPE,
    ),
    operation(
        tags::__path_validate_type,
        tags::validate_type,
        catalogue::tags::VALIDATE_TYPE,
    ),
    operation(tags::__path_get_type, tags::get_type, catalogue::tags::GET_TYPE),
    operation(
        tags::__path_update_type,
        tags::update_type,
        catalogue::tags::UPDATE_TYPE,
    ),
    operation(
        tags::__path_delete_type,
        tags::delete_type,
        catalogue::tags::DELETE_TYPE,
    ),
    operation(tags::__path_list, tags::list, catalogue::tags::LIST),
    operation(tags::__path_create, tags::create, catalogue::tags::CREATE),
    operation(
        tags::__path_list_of_type,
        tags::list_of_type,
        catalogue::tags::LIST,
    ),
    operation(tags::__path_get, tags::get, catalogue::tags::GET),
    operation(tags::__path_delete, tags::delete, catalogue::tags::DELETE),
    operation(
        tags::__path_of_feature,
        tags::of_feature,
        catalogue::tags::OF_FEATURE,
    ),
    operation(
        tags::__path_add_to_feature,
        tags::add_to_feature,
        catalogue::tags::ADD_TO_FEATURE,
    ),
    operation(
        tags::__path_update_feature,
        tags::update_feature,
        catalogue::tags::UPDATE_FEATURE,
    ),
    operation(
        tags::__path_remove_from_feature,
        tags::remove_from_feature,
        catalogue::tags::REMOVE_FROM_FEATURE,
    ),
    operation(
        tags::__path_update_many,
        tags::update_many,
        catalogue::tags::UPDATE_MANY,
    ),
    operation(
        dependencies::__path_add,
        dependencies::add,
        catalogue::dependencies::ADD,
    ),
    operation(
        dependencies::__path_remove,
        dependencies::remove,
        catalogue::dependencies::REMOVE,
    ),
    operation(
        flags::__path_parent_options,
        flags::parent_options,
        catalogue::features::PARENT_OPTIONS,
    ),
    operation(
        flags::__path_parent_variants,
        flags::parent_variants,
        catalogue::features::PARENT_VARIANTS,
    ),
    operation(
        flags::__path_has_dependencies,
        flags::has_dependencies,
        catalogue::features::HAS_DEPENDENCIES,
    ),
    operation(
        variants::__path_variants_batch,
        variants::variants_batch,
        catalogue::variants::BATCH,
    ),
    operation(
        variants::__path_environment_variants,
        variants::environment_variants,
        catalogue::variants::GET,
    ),
    operation(
        variants::__path_overwrite_environment_variants,
        variants::overwrite_environment_variants,
        catalogue::variants::OVERWRITE,
    ),
    operation(
        variants::__path_patch_environment_variants,
        variants::patch_environment_variants,
        catalogue::variants::PATCH,
    ),
    operation(flags::__path_on, flags::on, catalogue::features::SWITCH_WITH),
    operation(flags::__path_off, flags::off, catalogue::features::SWITCH_WITH),
    operation(
        strategies::__path_list,
        strategies::list,
        catalogue::strategies::LIST,
    ),
    operation(
        strategies::__path_add,
        strategies::add,
        catalogue::strategies::ADD,
    ),
    operation(
        strategies::__path_get,
        strategies::get,
        catalogue::strategies::GET,
    ),
    operation(
        strategies::__path_set_sort_order,
        strategies::set_sort_order,
        catalogue::strategies::SET_SORT_ORDER,
    ),
    operation(
        strategies::__path_patch,
        strategies::patch,
        catalogue::strategies::PATCH,
    ),
    operation(
        strategies::__path_update,
        strategies::update,
        catalogue::strategies::UPDATE,
    ),
    operation(
        strategies::__path_delete,
        strategies::delete,
        catalogue::strategies::DELETE,
    ),
    // The client API and SDK usage.
    operation(
        client::__path_features,
        client::features,
        delivery::client::RENDER,
    ),
    operation(client::__path_feature, client::feature, delivery::client::FEATURE),
    operation(client::__path_delta, client::delta, delivery::delta::DELTA),
    operation(
        client::__path_streaming,
        client::streaming,
        delivery::delta::FOLLOW,
    ),
    operation(
        usage::__path_register,
        usage::register,
        delivery::reports::REGISTER,
    ),
    operation(usage::__path_metrics, usage::metrics, delivery::reports::METRICS),
    operation(usage::__path_bulk, usage::bulk, delivery::reports::BULK),
    operation(
        edge::__path_instance_data,
        edge::instance_data,
        delivery::reports::EDGE_INSTANCE,
    ),
    operation(
        edge::__path_validate,
        edge::validate,
        identity::auth::VALIDATE_TOKENS,
    ),
    // The frontend API and OFREP.
    operation(
        frontend::__path_get_features,
        frontend::get_features,
        delivery::frontend::EVALUATE,
    ),
    operation(
        frontend::__path_post_features,
        frontend::post_features,
        delivery::frontend::EVALUATE,
    ),
    operation(
        frontend::__path_ui_config,
        frontend::ui_config,
        delivery::frontend::UI_CONFIG,
    ),
    operation(
        ofrep::__path_evaluate_flag,
        ofrep::evaluate_flag,
        delivery::ofrep::EVALUATE_FLAG,
    ),
    operation(
        ofrep::__path_evaluate_flags,
        ofrep::evaluate_flags,
        delivery::ofrep::EVALUATE_FLAGS,
    ),
    operation(
        frontend::__path_set_cors,
        frontend::set_cors,
        delivery::frontend::SET_CORS,
    ),
    operation(
        usage::__path_frontend_register,
        usage::frontend_register,
        delivery::reports::FRONTEND_REGISTER,
    ),
    operation(
        usage::__path_frontend_metrics,
        usage::frontend_metrics,
        delivery::reports::FRONTEND_METRICS,
    ),
    operation(
        frontend::__path_client_features,
        frontend::client_features,
        delivery::frontend::NOT_SERVED,
    ),
    operation(
        frontend::__path_health,
        frontend::health,
        delivery::frontend::NOT_SERVED,
    ),
    operation(
        frontend::__path_prometheus,
        frontend::prometheus,
        delivery::frontend::NOT_SERVED,
    ),
    // What SDKs reported.
    operation(
        applications::__path_list,
        applications::list,
        delivery::applications::LIST,
    ),
    operation(
        applications::__path_get,
        applications::get,
        delivery::applications::GET,
    ),
    operation(
        applications::__path_overview,
        applications::overview,
        delivery::applications::OVERVIEW,
    ),
    operation(
        applications::__path_instances,
        applications::instances,
        delivery::applications::INSTANCES,
    ),
    operation(
        applications::__path_feature_usage,
        applications::feature_usage,
        delivery::applications::FEATURE_USAGE,
    ),
    operation(
        applications::__path_raw_usage,
        applications::raw_usage,
        delivery::applications::RAW_USAGE,
    ),
    operation(
        applications::__path_outdated_sdks,
        applications::outdated_sdks,
        delivery::applications::OUTDATED_SDKS,
    ),
    operation(
        applications::__path_outdated_project_sdks,
        applications::outdated_project_sdks,
        delivery::applications::OUTDATED_SDKS,
    ),
    operation(
        applications::__path_of_project,
        applications::of_project,
        delivery::applications::OF_PROJECT,
    ),
    operation(
        applications::__path_unknown_flags,
        applications::unknown_flags,
        delivery::applications::UNKNOWN_FLAGS,
    ),
}

/// A trailing slash names the same resource, as in Unleash's (non-strict) router: the slash is
/// trimmed before routing, so every route keeps one static pattern, which the router matches
/// without a regular expression. The API page keeps its own (`/docs/`). Under an edge's base
/// path, the base is taken off first, and a path outside it matches no route.
pub async fn trim_trailing_slash(
    mut request: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let base = request
        .app_data::<web::Data<AppState>>()
        .and_then(|state| state.base_path.clone());
    let mut path = request.path().to_owned();
    // Under a base path, only its paths are served, without it.
    if let Some(base) = base {
        path = match path.strip_prefix(base.as_str()) {
            Some("") => "/".to_owned(),
            Some(rest) if rest.starts_with('/') => rest.to_owned(),
            _ => OUTSIDE_BASE_PATH.to_owned(),
        };
    }
    let path = path.as_str();
    if path != request.path() || (path.len() > 1 && path.ends_with('/') && !path.starts_with("/docs")) {
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

/// Where a request outside the base path goes: no route, so the 404 envelope.
const OUTSIDE_BASE_PATH: &str = "/-/outside-the-base-path";

/// Registers every operation on `config`: one resource per path, which holds the accesses its
/// operations declare and answers its other methods with 405 (404 under the frontend API, as
/// Unleash's router answers them).
pub fn configure(config: &mut web::ServiceConfig) {
    configure_only(config, |_| true);
}

/// The public paths an edge serves besides the SDKs' API: its health and readiness, its
/// metrics, and what another edge asks of it.
const EDGE_PUBLIC: [&str; 4] = [
    "/health",
    "/ready",
    "/internal-backstage/prometheus",
    "/edge/validate",
];

/// Registers what an edge serves: the operations SDKs call (client and frontend tokens) and
/// `EDGE_PUBLIC`; the admin API and the console are the upstream's.
pub fn configure_edge(config: &mut web::ServiceConfig) {
    configure_only(config, |operation| {
        matches!(operation.access, Access::Client | Access::Frontend)
            || EDGE_PUBLIC.contains(&operation.path.as_str())
    });
}

fn configure_only(config: &mut web::ServiceConfig, served: impl Fn(&Operation) -> bool) {
    let mut paths: Vec<(String, Vec<Operation>)> = Vec::new();
    // The router tries resources in the order they are registered, so the paths SDKs poll
    // thousands of times a second come first.
    // A static segment is tried before a parameter in the same place, so that
    // `/api/admin/tag-types/validate` is not taken for the tag type `validate`.
    let mut declared = operations();
    declared.retain(|operation| served(operation));
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
            .wrap(actix_web::middleware::from_fn(crate::auth::admit))
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
