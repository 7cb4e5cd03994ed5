//! Single sign-on's settings and failures, in-process: the settings are checked before they are
//! stored and the secret never read back; password login goes off only while single sign-on is
//! on; settings from the environment cannot be changed; and every failed login is a page with
//! the status the API would give, never a 500. Logins through a real provider (`oidc-provider`
//! under Node) are here too, with this suite's own hands for the browser's part; in a real
//! browser they are in `tests/browser.rs`.

use actix_web::http::StatusCode;
use actix_web::test;
use flag_admin::Settings;
use flag_admin::identity::oidc::types::OidcSettings;
use serde_json::{Value, json};

use crate::common::process::{OidcProvider, free_port};
use crate::common::{ADMIN, TestApp, assert_error, call, get, post, send};

const OIDC: &str = "/api/admin/auth/oidc/settings";
const PASSWORD: &str = "/api/admin/auth/simple/settings";

/// Settings that pass the checks, with a provider nothing listens at.
fn enabled() -> Value {
    json!({
        "enabled": true,
        "discoverUrl": "http://127.0.0.1:9/.well-known/openid-configuration",
        "clientId": "halyard",
        "secret": "very-secret",
        "autoCreate": true,
        "defaultRootRole": "Editor",
        // Unleash's web UI sends this too.
        "unleashHostname": "localhost"
    })
}

/// A console page: its status and text.
async fn page<S, B>(service: &S, path: &str, cookie: Option<(&str, &str)>) -> (StatusCode, String)
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let mut request = test::TestRequest::get().uri(path);
    if let Some((name, value)) = cookie {
        request = request.cookie(actix_web::cookie::Cookie::new(name.to_owned(), value.to_owned()));
    }
    let page = call(service, request).await;
    (page.status, page.body)
}

