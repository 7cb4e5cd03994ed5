//! Unleash's permissions, and what a user holds through their roles: the built-in root role,
//! a custom root role, their groups' root roles, and roles in projects held directly or through
//! a group.

use std::collections::{BTreeMap, BTreeSet};

use flag_store::models::{ProjectAccessRow, RolePermissionRow, UserRow};
use flag_store::{DbConnection, StoreError, queries};

use crate::runtime::domain::RootRole;

/// Where a permission applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// The whole installation (`CREATE_PROJECT`, `CREATE_SEGMENT`).
    Root,
    /// One project (`CREATE_FEATURE`).
    Project,
    /// One environment of a project (`UPDATE_FEATURE_STRATEGY`).
    Environment,
}

impl Scope {
    /// Unleash's name of the scope, as permissions carry it in `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Root => "root",
            Self::Project => "project",
            Self::Environment => "environment",
        }
    }
}

/// Every permission a custom role can hold, as Unleash lists them: name, display name, scope.
/// A permission's id is its place in this list, from 1.
pub const PERMISSIONS: [(&str, &str, Scope); 54] = [
    ("ADMIN", "Admin", Scope::Root),
    ("CREATE_ADDON", "Create integrations", Scope::Root),
    ("UPDATE_ADDON", "Update integrations", Scope::Root),
    ("DELETE_ADDON", "Delete integrations", Scope::Root),
    ("CREATE_CLIENT_API_TOKEN", "Create client API tokens", Scope::Root),
    ("UPDATE_CLIENT_API_TOKEN", "Update client API tokens", Scope::Root),
    ("DELETE_CLIENT_API_TOKEN", "Delete client API tokens", Scope::Root),
    ("READ_CLIENT_API_TOKEN", "Read client API tokens", Scope::Root),
    (
        "CREATE_FRONTEND_API_TOKEN",
        "Create frontend API tokens",
        Scope::Root,
    ),
    (
        "UPDATE_FRONTEND_API_TOKEN",
        "Update frontend API tokens",
        Scope::Root,
    ),
    (
        "DELETE_FRONTEND_API_TOKEN",
        "Delete frontend API tokens",
        Scope::Root,
    ),
    ("READ_FRONTEND_API_TOKEN", "Read frontend API tokens", Scope::Root),
    ("UPDATE_APPLICATION", "Update applications", Scope::Root),
    ("CREATE_CONTEXT_FIELD", "Create context fields", Scope::Root),
    ("UPDATE_CONTEXT_FIELD", "Update context fields", Scope::Root),
    ("DELETE_CONTEXT_FIELD", "Delete context fields", Scope::Root),
    ("CREATE_PROJECT", "Create projects", Scope::Root),
    ("READ_ROLE", "Read roles", Scope::Root),
    ("CREATE_SEGMENT", "Create segments", Scope::Root),
    ("UPDATE_SEGMENT", "Edit segments", Scope::Root),
    ("DELETE_SEGMENT", "Delete segments", Scope::Root),
    ("CREATE_STRATEGY", "Create strategies", Scope::Root),
    ("UPDATE_STRATEGY", "Update strategies", Scope::Root),
    ("DELETE_STRATEGY", "Delete strategies", Scope::Root),
    ("CREATE_TAG_TYPE", "Create tag types", Scope::Root),
    ("UPDATE_TAG_TYPE", "Update tag types", Scope::Root),
    ("DELETE_TAG_TYPE", "Delete tag types", Scope::Root),
    ("READ_LOGS", "Read instance logs and login history", Scope::Root),
    (
        "UPDATE_MAINTENANCE_MODE",
        "Enable/disable maintenance mode",
        Scope::Root,
    ),
    ("UPDATE_INSTANCE_BANNERS", "Change instance banners", Scope::Root),
    ("UPDATE_CORS", "Update CORS settings", Scope::Root),
    (
        "UPDATE_AUTH_CONFIGURATION",
        "Update authentication configuration",
        Scope::Root,
    ),
    ("CREATE_FEATURE", "Create feature flags", Scope::Project),
    ("UPDATE_FEATURE", "Update feature flags", Scope::Project),
    (
        "UPDATE_FEATURE_DEPENDENCY",
        "Update feature dependency",
        Scope::Project,
    ),
    ("DELETE_FEATURE", "Delete feature flags", Scope::Project),
    ("UPDATE_FEATURE_VARIANTS", "Create/edit variants", Scope::Project),
    (
        "MOVE_FEATURE_TOGGLE",
        "Change feature flag project",
        Scope::Project,
    ),
    ("UPDATE_PROJECT", "Update project", Scope::Project),
    ("DELETE_PROJECT", "Delete project", Scope::Project),
    (
        "UPDATE_PROJECT_SEGMENT",
        "Create/edit project segment",
        Scope::Project,
    ),
    (
        "READ_PROJECT_API_TOKEN",
        "Read API tokens for a specific project",
        Scope::Project,
    ),
    (
        "CREATE_PROJECT_API_TOKEN",
        "Create API tokens for a specific project",
        Scope::Project,
    ),
    (
        "DELETE_PROJECT_API_TOKEN",
        "Delete API tokens for a specific project",
        Scope::Project,
    ),
    ("PROJECT_USER_ACCESS_WRITE", "Write user access", Scope::Project),
    ("PROJECT_SETTINGS_WRITE", "Write settings", Scope::Project),
    (
        "CREATE_FEATURE_STRATEGY",
        "Create activation strategies",
        Scope::Environment,
    ),
    (
        "UPDATE_FEATURE_STRATEGY",
        "Update activation strategies",
        Scope::Environment,
    ),
    (
        "DELETE_FEATURE_STRATEGY",
        "Remove activation strategies",
        Scope::Environment,
    ),
    (
        "UPDATE_FEATURE_ENVIRONMENT",
        "Enable/disable flags",
        Scope::Environment,
    ),
    (
        "UPDATE_FEATURE_ENVIRONMENT_VARIANTS",
        "Update variants",
        Scope::Environment,
    ),
    (
        "APPROVE_CHANGE_REQUEST",
        "Approve change requests",
        Scope::Environment,
    ),
    (
        "APPLY_CHANGE_REQUEST",
        "Apply change requests",
        Scope::Environment,
    ),
    ("SKIP_CHANGE_REQUEST", "Skip change requests", Scope::Environment),
];

