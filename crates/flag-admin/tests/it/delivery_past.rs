//! The playgrounds asked about the past, through the operations, at times a [`ManualClock`]
//! decides: every answer read back at a write's moment is the one given when it was made.

use chrono::{NaiveDateTime, TimeDelta};
use flag_admin::Settings;
use flag_admin::catalogue::{
    archive, change_requests, dependencies, environments, export, features, projects, segments, strategies,
    variants,
};
use flag_admin::delivery::playground::{self, Chunked};
use flag_admin::identity::auth::{Access, Caller};
use flag_admin::runtime::clock::ManualClock;
use flag_admin::runtime::domain::RootRole;
use serde_json::{Value, json};

use crate::common::{self, Outcome, World};

type Failure = Box<dyn std::error::Error>;

/// A whole answer, its parts joined, as JSON.
fn read(mut answer: impl Chunked) -> Result<Value, Failure> {
    let mut bytes = Vec::new();
    while let Some(chunk) = answer.next_chunk() {
        bytes.extend(chunk?);
    }
    assert!(answer.is_finished());
    Ok(serde_json::from_slice(&bytes)?)
}

/// A request body of the type an operation takes.
fn body<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    serde_json::from_value(value)
}

fn admin(access: Access) -> Caller {
    common::admin(access)
}

/// The environments every question names: one created part-way, and one that never exists.
const ENVIRONMENTS: [&str; 4] = ["development", "production", "staging", "nowhere"];

/// Both playgrounds, for a fixed set of contexts, as answered at `at` (`None`: now), each answer
/// without its echoed input and `asOf`: every flag's result with its explanation, per strategy,
/// constraint and segment.
async fn every_answer(world: &World, at: Option<NaiveDateTime>) -> Result<Vec<Value>, Failure> {
    Ok(answers_as_of(world, at).await?.0)
}

/// [`every_answer`], with the revision every answer says it answered as of (`None` for answers
/// about now, which say none).
async fn answers_as_of(
    world: &World,
    at: Option<NaiveDateTime>,
) -> Result<(Vec<Value>, Option<i64>), Failure> {
    answers_judged_at(world, at, None).await
}

/// [`answers_as_of`], with dates judged at `judged_at` (the context's `currentTime`) when given.
async fn answers_judged_at(
    world: &World,
    at: Option<NaiveDateTime>,
    judged_at: Option<NaiveDateTime>,
) -> Result<(Vec<Value>, Option<i64>), Failure> {
    let ctx = &world.ctx;
    let deprecated = admin(playground::DEPRECATED);
    let advanced = admin(playground::ADVANCED);
    let time = |at: NaiveDateTime| json!(at.and_utc().to_rfc3339_opts(chrono::SecondsFormat::Micros, true));
    let at = at.map(time);
    let judged_at = judged_at.map(time);
    let mut answers = Vec::new();
    let mut revisions = std::collections::BTreeSet::new();
    let mut keep = |mut answer: Value| {
        revisions.insert(answer["asOf"]["revision"].as_i64());
        answers.push(answer["features"].take());
    };
    // The advanced playground asks every user in every environment; the deprecated one, one
    // user in each environment and one more in one.
    let questions = ENVIRONMENTS
        .into_iter()
        .map(|environment| ("1", "pro", environment))
        .chain([("33", "", "development")]);
    for (user, plan, environment) in questions {
        {
            let mut request = json!({"environment": environment, "context": {"appName": "web", "userId": user, "properties": {"plan": plan}}});
            if let Some(at) = &at {
                request["at"] = at.clone();
            }
            if let Some(judged_at) = &judged_at {
                request["context"]["currentTime"] = judged_at.clone();
            }
            keep(read(
                playground::deprecated(ctx, ctx.delivery(), &deprecated, request).await?,
            )?);
        }
    }
    let mut request = json!({"environments": ["development", "production", "staging"], "context": {"appName": "web", "userId": "1,2,33", "plan": "pro,free"}});
    if let Some(at) = &at {
        request["at"] = at.clone();
    }
    if let Some(judged_at) = &judged_at {
        request["context"]["currentTime"] = judged_at.clone();
    }
    let mut answer = read(playground::advanced(ctx, ctx.delivery(), &advanced, request).await?)?;
    if judged_at.is_some() {
        // Each evaluation repeats its context: without the time it was given, as when none was.
        for feature in answer["features"].as_array_mut().into_iter().flatten() {
            for evaluations in feature["environments"]
                .as_object_mut()
                .into_iter()
                .flat_map(|all| all.values_mut())
            {
                for evaluation in evaluations.as_array_mut().into_iter().flatten() {
                    evaluation["context"]
                        .as_object_mut()
                        .map(|context| context.remove("currentTime"));
                }
            }
        }
    }
    keep(answer);
    let revision = match revisions.into_iter().collect::<Vec<_>>()[..] {
        [revision] => revision,
        ref several => {
            return Err(format!("answers at one moment name several revisions: {several:?}").into());
        }
    };
    assert_eq!(
        revision.is_some(),
        at.is_some(),
        "an answer about the past says which revision answered"
    );
    Ok((answers, revision))
}