#[actix_web::test]
async fn oidc_settings_are_checked_stored_and_never_read_back() -> Result<(), Box<dyn std::error::Error>> {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, get(OIDC, ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["enabled"], json!(false), "{body}");

    let with = |change: Value| {
        let mut settings = enabled();
        if let (Some(settings), Value::Object(change)) = (settings.as_object_mut(), change) {
            settings.extend(change);
        }
        settings
    };
    for (bad, field) in [
        (with(json!({"discoverUrl": null})), "discoverUrl"),
        (
            with(json!({"discoverUrl": "ftp://login.example.com"})),
            "discoverUrl",
        ),
        (
            with(json!({"discoverUrl": "http://login.example.com"})),
            "discoverUrl",
        ),
        (with(json!({"discoverUrl": "not a url"})), "discoverUrl"),
        (with(json!({"clientId": " "})), "clientId"),
        (with(json!({"secret": null})), "secret"),
        (with(json!({"defaultRootRole": "Owner"})), "defaultRootRole"),
        (with(json!({"defaultRootRoleId": 4})), "defaultRootRoleId"),
        (
            with(json!({"idTokenSigningAlgorithm": "HS256"})),
            "idTokenSigningAlgorithm",
        ),
        (
            with(json!({"groupRootRoles": {"staff": "Boss"}})),
            "groupRootRoles",
        ),
        (with(json!({"enabled": "yes"})), "enabled"),
    ] {
        let (status, body) = send(&service, post(OIDC, ADMIN, bad.clone())).await;
        assert_error(status, &body, 400, "ValidationError");
        assert!(body.to_string().contains(field), "{field}: {body}");
    }
    let (status, body) = send(&service, post(OIDC, ADMIN, json!([]))).await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(&service, post(OIDC, ADMIN, enabled())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["secret"], json!("*****"), "{body}");
    assert_eq!(body["defaultRootRole"], json!("Editor"), "{body}");
    assert!(body.get("unleashHostname").is_none(), "{body}");
    let (_, read) = send(&service, get(OIDC, ADMIN)).await;
    assert_eq!(read, body);
    // The masked secret sent back keeps the stored one.
    let (status, body) = send(
        &service,
        post(OIDC, ADMIN, with(json!({"secret": "*****", "clientId": "other"}))),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let stored: Option<OidcSettings> = flag_store::queries::settings::get(
        &mut *app.store.connection()?,
        flag_admin::identity::oidc::SETTING,
    )?;
    let stored = stored.ok_or("the settings were stored")?;
    assert_eq!(
        (stored.secret.as_deref(), stored.client_id.as_deref()),
        (Some("very-secret"), Some("other"))
    );
    // The audit log records the change without the secret.
    let (_, events) = send(&service, get("/api/admin/events", ADMIN)).await;
    assert!(!events.to_string().contains("very-secret"), "{events}");
    Ok(())
}

#[actix_web::test]
async fn password_login_goes_off_only_while_single_sign_on_is_on() {
    let app = TestApp::new();
    let service = app.service().await;
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!({"disabled": true}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!([true]))).await;
    assert_error(status, &body, 400, "ValidationError");
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!({"disabled": "no"}))).await;
    assert_error(status, &body, 400, "ValidationError");

    let (status, body) = send(&service, post(OIDC, ADMIN, enabled())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (page_status, login) = page(&service, "/login", None).await;
    assert_eq!(page_status, StatusCode::OK);
    assert!(
        login.contains("Sign in with single sign-on") && login.contains("id=\"password\""),
        "{login}"
    );

    // Unleash's web UI learns from `/api/admin/user` how to log in.
    let anonymous = || test::TestRequest::get().uri("/api/admin/user");
    let (status, body) = send(&service, anonymous()).await;
    assert_error(status, &body, 401, "AuthenticationRequired");
    assert_eq!(
        (
            body["type"].clone(),
            body["defaultHidden"].clone(),
            body["options"].clone()
        ),
        (
            json!("password"),
            json!(false),
            json!([{"type": "oidc", "message": "Sign in with single sign-on", "path": "/auth/oidc/login"}])
        ),
        "{body}"
    );
    let (status, body) = send(&service, post(PASSWORD, ADMIN, json!({"disabled": true}))).await;
    assert_eq!(
        (status, body.clone()),
        (StatusCode::OK, json!({"disabled": true})),
        "{body}"
    );
    let (status, body) = send(&service, get(PASSWORD, ADMIN)).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"disabled": true})));
    let (_, login) = page(&service, "/login", None).await;
    assert!(
        login.contains("Sign in with single sign-on") && !login.contains("id=\"password\""),
        "{login}"
    );
    let (_, config) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(config["disablePasswordAuth"], json!(true), "{config}");
    assert_eq!(config["oidcConfiguredThroughEnv"], json!(false), "{config}");
    let (_, body) = send(&service, anonymous()).await;
    assert_eq!(body["defaultHidden"], json!(true), "{body}");
    let request = test::TestRequest::post()
        .uri("/auth/simple/login")
        .set_json(json!({"username": "admin", "password": "whatever-it-is"}));
    let (status, body) = send(&service, request).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    assert_eq!(
        body["message"],
        json!("Logging in with username/password has been disabled.")
    );
    // Nobody could sign in with single sign-on off too.
    let (status, body) = send(&service, post(OIDC, ADMIN, json!({"enabled": false}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
}

#[actix_web::test]
async fn settings_from_the_environment_cannot_be_changed() {
    let settings: OidcSettings = serde_json::from_value(enabled()).unwrap_or_default();
    let app = TestApp::with_settings(Settings {
        oidc: Some(settings),
        ..Settings::default()
    });
    let service = app.service().await;
    let (status, body) = send(&service, get(OIDC, ADMIN)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["enabled"].clone(), body["secret"].clone()),
        (json!(true), json!("*****"))
    );
    let (status, body) = send(&service, post(OIDC, ADMIN, json!({"enabled": false}))).await;
    assert_error(status, &body, 403, "InvalidOperationError");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|message| message.contains("OIDC_ENABLED")),
        "{body}"
    );
    let (_, config) = send(&service, get("/api/admin/ui-config", ADMIN)).await;
    assert_eq!(config["oidcConfiguredThroughEnv"], json!(true), "{config}");
    assert_eq!(config["disablePasswordAuth"], json!(false), "{config}");
}

