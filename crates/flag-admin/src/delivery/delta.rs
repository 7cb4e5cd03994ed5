//! Flag changes as events, for SDKs that follow them instead of polling the whole document:
//! Unleash's delta API (`/api/client/delta`) and its event stream (`/api/client/streaming`).
//!
//! A [`Feed`] follows one question: an environment, the projects a token may see, and a name
//! prefix, as [`client::question`](crate::delivery::client::question) makes it of an SDK's query
//! with [`Protocol::Delta`](crate::delivery::client::Protocol::Delta). It holds the question's
//! document as of the revision it last loaded, each flag and segment serialised once, and
//! derives a [`Change`] from every load that differs: the events (`feature-updated`,
//! `feature-removed`, `segment-updated`, `segment-removed`) that take an SDK from the state it
//! had to the new one. A change is made once per revision and question, kept for SDKs that
//! resume from an older revision, and sent to every stream that follows the question; nothing is
//! rebuilt per connection.
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
use crate::delivery::client::types::{ClientFeatureResponse, ClientFeaturesQuery};
use crate::identity::Identity;
use crate::identity::auth::{Access, ClientAccess};
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

/// Who may ask for the flags' changes since a revision ([`Feed::delta`]): client and backend
/// tokens.
pub const DELTA: Access = Access::Client;

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

