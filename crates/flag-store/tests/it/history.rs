//! The playground's history: after any sequence of writes, each at a time of the test's
//! choosing, the configuration read back at each of those times is exactly what the playground
//! read right after that write.

use std::collections::BTreeMap;

use chrono::{NaiveDateTime, TimeDelta};
use flag_eval::{ClientFeatures, Constraint, Variant};
use flag_store::models::{Actor, FeatureRow, NewSegment, ProjectRow};
use flag_store::queries::evaluation::{ProjectScope, playground_input};
use flag_store::queries::features::{FeatureMetadata, Switch};
use flag_store::queries::history;
use flag_store::queries::strategies::StrategyInput;
use flag_store::{DbConnection, StoreError, queries};
use proptest::prelude::*;

use crate::common;

/// One write, its targets chosen by small indices.
#[derive(Debug, Clone)]
enum Write {
    Create(u8),
    Switch(u8, u8, bool),
    AddStrategy(u8, u8, u8),
    UpdateStrategy(u8, u8, u8),
    DeleteStrategy(u8, u8),
    Reorder(u8, u8),
    Variants(u8, u8, u8),
    Depend(u8, u8, bool),
    Undepend(u8),
    Archive(u8),
    Revive(u8),
    Delete(u8),
    Stale(u8, bool),
    Describe(u8, u8),
    CreateSegment(u8),
    UpdateSegment(u8, u8),
    DeleteSegment(u8),
}

const FLAGS: u8 = 6;
const ENVIRONMENTS: [&str; 2] = ["development", "production"];
/// The environments read: those written to, and one that never exists.
const READ: [&str; 3] = ["development", "production", "nowhere"];

fn flag(index: u8) -> String {
    format!("flag-{}", index % FLAGS)
}

/// Flags with an odd index live in project `other`.
fn project(index: u8) -> &'static str {
    if index % FLAGS % 2 == 1 {
        "other"
    } else {
        "default"
    }
}

fn environment(index: u8) -> &'static str {
    ENVIRONMENTS[usize::from(index) % ENVIRONMENTS.len()]
}

fn constraint(field: &str, operator: &str, values: &[&str]) -> Constraint {
    Constraint {
        context_name: field.into(),
        operator: operator.into(),
        values: values.iter().map(|value| (*value).to_owned()).collect(),
        ..Constraint::default()
    }
}

fn strategy(kind: u8, segments: &[i32]) -> StrategyInput {
    match kind % 4 {
        0 => StrategyInput {
            name: "default".into(),
            ..StrategyInput::default()
        },
        1 => StrategyInput {
            name: "flexibleRollout".into(),
            parameters: BTreeMap::from([
                ("rollout".into(), format!("{}", 10 + u32::from(kind) % 90)),
                ("stickiness".into(), "userId".into()),
                ("groupId".into(), "group".into()),
            ]),
            constraints: vec![constraint("region", "IN", &["eu", "us"])],
            ..StrategyInput::default()
        },
        2 => StrategyInput {
            name: "default".into(),
            title: Some(format!("kind {kind}")),
            constraints: vec![constraint(
                "currentTime",
                "DATE_AFTER",
                &["2031-01-01T00:00:00.000Z"],
            )],
            segments: segments.iter().copied().take(1).collect(),
            variants: vec![Variant {
                name: format!("v{kind}"),
                weight: 1000,
                ..Variant::default()
            }],
            ..StrategyInput::default()
        },
        _ => StrategyInput {
            name: "userWithId".into(),
            disabled: kind % 8 == 3,
            parameters: BTreeMap::from([("userIds".into(), "a,b,c".into())]),
            ..StrategyInput::default()
        },
    }
}