#[actix_web::test]
async fn failed_logins_are_pages_with_their_status() {
    let app = TestApp::new();
    let service = app.service().await;
    // Single sign-on off.
    let (status, text) = page(&service, "/auth/oidc/login", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{text}");
    assert!(
        text.contains("Sign-in failed") && text.contains("not enabled"),
        "{text}"
    );

    let (status, body) = send(&service, post(OIDC, ADMIN, enabled())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // The provider cannot be reached.
    let (status, text) = page(&service, "/auth/oidc/login?redirect=/flags", None).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{text}");
    assert!(text.contains("discovery document could not be read"), "{text}");
    assert!(!text.contains("very-secret"), "{text}");
    // A callback this browser did not start, or one already used.
    let (status, text) = page(&service, "/auth/oidc/callback?code=c&state=s", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("did not start a login"), "{text}");
    let (status, text) = page(
        &service,
        "/auth/oidc/callback?code=c&state=s",
        Some(("halyard-oidc-login", "0123456789abcdef")),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    assert!(text.contains("already used"), "{text}");
    let (status, text) = page(&service, "/auth/oidc/callback?error=access_denied", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{text}");
    // A callback whose query does not read is a page too, with the console's headers.
    let page = call(
        &service,
        test::TestRequest::get().uri("/auth/oidc/callback?code=a&code=b"),
    )
    .await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    let csp = page.csp.unwrap_or_default();
    assert!(csp.contains("form-action 'self'"), "{csp}");
    assert!(
        page.body.contains("<html") && page.body.contains("does not read"),
        "{}",
        page.body
    );
}

/// The browser's part at a real OpenID provider (`tests/sdk/oidc-provider.mjs`): its cookies,
/// its redirects followed one by one, and the provider's development login, consent and
/// sign-out forms filled in as a person would.
struct AtProvider {
    agent: ureq::Agent,
    cookies: std::collections::BTreeMap<String, String>,
}

/// One answer of the provider: its status, where it redirects to (absolute), and its body.
struct Answer {
    status: u16,
    location: Option<String>,
    body: String,
}

/// The value of attribute `name` in the first tag of `html` that starts with `tag`.
fn attribute<'a>(html: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let start = html.find(tag)?;
    let element = &html[start..start + html[start..].find('>')?];
    let value = &element[element.find(&format!(" {name}=\""))? + name.len() + 3..];
    Some(&value[..value.find('"')?])
}

impl AtProvider {
    fn new() -> Self {
        Self {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .build()
                .into(),
            cookies: std::collections::BTreeMap::new(),
        }
    }

    /// A GET, or a form POST with `form`, with the cookies the provider set so far.
    fn send(
        &mut self,
        url: &str,
        form: Option<&[(&str, &str)]>,
    ) -> Result<Answer, Box<dyn std::error::Error>> {
        let cookies = self
            .cookies
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("; ");
        let mut response = match form {
            None => self.agent.get(url).header("Cookie", &cookies).call()?,
            Some(form) => self
                .agent
                .post(url)
                .header("Cookie", &cookies)
                .send_form(form.iter().copied())?,
        };
        for set in response.headers().get_all("set-cookie") {
            let set = set.to_str()?;
            let pair = set.split(';').next().unwrap_or_default();
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if value.is_empty() || set.to_ascii_lowercase().contains("expires=thu, 01 jan 1970") {
                self.cookies.remove(name);
            } else {
                self.cookies.insert(name.to_owned(), value.to_owned());
            }
        }
        let location = match response.headers().get("location") {
            Some(location) => Some(url::Url::parse(url)?.join(location.to_str()?)?.to_string()),
            None => None,
        };
        Ok(Answer {
            status: response.status().as_u16(),
            location,
            body: response.body_mut().read_to_string()?,
        })
    }

    /// Follows `url` through the provider's pages, signing in as `login` and agreeing to share
    /// what it asks, or agreeing to sign out, until the provider sends the browser to `base`;
    /// answers that URL.
    fn follow(&mut self, url: &str, login: &str, base: &str) -> Result<String, Box<dyn std::error::Error>> {
        let mut next = url.to_owned();
        for _ in 0..20 {
            if next.starts_with(base) {
                return Ok(next);
            }
            let answer = self.send(&next, None)?;
            let answer = match answer.status {
                200 => {
                    let body = &answer.body;
                    let action =
                        attribute(body, "<form", "action").ok_or_else(|| format!("no form: {body}"))?;
                    let action = url::Url::parse(&next)?.join(action)?.to_string();
                    let form: Vec<(&str, &str)> = match attribute(body, "<input type=\"hidden\"", "value") {
                        Some("login") => vec![("prompt", "login"), ("login", login), ("password", "any")],
                        Some("consent") => vec![("prompt", "consent")],
                        Some(xsrf) if body.contains("op.logoutForm") => {
                            vec![("xsrf", xsrf), ("logout", "yes")]
                        }
                        _ => {
                            return Err(format!(
                                "a page of the provider's that this test does not know: {body}"
                            )
                            .into());
                        }
                    };
                    self.send(&action, Some(&form))?
                }
                _ => answer,
            };
            next = answer
                .location
                .ok_or_else(|| format!("the provider answered {}: {}", answer.status, answer.body))?;
        }
        Err(format!("the provider never sent the browser back: {next}").into())
    }
}

/// The app on a scratch database, signing in through `provider` for the server at `base`.
fn app_with_provider(provider: &OidcProvider, base: &str, single_sign_out: bool) -> TestApp {
    let settings: OidcSettings = serde_json::from_value(json!({
        "enabled": true,
        "discoverUrl": provider.issuer,
        "clientId": "halyard",
        "secret": "halyard-secret",
        "autoCreate": true,
        "enableSingleSignOut": single_sign_out,
    }))
    .unwrap_or_default();
    TestApp::with_settings(Settings {
        unleash_url: base.to_owned(),
        oidc: Some(settings),
        logins_per_minute: 100,
        ..Settings::default()
    })
}

/// Signs in through the provider as `login`, from the console's button to the callback; answers
/// the callback's page (a redirect with the session cookie when it succeeds).
async fn sign_in_through<S, B>(
    service: &S,
    provider: &mut AtProvider,
    login: &str,
    base: &str,
) -> Result<crate::common::Page, Box<dyn std::error::Error>>
where
    S: actix_web::dev::Service<
            actix_http::Request,
            Response = actix_web::dev::ServiceResponse<B>,
            Error = actix_web::Error,
        >,
    B: actix_web::body::MessageBody,
{
    let started = test::call_service(
        service,
        test::TestRequest::get()
            .uri("/auth/oidc/login?redirect=/flags")
            .to_request(),
    )
    .await;
    assert_eq!(started.status(), StatusCode::SEE_OTHER);
    let authorize = started
        .headers()
        .get("location")
        .and_then(|location| location.to_str().ok())
        .ok_or("no way to the provider")?
        .to_owned();
    let login_cookie = started
        .response()
        .cookies()
        .find(|cookie| cookie.name() == "halyard-oidc-login")
        .map(actix_web::cookie::Cookie::into_owned)
        .ok_or("no login cookie")?;
    let back = provider.follow(&authorize, login, base)?;
    let callback = back.strip_prefix(base).ok_or("not back here")?;
    Ok(call(
        service,
        test::TestRequest::get().uri(callback).cookie(login_cookie),
    )
    .await)
}

/// Single sign-out sends the ID token of the session as `id_token_hint` (Okta signs out only
/// with it). The token stays on the server: in no cookie, and read once, by the page that goes
/// on to the provider, through a handle that signs no one in.
#[actix_web::test]
async fn single_sign_out_sends_the_id_token_hint() -> Result<(), Box<dyn std::error::Error>> {
    use diesel::prelude::*;
    use flag_store::schema::login_sessions;

    let base = format!("http://127.0.0.1:{}", free_port()?);
    let provider = OidcProvider::start(&base)?;
    let app = app_with_provider(&provider, &base, true);
    let service = app.service().await;
    let mut browser = AtProvider::new();
    provider.control("/__test/account?login=dana@example.com")?;
    let signed_in = sign_in_through(&service, &mut browser, "dana@example.com", &base).await?;
    assert_eq!(
        (signed_in.status, signed_in.location.as_deref()),
        (StatusCode::SEE_OTHER, Some("/flags")),
        "{}",
        signed_in.body
    );
    let session = signed_in.cookie.ok_or("no session cookie")?;
    assert!(!session.value().contains('.'), "a JWT in the cookie");
    let kept: Vec<Option<String>> = login_sessions::table
        .select(login_sessions::id_token)
        .load(&mut *app.store.connection()?)?;
    assert!(
        matches!(kept.as_slice(), [Some(token)] if token.split('.').count() == 3),
        "the ID token is kept with the session"
    );

    let signed_out = call(
        &service,
        test::TestRequest::post().uri("/logout").cookie(session.clone()),
    )
    .await;
    assert_eq!(signed_out.status, StatusCode::FOUND);
    let next = signed_out.location.unwrap_or_default();
    let handle = next
        .strip_prefix("/signed-out?provider=")
        .ok_or_else(|| format!("not on to the provider: {next}"))?
        .to_owned();
    // Neither the session's secret nor the handle signs anyone in any more.
    for secret in [session.value(), handle.as_str()] {
        let me = test::TestRequest::get()
            .uri("/api/admin/user")
            .cookie(actix_web::cookie::Cookie::new(
                "unleash-session",
                secret.to_owned(),
            ));
        let (status, body) = send(&service, me).await;
        assert_error(status, &body, 401, "AuthenticationRequired");
    }

    let (status, page_text) = page(&service, &next, None).await;
    assert_eq!(status, StatusCode::OK, "{page_text}");
    let end_session = attribute(&page_text, "<a href", "href")
        .ok_or_else(|| format!("no way on to the provider: {page_text}"))?
        .replace("&amp;", "&");
    let query: std::collections::BTreeMap<String, String> = url::Url::parse(&end_session)?
        .query_pairs()
        .into_owned()
        .collect();
    assert_eq!(
        query.get("post_logout_redirect_uri"),
        Some(&format!("{base}/signed-out"))
    );
    assert_eq!(query.get("client_id").map(String::as_str), Some("halyard"));
    let hint = query
        .get("id_token_hint")
        .ok_or_else(|| format!("no id_token_hint: {end_session}"))?;
    assert_eq!(Some(hint), kept[0].as_ref());
    // The provider knows the hint for its own, and signs out.
    let back = browser.follow(&end_session, "dana@example.com", &base)?;
    assert_eq!(back, format!("{base}/signed-out"));
    // The handle was good once; the session, and its ID token, are gone.
    let (_, again) = page(&service, &next, None).await;
    assert!(!again.contains("id_token_hint"), "{again}");
    let left: i64 = login_sessions::table
        .count()
        .get_result(&mut *app.store.connection()?)?;
    assert_eq!(left, 0);
    Ok(())
}

/// Apple sends `email_verified` as the string "true": that signs in. A claim that does not read
/// fails with a page that blames the ID token, not the token endpoint.
#[actix_web::test]
async fn email_verified_as_a_string_signs_in() -> Result<(), Box<dyn std::error::Error>> {
    let base = format!("http://127.0.0.1:{}", free_port()?);
    let provider = OidcProvider::start(&base)?;
    let app = app_with_provider(&provider, &base, false);
    let service = app.service().await;
    let mut browser = AtProvider::new();

    provider.control("/__test/account?login=apple@example.com&verified=%22true%22")?;
    let signed_in = sign_in_through(&service, &mut browser, "apple@example.com", &base).await?;
    assert_eq!(
        (signed_in.status, signed_in.location.as_deref()),
        (StatusCode::SEE_OTHER, Some("/flags")),
        "{}",
        signed_in.body
    );
    assert!(signed_in.cookie.is_some(), "signed in");

    let mut browser = AtProvider::new();
    provider.control("/__test/account?login=unverified@example.com&verified=%22false%22")?;
    let refused = sign_in_through(&service, &mut browser, "unverified@example.com", &base).await?;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.body.contains("has not verified"), "{}", refused.body);

    let mut browser = AtProvider::new();
    provider.control("/__test/account?login=odd@example.com&verified=%22yes%22")?;
    let failed = sign_in_through(&service, &mut browser, "odd@example.com", &base).await?;
    assert_eq!(failed.status, StatusCode::BAD_GATEWAY, "{}", failed.body);
    assert!(
        failed.body.contains("ID token") && !failed.body.contains("token endpoint"),
        "{}",
        failed.body
    );
    Ok(())
}

/// With group syncing, a login through the provider puts the user in the groups that map the
/// provider's groups they are in, and out of the mapped ones they left; what those groups hold
/// in a project comes with them. Groups without mappings are left alone.
#[actix_web::test]
async fn group_syncing_fills_the_mapped_groups_at_each_login() -> Result<(), Box<dyn std::error::Error>> {
    let base = format!("http://127.0.0.1:{}", free_port()?);
    let provider = OidcProvider::start(&base)?;
    let settings: OidcSettings = serde_json::from_value(json!({
        "enabled": true,
        "discoverUrl": provider.issuer,
        "clientId": "halyard",
        "secret": "halyard-secret",
        "autoCreate": true,
        "enableGroupSyncing": true,
        "groupJsonPath": "groups",
        "addGroupsScope": true,
    }))?;
    let app = TestApp::with_settings(Settings {
        unleash_url: base.clone(),
        oidc: Some(settings),
        logins_per_minute: 100,
        ..Settings::default()
    });
    let service = app.service().await;
    let (status, platform) = send(
        &service,
        post(
            "/api/admin/groups",
            ADMIN,
            json!({"name": "Platform", "mappingsSSO": ["platform"]}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{platform}");
    let (status, owners) = send(
        &service,
        post("/api/admin/groups", ADMIN, json!({"name": "Hand-picked"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{owners}");
    let (status, body) = send(
        &service,
        actix_web::test::TestRequest::put()
            .uri("/api/admin/projects/default/access")
            .insert_header(("Authorization", ADMIN))
            .set_json(json!({"roles": [{"id": 4, "groups": [platform["id"]]}]})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    provider.control("/__test/account?login=pat@example.com&groups=platform,staff")?;
    let signed_in = sign_in_through(&service, &mut AtProvider::new(), "pat@example.com", &base).await?;
    assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "{}", signed_in.body);
    let members = |group: &Value| {
        group["users"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|member| member["user"]["email"].as_str().map(str::to_owned))
            .collect::<Vec<_>>()
    };
    let (_, read) = send(
        &service,
        get(&format!("/api/admin/groups/{}", platform["id"]), ADMIN),
    )
    .await;
    assert_eq!(members(&read), ["pat@example.com"]);
    let (_, read) = send(
        &service,
        get(&format!("/api/admin/groups/{}", owners["id"]), ADMIN),
    )
    .await;
    assert!(
        members(&read).is_empty(),
        "an unmapped group is left alone: {read}"
    );
    // Through the group, the new Viewer owns `default`: it may write there.
    let session = signed_in.cookie.ok_or("no session")?;
    let (status, body) = send(
        &service,
        actix_web::test::TestRequest::post()
            .uri("/api/admin/projects/default/features")
            .cookie(session)
            .set_json(json!({"name": "from-platform"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    provider.control("/__test/account?login=pat@example.com&groups=staff")?;
    let again = sign_in_through(&service, &mut AtProvider::new(), "pat@example.com", &base).await?;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "{}", again.body);
    let (_, read) = send(
        &service,
        get(&format!("/api/admin/groups/{}", platform["id"]), ADMIN),
    )
    .await;
    assert!(
        members(&read).is_empty(),
        "left the provider's group, left ours: {read}"
    );
    Ok(())
}
