//! Flag changes as events, for SDKs that follow them instead of polling the whole document:
//! Unleash's delta API (`/api/client/delta`) and its event stream (`/api/client/streaming`).
//!
//! A [`Feed`] follows one question: an environment, the projects a token may see, and a name
//! prefix. It holds the question's document as of the revision it last loaded, each flag and
//! segment serialised once, and derives a [`Change`] from every load that differs: the events
//! (`feature-updated`, `feature-removed`, `segment-updated`, `segment-removed`) that take an SDK
//! from the state it had to the new one. A change is made once per revision and question, kept
//! for SDKs that resume from an older revision, and sent to every stream that follows the
//! question; nothing is rebuilt per connection.
//!
//! Event ids are revisions: the store's newest audit event id when the feed loaded the state the
//! events lead to. An SDK resumes from a revision only when the feed loaded exactly that
//! revision, because only then does it know what the SDK holds; from any other revision the SDK
//! gets a `hydration`, the whole state, which is always right.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use flag_eval::ClientFeatures;
use flag_store::queries::{self, evaluation::ProjectScope};
use tokio::sync::broadcast;

use crate::delivery::Delivery;
use crate::delivery::client::types::{ClientFeatureResponse, ClientFeaturesQuery, ClientQuery};
use crate::identity::Identity;
use crate::identity::auth::{ClientAccess, DEFAULT_ENVIRONMENT};
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Most questions followed at once.
pub const CAPACITY: usize = 64;

/// Most loaded revisions a feed remembers, changed or not, for SDKs resuming from one.
const POINTS: usize = 1024;

/// Most bytes of events a feed keeps for SDKs resuming; the newest change is kept whatever its
/// size.
const HISTORY_BYTES: usize = 4 << 20;

/// Changes a stream may fall behind before it catches up from the history; the channel keeps
/// this many changes alive besides the history.
const CHANNEL: usize = 16;

/// Most different questions one token may stream at once, so no token can take every one of the
/// [`CAPACITY`] feeds.
const QUESTIONS_PER_TOKEN: usize = 8;

/// The question a delta answer or a stream follows: the token's environment, else the query's,
/// else [`DEFAULT_ENVIRONMENT`]; the token's projects, else the query's; the name prefix.
/// Segments always travel apart from the flags that name them, and tags do not filter, as in
/// Unleash's delta API.
pub fn question(access: &ClientAccess, query: ClientQuery) -> ClientFeaturesQuery {
    let mut project = access.projects.clone().or(query.project);
    if let Some(projects) = &mut project {
        projects.sort();
        projects.dedup();
    }
    ClientFeaturesQuery {
        environment: access
            .environment
            .clone()
            .or(query.environment)
            .unwrap_or_else(|| DEFAULT_ENVIRONMENT.into()),
        project,
        name_prefix: query.name_prefix.filter(|prefix| !prefix.is_empty()),
        tag: None,
        inline_segment_constraints: false,
    }
}

/// The events that take an SDK from one loaded revision of a question to the next.
#[derive(Debug)]
pub struct Change {
    revision: i32,
    /// `{"events":[...]}`.
    body: Arc<str>,
}

impl Change {
    /// The revision the events lead to: their `eventId`.
    pub fn revision(&self) -> i32 {
        self.revision
    }

    /// The events as a delta document, `{"events":[...]}`.
    pub fn body(&self) -> &Arc<str> {
        &self.body
    }

    /// The events alone, comma-separated, without the document around them.
    fn events(&self) -> &str {
        self.body
            .strip_prefix(EVENTS_OPEN)
            .and_then(|rest| rest.strip_suffix(EVENTS_CLOSE))
            .unwrap_or_default()
    }
}

const EVENTS_OPEN: &str = "{\"events\":[";
const EVENTS_CLOSE: &str = "]}";