/// Makes `write` at `now`; a write the store refuses (a missing flag, an orphaned child) makes
/// nothing, as it would for a user.
fn make(conn: &mut DbConnection, write: &Write, now: NaiveDateTime) -> Result<(), StoreError> {
    let actor = Actor::system();
    let segments: Vec<i32> = queries::segments::list(conn)?.iter().map(|row| row.id).collect();
    let first_strategy =
        |conn: &mut DbConnection, index: u8, env: u8| -> Result<Option<String>, StoreError> {
            Ok(queries::strategies::list(conn, &flag(index), environment(env))?
                .into_iter()
                .find_map(|strategy| strategy.id))
        };
    match write {
        Write::Create(index) => queries::features::create(
            conn,
            &FeatureRow {
                name: flag(*index),
                project_id: project(*index).into(),
                feature_type: "release".into(),
                description: None,
                impression_data: false,
                stale: false,
                archived_at: None,
                created_at: now,
                created_by_user_id: None,
            },
            &actor,
        )
        .map(drop),
        Write::Switch(index, env, on) => queries::features::switch(
            conn,
            project(*index),
            &flag(*index),
            environment(*env),
            Switch {
                enabled: *on,
                activate_disabled: false,
            },
            &actor,
            now,
        ),
        Write::AddStrategy(index, env, kind) => queries::strategies::add(
            conn,
            project(*index),
            &flag(*index),
            environment(*env),
            &strategy(*kind, &segments),
            &actor,
            now,
        )
        .map(drop),
        Write::UpdateStrategy(index, env, kind) => match first_strategy(conn, *index, *env)? {
            Some(id) => queries::strategies::update(
                conn,
                project(*index),
                &flag(*index),
                environment(*env),
                &id,
                &strategy(*kind, &segments),
                &actor,
                now,
            )
            .map(drop),
            None => Ok(()),
        },
        Write::DeleteStrategy(index, env) => match first_strategy(conn, *index, *env)? {
            Some(id) => queries::strategies::delete(
                conn,
                project(*index),
                &flag(*index),
                environment(*env),
                &id,
                &actor,
                now,
            ),
            None => Ok(()),
        },
        Write::Reorder(index, env) => {
            let rows = queries::strategies::list(conn, &flag(*index), environment(*env))?;
            let count = i32::try_from(rows.len()).unwrap_or(i32::MAX);
            let orders: Vec<(String, i32)> = rows
                .into_iter()
                .zip((0..count).rev())
                .filter_map(|(strategy, order)| Some((strategy.id?, order)))
                .collect();
            queries::strategies::set_sort_order(
                conn,
                project(*index),
                &flag(*index),
                environment(*env),
                &orders,
                &actor,
                now,
            )
        }
        Write::Variants(index, env, count) => queries::variants::set_variants_batch(
            conn,
            project(*index),
            &flag(*index),
            &[environment(*env).to_owned()],
            &(0..count % 3)
                .map(|n| Variant {
                    name: format!("variant-{n}"),
                    weight: 1000 / i64::from(count % 3),
                    weight_type: Some("variable".into()),
                    stickiness: Some("default".into()),
                    ..Variant::default()
                })
                .collect::<Vec<_>>(),
            &actor,
            now,
        )
        .map(drop),
        Write::Depend(child, parent, enabled) => queries::dependencies::set(
            conn,
            project(*child),
            &flag(*child),
            &flag(*parent),
            *enabled,
            &[],
            &actor,
            now,
        ),
        Write::Undepend(child) => {
            queries::dependencies::remove(conn, project(*child), &flag(*child), &actor, now)
        }
        Write::Archive(index) => {
            queries::archive::archive(conn, project(*index), &[flag(*index)], &actor, now)
        }
        Write::Revive(index) => queries::archive::revive(conn, project(*index), &[flag(*index)], &actor, now),
        Write::Delete(index) => queries::archive::delete(conn, None, &[flag(*index)], &actor, now),
        Write::Stale(index, stale) => {
            queries::archive::set_stale(conn, project(*index), &[flag(*index)], *stale, &actor, now)
        }
        Write::Describe(index, kind) => queries::features::update_metadata(
            conn,
            project(*index),
            &flag(*index),
            &FeatureMetadata {
                feature_type: if kind.is_multiple_of(2) {
                    "release"
                } else {
                    "experiment"
                }
                .into(),
                description: (!kind.is_multiple_of(3)).then(|| format!("described {kind}")),
                stale: false,
                impression_data: kind % 4 == 1,
                archived: false,
            },
            true,
            &actor,
            now,
        )
        .map(drop),
        Write::CreateSegment(kind) => queries::segments::create(
            conn,
            &NewSegment {
                name: format!("segment-{kind}"),
                description: None,
                project_id: None,
                constraints: serde_json::to_string(&[constraint("plan", "IN", &["pro"])]).unwrap_or_default(),
                created_by: Some("test".into()),
                created_at: now,
            },
            &actor,
        )
        .map(drop),
        Write::UpdateSegment(index, kind) => {
            match segments.get(usize::from(*index) % segments.len().max(1)) {
                Some(&id) => {
                    let row = queries::segments::get(conn, id)?;
                    queries::segments::update(
                        conn,
                        id,
                        &NewSegment {
                            name: row.name,
                            description: None,
                            project_id: None,
                            constraints: serde_json::to_string(&[constraint(
                                "plan",
                                "IN",
                                &[&format!("tier-{kind}")],
                            )])
                            .unwrap_or_default(),
                            created_by: Some("test".into()),
                            created_at: now,
                        },
                        &actor,
                        now,
                    )
                    .map(drop)
                }
                None => Ok(()),
            }
        }
        Write::DeleteSegment(index) => match segments.get(usize::from(*index) % segments.len().max(1)) {
            Some(&id) => queries::segments::delete(conn, id, &actor, now),
            None => Ok(()),
        },
    }
}

