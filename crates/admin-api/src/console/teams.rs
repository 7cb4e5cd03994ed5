//! The teams pages: custom roles (`/admin/roles`), groups (`/admin/groups`), service accounts
//! and their tokens (`/admin/service-accounts`), and who holds which role in a project (the
//! Access section of `/projects/{id}`, posted to `/projects/{id}/access`). Each reads and
//! writes through the API's operations, admitted by the accesses those declare.

use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::identity::auth::Principal;
use flag_admin::identity::teams::grants::{PERMISSIONS, Scope};
use flag_admin::identity::teams::types::{
    AddAccessIn, CustomRoleType, GroupIn, MemberIn, PatIn, PermissionIn, RoleIn, ServiceAccountIn,
    ServiceAccountUpdate, UserRef,
};
use flag_admin::identity::teams::{self, Holder};
use flag_admin::{AdminError, catalogue::environments, identity::users};
use maud::{Markup, html};

use super::admin::{admin_nav, admin_page, admin_write, utc};
use super::{comma_list, field, form_fields};
use crate::state::AppState;

/// Every value of a repeated field (checkboxes, multiple selects).
fn all(fields: &[(String, String)], name: &str) -> Vec<String> {
    fields
        .iter()
        .filter(|(key, _)| key == name)
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .collect()
}

/// The field `name` when it is not empty.
fn given(fields: &[(String, String)], name: &str) -> Option<String> {
    Some(field(fields, name)).filter(|value| !value.is_empty())
}

/// An id from a form's select.
fn id_of(text: &str, path: &str) -> Result<i32, AdminError> {
    text.parse()
        .map_err(|_| AdminError::invalid(path, "choose from the list"))
}

/// A role's body from its form: checked permissions are `NAME` or `NAME@environment`.
fn role_body(fields: &[(String, String)]) -> Result<RoleIn, AdminError> {
    let role_type = match given(fields, "type") {
        Some(kind) => Some(
            CustomRoleType::parse(&kind)
                .ok_or_else(|| AdminError::invalid("/type", "a role is a root or a project role"))?,
        ),
        None => None,
    };
    let permissions = all(fields, "permission")
        .into_iter()
        .map(|checked| match checked.split_once('@') {
            Some((name, environment)) => PermissionIn {
                name: name.to_owned(),
                environment: Some(environment.to_owned()),
            },
            None => PermissionIn {
                name: checked,
                environment: None,
            },
        })
        .collect();
    Ok(RoleIn {
        name: field(fields, "name"),
        role_type,
        description: given(fields, "description"),
        permissions,
    })
}

/// The checkboxes of every permission a role of `kind` can hold, `held` ticked.
fn permission_boxes(kind: &str, environments: &[String], held: &[(String, Option<String>)]) -> Markup {
    let ticked = |name: &str, environment: Option<&str>| {
        held.iter()
            .any(|(held, place)| held == name && place.as_deref() == environment)
    };
    let of = |scope: Scope| {
        PERMISSIONS
            .iter()
            .filter(move |(name, _, held)| *held == scope && *name != "ADMIN")
    };
    html! {
        @if kind != "custom" {
            fieldset {
                legend { "Root permissions (a custom root role)" }
                @for (name, display, _) in of(Scope::Root) {
                    label.check { input type="checkbox" name="permission" value=(name) checked[ticked(name, None)]; " " (display) " " span.muted.mono { (name) } }
                }
            }
        }
        @if kind != "root-custom" {
            fieldset {
                legend { "Project permissions (a project role)" }
                @for (name, display, _) in of(Scope::Project) {
                    label.check { input type="checkbox" name="permission" value=(name) checked[ticked(name, None)]; " " (display) " " span.muted.mono { (name) } }
                }
            }
            @for environment in environments {
                fieldset {
                    legend { "In " (environment) }
                    @for (name, display, _) in of(Scope::Environment) {
                        label.check {
                            input type="checkbox" name="permission" value=(format!("{name}@{environment}")) checked[ticked(name, Some(environment))];
                            " " (display)
                        }
                    }
                }
            }
        }
    }
}