/// A question's document as of one revision, each flag and segment serialised as SDKs read it.
#[derive(Debug)]
pub struct Snapshot {
    revision: i32,
    /// Flags in the document's order.
    features: Vec<Entry>,
    /// Segments by id, each `{id, name, constraints}`.
    segments: Vec<(i64, Box<str>)>,
    /// The hydration, made for the first SDK that needs it.
    hydration: OnceLock<Arc<str>>,
}

#[derive(Debug)]
struct Entry {
    name: Box<str>,
    project: Box<str>,
    /// The segments its strategies name.
    segments: Box<[i64]>,
    json: Box<str>,
}

impl Snapshot {
    /// The revision this state was loaded at.
    pub fn revision(&self) -> i32 {
        self.revision
    }

    /// The whole state as a delta document with one `hydration` event.
    pub fn hydration(&self) -> Arc<str> {
        Arc::clone(self.hydration.get_or_init(|| {
            let size = self
                .features
                .iter()
                .map(|entry| entry.json.len() + 1)
                .sum::<usize>()
                + self
                    .segments
                    .iter()
                    .map(|(_, json)| json.len() + 1)
                    .sum::<usize>()
                + 96;
            let mut body = String::with_capacity(size);
            let _ = write!(
                body,
                "{EVENTS_OPEN}{{\"eventId\":{},\"type\":\"hydration\",\"features\":[",
                self.revision
            );
            join(&mut body, self.features.iter().map(|entry| &*entry.json));
            body.push_str("],\"segments\":[");
            join(&mut body, self.segments.iter().map(|(_, json)| &**json));
            body.push_str("]}");
            body.push_str(EVENTS_CLOSE);
            body.into()
        }))
    }

    /// Serialises `document`, loaded at `revision`, as SDKs following `question` read it.
    fn new(
        document: ClientFeatures,
        question: &ClientFeaturesQuery,
        revision: i32,
    ) -> Result<Self, AdminError> {
        let ClientFeatures {
            features, segments, ..
        } = document;
        let prefix = question.name_prefix.as_deref().unwrap_or_default();
        let features = features
            .into_iter()
            .filter(|feature| feature.name.starts_with(prefix))
            .map(|feature| {
                let name = feature.name.as_str().into();
                let project = feature.project.as_deref().unwrap_or("default").into();
                let mut named: Vec<i64> = feature
                    .strategies
                    .iter()
                    .flat_map(|strategy| strategy.segments.iter().copied())
                    .collect();
                named.sort_unstable();
                named.dedup();
                let json = to_json(&ClientFeatureResponse::new(feature, &segments, true))?;
                Ok(Entry {
                    name,
                    project,
                    segments: named.into(),
                    json,
                })
            })
            .collect::<Result<_, AdminError>>()?;
        let mut segments = segments
            .iter()
            .map(|segment| Ok((segment.id, to_json(segment)?)))
            .collect::<Result<Vec<_>, AdminError>>()?;
        segments.sort_unstable_by_key(|(id, _)| *id);
        Ok(Self {
            revision,
            features,
            segments,
            hydration: OnceLock::new(),
        })
    }

