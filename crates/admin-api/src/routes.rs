//! Every route, in one place. Each resource answers other methods with 405; GET routes answer
//! HEAD as well.

use actix_web::{Route, guard, web};

use crate::handlers::{self, admin, client, features, invite, playground, session, users, variants};

/// A GET route that answers HEAD too, with the same status and headers and no body.
fn get() -> Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// Registers every route on `config`.
pub fn configure(config: &mut web::ServiceConfig) {
    let resource = |path: &str| web::resource(path).default_service(web::to(handlers::method_not_allowed));
    config
        .service(resource("/health").route(get().to(handlers::health)))
        .service(resource("/ready").route(get().to(handlers::ready)))
        .service(resource("/internal-backstage/prometheus").route(get().to(handlers::prometheus)))
        .service(resource("/auth/simple/login").route(web::post().to(session::login)))
        .service(resource("/logout").route(web::post().to(session::logout)))
        .service(resource("/invite/{token}/validate").route(get().to(invite::validate)))
        .service(resource("/invite/{token}/signup").route(web::post().to(invite::sign_up)))
        .service(resource("/api/client/features").route(get().to(client::features)))
        .service(resource("/api/client/features/{featureName}").route(get().to(client::feature)))
        .service(resource("/api/admin/playground").route(web::post().to(playground::playground)))
        .service(resource("/api/admin/playground/advanced").route(web::post().to(playground::advanced)))
        .service(
            resource("/api/admin/invite-link/tokens")
                .route(get().to(invite::list))
                .route(web::post().to(invite::create)),
        )
        .service(
            resource("/api/admin/invite-link/tokens/{token}")
                .route(get().to(invite::get))
                .route(web::put().to(invite::update)),
        )
        .service(
            resource("/api/admin/environments")
                .route(get().to(features::environments))
                .route(web::post().to(admin::create_environment)),
        )
        .service(resource("/api/admin/environments/{name}/{switch:on|off}").route(web::post().to(admin::switch_environment)))
        .service(
            resource("/api/admin/projects")
                .route(get().to(features::projects))
                .route(web::post().to(admin::create_project)),
        )
        .service(resource("/api/admin/projects/{projectId}").route(get().to(admin::get_project)))
        .service(
            resource("/api/admin/projects/{projectId}/environments").route(web::post().to(admin::enable_project_environment)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/environments/{environment}")
                .route(web::delete().to(admin::disable_project_environment)),
        )
        .service(
            resource("/api/admin/context")
                .route(get().to(admin::context_fields))
                .route(web::post().to(admin::create_context_field)),
        )
        .service(
            resource("/api/admin/strategies")
                .route(get().to(admin::strategy_types))
                .route(web::post().to(admin::create_strategy_type)),
        )
        .service(
            resource("/api/admin/segments")
                .route(get().to(admin::segments))
                .route(web::post().to(features::create_segment)),
        )
        .service(
            resource("/api/admin/api-tokens")
                .route(get().to(admin::list_api_tokens))
                .route(web::post().to(admin::create_api_token)),
        )
        .service(
            resource("/api/admin/user-admin")
                .route(get().to(users::list))
                .route(web::post().to(users::create)),
        )
        .service(
            resource("/api/admin/user-admin/{id}")
                .route(web::put().to(users::update))
                .route(web::delete().to(users::delete)),
        )
        .service(resource("/api/admin/api-tokens/{token}").route(web::delete().to(admin::delete_api_token)))
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/dependencies")
                .route(web::post().to(admin::add_dependency))
                .route(web::delete().to(admin::remove_dependency)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features")
                .route(get().to(features::list_features))
                .route(web::post().to(features::create_feature)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}").route(get().to(features::get_feature)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/variants-batch")
                .route(web::put().to(variants::variants_batch)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants")
                .route(get().to(variants::environment_variants)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/{state:on|off}")
                .route(web::post().to(features::switch)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies")
                .route(web::post().to(features::add_strategy)),
        )
        .service(
            resource(
                "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/strategies/{strategyId}",
            )
            .route(web::put().to(features::update_strategy))
            .route(web::delete().to(features::delete_strategy)),
        );
}
