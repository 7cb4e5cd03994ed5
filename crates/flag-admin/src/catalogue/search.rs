//! Searching flags as Unleash's web UI does: filters in Unleash's syntax, paging and sorting,
//! each flag shown with its state per environment, segments, tags, lifecycle and creator.

pub mod types;

use std::cmp::Ordering;

use chrono::{NaiveDate, NaiveDateTime};
use flag_store::models::FeatureRow;
use flag_store::queries;
use flag_store::queries::search::Catalogue;

use crate::catalogue::features::current_stage;
use crate::catalogue::search::types::{
    ColoredTagOut, SearchEnvironmentOut, SearchFeatureOut, SearchOut, SearchQuery,
};
use crate::identity::auth::Access;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// A filter on one value: `IS`, `IS_NOT`, `IS_ANY_OF` or `IS_NONE_OF`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Equality {
    negated: bool,
    values: Vec<String>,
}

impl Equality {
    /// Whether a flag with these values (one, or a set) passes.
    fn admits<'a>(&self, mut found: impl Iterator<Item = &'a str>) -> bool {
        found.any(|value| self.values.iter().any(|wanted| wanted == value)) != self.negated
    }
}

/// A filter on a set (tags, segments): Unleash's six inclusion operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inclusion {
    Any,
    None,
    All,
    NotAll,
}

/// A filter on a day: before it, or on or after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Day {
    Before(NaiveDateTime),
    OnOrAfter(NaiveDateTime),
}

impl Day {
    fn admits(self, at: NaiveDateTime) -> bool {
        match self {
            Self::Before(day) => at < day,
            Self::OnOrAfter(day) => at >= day,
        }
    }
}

/// The filters, parsed once.
#[derive(Debug, Default)]
struct Filters {
    words: Vec<String>,
    project: Option<Equality>,
    feature_type: Option<Equality>,
    created_by: Option<Equality>,
    state: Option<Equality>,
    lifecycle: Option<Equality>,
    tag: Option<(Inclusion, Vec<String>)>,
    segment: Option<(Inclusion, Vec<String>)>,
    created_at: Option<Day>,
    last_seen_at: Option<Day>,
    favorite_only: bool,
    archived: bool,
    status: Option<(String, bool)>,
}

fn malformed(field: &str, text: &str, expected: &str) -> AdminError {
    AdminError::invalid(
        format!("/query/{field}"),
        format!("The `/query/{field}` property must be {expected}. You sent {text:?}."),
    )
}

fn split(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|value| !value.is_empty())
        .map(str::to_owned)
        .collect()
}

fn equality(field: &str, text: Option<String>) -> Result<Option<Equality>, AdminError> {
    let Some(text) = text else { return Ok(None) };
    let (operator, list) = text
        .split_once(':')
        .ok_or_else(|| malformed(field, &text, "OPERATOR:values"))?;
    let negated = match operator {
        "IS" | "IS_ANY_OF" => false,
        "IS_NOT" | "IS_NONE_OF" => true,
        _ => {
            return Err(malformed(
                field,
                &text,
                "IS, IS_NOT, IS_ANY_OF or IS_NONE_OF and values",
            ));
        }
    };
    Ok(Some(Equality {
        negated,
        values: split(list),
    }))
}

fn inclusion(field: &str, text: Option<String>) -> Result<Option<(Inclusion, Vec<String>)>, AdminError> {
    let Some(text) = text else { return Ok(None) };
    let (operator, list) = text
        .split_once(':')
        .ok_or_else(|| malformed(field, &text, "OPERATOR:values"))?;
    let kind = match operator {
        "INCLUDE" | "INCLUDE_ANY_OF" => Inclusion::Any,
        "DO_NOT_INCLUDE" | "EXCLUDE_IF_ANY_OF" => Inclusion::None,
        "INCLUDE_ALL_OF" => Inclusion::All,
        "EXCLUDE_ALL" => Inclusion::NotAll,
        _ => {
            return Err(malformed(
                field,
                &text,
                "INCLUDE, DO_NOT_INCLUDE, INCLUDE_ALL_OF, INCLUDE_ANY_OF, EXCLUDE_IF_ANY_OF or EXCLUDE_ALL and values",
            ));
        }
    };
    let values = split(list);
    if field == "tag" && values.iter().any(|value| !value.contains(':')) {
        return Err(malformed(field, &text, "a list of type:value"));
    }
    Ok(Some((kind, values)))
}

