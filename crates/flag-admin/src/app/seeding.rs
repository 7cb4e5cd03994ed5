//! Admin tokens at start-up: the configured ones (`INIT_ADMIN_API_TOKENS`), and one written to
//! a private file on a first start with none.

use std::path::Path;

use flag_store::models::{Actor, NewApiToken, TokenProjects};
use flag_store::{Store, StoreError, queries};

use crate::runtime::domain::TokenType;
use crate::runtime::error::AdminError;
use crate::runtime::secrets;

/// Stores the configured admin tokens (`INIT_ADMIN_API_TOKENS`); see [`seed_tokens`].
pub fn seed_admin_tokens(store: &Store, tokens: &[String]) -> Result<(), StoreError> {
    seed_tokens(store, TokenType::Admin, tokens)
}

/// Stores configured API tokens of one type, as Unleash's `INIT_*_API_TOKENS` do: each secret
/// reads `<project>:<environment>.<random part>`, which gives the token its project (`*` for
/// every project) and environment (`*` for every environment), and each is named `admin`, as
/// Unleash names them, so lists show that name and writes made with one are by `admin`. A secret
/// without that form is taken for every project and environment. Only verifiers are kept, and a
/// secret already stored is left as it is, so replicas starting together with the same
/// configuration store each token once.
pub fn seed_tokens(store: &Store, token_type: TokenType, tokens: &[String]) -> Result<(), StoreError> {
    let mut conn = store.connection()?;
    let now = crate::now();
    for token in tokens {
        if token.is_empty() {
            continue;
        }
        queries::api_tokens::create_unless_stored(
            &mut conn,
            &new_token(token, token_type, now),
            &Actor::system(),
        )?;
    }
    Ok(())
}

/// The row for a configured secret `<project>:<environment>.<random part>`.
fn new_token(token: &str, token_type: TokenType, now: chrono::NaiveDateTime) -> NewApiToken {
    let (project, environment) = token
        .split_once('.')
        .and_then(|(scope, _)| scope.split_once(':'))
        .unwrap_or(("*", "*"));
    NewApiToken::new(
        "admin".into(),
        secrets::verifier(token),
        token_type,
        environment.into(),
        TokenProjects::from(vec![project.to_owned()]),
        None,
        now,
    )
}

/// On a first start with no admin token at all, creates one and writes it to `admin-token` in
/// `directory`, readable by its owner only. Returns the file's path when it did. Of several
/// replicas starting together on a new database, one creates it.
pub fn ensure_admin_token(store: &Store, directory: &Path) -> Result<Option<std::path::PathBuf>, AdminError> {
    let mut conn = store.connection()?;
    if queries::api_tokens::list(&mut conn)?
        .iter()
        .any(|token| token.token_type == TokenType::Admin)
    {
        return Ok(None);
    }
    let token = format!(
        "*:*.{}",
        secrets::random_hex(28).map_err(|error| AdminError::Internal(error.to_string()))?
    );
    let row = new_token(&token, TokenType::Admin, crate::now());
    // Written before the token is stored, so a stored token is never one nobody can read.
    std::fs::create_dir_all(directory)?;
    let path = directory.join("admin-token");
    let pending = directory.join(format!("admin-token.{}", std::process::id()));
    write_private(&pending, &format!("{token}\n"))?;
    let stored = queries::api_tokens::create_if_none_of_type(&mut conn, &row, &Actor::system());
    if matches!(stored, Ok(true)) {
        std::fs::rename(&pending, &path)?;
        return Ok(Some(path));
    }
    std::fs::remove_file(&pending)?;
    stored?;
    Ok(None)
}

/// The first administrator, made when a database has no user at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstAdmin {
    /// The login name (`UNLEASH_DEFAULT_ADMIN_USERNAME`, `admin` by default).
    pub username: String,
    /// The password (`UNLEASH_DEFAULT_ADMIN_PASSWORD`); generated when not given.
    pub password: Option<String>,
}

/// What [`ensure_admin_user`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdminUser {
    /// Users exist already: nothing was made.
    Exists,
    /// The first admin was made with the configured password.
    Created,
    /// The first admin was made with a generated password, written to this file.
    Generated(std::path::PathBuf),
}