/// How far the clock moves after each write, in turn: several writes in one microsecond, a
/// microsecond apart, and further.
const STEPS: [TimeDelta; 6] = [
    TimeDelta::milliseconds(1),
    TimeDelta::zero(),
    TimeDelta::microseconds(1),
    TimeDelta::milliseconds(3),
    TimeDelta::zero(),
    TimeDelta::microseconds(250),
];

/// A clock that moves only when told, and the answers taken after each write.
struct Replay {
    clock: ManualClock,
    /// The answers given at each moment a write was made at, the last write at that moment
    /// included.
    taken: Vec<(NaiveDateTime, Vec<Value>)>,
    writes: usize,
    /// Whether the last write's answers are still to be taken.
    unsettled: bool,
}

impl Replay {
    /// The replay, and a world whose operations read its clock.
    fn start(past_part: usize) -> Result<(Self, World), Failure> {
        let clock = ManualClock::from_system();
        let world = World::with(Settings {
            past_part,
            clock: clock.clock(),
            ..Settings::default()
        })?;
        // After the history began, when the store was opened.
        clock.set(flag_admin::now() + TimeDelta::milliseconds(1));
        let replay = Self {
            clock,
            taken: Vec::new(),
            writes: 0,
            unsettled: false,
        };
        Ok((replay, world))
    }

    /// Moves the clock on after a write, taking the answers first unless the next write is
    /// made at the same moment: the answers at a moment are those after its last write.
    async fn wrote(&mut self, world: &World) -> Outcome {
        let step = STEPS[self.writes % STEPS.len()];
        self.writes += 1;
        self.unsettled = step.is_zero();
        if self.unsettled {
            return Ok(());
        }
        self.taken
            .push((self.clock.now(), every_answer(world, None).await?));
        self.clock.advance(step);
        Ok(())
    }

    /// Takes the answers after the last write, when the clock did not move after it.
    async fn settle(&mut self, world: &World) -> Outcome {
        if self.unsettled {
            self.taken
                .push((self.clock.now(), every_answer(world, None).await?));
            self.unsettled = false;
        }
        Ok(())
    }

    /// Asks at every moment taken: each answer must be the one given then, as of a revision
    /// no older than the moment before's, the last one the store's newest. Every third moment is
    /// also asked halfway to the next, with dates judged at the moment itself, and must answer as
    /// at it.
    async fn read_back(&self, world: &World) -> Outcome {
        let mut revisions = Vec::new();
        for (index, (at, then)) in self.taken.iter().enumerate() {
            let (read, revision) = answers_as_of(world, Some(*at)).await?;
            assert!(
                then == &read,
                "at moment {index} ({at}) the answers differ:\nthen {then:?}\nread back {read:?}"
            );
            revisions.push(revision.unwrap_or_default());
            if let Some((next, _)) = self.taken.get(index + 1).filter(|_| index % 3 == 0) {
                let halfway = *at + (*next - *at) / 2;
                let (read, later) = answers_judged_at(world, Some(halfway), Some(*at)).await?;
                assert!(
                    then == &read,
                    "halfway after moment {index} ({halfway}) the answers differ:\nthen {then:?}\nread {read:?}"
                );
                assert_eq!(later, revision, "halfway after moment {index}");
            }
        }
        assert!(revisions.is_sorted(), "{revisions:?}");
        let newest = world.ctx.revision_now().await?;
        assert_eq!(revisions.last().copied(), Some(i64::from(newest)));
        Ok(())
    }
}

