//! Who the identity and delivery operations admit, by the access each declares beside it: the
//! rules of `identity::auth` that every interface applies before it calls an operation.

use flag_admin::AdminError;
use flag_admin::delivery::{applications, client, delta, frontend, ofrep, playground, reports};
use flag_admin::identity::auth::{self, Access, Principal};
use flag_admin::identity::{invite, me, oidc, session, tokens, users};
use flag_admin::runtime::domain::RootRole;

use crate::common;

/// The administrators' credentials: an admin token for every environment, one for production,
/// and a user of each root role.
fn principals() -> [(&'static str, Principal); 5] {
    let token = |environments: Option<Vec<String>>| Principal::AdminToken {
        name: "t".into(),
        environments,
    };
    [
        ("every-environment token", token(None)),
        ("production token", token(Some(vec!["production".into()]))),
        ("Admin", common::user(1, RootRole::Admin)),
        ("Editor", common::user(2, RootRole::Editor)),
        ("Viewer", common::user(3, RootRole::Viewer)),
    ]
}

/// Which of [`principals`] `access` admits.
fn admitted(access: Access) -> [bool; 5] {
    principals().map(|(_, principal)| access.admit(principal).is_ok())
}

#[test]
fn administration_is_for_admins_and_tokens_for_every_environment() {
    for access in [
        tokens::CREATE,
        tokens::DELETE,
        tokens::SET_EXPIRY,
        tokens::CREATE_FOR_PROJECT,
        users::CREATE,
        users::UPDATE,
        users::DELETE,
        invite::CREATE,
        invite::UPDATE,
        oidc::SAVE_SETTINGS,
        oidc::SAVE_PASSWORD_SETTINGS,
        frontend::SET_CORS,
    ] {
        assert_eq!(admitted(access), [true, false, true, false, false], "{access:?}");
    }
    // A token limited to one environment is told why.
    let refused = tokens::CREATE.admit(principals()[1].1.clone());
    assert!(
        matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"production\" environment")),
        "{refused:?}"
    );
    let refused = users::CREATE.admit(common::user(2, RootRole::Editor));
    assert!(
        matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"ADMIN\"")),
        "{refused:?}"
    );
}

#[test]
fn the_lists_administrators_keep_are_for_every_admin_token() {
    for access in [
        tokens::LIST,
        tokens::BY_NAME,
        tokens::OF_PROJECT,
        users::LIST,
        invite::LIST,
        invite::GET,
        oidc::SETTINGS,
    ] {
        assert_eq!(admitted(access), [true, true, true, false, false], "{access:?}");
    }
}

#[test]
fn reads_are_for_every_administrator() {
    for access in [
        me::GET,
        me::PROFILE,
        applications::LIST,
        applications::GET,
        applications::RAW_USAGE,
        applications::OF_PROJECT,
        frontend::UI_CONFIG,
        playground::DEPRECATED,
        playground::ADVANCED,
    ] {
        assert_eq!(admitted(access), [true; 5], "{access:?}");
    }
    // The playgrounds then check each environment the request names.
    let production = common::token(playground::ADVANCED, Some(&["production"]));
    assert!(production.require_in("production").is_ok());
    assert!(matches!(
        production.require_in("development"),
        Err(AdminError::NoAccess(_))
    ));
    assert!(production.may_read("production") && !production.may_read("development"));
}

#[test]
fn sdk_operations_refuse_every_administrators_credential_as_the_wrong_token_type() {
    for access in [
        client::RENDER,
        client::FEATURE,
        delta::DELTA,
        delta::FOLLOW,
        reports::REGISTER,
        reports::METRICS,
        reports::BULK,
        reports::EDGE_INSTANCE,
        reports::FRONTEND_REGISTER,
        reports::FRONTEND_METRICS,
        frontend::EVALUATE,
        ofrep::EVALUATE_FLAG,
        ofrep::EVALUATE_FLAGS,
    ] {
        for (name, principal) in principals() {
            let refused = access.admit(principal);
            assert!(
                matches!(&refused, Err(AdminError::NoAccess(message)) if *message == auth::wrong_token_type().to_string()),
                "{access:?} {name}: {refused:?}"
            );
        }
    }
}

#[test]
fn signing_in_and_up_need_no_credential() {
    for access in [
        session::LOGIN,
        session::LOGOUT,
        invite::VALIDATE,
        invite::SIGN_UP,
        auth::VALIDATE_TOKENS,
    ] {
        assert_eq!(access, Access::Public);
        assert_eq!(admitted(access), [true; 5], "{access:?}");
    }
}

#[test]
fn a_principal_says_who_wrote_and_what_it_may_see() {
    let [(_, every), (_, production), (_, admin), (_, editor), (_, viewer)] = principals();
    assert!(every.administers() && production.administers() && admin.administers());
    assert!(!editor.administers() && !viewer.administers());
    assert!(every.may_read("development") && viewer.may_read("development"));
    assert!(production.may_read("production") && !production.may_read("development"));
    assert_eq!(
        (admin.actor().name.as_str(), admin.actor().user_id),
        ("user-1", 1)
    );
    assert_eq!(every.actor().user_id, flag_store::models::Actor::ADMIN_TOKEN);
}