/// On a database with no user at all, creates an Admin user so that someone can sign in to the
/// console: with the configured password, or else a generated one written to `admin-password`
/// in `directory`, readable by its owner only (the password is never logged). Of several
/// replicas starting together on a new database, one creates it.
pub fn ensure_admin_user(
    store: &Store,
    directory: &Path,
    admin: &FirstAdmin,
) -> Result<AdminUser, AdminError> {
    let mut conn = store.connection()?;
    if queries::users::count(&mut conn)? > 0 {
        return Ok(AdminUser::Exists);
    }
    let username = admin.username.trim();
    if username.is_empty() || username.contains('@') {
        return Err(AdminError::invalid(
            "/UNLEASH_DEFAULT_ADMIN_USERNAME",
            "the first admin's username must be given, without @",
        ));
    }
    let (password, generated) = match admin.password.as_deref().filter(|password| !password.is_empty()) {
        Some(password) => (password.to_owned(), false),
        None => {
            // 24 random hex digits with an upper-case letter, a digit and a symbol, drawn again
            // until it follows every password rule (a digit three times in a row breaks one), so
            // it can be typed into any form that checks them.
            let mut password = String::new();
            for _ in 0..100 {
                let random =
                    secrets::random_hex(12).map_err(|error| AdminError::Internal(error.to_string()))?;
                password = format!("{random}-Hy9!");
                if crate::identity::password::broken_rules(&password).is_empty() {
                    break;
                }
            }
            (password, true)
        }
    };
    let password_hash = crate::identity::password::hash(&password)
        .map_err(|error| AdminError::Internal(format!("hashing failed: {error}")))?;
    let user = flag_store::models::NewUser {
        name: None,
        username: Some(username.to_owned()),
        email: None,
        password_hash: Some(password_hash),
        root_role: crate::runtime::domain::RootRole::Admin,
        created_at: crate::now(),
    };
    if !generated {
        let created = queries::users::create_if_none(&mut conn, &user, &Actor::system())?;
        return Ok(if created {
            AdminUser::Created
        } else {
            AdminUser::Exists
        });
    }
    // Written before the user is stored, so a stored password is never one nobody can read.
    std::fs::create_dir_all(directory)?;
    let path = directory.join("admin-password");
    let pending = directory.join(format!("admin-password.{}", std::process::id()));
    write_private(&pending, &format!("{password}\n"))?;
    let stored = queries::users::create_if_none(&mut conn, &user, &Actor::system());
    if matches!(stored, Ok(true)) {
        std::fs::rename(&pending, &path)?;
        return Ok(AdminUser::Generated(path));
    }
    std::fs::remove_file(&pending)?;
    stored?;
    Ok(AdminUser::Exists)
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(contents.as_bytes())
}

/// Imports `document` (a client-API document, as SDKs receive it) into `project` and
/// `environment`, as `import` did: the flags' compile warnings, and what was created and updated.
pub fn import(
    store: &Store,
    project: &str,
    environment: &str,
    document: &flag_eval::ClientFeatures,
) -> Result<(Vec<flag_eval::Warning>, queries::import::ImportReport), AdminError> {
    let (_, warnings) = flag_eval::Engine::compile(document);
    let report = queries::import::client_features(
        &mut *store.connection()?,
        project,
        environment,
        document,
        &Actor::system(),
        crate::now(),
    )?;
    Ok((warnings, report))
}

/// The setting that keeps the digest of the last file applied at start.
const IMPORTED_FILE: &str = "imported-file";

/// What applying a file of flags at start did.
#[derive(Debug, PartialEq, Eq)]
pub enum FileImport {
    /// The same file was applied to the same project and environment before: nothing changed.
    Unchanged,
    /// An export document was imported.
    Export,
    /// A client-features document was imported, with what it created and updated.
    ClientFeatures(queries::import::ImportReport),
}

/// Applies a file of flags, an export document or a client-features document, to `project`
/// and `environment`, unless the same file was applied there last.
pub fn import_file(
    store: &Store,
    project: &str,
    environment: &str,
    bytes: &[u8],
) -> Result<FileImport, AdminError> {
    use sha2::{Digest, Sha256};
    let digest = hex::encode(Sha256::digest(
        [project.as_bytes(), b"\0", environment.as_bytes(), b"\0", bytes].concat(),
    ));
    let mut conn = store.connection()?;
    if queries::settings::get::<String>(&mut conn, IMPORTED_FILE)?.as_deref() == Some(digest.as_str()) {
        return Ok(FileImport::Unchanged);
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|error| AdminError::bad_request(format!("the file is not JSON: {error}")))?;
    let now = crate::now();
    let done = if value.get("featureStrategies").is_some() {
        let document: queries::export::ExportDocument = crate::runtime::input::parse_value(value)?;
        queries::export::import(&mut conn, project, environment, &document, &Actor::system(), now)?;
        FileImport::Export
    } else {
        let document: flag_eval::ClientFeatures = crate::runtime::input::parse_value(value)?;
        drop(conn);
        let (_, report) = import(store, project, environment, &document)?;
        conn = store.connection()?;
        FileImport::ClientFeatures(report)
    };
    queries::settings::put(&mut conn, IMPORTED_FILE, &digest, &Actor::system(), now)?;
    Ok(done)
}