/// Awaits a write of the replay, then takes the answers after it: what the write gave back.
macro_rules! made {
    ($replay:ident, $world:ident, $call:expr) => {{
        let written = $call.await?;
        $replay.wrote($world).await?;
        written
    }};
}

/// Where each round's flag lives: every third in a second project.
fn project_of(round: usize) -> &'static str {
    if round % 3 == 2 { "second" } else { "default" }
}

fn place(project: &str, flag: &str, environment: &str) -> (String, String, String) {
    (project.to_owned(), flag.to_owned(), environment.to_owned())
}

/// Writes of every kind that changes what the playground answers, round after round, taking the
/// answers after each.
async fn drive(world: &World, replay: &mut Replay, rounds: usize) -> Outcome {
    let ctx = &world.ctx;
    replay.wrote(world).await?;
    made!(
        replay,
        world,
        projects::create(
            ctx,
            &admin(projects::CREATE),
            body(json!({"id": "second", "name": "Second"}))?,
        )
    );
    let mut segment = made!(replay, world, segments::create(
        ctx,
        &admin(segments::CREATE),
        body(json!({"name": "pros", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}))?,
    ))
    .id;
    let mut segment_name = "pros".to_owned();
    let mut spare = None;
    for round in 0..rounds {
        let project = project_of(round);
        let flag = format!("f{round:02}");
        let leaf = format!("z{round:02}");
        made!(
            replay,
            world,
            features::create(
                ctx,
                &admin(features::CREATE),
                project.into(),
                body(json!({"name": flag}))?
            )
        );

        // Strategies: a rollout with a constraint and, in turn, the segment; a date rule that
        // turns true a few writes later; variants on the strategy.
        let constraint = if round % 2 == 0 {
            json!({"contextName": "plan", "operator": "IN", "values": ["pro"]})
        } else {
            json!({"contextName": "userId", "operator": "NOT_IN", "values": ["33"]})
        };
        let rollout = made!(
            replay,
            world,
            strategies::add(
                ctx,
                &admin(strategies::ADD),
                place(project, &flag, "development"),
                body(json!({
                    "name": "flexibleRollout",
                    "title": format!("rollout {round}"),
                    "parameters": {"rollout": format!("{}", (25 + round * 15) % 100), "stickiness": "userId", "groupId": flag},
                    "constraints": [constraint],
                    "segments": if round % 3 == 0 { vec![segment] } else { vec![] },
                }))?,
            )
        );
        let soon = (replay.clock.now() + TimeDelta::milliseconds(9))
            .and_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let dated = made!(
            replay,
            world,
            strategies::add(
                ctx,
                &admin(strategies::ADD),
                place(project, &flag, "production"),
                body(json!({
                    "name": "default",
                    "constraints": [{"contextName": "currentTime", "operator": "DATE_AFTER", "value": soon}],
                    "variants": [{"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "userId"},
                                 {"name": "green", "weight": 500, "weightType": "variable", "stickiness": "userId"}],
                }))?,
            )
        );
        made!(
            replay,
            world,
            features::switch_with(
                ctx,
                &admin(features::SWITCH_WITH),
                place(project, &flag, "development"),
                true,
                body(json!({}))?,
            )
        );
        if round % 4 != 3 {
            made!(
                replay,
                world,
                features::switch_with(
                    ctx,
                    &admin(features::SWITCH_WITH),
                    place(project, &flag, "production"),
                    true,
                    body(json!({}))?,
                )
            );
        }

        // The flag's own variants: in several environments at once, then, in turn, replaced in
        // one (allowed once a flag has some).
        let payload = json!({"type": "string", "value": format!("round {round}")});
        made!(
            replay,
            world,
            variants::batch(
                ctx,
                &admin(variants::BATCH),
                project.into(),
                flag.clone(),
                json!({"environments": ["development", "production"], "variants": [
                {"name": "left", "weight": 500, "weightType": "variable", "stickiness": "userId", "payload": payload},
                {"name": "right", "weight": 500, "weightType": "variable", "stickiness": "userId"}]}),
            )
        );
        if round % 2 == 0 {
            made!(
                replay,
                world,
                variants::overwrite(
                    ctx,
                    &admin(variants::OVERWRITE),
                    place(project, &flag, "development"),
                    json!([{"name": "one", "weight": 1000, "weightType": "variable", "stickiness": "default", "payload": payload}]),
                )
            );
        }

        // A changed rollout, disabled in turn; a second strategy put first.
        made!(
            replay,
            world,
            strategies::update(
                ctx,
                &admin(strategies::UPDATE),
                place(project, &flag, "development"),
                rollout.id.clone().unwrap_or_default(),
                body(json!({
                    "name": "flexibleRollout",
                    "parameters": {"rollout": format!("{}", (60 + round * 11) % 100), "stickiness": "userId", "groupId": flag},
                    "disabled": round % 5 == 4,
                }))?,
            )
        );
        let by_id = made!(
            replay,
            world,
            strategies::add(
                ctx,
                &admin(strategies::ADD),
                place(project, &flag, "development"),
                body(
                    json!({"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["2", "33"]}]})
                )?,
            )
        );
        made!(
            replay,
            world,
            strategies::set_sort_order(
                ctx,
                &admin(strategies::SET_SORT_ORDER),
                place(project, &flag, "development"),
                body(json!([
                    {"id": by_id.id.clone().unwrap_or_default(), "sortOrder": 0},
                    {"id": rollout.id.clone().unwrap_or_default(), "sortOrder": 1},
                ]))?,
            )
        );
        if round % 3 == 1 {
            made!(
                replay,
                world,
                strategies::delete(
                    ctx,
                    &admin(strategies::DELETE),
                    place(project, &flag, "production"),
                    dated.id.clone().unwrap_or_default(),
                )
            );
        }

        // Dependencies between this round's flag and the round before's, in the same project,
        // the child listed before its parent in turn: on, off, or a variant.
        if round >= 1 && project_of(round - 1) == project {
            let (child, parent) = if round % 2 == 1 {
                (format!("f{:02}", round - 1), flag.clone())
            } else {
                (flag.clone(), format!("f{:02}", round - 1))
            };
            made!(
                replay,
                world,
                dependencies::add(
                    ctx,
                    &admin(dependencies::ADD),
                    project.into(),
                    child.clone(),
                    dependencies::types::AddDependency {
                        feature: parent,
                        enabled: Some(round % 3 != 1),
                        variants: if round % 4 == 0 {
                            vec!["left".into()]
                        } else {
                            Vec::new()
                        },
                    },
                )
            );
            if round % 5 == 2 {
                made!(
                    replay,
                    world,
                    dependencies::remove(ctx, &admin(dependencies::REMOVE), project.into(), child)
                );
            }
        }

        // The segment's rule, and segments made and deleted.
        made!(
            replay,
            world,
            segments::update(
                ctx,
                &admin(segments::UPDATE),
                segment,
                body(
                    json!({"name": segment_name, "project": (segment_name != "pros").then_some("default"), "constraints": [{"contextName": "plan", "operator": "IN", "values": if round % 2 == 0 { vec!["free"] } else { vec!["pro", "free"] }}]})
                )?,
            )
        );
        if round % 4 == 1 {
            spare = Some(
                made!(replay, world, segments::create(
                    ctx,
                    &admin(segments::CREATE),
                    body(json!({"name": format!("spare-{round}"), "project": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}))?,
                ))
                .id,
            );
        }
        if round % 4 == 2
            && let Some(id) = spare.take()
        {
            made!(replay, world, segments::delete(ctx, &admin(segments::DELETE), id));
        }
        if round % 6 == 5 {
            segment_name = format!("pros-{round}");
            let made = made!(
                replay,
                world,
                segments::create(
                    ctx,
                    &admin(segments::CREATE),
                    body(
                        json!({"name": segment_name, "project": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["2", "33"]}]})
                    )?,
                )
            );
            segment = made.id;
        }

        // Leaf flags archived, revived and deleted: z(k) is archived the round after it is
        // made, and the round after that revived (k even) or deleted (k odd).
        made!(
            replay,
            world,
            features::create(
                ctx,
                &admin(features::CREATE),
                "default".into(),
                body(json!({"name": leaf}))?
            )
        );
        made!(
            replay,
            world,
            features::switch_with(
                ctx,
                &admin(features::SWITCH_WITH),
                place("default", &leaf, "development"),
                true,
                body(json!({}))?,
            )
        );
        if round >= 1 {
            made!(
                replay,
                world,
                archive::archive_many(
                    ctx,
                    &admin(archive::ARCHIVE_MANY),
                    "default".into(),
                    body(json!({"features": [format!("z{:02}", round - 1)]}))?,
                )
            );
        }
        if round >= 2 {
            let older = json!({"features": [format!("z{:02}", round - 2)]});
            if round % 4 == 0 {
                made!(
                    replay,
                    world,
                    archive::revive_one(ctx, &admin(archive::REVIVE_ONE), format!("z{:02}", round - 2))
                );
            } else if round % 2 == 0 {
                made!(
                    replay,
                    world,
                    archive::revive_many(ctx, &admin(archive::REVIVE_MANY), "default".into(), body(older)?)
                );
            } else {
                made!(
                    replay,
                    world,
                    archive::delete_many(ctx, &admin(archive::DELETE_MANY), "default".into(), body(older)?)
                );
            }
        }

        // Environments: one made part-way, taken into the projects, then left and rejoined by one.
        if round == 2 {
            made!(
                replay,
                world,
                environments::create(
                    ctx,
                    &admin(environments::CREATE),
                    body(json!({"name": "staging", "type": "test"}))?,
                )
            );
            for project in ["default", "second"] {
                made!(
                    replay,
                    world,
                    projects::enable_environment(
                        ctx,
                        &admin(projects::ENABLE_ENVIRONMENT),
                        project.into(),
                        body(json!({"environment": "staging"}))?,
                    )
                );
            }
        }
        if round >= 2 && project == "default" {
            // Switched on with no strategy there: the default strategy is added with it.
            made!(
                replay,
                world,
                features::switch_with(
                    ctx,
                    &admin(features::SWITCH_WITH),
                    place(project, &flag, "staging"),
                    true,
                    body(json!({}))?,
                )
            );
        }
        if round >= 3 {
            match round % 4 {
                3 => made!(
                    replay,
                    world,
                    projects::disable_environment(
                        ctx,
                        &admin(projects::DISABLE_ENVIRONMENT),
                        "second".into(),
                        "staging".into(),
                    )
                ),
                1 => made!(
                    replay,
                    world,
                    projects::enable_environment(
                        ctx,
                        &admin(projects::ENABLE_ENVIRONMENT),
                        "second".into(),
                        body(json!({"environment": "staging"}))?,
                    )
                ),
                _ => {}
            }
        }

        // Several flags switched at once.
        if round % 5 == 4 {
            made!(
                replay,
                world,
                features::switch_many(
                    ctx,
                    &admin(features::SWITCH_MANY),
                    ("default".into(), "production".into()),
                    body(json!({"features": ["f00", "f01"]}))?,
                    round % 10 == 9,
                    body(json!({}))?,
                )
            );
        }

        // A copy of the round before's flag, and a flag switched off.
        if round % 4 == 0 && round >= 1 {
            made!(
                replay,
                world,
                features::clone(
                    ctx,
                    &admin(features::CLONE),
                    (project_of(round - 1).into(), format!("f{:02}", round - 1)),
                    body(json!({"name": format!("c{round:02}")}))?,
                )
            );
        }
        if round >= 2 && round % 3 == 1 {
            made!(
                replay,
                world,
                features::switch_with(
                    ctx,
                    &admin(features::SWITCH_WITH),
                    place(
                        project_of(round - 2),
                        &format!("f{:02}", round - 2),
                        "development"
                    ),
                    false,
                    body(json!({}))?,
                )
            );
        }
    }
    last_acts(world, replay).await
}

/// A user admitted to `access` in the default project.
fn person(id: i32, role: RootRole, access: Access) -> Result<Caller, flag_admin::AdminError> {
    access.admit_in(common::user(id, role), Some("default"))
}

/// The writes that come after the rounds: an import; requests applied by a person and by the
/// scheduler, once production takes changes only through them; an environment deleted.
async fn last_acts(world: &World, replay: &mut Replay) -> Outcome {
    let ctx = &world.ctx;
    let document = export::export(
        ctx,
        &admin(export::EXPORT),
        body(json!({"environment": "development", "features": ["f00", "f01"]}))?,
    )
    .await?;
    made!(
        replay,
        world,
        export::import(
            ctx,
            &person(7, RootRole::Editor, export::IMPORT)?,
            body(
                json!({"project": "default", "environment": "staging", "data": serde_json::to_value(&document)?})
            )?,
        )
    );
    made!(
        replay,
        world,
        change_requests::set_config(
            ctx,
            &admin(change_requests::SET_CONFIG),
            "default".into(),
            "production".into(),
            body(json!({"changeRequestsEnabled": true, "requiredApprovals": 1}))?,
        )
    );
    let changes = [
        json!({"feature": "f00", "action": "updateEnabled", "payload": {"enabled": false}}),
        json!({"feature": "f03", "action": "addStrategy", "payload": {"name": "default", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1"]}]}}),
    ];
    for (index, change) in changes.into_iter().enumerate() {
        let made = made!(
            replay,
            world,
            change_requests::add(
                ctx,
                &person(10, RootRole::Editor, change_requests::ADD)?,
                "default".into(),
                "production".into(),
                vec![body(change)?],
            )
        );
        for (who, role, state) in [
            (10, RootRole::Editor, "In review"),
            (11, RootRole::Admin, "Approved"),
        ] {
            made!(
                replay,
                world,
                change_requests::change_state(
                    ctx,
                    &person(who, role, change_requests::CHANGE_STATE)?,
                    "default".into(),
                    made.id,
                    body(json!({"state": state}))?,
                )
            );
        }
        let reviewer = person(11, RootRole::Admin, change_requests::CHANGE_STATE)?;
        if index == 0 {
            made!(
                replay,
                world,
                change_requests::change_state(
                    ctx,
                    &reviewer,
                    "default".into(),
                    made.id,
                    body(json!({"state": "Applied"}))?,
                )
            );
        } else {
            let due = (replay.clock.now() + TimeDelta::milliseconds(5))
                .and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            made!(
                replay,
                world,
                change_requests::change_state(
                    ctx,
                    &reviewer,
                    "default".into(),
                    made.id,
                    body(json!({"state": "Scheduled", "scheduledAt": due}))?,
                )
            );
            replay.clock.advance(TimeDelta::milliseconds(10));
            let applied = made!(replay, world, change_requests::apply_due(ctx));
            assert_eq!((applied.applied, applied.failed), (1, 0));
        }
    }
    made!(
        replay,
        world,
        environments::delete(ctx, &admin(environments::DELETE), "staging".into())
    );
    Ok(())
}

#[tokio::test]
async fn a_few_hundred_writes_of_every_kind_read_back_at_their_moments() -> Outcome {
    // The deprecated playground's past answers are written from parts of two flags, so that
    // parts and what each needs from the others are tried as well.
    let (mut replay, world) = Replay::start(2)?;
    drive(&world, &mut replay, 18).await?;
    replay.settle(&world).await?;
    assert!(replay.writes >= 300, "{} writes", replay.writes);
    replay.read_back(&world).await
}

/// One generated write, on one of [`FLAGS`] flags of the default project.
#[derive(Debug, Clone)]
enum Write {
    Create(usize),
    /// A gradual rollout, with a rule on the plan and, in turn, the segment.
    Rollout {
        flag: usize,
        environment: usize,
        percent: u8,
        segment: bool,
    },
    /// A rule on the time that turns true `after` milliseconds on, or turned true before.
    Dated {
        flag: usize,
        environment: usize,
        after: i8,
    },
    Switch {
        flag: usize,
        environment: usize,
        on: bool,
    },
    Variants {
        flag: usize,
        weight: u8,
    },
    Depend {
        child: usize,
        parent: usize,
        on: bool,
    },
    Undepend(usize),
    Segment(bool),
    Archive(usize),
    Revive(usize),
    Delete(usize),
    /// The default project leaves an environment, or takes it back.
    Environment {
        environment: usize,
        on: bool,
    },
    /// A flag's first strategy in an environment deleted.
    Unstrategy {
        flag: usize,
        environment: usize,
    },
    /// A flag copied under a name of its own (`c0` to `c3`).
    Clone {
        flag: usize,
        to: usize,
    },
}

const FLAGS: usize = 4;

fn write_of(kind: u8, a: u8, b: u8, c: u8) -> Write {
    let flag = usize::from(a) % FLAGS;
    let environment = usize::from(b) % 2;
    match kind % 15 {
        0 => Write::Create(flag),
        1 => Write::Rollout {
            flag,
            environment,
            percent: c % 101,
            segment: c.is_multiple_of(2),
        },
        2 => Write::Dated {
            flag,
            environment,
            after: c.cast_signed() / 16,
        },
        3 | 4 => Write::Switch {
            flag,
            environment,
            on: !c.is_multiple_of(3),
        },
        5 => Write::Variants { flag, weight: c },
        6 => Write::Depend {
            child: flag,
            parent: usize::from(b) % FLAGS,
            on: c.is_multiple_of(2),
        },
        7 => Write::Undepend(flag),
        8 => Write::Segment(c.is_multiple_of(2)),
        9 => match c % 3 {
            0 => Write::Archive(flag),
            1 => Write::Revive(flag),
            _ => Write::Delete(flag),
        },
        10 => Write::Environment {
            environment,
            on: c.is_multiple_of(2),
        },
        11 | 12 => Write::Unstrategy { flag, environment },
        13 => Write::Clone {
            flag,
            to: usize::from(c) % FLAGS,
        },
        _ => Write::Archive(flag),
    }
}

/// Makes `write`, at the clock's time. A write the rules refuse (a flag made twice, a
/// dependency on an archived flag) changes nothing, and is never an internal error.
async fn make(world: &World, replay: &ManualClock, segment: i32, write: &Write) -> Outcome {
    let ctx = &world.ctx;
    let name = |flag: &usize| format!("g{flag}");
    let environment = |index: &usize| ["development", "production"][*index];
    let batch = |flag: &usize| json!({"features": [name(flag)]});
    let done = match write {
        Write::Create(flag) => features::create(ctx, &admin(features::CREATE), "default".into(), body(json!({"name": name(flag)}))?)
            .await
            .map(drop),
        Write::Rollout { flag, environment: at, percent, segment: with } => strategies::add(
            ctx,
            &admin(strategies::ADD),
            place("default", &name(flag), environment(at)),
            body(json!({
                "name": "flexibleRollout",
                "parameters": {"rollout": percent.to_string(), "stickiness": "userId", "groupId": name(flag)},
                "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}],
                "segments": if *with { vec![segment] } else { vec![] },
            }))?,
        )
        .await
        .map(drop),
        Write::Dated { flag, environment: at, after } => {
            let from = (replay.now() + TimeDelta::milliseconds(i64::from(*after)))
                .and_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            strategies::add(
                ctx,
                &admin(strategies::ADD),
                place("default", &name(flag), environment(at)),
                body(json!({"name": "default", "constraints": [{"contextName": "currentTime", "operator": "DATE_AFTER", "value": from}]}))?,
            )
            .await
            .map(drop)
        }
        Write::Switch { flag, environment: at, on } => features::switch_with(
            ctx,
            &admin(features::SWITCH_WITH),
            place("default", &name(flag), environment(at)),
            *on,
            body(json!({}))?,
        )
        .await,
        Write::Variants { flag, weight } => variants::batch(
            ctx,
            &admin(variants::BATCH),
            "default".into(),
            name(flag),
            json!({"environments": ["development", "production"], "variants": [
                {"name": "left", "weight": u32::from(*weight) * 3 + 1, "weightType": "variable", "stickiness": "userId"},
                {"name": "right", "weight": 1000 - (u32::from(*weight) * 3 + 1), "weightType": "variable", "stickiness": "userId"}]}),
        )
        .await
        .map(drop),
        Write::Depend { child, parent, on } => dependencies::add(
            ctx,
            &admin(dependencies::ADD),
            "default".into(),
            name(child),
            dependencies::types::AddDependency {
                feature: name(parent),
                enabled: Some(*on),
                variants: Vec::new(),
            },
        )
        .await,
        Write::Undepend(flag) => dependencies::remove(ctx, &admin(dependencies::REMOVE), "default".into(), name(flag)).await,
        Write::Segment(pro) => segments::update(
            ctx,
            &admin(segments::UPDATE),
            segment,
            body(json!({"name": "pros", "constraints": [{"contextName": "plan", "operator": "IN", "values": if *pro { vec!["pro"] } else { vec!["free"] }}]}))?,
        )
        .await,
        Write::Archive(flag) => archive::archive_many(ctx, &admin(archive::ARCHIVE_MANY), "default".into(), body(batch(flag))?).await,
        Write::Revive(flag) => archive::revive_many(ctx, &admin(archive::REVIVE_MANY), "default".into(), body(batch(flag))?).await,
        Write::Delete(flag) => archive::delete_many(ctx, &admin(archive::DELETE_MANY), "default".into(), body(batch(flag))?).await,
        Write::Environment { environment: at, on: true } => projects::enable_environment(
            ctx,
            &admin(projects::ENABLE_ENVIRONMENT),
            "default".into(),
            body(json!({"environment": environment(at)}))?,
        )
        .await,
        Write::Environment { environment: at, on: false } => {
            projects::disable_environment(ctx, &admin(projects::DISABLE_ENVIRONMENT), "default".into(), environment(at).into()).await
        }
        Write::Unstrategy { flag, environment: at } => {
            let at = place("default", &name(flag), environment(at));
            match strategies::list(ctx, &admin(strategies::LIST), at.clone()).await {
                Ok(listed) => match listed.first() {
                    Some(first) => strategies::delete(ctx, &admin(strategies::DELETE), at, first.id.clone()).await,
                    None => Ok(()),
                },
                Err(error) => Err(error),
            }
        }
        Write::Clone { flag, to } => features::clone(
            ctx,
            &admin(features::CLONE),
            ("default".into(), name(flag)),
            body(json!({"name": format!("c{to}")}))?,
        )
        .await
        .map(drop),
    };
    match done {
        Err(flag_admin::AdminError::Internal(message)) => {
            Err(format!("{write:?} failed inside: {message}").into())
        }
        _ => Ok(()),
    }
}

/// Makes `writes`, after the flags and a segment, taking the answers after each; then asks at
/// every moment taken.
async fn replay_of(writes: &[Write]) -> Outcome {
    let (mut replay, world) = Replay::start(3)?;
    let segment = segments::create(
        &world.ctx,
        &admin(segments::CREATE),
        body(json!({"name": "pros", "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"]}]}))?,
    )
    .await?
    .id;
    replay.wrote(&world).await?;
    let created = (0..FLAGS).map(Write::Create);
    for write in created.chain(writes.iter().cloned()) {
        make(&world, &replay.clock, segment, &write).await?;
        replay.wrote(&world).await?;
    }
    replay.settle(&world).await?;
    replay.read_back(&world).await
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 10, failure_persistence: None, ..proptest::prelude::ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_writes_reads_back_at_its_moments(
        writes in proptest::collection::vec(proptest::prelude::any::<(u8, u8, u8, u8)>(), 1..32)
    ) {
        let writes: Vec<Write> = writes.into_iter().map(|(kind, a, b, c)| write_of(kind, a, b, c)).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()
            .map_err(|error| proptest::test_runner::TestCaseError::fail(error.to_string()))?;
        if let Err(error) = runtime.block_on(replay_of(&writes)) {
            return Err(proptest::test_runner::TestCaseError::fail(error.to_string()));
        }
    }
}

#[tokio::test]
async fn a_write_is_dated_once_it_holds_the_write_lock() -> Outcome {
    let (replay, world) = Replay::start(2)?;
    let asked = replay.clock.now();
    // Another write holds the lock until told to let go.
    let (held, holding) = std::sync::mpsc::channel();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let store = world.store().clone();
    let holder = tokio::task::spawn_blocking(move || -> Result<(), flag_store::StoreError> {
        let mut conn = store.connection()?;
        flag_store::queries::write_at(&mut conn, flag_admin::now, |_, _| {
            let _ = held.send(());
            let _ = released.recv();
            Ok(())
        })
    });
    holding.recv()?;
    let moved_on = asked + TimeDelta::hours(1);
    let creator = admin(features::CREATE);
    let (created, moved) = tokio::join!(
        features::create(
            &world.ctx,
            &creator,
            "default".into(),
            body(json!({"name": "waited"}))?
        ),
        async {
            // The write was asked for at `asked`, and waits; the clock moves on before it gets
            // the lock.
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            replay.clock.set(moved_on);
            release.send(())
        }
    );
    moved?;
    holder.await??;
    let created = chrono::DateTime::parse_from_rfc3339(&created?.created_at)?;
    assert!(
        created >= moved_on.and_utc() - TimeDelta::milliseconds(1),
        "{created}"
    );
    Ok(())
}
