//! A whole installation moved into this store: every object a source (an Unleash server, or
//! another Halyard) holds, in one typed snapshot ([`Installation`]), compared with what the store
//! already holds ([`plan`]) and written in one transaction ([`apply`]).
//!
//! Each kind of object has a key (a flag's name, a user's email, a token's verifier...). An object
//! whose key the store does not hold is created; one it holds is identical or, with `merge`,
//! updated. What a source cannot say (a creation time, a secret it masks) is taken from the store's
//! object before the two are compared, so that moving the same installation twice finds everything
//! identical the second time and writes nothing.

mod read;
mod unleash;
mod write;

use std::collections::BTreeMap;
use std::fmt;

use chrono::NaiveDateTime;
use flag_eval::{Constraint, Variant};

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{LegalValue, RootRole, StrategyParameter, TokenType};

pub use read::read;
pub use unleash::{UnleashDatabase, UnleashToken, UnleashUser};

/// Everything one installation holds, in the order it is written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Installation {
    /// Environments.
    pub environments: Vec<Environment>,
    /// Projects and the environments each uses.
    pub projects: Vec<Project>,
    /// Context fields.
    pub context_fields: Vec<ContextField>,
    /// Strategy types: custom ones whole, built-in ones for whether they are deprecated.
    pub strategy_types: Vec<StrategyType>,
    /// Tag types.
    pub tag_types: Vec<TagType>,
    /// Tags, used or not.
    pub tags: Vec<Tag>,
    /// Segments.
    pub segments: Vec<Segment>,
    /// Flags, archived ones included.
    pub flags: Vec<Flag>,
    /// Webhooks and other integrations.
    pub addons: Vec<Addon>,
    /// API tokens, by the verifiers of their secrets.
    pub tokens: Vec<Token>,
    /// Users and their root roles.
    pub users: Vec<User>,
    /// The audit log, oldest first.
    pub events: Vec<Event>,
}

/// An environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// Its name.
    pub name: String,
    /// `development`, `production`...
    pub environment_type: String,
    /// Display order.
    pub sort_order: i32,
    /// Whether it is in use.
    pub enabled: bool,
}

/// A project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// When it was made, when the source says.
    pub created_at: Option<NaiveDateTime>,
    /// The environments enabled in it, by name, sorted.
    pub environments: Vec<String>,
}

/// A context field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextField {
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Usable for stickiness.
    pub stickiness: bool,
    /// Display order.
    pub sort_order: i32,
    /// Allowed values.
    pub legal_values: Vec<LegalValue>,
    /// When it was made, when the source says.
    pub created_at: Option<NaiveDateTime>,
}

/// A strategy type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategyType {
    /// Its name.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// The parameters it declares.
    pub parameters: Vec<StrategyParameter>,
    /// One of the server's own; only `deprecated` is carried for these.
    pub built_in: bool,
    /// Deprecated.
    pub deprecated: bool,
}

/// A tag type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TagType {
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// An icon name.
    pub icon: Option<String>,
    /// `#rrggbb`.
    pub color: Option<String>,
}

/// A tag.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tag {
    /// Its type.
    pub tag_type: String,
    /// Its value.
    pub value: String,
}

/// A segment.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Its id: the source's, kept when the store has no segment of that id; a segment the store
    /// holds already keeps its own.
    pub id: Option<i32>,
    /// Its name, by which it is matched.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// The project it belongs to, or none for every project.
    pub project: Option<String>,
    /// Its constraints.
    pub constraints: Vec<Constraint>,
    /// Who made it.
    pub created_by: Option<String>,
    /// When, when the source says.
    pub created_at: Option<NaiveDateTime>,
}

/// A flag, with its state in every environment it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// Its name.
    pub name: String,
    /// Its project.
    pub project: String,
    /// Its type.
    pub flag_type: String,
    /// Free text.
    pub description: Option<String>,
    /// Marked stale.
    pub stale: bool,
    /// Whether SDKs emit impression events.
    pub impression_data: bool,
    /// When it was made, when the source says.
    pub created_at: Option<NaiveDateTime>,
    /// The user who made it.
    pub created_by_user_id: Option<i32>,
    /// When it was archived; none for a live flag.
    pub archived_at: Option<NaiveDateTime>,
    /// Its tags, sorted.
    pub tags: Vec<Tag>,
    /// Its parent.
    pub dependency: Option<Dependency>,
    /// Its state per environment, by environment name.
    pub environments: Vec<FlagEnvironment>,
}

