//! The whole application: middleware, settings and every declared operation.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::{App, web};

use crate::extract::BodyLimit;
use crate::state::AppState;
use crate::{console, cors, extract, handlers, openapi, request_log, routes};

/// The whole application on `state`.
pub fn build_app(
    state: web::Data<AppState>,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = actix_web::Error,
        InitError = (),
    >,
> {
    let limit = state.app.settings().body_limit;
    let edge = state.edge.is_some();
    App::new()
        .wrap(actix_web::middleware::Compress::default())
        .wrap(actix_web::middleware::from_fn(cors::cors))
        .wrap(actix_web::middleware::from_fn(request_log::log_request))
        .wrap(actix_web::middleware::from_fn(routes::trim_trailing_slash))
        .wrap(actix_web::middleware::from_fn(console::headers))
        .app_data(state)
        .app_data(web::Data::new(BodyLimit(limit)))
        .app_data(web::PayloadConfig::new(limit))
        .app_data(web::PathConfig::default().error_handler(extract::path_error))
        .app_data(web::QueryConfig::default().error_handler(extract::query_error))
        .configure(|config| {
            if edge {
                // An edge serves SDKs and its backstage; the admin API, the console and the
                // API document are the upstream's.
                routes::configure_edge(config);
                config
                    .route(
                        "/internal-backstage/health",
                        web::get().to(handlers::backstage::health),
                    )
                    .route(
                        "/internal-backstage/ready",
                        web::get().to(handlers::backstage::ready),
                    )
                    .route(
                        "/internal-backstage/tokens",
                        web::get().to(handlers::backstage::tokens),
                    )
                    .route(
                        "/internal-backstage/features",
                        web::get().to(handlers::backstage::features),
                    )
                    .route("/internal-backstage/metrics", web::get().to(handlers::prometheus));
            } else {
                routes::configure(config);
                console::configure(config);
                config
                    .route("/docs/openapi.json", web::get().to(openapi::serve))
                    .service(
                        utoipa_swagger_ui::SwaggerUi::new("/docs/{_:.*}")
                            .config(utoipa_swagger_ui::Config::from("/docs/openapi.json")),
                    );
            }
        })
        .default_service(web::to(handlers::not_found))
}