fn day(field: &str, text: Option<String>) -> Result<Option<Day>, AdminError> {
    let Some(text) = text else { return Ok(None) };
    let expected = "IS_BEFORE:yyyy-MM-dd or IS_ON_OR_AFTER:yyyy-MM-dd";
    let (operator, value) = text
        .split_once(':')
        .ok_or_else(|| malformed(field, &text, expected))?;
    let at = NaiveDate::parse_from_str(value.trim(), "%Y-%m-%d")
        .ok()
        .and_then(|day| day.and_hms_opt(0, 0, 0))
        .ok_or_else(|| malformed(field, &text, expected))?;
    match operator {
        "IS_BEFORE" => Ok(Some(Day::Before(at))),
        "IS_ON_OR_AFTER" => Ok(Some(Day::OnOrAfter(at))),
        _ => Err(malformed(field, &text, expected)),
    }
}

fn boolean(field: &str, text: Option<&String>) -> Result<Option<Vec<bool>>, AdminError> {
    let Some(text) = text else { return Ok(None) };
    let list = text
        .strip_prefix("IS_ANY_OF:")
        .or_else(|| text.strip_prefix("IS:"))
        .ok_or_else(|| malformed(field, text, "IS:true or IS:false"))?;
    split(list)
        .iter()
        .map(|value| match value.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(malformed(field, text, "IS:true or IS:false")),
        })
        .collect::<Result<Vec<bool>, AdminError>>()
        .map(Some)
}

impl Filters {
    fn parse(query: &mut SearchQuery) -> Result<Self, AdminError> {
        let favorites = boolean("favorite", query.favorite.as_ref())?;
        let archived = boolean("archived", query.archived.as_ref())?;
        let status = match query.status.take() {
            None => None,
            Some(text) => {
                let (environment, state) = text.split_once(':').ok_or_else(|| {
                    malformed("status", &text, "environment:enabled or environment:disabled")
                })?;
                let enabled = match state {
                    "enabled" => true,
                    "disabled" => false,
                    _ => {
                        return Err(malformed(
                            "status",
                            &text,
                            "environment:enabled or environment:disabled",
                        ));
                    }
                };
                Some((environment.to_owned(), enabled))
            }
        };
        Ok(Self {
            words: query
                .query
                .take()
                .map(|text| {
                    split(&text)
                        .into_iter()
                        .map(|word| flag_eval::fold_case(&word))
                        .collect()
                })
                .unwrap_or_default(),
            project: equality("project", query.project.take())?,
            feature_type: equality("type", query.feature_type.take())?,
            created_by: equality("createdBy", query.created_by.take())?,
            state: equality("state", query.state.take())?,
            lifecycle: equality("lifecycle", query.lifecycle.take())?,
            tag: inclusion("tag", query.tag.take())?,
            segment: inclusion("segment", query.segment.take())?,
            created_at: day("createdAt", query.created_at.take())?,
            last_seen_at: day("lastSeenAt", query.last_seen_at.take())?,
            favorite_only: favorites.is_some_and(|values| !values.contains(&false)),
            archived: archived.is_some_and(|values| values == [true]),
            status,
        })
    }
}

fn includes(kind: Inclusion, wanted: &[String], found: &[String]) -> bool {
    let has = |value: &String| found.contains(value);
    match kind {
        Inclusion::Any => wanted.iter().any(has),
        Inclusion::None => !wanted.iter().any(has),
        Inclusion::All => wanted.iter().all(has),
        Inclusion::NotAll => !wanted.iter().all(has),
    }
}

/// Whether a flag is potentially stale: live, not marked stale, and older than its type's
/// lifetime.
pub(crate) fn potentially_stale(row: &FeatureRow, catalogue: &Catalogue, now: NaiveDateTime) -> bool {
    !row.stale
        && catalogue
            .types
            .iter()
            .find(|kind| kind.id == row.feature_type)
            .and_then(|kind| kind.lifetime_days)
            .is_some_and(|days| now - row.created_at >= chrono::Duration::days(i64::from(days)))
}

/// Who may search the flags.
pub const SEARCH: Access = Access::Read;

