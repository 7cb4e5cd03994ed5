//! The history of what the playground evaluates: every flag's definition in every environment,
//! and every segment's, kept with the revisions (audit event ids) between which each held, so
//! that the configuration of any moment since the history began is read back exactly.
//!
//! - **Written** by every write transaction, in the store's one write path: its events name the
//!   flags and segments it touched (`touch`, called as each event is made ready); before it
//!   commits, `capture` reads their definitions as the playground reads them now and, for each
//!   that differs from its current version, closes that version at the write's revision and opens
//!   a new one. What the history holds is therefore what the playground read, not a replay of
//!   the events' own records. Writes with no such event (tokens, users, settings) cost nothing.
//! - **Read** at revision `r` ([`playground_input_at`]): the versions with
//!   `from_revision <= r < to_revision` (or no `to_revision`), in the playground's order.
//! - **Begun** when a database first opens with this table ([`begin`]): every flag and segment as
//!   it is then, at the revision then; times before that are outside the history.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use chrono::NaiveDateTime;
use diesel::prelude::*;
use flag_eval::{ClientFeatures, Feature, Segment};

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{EventType, NewEvent, SegmentRow};
use crate::queries::evaluation::{Flags, ProjectScope, flags};
use crate::queries::{events, from_json, segments, to_json};
use crate::schema::{
    environments, flag_versions, history_start, segment_versions, segments as segments_table,
};

/// What the write running on this thread touched.
#[derive(Debug, Default)]
struct Touched {
    features: BTreeSet<String>,
    segments: BTreeSet<i32>,
    /// Something whose reach is every flag (an environment, a project's environments, a
    /// migration): all are captured.
    everything: bool,
}

impl Touched {
    fn is_empty(&self) -> bool {
        !self.everything && self.features.is_empty() && self.segments.is_empty()
    }
}

thread_local! {
    /// The flags and segments the write transaction running on this thread touched; `None`
    /// outside a write.
    static TOUCHED: RefCell<Option<Touched>> = const { RefCell::new(None) };
}

/// Runs `work`, one whole write transaction, noting what its events touch; put back as it was
/// when `work` returns or unwinds.
pub(crate) fn recording<T>(work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Touched>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            TOUCHED.with(|touched| *touched.borrow_mut() = previous);
        }
    }
    let _restore = Restore(TOUCHED.with(|touched| touched.replace(Some(Touched::default()))));
    work()
}

/// Notes what `event`, about to be recorded, says was changed.
pub(crate) fn touch(event: &NewEvent) {
    TOUCHED.with(|touched| {
        let mut touched = touched.borrow_mut();
        let Some(touched) = touched.as_mut() else {
            return;
        };
        if let Some(feature) = &event.feature_name {
            touched.features.insert(feature.clone());
            return;
        }
        match event.event_type {
            EventType::SegmentCreated | EventType::SegmentUpdated | EventType::SegmentDeleted => {
                match crate::queries::change_requests::segment_of(event) {
                    Some(segment) => {
                        touched.segments.insert(segment);
                    }
                    None => touched.everything = true,
                }
            }
            EventType::EnvironmentCreated
            | EventType::EnvironmentDeleted
            | EventType::EnvironmentEnabled
            | EventType::EnvironmentDisabled
            | EventType::EnvironmentUpdated
            | EventType::FeaturesImported
            | EventType::ProjectEnvironmentAdded
            | EventType::ProjectEnvironmentRemoved
            | EventType::ProjectDeleted => touched.everything = true,
            _ => {}
        }
    });
}

/// Notes that the write running on this thread changed flags or segments without an event
/// naming each (a migration): every one is captured.
pub(crate) fn touch_everything() {
    TOUCHED.with(|touched| {
        if let Some(touched) = touched.borrow_mut().as_mut() {
            touched.everything = true;
        }
    });
}