/// What the playground reads now, for each environment and scope the test asks about.
fn read_all(conn: &mut DbConnection) -> Result<Vec<ClientFeatures>, StoreError> {
    let mut documents = Vec::new();
    for scope in scopes() {
        for environment in READ {
            documents.push(playground_input(conn, &scope, environment)?);
        }
    }
    Ok(documents)
}

fn scopes() -> [ProjectScope; 2] {
    [ProjectScope::All, ProjectScope::Only(vec!["other".into()])]
}

/// The same, read back from the history at `at`; each read a part at a time too, in parts of
/// one to three flags, which must give the same flags in the same order, each part with the
/// parents its flags have outside it.
fn read_all_at(
    conn: &mut DbConnection,
    at: NaiveDateTime,
) -> Result<Vec<ClientFeatures>, Box<dyn std::error::Error>> {
    let revision = history::revision_at(conn, at)?;
    let mut documents = Vec::new();
    for scope in scopes() {
        for environment in READ {
            let document = history::playground_input_at(conn, &scope, environment, revision)?;
            for size in 1..=3 {
                let past = history::past_flags(conn, &scope, environment, revision)?;
                assert_eq!(past.len(), document.features.len());
                assert_eq!(past.segments, document.segments);
                let mut read = Vec::new();
                for part in past.parts(0..usize::MAX, size, |feature| feature) {
                    let part = part?;
                    let names: Vec<&str> = part.flags.iter().map(|flag| flag.name.as_str()).collect();
                    assert_eq!(part.names, names);
                    let mut outside: Vec<&flag_eval::Feature> = document
                        .features
                        .iter()
                        .filter(|parent| {
                            !names.contains(&parent.name.as_str())
                                && part.flags.iter().any(|flag| {
                                    flag.dependencies
                                        .iter()
                                        .any(|dependency| dependency.feature == parent.name)
                                })
                        })
                        .collect();
                    outside.sort_by(|left, right| left.name.cmp(&right.name));
                    let parents: Vec<&flag_eval::Feature> = part.parents.iter().collect();
                    if parents != outside {
                        return Err(format!(
                            "at {at}, parts of {size}: parents {parents:?}, wanted {outside:?}"
                        )
                        .into());
                    }
                    read.extend(part.flags);
                }
                if read != document.features {
                    return Err(format!("at {at}, parts of {size} read other flags than the whole").into());
                }
                if size != 2 {
                    continue;
                }
                // Only the flags asked for are read.
                let middle = 1..document.features.len().saturating_sub(1);
                let past = history::past_flags(conn, &scope, environment, revision)?;
                let mut some = Vec::new();
                for part in past.parts(middle.clone(), size, |feature| feature) {
                    some.extend(part?.flags);
                }
                if some.as_slice() != document.features.get(middle).unwrap_or_default() {
                    return Err(format!("at {at}, parts of {size} of the middle read other flags").into());
                }
            }
            documents.push(document);
        }
    }
    Ok(documents)
}

/// Creates project `other`, with every environment, at `at`.
fn other_project(conn: &mut DbConnection, at: NaiveDateTime) -> Result<(), StoreError> {
    queries::projects::create(
        conn,
        &ProjectRow {
            id: "other".into(),
            name: "Other".into(),
            description: None,
            created_at: at,
        },
        None,
        &Actor::system(),
    )
    .map(drop)
}

