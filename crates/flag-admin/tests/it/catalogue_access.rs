//! The access each catalogue operation declares beside it, as every interface admits callers by
//! it: an admin token limited to one environment reads everything, writes the state of its own
//! environment, and makes no write whose effect reaches beyond it; a Viewer writes nothing.

use flag_admin::AdminError;
use flag_admin::catalogue::{
    addons, archive, context_fields, dependencies, environments, events, export, features, lifecycle,
    overview, projects, search, segments, strategies, strategy_types, tags, variants,
};
use flag_admin::identity::auth::{Access, Principal};
use flag_admin::runtime::domain::RootRole;

use crate::common;

/// The operations that change what every environment sees, or administer.
const EVERYWHERE: &[(&str, Access)] = &[
    ("addons::CREATE", addons::CREATE),
    ("addons::UPDATE", addons::UPDATE),
    ("addons::DELETE", addons::DELETE),
    ("archive::ARCHIVE_ONE", archive::ARCHIVE_ONE),
    ("archive::ARCHIVE_MANY", archive::ARCHIVE_MANY),
    ("archive::REVIVE_ONE", archive::REVIVE_ONE),
    ("archive::REVIVE_MANY", archive::REVIVE_MANY),
    ("archive::DELETE_ONE", archive::DELETE_ONE),
    ("archive::DELETE_MANY", archive::DELETE_MANY),
    ("archive::STALE_MANY", archive::STALE_MANY),
    ("context_fields::CREATE", context_fields::CREATE),
    ("context_fields::UPDATE", context_fields::UPDATE),
    ("context_fields::ADD_LEGAL_VALUE", context_fields::ADD_LEGAL_VALUE),
    (
        "context_fields::REMOVE_LEGAL_VALUE",
        context_fields::REMOVE_LEGAL_VALUE,
    ),
    ("context_fields::DELETE", context_fields::DELETE),
    ("context_fields::VALIDATE_NAME", context_fields::VALIDATE_NAME),
    ("dependencies::ADD", dependencies::ADD),
    ("dependencies::REMOVE", dependencies::REMOVE),
    ("environments::CREATE", environments::CREATE),
    ("environments::SWITCH", environments::SWITCH),
    ("environments::SET_SORT_ORDER", environments::SET_SORT_ORDER),
    ("export::IMPORT", export::IMPORT),
    ("features::CREATE", features::CREATE),
    ("features::UPDATE", features::UPDATE),
    ("features::PATCH", features::PATCH),
    ("features::CLONE", features::CLONE),
    ("features::SET_LIFETIME", features::SET_LIFETIME),
    ("lifecycle::COMPLETE", lifecycle::COMPLETE),
    ("lifecycle::UNCOMPLETE", lifecycle::UNCOMPLETE),
    ("projects::CREATE", projects::CREATE),
    ("projects::ENABLE_ENVIRONMENT", projects::ENABLE_ENVIRONMENT),
    ("projects::DISABLE_ENVIRONMENT", projects::DISABLE_ENVIRONMENT),
    ("segments::CREATE", segments::CREATE),
    ("segments::UPDATE", segments::UPDATE),
    ("segments::DELETE", segments::DELETE),
    ("strategy_types::CREATE", strategy_types::CREATE),
    ("strategy_types::UPDATE", strategy_types::UPDATE),
    ("strategy_types::DELETE", strategy_types::DELETE),
    ("strategy_types::SET_DEPRECATED", strategy_types::SET_DEPRECATED),
    ("tags::CREATE_TYPE", tags::CREATE_TYPE),
    ("tags::UPDATE_TYPE", tags::UPDATE_TYPE),
    ("tags::DELETE_TYPE", tags::DELETE_TYPE),
    ("tags::CREATE", tags::CREATE),
    ("tags::DELETE", tags::DELETE),
    ("tags::ADD_TO_FEATURE", tags::ADD_TO_FEATURE),
    ("tags::UPDATE_FEATURE", tags::UPDATE_FEATURE),
    ("tags::REMOVE_FROM_FEATURE", tags::REMOVE_FROM_FEATURE),
    ("tags::UPDATE_MANY", tags::UPDATE_MANY),
];

/// The operations on the state of the environments the request names.
const IN_ENVIRONMENTS: &[(&str, Access)] = &[
    ("export::EXPORT", export::EXPORT),
    ("export::VALIDATE", export::VALIDATE),
    ("features::ENVIRONMENT", features::ENVIRONMENT),
    ("features::SWITCH_WITH", features::SWITCH_WITH),
    ("features::SWITCH_MANY", features::SWITCH_MANY),
    ("strategies::ADD", strategies::ADD),
    ("strategies::UPDATE", strategies::UPDATE),
    ("strategies::DELETE", strategies::DELETE),
    ("strategies::LIST", strategies::LIST),
    ("strategies::GET", strategies::GET),
    ("strategies::SET_SORT_ORDER", strategies::SET_SORT_ORDER),
    ("strategies::PATCH", strategies::PATCH),
    ("variants::OVERWRITE", variants::OVERWRITE),
    ("variants::PATCH", variants::PATCH),
    ("variants::BATCH", variants::BATCH),
    ("variants::GET", variants::GET),
];