async fn environment_names(state: &AppState) -> Result<Vec<String>, AdminError> {
    Ok(environments::list(&state.app)
        .await?
        .environments
        .into_iter()
        .map(|environment| environment.name)
        .collect())
}

/// `GET /admin/roles`.
pub async fn roles(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    let state_ref = &state;
    admin_page(&state, &request, teams::ROLES, "admin", "Roles", |principal| async move {
        let listed = teams::roles(app).await?;
        let environments = environment_names(state_ref).await?;
        let may_create = teams::CREATE_ROLE.admit(principal).is_ok();
        Ok(html! {
            h1 { "Roles" }
            (admin_nav("roles"))
            p.muted { "Admin, Editor and Viewer are root roles; Owner and Member are held in a project. Custom root roles add root permissions; custom project roles are given in projects, to users, groups and service accounts." }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Role" } th scope="col" { "Kind" } th scope="col" { "Description" } } }
                    tbody {
                        @for role in &listed.roles {
                            tr {
                                td {
                                    @if role.id > 5 { a href=(format!("/admin/roles/{}", role.id)) { (role.name) } } @else { (role.name) }
                                }
                                td { (match role.role_type.as_str() { "root" => "built-in root", "project" => "built-in project", "root-custom" => "custom root", _ => "custom project" }) }
                                td { (role.description.as_deref().unwrap_or("")) }
                            }
                        }
                    }
                }
            }
            @if may_create {
                section.card aria-labelledby="new-role" {
                    h2 id="new-role" { "Create a role" }
                    form method="post" action="/admin/roles" {
                        div.row {
                            div { label for="role-name" { "Name" } input id="role-name" name="name" type="text" required; }
                            div {
                                label for="role-type" { "Kind" }
                                select id="role-type" name="type" {
                                    option value="custom" { "Project role" }
                                    option value="root-custom" { "Root role" }
                                }
                            }
                            div { label for="role-description" { "Description" } input id="role-description" name="description" type="text"; }
                        }
                        p.muted { "Tick the permissions of the kind chosen; the others are refused, by name." }
                        (permission_boxes("", &environments, &[]))
                        p { button type="submit" { "Create" } }
                    }
                }
            }
        })
    })
    .await
}

/// `POST /admin/roles`: creates a custom role.
pub async fn create_role(
    state: web::Data<AppState>,
    request: HttpRequest,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        teams::CREATE_ROLE,
        "/admin/roles",
        |caller| async move {
            teams::create_role(app, &caller, role_body(&fields)?).await?;
            Ok(None)
        },
    )
    .await
}

/// `GET /admin/roles/{id}`: a custom role, to change or delete.
pub async fn role(state: web::Data<AppState>, request: HttpRequest, path: web::Path<i32>) -> HttpResponse {
    let app = &state.app;
    let state_ref = &state;
    let id = path.into_inner();
    admin_page(&state, &request, teams::ROLE, "admin", "Role", |principal| async move {
        let read = teams::role(app, id).await?;
        let environments = environment_names(state_ref).await?;
        let may_write = teams::UPDATE_ROLE.admit(principal.clone()).is_ok();
        let may_delete = teams::DELETE_ROLE.admit(principal).is_ok();
        let held: Vec<(String, Option<String>)> =
            read.permissions.iter().map(|permission| (permission.name.clone(), permission.environment.clone())).collect();
        Ok(html! {
            p { a href="/admin/roles" { "← Roles" } }
            h1 { (read.role.name) }
            form method="post" action=(format!("/admin/roles/{id}")) {
                div.row {
                    div { label for="role-name" { "Name" } input id="role-name" name="name" type="text" required value=(read.role.name); }
                    div { label for="role-description" { "Description" } input id="role-description" name="description" type="text" value=(read.role.description.as_deref().unwrap_or("")); }
                }
                (permission_boxes(&read.role.role_type, &environments, &held))
                @if may_write { p { button type="submit" { "Save" } } }
            }
            @if may_delete {
                form method="post" action=(format!("/admin/roles/{id}/delete")) {
                    p { button.danger type="submit" { "Delete this role" } }
                    p.muted { "A role someone holds cannot be deleted: take it from them first." }
                }
            }
        })
    })
    .await
}

