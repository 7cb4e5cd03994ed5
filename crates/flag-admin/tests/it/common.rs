//! The small context every test of the operations runs in: a scratch store on the backend under
//! test (`HALYARD_TEST_DATABASE`), the application over it, and callers admitted as the
//! interfaces admit them.

use flag_admin::identity::auth::{Access, Caller, Principal};
use flag_admin::runtime::domain::RootRole;
use flag_admin::{Ctx, Settings};
use flag_store::scratch::Scratch;

/// What a test returns: any error fails it, with its message.
pub type Outcome = Result<(), Box<dyn std::error::Error>>;

/// A scratch store and the application over it. The store lives as long as the world.
pub struct World {
    /// The application.
    pub ctx: Ctx,
    /// Kept so that the scratch database outlives the application.
    _scratch: Scratch,
}

impl World {
    /// A fresh, migrated store with the application's default settings.
    pub fn new() -> Result<Self, Box<dyn std::error::Error>> {
        Self::with(Settings::default())
    }

    /// A fresh, migrated store with these settings.
    pub fn with(settings: Settings) -> Result<Self, Box<dyn std::error::Error>> {
        let scratch = Scratch::new()?;
        let ctx = Ctx::new(scratch.open()?, settings)?;
        Ok(Self {
            ctx,
            _scratch: scratch,
        })
    }

    /// The store, for reading what an operation wrote.
    pub fn store(&self) -> &flag_store::Store {
        self.ctx.store()
    }
}

/// An admin token for every environment, admitted to `access`.
pub fn admin(access: Access) -> Caller {
    token(access, None)
}

/// An admin token limited to `environments`, admitted to `access`; panics when refused, so a
/// test that expects a refusal calls [`Access::admit`] itself.
pub fn token(access: Access, environments: Option<&[&str]>) -> Caller {
    let principal = Principal::AdminToken {
        name: "test-token".into(),
        environments: environments.map(|names| names.iter().map(|name| (*name).to_owned()).collect()),
    };
    match access.admit(principal) {
        Ok(caller) => caller,
        Err(error) => panic!("the test token was refused {access:?}: {error}"),
    }
}

/// A signed-in user with `role`, as a principal.
pub fn user(id: i32, role: RootRole) -> Principal {
    Principal::User {
        id,
        label: format!("user-{id}"),
        role,
        grants: Default::default(),
    }
}

impl World {
    /// A temporary directory that lives as long as the world, for files an operation writes.
    pub fn directory(&self) -> &std::path::Path {
        self._scratch.directory()
    }
}

/// Imports `document`, a client-features document as SDKs receive it, into project `default`
/// and `environment`: flags as a test needs them, in one write.
pub fn import_flags(world: &World, environment: &str, document: serde_json::Value) -> Outcome {
    let document: flag_eval::ClientFeatures = serde_json::from_value(document)?;
    flag_admin::app::seeding::import(world.store(), "default", environment, &document)?;
    Ok(())
}

/// `value` as the JSON an interface renders, for a result whose fields are private.
pub fn json<T: serde::Serialize>(value: &T) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::to_value(value)
}

/// The flags the delivery tests evaluate, in `development` of project `default`: `everyone` on,
/// `pro-only` on for `plan=pro` with the variant `gold` (a JSON payload), `switched-off` off.
pub fn demo_flags(world: &World) -> Outcome {
    let pro = serde_json::json!({
        "name": "default",
        "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
        "variants": [{"name": "gold", "weight": 1000, "weightType": "variable", "stickiness": "default",
                      "payload": {"type": "json", "value": "{\"tier\":1}"}}]
    });
    import_flags(
        world,
        "development",
        serde_json::json!({"version": 2, "features": [
            {"name": "everyone", "enabled": true, "strategies": [{"name": "default"}]},
            {"name": "pro-only", "enabled": true, "strategies": [pro]},
            {"name": "switched-off", "enabled": false, "strategies": [{"name": "default"}]}
        ]}),
    )
}