/// Searches the flags.
pub async fn search(ctx: &Runtime, mut query: SearchQuery) -> Result<SearchOut, AdminError> {
    let filters = Filters::parse(&mut query)?;
    let descending = match query.sort_order.as_deref() {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(other) => return Err(malformed("sortOrder", other, "asc or desc")),
    };
    let offset = query
        .offset
        .as_deref()
        .and_then(|text| text.parse::<usize>().ok())
        .unwrap_or(0);
    let limit = query
        .limit
        .as_deref()
        .and_then(|text| text.parse::<usize>().ok())
        .filter(|limit| (1..=100).contains(limit))
        .unwrap_or(50);
    let now = ctx.now();
    let catalogue = cached_catalogue(ctx, now).await?;
    let none: Vec<String> = Vec::new();
    let mut found: Vec<(
        &FeatureRow,
        Option<crate::catalogue::features::types::LifecycleOut>,
        Option<NaiveDateTime>,
    )> = Vec::new();
    for row in &catalogue.features {
        let stages = catalogue.stages.get(&row.name).map_or(&[][..], Vec::as_slice);
        let stage = current_stage(stages);
        let archived = row.archived_at.is_some();
        let wants_archived_stage = filters
            .lifecycle
            .as_ref()
            .is_some_and(|filter| !filter.negated && filter.values.iter().any(|value| value == "archived"));
        let shown = if filters.archived {
            archived
        } else if archived {
            wants_archived_stage
        } else {
            true
        };
        if !shown {
            continue;
        }
        if !archived
            && let Some(filter) = &filters.lifecycle
            && !filter.admits(stage.iter().map(|stage| stage.stage.as_str()))
        {
            continue;
        }
        let text = |value: &str| flag_eval::fold_case(value);
        if !filters.words.is_empty()
            && !filters.words.iter().any(|word| {
                text(&row.name).contains(word.as_str())
                    || row
                        .description
                        .as_deref()
                        .is_some_and(|description| text(description).contains(word.as_str()))
            })
        {
            continue;
        }
        if filters
            .project
            .as_ref()
            .is_some_and(|filter| !filter.admits(std::iter::once(row.project_id.as_str())))
            || filters
                .feature_type
                .as_ref()
                .is_some_and(|filter| !filter.admits(std::iter::once(row.feature_type.as_str())))
        {
            continue;
        }
        if let Some(filter) = &filters.created_by {
            let creator = row
                .created_by_user_id
                .map(|id| id.to_string())
                .unwrap_or_default();
            if !filter.admits(std::iter::once(creator.as_str())) {
                continue;
            }
        }
        if let Some(filter) = &filters.state {
            let mut states = vec![if row.stale { "stale" } else { "active" }];
            if potentially_stale(row, &catalogue, now) {
                states.push("potentially-stale");
            }
            if !filter.admits(states.into_iter()) {
                continue;
            }
        }
        if let Some((kind, wanted)) = &filters.tag {
            let tags: Vec<String> = catalogue
                .tags
                .get(&row.name)
                .map(|tags| {
                    tags.iter()
                        .map(|tag| format!("{}:{}", tag.tag_type, tag.value))
                        .collect()
                })
                .unwrap_or_default();
            if !includes(*kind, wanted, &tags) {
                continue;
            }
        }
        if let Some((kind, wanted)) = &filters.segment
            && !includes(*kind, wanted, catalogue.segments.get(&row.name).unwrap_or(&none))
        {
            continue;
        }
        if filters
            .created_at
            .is_some_and(|filter| !filter.admits(row.created_at))
        {
            continue;
        }
        let states = catalogue.states.get(&row.name).map_or(&[][..], Vec::as_slice);
        let last_seen = states.iter().filter_map(|state| state.last_seen_at).max();
        if let Some(filter) = filters.last_seen_at
            && !states
                .iter()
                .filter_map(|state| state.last_seen_at)
                .any(|at| filter.admits(at))
        {
            continue;
        }
        if let Some((environment, enabled)) = &filters.status
            && !states
                .iter()
                .any(|state| state.environment_name == *environment && state.enabled == *enabled)
        {
            continue;
        }
        if filters.favorite_only {
            continue;
        }
        found.push((row, stage, last_seen));
    }

    let sort_by = query.sort_by.clone().unwrap_or_else(|| "createdAt".into());
    let enabled_in = |row: &FeatureRow, environment: &str| -> Option<bool> {
        catalogue
            .states
            .get(&row.name)
            .and_then(|states| states.iter().find(|state| state.environment_name == environment))
            .map(|state| state.enabled)
    };
    let primary = |left: &(&FeatureRow, _, Option<NaiveDateTime>),
                   right: &(&FeatureRow, _, Option<NaiveDateTime>)| {
        let (a, b) = (left.0, right.0);
        let nulls_last = |x: Option<Ordering>, a_none: bool, b_none: bool| match (a_none, b_none) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => {
                let order = x.unwrap_or(Ordering::Equal);
                if descending { order.reverse() } else { order }
            }
        };
        let plain = |order: Ordering| if descending { order.reverse() } else { order };
        match sort_by.as_str() {
            "name" => plain(a.name.cmp(&b.name)),
            "type" => plain(a.feature_type.cmp(&b.feature_type)),
            "stale" => plain(a.stale.cmp(&b.stale)),
            "project" => plain(a.project_id.cmp(&b.project_id)),
            "lastSeenAt" => nulls_last(
                left.2.zip(right.2).map(|(x, y)| x.cmp(&y)),
                left.2.is_none(),
                right.2.is_none(),
            ),
            other => match other.strip_prefix("environment:") {
                Some(environment) => {
                    let (x, y) = (enabled_in(a, environment), enabled_in(b, environment));
                    nulls_last(x.zip(y).map(|(x, y)| x.cmp(&y)), x.is_none(), y.is_none())
                }
                None => plain(a.created_at.cmp(&b.created_at)),
            },
        }
    };
    found.sort_by(|left, right| {
        primary(left, right)
            .then_with(|| left.0.created_at.cmp(&right.0.created_at))
            .then_with(|| left.0.name.cmp(&right.0.name))
    });
    let total = found.len();
    let features = found
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(row, lifecycle, _)| show(row, lifecycle, &catalogue))
        .collect();
    Ok(SearchOut { features, total })
}