/// `POST /admin/roles/{id}`: saves a custom role.
pub async fn save_role(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        teams::UPDATE_ROLE,
        &format!("/admin/roles/{id}"),
        |caller| async move {
            teams::update_role(app, &caller, id, role_body(&fields)?).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/roles/{id}/delete`.
pub async fn delete_role(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
) -> HttpResponse {
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        teams::DELETE_ROLE,
        "/admin/roles",
        |caller| async move {
            teams::delete_role(app, &caller, id).await?;
            Ok(None)
        },
    )
    .await
}

/// The root roles one can give a group or a service account, as `(id, name)`.
async fn root_roles(state: &AppState) -> Result<Vec<(i32, String)>, AdminError> {
    Ok(teams::roles(&state.app)
        .await?
        .roles
        .into_iter()
        .filter(|role| role.role_type == "root" || role.role_type == "root-custom")
        .map(|role| (role.id, role.name))
        .collect())
}

/// `GET /admin/groups`, and `GET /admin/groups/{id}` with `editing`.
async fn groups_page(state: &AppState, request: &HttpRequest, editing: Option<i32>) -> HttpResponse {
    let app = &state.app;
    admin_page(state, request, teams::GROUPS, "admin", "Groups", |principal| async move {
        let listed = teams::groups(app).await?;
        let roles = root_roles(state).await?;
        let people = users::list(app).await?;
        let accounts = teams::service_accounts(app).await?;
        let may_write = teams::CREATE_GROUP.admit(principal.clone()).is_ok();
        let may_delete = teams::DELETE_GROUP.admit(principal).is_ok();
        let edited = editing.and_then(|id| listed.groups.iter().find(|group| group.id == id));
        let role_name = |id: Option<i32>| id.and_then(|id| roles.iter().find(|(role, _)| *role == id)).map_or("none", |(_, name)| name.as_str());
        Ok(html! {
            h1 { "Groups" }
            (admin_nav("groups"))
            p.muted { "A group's members hold its root role, and the roles it is given in projects. With single sign-on's group syncing, members of the mapped provider groups join at each login." }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Group" } th scope="col" { "Root role" } th scope="col" { "Members" } th scope="col" { "Single sign-on groups" } } }
                    tbody {
                        @for group in &listed.groups {
                            tr {
                                td { a href=(format!("/admin/groups/{}", group.id)) { (group.name) } }
                                td { (role_name(group.root_role)) }
                                td { (group.users.iter().map(|member| member.user.email.clone().or(member.user.username.clone()).unwrap_or_else(|| member.user.id.to_string())).collect::<Vec<_>>().join(", ")) }
                                td.mono { (group.mappings_sso.join(", ")) }
                            }
                        }
                    }
                }
            }
            @if may_write {
                section.card aria-labelledby="group-form" {
                    h2 id="group-form" { (if edited.is_some() { "Change the group" } else { "Create a group" }) }
                    form method="post" action=(edited.map_or("/admin/groups".to_owned(), |group| format!("/admin/groups/{}", group.id))) {
                        div.row {
                            div { label for="group-name" { "Name" } input id="group-name" name="name" type="text" required value=(edited.map_or("", |group| group.name.as_str())); }
                            div { label for="group-description" { "Description" } input id="group-description" name="description" type="text" value=(edited.and_then(|group| group.description.as_deref()).unwrap_or("")); }
                            div {
                                label for="group-role" { "Root role" }
                                select id="group-role" name="rootRole" {
                                    option value="" { "none" }
                                    @for (id, name) in &roles {
                                        option value=(id) selected[edited.is_some_and(|group| group.root_role == Some(*id))] { (name) }
                                    }
                                }
                            }
                        }
                        div {
                            label for="group-members" { "Members" }
                            select id="group-members" name="user" multiple size="6" {
                                @for user in people.users() {
                                    option value=(user.id()) selected[edited.is_some_and(|group| group.users.iter().any(|member| member.user.id == user.id()))] {
                                        (user.email().or(user.username()).unwrap_or_default())
                                    }
                                }
                                @for account in &accounts.service_accounts {
                                    option value=(account.id) selected[edited.is_some_and(|group| group.users.iter().any(|member| member.user.id == account.id))] {
                                        (account.username.as_deref().unwrap_or_default()) " (service account)"
                                    }
                                }
                            }
                        }
                        div {
                            label for="group-sso" { "Single sign-on groups, comma-separated" }
                            input id="group-sso" name="mappingsSSO" type="text" value=(edited.map(|group| group.mappings_sso.join(", ")).unwrap_or_default());
                        }
                        p { button type="submit" { (if edited.is_some() { "Save" } else { "Create" }) } }
                    }
                    @if let (Some(group), true) = (edited, may_delete) {
                        form method="post" action=(format!("/admin/groups/{}/delete", group.id)) {
                            p { button.danger type="submit" { "Delete " (group.name) } }
                        }
                    }
                }
            }
        })
    })
    .await
}

/// `GET /admin/groups`.
pub async fn groups(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    groups_page(&state, &request, None).await
}

/// `GET /admin/groups/{id}`.
pub async fn group(state: web::Data<AppState>, request: HttpRequest, path: web::Path<i32>) -> HttpResponse {
    groups_page(&state, &request, Some(path.into_inner())).await
}

fn group_body(fields: &[(String, String)]) -> Result<GroupIn, AdminError> {
    let users = all(fields, "user")
        .iter()
        .map(|id| {
            Ok(MemberIn {
                user: UserRef {
                    id: id_of(id, "/users")?,
                },
            })
        })
        .collect::<Result<Vec<_>, AdminError>>()?;
    let root_role = match given(fields, "rootRole") {
        Some(role) => Some(id_of(&role, "/rootRole")?),
        None => None,
    };
    Ok(GroupIn {
        name: field(fields, "name"),
        description: given(fields, "description"),
        mappings_sso: Some(comma_list(&field(fields, "mappingsSSO"))),
        root_role,
        users: Some(users),
    })
}

/// `POST /admin/groups`.
pub async fn create_group(
    state: web::Data<AppState>,
    request: HttpRequest,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        teams::CREATE_GROUP,
        "/admin/groups",
        |caller| async move {
            teams::create_group(app, &caller, group_body(&fields)?).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/groups/{id}`.
pub async fn save_group(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        teams::UPDATE_GROUP,
        "/admin/groups",
        |caller| async move {
            teams::update_group(app, &caller, id, group_body(&fields)?).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/groups/{id}/delete`.
pub async fn delete_group(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
) -> HttpResponse {
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        teams::DELETE_GROUP,
        "/admin/groups",
        |caller| async move {
            teams::delete_group(app, &caller, id).await?;
            Ok(None)
        },
    )
    .await
}

/// `GET /admin/service-accounts`.
pub async fn service_accounts(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    let state_ref = &state;
    admin_page(&state, &request, teams::SERVICE_ACCOUNTS, "admin", "Service accounts", |principal| async move {
        let listed = teams::service_accounts(app).await?;
        let roles = root_roles(state_ref).await?;
        let may_write = teams::CREATE_SERVICE_ACCOUNT.admit(principal).is_ok();
        Ok(html! {
            h1 { "Service accounts" }
            (admin_nav("service-accounts"))
            p.muted { "Accounts for pipelines and scripts: they sign in with their own tokens, never a password, and the audit log names them." }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Username" } th scope="col" { "Name" } th scope="col" { "Root role" } th scope="col" { "Last used" } } }
                    tbody {
                        @for account in &listed.service_accounts {
                            tr {
                                td { a href=(format!("/admin/service-accounts/{}", account.id)) { (account.username.as_deref().unwrap_or("")) } }
                                td { (account.name.as_deref().unwrap_or("")) }
                                td { (roles.iter().find(|(id, _)| *id == account.root_role).map_or("", |(_, name)| name.as_str())) }
                                td { (account.seen_at.as_deref().unwrap_or("never")) }
                            }
                        }
                    }
                }
            }
            @if may_write {
                section.card aria-labelledby="new-account" {
                    h2 id="new-account" { "Create a service account" }
                    form method="post" action="/admin/service-accounts" {
                        div.row {
                            div { label for="account-username" { "Username" } input id="account-username" name="username" type="text" required; }
                            div { label for="account-name" { "Name" } input id="account-name" name="name" type="text"; }
                            div {
                                label for="account-role" { "Root role" }
                                select id="account-role" name="rootRole" {
                                    @for (id, name) in &roles { option value=(id) selected[*id == 3] { (name) } }
                                }
                            }
                        }
                        p { button type="submit" { "Create" } }
                    }
                }
            }
        })
    })
    .await
}

/// `POST /admin/service-accounts`.
pub async fn create_service_account(
    state: web::Data<AppState>,
    request: HttpRequest,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        teams::CREATE_SERVICE_ACCOUNT,
        "/admin/service-accounts",
        |caller| async move {
            let account = ServiceAccountIn {
                username: field(&fields, "username"),
                name: given(&fields, "name"),
                root_role: id_of(&field(&fields, "rootRole"), "/rootRole")?,
            };
            teams::create_service_account(app, &caller, account).await?;
            Ok(None)
        },
    )
    .await
}

/// `GET /admin/service-accounts/{id}`: its root role and tokens.
pub async fn service_account(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
) -> HttpResponse {
    let app = &state.app;
    let state_ref = &state;
    let id = path.into_inner();
    admin_page(&state, &request, teams::TOKENS, "admin", "Service account", |principal| async move {
        let listed = teams::service_accounts(app).await?;
        let account = listed
            .service_accounts
            .iter()
            .find(|account| account.id == id)
            .ok_or_else(|| AdminError::NotFound(format!("could not find service account {id}")))?;
        let tokens = teams::tokens(app, id).await?;
        let roles = root_roles(state_ref).await?;
        let may_write = teams::UPDATE_SERVICE_ACCOUNT.admit(principal.clone()).is_ok();
        let may_tokens = teams::CREATE_TOKEN.admit(principal.clone()).is_ok();
        let may_delete = teams::DELETE_SERVICE_ACCOUNT.admit(principal).is_ok();
        let base = format!("/admin/service-accounts/{id}");
        Ok(html! {
            p { a href="/admin/service-accounts" { "← Service accounts" } }
            h1 { (account.username.as_deref().unwrap_or("")) }
            @if may_write {
                form.row method="post" action=(base.clone()) {
                    div { label for="account-name" { "Name" } input id="account-name" name="name" type="text" value=(account.name.as_deref().unwrap_or("")); }
                    div {
                        label for="account-role" { "Root role" }
                        select id="account-role" name="rootRole" {
                            @for (role, name) in &roles { option value=(role) selected[*role == account.root_role] { (name) } }
                        }
                    }
                    button.secondary type="submit" { "Save" }
                }
            }
            section.card aria-labelledby="tokens" {
                h2 id="tokens" { "Tokens" }
                div.table-wrap {
                    table {
                        thead { tr { th scope="col" { "Description" } th scope="col" { "Expires" } th scope="col" { "Last used" } th scope="col" { span.visually-hidden { "Actions" } } } }
                        tbody {
                            @for token in &tokens.pats {
                                tr {
                                    td { (token.description) }
                                    td { (token.expires_at) }
                                    td { (token.seen_at.as_deref().unwrap_or("never")) }
                                    td {
                                        @if may_tokens {
                                            form method="post" action=(format!("{base}/tokens/{}/delete", token.id)) {
                                                button.danger type="submit" aria-label=(format!("Delete the token {}", token.description)) { "Delete" }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                @if may_tokens {
                    form method="post" action=(format!("{base}/tokens")) {
                        div.row {
                            div { label for="token-description" { "Description" } input id="token-description" name="description" type="text" required; }
                            div { label for="token-expires" { "Expires (UTC)" } input id="token-expires" name="expiresAt" type="datetime-local" required; }
                        }
                        p { button type="submit" { "Create a token" } }
                    }
                }
            }
            @if may_delete {
                form method="post" action=(format!("{base}/delete")) {
                    p { button.danger type="submit" { "Delete this service account" } }
                    p.muted { "Its tokens stop working at once." }
                }
            }
        })
    })
    .await
}

/// `POST /admin/service-accounts/{id}`: a new name or root role.
pub async fn save_service_account(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<i32>,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    let id = path.into_inner();
    admin_write(
        &state,
        &request,
        teams::UPDATE_SERVICE_ACCOUNT,
        &format!("/admin/service-accounts/{id}"),
        |caller| async move {
            let root_role = match given(&fields, "rootRole") {
                Some(role) => Some(id_of(&role, "/rootRole")?),
                None => None,
            };
            let change = ServiceAccountUpdate {
                name: given(&fields, "name"),
                root_role,
            };
            teams::update_service_account(app, &caller, id, change).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/service-accounts/{id}/{action}`: `tokens` makes a token and shows its secret
/// once, `delete` deletes the account.
pub async fn service_account_action(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(i32, String)>,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let app = &state.app;
    let (id, action) = path.into_inner();
    let back = format!("/admin/service-accounts/{id}");
    match action.as_str() {
        "tokens" => {
            admin_write(
                &state,
                &request,
                teams::CREATE_TOKEN,
                &back,
                |caller| async move {
                    let token = PatIn::new(field(&fields, "description"), &utc(&field(&fields, "expiresAt")))
                        .map_err(|error| AdminError::invalid("/expiresAt", error))?;
                    let created = teams::create_token(app, &caller, id, token).await?;
                    let secret = created.secret.unwrap_or_default();
                    Ok(Some(html! {
                        div.card.narrow {
                            h1 { "Token created" }
                            div.notice.ok role="status" { "Copy the secret now: it is not shown again." }
                            p { span.mono id="secret" { (secret) } }
                            p { button.secondary type="button" data-copy=(secret) { "Copy the secret" } }
                            p { a href=(format!("/admin/service-accounts/{id}")) { "Back to the account" } }
                        }
                    }))
                },
            )
            .await
        }
        "delete" => {
            admin_write(
                &state,
                &request,
                teams::DELETE_SERVICE_ACCOUNT,
                "/admin/service-accounts",
                |caller| async move {
                    teams::delete_service_account(app, &caller, id).await?;
                    Ok(None)
                },
            )
            .await
        }
        _ => super::layout::failure(&AdminError::NotFound(format!("no action {action}"))),
    }
}

/// `POST /admin/service-accounts/{id}/tokens/{token}/delete`.
pub async fn delete_service_account_token(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(i32, i32)>,
) -> HttpResponse {
    let app = &state.app;
    let (id, token) = path.into_inner();
    admin_write(
        &state,
        &request,
        teams::DELETE_TOKEN,
        &format!("/admin/service-accounts/{id}"),
        |caller| async move {
            teams::delete_token(app, &caller, id, token).await?;
            Ok(None)
        },
    )
    .await
}

/// The Access section of a project's page: who holds which role there, and, for whoever may
/// change it, forms to give a role and to take one's roles away.
pub async fn access_section(
    state: &AppState,
    principal: &Principal,
    project: &str,
) -> Result<Markup, AdminError> {
    teams::PROJECT_ACCESS.admit(principal.clone())?;
    let access = teams::project_access(&state.app, project.to_owned()).await?;
    let may_change = teams::SET_PROJECT_ACCESS
        .admit_in(principal.clone(), Some(project))
        .is_ok();
    let role_name = |id: &i32| {
        access
            .roles
            .iter()
            .find(|role| role.id == *id)
            .map_or(id.to_string(), |role| role.name.clone())
    };
    let names = |roles: &[i32]| roles.iter().map(role_name).collect::<Vec<_>>().join(", ");
    let (people, groups, accounts) = if may_change {
        (
            Some(users::list(&state.app).await?),
            Some(teams::groups(&state.app).await?),
            Some(teams::service_accounts(&state.app).await?),
        )
    } else {
        (None, None, None)
    };
    let action = format!("/projects/{}/access", super::url_escape(project));
    Ok(html! {
        section.card aria-labelledby="access" {
            h2 id="access" { "Access" }
            p.muted { "Admins and admin tokens reach every project; Editors write every project's flags. Here, project roles give more to the people, groups and service accounts named." }
            div.table-wrap {
                table {
                    thead { tr { th scope="col" { "Who" } th scope="col" { "Roles" } th scope="col" { span.visually-hidden { "Actions" } } } }
                    tbody {
                        @for user in &access.users {
                            @let who = user.user.email.clone().or(user.user.username.clone()).unwrap_or_else(|| user.user.id.to_string());
                            tr {
                                td { (who) @if user.user.is_api { " " span.muted { "(service account)" } } }
                                td { (names(&user.roles)) }
                                td { @if may_change {
                                    form method="post" action=(action.clone()) {
                                        input type="hidden" name="action" value="remove";
                                        input type="hidden" name="user" value=(user.user.id);
                                        button.danger type="submit" aria-label=(format!("Take {who}'s roles away")) { "Remove" }
                                    }
                                } }
                            }
                        }
                        @for group in &access.groups {
                            tr {
                                td { "Group " (group.name) }
                                td { (names(&group.roles)) }
                                td { @if may_change {
                                    form method="post" action=(action.clone()) {
                                        input type="hidden" name="action" value="remove";
                                        input type="hidden" name="group" value=(group.id);
                                        button.danger type="submit" aria-label=(format!("Take the group {}'s roles away", group.name)) { "Remove" }
                                    }
                                } }
                            }
                        }
                    }
                }
            }
            @if let (Some(people), Some(groups), Some(accounts)) = (&people, &groups, &accounts) {
                form method="post" action=(action.clone()) {
                    input type="hidden" name="action" value="add";
                    div.row {
                        div {
                            label for="access-role" { "Role" }
                            select id="access-role" name="role" {
                                @for role in &access.roles { option value=(role.id) { (role.name) } }
                            }
                        }
                        div {
                            label for="access-who" { "Given to" }
                            select id="access-who" name="who" {
                                @for user in people.users() { option value=(format!("user:{}", user.id())) { (user.email().or(user.username()).unwrap_or_default()) } }
                                @for account in &accounts.service_accounts { option value=(format!("user:{}", account.id)) { (account.username.as_deref().unwrap_or_default()) " (service account)" } }
                                @for group in &groups.groups { option value=(format!("group:{}", group.id)) { "Group " (group.name) } }
                            }
                        }
                    }
                    p { button type="submit" { "Give the role" } }
                }
            }
        }
    })
}

/// `POST /projects/{id}/access`: gives a role in the project, or takes someone's roles there away.
pub async fn change_access(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<String>,
    bytes: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&bytes);
    let project = path.into_inner();
    let principal = match super::poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let back = format!("/projects/{}#access", super::url_escape(&project));
    let result = async {
        let id = |text: &str| id_of(text, "/who");
        if field(&fields, "action") == "remove" {
            let caller = teams::REMOVE_PROJECT_ACCESS.admit_in(principal.clone(), Some(&project))?;
            let holder = match (field(&fields, "user"), field(&fields, "group")) {
                (user, _) if !user.is_empty() => Holder::User(id(&user)?),
                (_, group) => Holder::Group(id(&group)?),
            };
            teams::remove_project_access(&state.app, &caller, project.clone(), holder).await
        } else {
            let caller = teams::ADD_PROJECT_ACCESS.admit_in(principal.clone(), Some(&project))?;
            let role = id(&field(&fields, "role"))?;
            let who = field(&fields, "who");
            let request = match who.split_once(':') {
                Some(("user", user)) => AddAccessIn {
                    users: vec![UserRef { id: id(user)? }],
                    groups: Vec::new(),
                },
                Some(("group", group)) => AddAccessIn {
                    users: Vec::new(),
                    groups: vec![UserRef { id: id(group)? }],
                },
                _ => return Err(AdminError::invalid("/who", "choose whom from the list")),
            };
            teams::add_project_access(&state.app, &caller, project.clone(), role, request).await
        }
    }
    .await;
    match result {
        Ok(()) => super::see_other(&back),
        Err(error) => super::layout::failure(&error),
    }
}