/// Keeps the write running on this thread out of the history: an edge's mirror of its upstream,
/// whose store answers SDKs and keeps no history of its own.
pub(crate) fn not_kept() {
    TOUCHED.with(|touched| *touched.borrow_mut() = None);
}

/// Rows inserted per statement.
const CHUNK: usize = 1000;

/// Records, at the revision the write running on this thread has reached, a new version of each
/// flag (in each environment) and segment it touched whose definition changed. Called by the
/// write path before it commits.
pub(crate) fn capture(conn: &mut DbConnection) -> Result<(), StoreError> {
    let touched = TOUCHED.with(|touched| touched.borrow_mut().as_mut().map(std::mem::take));
    match touched {
        Some(touched) if !touched.is_empty() => {
            let revision = events::latest_id(conn)?;
            write_versions(conn, &touched, revision)
        }
        _ => Ok(()),
    }
}

/// The flag versions in force at `revision`: begun at or before it, and not ended by then.
#[diesel::dsl::auto_type(no_type_alias)]
fn flag_in_force(revision: i32) -> _ {
    flag_versions::from_revision.le(revision).and(
        flag_versions::to_revision
            .is_null()
            .or(flag_versions::to_revision.gt(revision)),
    )
}

/// A flag's definition in one environment, as stored.
#[derive(PartialEq, Eq)]
struct FlagVersion {
    project: String,
    archived: bool,
    in_project: bool,
    body: String,
}

