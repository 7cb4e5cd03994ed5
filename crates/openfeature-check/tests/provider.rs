//! OpenFeature's own Rust SDK, with its OFREP provider, evaluating flags through the real HTTP
//! server on a scratch database of the backend under test (`HALYARD_TEST_DATABASE`).

use std::net::TcpListener;

use admin_api::AppState;
use flag_admin::app::seeding::{seed_admin_tokens, seed_tokens};
use flag_admin::runtime::domain::TokenType;
use flag_admin::{Ctx, Settings};
use serde_json::{Value, json};

const ADMIN: &str = "*:*.openfeature-admin-secret";
const FRONTEND: &str = "*:development.openfeature-frontend-secret";

#[test]
fn openfeatures_own_provider_evaluates_through_the_real_server() -> Result<(), Box<dyn std::error::Error>> {
    use open_feature::{EvaluationContext, EvaluationErrorCode, OpenFeature};
    use open_feature_ofrep::{OfrepOptions, OfrepProvider};

    let scratch = flag_store::scratch::Scratch::new()?;
    let store = scratch.open()?;
    seed_admin_tokens(&store, &[ADMIN.into()])?;
    seed_tokens(&store, TokenType::Frontend, &[FRONTEND.into()])?;
    let state = actix_web::web::Data::new(AppState::new(Ctx::new(store, Settings::default())?));
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    // The server, on a real socket, in a thread with its own actix system.
    let (started, ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        actix_web::rt::System::new().block_on(async move {
            match admin_api::server::start(state, ("127.0.0.1", port)) {
                Ok(server) => {
                    let _ = started.send(Ok(()));
                    let _ = server.await;
                }
                Err(error) => {
                    let _ = started.send(Err(error.to_string()));
                }
            }
        });
    });
    ready.recv()??;
    let base = format!("http://127.0.0.1:{port}");
    // The flags, through the admin API of the running server.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let admin = |path: &str, body: Value| -> Result<u16, ureq::Error> {
        Ok(agent
            .post(&format!("{base}{path}"))
            .header("Authorization", ADMIN)
            .send_json(&body)?
            .status()
            .as_u16())
    };
    let features = "/api/admin/projects/default/features";
    assert_eq!(admin(features, json!({"name": "everyone"}))?, 201);
    assert_eq!(admin(features, json!({"name": "pro-only"}))?, 201);
    assert_eq!(
        admin(
            &format!("{features}/everyone/environments/development/strategies"),
            json!({"name": "default"})
        )?,
        200
    );
    let pro = json!({"name": "default", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
        "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default",
                      "payload": {"type": "string", "value": "gold-tier"}}]});
    assert_eq!(
        admin(
            &format!("{features}/pro-only/environments/development/strategies"),
            pro
        )?,
        200
    );
    for name in ["everyone", "pro-only"] {
        assert_eq!(
            admin(
                &format!("{features}/{name}/environments/development/on"),
                json!({})
            )?,
            200
        );
    }

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut options = OfrepOptions {
            base_url: base.clone(),
            ..OfrepOptions::default()
        };
        options
            .headers
            .insert("Authorization", format!("Bearer {FRONTEND}").parse()?);
        let provider = OfrepProvider::new(options).await?;
        let mut api = OpenFeature::singleton_mut().await;
        api.set_provider(provider).await;
        let client = api.create_client();
        drop(api);
        let user = EvaluationContext::default().with_targeting_key("user-1");
        let pro_user = user.clone().with_custom_field("plan", "pro");
        assert!(
            client
                .get_bool_value("everyone", Some(&user), None)
                .await
                .map_err(|error| format!("{error:?}"))?
        );
        assert_eq!(
            client
                .get_string_value("pro-only", Some(&pro_user), None)
                .await
                .map_err(|error| format!("{error:?}"))?,
            "gold-tier"
        );
        assert!(
            !client
                .get_bool_value("pro-only", Some(&user), None)
                .await
                .map_err(|error| format!("{error:?}"))?
        );
        let missing = client.get_bool_value("no-such-flag", Some(&user), None).await;
        assert!(
            missing
                .as_ref()
                .is_err_and(|error| error.code == EvaluationErrorCode::FlagNotFound),
            "{missing:?}"
        );
        Ok::<(), Box<dyn std::error::Error>>(())
    })
}