/// Creates flag `name` in project `other`, dated `at`.
fn other_flag(conn: &mut DbConnection, name: &str, at: NaiveDateTime) -> Result<(), StoreError> {
    queries::features::create(
        conn,
        &FeatureRow {
            name: name.into(),
            project_id: "other".into(),
            feature_type: "release".into(),
            description: None,
            impression_data: false,
            stale: false,
            archived_at: None,
            created_at: at,
            created_by_user_id: None,
        },
        &Actor::system(),
    )
    .map(drop)
}

/// Makes `writes` one second apart, and checks that the history read at each write's time,
/// and half a second later, is what the playground read just after it.
fn replay(writes: &[Write]) -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    // After the history began, when the store opened.
    let start = common::now() + TimeDelta::days(1);
    other_project(&mut conn, start)?;
    let mut taken = vec![(start, read_all(&mut conn)?)];
    let mut made = 0;
    for (index, write) in writes.iter().enumerate() {
        let at = start + TimeDelta::seconds(i64::try_from(index).unwrap_or(0) + 1);
        // Refused writes are part of the sequence: they must change nothing.
        made += usize::from(make(&mut conn, write, at).is_ok());
        taken.push((at, read_all(&mut conn)?));
    }
    // The sequence is worth replaying: most writes were made, and they changed what was read.
    let changes = taken.windows(2).filter(|pair| pair[0].1 != pair[1].1).count();
    if writes.len() >= 100 && (made * 2 < writes.len() || changes * 3 < writes.len()) {
        return Err(format!(
            "of {} writes only {made} were made and {changes} changed anything",
            writes.len()
        )
        .into());
    }
    for (index, (at, documents)) in taken.iter().enumerate() {
        for when in [*at, *at + TimeDelta::milliseconds(500)] {
            let read = read_all_at(&mut conn, when)?;
            for (position, (then, back)) in documents.iter().zip(&read).enumerate() {
                if then != back {
                    return Err(format!(
                        "after write {index} ({:?}), at {when}, document {position} differs:\nthen {}\nread back {}",
                        writes.get(index.wrapping_sub(1)),
                        serde_json::to_string(then)?,
                        serde_json::to_string(back)?
                    )
                    .into());
                }
            }
        }
    }
    Ok(())
}

/// A fixed sequence of a few hundred writes of every kind, from a small xorshift generator.
fn fixed_sequence(count: usize) -> Vec<Write> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        u8::try_from(state % 251).unwrap_or(0)
    };
    let mut writes: Vec<Write> = (0..FLAGS).map(Write::Create).collect();
    writes.push(Write::CreateSegment(0));
    while writes.len() < count {
        let (a, b, c) = (next(), next(), next());
        writes.push(write_of(next(), a, b, c));
    }
    writes
}

fn write_of(kind: u8, a: u8, b: u8, c: u8) -> Write {
    match kind % 17 {
        0 => Write::Create(a),
        1 | 2 => Write::Switch(a, b, c.is_multiple_of(2)),
        3 | 4 => Write::AddStrategy(a, b, c),
        5 => Write::UpdateStrategy(a, b, c),
        6 => Write::DeleteStrategy(a, b),
        7 => Write::Reorder(a, b),
        8 => Write::Variants(a, b, c),
        9 => Write::Depend(a, b, c.is_multiple_of(2)),
        10 => Write::Undepend(a),
        11 => Write::Archive(a),
        12 => Write::Revive(a),
        13 => Write::Delete(a),
        14 => Write::Stale(a, b.is_multiple_of(2)),
        15 => Write::Describe(a, b),
        _ => match c % 3 {
            0 => Write::CreateSegment(a),
            1 => Write::UpdateSegment(a, b),
            _ => Write::DeleteSegment(a),
        },
    }
}