    /// The events from `self` to `next`, or `None` when SDKs see no difference. As in Unleash, a
    /// segment's update is sent only to questions whose flags name it, and again before every
    /// updated flag that names it (so an SDK holds every segment its flags name as it is now);
    /// removed segments are always sent. Updated segments come first and removed ones last, so a
    /// flag never names a segment its SDK lacks.
    fn change_to(&self, next: &Self) -> Option<Change> {
        let revision = next.revision;
        let old_segments: HashMap<i64, &str> =
            self.segments.iter().map(|(id, json)| (*id, &**json)).collect();
        let new_segments: HashMap<i64, &str> =
            next.segments.iter().map(|(id, json)| (*id, &**json)).collect();
        let old: HashMap<&str, &Entry> = self.features.iter().map(|entry| (&*entry.name, entry)).collect();
        let new: HashMap<&str, &Entry> = next.features.iter().map(|entry| (&*entry.name, entry)).collect();
        let updated: Vec<&Entry> = next
            .features
            .iter()
            .filter(|entry| {
                old.get(&*entry.name)
                    .is_none_or(|before| before.json != entry.json)
            })
            .collect();
        let named: std::collections::HashSet<i64> = next
            .features
            .iter()
            .flat_map(|entry| entry.segments.iter().copied())
            .collect();
        let named_by_updated: std::collections::HashSet<i64> = updated
            .iter()
            .flat_map(|entry| entry.segments.iter().copied())
            .collect();
        let mut events = Vec::new();
        for (id, json) in &next.segments {
            let changed = old_segments.get(id) != Some(&&**json);
            if (changed && named.contains(id)) || named_by_updated.contains(id) {
                events.push(format!(
                    "{{\"eventId\":{revision},\"type\":\"segment-updated\",\"segment\":{json}}}"
                ));
            }
        }
        for entry in &updated {
            events.push(format!(
                "{{\"eventId\":{revision},\"type\":\"feature-updated\",\"feature\":{}}}",
                entry.json
            ));
        }
        for entry in &self.features {
            if !new.contains_key(&*entry.name) {
                events.push(format!(
                    "{{\"eventId\":{revision},\"type\":\"feature-removed\",\"featureName\":{},\"project\":{}}}",
                    quoted(&entry.name),
                    quoted(&entry.project)
                ));
            }
        }
        for (id, _) in &self.segments {
            if !new_segments.contains_key(id) {
                events.push(format!(
                    "{{\"eventId\":{revision},\"type\":\"segment-removed\",\"segmentId\":{id}}}"
                ));
            }
        }
        if events.is_empty() {
            return None;
        }
        let mut body = String::with_capacity(events.iter().map(|event| event.len() + 1).sum::<usize>() + 16);
        body.push_str(EVENTS_OPEN);
        join(&mut body, events.iter().map(String::as_str));
        body.push_str(EVENTS_CLOSE);
        Some(Change {
            revision,
            body: body.into(),
        })
    }
}

/// The events of `changes`, in order, as one delta document.
pub fn joined(changes: &[Arc<Change>]) -> String {
    let mut body = String::with_capacity(changes.iter().map(|change| change.body.len()).sum::<usize>() + 16);
    body.push_str(EVENTS_OPEN);
    join(
        &mut body,
        changes
            .iter()
            .map(|change| change.events())
            .filter(|events| !events.is_empty()),
    );
    body.push_str(EVENTS_CLOSE);
    body
}

fn join<'a>(out: &mut String, parts: impl Iterator<Item = &'a str>) {
    for (index, part) in parts.enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(part);
    }
}

fn to_json(value: &impl serde::Serialize) -> Result<Box<str>, AdminError> {
    serde_json::to_string(value)
        .map(String::into_boxed_str)
        .map_err(|error| AdminError::Internal(format!("cannot serialise a delta event: {error}")))
}

fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// What a delta request gets.
#[derive(Debug)]
pub enum DeltaAnswer {
    /// Nothing changed since the revision the SDK holds.
    NotModified {
        /// The revision it holds.
        revision: i32,
    },
    /// The changes since the revision the SDK holds.
    Events {
        /// The revision the events lead to: the answer's `ETag`.
        revision: i32,
        /// `{"events":[...]}`.
        body: String,
    },
    /// The whole state: the SDK holds nothing, or a revision this replica cannot resume from.
    Hydration(Arc<Snapshot>),
}

/// What a new stream sends first.
#[derive(Debug)]
pub enum Opening {
    /// The whole state.
    Hydration(Arc<Snapshot>),
    /// The changes since the `Last-Event-ID` the SDK sent (none when it is up to date), leading
    /// to `revision`.
    Resumed {
        /// The revision the SDK holds after them.
        revision: i32,
        /// The changes, oldest first.
        changes: Vec<Arc<Change>>,
    },
}