/// Who may follow the flags' changes as a stream: client and backend tokens.
pub const FOLLOW: Access = Access::Client;

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
    /// Revisions loaded, oldest first, each with the change it brought (none for the oldest,
    /// which no SDK is sent, or when nothing an SDK sees changed).
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
            // No SDK resumes from before the oldest revision remembered, so the change that led to
            // it is never sent again: only changes that may still be sent count against the bytes.
            if let Some(unsent) = state.points.front_mut().and_then(|(_, change)| change.take()) {
                state.bytes -= unsent.body.len();
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

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::error::Error;

    use flag_eval::{Constraint, Feature, Segment, Strategy};
    use serde_json::{Value, json};

    use super::*;
    use crate::Settings;
    use crate::catalogue::{archive, features, segments, strategies};
    use crate::delivery::client::types::ClientQuery;
    use crate::delivery::client::{self, ClientSpec, Protocol};
    use crate::identity::auth::{Access, Caller, DEFAULT_ENVIRONMENT, Principal};

    type Outcome = Result<(), Box<dyn Error>>;

    /// What an SDK following the delta API holds once it applies the events it is given, as
    /// Unleash's SDKs apply them: flags by name, segments by id, and the last event's id.
    #[derive(Debug, Default)]
    struct Sdk {
        revision: Option<i32>,
        features: BTreeMap<String, Value>,
        segments: BTreeMap<i64, Value>,
    }

    impl Sdk {
        /// Applies the events of a delta document, in order.
        fn apply(&mut self, body: &str) -> Outcome {
            let document: Value = serde_json::from_str(body)?;
            for event in document["events"]
                .as_array()
                .ok_or("a delta document without events")?
            {
                let revision = i32::try_from(event["eventId"].as_i64().ok_or("an event without an id")?)?;
                assert!(
                    self.revision.is_none_or(|held| held <= revision),
                    "event ids never go back: {revision} after {:?}",
                    self.revision
                );
                match event["type"].as_str().ok_or("an event without a type")? {
                    "hydration" => {
                        self.features = by_name(&event["features"])?;
                        self.segments = by_id(&event["segments"])?;
                    }
                    "feature-updated" => {
                        let feature = &event["feature"];
                        let name = feature["name"].as_str().ok_or("a flag without a name")?;
                        self.features.insert(name.to_owned(), feature.clone());
                    }
                    "feature-removed" => {
                        let name = event["featureName"].as_str().ok_or("a removal without a name")?;
                        let held = self.features.remove(name).ok_or("a removal of a flag not held")?;
                        assert_eq!(
                            event["project"], held["project"],
                            "a removal names the flag's project"
                        );
                    }
                    "segment-updated" => {
                        let segment = &event["segment"];
                        let id = segment["id"].as_i64().ok_or("a segment without an id")?;
                        self.segments.insert(id, segment.clone());
                    }
                    "segment-removed" => {
                        let id = event["segmentId"]
                            .as_i64()
                            .ok_or("a removal without a segment id")?;
                        self.segments.remove(&id);
                    }
                    other => return Err(format!("an unknown event type {other}").into()),
                }
                self.revision = Some(revision);
            }
            Ok(())
        }

        /// An SDK that applied nothing but `hydration`.
        fn hydrated(hydration: &str) -> Result<Self, Box<dyn Error>> {
            let mut sdk = Self::default();
            sdk.apply(hydration)?;
            Ok(sdk)
        }

        /// Checks that this SDK evaluates as one holding `fresh` would: the same flags, each
        /// segment they name as it is now, and no segment that is gone. A segment no flag names
        /// may be older, since its changes are not sent.
        fn assert_holds(&self, fresh: &Self) {
            assert_eq!(self.features, fresh.features, "the flags differ");
            for id in named(&fresh.features) {
                assert_eq!(
                    self.segments.get(&id),
                    fresh.segments.get(&id),
                    "segment {id} differs"
                );
            }
            for id in self.segments.keys() {
                assert!(
                    fresh.segments.contains_key(id),
                    "segment {id} is gone but still held"
                );
            }
        }
    }

    fn by_name(features: &Value) -> Result<BTreeMap<String, Value>, Box<dyn Error>> {
        features
            .as_array()
            .ok_or("flags that are not a list")?
            .iter()
            .map(|feature| {
                let name = feature["name"].as_str().ok_or("a flag without a name")?;
                Ok((name.to_owned(), feature.clone()))
            })
            .collect()
    }

    fn by_id(segments: &Value) -> Result<BTreeMap<i64, Value>, Box<dyn Error>> {
        segments
            .as_array()
            .ok_or("segments that are not a list")?
            .iter()
            .map(|segment| {
                Ok((
                    segment["id"].as_i64().ok_or("a segment without an id")?,
                    segment.clone(),
                ))
            })
            .collect()
    }

    /// The segments the strategies of `features` name.
    fn named(features: &BTreeMap<String, Value>) -> BTreeSet<i64> {
        features
            .values()
            .flat_map(|feature| feature["strategies"].as_array().cloned().unwrap_or_default())
            .flat_map(|strategy| strategy["segments"].as_array().cloned().unwrap_or_default())
            .filter_map(|id| id.as_i64())
            .collect()
    }

    fn flag(name: &str, project: &str, enabled: bool, segments: &[i64]) -> Feature {
        Feature {
            name: name.into(),
            project: Some(project.into()),
            enabled,
            strategies: vec![Strategy {
                name: "default".into(),
                segments: segments.to_vec(),
                ..Strategy::default()
            }],
            ..Feature::default()
        }
    }

    fn segment(id: i64, user_ids: &[&str]) -> Segment {
        Segment {
            id,
            name: format!("segment-{id}"),
            constraints: vec![Constraint {
                context_name: "userId".into(),
                operator: "IN".into(),
                values: user_ids.iter().map(|user| (*user).to_owned()).collect(),
                ..Constraint::default()
            }],
        }
    }

    fn document(features: Vec<Feature>, segments: Vec<Segment>) -> ClientFeatures {
        ClientFeatures {
            version: 2,
            features,
            segments,
        }
    }

    fn asked(name_prefix: Option<&str>) -> ClientFeaturesQuery {
        ClientFeaturesQuery {
            environment: DEFAULT_ENVIRONMENT.into(),
            project: None,
            name_prefix: name_prefix.map(str::to_owned),
            tag: None,
            inline_segment_constraints: false,
        }
    }

    fn events(change: &Change) -> Result<Vec<Value>, Box<dyn Error>> {
        let document: Value = serde_json::from_str(change.body())?;
        Ok(document["events"].as_array().cloned().ok_or("no events")?)
    }

    /// A change with one placeholder event, `size` bytes or more.
    fn change(revision: i32, size: usize) -> Arc<Change> {
        let padding = "x".repeat(size);
        Arc::new(Change {
            revision,
            body: format!("{EVENTS_OPEN}{{\"eventId\":{revision},\"padding\":\"{padding}\"}}{EVENTS_CLOSE}")
                .into(),
        })
    }

    fn snapshot(revision: i32) -> Result<Arc<Snapshot>, AdminError> {
        Ok(Arc::new(Snapshot::new(
            document(vec![flag("a", "default", true, &[])], Vec::new()),
            &asked(None),
            revision,
        )?))
    }

    /// The states a question goes through, each with the revision it was loaded at.
    fn history() -> Vec<(i32, ClientFeatures)> {
        vec![
            (
                3,
                document(
                    vec![
                        flag("web-a", "default", true, &[1]),
                        flag("web-b", "shop", false, &[]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![segment(2, &["2"]), segment(1, &["1"])],
                ),
            ),
            // A flag switched off: it comes again with the segment it names.
            (
                4,
                document(
                    vec![
                        flag("web-a", "default", false, &[1]),
                        flag("web-b", "shop", false, &[]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![segment(1, &["1"]), segment(2, &["2"])],
                ),
            ),
            // A segment that flags name changes, and one no flag names is added.
            (
                6,
                document(
                    vec![
                        flag("web-a", "default", false, &[1]),
                        flag("web-b", "shop", false, &[]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![segment(1, &["1", "11"]), segment(2, &["2"]), segment(7, &["7"])],
                ),
            ),
            // Only the segment no flag names changes.
            (
                7,
                document(
                    vec![
                        flag("web-a", "default", false, &[1]),
                        flag("web-b", "shop", false, &[]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![segment(1, &["1", "11"]), segment(2, &["2"]), segment(7, &["8"])],
                ),
            ),
            // A flag is removed and one added that names a new segment.
            (
                9,
                document(
                    vec![
                        flag("web-a", "default", false, &[1]),
                        flag("web-d", "default", true, &[3]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![
                        segment(1, &["1", "11"]),
                        segment(2, &["2"]),
                        segment(3, &["3"]),
                        segment(7, &["8"]),
                    ],
                ),
            ),
            // A flag stops naming a segment, which is deleted, as is the one no flag names.
            (
                12,
                document(
                    vec![
                        flag("web-a", "default", true, &[]),
                        flag("web-d", "default", true, &[3]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![segment(2, &["2"]), segment(3, &["3"])],
                ),
            ),
            // Nothing changes but the revision.
            (
                13,
                document(
                    vec![
                        flag("web-a", "default", true, &[]),
                        flag("web-d", "default", true, &[3]),
                        flag("api-c", "default", true, &[2]),
                    ],
                    vec![segment(2, &["2"]), segment(3, &["3"])],
                ),
            ),
        ]
    }

    #[test]
    fn a_hydration_holds_the_questions_flags_in_order_and_every_segment() -> Outcome {
        let state = Snapshot::new(
            document(
                vec![
                    flag("web-b", "shop", true, &[9]),
                    flag("api-a", "default", true, &[]),
                    flag("web-a", "default", false, &[]),
                ],
                vec![segment(9, &["9"]), segment(4, &["4"])],
            ),
            &asked(Some("web-")),
            41,
        )?;
        assert_eq!(state.revision(), 41);
        let hydration = state.hydration();
        assert!(
            Arc::ptr_eq(&hydration, &state.hydration()),
            "a hydration is made once"
        );
        let body: Value = serde_json::from_str(&hydration)?;
        assert_eq!(
            body,
            json!({"events": [{
                "eventId": 41,
                "type": "hydration",
                "features": [
                    {
                        "name": "web-b", "type": "release", "enabled": true, "project": "shop",
                        "stale": false, "description": null, "impressionData": false, "variants": [],
                        "strategies": [{"name": "default", "constraints": [], "parameters": {},
                            "variants": [], "segments": [9]}],
                    },
                    {
                        "name": "web-a", "type": "release", "enabled": false, "project": "default",
                        "stale": false, "description": null, "impressionData": false, "variants": [],
                        "strategies": [{"name": "default", "constraints": [], "parameters": {},
                            "variants": [], "segments": []}],
                    },
                ],
                "segments": [
                    {"id": 4, "name": "segment-4",
                        "constraints": [{"contextName": "userId", "operator": "IN", "values": ["4"]}]},
                    {"id": 9, "name": "segment-9",
                        "constraints": [{"contextName": "userId", "operator": "IN", "values": ["9"]}]},
                ],
            }]})
        );
        Ok(())
    }

    #[test]
    fn the_same_state_at_a_newer_revision_is_no_change() -> Outcome {
        let question = asked(None);
        let make = |revision| {
            Snapshot::new(
                document(vec![flag("a", "default", true, &[1])], vec![segment(1, &["1"])]),
                &question,
                revision,
            )
        };
        assert!(make(1)?.change_to(&make(2)?).is_none());
        Ok(())
    }

    #[test]
    fn a_segment_no_flag_names_changes_nothing_an_sdk_sees() -> Outcome {
        let question = asked(None);
        let before = Snapshot::new(
            document(
                vec![flag("a", "default", true, &[1])],
                vec![segment(1, &["1"]), segment(2, &["2"])],
            ),
            &question,
            1,
        )?;
        let changed = Snapshot::new(
            document(
                vec![flag("a", "default", true, &[1])],
                vec![segment(1, &["1"]), segment(2, &["20"]), segment(3, &["3"])],
            ),
            &question,
            2,
        )?;
        assert!(before.change_to(&changed).is_none());
        Ok(())
    }

    #[test]
    fn a_flag_outside_the_name_prefix_changes_nothing_an_sdk_sees() -> Outcome {
        let question = asked(Some("web-"));
        let before = Snapshot::new(
            document(vec![flag("api-a", "default", true, &[])], Vec::new()),
            &question,
            1,
        )?;
        let after = Snapshot::new(
            document(vec![flag("api-a", "default", false, &[])], Vec::new()),
            &question,
            2,
        )?;
        assert!(before.change_to(&after).is_none());
        Ok(())
    }

    #[test]
    fn events_bring_segments_first_then_flags_then_removals() -> Outcome {
        let question = asked(None);
        let before = Snapshot::new(
            document(
                vec![flag("a", "default", true, &[1]), flag("b", "shop", true, &[])],
                vec![segment(1, &["1"]), segment(2, &["2"])],
            ),
            &question,
            5,
        )?;
        let after = Snapshot::new(
            document(
                vec![flag("c", "default", true, &[]), flag("a", "default", true, &[3])],
                vec![segment(1, &["1"]), segment(3, &["3"])],
            ),
            &question,
            8,
        )?;
        let change = before.change_to(&after).ok_or("no change")?;
        assert_eq!(change.revision(), 8);
        let events = events(&change)?;
        let summary: Vec<String> = events
            .iter()
            .map(|event| {
                let what = [
                    &event["segment"]["id"],
                    &event["feature"]["name"],
                    &event["featureName"],
                    &event["segmentId"],
                ]
                .into_iter()
                .find(|value| !value.is_null())
                .map(Value::to_string)
                .unwrap_or_default();
                format!("{} {what}", event["type"].as_str().unwrap_or_default())
            })
            .collect();
        assert_eq!(
            summary,
            [
                "segment-updated 3",
                "feature-updated \"c\"",
                "feature-updated \"a\"",
                "feature-removed \"b\"",
                "segment-removed 2",
            ]
        );
        assert!(events.iter().all(|event| event["eventId"] == 8));
        assert_eq!(events[3]["project"], "shop");
        Ok(())
    }

    #[test]
    fn an_updated_flag_brings_the_unchanged_segments_it_names() -> Outcome {
        let question = asked(None);
        let segments = || vec![segment(1, &["1"]), segment(2, &["2"])];
        let before = Snapshot::new(
            document(vec![flag("a", "default", true, &[1])], segments()),
            &question,
            1,
        )?;
        let after = Snapshot::new(
            document(vec![flag("a", "default", false, &[1])], segments()),
            &question,
            2,
        )?;
        let change = before.change_to(&after).ok_or("no change")?;
        let types: Vec<Value> = events(&change)?
            .iter()
            .map(|event| event["type"].clone())
            .collect();
        assert_eq!(types, [json!("segment-updated"), json!("feature-updated")]);
        Ok(())
    }

    #[test]
    fn an_sdk_applying_each_change_holds_what_a_hydration_holds() -> Outcome {
        for prefix in [None, Some("web-"), Some("nothing-")] {
            let question = asked(prefix);
            let mut states = history().into_iter();
            let (revision, first) = states.next().ok_or("no history")?;
            let mut held = Snapshot::new(first, &question, revision)?;
            let mut sdk = Sdk::hydrated(&held.hydration())?;
            for (revision, state) in states {
                let next = Snapshot::new(state, &question, revision)?;
                if let Some(change) = held.change_to(&next) {
                    assert_eq!(change.revision(), revision);
                    sdk.apply(change.body())?;
                    assert_eq!(sdk.revision, Some(revision));
                }
                sdk.assert_holds(&Sdk::hydrated(&next.hydration())?);
                held = next;
            }
        }
        Ok(())
    }

    #[test]
    fn an_sdk_resuming_from_any_loaded_revision_catches_up_in_one_answer() -> Outcome {
        let question = asked(None);
        let states = history()
            .into_iter()
            .map(|(revision, state)| Ok(Arc::new(Snapshot::new(state, &question, revision)?)))
            .collect::<Result<Vec<_>, AdminError>>()?;
        let feed = Feed::new(question);
        let mut previous: Option<&Arc<Snapshot>> = None;
        for state in &states {
            let change = previous.and_then(|held| held.change_to(state)).map(Arc::new);
            feed.publish(Arc::clone(state), change);
            previous = Some(state);
        }
        let newest = states.last().ok_or("no history")?;
        let fresh = Sdk::hydrated(&newest.hydration())?;
        for state in &states {
            let mut sdk = Sdk::hydrated(&state.hydration())?;
            let changes = feed
                .since(state.revision())
                .ok_or("a loaded revision is remembered")?;
            sdk.apply(&joined(&changes))?;
            sdk.assert_holds(&fresh);
        }
        Ok(())
    }

    #[test]
    fn joined_changes_are_one_document_of_their_events_in_order() {
        let first = Arc::new(Change {
            revision: 2,
            body: format!("{EVENTS_OPEN}{{\"eventId\":2}},{{\"eventId\":2}}{EVENTS_CLOSE}").into(),
        });
        let second = Arc::new(Change {
            revision: 5,
            body: format!("{EVENTS_OPEN}{{\"eventId\":5}}{EVENTS_CLOSE}").into(),
        });
        assert_eq!(first.events(), "{\"eventId\":2},{\"eventId\":2}");
        assert_eq!(
            joined(&[first, second]),
            "{\"events\":[{\"eventId\":2},{\"eventId\":2},{\"eventId\":5}]}"
        );
        assert_eq!(joined(&[]), "{\"events\":[]}");
    }

    #[test]
    fn a_feed_resumes_only_from_a_revision_it_loaded() -> Outcome {
        let feed = Feed::new(asked(None));
        assert!(matches!(feed.opening(None), Err(AdminError::Internal(_))));
        assert!(feed.since(3).is_none());
        feed.publish(snapshot(3)?, None);
        feed.publish(snapshot(5)?, Some(change(5, 0)));
        feed.publish(snapshot(7)?, None);
        feed.publish(snapshot(9)?, Some(change(9, 0)));
        // An older state loaded late is not kept.
        feed.publish(snapshot(8)?, Some(change(8, 0)));
        assert_eq!(feed.snapshot().map(|held| held.revision()), Some(9));
        let revisions = |changes: Option<Vec<Arc<Change>>>| {
            changes.map(|changes| changes.iter().map(|change| change.revision()).collect::<Vec<_>>())
        };
        assert_eq!(revisions(feed.since(3)), Some(vec![5, 9]));
        assert_eq!(revisions(feed.since(5)), Some(vec![9]));
        assert_eq!(revisions(feed.since(7)), Some(vec![9]));
        assert_eq!(revisions(feed.since(9)), Some(vec![]));
        assert_eq!(revisions(feed.since(4)), None, "revision 4 was never loaded");
        assert_eq!(revisions(feed.since(10)), None);
        match feed.opening(Some(5))? {
            Opening::Resumed { revision, changes } => {
                assert_eq!(revision, 9);
                assert_eq!(revisions(Some(changes)), Some(vec![9]));
            }
            Opening::Hydration(_) => return Err("a stream at a loaded revision resumes".into()),
        }
        for last in [None, Some(4)] {
            let opening = feed.opening(last)?;
            assert!(matches!(opening, Opening::Hydration(_)), "{last:?}");
            assert_eq!(opening.revision(), 9);
        }
        Ok(())
    }

    #[test]
    fn a_feed_remembers_at_most_its_bound_of_revisions() -> Outcome {
        let feed = Feed::new(asked(None));
        let points = i32::try_from(POINTS)?;
        for revision in 1..=points + 1 {
            feed.publish(snapshot(revision)?, None);
        }
        assert!(feed.since(1).is_none());
        assert_eq!(feed.since(2).map(|changes| changes.len()), Some(0));
        assert_eq!(feed.lock().points.len(), POINTS);
        Ok(())
    }

    /// The history once counted the change that led to its oldest revision, which no SDK is
    /// ever sent, so two big changes in a row left an SDK one change behind with a hydration.
    #[test]
    fn an_sdk_one_change_behind_resumes_however_big_the_change() -> Outcome {
        let feed = Feed::new(asked(None));
        let big = HISTORY_BYTES / 2 + 1;
        feed.publish(snapshot(1)?, None);
        feed.publish(snapshot(2)?, Some(change(2, big)));
        assert_eq!(feed.since(1).map(|changes| changes.len()), Some(1));
        feed.publish(snapshot(3)?, Some(change(3, big)));
        assert!(
            feed.since(1).is_none(),
            "past the bytes kept, the oldest revisions go"
        );
        assert_eq!(feed.since(2).map(|changes| changes.len()), Some(1));
        feed.publish(snapshot(4)?, Some(change(4, HISTORY_BYTES * 2)));
        assert!(feed.since(2).is_none());
        assert_eq!(feed.since(3).map(|changes| changes.len()), Some(1));
        let (bytes, kept) = {
            let state = feed.lock();
            let kept: usize = state
                .points
                .iter()
                .filter_map(|(_, change)| change.as_ref())
                .map(|change| change.body.len())
                .sum();
            (state.bytes, kept)
        };
        assert_eq!(bytes, kept, "the bytes counted are those of the changes kept");
        Ok(())
    }

    #[test]
    fn a_change_reaches_every_stream_of_its_question_once() -> Outcome {
        let feed = Feed::new(asked(None));
        let mut first = feed.sender.subscribe();
        let mut second = feed.sender.subscribe();
        assert_eq!(feed.followers(), 2);
        feed.publish(snapshot(1)?, None);
        feed.publish(snapshot(2)?, Some(change(2, 0)));
        feed.publish(snapshot(3)?, None);
        for receiver in [&mut first, &mut second] {
            assert_eq!(receiver.try_recv().map(|change| change.revision()), Ok(2));
            assert!(receiver.try_recv().is_err());
        }
        drop(second);
        assert_eq!(feed.followers(), 1);
        Ok(())
    }

    fn limits(total: usize, per_token: usize) -> Arc<Limits> {
        Arc::new(Limits {
            total,
            per_token,
            open: Mutex::default(),
        })
    }

    #[test]
    fn streams_are_limited_in_total_and_per_token() -> Outcome {
        let limits = limits(3, 2);
        let (one, two): (Arc<str>, Arc<str>) = ("one".into(), "two".into());
        let question = asked(None);
        let first = limits.admit(&one, &question)?;
        let _second = limits.admit(&one, &question)?;
        assert!(matches!(
            limits.admit(&one, &question),
            Err(AdminError::Throttled {
                retry_after: RETRY_AFTER,
                ..
            })
        ));
        let _third = limits.admit(&two, &question)?;
        assert!(matches!(
            limits.admit(&"three".into(), &question),
            Err(AdminError::AtCapacity {
                retry_after: RETRY_AFTER,
                ..
            })
        ));
        drop(first);
        assert_eq!(limits.lock().total, 2);
        let _again = limits.admit(&one, &question)?;
        Ok(())
    }

    #[test]
    fn one_token_streams_a_bounded_number_of_questions() -> Outcome {
        let limits = limits(100, 100);
        let token: Arc<str> = "token".into();
        let questions: Vec<ClientFeaturesQuery> = (0..=QUESTIONS_PER_TOKEN)
            .map(|n| asked(Some(&format!("q{n}-"))))
            .collect();
        let mut permits = questions[..QUESTIONS_PER_TOKEN]
            .iter()
            .map(|question| limits.admit(&token, question))
            .collect::<Result<Vec<_>, _>>()?;
        let extra = &questions[QUESTIONS_PER_TOKEN];
        assert!(matches!(
            limits.admit(&token, extra),
            Err(AdminError::Throttled { .. })
        ));
        // The same question again is no new one, and another token has its own.
        permits.push(limits.admit(&token, &questions[0])?);
        let _other = limits.admit(&"other".into(), extra)?;
        // A question's place is given back with its last stream.
        permits.remove(0);
        assert!(matches!(
            limits.admit(&token, extra),
            Err(AdminError::Throttled { .. })
        ));
        permits.pop();
        let taken = limits.admit(&token, extra)?;
        drop(permits);
        drop(taken);
        let (total, held) = {
            let open = limits.lock();
            (open.total, open.by_token.contains_key(&token))
        };
        assert_eq!(total, 1);
        assert!(!held, "a token without streams is forgotten");
        Ok(())
    }

    #[test]
    fn past_capacity_the_feed_used_least_recently_makes_room() {
        let feeds = Feeds::new(10, 10);
        let question = |n: usize| asked(Some(&format!("q{n}-")));
        let first = feeds.feed(question(0));
        for n in 1..CAPACITY {
            feeds.feed(question(n));
        }
        assert_eq!(feeds.len(), CAPACITY);
        assert!(
            Arc::ptr_eq(&first, &feeds.feed(question(0))),
            "a kept feed is shared"
        );
        feeds.feed(question(CAPACITY));
        assert_eq!(feeds.len(), CAPACITY);
        let kept: BTreeSet<Option<String>> = feeds
            .lock()
            .keys()
            .map(|question| question.name_prefix.clone())
            .collect();
        assert!(kept.contains(&Some("q0-".into())), "the feed used last is kept");
        assert!(
            !kept.contains(&Some("q1-".into())),
            "the feed used least recently makes room"
        );
        assert!(!feeds.is_empty());
    }

    #[test]
    fn when_every_feed_is_followed_a_stream_is_refused_and_a_delta_request_is_not() -> Outcome {
        let feeds = Feeds::new(10, 10);
        let question = |n: usize| asked(Some(&format!("q{n}-")));
        assert!(!feeds.any_followed());
        let mut followers = (0..CAPACITY)
            .map(|n| feeds.followed_feed(question(n)))
            .collect::<Result<Vec<_>, _>>()?;
        assert!(feeds.any_followed());
        assert!(matches!(
            feeds.followed_feed(question(CAPACITY)),
            Err(AdminError::AtCapacity { .. })
        ));
        let unkept = feeds.feed(question(CAPACITY));
        assert!(
            !Arc::ptr_eq(&unkept, &feeds.feed(question(CAPACITY))),
            "nobody keeps it"
        );
        assert_eq!(feeds.len(), CAPACITY);
        // A followed question is still followed by the next stream.
        let (again, _changes) = feeds.followed_feed(question(0))?;
        assert!(Arc::ptr_eq(&again, &followers[0].0));
        // Once a feed has no stream, a new question takes its place.
        followers.truncate(CAPACITY - 1);
        let (_, _newcomer) = feeds.followed_feed(question(CAPACITY))?;
        assert_eq!(feeds.len(), CAPACITY);
        Ok(())
    }

    /// An admin token for every environment, admitted to write.
    fn admin() -> Result<Caller, AdminError> {
        Access::Admin.admit(Principal::AdminToken {
            name: "delta-test".into(),
            environments: None,
        })
    }

    /// The client document for `question` as a polling SDK gets it, read as an SDK holds it.
    async fn document_of(ctx: &Runtime, question: &ClientFeaturesQuery) -> Result<Sdk, Box<dyn Error>> {
        let rendered = client::render(ctx, question.clone(), None)
            .await?
            .ok_or("no document")?;
        let document: Value = serde_json::from_slice(&rendered.json)?;
        Ok(Sdk {
            revision: document["meta"]["revisionId"]
                .as_i64()
                .map(i32::try_from)
                .transpose()?,
            features: by_name(&document["features"])?,
            segments: by_id(&document["segments"])?,
        })
    }

    /// One delta request by `sdk`, applied as the SDK applies the answer; whether it was a
    /// hydration.
    async fn poll(ctx: &Runtime, feed: &Feed, sdk: &mut Sdk) -> Result<bool, Box<dyn Error>> {
        let revision = ctx.revision().await?;
        match feed.delta(ctx, revision, sdk.revision).await? {
            DeltaAnswer::NotModified { revision } => assert_eq!(Some(revision), sdk.revision),
            DeltaAnswer::Events { revision, body } => {
                sdk.apply(&body)?;
                assert_eq!(sdk.revision, Some(revision), "the ETag is the last event's id");
            }
            DeltaAnswer::Hydration(snapshot) => {
                *sdk = Sdk::hydrated(&snapshot.hydration())?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// SDKs following the question of `pairs` by delta requests and by a stream, each checked
    /// against the document a polling SDK gets after every write.
    struct Followers {
        question: ClientFeaturesQuery,
        polled: Sdk,
        hydrations: usize,
        streamed: Sdk,
        stream: Stream,
    }

    impl Followers {
        async fn new(ctx: &App, pairs: &[(&str, &str)]) -> Result<Self, Box<dyn Error>> {
            let access = ClientAccess {
                environment: None,
                projects: None,
                token: "client-token".into(),
            };
            let query = || {
                ClientQuery::from_pairs(
                    pairs
                        .iter()
                        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
                        .collect(),
                )
            };
            let question = client::question(&access, query(), Protocol::Delta)?;
            let document = client::question(
                &access,
                query(),
                Protocol::Features(ClientSpec::parse(Some("5.2.0"))?),
            )?;
            assert_eq!(
                question, document,
                "the delta API and the document read a query alike"
            );
            let stream = follow(ctx, ctx.delivery(), &access, question.clone(), None).await?;
            let streamed = match &stream.subscription.opening {
                Opening::Hydration(snapshot) => Sdk::hydrated(&snapshot.hydration())?,
                Opening::Resumed { .. } => return Err("a new stream opens with a hydration".into()),
            };
            Ok(Self {
                question,
                polled: Sdk::default(),
                hydrations: 0,
                streamed,
                stream,
            })
        }

        /// Brings both SDKs up to date and checks they hold what the document holds.
        async fn check(&mut self, ctx: &App, step: &str) -> Outcome {
            let feed = ctx.delivery().feeds().feed(self.question.clone());
            if poll(ctx, &feed, &mut self.polled).await? {
                self.hydrations += 1;
            }
            ctx.delivery()
                .feeds()
                .advance_followed(ctx, ctx.revision().await?)
                .await?;
            while let Ok(change) = self.stream.subscription.changes.try_recv() {
                self.streamed.apply(change.body())?;
            }
            let fresh = document_of(ctx, &self.question).await?;
            for sdk in [&self.polled, &self.streamed] {
                assert!(sdk.revision <= fresh.revision, "{step}");
                sdk.assert_holds(&fresh);
            }
            assert_eq!(
                self.hydrations, 1,
                "{step}: only the first delta request hydrates"
            );
            Ok(())
        }
    }

    /// The runtime and the delivery wing's state: what these operations run on, without the
    /// app above them.
    struct App {
        runtime: crate::runtime::Runtime,
        delivery: crate::delivery::Delivery,
    }

    impl App {
        fn new(store: flag_store::Store) -> Result<Self, Box<dyn Error>> {
            let settings = Settings::default();
            Ok(Self {
                delivery: crate::delivery::Delivery::new(&settings),
                runtime: crate::runtime::Runtime::new(store, settings)?,
            })
        }

        fn delivery(&self) -> &crate::delivery::Delivery {
            &self.delivery
        }
    }

    impl std::ops::Deref for App {
        type Target = crate::runtime::Runtime;

        fn deref(&self) -> &Self::Target {
            &self.runtime
        }
    }

    #[tokio::test]
    async fn sdks_following_changes_hold_what_a_fresh_document_holds() -> Outcome {
        let scratch = flag_store::scratch::Scratch::new()?;
        let ctx = App::new(scratch.open()?)?;
        let caller = admin()?;
        let mut followers = vec![
            Followers::new(&ctx, &[]).await?,
            Followers::new(&ctx, &[("namePrefix", "web-")]).await?,
            Followers::new(&ctx, &[("environment", "production"), ("project", "default")]).await?,
        ];
        let place = |feature: &str, environment: &str| {
            ("default".to_owned(), feature.to_owned(), environment.to_owned())
        };
        let beta = |user_ids: &[&str]| {
            serde_json::from_value(json!({
                "name": "beta",
                "constraints": [{"contextName": "userId", "operator": "IN", "values": user_ids}],
            }))
        };

        features::create(
            &ctx,
            &caller,
            "default".into(),
            serde_json::from_value(json!({"name": "web-checkout"}))?,
        )
        .await?;
        features::create(
            &ctx,
            &caller,
            "default".into(),
            serde_json::from_value(json!({"name": "api-search"}))?,
        )
        .await?;
        for follower in &mut followers {
            follower.check(&ctx, "two flags created").await?;
        }
        features::switch_with(
            &ctx,
            &caller,
            place("web-checkout", "development"),
            true,
            Default::default(),
        )
        .await?;
        for follower in &mut followers {
            follower.check(&ctx, "a flag switched on").await?;
        }
        let segment = segments::create(&ctx, &caller, beta(&["1"])?).await?.id;
        strategies::add(
            &ctx,
            &caller,
            place("web-checkout", "development"),
            serde_json::from_value(json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": "50", "stickiness": "default", "groupId": "web-checkout"},
                "segments": [segment],
            }))?,
        )
        .await?;
        for follower in &mut followers {
            follower.check(&ctx, "a strategy naming a segment added").await?;
        }
        segments::update(&ctx, &caller, segment, beta(&["1", "2"])?).await?;
        for follower in &mut followers {
            follower.check(&ctx, "the segment changed").await?;
        }
        segments::create(
            &ctx,
            &caller,
            serde_json::from_value(json!({"name": "unused", "constraints": []}))?,
        )
        .await?;
        features::switch_with(
            &ctx,
            &caller,
            place("api-search", "production"),
            true,
            Default::default(),
        )
        .await?;
        for follower in &mut followers {
            follower
                .check(&ctx, "an unused segment added and a flag switched in production")
                .await?;
        }
        archive::archive_one(&ctx, &caller, "default".into(), "web-checkout".into()).await?;
        for follower in &mut followers {
            follower.check(&ctx, "a flag archived").await?;
        }
        segments::delete(&ctx, &caller, segment).await?;
        for follower in &mut followers {
            follower.check(&ctx, "the segment deleted").await?;
        }
        Ok(())
    }
}
