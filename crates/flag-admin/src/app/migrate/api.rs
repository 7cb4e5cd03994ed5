//! Reading an installation through Unleash's admin API, as Unleash 5 to 8 (and Halyard) serve it.
//!
//! The read plan: the global lists (environments, projects, strategy types, context fields,
//! segments, tag types and tags, integrations, API tokens, users), each project's environments,
//! the audit log, every flag's name, metadata and tags from the flag search (archived ones too),
//! then each live flag (its strategies, variants and parent in every environment), and each
//! archived flag's environments one by one. Only `GET`s: Unleash's export would be quicker, but it
//! records each export in the source's audit log, and the source is only read. Where an older
//! Unleash lacks an endpoint, its older equivalent is asked instead.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use flag_eval::{Constraint, Variant};
use flag_store::models::{LegalValue, RootRole, StrategyParameter, TokenType};
use flag_store::queries::migrate::{
    Addon, ContextField, Dependency, Environment, Event, Flag, FlagEnvironment, Installation, Kind, MASKED,
    Project, Segment, Strategy, StrategyType, Tag, TagType, Token, User,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{NotCarried, Progress, Read};

/// The largest answer read from the source (an export of every flag in one environment).
const ANSWER_LIMIT: u64 = 1 << 30;
/// Flags read at once.
const FLAG_READERS: usize = 8;
/// Search pages: Unleash answers at most 100 flags and 1,000 events a page.
const FLAG_PAGE: usize = 100;
const EVENT_PAGE: usize = 1000;

/// Why the source could not be read. No message holds the token.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// `--from` is not an http(s) URL.
    #[error("--from {url:?} is not an http:// or https:// URL")]
    BadUrl {
        /// What was given.
        url: String,
    },
    /// `--from` holds a user name or password, which would be shown with it.
    #[error("--from holds a user name or password: give the server's URL alone, and its token in --token")]
    Credentials,
    /// Nothing answered.
    #[error("cannot reach the source at {url}: {error}")]
    Unreachable {
        /// The source.
        url: String,
        /// What the connection said.
        error: String,
    },
    /// The source did not answer in time.
    #[error("the source did not answer {path} within {seconds} s")]
    TimedOut {
        /// What was asked.
        path: String,
        /// The limit.
        seconds: u64,
    },
    /// The token was refused.
    #[error("the source refused the token on {path} (401): check --token")]
    Unauthorized {
        /// What was asked.
        path: String,
    },
    /// The token may not read everything.
    #[error(
        "the token may not read {path} (403): use an admin API token or an admin user's personal access token"
    )]
    Forbidden {
        /// What was asked.
        path: String,
    },
    /// The source has no such endpoint.
    #[error("the source (version {version}) has no {path} (404), which a migration needs")]
    Missing {
        /// What was asked.
        path: String,
        /// The source's version.
        version: String,
    },
    /// Another status.
    #[error("the source answered {path} with {status}")]
    Status {
        /// What was asked.
        path: String,
        /// The status.
        status: u16,
    },
    /// The answer is not what Unleash answers.
    #[error("the source answered {path} with something that is not Unleash's answer: {error}")]
    Garbage {
        /// What was asked.
        path: String,
        /// Why it does not read.
        error: String,
    },
}

/// An Unleash (or Halyard) server read through its admin API.
pub struct ApiSource {
    base: String,
    token: String,
    agent: ureq::Agent,
    timeout: Duration,
    version: String,
}