impl Opening {
    /// The revision the stream's SDK holds once this is sent.
    pub fn revision(&self) -> i32 {
        match self {
            Self::Hydration(snapshot) => snapshot.revision,
            Self::Resumed { revision, .. } => *revision,
        }
    }
}

/// A stream's hold on a feed: what it sends first, then every change after that.
#[derive(Debug)]
pub struct Subscription {
    /// What the stream sends first.
    pub opening: Opening,
    /// Every change after the opening's revision.
    pub changes: broadcast::Receiver<Arc<Change>>,
}

/// An open stream, counted against the server's limits until it is dropped.
#[derive(Debug)]
pub struct Stream {
    /// The feed it follows, for catching up after falling behind.
    pub feed: Arc<Feed>,
    /// What it sends first, and the changes after.
    pub subscription: Subscription,
    /// Its place within the limits, given back when it is dropped.
    pub permit: Permit,
    /// The token it was opened with.
    access: ClientAccess,
}

impl Stream {
    /// Whether the token the stream was opened with still admits it: a stream ends once its
    /// token is deleted or expires, as its next request would be refused.
    pub async fn still_admitted(&self, ctx: &Runtime, identity: &Identity) -> Result<bool, AdminError> {
        crate::identity::auth::still_valid(ctx, identity, &self.access).await
    }
}

/// Opens a stream of `question`'s changes for the token `access` holds, resuming from `last`
/// (its `Last-Event-ID`) where the feed can. Refused past the server's limit on streams (as
/// being at capacity), or one token's limit on streams or on different questions (as too many
/// requests), before any work.
pub async fn follow(
    ctx: &Runtime,
    delivery: &Delivery,
    access: &ClientAccess,
    question: ClientFeaturesQuery,
    last: Option<i32>,
) -> Result<Stream, AdminError> {
    let permit = delivery.feeds.limits.admit(&access.token, &question)?;
    // Subscribed before the feed is loaded, so no other question can take its place meanwhile;
    // changes published before the opening's revision are skipped by the stream.
    let (feed, changes) = delivery.feeds.followed_feed(question)?;
    feed.advance(ctx, ctx.revision().await?).await?;
    let opening = feed.opening(last)?;
    Ok(Stream {
        feed,
        subscription: Subscription { opening, changes },
        permit,
        access: access.clone(),
    })
}

/// The limits on open streams, in total and per token.
#[derive(Debug)]
struct Limits {
    total: usize,
    per_token: usize,
    open: Mutex<OpenStreams>,
}

#[derive(Debug, Default)]
struct OpenStreams {
    total: usize,
    by_token: HashMap<Arc<str>, TokenStreams>,
}

/// One token's open streams, in all and by question.
#[derive(Debug, Default)]
struct TokenStreams {
    total: usize,
    questions: HashMap<ClientFeaturesQuery, usize>,
}

/// Seconds an SDK refused a stream waits before trying again.
const RETRY_AFTER: u64 = 30;

impl Limits {
    fn lock(&self) -> MutexGuard<'_, OpenStreams> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn admit(
        self: &Arc<Self>,
        token: &Arc<str>,
        question: &ClientFeaturesQuery,
    ) -> Result<Permit, AdminError> {
        let mut open = self.lock();
        if open.total >= self.total {
            return Err(AdminError::AtCapacity {
                message: format!(
                    "this server holds {} streams, the most it may; poll /api/client/features, or try again later",
                    self.total
                ),
                retry_after: RETRY_AFTER,
            });
        }
        let held = open.by_token.entry(Arc::clone(token)).or_default();
        if held.total >= self.per_token {
            let total = held.total;
            return Err(AdminError::Throttled {
                message: format!(
                    "this token holds {total} streams, the most one token may; poll /api/client/features, or try again later"
                ),
                retry_after: RETRY_AFTER,
            });
        }
        if held.questions.len() >= QUESTIONS_PER_TOKEN && !held.questions.contains_key(question) {
            return Err(AdminError::Throttled {
                message: format!(
                    "this token streams {QUESTIONS_PER_TOKEN} different environments, project lists and name prefixes, \
                     the most one token may; poll /api/client/features, or try again later"
                ),
                retry_after: RETRY_AFTER,
            });
        }
        held.total += 1;
        *held.questions.entry(question.clone()).or_default() += 1;
        open.total += 1;
        Ok(Permit {
            limits: Arc::clone(self),
            token: Arc::clone(token),
            question: question.clone(),
        })
    }
}

