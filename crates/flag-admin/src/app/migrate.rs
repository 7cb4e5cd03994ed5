//! `halyard migrate`: a whole Unleash installation (5 to 8, or another Halyard) read through its
//! admin API into an [`Installation`], then written into this server's store in one transaction
//! (`flag_store::queries::migrate`).
//!
//! The source is only read. API token secrets are turned into verifiers as they arrive and never
//! kept, printed or logged; nor is the source's token.

mod api;

use std::fmt;

use flag_store::queries::migrate::{self, Action, Installation, Kind, Plan};
use flag_store::{Store, StoreError};

pub use api::{ApiSource, SourceError};

/// Something the source holds that could not be carried as it is, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotCarried {
    /// Its kind.
    pub kind: Kind,
    /// Which, with its kind's name (`API token ci (client, production)`); never a secret.
    pub what: String,
    /// Why, and what was done instead.
    pub why: String,
}

/// What was read from a source.
#[derive(Debug, Clone)]
pub struct Read {
    /// Everything carried.
    pub installation: Installation,
    /// What was not, or not whole.
    pub not_carried: Vec<NotCarried>,
    /// The source's version, as it says.
    pub version: String,
    /// Integrations whose secret parameters the API hid, by id, and whether each was on.
    hidden: Vec<(i32, bool)>,
}

impl Read {
    /// Adds what only Unleash's own database holds: users' password hashes (bcrypt, verified at
    /// their first login here), integrations' secret parameters, API tokens' true types, and the
    /// whole audit log from `events_since` on. The database must be the API's installation's: its
    /// users are matched by id and email.
    pub fn add_database(
        &mut self,
        database: &mut migrate::UnleashDatabase,
        events_since: Option<chrono::NaiveDate>,
    ) -> Result<(), MigrateError> {
        let users = database.users()?;
        let mut matched = 0;
        for user in &mut self.installation.users {
            let Some(found) = users.iter().find(|found| Some(found.id) == user.id) else {
                continue;
            };
            if found.email != user.email || found.username != user.username {
                return Err(StoreError::Rejected {
                    message: format!(
                        "user {} differs between the API and the database: are they the same installation?",
                        found.id
                    ),
                }
                .into());
            }
            matched += 1;
            user.password_hash.clone_from(&found.password_hash);
        }
        if matched == 0 && !self.installation.users.is_empty() {
            return Err(StoreError::Rejected {
                message:
                    "no user of the API's installation is in the database: are they the same installation?"
                        .to_owned(),
            }
            .into());
        }
        self.not_carried
            .retain(|note| !(note.kind == Kind::User && note.why.contains("without passwords")));

        for token in database.tokens()? {
            let verifier = crate::runtime::secrets::verifier(&token.secret);
            if let (Some(carried), Some(token_type)) = (
                self.installation
                    .tokens
                    .iter_mut()
                    .find(|carried| carried.secret_hash == verifier),
                flag_store::models::TokenType::parse(&token.token_type),
            ) {
                carried.token_type = token_type;
            }
        }

        let parameters = database.addon_parameters()?;
        for (id, enabled) in std::mem::take(&mut self.hidden) {
            let Some((_, clear)) = parameters.iter().find(|(found, _)| *found == id) else {
                continue;
            };
            if let Some(addon) = self
                .installation
                .addons
                .iter_mut()
                .find(|addon| addon.id == Some(id))
            {
                addon.parameters.clone_from(clear);
                addon.enabled = enabled;
                let shown = format!(
                    "integration {} {:?}",
                    addon.provider,
                    addon.description.as_deref().unwrap_or("")
                );
                self.not_carried.retain(|note| note.what != shown);
            }
        }

        self.installation.events = database.events(events_since)?;
        self.version = format!("{}; database: {}", self.version, database.version);
        Ok(())
    }
}

/// What one step of reading has reached, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The kind being read.
    pub kind: Kind,
    /// How many of it so far.
    pub count: usize,
}

/// Why a migration stopped; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// Reading the source failed.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What moving `read` into `store` would do, writing nothing.
pub fn plan(store: &Store, read: &Read) -> Result<Plan, MigrateError> {
    let mut conn = store.connection()?;
    Ok(migrate::plan(&mut conn, &read.installation)?)
}