impl std::fmt::Debug for ApiSource {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ApiSource")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// Not found: the endpoint is missing (on this version), not the object.
enum Answer<T> {
    Found(T),
    Missing,
}

impl ApiSource {
    /// The server at `base` (its URL without `/api`), read with `token` (an admin API token or an
    /// admin's personal access token), each request given `timeout`.
    pub fn new(base: &str, token: &str, timeout: Duration) -> Result<Self, SourceError> {
        let base = base.trim_end_matches('/').to_owned();
        let parsed = url::Url::parse(&base).map_err(|_| SourceError::BadUrl { url: base.clone() })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(SourceError::BadUrl { url: base });
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(SourceError::Credentials);
        }
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(timeout))
            .user_agent(concat!("halyard-migrate/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Self {
            base,
            token: token.to_owned(),
            agent,
            timeout,
            version: "unknown".to_owned(),
        })
    }

    fn failed(&self, path: &str, error: ureq::Error) -> SourceError {
        match error {
            ureq::Error::Timeout(_) => SourceError::TimedOut {
                path: path.to_owned(),
                seconds: self.timeout.as_secs(),
            },
            ureq::Error::Io(error) if error.kind() == std::io::ErrorKind::TimedOut => SourceError::TimedOut {
                path: path.to_owned(),
                seconds: self.timeout.as_secs(),
            },
            other => SourceError::Unreachable {
                url: self.base.clone(),
                error: other.to_string(),
            },
        }
    }

    fn answer<T: DeserializeOwned>(
        &self,
        path: &str,
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<Answer<T>, SourceError> {
        let mut response = response.map_err(|error| self.failed(path, error))?;
        match response.status().as_u16() {
            200 => {}
            401 => {
                return Err(SourceError::Unauthorized {
                    path: path.to_owned(),
                });
            }
            403 => {
                return Err(SourceError::Forbidden {
                    path: path.to_owned(),
                });
            }
            404 | 405 => return Ok(Answer::Missing),
            status => {
                return Err(SourceError::Status {
                    path: path.to_owned(),
                    status,
                });
            }
        }
        let text = response
            .body_mut()
            .with_config()
            .limit(ANSWER_LIMIT)
            .read_to_string()
            .map_err(|error| match error {
                ureq::Error::Timeout(_) => SourceError::TimedOut {
                    path: path.to_owned(),
                    seconds: self.timeout.as_secs(),
                },
                other => SourceError::Garbage {
                    path: path.to_owned(),
                    error: other.to_string(),
                },
            })?;
        serde_json::from_str(&text)
            .map(Answer::Found)
            .map_err(|error| SourceError::Garbage {
                path: path.to_owned(),
                error: error.to_string(),
            })
    }

    /// `GET path`, or `Missing` on 404.
    fn try_get<T: DeserializeOwned>(&self, path: &str) -> Result<Answer<T>, SourceError> {
        let response = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Authorization", &self.token)
            .header("Accept", "application/json")
            .call();
        self.answer(path, response)
    }

    /// `GET path`, which the source must have.
    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, SourceError> {
        match self.try_get(path)? {
            Answer::Found(value) => Ok(value),
            Answer::Missing => Err(self.missing(path)),
        }
    }

    fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<Answer<T>, SourceError> {
        let response = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Authorization", &self.token)
            .header("Accept", "application/json")
            .send_json(body);
        self.answer(path, response)
    }

    fn missing(&self, path: &str) -> SourceError {
        SourceError::Missing {
            path: path.split('?').next().unwrap_or(path).to_owned(),
            version: self.version.clone(),
        }
    }

    /// Reads the whole installation; events from `events_since` on (every event when none).
    pub fn read(
        mut self,
        events_since: Option<NaiveDate>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Read, SourceError> {
        let ui: UiConfig = self.get("/api/admin/ui-config")?;
        self.version = ui.version();
        let mut notes = Vec::new();
        let mut report = |kind: Kind, count: usize| progress(Progress { kind, count });

        let environments: Vec<Environment> = self
            .get::<EnvironmentsIn>("/api/admin/environments")?
            .environments
            .into_iter()
            .map(|environment| Environment {
                name: environment.name,
                environment_type: environment.environment_type,
                sort_order: environment.sort_order,
                enabled: environment.enabled,
            })
            .collect();
        report(Kind::Environment, environments.len());

        let mut projects = Vec::new();
        for project in self.get::<ProjectsIn>("/api/admin/projects")?.projects {
            let mut enabled = self.project_environments(&project.id)?;
            enabled.sort();
            projects.push(Project {
                created_at: time(project.created_at.as_deref()),
                environments: enabled,
                id: project.id,
                name: project.name,
                description: project.description.filter(|text| !text.is_empty()),
            });
            report(Kind::Project, projects.len());
        }

        let strategy_types: Vec<StrategyType> = self
            .get::<StrategiesIn>("/api/admin/strategies")?
            .strategies
            .into_iter()
            .map(|kind| StrategyType {
                built_in: !kind.editable,
                name: kind.name,
                title: kind.title,
                description: kind.description.filter(|text| !text.is_empty()),
                parameters: kind.parameters,
                deprecated: kind.deprecated,
            })
            .collect();
        report(Kind::StrategyType, strategy_types.len());

        let mut context_fields = Vec::new();
        for field in self.get::<Vec<ContextFieldIn>>("/api/admin/context?include=project")? {
            if let Some(project) = &field.project {
                notes.push(NotCarried {
                    kind: Kind::ContextField,
                    what: format!("context field {}", field.name),
                    why: format!("belongs to project {project} in the source; carried for every project"),
                });
            }
            context_fields.push(ContextField {
                created_at: time(field.created_at.as_deref()),
                name: field.name,
                description: field.description,
                stickiness: field.stickiness,
                sort_order: field.sort_order,
                legal_values: field.legal_values,
            });
        }
        report(Kind::ContextField, context_fields.len());

        let segments: Vec<Segment> = match self.try_get::<SegmentsIn>("/api/admin/segments")? {
            Answer::Found(found) => found.segments,
            // Segments came to Unleash's open-source server in 5.5.
            Answer::Missing => Vec::new(),
        }
        .into_iter()
        .map(|segment| Segment {
            id: Some(segment.id),
            name: segment.name,
            description: segment.description,
            project: segment.project,
            constraints: segment.constraints,
            created_by: segment.created_by,
            created_at: time(segment.created_at.as_deref()),
        })
        .collect();
        report(Kind::Segment, segments.len());
        let segment_names: HashMap<i64, String> = segments
            .iter()
            .filter_map(|segment| Some((i64::from(segment.id?), segment.name.clone())))
            .collect();

        let mut tag_types: Vec<TagType> = self
            .get::<TagTypesIn>("/api/admin/tag-types")?
            .tag_types
            .into_iter()
            .map(|kind| TagType {
                name: kind.name,
                description: kind.description,
                icon: kind.icon,
                color: kind.color,
            })
            .collect();
        let mut tags: BTreeSet<Tag> = self
            .get::<TagsIn>("/api/admin/tags")?
            .tags
            .into_iter()
            .map(|tag| Tag {
                tag_type: tag.tag_type,
                value: tag.value,
            })
            .collect();

        let mut addons = Vec::new();
        let mut hidden = Vec::new();
        for addon in self.get::<AddonsIn>("/api/admin/addons")?.addons {
            if addon.provider != "webhook" {
                notes.push(NotCarried {
                    kind: Kind::Addon,
                    what: format!(
                        "integration {} {:?}",
                        addon.provider,
                        addon.description.as_deref().unwrap_or("")
                    ),
                    why: "Halyard delivers webhooks only; not carried".to_owned(),
                });
                continue;
            }
            let masked: Vec<String> = addon
                .parameters
                .iter()
                .filter(|(_, value)| value.as_str() == Some(MASKED))
                .map(|(name, _)| name.clone())
                .collect();
            let mut carried = Addon {
                id: Some(addon.id),
                provider: addon.provider,
                description: addon.description,
                enabled: addon.enabled,
                parameters: addon.parameters,
                events: addon.events,
                projects: addon.projects,
                environments: addon.environments,
            };
            if !masked.is_empty() {
                notes.push(NotCarried {
                    kind: Kind::Addon,
                    what: format!(
                        "integration {} {:?}",
                        carried.provider,
                        carried.description.as_deref().unwrap_or("")
                    ),
                    why: format!(
                        "the source's API hides its {}; carried with them as the source shows them, \
                         and off unless this database already held them: set them and turn it on",
                        masked.join(", ")
                    ),
                });
                hidden.push((addon.id, carried.enabled));
                carried.enabled = false;
            }
            addons.push(carried);
        }
        report(Kind::Addon, addons.len());

        let mut tokens = Vec::new();
        for token in self.get::<TokensIn>("/api/admin/api-tokens")?.tokens {
            let name = token.token_name.or(token.username).unwrap_or_default();
            let secret = token
                .secret
                .filter(|secret| !secret.is_empty() && !secret.ends_with("***"));
            let Some(secret) = secret.filter(|_| !token.secure) else {
                notes.push(NotCarried {
                    kind: Kind::Token,
                    what: format!("API token {name} ({}, {})", token.token_type, token.environment),
                    why: "the source does not show its secret (it keeps only a verifier): make a new \
                          token here and give it to whatever uses this one"
                        .to_owned(),
                });
                continue;
            };
            let Some(token_type) = TokenType::parse(&token.token_type) else {
                notes.push(NotCarried {
                    kind: Kind::Token,
                    what: format!("API token {name}"),
                    why: format!("its type {:?} is none this server knows", token.token_type),
                });
                continue;
            };
            tokens.push(Token {
                secret_hash: crate::runtime::secrets::verifier(&secret),
                name,
                token_type,
                environment: token.environment,
                projects: token.projects,
                expires_at: time(token.expires_at.as_deref()),
                created_at: time(token.created_at.as_deref()),
            });
        }
        report(Kind::Token, tokens.len());

        let users_in: UsersIn = self.get("/api/admin/user-admin")?;
        let roles: HashMap<i64, RoleIn> = users_in
            .root_roles
            .into_iter()
            .map(|role| (role.id, role))
            .collect();
        let mut users = Vec::new();
        for user in users_in.users {
            let role = user.root_role.and_then(|id| roles.get(&id));
            let root_role = match role.map(|role| role.name.as_str()) {
                Some("Admin") => RootRole::Admin,
                Some("Editor") => RootRole::Editor,
                Some("Viewer") | None => RootRole::Viewer,
                Some(custom) => {
                    notes.push(NotCarried {
                        kind: Kind::User,
                        what: format!(
                            "user {}",
                            user.email.clone().or(user.username.clone()).unwrap_or_default()
                        ),
                        why: format!("holds the custom root role {custom:?}; carried as a Viewer"),
                    });
                    RootRole::Viewer
                }
            };
            users.push(User {
                id: i32::try_from(user.id).ok(),
                name: user.name.filter(|name| !name.is_empty()),
                username: user.username.filter(|name| !name.is_empty()),
                email: user.email.map(|email| email.to_lowercase()),
                root_role,
                password_hash: None,
                created_at: time(user.created_at.as_deref()),
                seen_at: time(user.seen_at.as_deref()),
            });
        }
        if !users.is_empty() {
            notes.push(NotCarried {
                kind: Kind::User,
                what: format!("all {} users", users.len()),
                why: "carried without passwords, which Unleash's API never shows: each signs in through \
                      single sign-on, or once an admin sets a password \
                      (POST /api/admin/user-admin/{id}/change-password); --from-database carries them"
                    .to_owned(),
            });
        }
        report(Kind::User, users.len());

        let (events, unreadable) = self.events(events_since, &mut report)?;
        if unreadable > 0 {
            notes.push(NotCarried {
                kind: Kind::Event,
                what: format!("{unreadable} events"),
                why: "their time does not read as RFC 3339; not carried".to_owned(),
            });
        }

        let listed = self.flag_list(&mut report)?;
        let listed: Vec<(String, ListedFlag)> = listed.into_iter().collect();
        let states = self.flag_states(&listed, &environments, &segment_names, &mut report)?;
        let mut flags: Vec<Flag> = Vec::with_capacity(listed.len());
        for ((name, item), state) in listed.into_iter().zip(states) {
            let Some((states, dependency)) = state else {
                notes.push(NotCarried {
                    kind: Kind::Flag,
                    what: format!("flag {name}"),
                    why: "was deleted or archived in the source while it was read; not carried: run again"
                        .to_owned(),
                });
                continue;
            };
            let mut flag_tags: Vec<Tag> = item
                .tags
                .iter()
                .map(|tag| Tag {
                    tag_type: tag.tag_type.clone(),
                    value: tag.value.clone(),
                })
                .collect();
            flag_tags.sort();
            flag_tags.dedup();
            tags.extend(flag_tags.iter().cloned());
            let archived_at = item.archived_at();
            flags.push(Flag {
                project: item.project,
                flag_type: item.flag_type,
                description: item.description,
                stale: item.stale,
                impression_data: item.impression_data,
                created_at: time(item.created_at.as_deref()),
                created_by_user_id: item
                    .created_by
                    .and_then(|person| person.id)
                    .and_then(|id| i32::try_from(id).ok()),
                archived_at,
                tags: flag_tags,
                dependency,
                environments: states,
                name,
            });
        }
        let used: BTreeSet<&str> = tag_types.iter().map(|kind| kind.name.as_str()).collect();
        let missing: BTreeSet<String> = tags
            .iter()
            .filter(|tag| !used.contains(tag.tag_type.as_str()))
            .map(|tag| tag.tag_type.clone())
            .collect();
        tag_types.extend(missing.into_iter().map(|name| TagType {
            name,
            description: None,
            icon: None,
            color: None,
        }));
        report(Kind::Flag, flags.len());
        report(Kind::TagType, tag_types.len());
        report(Kind::Tag, tags.len());

        let mut installation = Installation {
            environments,
            projects,
            context_fields,
            strategy_types,
            tag_types,
            tags: tags.into_iter().collect(),
            segments,
            flags,
            addons,
            tokens,
            users,
            events,
        };
        complete(&mut installation, &mut notes);
        Ok(Read {
            installation,
            not_carried: notes,
            version: self.version,
            hidden,
        })
    }

    /// Every listed flag's states and parent, read by [`FLAG_READERS`] threads at once (a hosted
    /// source answers each request after a network round trip), in the order listed; the first
    /// failure stops them all.
    fn flag_states(
        &self,
        listed: &[(String, ListedFlag)],
        environments: &[Environment],
        segment_names: &HashMap<i64, String>,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<Vec<Option<FlagState>>, SourceError> {
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let (sender, receiver) =
            std::sync::mpsc::channel::<(usize, Result<Option<FlagState>, SourceError>)>();
        let mut states: Vec<Option<FlagState>> = std::iter::repeat_with(|| None).take(listed.len()).collect();
        let mut first_error = None;
        std::thread::scope(|scope| {
            for _ in 0..FLAG_READERS {
                let sender = sender.clone();
                let (next, failed) = (&next, &failed);
                scope.spawn(move || {
                    while !failed.load(Ordering::Relaxed) {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        let Some((name, item)) = listed.get(index) else {
                            break;
                        };
                        let state = if item.archived_at().is_some() {
                            self.archived_flag(&item.project, name, environments, segment_names)
                                .map(|states| Some((states, None)))
                        } else {
                            self.live_flag(&item.project, name, segment_names)
                        };
                        if state.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        if sender.send((index, state)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(sender);
            let mut read: usize = 0;
            for (index, state) in receiver {
                match state {
                    Ok(state) => {
                        states[index] = state;
                        read += 1;
                        if read.is_multiple_of(100) {
                            report(Kind::Flag, read);
                        }
                    }
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
        });
        if let Some(error) = first_error {
            return Err(error);
        }
        Ok(states)
    }

    /// A live flag's state in each environment it has one (strategies in order, variants) and
    /// its parent: one read of the flag.
    fn live_flag(
        &self,
        project: &str,
        name: &str,
        segment_names: &HashMap<i64, String>,
    ) -> Result<Option<FlagState>, SourceError> {
        let path = format!(
            "/api/admin/projects/{}/features/{}?variantEnvironments=true",
            encode(project),
            encode(name)
        );
        let Answer::Found(flag) = self.try_get::<FeatureIn>(&path)? else {
            return Ok(None);
        };
        let mut states = Vec::new();
        for state in flag.environments {
            states.push(FlagEnvironment {
                strategies: strategies(&path, name, &state.name, state.strategies, segment_names)?,
                environment: state.name,
                enabled: state.enabled,
                variants: state.variants,
            });
        }
        states.sort_by(|left, right| left.environment.cmp(&right.environment));
        let dependency = flag.dependencies.into_iter().next().map(|parent| Dependency {
            parent: parent.feature,
            enabled: parent.enabled,
            variants: parent.variants,
        });
        Ok(Some((states, dependency)))
    }

    /// An archived flag's state in each environment it kept one: Unleash answers a flag's own read
    /// only while it is live, but its environments' reads still.
    fn archived_flag(
        &self,
        project: &str,
        name: &str,
        environments: &[Environment],
        segment_names: &HashMap<i64, String>,
    ) -> Result<Vec<FlagEnvironment>, SourceError> {
        let mut states = Vec::new();
        for environment in environments {
            let base = format!(
                "/api/admin/projects/{}/features/{}/environments/{}",
                encode(project),
                encode(name),
                encode(&environment.name)
            );
            let Answer::Found(state) = self.try_get::<FeatureEnvironmentIn>(&base)? else {
                continue;
            };
            let strategies_path = format!("{base}/strategies");
            let Answer::Found(listed) = self.try_get::<Vec<StrategyIn>>(&strategies_path)? else {
                continue;
            };
            let variants: VariantsIn = match self.try_get(&format!("{base}/variants"))? {
                Answer::Found(variants) => variants,
                Answer::Missing => VariantsIn::default(),
            };
            states.push(FlagEnvironment {
                strategies: strategies(&strategies_path, name, &environment.name, listed, segment_names)?,
                environment: environment.name.clone(),
                enabled: state.enabled,
                variants: variants.variants,
            });
        }
        states.sort_by(|left, right| left.environment.cmp(&right.environment));
        Ok(states)
    }

    /// The environments enabled in `project`: `visible` in its environment list (Unleash 6.8 and
    /// later), else its overview (5.10 and later), else the project itself.
    fn project_environments(&self, project: &str) -> Result<Vec<String>, SourceError> {
        let project_path = encode(project);
        if let Answer::Found(found) =
            self.try_get::<ProjectEnvironmentsIn>(&format!("/api/admin/environments/project/{project_path}"))?
            && found
                .environments
                .iter()
                .all(|environment| environment.visible.is_some())
        {
            return Ok(found
                .environments
                .into_iter()
                .filter(|environment| environment.visible == Some(true))
                .map(|environment| environment.name)
                .collect());
        }
        let overview = format!("/api/admin/projects/{project_path}/overview");
        let found: OverviewIn = match self.try_get(&overview)? {
            Answer::Found(found) => found,
            Answer::Missing => self.get(&format!("/api/admin/projects/{project_path}"))?,
        };
        Ok(found
            .environments
            .into_iter()
            .map(|environment| match environment {
                OverviewEnvironment::Name(name) => name,
                OverviewEnvironment::Object { environment } => environment,
            })
            .collect())
    }

    /// Every flag's name and metadata, live and archived: the flag search (Unleash 6.4 and later
    /// lists archived flags in it), else each project's flags and the archive.
    fn flag_list(
        &self,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<BTreeMap<String, ListedFlag>, SourceError> {
        let Some(mut flags) = self.search_flags(false, report)? else {
            return self.flag_list_by_project(report);
        };
        // Before 6.4 the search ignores `archived` and answers the live flags again, which have no
        // `archivedAt`: the archive's own list (removed in 7.0) has them then.
        match self.search_flags(true, report)? {
            Some(archived)
                if !archived.is_empty() && archived.values().all(|flag| flag.archived_at.is_some()) =>
            {
                for (name, mut flag) in archived {
                    flag.archived = true;
                    flags.insert(name, flag);
                }
            }
            _ => self.archive_list(&mut flags, report)?,
        }
        Ok(flags)
    }

    /// The flag search's pages, live or archived flags; none when the source has no search
    /// (before 5.6), or keeps it behind its experimental flag (5.6 to 5.8 answer 403 then).
    fn search_flags(
        &self,
        archived: bool,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<Option<BTreeMap<String, ListedFlag>>, SourceError> {
        let mut flags = BTreeMap::new();
        let mut offset = 0;
        loop {
            let path = format!(
                "/api/admin/search/features?archived=IS:{archived}&limit={FLAG_PAGE}&offset={offset}&sortBy=name&sortOrder=asc"
            );
            let page: SearchIn = match self.try_get(&path) {
                Ok(Answer::Found(page)) => page,
                Ok(Answer::Missing) | Err(SourceError::Forbidden { .. }) => return Ok(None),
                Err(error) => return Err(error),
            };
            let count = page.features.len();
            flags.extend(page.features.into_iter().map(|flag| (flag.name.clone(), flag)));
            report(Kind::Flag, flags.len());
            offset += count;
            if count == 0 || offset >= page.total.unwrap_or(offset) {
                return Ok(Some(flags));
            }
        }
    }

    /// Adds the archive's own list (Unleash 5 and 6), when the source has it.
    fn archive_list(
        &self,
        flags: &mut BTreeMap<String, ListedFlag>,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<(), SourceError> {
        if let Answer::Found(archived) = self.try_get::<FeaturesIn>("/api/admin/archive/features")? {
            for mut flag in archived.features {
                flag.archived = true;
                flags.insert(flag.name.clone(), flag);
            }
            report(Kind::Flag, flags.len());
        }
        Ok(())
    }

    fn flag_list_by_project(
        &self,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<BTreeMap<String, ListedFlag>, SourceError> {
        let mut flags = BTreeMap::new();
        for project in self.get::<ProjectsIn>("/api/admin/projects")?.projects {
            let listed: FeaturesIn =
                self.get(&format!("/api/admin/projects/{}/features", encode(&project.id)))?;
            for mut flag in listed.features {
                flag.project.clone_from(&project.id);
                flags.insert(flag.name.clone(), flag);
            }
            report(Kind::Flag, flags.len());
        }
        self.archive_list(&mut flags, report)?;
        Ok(flags)
    }

    /// The audit log from `since` on, oldest first: the event search (Unleash 6.1 and later), else
    /// the older `POST /api/admin/events/search`.
    fn events(
        &self,
        since: Option<NaiveDate>,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<(Vec<Event>, usize), SourceError> {
        let mut events: BTreeMap<i64, EventIn> = BTreeMap::new();
        let from = since.map(|day| format!("&from=IS:{day}")).unwrap_or_default();
        let mut offset = 0;
        loop {
            let path = format!("/api/admin/search/events?limit={EVENT_PAGE}&offset={offset}{from}");
            let page: EventsIn = match self.try_get(&path)? {
                Answer::Found(page) => page,
                Answer::Missing => return self.events_before_6(since, report),
            };
            let count = page.events.len();
            events.extend(page.events.into_iter().map(|event| (event.id, event)));
            report(Kind::Event, events.len());
            offset += count;
            if count == 0 || offset >= page.total.unwrap_or(offset) {
                break;
            }
        }
        Ok(into_events(events))
    }

    fn events_before_6(
        &self,
        since: Option<NaiveDate>,
        report: &mut dyn FnMut(Kind, usize),
    ) -> Result<(Vec<Event>, usize), SourceError> {
        let path = "/api/admin/events/search";
        let mut events: BTreeMap<i64, EventIn> = BTreeMap::new();
        let mut offset = 0;
        loop {
            let page: EventsIn =
                match self.post(path, &serde_json::json!({ "limit": 100, "offset": offset }))? {
                    Answer::Found(page) => page,
                    Answer::Missing => return Err(self.missing("/api/admin/search/events")),
                };
            let count = page.events.len();
            let mut older = false;
            for event in page.events {
                let at = time(Some(&event.created_at)).map(|at| at.date());
                if since.is_some_and(|since| at.is_some_and(|at| at < since)) {
                    older = true;
                    continue;
                }
                events.insert(event.id, event);
            }
            report(Kind::Event, events.len());
            offset += count;
            if count == 0 || older || offset >= page.total_events.unwrap_or(offset) {
                break;
            }
        }
        Ok(into_events(events))
    }
}

/// The events read, oldest first, and how many had no time that reads.
fn into_events(events: BTreeMap<i64, EventIn>) -> (Vec<Event>, usize) {
    let read = events.len();
    let mut events: Vec<(i64, Event)> = events
        .into_iter()
        .filter_map(|(id, event)| {
            Some((
                id,
                Event {
                    created_at: time(Some(&event.created_at))?,
                    event_type: event.event_type,
                    created_by: event.created_by.unwrap_or_default(),
                    created_by_user_id: event.created_by_user_id.and_then(|id| i32::try_from(id).ok()),
                    project: event.project,
                    environment: event.environment,
                    feature_name: event.feature_name,
                    data: json_text(event.data),
                    pre_data: json_text(event.pre_data),
                    tags: json_text(event.tags),
                },
            ))
        })
        .collect();
    events.sort_by_key(|(id, event)| (event.created_at, *id));
    let unreadable = read - events.len();
    (events.into_iter().map(|(_, event)| event).collect(), unreadable)
}

fn json_text(value: Option<serde_json::Value>) -> Option<String> {
    value
        .filter(|value| !value.is_null())
        .map(|value| value.to_string())
}

/// Makes the installation whole where the source's lists leave out what its flags use:
/// - a project its flags or segments belong to that the project list does not show (Unleash's
///   open-source server lists only `default`, whatever its database holds) is carried under its id;
/// - a strategy whose type the list of types lacks gets a custom type of that name, without
///   declared parameters;
/// - a flag's state in, or a project's use of, an environment the list of environments does not
///   show is left out.
///
/// Each is named in the report.
fn complete(installation: &mut Installation, notes: &mut Vec<NotCarried>) {
    let environments: BTreeSet<String> = installation
        .environments
        .iter()
        .map(|environment| environment.name.clone())
        .collect();
    for project in &mut installation.projects {
        project.environments.retain(|name| environments.contains(name));
    }
    for flag in &mut installation.flags {
        let before = flag.environments.len();
        flag.environments
            .retain(|state| environments.contains(&state.environment));
        if flag.environments.len() < before {
            notes.push(NotCarried {
                kind: Kind::Flag,
                what: format!("flag {}", flag.name),
                why: "has a state in an environment the source's API does not list; that state is left out"
                    .to_owned(),
            });
        }
    }

    let listed: BTreeSet<String> = installation
        .projects
        .iter()
        .map(|project| project.id.clone())
        .collect();
    let mut unlisted: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for flag in &installation.flags {
        if !listed.contains(&flag.project) {
            unlisted
                .entry(flag.project.clone())
                .or_default()
                .extend(flag.environments.iter().map(|state| state.environment.clone()));
        }
    }
    for segment in &installation.segments {
        if let Some(project) = segment
            .project
            .as_ref()
            .filter(|project| !listed.contains(*project))
        {
            unlisted.entry(project.clone()).or_default();
        }
    }
    for (id, used) in unlisted {
        notes.push(NotCarried {
            kind: Kind::Project,
            what: format!("project {id}"),
            why: "the source's API does not list it (Unleash's open-source server lists only `default`), \
                  but flags or segments belong to it; carried with its id as its name"
                .to_owned(),
        });
        installation.projects.push(Project {
            name: id.clone(),
            id,
            description: None,
            created_at: None,
            environments: used.into_iter().collect(),
        });
    }

    let known: BTreeSet<String> = installation
        .strategy_types
        .iter()
        .map(|kind| kind.name.clone())
        .collect();
    let used: BTreeSet<String> = installation
        .flags
        .iter()
        .flat_map(|flag| &flag.environments)
        .flat_map(|state| &state.strategies)
        .map(|strategy| strategy.name.clone())
        .filter(|name| !known.contains(name))
        .collect();
    for name in used {
        notes.push(NotCarried {
            kind: Kind::StrategyType,
            what: format!("strategy type {name}"),
            why: "strategies use it but the source does not list it; carried as a custom type without declared parameters"
                .to_owned(),
        });
        installation.strategy_types.push(StrategyType {
            name,
            title: None,
            description: None,
            parameters: Vec::new(),
            built_in: false,
            deprecated: false,
        });
    }
}

/// A flag's strategies in one environment, in their order, each naming its segments.
fn strategies(
    path: &str,
    flag: &str,
    environment: &str,
    listed: Vec<StrategyIn>,
    segment_names: &HashMap<i64, String>,
) -> Result<Vec<Strategy>, SourceError> {
    let mut ordered: Vec<(usize, StrategyIn)> = listed
        .into_iter()
        .filter(|strategy| strategy.milestone_id.is_none())
        .enumerate()
        .collect();
    ordered.sort_by_key(|(place, strategy)| (strategy.sort_order.unwrap_or(i32::MAX), *place));
    ordered
        .into_iter()
        .map(|(place, strategy)| {
            let mut segments = Vec::new();
            for id in &strategy.segments {
                let name = segment_names.get(id).ok_or_else(|| SourceError::Garbage {
                    path: path.split('?').next().unwrap_or(path).to_owned(),
                    error: format!("a strategy uses segment {id}, which the segment list lacks"),
                })?;
                segments.push(name.clone());
            }
            segments.sort();
            Ok(Strategy {
                id: strategy
                    .id
                    .unwrap_or_else(|| made_up_id(flag, environment, place)),
                name: strategy.name,
                title: strategy.title.filter(|title| !title.is_empty()),
                disabled: strategy.disabled.unwrap_or(false),
                parameters: strategy
                    .parameters
                    .into_iter()
                    .map(|(name, value)| (name, flag_eval::parameter_text(value)))
                    .collect(),
                constraints: strategy.constraints,
                variants: strategy.variants,
                segments,
            })
        })
        .collect()
}

/// An id for a strategy the source gives none, the same on every read: a UUID's shape over the
/// flag, environment and place.
fn made_up_id(flag: &str, environment: &str, place: usize) -> String {
    let digest = crate::runtime::secrets::verifier(&format!("{flag}\n{environment}\n{place}"));
    format!(
        "{}-{}-{}-{}-{}",
        &digest[0..8],
        &digest[8..12],
        &digest[12..16],
        &digest[16..20],
        &digest[20..32]
    )
}

/// A path segment, percent-encoded.
fn encode(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// A time as Unleash writes it (RFC 3339), in UTC.
fn time(text: Option<&str>) -> Option<NaiveDateTime> {
    DateTime::parse_from_rfc3339(text?).ok().map(|at| at.naive_utc())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UiConfig {
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    version_info: Option<VersionInfo>,
}

#[derive(Deserialize)]
struct VersionInfo {
    current: CurrentVersion,
}

#[derive(Deserialize)]
struct CurrentVersion {
    #[serde(default)]
    oss: Option<String>,
    #[serde(default)]
    enterprise: Option<String>,
}

impl UiConfig {
    fn version(&self) -> String {
        let current = self.version_info.as_ref().map(|info| &info.current);
        let enterprise = current
            .and_then(|current| current.enterprise.clone())
            .filter(|text| !text.is_empty());
        let oss = current
            .and_then(|current| current.oss.clone())
            .or_else(|| self.version.clone());
        match (oss, enterprise) {
            (_, Some(enterprise)) => format!("{enterprise} (enterprise)"),
            (Some(oss), None) => oss,
            (None, None) => "unknown".to_owned(),
        }
    }
}

#[derive(Deserialize)]
struct EnvironmentsIn {
    environments: Vec<EnvironmentIn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EnvironmentIn {
    name: String,
    #[serde(rename = "type")]
    environment_type: String,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default)]
    sort_order: i32,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct ProjectsIn {
    projects: Vec<ProjectIn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProjectIn {
    id: String,
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Deserialize)]
struct ProjectEnvironmentsIn {
    environments: Vec<ProjectEnvironmentIn>,
}

#[derive(Deserialize)]
struct ProjectEnvironmentIn {
    name: String,
    #[serde(default)]
    visible: Option<bool>,
}

#[derive(Deserialize)]
struct OverviewIn {
    #[serde(default)]
    environments: Vec<OverviewEnvironment>,
}

/// Unleash 5.0 lists a project's environments by name, later ones as objects.
#[derive(Deserialize)]
#[serde(untagged)]
enum OverviewEnvironment {
    Name(String),
    Object { environment: String },
}

#[derive(Deserialize)]
struct StrategiesIn {
    strategies: Vec<StrategyTypeIn>,
}

#[derive(Deserialize)]
struct StrategyTypeIn {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    editable: bool,
    #[serde(default)]
    deprecated: bool,
    #[serde(default)]
    parameters: Vec<StrategyParameter>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContextFieldIn {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    stickiness: bool,
    #[serde(default)]
    sort_order: i32,
    #[serde(default, deserialize_with = "null_as_empty")]
    legal_values: Vec<LegalValue>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    project: Option<String>,
}

fn null_as_empty<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[derive(Deserialize)]
struct SegmentsIn {
    segments: Vec<SegmentIn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SegmentIn {
    id: i32,
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    constraints: Vec<Constraint>,
    #[serde(default)]
    created_by: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TagTypesIn {
    tag_types: Vec<TagTypeIn>,
}

#[derive(Deserialize)]
struct TagTypeIn {
    name: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    icon: Option<String>,
    #[serde(default)]
    color: Option<String>,
}

#[derive(Deserialize)]
struct TagsIn {
    tags: Vec<TagIn>,
}

#[derive(Deserialize)]
struct TagIn {
    #[serde(rename = "type")]
    tag_type: String,
    value: String,
}

#[derive(Deserialize)]
struct AddonsIn {
    addons: Vec<AddonIn>,
}

#[derive(Deserialize)]
struct AddonIn {
    id: i32,
    provider: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    enabled: bool,
    #[serde(default)]
    parameters: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    events: Vec<String>,
    #[serde(default)]
    projects: Vec<String>,
    #[serde(default)]
    environments: Vec<String>,
}

#[derive(Deserialize)]
struct TokensIn {
    tokens: Vec<TokenIn>,
}

/// A token as listed; its secret is turned into a verifier at once and dropped.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TokenIn {
    #[serde(default)]
    secret: Option<String>,
    #[serde(default)]
    token_name: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(rename = "type")]
    token_type: String,
    #[serde(default = "every")]
    environment: String,
    #[serde(default = "every_project")]
    projects: Vec<String>,
    #[serde(default)]
    expires_at: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    secure: bool,
}

fn every() -> String {
    "*".to_owned()
}

fn every_project() -> Vec<String> {
    vec!["*".to_owned()]
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsersIn {
    users: Vec<UserIn>,
    #[serde(default)]
    root_roles: Vec<RoleIn>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserIn {
    id: i64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    email: Option<String>,
    #[serde(default)]
    root_role: Option<i64>,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    seen_at: Option<String>,
}

#[derive(Deserialize)]
struct RoleIn {
    id: i64,
    name: String,
}

#[derive(Deserialize)]
struct SearchIn {
    features: Vec<ListedFlag>,
    #[serde(default)]
    total: Option<usize>,
}

#[derive(Deserialize)]
struct FeaturesIn {
    features: Vec<ListedFlag>,
}

/// A flag as a search or list shows it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ListedFlag {
    name: String,
    #[serde(default)]
    project: String,
    #[serde(rename = "type", default = "release")]
    flag_type: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    stale: bool,
    #[serde(default)]
    impression_data: bool,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    archived_at: Option<String>,
    #[serde(default)]
    created_by: Option<PersonIn>,
    #[serde(default)]
    archived: bool,
    #[serde(default, deserialize_with = "null_as_empty")]
    tags: Vec<TagIn>,
}

impl ListedFlag {
    /// When it was archived; none while it is live. A list that says only that it is archived
    /// (Unleash 5's archive) gives the time it is read.
    fn archived_at(&self) -> Option<NaiveDateTime> {
        self.archived_at
            .as_deref()
            .and_then(|at| time(Some(at)))
            .or_else(|| self.archived.then(crate::now))
    }
}

/// A flag's state in each environment, and its parent.
type FlagState = (Vec<FlagEnvironment>, Option<Dependency>);

fn release() -> String {
    "release".to_owned()
}

/// A live flag, as `GET /api/admin/projects/{project}/features/{flag}` shows it.
#[derive(Deserialize)]
struct FeatureIn {
    #[serde(default)]
    environments: Vec<FeatureStateIn>,
    #[serde(default)]
    dependencies: Vec<ParentIn>,
}

#[derive(Deserialize)]
struct FeatureStateIn {
    name: String,
    #[serde(default)]
    enabled: bool,
    #[serde(default, deserialize_with = "null_as_empty")]
    variants: Vec<Variant>,
    #[serde(default, deserialize_with = "null_as_empty")]
    strategies: Vec<StrategyIn>,
}

#[derive(Deserialize)]
struct ParentIn {
    feature: String,
    #[serde(default = "yes")]
    enabled: bool,
    #[serde(default, deserialize_with = "null_as_empty")]
    variants: Vec<String>,
}

/// A flag's switch in one environment.
#[derive(Deserialize)]
struct FeatureEnvironmentIn {
    #[serde(default)]
    enabled: bool,
}

#[derive(Deserialize, Default)]
struct VariantsIn {
    #[serde(default, deserialize_with = "null_as_empty")]
    variants: Vec<Variant>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StrategyIn {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    disabled: Option<bool>,
    #[serde(default)]
    parameters: BTreeMap<String, serde_json::Value>,
    #[serde(default, deserialize_with = "null_as_empty")]
    constraints: Vec<Constraint>,
    #[serde(default, deserialize_with = "null_as_empty")]
    variants: Vec<Variant>,
    #[serde(default, deserialize_with = "null_as_empty")]
    segments: Vec<i64>,
    #[serde(default)]
    sort_order: Option<i32>,
    /// Set on the strategies of an enterprise release plan's milestones, which the flag's own
    /// read leaves out and its environment's strategy list shows.
    #[serde(default)]
    milestone_id: Option<String>,
}

#[derive(Deserialize)]
struct PersonIn {
    #[serde(default)]
    id: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventsIn {
    events: Vec<EventIn>,
    #[serde(default)]
    total: Option<usize>,
    #[serde(default)]
    total_events: Option<usize>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventIn {
    id: i64,
    created_at: String,
    #[serde(rename = "type")]
    event_type: String,
    #[serde(default)]
    created_by: Option<String>,
    #[serde(default)]
    created_by_user_id: Option<i64>,
    #[serde(default)]
    project: Option<String>,
    #[serde(default)]
    environment: Option<String>,
    #[serde(default)]
    feature_name: Option<String>,
    #[serde(default)]
    data: Option<serde_json::Value>,
    #[serde(default)]
    pre_data: Option<serde_json::Value>,
    #[serde(default)]
    tags: Option<serde_json::Value>,
}