/// One stream's place within the limits, given back when dropped.
#[derive(Debug)]
pub struct Permit {
    limits: Arc<Limits>,
    token: Arc<str>,
    question: ClientFeaturesQuery,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut open = self.limits.lock();
        open.total = open.total.saturating_sub(1);
        if let Some(held) = open.by_token.get_mut(&self.token) {
            held.total = held.total.saturating_sub(1);
            if let Some(count) = held.questions.get_mut(&self.question) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    held.questions.remove(&self.question);
                }
            }
            if held.total == 0 {
                open.by_token.remove(&self.token);
            }
        }
    }
}

/// One question's state and changes.
#[derive(Debug)]
pub struct Feed {
    question: ClientFeaturesQuery,
    /// Held while loading, so one load serves everyone waiting for a revision.
    loading: tokio::sync::Mutex<()>,
    state: Mutex<FeedState>,
    sender: broadcast::Sender<Arc<Change>>,
    used: AtomicU64,
}

#[derive(Debug, Default)]
struct FeedState {
    snapshot: Option<Arc<Snapshot>>,
    /// Revisions loaded, oldest first, each with the change it brought (none for the first, or
    /// when nothing an SDK sees changed).
    points: VecDeque<(i32, Option<Arc<Change>>)>,
    /// Bytes of the changes in `points`.
    bytes: usize,
}

impl FeedState {
    /// The changes after `revision`, oldest first, when it is a revision this feed loaded and
    /// still remembers.
    fn after(&self, revision: i32) -> Option<Vec<Arc<Change>>> {
        let start = self.points.iter().position(|(loaded, _)| *loaded == revision)?;
        Some(
            self.points
                .iter()
                .skip(start + 1)
                .filter_map(|(_, change)| change.clone())
                .collect(),
        )
    }
}