/// Moves `read` into `store` in one transaction; see `flag_store::queries::migrate::apply`.
pub fn apply(store: &Store, read: &Read, merge: bool) -> Result<Plan, MigrateError> {
    let mut conn = store.connection()?;
    Ok(migrate::apply(
        &mut conn,
        &read.installation,
        merge,
        crate::now(),
    )?)
}

/// The report a person reads at the end: counts per kind, every object the store held otherwise,
/// what was not carried, and the next step.
#[derive(Debug)]
pub struct Report<'a> {
    /// What was read.
    pub read: &'a Read,
    /// What was (or would be) done.
    pub plan: &'a Plan,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Whether objects held otherwise were updated.
    pub merge: bool,
    /// Where the source was.
    pub source: &'a str,
}

impl Report<'_> {
    /// Whether the objects held otherwise are (or would be) updated: with `--merge`, or in a
    /// database that held nothing of its users' own (only what it was made with).
    fn updates(&self) -> bool {
        self.merge || !self.plan.target_held_data
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (create, update) = if self.dry_run {
            ("would create", "would update")
        } else {
            ("created", "updated")
        };
        writeln!(out, "Source: {} (version {})", self.source, self.read.version)?;
        writeln!(out)?;
        writeln!(
            out,
            "{:<16} {:>8} {:>13} {:>13} {:>10}",
            "kind", "read", create, update, "identical"
        )?;
        for kind in Kind::ALL {
            let read = self
                .plan
                .entries
                .iter()
                .filter(|entry| entry.kind == kind)
                .count();
            let updated = if self.updates() {
                self.plan.count(kind, Action::Update)
            } else {
                0
            };
            writeln!(
                out,
                "{:<16} {:>8} {:>13} {:>13} {:>10}",
                kind.plural(),
                read,
                self.plan.count(kind, Action::Create),
                updated,
                self.plan.count(kind, Action::Identical),
            )?;
        }
        let conflicts: Vec<_> = self.plan.conflicts().collect();
        if !conflicts.is_empty() {
            writeln!(out)?;
            if !self.dry_run && self.updates() {
                writeln!(out, "Updated, because the database held them otherwise:")?;
            } else {
                writeln!(
                    out,
                    "Conflicts: the database holds these otherwise ({}):",
                    if self.updates() {
                        "they would be updated"
                    } else {
                        "only --merge updates them"
                    }
                )?;
            }
            for entry in conflicts {
                writeln!(out, "  {}: {}", singular(entry.kind), entry.key)?;
            }
        }
        if !self.read.not_carried.is_empty() {
            writeln!(out)?;
            writeln!(out, "Not carried as they are:")?;
            for item in &self.read.not_carried {
                writeln!(out, "  {}: {}", item.what, item.why)?;
            }
        }
        writeln!(out)?;
        if self.dry_run {
            if self.plan.target_held_data && !self.merge && self.plan.writes() {
                writeln!(
                    out,
                    "Without --merge this migration is refused: the database already holds flags, users or tokens."
                )?;
            }
            writeln!(out, "Dry run: nothing was written.")?;
        } else if !self.plan.writes() {
            writeln!(out, "Nothing to write: the database already holds all of it.")?;
        } else {
            writeln!(
                out,
                "Done. Next: start Halyard on this database and point your SDKs, Edge instances and \
                 scripts at its URL instead of {}; their API tokens already work here.",
                self.source
            )?;
        }
        Ok(())
    }
}

/// A kind's name for one object.
fn singular(kind: Kind) -> &'static str {
    match kind {
        Kind::Environment => "environment",
        Kind::Project => "project",
        Kind::ContextField => "context field",
        Kind::StrategyType => "strategy type",
        Kind::TagType => "tag type",
        Kind::Tag => "tag",
        Kind::Segment => "segment",
        Kind::Flag => "flag",
        Kind::Addon => "integration",
        Kind::Token => "API token",
        Kind::User => "user",
        Kind::Event => "event",
    }
}