fn write_versions(conn: &mut DbConnection, touched: &Touched, revision: i32) -> Result<(), StoreError> {
    if touched.everything || !touched.features.is_empty() {
        let names: Option<Vec<String>> =
            (!touched.everything).then(|| touched.features.iter().cloned().collect());
        let mut open_query = flag_versions::table
            .filter(flag_versions::to_revision.is_null())
            .select((
                flag_versions::feature,
                flag_versions::environment,
                flag_versions::project,
                flag_versions::archived,
                flag_versions::in_project,
                flag_versions::body,
            ))
            .into_boxed();
        if let Some(names) = &names {
            open_query = open_query.filter(flag_versions::feature.eq_any(names));
        }
        let mut open: HashMap<(String, String), FlagVersion> = open_query
            .load::<(String, String, String, bool, bool, String)>(conn)?
            .into_iter()
            .map(|(feature, environment, project, archived, in_project, body)| {
                (
                    (feature, environment),
                    FlagVersion {
                        project,
                        archived,
                        in_project,
                        body,
                    },
                )
            })
            .collect();
        let environments: Vec<String> = environments::table
            .order(environments::name)
            .select(environments::name)
            .load(conn)?;
        let which = Flags {
            scope: &ProjectScope::All,
            names: names.as_deref(),
            archived: true,
        };
        let mut closed: HashMap<String, Vec<String>> = HashMap::new();
        let mut opened = Vec::new();
        for environment in &environments {
            for (state, feature) in flags(conn, environment, &which, true)? {
                let now = FlagVersion {
                    project: feature.project.clone().unwrap_or_default(),
                    archived: state.archived,
                    in_project: state.in_project,
                    body: to_json("body", &feature)?,
                };
                match open.remove(&(feature.name.clone(), environment.clone())) {
                    // Whether its project had the environment counts too: a flag off with no
                    // strategies reads the same with it or without.
                    Some(then) if then == now => {}
                    Some(_) => {
                        closed
                            .entry(environment.clone())
                            .or_default()
                            .push(feature.name.clone());
                        opened.push((feature.name, environment.clone(), now));
                    }
                    None => opened.push((feature.name, environment.clone(), now)),
                }
            }
        }
        // What is left was deleted, or its environment was.
        for (feature, environment) in open.into_keys() {
            closed.entry(environment).or_default().push(feature);
        }
        for (environment, features) in closed {
            for features in features.chunks(CHUNK) {
                diesel::update(
                    flag_versions::table
                        .filter(flag_versions::environment.eq(&environment))
                        .filter(flag_versions::feature.eq_any(features))
                        .filter(flag_versions::to_revision.is_null()),
                )
                .set(flag_versions::to_revision.eq(revision))
                .execute(conn)?;
            }
        }
        let rows: Vec<_> = opened
            .into_iter()
            .map(|(feature, environment, version)| {
                (
                    flag_versions::feature.eq(feature),
                    flag_versions::environment.eq(environment),
                    flag_versions::from_revision.eq(revision),
                    flag_versions::project.eq(version.project),
                    flag_versions::archived.eq(version.archived),
                    flag_versions::in_project.eq(version.in_project),
                    flag_versions::body.eq(version.body),
                )
            })
            .collect();
        for rows in rows.chunks(CHUNK) {
            match conn {
                DbConnection::Postgres(postgres) => {
                    diesel::insert_into(flag_versions::table)
                        .values(rows)
                        .execute(postgres)?;
                }
                DbConnection::Sqlite(_) => {
                    for row in rows {
                        diesel::insert_into(flag_versions::table)
                            .values(row.clone())
                            .execute(conn)?;
                    }
                }
            }
        }
    }
    if touched.everything || !touched.segments.is_empty() {
        let ids: Option<Vec<i32>> = (!touched.everything).then(|| touched.segments.iter().copied().collect());
        let mut open_query = segment_versions::table
            .filter(segment_versions::to_revision.is_null())
            .select((segment_versions::segment_id, segment_versions::body))
            .into_boxed();
        let mut now_query = segments_table::table.select(SegmentRow::as_select()).into_boxed();
        if let Some(ids) = &ids {
            open_query = open_query.filter(segment_versions::segment_id.eq_any(ids));
            now_query = now_query.filter(segments_table::id.eq_any(ids));
        }
        let mut open: HashMap<i32, String> = open_query.load(conn)?.into_iter().collect();
        let mut changed = Vec::new();
        let mut opened = Vec::new();
        for row in now_query.load(conn)? {
            let body = to_json("body", &segments::to_model(&row)?)?;
            match open.remove(&row.id) {
                Some(then) if then == body => {}
                Some(_) => {
                    changed.push(row.id);
                    opened.push((row.id, body));
                }
                None => opened.push((row.id, body)),
            }
        }
        changed.extend(open.into_keys());
        for ids in changed.chunks(CHUNK) {
            diesel::update(
                segment_versions::table
                    .filter(segment_versions::segment_id.eq_any(ids))
                    .filter(segment_versions::to_revision.is_null()),
            )
            .set(segment_versions::to_revision.eq(revision))
            .execute(conn)?;
        }
        for (id, body) in opened {
            diesel::insert_into(segment_versions::table)
                .values((
                    segment_versions::segment_id.eq(id),
                    segment_versions::from_revision.eq(revision),
                    segment_versions::body.eq(body),
                ))
                .execute(conn)?;
        }
    }
    Ok(())
}

/// Begins the history when it has not begun: every flag and segment as it is, at the current
/// revision, from `now`. Idempotent; run when the store opens.
pub fn begin(conn: &mut DbConnection, now: NaiveDateTime) -> Result<(), StoreError> {
    let begun = |conn: &mut DbConnection| -> Result<bool, StoreError> {
        Ok(history_start::table.count().get_result::<i64>(conn)? > 0)
    };
    if begun(conn)? {
        return Ok(());
    }
    crate::queries::write(conn, |conn| {
        if begun(conn)? {
            return Ok(());
        }
        let revision = events::latest_id(conn)?;
        write_versions(
            conn,
            &Touched {
                everything: true,
                ..Touched::default()
            },
            revision,
        )?;
        diesel::insert_into(history_start::table)
            .values((
                history_start::id.eq(1),
                history_start::revision.eq(revision),
                history_start::started_at.eq(now),
            ))
            .execute(conn)?;
        Ok(())
    })
}

/// When the history begins: the earliest time it answers for.
pub fn start(conn: &mut DbConnection) -> Result<Option<NaiveDateTime>, StoreError> {
    Ok(history_start::table
        .select(history_start::started_at)
        .first(conn)
        .optional()?)
}