/// A flag's parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    /// The parent.
    pub parent: String,
    /// Whether the parent must be on.
    pub enabled: bool,
    /// Parent variants that satisfy it.
    pub variants: Vec<String>,
}

/// A flag in one environment.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagEnvironment {
    /// The environment.
    pub environment: String,
    /// On or off.
    pub enabled: bool,
    /// Its variants there.
    pub variants: Vec<Variant>,
    /// Its strategies, in order.
    pub strategies: Vec<Strategy>,
}

/// A strategy of a flag in an environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    /// Its id, kept.
    pub id: String,
    /// Its strategy type.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Kept but not evaluated.
    pub disabled: bool,
    /// Parameters, as strings.
    pub parameters: BTreeMap<String, String>,
    /// Constraints.
    pub constraints: Vec<Constraint>,
    /// Strategy variants.
    pub variants: Vec<Variant>,
    /// Its segments, by name, sorted.
    pub segments: Vec<String>,
}

/// A webhook or another integration.
#[derive(Clone, PartialEq)]
pub struct Addon {
    /// Its id: the source's, kept when the store has no integration of that id.
    pub id: Option<i32>,
    /// `webhook`, `slack`...
    pub provider: String,
    /// Free text, by which (with the provider) it is matched.
    pub description: Option<String>,
    /// Delivering.
    pub enabled: bool,
    /// Its parameters.
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// Event types it hears.
    pub events: Vec<String>,
    /// Projects it hears; none for all.
    pub projects: Vec<String>,
    /// Environments it hears; none for all.
    pub environments: Vec<String>,
}

/// The parameters are left out: they hold URLs and headers with secrets.
impl fmt::Debug for Addon {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Addon")
            .field("id", &self.id)
            .field("provider", &self.provider)
            .field("description", &self.description)
            .field("enabled", &self.enabled)
            .finish_non_exhaustive()
    }
}

/// An API token.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// Its name.
    pub name: String,
    /// Hex SHA-256 of its secret, by which it is matched.
    pub secret_hash: String,
    /// What it may be used for.
    pub token_type: TokenType,
    /// Its environment, or `*`.
    pub environment: String,
    /// Its projects, or `["*"]`.
    pub projects: Vec<String>,
    /// When it expires.
    pub expires_at: Option<NaiveDateTime>,
    /// When it was made, when the source says.
    pub created_at: Option<NaiveDateTime>,
}

/// The verifier is left out: it is as good as the secret against a store that takes it.
impl fmt::Debug for Token {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Token")
            .field("name", &self.name)
            .field("token_type", &self.token_type)
            .field("environment", &self.environment)
            .field("projects", &self.projects)
            .finish_non_exhaustive()
    }
}

/// A user.
#[derive(Clone, PartialEq, Eq)]
pub struct User {
    /// Its id: the source's, kept when the store has no user of that id.
    pub id: Option<i32>,
    /// Display name.
    pub name: Option<String>,
    /// Username.
    pub username: Option<String>,
    /// Email, lower-cased.
    pub email: Option<String>,
    /// Root role.
    pub root_role: RootRole,
    /// The password's hash (Argon2id, or bcrypt from Unleash), when the source gives it.
    pub password_hash: Option<String>,
    /// When it was made, when the source says.
    pub created_at: Option<NaiveDateTime>,
    /// When it was last seen.
    pub seen_at: Option<NaiveDateTime>,
}

/// The hash is left out.
impl fmt::Debug for User {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("User")
            .field("id", &self.id)
            .field("username", &self.username)
            .field("email", &self.email)
            .field("root_role", &self.root_role)
            .finish_non_exhaustive()
    }
}

impl User {
    /// How it is matched: its email, else its username.
    fn key(&self) -> String {
        self.email
            .clone()
            .or_else(|| self.username.clone())
            .unwrap_or_default()
    }
}

/// An event of the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// When.
    pub created_at: NaiveDateTime,
    /// Its type, as Unleash names it.
    pub event_type: String,
    /// Who.
    pub created_by: String,
    /// Who, by user id.
    pub created_by_user_id: Option<i32>,
    /// Project concerned.
    pub project: Option<String>,
    /// Environment concerned.
    pub environment: Option<String>,
    /// Flag concerned.
    pub feature_name: Option<String>,
    /// The value after, JSON.
    pub data: Option<String>,
    /// The value before, JSON.
    pub pre_data: Option<String>,
    /// The flag's tags, JSON.
    pub tags: Option<String>,
}

