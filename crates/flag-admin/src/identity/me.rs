//! The signed-in caller, as Unleash's web UI asks for it: who they are, what they may do, and
//! the one-time dialogs they closed.

pub mod types;

use std::collections::BTreeMap;

use flag_store::models::{Actor, UserRow};
use flag_store::queries;

use crate::identity::auth::{Access, Caller, Principal};
use crate::identity::me::types::{MeOut, PermissionOut, ProfileOut, RoleOut};
use crate::identity::users::types::UserOut;
use crate::runtime::domain::RootRole;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// The permissions an Editor holds: every write on flags, in every project and environment.
const EDITOR_ROOT: [&str; 14] = [
    "CREATE_PROJECT",
    "CREATE_STRATEGY",
    "UPDATE_STRATEGY",
    "DELETE_STRATEGY",
    "CREATE_CONTEXT_FIELD",
    "UPDATE_CONTEXT_FIELD",
    "DELETE_CONTEXT_FIELD",
    "CREATE_TAG_TYPE",
    "UPDATE_TAG_TYPE",
    "DELETE_TAG_TYPE",
    "CREATE_SEGMENT",
    "UPDATE_SEGMENT",
    "DELETE_SEGMENT",
    "UPDATE_APPLICATION",
];
const EDITOR_PROJECT: [&str; 5] = [
    "CREATE_FEATURE",
    "UPDATE_FEATURE",
    "DELETE_FEATURE",
    "UPDATE_FEATURE_DEPENDENCY",
    "READ_PROJECT_API_TOKEN",
];
const EDITOR_ENVIRONMENT: [&str; 6] = [
    "CREATE_FEATURE_STRATEGY",
    "UPDATE_FEATURE_STRATEGY",
    "DELETE_FEATURE_STRATEGY",
    "UPDATE_FEATURE_ENVIRONMENT",
    "UPDATE_FEATURE_ENVIRONMENT_VARIANTS",
    "UPDATE_FEATURE_VARIANTS",
];

/// What a root role may do, as Unleash lists permissions.
fn permissions(role: RootRole) -> Vec<PermissionOut> {
    let root = |permission| PermissionOut {
        permission,
        project: None,
        environment: None,
    };
    match role {
        RootRole::Admin => vec![root("ADMIN")],
        RootRole::Editor => EDITOR_ROOT
            .into_iter()
            .map(root)
            .chain(EDITOR_PROJECT.into_iter().map(|permission| PermissionOut {
                permission,
                project: Some("*"),
                environment: None,
            }))
            .chain(EDITOR_ENVIRONMENT.into_iter().map(|permission| PermissionOut {
                permission,
                project: Some("*"),
                environment: Some("*"),
            }))
            .collect(),
        RootRole::Viewer | RootRole::Owner | RootRole::Member => Vec::new(),
    }
}

/// Who may read who they are.
pub const GET: Access = Access::Read;

/// The caller: a user, or an admin token shown as the user Unleash records for tokens.
pub async fn get(ctx: &Runtime, caller: &Caller) -> Result<MeOut, AdminError> {
    match caller.principal() {
        Principal::AdminToken { name, .. } => {
            let token = UserRow {
                id: Actor::ADMIN_TOKEN,
                name: Some(name.clone()),
                username: Some(name.clone()),
                email: None,
                password_hash: None,
                root_role: RootRole::Admin,
                login_attempts: 0,
                created_at: chrono::DateTime::UNIX_EPOCH.naive_utc(),
                seen_at: None,
                is_service: false,
                custom_root_role: None,
            };
            Ok(MeOut {
                user: UserOut::from(token),
                permissions: permissions(RootRole::Admin),
                feedback: Vec::new(),
                splash: BTreeMap::new(),
            })
        }
        Principal::User { id, role, .. } => {
            let (id, role) = (*id, *role);
            let (user, splashes) = db::run(&ctx.store, move |conn| {
                Ok((
                    queries::users::get(conn, id)?,
                    queries::users::splashes(conn, id)?,
                ))
            })
            .await?;
            Ok(MeOut {
                user: UserOut::from(user),
                permissions: permissions(role),
                feedback: Vec::new(),
                splash: splashes.into_iter().collect(),
            })
        }
    }
}

/// Who may read their profile.
pub const PROFILE: Access = Access::Read;

/// The signed-in user's projects and root role; a token has no profile.
pub async fn profile(ctx: &Runtime, caller: &Caller) -> Result<ProfileOut, AdminError> {
    let Principal::User { id, role, .. } = caller.principal() else {
        return Err(AdminError::bad_request(
            "User id is missing in request user object",
        ));
    };
    let id = *id;
    let role = *role;
    let (user, projects) = db::run(&ctx.store, move |conn| {
        Ok((queries::users::get(conn, id)?, queries::projects::list(conn)?))
    })
    .await?;
    Ok(ProfileOut {
        projects: projects.into_iter().map(|project| project.id).collect(),
        groups: Vec::new(),
        root_role: RoleOut {
            id: role.id(),
            name: role.name(),
            role_type: "root",
            description: role.description(),
        },
        subscriptions: vec!["productivity-report".into()],
        features: Vec::new(),
        can_change_password: user.password_hash.is_some(),
    })
}

/// Who may close a splash screen.
pub const CLOSE_SPLASH: Access = Access::Read;

/// Records that the signed-in user closed a one-time dialog; tokens have none to close.
pub async fn close_splash(ctx: &Runtime, caller: &Caller, splash: String) -> Result<(), AdminError> {
    let Principal::User { id, .. } = caller.principal() else {
        return Ok(());
    };
    let id = *id;
    db::run(&ctx.store, move |conn| {
        queries::users::close_splash(conn, id, &splash)
    })
    .await
}
