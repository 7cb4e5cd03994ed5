//! The rest of the admin pages: webhooks (`/admin/webhooks`: made, sent a sample event, their
//! deliveries with failures, deleted), sign-in (`/admin/sign-in`: the single sign-on settings
//! and the password-login switch), and import and export (`/admin/import`: a document checked
//! first, every finding listed, then imported; flags exported by project, tag or name as a
//! download). Each reads and writes through the API's operations, admitted as they declare.

use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_DISPOSITION, CONTENT_TYPE};
use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::addons::types::{AddonIn, DeliveriesQuery};
use flag_admin::catalogue::export::types::{ExportQuery, ImportRequest};
use flag_admin::identity::oidc::types::PasswordAuthSettings;
use flag_admin::runtime::settings::OidcSettings;
use flag_admin::{AdminError, catalogue::addons, catalogue::environments, catalogue::export, identity::oidc};
use maud::{Markup, html};
use serde_json::{Map, Value};

use super::admin::{admin_nav, admin_page, admin_write};
use super::layout::{self, Viewer};
use super::{comma_list, field, form_fields, poster, signed_in};
use crate::state::AppState;

/// `GET /admin/webhooks`.
pub async fn webhooks(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    admin_page(&state, &request, addons::LIST, "admin", "Webhooks", |principal| async move {
        let list = addons::list(app).await?;
        let may_read_deliveries = addons::DELIVERIES.admit(principal.clone()).is_ok();
        let mut deliveries = Vec::with_capacity(list.addons.len());
        for addon in &list.addons {
            let shown = if may_read_deliveries {
                addons::deliveries(
                    app,
                    addon.id,
                    DeliveriesQuery {
                        limit: Some("10".into()),
                        offset: None,
                    },
                )
                .await?
                .integration_events
            } else {
                Vec::new()
            };
            deliveries.push(shown);
        }
        let may_write = addons::CREATE.admit(principal).is_ok();
        Ok(html! {
            h1 { "Webhooks" }
            (admin_nav("webhooks"))
            p.muted { "A webhook receives a POST for each event it listens to, as Unleash's webhook integration sends it." }
            @if list.addons.is_empty() { div.card { p { "No webhook yet. Add one below to tell another system when flags change." } } }
            @for (addon, sent) in list.addons.iter().zip(&deliveries) {
                section.card aria-labelledby=(format!("webhook-{}", addon.id)) {
                    h2 id=(format!("webhook-{}", addon.id)) {
                        (addon.description.as_deref().filter(|text| !text.is_empty()).unwrap_or("Webhook")) " "
                        span.state.on[addon.enabled].off[!addon.enabled] { (if addon.enabled { "on" } else { "off" }) }
                    }
                    p.muted { "Listens to " (addon.events.len()) " event types"
                        @if !addon.projects.is_empty() { " in " (addon.projects.join(", ")) } "." }
                    @if may_write {
                        div.actions {
                            form.inline method="post" action=(format!("/admin/webhooks/{}/sample", addon.id)) {
                                button.secondary type="submit" { "Send a sample event" }
                            }
                            form.inline method="post" action=(format!("/admin/webhooks/{}/delete", addon.id)) {
                                button.danger type="submit" { "Delete" }
                            }
                        }
                    }
                    @if sent.is_empty() {
                        p.muted { "Nothing sent yet." }
                    } @else {
                        div.table-wrap {
                            table {
                                thead { tr { th scope="col" { "When (UTC)" } th scope="col" { "Result" } th scope="col" { "Details" } } }
                                tbody {
                                    @for delivery in sent {
                                        tr {
                                            td { (delivery.created_at.get(..19).unwrap_or(&delivery.created_at).replace('T', " ")) }
                                            td { strong.state.on[delivery.state == "success"].off[delivery.state != "success"] { (delivery.state) } }
                                            td { (delivery.state_details) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if may_write {
                form.card method="post" action="/admin/webhooks" {
                    h2 { "New webhook" }
                    div.row {
                        div { label for="webhook-url" { "URL" } input id="webhook-url" name="url" type="url" required placeholder="https://example.com/hooks/flags"; }
                        div { label for="webhook-description" { "Description" } input id="webhook-description" name="description" type="text"; }
                    }
                    div.row {
                        div { label for="webhook-authorization" { "Authorization header (optional)" } input id="webhook-authorization" name="authorization" type="text" autocomplete="off"; }
                        div { label for="webhook-projects" { "Projects, comma-separated (all when empty)" } input id="webhook-projects" name="projects" type="text"; }
                    }
                    fieldset {
                        legend { "Events" }
                        label { input type="checkbox" name="all_events" value="true" checked; " Every event type" }
                        details {
                            summary { "Or choose" }
                            @for event in addons::EVENTS {
                                label { input type="checkbox" name="events" value=(event); " " span.mono { (event) } }
                            }
                        }
                    }
                    p { button type="submit" { "Add the webhook" } }
                }
            }
        })
    })
    .await
}

/// `POST /admin/webhooks`.
pub async fn create_webhook(
    state: web::Data<AppState>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        addons::CREATE,
        "/admin/webhooks",
        |caller| async move {
            let events: Vec<String> = if field(&fields, "all_events") == "true" {
                addons::EVENTS.iter().map(|event| (*event).to_owned()).collect()
            } else {
                fields
                    .iter()
                    .filter(|(key, _)| key == "events")
                    .map(|(_, value)| value.clone())
                    .collect()
            };
            let mut parameters = Map::new();
            parameters.insert("url".into(), Value::String(field(&fields, "url")));
            let authorization = field(&fields, "authorization");
            if !authorization.is_empty() {
                parameters.insert("authorization".into(), Value::String(authorization));
            }
            let description = field(&fields, "description");
            let command = AddonIn {
                provider: addons::WEBHOOK.into(),
                description: (!description.is_empty()).then_some(description),
                enabled: true,
                parameters,
                events,
                projects: comma_list(&field(&fields, "projects")),
                environments: Vec::new(),
            };
            addons::create(app, &caller, command).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/webhooks/{id}/sample` and `POST /admin/webhooks/{id}/delete`.
pub async fn webhook_action(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(i32, String)>,
) -> HttpResponse {
    let (id, action) = path.into_inner();
    let app = &state.app;
    match action.as_str() {
        "sample" => {
            admin_write(
                &state,
                &request,
                addons::SEND_SAMPLE,
                "/admin/webhooks",
                |_| async move {
                    addons::send_sample(app, id).await?;
                    Ok(None)
                },
            )
            .await
        }
        "delete" => {
            admin_write(
                &state,
                &request,
                addons::DELETE,
                "/admin/webhooks",
                |caller| async move {
                    addons::delete(app, &caller, id).await?;
                    Ok(None)
                },
            )
            .await
        }
        _ => layout::failure(&AdminError::NotFound("no such page".into())),
    }
}

/// `GET /admin/sign-in`.
pub async fn sign_in(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let app = &state.app;
    admin_page(
        &state,
        &request,
        oidc::SETTINGS,
        "admin",
        "Sign-in",
        |principal| async move {
            let mut settings = oidc::settings(app, &oidc::SETTINGS.admit(principal.clone())?).await?;
            // The page never carries the secret, even where the API reads it back: `*****`
            // saved again keeps it.
            if settings.secret.is_some() {
                settings.secret = Some("*****".to_owned());
            }
            oidc::PASSWORD_SETTINGS.admit(principal.clone())?;
            let password = oidc::password_settings(app).await?;
            let from_environment = oidc::configured_through_env(app);
            let may_write = oidc::SAVE_SETTINGS.admit(principal).is_ok();
            Ok(sign_in_body(&settings, password, from_environment, may_write))
        },
    )
    .await
}

fn sign_in_body(
    settings: &OidcSettings,
    password: PasswordAuthSettings,
    from_environment: bool,
    may_write: bool,
) -> Markup {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    html! {
        h1 { "Sign-in" }
        (admin_nav("sign-in"))
        section.card aria-labelledby="password-login" {
            h2 id="password-login" { "Password login " span.state.on[!password.disabled].off[password.disabled] { (if password.disabled { "off" } else { "on" }) } }
            p.muted { "Password login can be switched off only while single sign-on is on, so that someone can always sign in." }
            @if may_write {
                form method="post" action="/admin/sign-in/password" {
                    input type="hidden" name="disabled" value=(if password.disabled { "false" } else { "true" });
                    button.secondary type="submit" { (if password.disabled { "Allow password login" } else { "Switch password login off" }) }
                }
            }
        }
        section.card aria-labelledby="oidc" {
            h2 id="oidc" { "Single sign-on (OpenID Connect) " span.state.on[settings.enabled].off[!settings.enabled] { (if settings.enabled { "on" } else { "off" }) } }
            @if from_environment {
                p.notice.ok { "Set by the server's environment (OIDC_ENABLED and the OIDC_* variables); change it there." }
            }
            form method="post" action="/admin/sign-in/oidc" {
                label { input type="checkbox" name="enabled" value="true" checked[settings.enabled] disabled[from_environment]; " On" }
                div.row {
                    div { label for="oidc-discover" { "Discovery URL" } input id="oidc-discover" name="discoverUrl" type="url" value=(text(&settings.discover_url)) disabled[from_environment]; }
                    div { label for="oidc-client" { "Client id" } input id="oidc-client" name="clientId" type="text" value=(text(&settings.client_id)) disabled[from_environment]; }
                }
                div.row {
                    div { label for="oidc-secret" { "Client secret (kept when left as shown)" } input id="oidc-secret" name="secret" type="password" autocomplete="off" value=(text(&settings.secret)) disabled[from_environment]; }
                    div { label for="oidc-domains" { "Email domains that may sign up (comma-separated)" } input id="oidc-domains" name="emailDomains" type="text" value=(text(&settings.email_domains)) disabled[from_environment]; }
                }
                div.row {
                    label { input type="checkbox" name="autoCreate" value="true" checked[settings.auto_create] disabled[from_environment]; " Create users on first sign-in" }
                    label { input type="checkbox" name="enablePkce" value="true" checked[settings.enable_pkce] disabled[from_environment]; " PKCE" }
                    label { input type="checkbox" name="enableSingleSignOut" value="true" checked[settings.enable_single_sign_out] disabled[from_environment]; " Single sign-out" }
                }
                div {
                    label for="oidc-role" { "Root role of new users" }
                    select id="oidc-role" name="defaultRootRole" disabled[from_environment] {
                        @for role in ["Viewer", "Editor", "Admin"] {
                            option value=(role) selected[settings.default_root_role.as_deref().unwrap_or("Editor") == role] { (role) }
                        }
                    }
                }
                @if may_write && !from_environment { p { button type="submit" { "Save single sign-on" } } }
            }
        }
    }
}

/// `POST /admin/sign-in/password`.
pub async fn save_password(
    state: web::Data<AppState>,
    request: HttpRequest,
    body: web::Bytes,
) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        oidc::SAVE_PASSWORD_SETTINGS,
        "/admin/sign-in",
        |caller| async move {
            let settings = PasswordAuthSettings {
                disabled: field(&fields, "disabled") == "true",
            };
            oidc::save_password_settings(app, &caller, settings).await?;
            Ok(None)
        },
    )
    .await
}

/// `POST /admin/sign-in/oidc`.
pub async fn save_oidc(state: web::Data<AppState>, request: HttpRequest, body: web::Bytes) -> HttpResponse {
    let fields = form_fields(&body);
    let app = &state.app;
    admin_write(
        &state,
        &request,
        oidc::SAVE_SETTINGS,
        "/admin/sign-in",
        |caller| async move {
            let text = |name: &str| Some(field(&fields, name)).filter(|value| !value.is_empty());
            let mut settings = oidc::settings(app, &caller).await?;
            settings.enabled = field(&fields, "enabled") == "true";
            settings.discover_url = text("discoverUrl");
            settings.client_id = text("clientId");
            settings.secret = text("secret");
            settings.email_domains = text("emailDomains");
            settings.auto_create = field(&fields, "autoCreate") == "true";
            settings.enable_pkce = field(&fields, "enablePkce") == "true";
            settings.enable_single_sign_out = field(&fields, "enableSingleSignOut") == "true";
            settings.default_root_role = text("defaultRootRole");
            oidc::save_settings(app, app.identity(), &caller, settings).await?;
            Ok(None)
        },
    )
    .await
}

/// `GET /admin/import`: the import form and the export form.
pub async fn transfer(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    transfer_page(&state, &principal, &[], None, None).await
}

/// The page, with what was typed, and a check's findings or a refusal.
async fn transfer_page(
    state: &AppState,
    principal: &flag_admin::identity::auth::Principal,
    typed: &[(String, String)],
    checked: Option<Markup>,
    error: Option<&AdminError>,
) -> HttpResponse {
    let loaded = async {
        export::VALIDATE.admit(principal.clone())?;
        environments::LIST.admit(principal.clone())?;
        let known = environments::list(&state.app).await?;
        flag_admin::catalogue::projects::NAMES.admit(principal.clone())?;
        let projects = flag_admin::catalogue::projects::names(&state.app).await?;
        Ok::<_, AdminError>((known, projects))
    }
    .await;
    let (known, projects) = match loaded {
        Ok(loaded) => loaded,
        Err(error) => return layout::failure(&error),
    };
    let chosen = |name: &str, default: &str| {
        let value = field(typed, name);
        if value.is_empty() {
            default.to_owned()
        } else {
            value
        }
    };
    let status = error.map_or(StatusCode::OK, crate::error::status_of);
    let environment_choice = |id: &str, current: &str| {
        html! {
            select id=(id) name="environment" {
                @for environment in &known.environments {
                    option value=(environment.name) selected[environment.name == current] { (environment.name) }
                }
            }
        }
    };
    let body = html! {
        h1 { "Import and export" }
        (admin_nav("import"))
        @if let Some(error) = error { (layout::notice(error)) }
        section.card aria-labelledby="import" {
            h2 id="import" { "Import" }
            p.muted { "An export document from Unleash or from this server. It is checked first and every finding listed; nothing is written until you import." }
            form method="post" action="/admin/import" {
                div.row {
                    div {
                        label for="import-project" { "Into project" }
                        select id="import-project" name="project" {
                            @for (id, name) in &projects { option value=(id) selected[*id == chosen("project", "default")] { (name) } }
                        }
                    }
                    div { label for="import-environment" { "Environment" } (environment_choice("import-environment", &chosen("environment", "development"))) }
                }
                p.js-only {
                    label for="import-file" { "Read a file" }
                    input id="import-file" type="file" accept="application/json,.json" data-fill="import-data";
                }
                label for="import-data" { "The document (JSON)" }
                textarea id="import-data" name="data" required { (field(typed, "data")) }
                div.actions {
                    button.secondary type="submit" name="step" value="check" { "Check" }
                    button type="submit" name="step" value="import" { "Import" }
                }
            }
            @if let Some(checked) = checked { (checked) }
        }
        section.card aria-labelledby="export" {
            h2 id="export" { "Export" }
            p.muted { "Downloads the flags chosen, with their strategies, variants, tags, segments and context fields in one environment, as Unleash's export document." }
            form method="get" action="/admin/export" {
                div.row {
                    div { label for="export-environment" { "Environment" } (environment_choice("export-environment", "development")) }
                    div {
                        label for="export-project" { "Project" }
                        select id="export-project" name="project" {
                            option value="" { "Every project" }
                            @for (id, name) in &projects { option value=(id) { (name) } }
                        }
                    }
                }
                div.row {
                    div { label for="export-tag" { "Or only flags with the tag (type:value)" } input id="export-tag" name="tag" type="text"; }
                    div { label for="export-features" { "Or only these flags (comma-separated)" } input id="export-features" name="features" type="text"; }
                }
                p { button type="submit" { "Download" } }
            }
        }
    };
    layout::page(
        status,
        "Import and export",
        Some(&Viewer::of(principal)),
        "admin",
        &body,
    )
}

/// `POST /admin/import` with `step=check` or `step=import`.
pub async fn import(state: web::Data<AppState>, request: HttpRequest, body: web::Bytes) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let fields = form_fields(&body);
    let document = match serde_json::from_str(&field(&fields, "data")) {
        Ok(document) => document,
        Err(error) => {
            let error = AdminError::invalid(
                "/data",
                format!("the document is not an export document: {error}"),
            );
            return transfer_page(&state, &principal, &fields, None, Some(&error)).await;
        }
    };
    let command = ImportRequest {
        project: field(&fields, "project"),
        environment: field(&fields, "environment"),
        data: document,
    };
    let names: Vec<String> = command
        .data
        .features
        .iter()
        .map(|feature| feature.name.clone())
        .collect();
    let importing = field(&fields, "step") == "import";
    let result = async {
        if importing {
            let caller = export::IMPORT.admit(principal.clone())?;
            export::import(&state.app, &caller, command).await?;
            Ok(None)
        } else {
            let caller = export::VALIDATE.admit(principal.clone())?;
            export::validate(&state.app, &caller, command).await.map(Some)
        }
    }
    .await;
    match result {
        Ok(Some(check)) => {
            let findings = html! {
                div.notice.ok[check.errors.is_empty()].error[!check.errors.is_empty()] role="status" id="import-check" {
                    @if check.errors.is_empty() {
                        strong { "Ready to import " (names.len()) (if names.len() == 1 { " flag" } else { " flags" }) ": " } (names.join(", "))
                    } @else {
                        strong { "It cannot be imported as it is:" }
                    }
                    @for finding in &check.errors {
                        p { "✗ " (finding.message) @if !finding.affected_items.is_empty() { ": " span.mono { (finding.affected_items.join(", ")) } } }
                    }
                    @for finding in &check.warnings {
                        p { "⚠ " (finding.message) @if !finding.affected_items.is_empty() { ": " span.mono { (finding.affected_items.join(", ")) } } }
                    }
                }
            };
            transfer_page(&state, &principal, &fields, Some(findings), None).await
        }
        Ok(None) => {
            let done = html! {
                div.notice.ok role="status" id="import-check" {
                    "Imported " (names.len()) (if names.len() == 1 { " flag" } else { " flags" }) ": " (names.join(", ")) "."
                }
            };
            transfer_page(&state, &principal, &[], Some(done), None).await
        }
        Err(error) => transfer_page(&state, &principal, &fields, None, Some(&error)).await,
    }
}

/// `GET /admin/export?environment=&project=&tag=&features=`: the document, as a download.
pub async fn download(state: web::Data<AppState>, request: HttpRequest) -> HttpResponse {
    let principal = match signed_in(&state, &request).await {
        Ok(principal) => principal,
        Err(redirect) => return redirect,
    };
    let query = form_fields(request.query_string().as_bytes());
    let text = |name: &str| Some(field(&query, name)).filter(|value| !value.is_empty());
    let environment = text("environment").unwrap_or_else(|| "development".into());
    let export_query = ExportQuery {
        environment: environment.clone(),
        features: text("features").map(|names| comma_list(&names)),
        tag: text("tag"),
        project: text("project"),
        download_file: Some(true),
    };
    let result = async {
        let caller = export::EXPORT.admit(principal.clone())?;
        let document = export::export(&state.app, &caller, export_query).await?;
        serde_json::to_vec_pretty(&document).map_err(|error| AdminError::Internal(error.to_string()))
    }
    .await;
    match result {
        Ok(bytes) => HttpResponse::Ok()
            .insert_header((CONTENT_TYPE, "application/json"))
            .insert_header((
                CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"export-{}.json\"",
                    environment.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_', "_")
                ),
            ))
            .body(bytes),
        Err(error) => layout::failure(&error),
    }
}