/// The kinds of object, in the order they are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// [`Environment`].
    Environment,
    /// [`Project`].
    Project,
    /// [`ContextField`].
    ContextField,
    /// [`StrategyType`].
    StrategyType,
    /// [`TagType`].
    TagType,
    /// [`Tag`].
    Tag,
    /// [`Segment`].
    Segment,
    /// [`Flag`].
    Flag,
    /// [`Addon`].
    Addon,
    /// [`Token`].
    Token,
    /// [`User`].
    User,
    /// [`Event`].
    Event,
}

impl Kind {
    /// Every kind, in the order they are written.
    pub const ALL: [Self; 12] = [
        Self::Environment,
        Self::Project,
        Self::ContextField,
        Self::StrategyType,
        Self::TagType,
        Self::Tag,
        Self::Segment,
        Self::Flag,
        Self::Addon,
        Self::Token,
        Self::User,
        Self::Event,
    ];

    /// Its plural, for reports.
    pub fn plural(self) -> &'static str {
        match self {
            Self::Environment => "environments",
            Self::Project => "projects",
            Self::ContextField => "context fields",
            Self::StrategyType => "strategy types",
            Self::TagType => "tag types",
            Self::Tag => "tags",
            Self::Segment => "segments",
            Self::Flag => "flags",
            Self::Addon => "integrations",
            Self::Token => "API tokens",
            Self::User => "users",
            Self::Event => "events",
        }
    }
}

/// What a migration does with one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// The store does not hold it: it is created.
    Create,
    /// The store holds it as the source does: nothing is written.
    Identical,
    /// The store holds it otherwise: with `merge` it is updated, else the migration is refused.
    Update,
}

/// One object and what happens to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its kind.
    pub kind: Kind,
    /// Which one, as a person reads it; never a secret.
    pub key: String,
    /// What happens to it.
    pub action: Action,
}

/// What a migration does, object by object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Every object of the source, in the order written.
    pub entries: Vec<Entry>,
    /// Whether the store held anything a migration could collide with before it ran.
    pub target_held_data: bool,
}

impl Plan {
    /// How many objects of `kind` meet `action`.
    pub fn count(&self, kind: Kind, action: Action) -> usize {
        self.entries
            .iter()
            .filter(|entry| entry.kind == kind && entry.action == action)
            .count()
    }

    /// The objects the store holds otherwise than the source.
    pub fn conflicts(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|entry| entry.action == Action::Update)
    }

    /// Whether applying it writes anything.
    pub fn writes(&self) -> bool {
        self.entries.iter().any(|entry| entry.action != Action::Identical)
    }
}

/// An object of a kind: its key, and what it takes from the store's object of that key when the
/// source does not say.
trait Object: Clone + PartialEq {
    const KIND: Kind;
    /// Whether equal objects may repeat (events written in one instant): the nth of them is
    /// matched with the store's nth.
    const REPEATS: bool = false;

    /// How it is matched.
    fn key(&self) -> String;

    /// How it is shown; the key unless that is a secret.
    fn shown(&self) -> String {
        self.key()
    }

    /// Fills in what the source does not say from the store's object of the same key.
    fn settle(&mut self, _stored: &Self) {}
}

fn keep<T: Clone>(mine: &mut Option<T>, stored: Option<&T>) {
    if mine.is_none() {
        *mine = stored.cloned();
    }
}

impl Object for Environment {
    const KIND: Kind = Kind::Environment;
    fn key(&self) -> String {
        self.name.clone()
    }
}

impl Object for Project {
    const KIND: Kind = Kind::Project;
    fn key(&self) -> String {
        self.id.clone()
    }
    fn settle(&mut self, stored: &Self) {
        keep(&mut self.created_at, stored.created_at.as_ref());
        // Environments are added to a project, never taken from it.
        self.environments.extend(stored.environments.iter().cloned());
        self.environments.sort();
        self.environments.dedup();
    }
}

impl Object for ContextField {
    const KIND: Kind = Kind::ContextField;
    fn key(&self) -> String {
        self.name.clone()
    }
    fn settle(&mut self, stored: &Self) {
        keep(&mut self.created_at, stored.created_at.as_ref());
    }
}