/// The revision the configuration was at, at `at`: the newest event written before the first
/// one dated after `at`, or the newest of all when none is (0 when there is none). Two index
/// searches (`events_created`, then the primary key), whatever the number of events.
///
/// Events are dated in the order they are written ([`record_held`]), but for the history a
/// migration carries over from another installation: those keep their own, older dates among
/// newer ids. Counting every event dated up to `at` would take them, and with them every write
/// made before the migration whatever its date; the first event dated after `at` is where the
/// writes made after it begin.
///
/// [`record_held`]: crate::queries::events
pub fn revision_at(conn: &mut DbConnection, at: NaiveDateTime) -> Result<i32, StoreError> {
    use crate::schema::events;
    let first_after: Option<i32> = events::table
        .filter(events::created_at.gt(at))
        .order((events::created_at.asc(), events::id.asc()))
        .select(events::id)
        .first(conn)
        .optional()?;
    let mut before = events::table.select(diesel::dsl::max(events::id)).into_boxed();
    if let Some(first_after) = first_after {
        before = before.filter(events::id.lt(first_after));
    }
    Ok(before.first::<Option<i32>>(conn)?.unwrap_or(0))
}

/// What the playground evaluated for `environment` at `revision`: as
/// [`playground_input`](crate::queries::evaluation::playground_input) read it then. An
/// environment that did not exist then reads as one that does not exist reads now: every flag,
/// off, with no strategies and no variants.
pub fn playground_input_at(
    conn: &mut DbConnection,
    scope: &ProjectScope,
    environment: &str,
    revision: i32,
) -> Result<ClientFeatures, StoreError> {
    let past = past_flags(conn, scope, environment, revision)?;
    let features = past
        .rows
        .iter()
        .map(|(_, _, body)| past.read(body))
        .collect::<Result<_, _>>()?;
    Ok(ClientFeatures {
        version: 2,
        features,
        segments: past.segments,
    })
}

/// A version as read: its project, name and body.
type Row = (String, String, String);

/// The flags the playground evaluated for an environment at a revision, fetched in its order but
/// not yet read from their bodies, and the segments as they were: [`playground_input_at`] reads
/// every flag at once, [`PastFlags::parts`] a part at a time, so that an answer can begin while
/// the rest is still being read.
#[derive(Debug)]
pub struct PastFlags {
    rows: Vec<Row>,
    revision: i32,
    /// Whether the environment existed then; if not, every flag reads as off, with no
    /// strategies and no variants, as in an environment that does not exist now.
    existed: bool,
    /// Every segment as it was.
    pub segments: Vec<Segment>,
}