/// The permission named `name`, as `(id, name, display name, scope)`.
pub fn permission(name: &str) -> Option<(i32, &'static str, &'static str, Scope)> {
    PERMISSIONS
        .iter()
        .zip(1..)
        .find(|((known, _, _), _)| *known == name)
        .map(|((name, display, scope), id)| (id, *name, *display, *scope))
}

/// What the built-in project role Member holds in its project: writing flags and their
/// strategies in every environment, not the project itself.
const MEMBER: [&str; 12] = [
    "CREATE_FEATURE",
    "UPDATE_FEATURE",
    "UPDATE_FEATURE_DEPENDENCY",
    "DELETE_FEATURE",
    "UPDATE_FEATURE_VARIANTS",
    "UPDATE_PROJECT_SEGMENT",
    "CREATE_FEATURE_STRATEGY",
    "UPDATE_FEATURE_STRATEGY",
    "DELETE_FEATURE_STRATEGY",
    "UPDATE_FEATURE_ENVIRONMENT",
    "UPDATE_FEATURE_ENVIRONMENT_VARIANTS",
    "READ_PROJECT_API_TOKEN",
];

/// The permissions a project role holds in its project, as `(name, environment)` (an empty
/// environment: every environment): Owner every project and environment permission, Member
/// the flag permissions, a custom role its own rows.
pub fn of_project_role(role: i32, permissions: &[RolePermissionRow]) -> Vec<(&'static str, String)> {
    match RootRole::from_id(role) {
        Some(RootRole::Owner) => PERMISSIONS
            .iter()
            .filter(|(_, _, scope)| *scope != Scope::Root)
            .map(|(name, _, _)| (*name, String::new()))
            .collect(),
        Some(RootRole::Member) => MEMBER.iter().map(|name| (*name, String::new())).collect(),
        _ => permissions
            .iter()
            .filter(|row| row.role_id == role)
            .filter_map(|row| Some((permission(&row.permission)?.1, row.environment.clone())))
            .collect(),
    }
}

/// What a user holds beyond their built-in root role: root permissions, and permissions per
/// project (an environment permission held in every environment, or in the ones named).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    root: BTreeSet<&'static str>,
    projects: BTreeMap<String, ProjectGrant>,
}

/// What a user holds in one project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ProjectGrant {
    /// Every project and environment permission (the Owner role).
    everything: bool,
    /// Permissions held in every environment, or held at project scope.
    anywhere: BTreeSet<&'static str>,
    /// Environment permissions held in some environments only.
    environments: BTreeSet<(&'static str, String)>,
}

impl Grants {
    /// Whether the root permission `name` is held.
    pub fn at_root(&self, name: &str) -> bool {
        self.root.contains(name)
    }

    /// Whether `name` is held in `project`; for an environment permission, in at least one
    /// environment when `environment` is `None`, else in that environment.
    pub fn in_project(&self, name: &str, project: &str, environment: Option<&str>) -> bool {
        let Some(grant) = self.projects.get(project) else {
            return false;
        };
        grant.everything
            || grant.anywhere.contains(name)
            || grant.environments.iter().any(|(held, place)| {
                *held == name && environment.is_none_or(|environment| environment == place)
            })
    }