impl Feed {
    fn new(question: ClientFeaturesQuery) -> Self {
        Self {
            question,
            loading: tokio::sync::Mutex::new(()),
            state: Mutex::new(FeedState::default()),
            sender: broadcast::Sender::new(CHANNEL),
            used: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The question followed.
    pub fn question(&self) -> &ClientFeaturesQuery {
        &self.question
    }

    /// The state as last loaded, if it ever was.
    pub fn snapshot(&self) -> Option<Arc<Snapshot>> {
        self.lock().snapshot.clone()
    }

    /// How many streams follow this feed.
    pub fn followers(&self) -> usize {
        self.sender.receiver_count()
    }

    /// The state as of `revision` or later: the one held, or one loaded now, whose change, if
    /// any, goes to every stream following the question.
    pub async fn advance(&self, ctx: &Runtime, revision: i32) -> Result<Arc<Snapshot>, AdminError> {
        if let Some(snapshot) = self.snapshot().filter(|snapshot| snapshot.revision >= revision) {
            return Ok(snapshot);
        }
        let _loading = self.loading.lock().await;
        let held = self.snapshot();
        if let Some(snapshot) = held.as_ref().filter(|snapshot| snapshot.revision >= revision) {
            return Ok(Arc::clone(snapshot));
        }
        let scope = self
            .question
            .project
            .clone()
            .map_or(ProjectScope::All, ProjectScope::Only);
        let environment = self.question.environment.clone();
        let (document, loaded) = db::run(&ctx.store, move |conn| {
            queries::snapshot(conn, |conn| {
                let revision = queries::events::latest_id(conn)?;
                Ok((
                    queries::evaluation::client_features(conn, &scope, &environment)?,
                    revision,
                ))
            })
        })
        .await?;
        let question = self.question.clone();
        let (snapshot, change) = ctx
            .cpu
            .run(move || {
                let snapshot = Snapshot::new(document, &question, loaded)?;
                let change = held.and_then(|held| held.change_to(&snapshot));
                Ok::<_, AdminError>((Arc::new(snapshot), change.map(Arc::new)))
            })
            .await??;
        self.publish(Arc::clone(&snapshot), change);
        crate::runtime::memory::release_free_pages();
        Ok(snapshot)
    }

    /// Makes `snapshot` the state, remembers its revision and change, and sends the change to
    /// every stream, all under the lock a new stream subscribes under, so a stream gets every
    /// change after its opening exactly once.
    fn publish(&self, snapshot: Arc<Snapshot>, change: Option<Arc<Change>>) {
        let mut state = self.lock();
        if state
            .snapshot
            .as_ref()
            .is_some_and(|held| held.revision >= snapshot.revision)
        {
            return;
        }
        state.bytes += change.as_ref().map_or(0, |change| change.body.len());
        state.points.push_back((snapshot.revision, change.clone()));
        state.snapshot = Some(snapshot);
        // The newest change is kept whatever its size, so an SDK one change behind resumes.
        let newest = change.as_ref().map_or(0, |change| change.body.len());
        while state.points.len() > POINTS
            || (state.bytes > HISTORY_BYTES.max(newest) && state.points.len() > 1)
        {
            if let Some((_, Some(dropped))) = state.points.pop_front() {
                state.bytes -= dropped.body.len();
            }
        }
        if let Some(change) = change {
            // No receiver is no error: nobody streams this question now.
            let _ = self.sender.send(change);
        }
    }

    /// The changes after `revision`, oldest first, when this feed loaded exactly that revision
    /// and still remembers what came after it.
    pub fn since(&self, revision: i32) -> Option<Vec<Arc<Change>>> {
        self.lock().after(revision)
    }

    /// What a delta request holding `known` (its `If-None-Match`) gets, as of `revision` or
    /// later.
    pub async fn delta(
        &self,
        ctx: &Runtime,
        revision: i32,
        known: Option<i32>,
    ) -> Result<DeltaAnswer, AdminError> {
        let mut snapshot = self.advance(ctx, revision).await?;
        let Some(known) = known else {
            return Ok(DeltaAnswer::Hydration(snapshot));
        };
        if known > snapshot.revision {
            // Another replica answered the SDK at a revision this one has not read yet.
            snapshot = self.advance(ctx, ctx.revision_now().await?).await?;
        }
        Ok(match self.since(known) {
            Some(changes) if changes.is_empty() => DeltaAnswer::NotModified { revision: known },
            Some(changes) => DeltaAnswer::Events {
                revision: changes.last().map_or(known, |change| change.revision),
                body: joined(&changes),
            },
            None => DeltaAnswer::Hydration(snapshot),
        })
    }

    /// What a stream sends first: the changes since `last` (a stream's `Last-Event-ID`) when the
    /// feed loaded that revision and still remembers what came after, else a hydration. Call
    /// [`Feed::advance`] first.
    fn opening(&self, last: Option<i32>) -> Result<Opening, AdminError> {
        let state = self.lock();
        let snapshot = state
            .snapshot
            .clone()
            .ok_or_else(|| AdminError::Internal("a feed was followed before it was loaded".into()))?;
        Ok(match last.and_then(|last| state.after(last)) {
            Some(changes) => Opening::Resumed {
                revision: snapshot.revision,
                changes,
            },
            None => Opening::Hydration(snapshot),
        })
    }
}

/// The feeds of the questions SDKs follow, at most [`CAPACITY`] of them, and the limits on
/// streams.
#[derive(Debug)]
pub struct Feeds {
    feeds: Mutex<HashMap<ClientFeaturesQuery, Arc<Feed>>>,
    clock: AtomicU64,
    limits: Arc<Limits>,
}

impl Feeds {
    /// No feeds yet; at most `streams` streams open at once, `per_token` of them for one token.
    pub fn new(streams: usize, per_token: usize) -> Self {
        Self {
            feeds: Mutex::default(),
            clock: AtomicU64::new(0),
            limits: Arc::new(Limits {
                total: streams,
                per_token,
                open: Mutex::default(),
            }),
        }
    }

    /// How many streams are open.
    pub fn streams(&self) -> usize {
        self.limits.lock().total
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ClientFeaturesQuery, Arc<Feed>>> {
        self.feeds.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The feed of `question` for a delta request: the one kept, or a new one, kept when there
    /// is room. Past the capacity, the feed used least recently that no stream follows makes
    /// room; when every feed is followed, the answer comes from a feed of its own, kept by
    /// nobody, which answers with a hydration: never a refusal.
    pub fn feed(&self, question: ClientFeaturesQuery) -> Arc<Feed> {
        match self.slot(question.clone()) {
            Some(feed) => feed,
            None => Arc::new(Feed::new(question)),
        }
    }

    /// The feed of `question`, followed by a new stream: subscribed under the same lock that
    /// makes room, so the feed cannot be dropped before the stream holds it. When every feed is
    /// followed, the stream is refused as the server being at capacity.
    fn followed_feed(
        &self,
        question: ClientFeaturesQuery,
    ) -> Result<(Arc<Feed>, broadcast::Receiver<Arc<Change>>), AdminError> {
        let mut feeds = self.lock();
        let feed =
            Self::slot_in(&mut feeds, &self.clock, question).ok_or_else(|| AdminError::AtCapacity {
                message: format!(
                    "streams follow {CAPACITY} different questions, the most this server follows; \
                 poll /api/client/features instead"
                ),
                retry_after: 60,
            })?;
        let changes = feed.sender.subscribe();
        Ok((feed, changes))
    }

    fn slot(&self, question: ClientFeaturesQuery) -> Option<Arc<Feed>> {
        Self::slot_in(&mut self.lock(), &self.clock, question)
    }

    /// The kept feed of `question`, or a new one kept in its place, or `None` when every kept
    /// feed is followed.
    fn slot_in(
        feeds: &mut HashMap<ClientFeaturesQuery, Arc<Feed>>,
        clock: &AtomicU64,
        question: ClientFeaturesQuery,
    ) -> Option<Arc<Feed>> {
        let now = clock.fetch_add(1, Ordering::Relaxed);
        if let Some(feed) = feeds.get(&question) {
            feed.used.store(now, Ordering::Relaxed);
            return Some(Arc::clone(feed));
        }
        if feeds.len() >= CAPACITY {
            let idle = feeds
                .iter()
                .filter(|(_, feed)| feed.followers() == 0)
                .min_by_key(|(_, feed)| feed.used.load(Ordering::Relaxed))
                .map(|(question, _)| question.clone())?;
            feeds.remove(&idle);
        }
        let feed = Arc::new(Feed::new(question.clone()));
        feed.used.store(now, Ordering::Relaxed);
        feeds.insert(question, Arc::clone(&feed));
        Some(feed)
    }

    /// Loads `revision` into every feed a stream follows, so each change reaches its streams.
    /// A feed that fails to load is tried again on the next call; the first failure is returned.
    pub async fn advance_followed(&self, ctx: &Runtime, revision: i32) -> Result<(), AdminError> {
        let followed: Vec<Arc<Feed>> = self
            .lock()
            .values()
            .filter(|feed| feed.followers() > 0)
            .cloned()
            .collect();
        let mut first = Ok(());
        for feed in followed {
            if let Err(error) = feed.advance(ctx, revision).await
                && first.is_ok()
            {
                first = Err(error);
            }
        }
        first
    }

    /// Whether any stream follows any feed.
    pub fn any_followed(&self) -> bool {
        self.lock().values().any(|feed| feed.followers() > 0)
    }

    /// How many feeds are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}