/// The flags in force in `environment` at `revision` (see [`playground_input_at`]), in the
/// playground's order, with the segments of that moment: one consistent read.
pub fn past_flags(
    conn: &mut DbConnection,
    scope: &ProjectScope,
    environment: &str,
    revision: i32,
) -> Result<PastFlags, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        let valid = |conn: &mut DbConnection, environment: &str| -> Result<bool, StoreError> {
            Ok(flag_versions::table
                .filter(flag_versions::environment.eq(environment))
                .filter(flag_in_force(revision))
                .select(flag_versions::feature)
                .first::<String>(conn)
                .optional()?
                .is_some())
        };
        let (read_from, existed) = if valid(conn, environment)? {
            (environment.to_owned(), true)
        } else {
            let other = flag_versions::table
                .filter(flag_in_force(revision))
                .select(flag_versions::environment)
                .first::<String>(conn)
                .optional()?;
            (other.unwrap_or_default(), false)
        };
        let mut query = flag_versions::table
            .filter(flag_versions::environment.eq(read_from))
            .filter(flag_in_force(revision))
            .filter(flag_versions::archived.eq(false))
            .select((
                flag_versions::project,
                flag_versions::feature,
                flag_versions::body,
            ))
            .into_boxed();
        if let ProjectScope::Only(projects) = scope {
            query = query.filter(flag_versions::project.eq_any(projects));
        }
        // The playground's order, by project then name as the database orders text. SQLite's is
        // the bytes' order, Rust's own, so its rows are sorted here rather than with their bodies
        // in the database, which costs a third of the read at 10,000 flags.
        let sqlite = matches!(conn, DbConnection::Sqlite(_));
        if !sqlite {
            query = query.order((flag_versions::project.asc(), flag_versions::feature.asc()));
        }
        let mut rows: Vec<Row> = query.load(conn)?;
        if sqlite {
            rows.sort_unstable_by(|left, right| (&left.0, &left.1).cmp(&(&right.0, &right.1)));
        }
        let segments = segment_versions::table
            .filter(segment_versions::from_revision.le(revision))
            .filter(
                segment_versions::to_revision
                    .is_null()
                    .or(segment_versions::to_revision.gt(revision)),
            )
            .order(segment_versions::segment_id.asc())
            .select(segment_versions::body)
            .load::<String>(conn)?
            .iter()
            .map(|body| from_json::<Segment>("segment version", revision, "body", body))
            .collect::<Result<_, _>>()?;
        Ok(PastFlags {
            rows,
            revision,
            existed,
            segments,
        })
    })
}

impl PastFlags {
    /// How many flags there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The definition of the flag in `body` as the playground read it.
    fn read(&self, body: &str) -> Result<Feature, StoreError> {
        let feature = from_json::<Feature>("flag version", self.revision, "body", body)?;
        Ok(if self.existed {
            feature
        } else {
            Feature {
                enabled: false,
                strategies: Vec::new(),
                variants: Vec::new(),
                ..feature
            }
        })
    }

    /// The flags at positions `within` (in the playground's order), `size` at a time, each
    /// handed to `prepare` once read from its body, on the calling thread; the others are not
    /// read. With each part come the parents its flags depend on from outside it, as they were
    /// then, so that the part alone evaluates its flags exactly as the whole environment would: a
    /// flag's answer reads only itself, its parents and the segments. The segments are left to
    /// the caller ([`PastFlags::segments`]).
    pub fn parts<T, F>(self, within: std::ops::Range<usize>, size: usize, prepare: F) -> Parts<T, F>
    where
        F: Fn(Feature) -> T,
    {
        let end = within.end.min(self.rows.len());
        Parts {
            next: within.start.min(end),
            end,
            past: self,
            size: size.max(1),
            by_name: None,
            prepare,
            prepared: std::marker::PhantomData,
        }
    }
}

/// A part of the flags of [`PastFlags::parts`].
#[derive(Debug)]
pub struct Part<T> {
    /// Its flags' names, in the playground's order.
    pub names: Vec<String>,
    /// What `prepare` made of each, in the order of `names`.
    pub flags: Vec<T>,
    /// What `prepare` made of each parent of those flags that is not among them, once each.
    pub parents: Vec<T>,
}

/// The iterator of [`PastFlags::parts`].
#[derive(Debug)]
pub struct Parts<T, F> {
    past: PastFlags,
    size: usize,
    next: usize,
    /// Where the flags asked for end.
    end: usize,
    /// Each flag's place by name, made when the first flag with a parent is met.
    by_name: Option<HashMap<String, usize>>,
    prepare: F,
    prepared: std::marker::PhantomData<fn() -> T>,
}