/// How long a catalogue read serves searches at one revision. SDK usage (each flag's last hour
/// and when an SDK last saw it) is written without an audit event, so it does not move the
/// revision: this replica's own usage writes show at once (they are commits of this process),
/// other replicas' at most this late.
pub const CATALOGUE_MAX_AGE_SECONDS: i64 = 10;

/// The catalogue as of the store's revision, read again when the revision moves, when this
/// process has committed a write since (SDK usage included), or when the one kept was read in an
/// earlier window of [`CATALOGUE_MAX_AGE_SECONDS`]. Searches at 10,000 flags read it from memory
/// instead of a dozen tables.
async fn cached_catalogue(
    ctx: &Runtime,
    now: NaiveDateTime,
) -> Result<std::sync::Arc<Catalogue>, AdminError> {
    let revision = ctx.revision().await?;
    let window = u64::try_from(now.and_utc().timestamp().div_euclid(CATALOGUE_MAX_AGE_SECONDS)).unwrap_or(0);
    let since = now - chrono::Duration::hours(1);
    let key = (window, flag_store::connection::local_commits());
    ctx.catalogue
        .get_or_build(&key, revision, |_| async move {
            let read = db::run(&ctx.store, move |conn| queries::search::catalogue(conn, since)).await?;
            Ok(std::sync::Arc::new(read))
        })
        .await
}

/// One flag as a search shows it.
fn show(
    row: &FeatureRow,
    lifecycle: Option<crate::catalogue::features::types::LifecycleOut>,
    catalogue: &Catalogue,
) -> SearchFeatureOut {
    let states = catalogue.states.get(&row.name).map_or(&[][..], Vec::as_slice);
    let mut environments: Vec<SearchEnvironmentOut> = states
        .iter()
        .map(|state| {
            let environment = catalogue
                .environments
                .iter()
                .find(|environment| environment.name == state.environment_name);
            let counts = catalogue
                .strategies
                .get(&(row.name.clone(), state.environment_name.clone()))
                .copied()
                .unwrap_or_default();
            let (yes, no) = catalogue
                .usage
                .get(&(row.name.clone(), state.environment_name.clone()))
                .copied()
                .unwrap_or_default();
            SearchEnvironmentOut {
                name: state.environment_name.clone(),
                enabled: state.enabled,
                environment_type: environment
                    .map(|environment| environment.environment_type.clone())
                    .unwrap_or_default(),
                sort_order: environment.map_or(0, |environment| environment.sort_order),
                variant_count: state.variants().map_or(0, |variants| variants.len()),
                last_seen_at: state.last_seen_at.map(crate::runtime::input::iso),
                has_strategies: counts.any(),
                has_enabled_strategies: counts.any_enabled(),
                yes,
                no,
                change_request_ids: Vec::new(),
            }
        })
        .collect();
    environments.sort_by(|left, right| {
        left.sort_order
            .cmp(&right.sort_order)
            .then_with(|| left.name.cmp(&right.name))
    });
    let creator = row
        .created_by_user_id
        .map(|id| (id, catalogue.creators.iter().find(|user| user.id == id)));
    let tags = catalogue.tags.get(&row.name).map(|tags| {
        tags.iter()
            .map(|tag| ColoredTagOut {
                value: tag.value.clone(),
                tag_type: tag.tag_type.clone(),
                color: catalogue
                    .tag_types
                    .iter()
                    .find(|kind| kind.name == tag.tag_type)
                    .and_then(|kind| kind.color.clone()),
            })
            .collect()
    });
    SearchFeatureOut {
        feature_type: row.feature_type.clone(),
        description: row.description.clone(),
        project: row.project_id.clone(),
        favorite: false,
        name: row.name.clone(),
        created_at: crate::runtime::input::iso(row.created_at),
        stale: row.stale,
        archived_at: row.archived_at.map(crate::runtime::input::iso),
        impression_data: row.impression_data,
        dependency_type: if catalogue.parents.contains(&row.name) {
            Some("parent")
        } else if catalogue.children.contains(&row.name) {
            Some("child")
        } else {
            None
        },
        environments,
        segments: catalogue.segments.get(&row.name).cloned().unwrap_or_default(),
        created_by: match creator {
            Some((id, user)) => crate::catalogue::features::types::person(id, user, ""),
            None => crate::catalogue::features::types::person(0, None, ""),
        },
        lifecycle,
        tags,
    }
}
