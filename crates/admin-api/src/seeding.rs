//! Admin tokens at start-up: the configured ones (`INIT_ADMIN_API_TOKENS`), and one written to
//! a private file on a first start with none.

use std::path::Path;

use flag_store::models::NewApiToken;
use flag_store::{Store, StoreError, queries};

use crate::config::Secret;
use crate::secrets;

/// Stores the configured admin tokens (`<project>:<environment>.<secret>`; an environment other
/// than `*` limits the token to it). Only their verifiers are kept. Each is named `admin`, as
/// Unleash names them, so lists show that name and writes made with one are by `admin`.
pub fn seed_admin_tokens(store: &Store, tokens: &[Secret]) -> Result<(), StoreError> {
    let mut conn = store.connection()?;
    let now = chrono::Utc::now().naive_utc();
    for Secret(token) in tokens {
        if token.is_empty() {
            continue;
        }
        let hash = secrets::verifier(token);
        if queries::api_tokens::find_by_hash(&mut conn, &hash)?.is_some() {
            continue;
        }
        let environment = token
            .split_once('.')
            .and_then(|(scope, _)| scope.split_once(':'))
            .map_or("*", |(_, environment)| environment);
        queries::api_tokens::create(
            &mut conn,
            &NewApiToken {
                token_name: "admin".into(),
                secret_hash: hash,
                token_type: "admin".into(),
                environment: environment.into(),
                projects: "[\"*\"]".into(),
                expires_at: None,
                created_at: now,
            },
            "system",
        )?;
    }
    Ok(())
}

/// On a first start with no admin token at all, creates one and writes it to `admin-token` next
/// to the database, readable by its owner only. Returns the file's path when it did.
pub fn ensure_admin_token(store: &Store, database: &Path) -> anyhow::Result<Option<std::path::PathBuf>> {
    let mut conn = store.connection()?;
    if queries::api_tokens::list(&mut conn)?
        .iter()
        .any(|token| token.token_type == "admin")
    {
        return Ok(None);
    }
    let token = format!("*:*.{}", secrets::random_hex(28)?);
    let path = database
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join("admin-token");
    write_private(&path, &format!("{token}\n"))?;
    seed_admin_tokens(store, &[Secret(token)])?;
    Ok(Some(path))
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(contents.as_bytes())
}