impl<T, F: Fn(Feature) -> T> Parts<T, F> {
    fn part(&mut self) -> Result<Part<T>, StoreError> {
        let range = self.next..(self.next + self.size).min(self.end);
        self.next = range.end;
        let mut part = Part {
            names: Vec::with_capacity(range.len()),
            flags: Vec::with_capacity(range.len()),
            parents: Vec::new(),
        };
        let within = &self.past.rows[range];
        let mut parents: BTreeSet<String> = BTreeSet::new();
        for (_, name, body) in within {
            let feature = self.past.read(body)?;
            for dependency in &feature.dependencies {
                if within.iter().all(|(_, name, _)| *name != dependency.feature) {
                    parents.insert(dependency.feature.clone());
                }
            }
            part.names.push(name.clone());
            part.flags.push((self.prepare)(feature));
        }
        if !parents.is_empty() {
            let rows = &self.past.rows;
            let by_name = self.by_name.get_or_insert_with(|| {
                rows.iter()
                    .enumerate()
                    .map(|(index, (_, name, _))| (name.clone(), index))
                    .collect()
            });
            // A parent not in force then is absent from the whole environment too.
            for index in parents.iter().filter_map(|parent| by_name.get(parent)) {
                part.parents
                    .push((self.prepare)(self.past.read(&rows[*index].2)?));
            }
        }
        Ok(part)
    }
}

impl<T, F: Fn(Feature) -> T> Iterator for Parts<T, F> {
    type Item = Result<Part<T>, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        (self.next < self.end).then(|| self.part())
    }
}

/// A flag as it was at a revision.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagAt {
    /// Its project then.
    pub project: String,
    /// It was archived.
    pub archived: bool,
    /// Each environment that existed then, by name: whether its project had it, and the flag as
    /// the engine read it there.
    pub environments: Vec<(String, bool, Feature)>,
}