impl Object for StrategyType {
    const KIND: Kind = Kind::StrategyType;
    fn key(&self) -> String {
        self.name.clone()
    }
    fn settle(&mut self, stored: &Self) {
        // A built-in type keeps the store's definition; only whether it is deprecated moves.
        if stored.built_in {
            let deprecated = self.deprecated;
            *self = stored.clone();
            self.deprecated = deprecated;
        }
    }
}

impl Object for TagType {
    const KIND: Kind = Kind::TagType;
    fn key(&self) -> String {
        self.name.clone()
    }
}

impl Object for Tag {
    const KIND: Kind = Kind::Tag;
    fn key(&self) -> String {
        format!("{}:{}", self.tag_type, self.value)
    }
}

impl Object for Segment {
    const KIND: Kind = Kind::Segment;
    fn key(&self) -> String {
        self.name.clone()
    }
    fn settle(&mut self, stored: &Self) {
        self.id = stored.id;
        keep(&mut self.created_at, stored.created_at.as_ref());
        keep(&mut self.created_by, stored.created_by.as_ref());
    }
}

impl Object for Flag {
    const KIND: Kind = Kind::Flag;
    fn key(&self) -> String {
        self.name.clone()
    }
    fn settle(&mut self, stored: &Self) {
        keep(&mut self.created_at, stored.created_at.as_ref());
        keep(&mut self.created_by_user_id, stored.created_by_user_id.as_ref());
    }
}

impl Object for Addon {
    const KIND: Kind = Kind::Addon;
    /// Its id: descriptions are optional and need not differ, and a first move keeps the source's
    /// ids, so a second finds each integration under the same id.
    fn key(&self) -> String {
        self.id.map(|id| format!("#{id}")).unwrap_or_default()
    }
    fn shown(&self) -> String {
        format!(
            "{} {:?} ({})",
            self.provider,
            self.description.as_deref().unwrap_or(""),
            self.key()
        )
    }
    fn settle(&mut self, stored: &Self) {
        // A parameter the source masks keeps the store's value, and then whether it delivers is
        // the store's too: the source's answer is switched off only for want of the secrets.
        let mut masked = false;
        for (name, value) in &mut self.parameters {
            if value.as_str() == Some(MASKED)
                && let Some(kept) = stored.parameters.get(name)
            {
                value.clone_from(kept);
                masked = true;
            }
        }
        if masked {
            self.enabled = stored.enabled;
        }
    }
}

/// How Unleash shows a secret parameter of an integration.
pub const MASKED: &str = "*****";

impl Object for Token {
    const KIND: Kind = Kind::Token;
    fn key(&self) -> String {
        self.secret_hash.clone()
    }
    fn shown(&self) -> String {
        format!(
            "{} ({}, {})",
            self.name,
            self.token_type.as_str(),
            self.environment
        )
    }
    fn settle(&mut self, stored: &Self) {
        keep(&mut self.created_at, stored.created_at.as_ref());
    }
}

impl Object for User {
    const KIND: Kind = Kind::User;
    fn key(&self) -> String {
        User::key(self)
    }
    fn settle(&mut self, stored: &Self) {
        self.id = stored.id;
        // A hash from Unleash that a sign-in here has already replaced is the same password.
        let replaced = stored
            .password_hash
            .as_deref()
            .is_some_and(|hash| hash.starts_with("$argon2"))
            && self
                .password_hash
                .as_deref()
                .is_some_and(|hash| hash.starts_with("$2"));
        if replaced {
            self.password_hash.clone_from(&stored.password_hash);
        }
        keep(&mut self.password_hash, stored.password_hash.as_ref());
        keep(&mut self.created_at, stored.created_at.as_ref());
        keep(&mut self.seen_at, stored.seen_at.as_ref());
    }
}

impl Object for Event {
    const KIND: Kind = Kind::Event;
    const REPEATS: bool = true;
    fn key(&self) -> String {
        format!(
            "{} {} {} {}",
            self.created_at.and_utc().timestamp_micros(),
            self.event_type,
            self.feature_name.as_deref().unwrap_or(""),
            self.created_by
        )
    }
    fn shown(&self) -> String {
        format!("{} at {}", self.event_type, crate::time::iso(self.created_at))
    }
}