#[test]
fn three_hundred_writes_of_every_kind_read_back_at_each_of_their_times()
-> Result<(), Box<dyn std::error::Error>> {
    replay(&fixed_sequence(300))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_writes_reads_back_at_each_of_their_times(
        writes in proptest::collection::vec((any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()), 1..40)
    ) {
        let mut sequence: Vec<Write> = (0..FLAGS).map(Write::Create).collect();
        sequence.extend(writes.into_iter().map(|(kind, a, b, c)| write_of(kind, a, b, c)));
        if let Err(error) = replay(&sequence) {
            return Err(TestCaseError::fail(error.to_string()));
        }
    }
}

#[test]
fn the_history_answers_from_when_it_began() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let start = history::start(&mut conn)?.ok_or("the history has not begun")?;
    assert!(start <= common::now());
    // Beginning again changes nothing.
    history::begin(&mut conn, common::now() + TimeDelta::days(1))?;
    assert_eq!(history::start(&mut conn)?, Some(start));
    Ok(())
}

#[test]
fn a_flag_read_at_a_moment_has_the_environments_its_project_had_then()
-> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let conn = &mut conn;
    let actor = Actor::system();
    let start = common::now() + TimeDelta::days(1);
    let at = |seconds: i64| start + TimeDelta::seconds(seconds);
    other_project(conn, start)?;
    other_flag(conn, "lone", at(1))?;
    // Off with no strategies, its definition there is the same with the environment or without.
    queries::projects::disable_environment(conn, "other", "production", &actor, at(2))?;
    queries::projects::enable_environment(conn, "other", "production", &actor, at(3))?;
    for (seconds, had) in [(1, true), (2, false), (3, true)] {
        let revision = history::revision_at(conn, at(seconds) + TimeDelta::milliseconds(500))?;
        let flag = history::flag_at(conn, "lone", revision)?.ok_or("no flag then")?;
        let production = flag
            .environments
            .iter()
            .find(|(name, _, _)| name == "production")
            .ok_or("no production then")?;
        assert_eq!(production.1, had, "at {seconds} s: {flag:?}");
    }
    Ok(())
}

#[test]
fn a_write_dated_before_the_one_before_it_is_dated_at_that_ones_time()
-> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let conn = &mut conn;
    let start = common::now() + TimeDelta::days(1);
    let at = |millis: i64| start + TimeDelta::milliseconds(millis);
    other_project(conn, start)?;
    // Two writes that asked for their times in one order and committed in the other, as a
    // replica whose clock runs behind would write them.
    other_flag(conn, "late", at(2000))?;
    other_flag(conn, "early", at(1000))?;
    let between = history::revision_at(conn, at(1500))?;
    assert!(history::flag_at(conn, "late", between)?.is_none());
    assert!(history::flag_at(conn, "early", between)?.is_none());
    let after = history::revision_at(conn, at(2000))?;
    assert!(history::flag_at(conn, "late", after)?.is_some());
    assert!(history::flag_at(conn, "early", after)?.is_some());
    Ok(())
}

#[test]
fn events_carried_over_with_their_old_dates_do_not_bring_later_writes_earlier()
-> Result<(), Box<dyn std::error::Error>> {
    use diesel::prelude::*;
    use flag_store::schema::events;
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let conn = &mut conn;
    let start = common::now() + TimeDelta::days(1);
    let at = |millis: i64| start + TimeDelta::milliseconds(millis);
    other_project(conn, start)?;
    other_flag(conn, "local", at(1000))?;
    // An event from another installation's history, written after with its own, older date,
    // then the write that carried it over.
    let carried = |conn: &mut DbConnection| -> Result<(), StoreError> {
        diesel::insert_into(events::table)
            .values((
                events::event_type.eq("feature-created"),
                events::created_by.eq("someone"),
                events::created_at.eq(start - TimeDelta::days(30)),
                events::feature_name.eq("elsewhere"),
                events::announced.eq(true),
            ))
            .execute(conn)?;
        Ok(())
    };
    carried(conn)?;
    other_flag(conn, "moved", at(2000))?;
    let before_local = history::revision_at(conn, at(500))?;
    assert!(history::flag_at(conn, "local", before_local)?.is_none());
    let between = history::revision_at(conn, at(1500))?;
    assert!(history::flag_at(conn, "local", between)?.is_some());
    assert!(history::flag_at(conn, "moved", between)?.is_none());
    let after = history::revision_at(conn, at(2000))?;
    assert!(history::flag_at(conn, "moved", after)?.is_some());
    Ok(())
}