/// Flag `feature` as it was at `revision`; `None` when it did not exist then.
pub fn flag_at(conn: &mut DbConnection, feature: &str, revision: i32) -> Result<Option<FlagAt>, StoreError> {
    let rows: Vec<(String, String, bool, bool, String)> = flag_versions::table
        .filter(flag_versions::feature.eq(feature))
        .filter(flag_in_force(revision))
        .order(flag_versions::environment.asc())
        .select((
            flag_versions::environment,
            flag_versions::project,
            flag_versions::archived,
            flag_versions::in_project,
            flag_versions::body,
        ))
        .load(conn)?;
    let Some((_, project, archived, _, _)) = rows.first().cloned() else {
        return Ok(None);
    };
    let environments = rows
        .into_iter()
        .map(|(environment, _, _, in_project, body)| {
            Ok((
                environment,
                in_project,
                from_json::<Feature>("flag version", feature, "body", &body)?,
            ))
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(Some(FlagAt {
        project,
        archived,
        environments,
    }))
}

/// A flag's version as stored: its project, whether archived, its definition's JSON.
type Stored = (String, bool, String);

/// A flag as it was at one end of a span: archived or not, and its definition.
pub type Side = Option<(bool, Feature)>;

/// How a flag changed in an environment between two revisions.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    /// The flag.
    pub feature: String,
    /// Its project at the end of the span (or, deleted by then, at its start).
    pub project: String,
    /// As it was at the start; `None` when it did not exist.
    pub before: Side,
    /// As it was at the end; `None` when it no longer existed.
    pub after: Side,
    /// The audit events between them that name it (in that environment or in all), oldest
    /// first.
    pub events: Vec<crate::models::EventRow>,
}

/// The flags whose definition in `environment` differs between revisions `from` and `to`
/// (`from < to`), by project then name, each with how and the events that made it so.
pub fn changes_between(
    conn: &mut DbConnection,
    environment: &str,
    from: i32,
    to: i32,
) -> Result<Vec<Changed>, StoreError> {
    crate::queries::snapshot(conn, |conn| {
        // Every flag with a version that began or ended inside the span.
        let touched: BTreeSet<String> = flag_versions::table
            .filter(flag_versions::environment.eq(environment))
            .filter(
                flag_versions::from_revision
                    .gt(from)
                    .and(flag_versions::from_revision.le(to))
                    .or(flag_versions::to_revision
                        .gt(from)
                        .and(flag_versions::to_revision.le(to))),
            )
            .select(flag_versions::feature)
            .distinct()
            .load::<String>(conn)?
            .into_iter()
            .collect();
        let names: Vec<String> = touched.into_iter().collect();
        let mut sides: HashMap<String, (Option<Stored>, Option<Stored>)> = HashMap::new();
        for names in names.chunks(CHUNK) {
            for (revision, after) in [(from, false), (to, true)] {
                let rows: Vec<(String, String, bool, String)> = flag_versions::table
                    .filter(flag_versions::environment.eq(environment))
                    .filter(flag_versions::feature.eq_any(names))
                    .filter(flag_in_force(revision))
                    .select((
                        flag_versions::feature,
                        flag_versions::project,
                        flag_versions::archived,
                        flag_versions::body,
                    ))
                    .load(conn)?;
                for (feature, project, archived, body) in rows {
                    let entry = sides.entry(feature).or_default();
                    let side = Some((project, archived, body));
                    if after { entry.1 = side } else { entry.0 = side }
                }
            }
        }
        let mut changed = Vec::new();
        for (feature, (before, after)) in sides {
            if before == after {
                continue;
            }
            let project = after
                .as_ref()
                .or(before.as_ref())
                .map(|(project, _, _)| project.clone())
                .unwrap_or_default();
            let side = |side: Option<Stored>| -> Result<Side, StoreError> {
                side.map(|(_, archived, body)| {
                    Ok((
                        archived,
                        from_json::<Feature>("flag version", &feature, "body", &body)?,
                    ))
                })
                .transpose()
            };
            changed.push(Changed {
                before: side(before)?,
                after: side(after)?,
                events: Vec::new(),
                project,
                feature,
            });
        }
        changed.sort_by(|left, right| {
            (left.project.as_str(), left.feature.as_str())
                .cmp(&(right.project.as_str(), right.feature.as_str()))
        });
        let names: Vec<String> = changed.iter().map(|changed| changed.feature.clone()).collect();
        let mut events: HashMap<String, Vec<crate::models::EventRow>> = HashMap::new();
        for names in names.chunks(CHUNK) {
            use crate::schema::events;
            let rows: Vec<crate::models::EventRow> = events::table
                .filter(events::id.gt(from))
                .filter(events::id.le(to))
                .filter(events::feature_name.eq_any(names))
                .filter(
                    events::environment
                        .eq(environment)
                        .or(events::environment.is_null()),
                )
                .order(events::id.asc())
                .select(crate::models::EventRow::as_select())
                .load(conn)?;
            for row in rows {
                if let Some(feature) = row.feature_name.clone() {
                    events.entry(feature).or_default().push(row);
                }
            }
        }
        for changed in &mut changed {
            changed.events = events.remove(&changed.feature).unwrap_or_default();
        }
        Ok(changed)
    })
}

/// The flags that depended on `parent` at `revision`, by name.
pub fn children_at(conn: &mut DbConnection, parent: &str, revision: i32) -> Result<Vec<String>, StoreError> {
    // Bodies that name it somewhere, then read to be sure it is as their parent.
    let named = format!(
        "%\"feature\":{}%",
        to_json("body", parent)?
            .replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    );
    let Some(environment) = flag_versions::table
        .filter(flag_versions::feature.eq(parent))
        .select(flag_versions::environment)
        .first::<String>(conn)
        .optional()?
    else {
        return Ok(Vec::new());
    };
    let rows: Vec<(String, String)> = flag_versions::table
        .filter(flag_versions::environment.eq(environment))
        .filter(flag_in_force(revision))
        .filter(flag_versions::archived.eq(false))
        .filter(flag_versions::body.like(named).escape('\\'))
        .order(flag_versions::feature.asc())
        .select((flag_versions::feature, flag_versions::body))
        .load(conn)?;
    let mut children = Vec::new();
    for (feature, body) in rows {
        let definition: Feature = from_json("flag version", &feature, "body", &body)?;
        if definition
            .dependencies
            .iter()
            .any(|dependency| dependency.feature == parent)
        {
            children.push(feature);
        }
    }
    Ok(children)
}
