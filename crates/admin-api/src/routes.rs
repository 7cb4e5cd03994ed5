//! Every route, in one place. Each resource answers other methods with 405.

use actix_web::web;

use crate::handlers::{self, client, features, invite, playground, session, variants};

/// Registers every route on `config`.
pub fn configure(config: &mut web::ServiceConfig) {
    let resource = |path: &str| web::resource(path).default_service(web::to(handlers::method_not_allowed));
    config
        .service(resource("/health").route(web::get().to(handlers::health)))
        .service(resource("/ready").route(web::get().to(handlers::ready)))
        .service(resource("/auth/simple/login").route(web::post().to(session::login)))
        .service(resource("/logout").route(web::post().to(session::logout)))
        .service(resource("/invite/{token}/validate").route(web::get().to(invite::validate)))
        .service(resource("/invite/{token}/signup").route(web::post().to(invite::sign_up)))
        .service(resource("/api/client/features").route(web::get().to(client::features)))
        .service(resource("/api/client/features/{featureName}").route(web::get().to(client::feature)))
        .service(resource("/api/admin/playground").route(web::post().to(playground::playground)))
        .service(resource("/api/admin/playground/advanced").route(web::post().to(playground::advanced)))
        .service(
            resource("/api/admin/invite-link/tokens")
                .route(web::get().to(invite::list))
                .route(web::post().to(invite::create)),
        )
        .service(
            resource("/api/admin/invite-link/tokens/{token}")
                .route(web::get().to(invite::get))
                .route(web::put().to(invite::update)),
        )
        .service(resource("/api/admin/environments").route(web::get().to(features::environments)))
        .service(resource("/api/admin/projects").route(web::get().to(features::projects)))
        .service(resource("/api/admin/segments").route(web::post().to(features::create_segment)))
        .service(
            resource("/api/admin/projects/{projectId}/features")
                .route(web::get().to(features::list_features))
                .route(web::post().to(features::create_feature)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}").route(web::get().to(features::get_feature)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/variants-batch")
                .route(web::put().to(variants::variants_batch)),
        )
        .service(
            resource("/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/variants")
                .route(web::get().to(variants::environment_variants)),
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