    /// Whether `name` is held in `project` in every environment (`environment` empty) or in
    /// `environment`: what giving it to someone else asks.
    pub fn in_project_fully(&self, name: &str, project: &str, environment: &str) -> bool {
        let Some(grant) = self.projects.get(project) else {
            return false;
        };
        grant.everything
            || grant.anywhere.contains(name)
            || (!environment.is_empty()
                && grant
                    .environments
                    .iter()
                    .any(|(held, place)| *held == name && place == environment))
    }

    fn add_role(&mut self, role: i32, project: Option<&str>, permissions: &[RolePermissionRow]) {
        let held = permissions
            .iter()
            .filter(|row| row.role_id == role)
            .filter_map(|row| Some((permission(&row.permission)?.1, row.environment.as_str())));
        match project {
            None => self.root.extend(held.map(|(name, _)| name)),
            Some(project) => {
                let grant = self.projects.entry(project.to_owned()).or_default();
                match RootRole::from_id(role) {
                    Some(RootRole::Owner) => grant.everything = true,
                    Some(RootRole::Member) => grant.anywhere.extend(MEMBER),
                    _ => {
                        for (name, environment) in held {
                            if environment.is_empty() {
                                grant.anywhere.insert(name);
                            } else {
                                grant.environments.insert((name, environment.to_owned()));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What `user` holds: their built-in root role, raised by their groups' built-in root roles,
/// and their [`Grants`].
pub fn of_user(conn: &mut DbConnection, user: &UserRow) -> Result<(RootRole, Grants), StoreError> {
    let groups = queries::access::groups_of(conn, user.id)?;
    let access: Vec<ProjectAccessRow> = queries::access::access_of(
        conn,
        user.id,
        &groups.iter().map(|group| group.id).collect::<Vec<_>>(),
    )?;
    let mut role = user.root_role;
    let mut custom_roots: Vec<i32> = user.custom_root_role.into_iter().collect();
    for root in groups.iter().filter_map(|group| group.root_role_id) {
        match RootRole::from_id(root) {
            Some(built_in) if built_in.is_root() => role = stronger(role, built_in),
            Some(_) => {}
            None => custom_roots.push(root),
        }
    }
    let mut grants = Grants::default();
    if custom_roots.is_empty() && access.is_empty() {
        return Ok((role, grants));
    }
    let permissions = queries::access::role_permissions(conn)?;
    for root in custom_roots {
        grants.add_role(root, None, &permissions);
    }
    for row in &access {
        grants.add_role(row.role_id, Some(&row.project_id), &permissions);
    }
    Ok((role, grants))
}

/// The stronger of two built-in root roles.
fn stronger(left: RootRole, right: RootRole) -> RootRole {
    let rank = |role: RootRole| match role {
        RootRole::Admin => 3,
        RootRole::Editor => 2,
        _ => 1,
    };
    if rank(right) > rank(left) { right } else { left }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_ids_are_their_place_and_names_are_unique() {
        let mut names = BTreeSet::new();
        for (name, _, _) in PERMISSIONS {
            assert!(names.insert(name), "{name} twice");
        }
        assert_eq!(permission("ADMIN").map(|found| found.0), Some(1));
        assert_eq!(
            permission("UPDATE_FEATURE_STRATEGY").map(|found| found.3),
            Some(Scope::Environment)
        );
        assert!(permission("MAKE_COFFEE").is_none());
    }

    #[test]
    fn custom_project_roles_hold_only_their_environments() {
        let rows = vec![
            RolePermissionRow {
                role_id: 7,
                permission: "UPDATE_FEATURE_STRATEGY".into(),
                environment: "development".into(),
            },
            RolePermissionRow {
                role_id: 7,
                permission: "CREATE_FEATURE".into(),
                environment: String::new(),
            },
        ];
        let mut grants = Grants::default();
        grants.add_role(7, Some("web"), &rows);
        assert!(grants.in_project("CREATE_FEATURE", "web", None));
        assert!(grants.in_project("UPDATE_FEATURE_STRATEGY", "web", Some("development")));
        assert!(grants.in_project("UPDATE_FEATURE_STRATEGY", "web", None));
        assert!(!grants.in_project("UPDATE_FEATURE_STRATEGY", "web", Some("production")));
        assert!(!grants.in_project("CREATE_FEATURE", "default", None));
        assert!(!grants.at_root("CREATE_FEATURE"));
        grants.add_role(RootRole::Owner.id(), Some("api"), &rows);
        assert!(grants.in_project("DELETE_PROJECT", "api", Some("production")));
    }
}