/// Compares one kind: settles each source object against the stored one of its key and says what
/// happens to it. Duplicate keys in the source are refused, naming the first.
fn compare<T: Object>(source: &mut [T], stored: &[T], entries: &mut Vec<Entry>) -> Result<(), StoreError> {
    let keys = |objects: &[T]| -> Vec<String> {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        objects
            .iter()
            .map(|object| {
                let key = object.key();
                if !T::REPEATS {
                    return key;
                }
                let count = counts.entry(key.clone()).or_default();
                *count += 1;
                format!("{key}#{count}")
            })
            .collect()
    };
    let stored: BTreeMap<String, &T> = keys(stored).into_iter().zip(stored).collect();
    let mut seen = std::collections::BTreeSet::new();
    for (key, object) in keys(source).into_iter().zip(source.iter_mut()) {
        if !seen.insert(key.clone()) {
            return Err(StoreError::Rejected {
                message: format!(
                    "the source holds two {} named {}",
                    T::KIND.plural(),
                    object.shown()
                ),
            });
        }
        let action = match stored.get(&key) {
            None => Action::Create,
            Some(existing) => {
                object.settle(existing);
                if object == *existing {
                    Action::Identical
                } else {
                    Action::Update
                }
            }
        };
        entries.push(Entry {
            kind: T::KIND,
            key: object.shown(),
            action,
        });
    }
    Ok(())
}

/// Settles `source` against `stored` and says what moving it in does, object by object.
fn settle(source: &mut Installation, stored: &Installation) -> Result<Plan, StoreError> {
    let mut entries = Vec::new();
    compare(&mut source.environments, &stored.environments, &mut entries)?;
    compare(&mut source.projects, &stored.projects, &mut entries)?;
    compare(&mut source.context_fields, &stored.context_fields, &mut entries)?;
    compare(&mut source.strategy_types, &stored.strategy_types, &mut entries)?;
    compare(&mut source.tag_types, &stored.tag_types, &mut entries)?;
    compare(&mut source.tags, &stored.tags, &mut entries)?;
    compare(&mut source.segments, &stored.segments, &mut entries)?;
    compare(&mut source.flags, &stored.flags, &mut entries)?;
    compare(&mut source.addons, &stored.addons, &mut entries)?;
    compare(&mut source.tokens, &stored.tokens, &mut entries)?;
    compare(&mut source.users, &stored.users, &mut entries)?;
    compare(&mut source.events, &stored.events, &mut entries)?;
    Ok(Plan {
        entries,
        target_held_data: holds_data(stored),
    })
}

/// Whether a store holds anything of its users' own: a flag, a segment, a project besides
/// `default`, an integration, a token or a user. A database no server has started on holds none.
fn holds_data(stored: &Installation) -> bool {
    !stored.flags.is_empty()
        || !stored.segments.is_empty()
        || stored.projects.iter().any(|project| project.id != "default")
        || !stored.addons.is_empty()
        || !stored.tokens.is_empty()
        || !stored.users.is_empty()
}

/// What moving `source` into the store would do, writing nothing.
pub fn plan(conn: &mut DbConnection, source: &Installation) -> Result<Plan, StoreError> {
    let stored = read(conn)?;
    settle(&mut source.clone(), &stored)
}

/// Moves `source` into the store in one transaction, as `plan` says; all or nothing. A store
/// that holds data is refused unless `merge`, which updates the objects it holds otherwise (or
/// unless it already holds the source whole, when nothing is written). When
/// anything was written, a `features-imported` event at `now` says what, so every cache of the
/// store sees a new revision.
pub fn apply(
    conn: &mut DbConnection,
    source: &Installation,
    merge: bool,
    now: NaiveDateTime,
) -> Result<Plan, StoreError> {
    crate::queries::write(conn, |conn| {
        // Rows are written directly, without an event naming each flag.
        crate::queries::history::touch_everything();
        let stored = read(conn)?;
        let mut source = source.clone();
        let plan = settle(&mut source, &stored)?;
        if plan.target_held_data && !merge && plan.writes() {
            return Err(StoreError::Rejected {
                message: "the database already holds flags, users or tokens; \
                          run again with --merge to update what differs, or choose an empty database"
                    .to_owned(),
            });
        }
        if plan.writes() {
            write::write(conn, &source, &stored, &plan, now)?;
        }
        Ok(plan)
    })
}