/// The reads of what no environment owns.
const READS: &[(&str, Access)] = &[
    ("addons::LIST", addons::LIST),
    ("addons::GET", addons::GET),
    ("addons::DELIVERIES", addons::DELIVERIES),
    ("archive::VALIDATE", archive::VALIDATE),
    ("context_fields::LIST", context_fields::LIST),
    ("context_fields::OF_PROJECT", context_fields::OF_PROJECT),
    ("context_fields::GET", context_fields::GET),
    ("context_fields::STRATEGIES", context_fields::STRATEGIES),
    (
        "context_fields::VALIDATE_CONSTRAINT",
        context_fields::VALIDATE_CONSTRAINT,
    ),
    ("environments::LIST", environments::LIST),
    ("environments::GET", environments::GET),
    ("environments::OF_PROJECT", environments::OF_PROJECT),
    ("events::LIST", events::LIST),
    ("events::OF_FEATURE", events::OF_FEATURE),
    ("events::SEARCH", events::SEARCH),
    ("events::CREATORS", events::CREATORS),
    ("features::LIST", features::LIST),
    ("features::GET", features::GET),
    ("features::VALIDATE_NAME", features::VALIDATE_NAME),
    ("features::TYPES", features::TYPES),
    ("features::PARENT_OPTIONS", features::PARENT_OPTIONS),
    ("features::PARENT_VARIANTS", features::PARENT_VARIANTS),
    ("features::HAS_DEPENDENCIES", features::HAS_DEPENDENCIES),
    ("lifecycle::STAGES", lifecycle::STAGES),
    ("lifecycle::COUNT", lifecycle::COUNT),
    ("overview::LIST", overview::LIST),
    ("overview::OVERVIEW", overview::OVERVIEW),
    ("overview::STATUS", overview::STATUS),
    ("overview::FLAG_CREATORS", overview::FLAG_CREATORS),
    ("overview::DASHBOARD", overview::DASHBOARD),
    ("overview::DASHBOARD_PROJECT", overview::DASHBOARD_PROJECT),
    ("projects::NAMES", projects::NAMES),
    ("projects::GET", projects::GET),
    ("search::SEARCH", search::SEARCH),
    ("segments::LIST", segments::LIST),
    ("segments::GET", segments::GET),
    ("segments::STRATEGIES", segments::STRATEGIES),
    ("segments::OF_STRATEGY", segments::OF_STRATEGY),
    ("segments::VALIDATE_NAME", segments::VALIDATE_NAME),
    ("strategy_types::LIST", strategy_types::LIST),
    ("strategy_types::GET", strategy_types::GET),
    ("tags::TYPES", tags::TYPES),
    ("tags::GET_TYPE", tags::GET_TYPE),
    ("tags::VALIDATE_TYPE", tags::VALIDATE_TYPE),
    ("tags::LIST", tags::LIST),
    ("tags::GET", tags::GET),
    ("tags::OF_FEATURE", tags::OF_FEATURE),
];

fn production_token() -> Principal {
    Principal::AdminToken {
        name: "production-token".into(),
        environments: Some(vec!["production".into()]),
    }
}

#[test]
fn a_token_limited_to_one_environment_stays_in_it() -> Result<(), AdminError> {
    for (name, access) in EVERYWHERE {
        let refused = access.admit(production_token());
        assert!(
            matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"production\"")),
            "{name}: {refused:?}"
        );
    }
    for (name, access) in IN_ENVIRONMENTS {
        let caller = access
            .admit(production_token())
            .map_err(|error| AdminError::Internal(format!("{name}: {error}")))?;
        assert!(caller.require_in("production").is_ok(), "{name}");
        let refused = caller.require_in("development");
        assert!(
            matches!(&refused, Err(AdminError::NoAccess(message)) if message.contains("\"development\"")),
            "{name}: {refused:?}"
        );
    }
    for (name, access) in READS {
        let caller = access
            .admit(production_token())
            .map_err(|error| AdminError::Internal(format!("{name}: {error}")))?;
        assert!(caller.require_in("development").is_ok(), "{name}: admitted whole");
    }
    Ok(())
}

#[test]
fn a_viewer_reads_and_writes_nothing() -> Result<(), AdminError> {
    let viewer = || common::user(3, RootRole::Viewer);
    for (name, access) in EVERYWHERE {
        let refused = access.admit(viewer());
        assert!(
            matches!(refused, Err(AdminError::NoAccess(_))),
            "{name}: {refused:?}"
        );
    }
    for (name, access) in IN_ENVIRONMENTS {
        // Admitted, and told which environment it may not write.
        let caller = access
            .admit(viewer())
            .map_err(|error| AdminError::Internal(format!("{name}: {error}")))?;
        let write = matches!(access, Access::WriteIn(_));
        assert_eq!(
            caller.require_in("production").is_err(),
            write,
            "{name}: a Viewer reads every environment and writes none"
        );
    }
    let refused_reads: Vec<&str> = READS
        .iter()
        .filter(|(_, access)| access.admit(viewer()).is_err())
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(
        refused_reads,
        ["addons::DELIVERIES", "events::LIST"],
        "the administrators' lists are theirs"
    );
    Ok(())
}
