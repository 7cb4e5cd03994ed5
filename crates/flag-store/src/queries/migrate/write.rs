//! Writing a settled [`Installation`] as its [`Plan`] says, inside the caller's write transaction.

use std::collections::{BTreeSet, HashMap};

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::{Action, Flag, Installation, Kind, Plan};
use crate::connection::{Backend, DbConnection};
use crate::error::StoreError;
use crate::models::{Actor, EventType, NewApiToken, NewEvent, TokenProjects};
use crate::queries::{events as audit, lifecycle, to_json};
use crate::schema::{
    addons, api_tokens, context_fields, environments, events, feature_dependencies, feature_environments,
    feature_strategies, feature_strategy_segments, feature_tags, features, project_environments, projects,
    segments, strategy_types, tag_types, tags, users,
};
use crate::time::stored;

/// What the plan does with each object of `kind`, in the source's order.
fn actions(plan: &Plan, kind: Kind) -> Vec<Action> {
    plan.entries
        .iter()
        .filter(|entry| entry.kind == kind)
        .map(|entry| entry.action)
        .collect()
}

/// The objects of one kind that the plan writes, with whether each is new.
fn written<'a, T>(objects: &'a [T], plan: &Plan, kind: Kind) -> impl Iterator<Item = (&'a T, bool)> {
    objects
        .iter()
        .zip(actions(plan, kind))
        .filter(|(_, action)| *action != Action::Identical)
        .map(|(object, action)| (object, action == Action::Create))
}

pub(super) fn write(
    conn: &mut DbConnection,
    source: &Installation,
    stored_installation: &Installation,
    plan: &Plan,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let now = stored(now);
    let at = |time: Option<NaiveDateTime>| stored(time.unwrap_or(now));

    for (environment, new) in written(&source.environments, plan, Kind::Environment) {
        let values = (
            environments::environment_type.eq(&environment.environment_type),
            environments::sort_order.eq(environment.sort_order),
            environments::enabled.eq(environment.enabled),
        );
        if new {
            diesel::insert_into(environments::table)
                .values((
                    environments::name.eq(&environment.name),
                    values,
                    environments::created_at.eq(now),
                ))
                .execute(conn)?;
        } else {
            // Switching off an environment a project protects is refused, as through the API.
            let was_enabled = stored_installation
                .environments
                .iter()
                .any(|stored| stored.name == environment.name && stored.enabled);
            if was_enabled && !environment.enabled {
                crate::queries::change_requests::guard(
                    conn,
                    &NewEvent {
                        environment: Some(environment.name.clone()),
                        ..NewEvent::new(EventType::EnvironmentDisabled, &Actor::system(), now)
                    },
                )?;
            }
            diesel::update(environments::table.find(&environment.name))
                .set(values)
                .execute(conn)?;
        }
    }

    let stored_environments: HashMap<&str, &Vec<String>> = stored_installation
        .projects
        .iter()
        .map(|project| (project.id.as_str(), &project.environments))
        .collect();
    for (project, new) in written(&source.projects, plan, Kind::Project) {
        if new {
            diesel::insert_into(projects::table)
                .values((
                    projects::id.eq(&project.id),
                    projects::name.eq(&project.name),
                    projects::description.eq(&project.description),
                    projects::created_at.eq(at(project.created_at)),
                ))
                .execute(conn)?;
        } else {
            diesel::update(projects::table.find(&project.id))
                .set((
                    projects::name.eq(&project.name),
                    projects::description.eq(&project.description),
                    projects::created_at.eq(at(project.created_at)),
                ))
                .execute(conn)?;
        }
        let had = stored_environments.get(project.id.as_str());
        for environment in &project.environments {
            if had.is_none_or(|had| !had.contains(environment)) {
                diesel::insert_into(project_environments::table)
                    .values((
                        project_environments::project_id.eq(&project.id),
                        project_environments::environment_name.eq(environment),
                    ))
                    .execute(conn)?;
            }
        }
    }

    // A store that held nothing of its users' own has only the fields it was made with: those the
    // source does not have go, so that both list the same.
    if !plan.target_held_data {
        let names: Vec<&str> = source
            .context_fields
            .iter()
            .map(|field| field.name.as_str())
            .collect();
        diesel::delete(context_fields::table.filter(context_fields::name.ne_all(names))).execute(conn)?;
    }
    for (field, new) in written(&source.context_fields, plan, Kind::ContextField) {
        let legal_values = to_json("legal_values", &field.legal_values)?;
        let values = (
            context_fields::description.eq(&field.description),
            context_fields::stickiness.eq(field.stickiness),
            context_fields::sort_order.eq(field.sort_order),
            context_fields::legal_values.eq(&legal_values),
            context_fields::created_at.eq(at(field.created_at)),
        );
        if new {
            diesel::insert_into(context_fields::table)
                .values((context_fields::name.eq(&field.name), values))
                .execute(conn)?;
        } else {
            diesel::update(context_fields::table.find(&field.name))
                .set(values)
                .execute(conn)?;
        }
    }

    for (kind, new) in written(&source.strategy_types, plan, Kind::StrategyType) {
        let parameters = to_json("parameters", &kind.parameters)?;
        let values = (
            strategy_types::title.eq(&kind.title),
            strategy_types::description.eq(&kind.description),
            strategy_types::parameters.eq(&parameters),
            strategy_types::deprecated.eq(kind.deprecated),
        );
        if new {
            // A type this server does not have built in is a custom one here.
            diesel::insert_into(strategy_types::table)
                .values((
                    strategy_types::name.eq(&kind.name),
                    values,
                    strategy_types::built_in.eq(false),
                    strategy_types::created_at.eq(now),
                    strategy_types::display_name.eq(None::<String>),
                    strategy_types::sort_order.eq(crate::models::StrategyTypeRow::CUSTOM_SORT_ORDER),
                ))
                .execute(conn)?;
        } else {
            diesel::update(strategy_types::table.find(&kind.name))
                .set(values)
                .execute(conn)?;
        }
    }

    for (kind, new) in written(&source.tag_types, plan, Kind::TagType) {
        let values = (
            tag_types::description.eq(&kind.description),
            tag_types::icon.eq(&kind.icon),
            tag_types::color.eq(&kind.color),
        );
        if new {
            diesel::insert_into(tag_types::table)
                .values((
                    tag_types::name.eq(&kind.name),
                    values,
                    tag_types::created_at.eq(now),
                ))
                .execute(conn)?;
        } else {
            diesel::update(tag_types::table.find(&kind.name))
                .set(values)
                .execute(conn)?;
        }
    }
    for (tag, _) in written(&source.tags, plan, Kind::Tag) {
        diesel::insert_into(tags::table)
            .values((
                tags::tag_type.eq(&tag.tag_type),
                tags::value.eq(&tag.value),
                tags::created_at.eq(now),
            ))
            .execute(conn)?;
    }

    // Segments keep the source's ids where the store has no segment of that id, so that SDKs
    // read the same documents from both.
    let mut taken: BTreeSet<i32> = stored_installation
        .segments
        .iter()
        .filter_map(|segment| segment.id)
        .collect();
    let mut segment_ids: HashMap<String, i32> = stored_installation
        .segments
        .iter()
        .filter_map(|segment| Some((segment.name.clone(), segment.id?)))
        .collect();
    for (segment, new) in written(&source.segments, plan, Kind::Segment) {
        let constraints = to_json("constraints", &segment.constraints)?;
        let values = (
            segments::name.eq(&segment.name),
            segments::description.eq(&segment.description),
            segments::project_id.eq(&segment.project),
            segments::constraints.eq(&constraints),
            segments::created_by.eq(&segment.created_by),
            segments::created_at.eq(at(segment.created_at)),
        );
        if new {
            let id: i32 = match segment.id.filter(|id| !taken.contains(id)) {
                Some(id) => diesel::insert_into(segments::table)
                    .values((segments::id.eq(id), values))
                    .returning(segments::id)
                    .get_result(conn)?,
                None => diesel::insert_into(segments::table)
                    .values(values)
                    .returning(segments::id)
                    .get_result(conn)?,
            };
            taken.insert(id);
            segment_ids.insert(segment.name.clone(), id);
        } else if let Some(id) = segment.id {
            // Nor may a segment that a protected environment's strategy uses change.
            crate::queries::change_requests::guard(
                conn,
                &NewEvent {
                    data: Some(to_json("data", &serde_json::json!({ "id": id }))?),
                    ..NewEvent::new(EventType::SegmentUpdated, &Actor::system(), now)
                },
            )?;
            diesel::update(segments::table.find(id))
                .set(values)
                .execute(conn)?;
        }
    }

    let flags: Vec<(&Flag, bool)> = written(&source.flags, plan, Kind::Flag).collect();
    for &(flag, new) in &flags {
        // A flag written whole changes every environment it had or has: none of them may take
        // changes only through change requests.
        // (The flag as stored counts in its own project: a flag moved out of a protected project
        // changes that project's environments too.)
        let before = stored_installation
            .flags
            .iter()
            .find(|stored| stored.name == flag.name);
        let stored_places = before.into_iter().flat_map(|stored| {
            stored
                .environments
                .iter()
                .map(move |environment| (&stored.project, environment))
        });
        for (project, environment) in flag
            .environments
            .iter()
            .map(|environment| (&flag.project, environment))
            .chain(stored_places)
        {
            crate::queries::change_requests::guard(
                conn,
                &NewEvent {
                    project: Some(project.clone()),
                    environment: Some(environment.environment.clone()),
                    feature_name: Some(flag.name.clone()),
                    ..NewEvent::new(EventType::FeaturesImported, &Actor::system(), now)
                },
            )?;
        }
        write_flag(conn, flag, new, &segment_ids, now)?;
    }
    // Parents after every flag, so that a child may come before its parent.
    for &(flag, _) in &flags {
        diesel::delete(feature_dependencies::table.find(&flag.name)).execute(conn)?;
        if let Some(dependency) = &flag.dependency {
            diesel::insert_into(feature_dependencies::table)
                .values((
                    feature_dependencies::child.eq(&flag.name),
                    feature_dependencies::parent.eq(&dependency.parent),
                    feature_dependencies::enabled.eq(dependency.enabled),
                    feature_dependencies::variants.eq(to_json("variants", &dependency.variants)?),
                ))
                .execute(conn)?;
        }
    }

    let mut taken: BTreeSet<i32> = stored_installation
        .addons
        .iter()
        .filter_map(|addon| addon.id)
        .collect();
    for (addon, new) in written(&source.addons, plan, Kind::Addon) {
        let values = (
            addons::provider.eq(&addon.provider),
            addons::description.eq(&addon.description),
            addons::enabled.eq(addon.enabled),
            addons::parameters.eq(to_json("parameters", &addon.parameters)?),
            addons::events.eq(to_json("events", &addon.events)?),
            addons::projects.eq(to_json("projects", &addon.projects)?),
            addons::environments.eq(to_json("environments", &addon.environments)?),
        );
        if new {
            let id: i32 = match addon.id.filter(|id| !taken.contains(id)) {
                Some(id) => diesel::insert_into(addons::table)
                    .values((addons::id.eq(id), values, addons::created_at.eq(now)))
                    .returning(addons::id)
                    .get_result(conn)?,
                None => diesel::insert_into(addons::table)
                    .values((values, addons::created_at.eq(now)))
                    .returning(addons::id)
                    .get_result(conn)?,
            };
            taken.insert(id);
        } else if let Some(id) = addon.id {
            diesel::update(addons::table.find(id)).set(values).execute(conn)?;
        }
    }

    for (token, new) in written(&source.tokens, plan, Kind::Token) {
        let row = NewApiToken::new(
            token.name.clone(),
            token.secret_hash.clone(),
            token.token_type,
            token.environment.clone(),
            TokenProjects::from(token.projects.clone()),
            token.expires_at,
            at(token.created_at),
        );
        if new {
            diesel::insert_into(api_tokens::table)
                .values(&row)
                .execute(conn)?;
        } else {
            diesel::update(api_tokens::table.filter(api_tokens::secret_hash.eq(&token.secret_hash)))
                .set((
                    api_tokens::token_name.eq(&row.token_name),
                    api_tokens::token_type.eq(row.token_type),
                    api_tokens::environment.eq(&row.environment),
                    api_tokens::projects.eq(&row.projects),
                    api_tokens::expires_at.eq(row.expires_at),
                    api_tokens::created_at.eq(row.created_at),
                ))
                .execute(conn)?;
        }
    }

    let mut taken: BTreeSet<i32> = stored_installation
        .users
        .iter()
        .filter_map(|user| user.id)
        .collect();
    for (user, new) in written(&source.users, plan, Kind::User) {
        let values = (
            users::name.eq(&user.name),
            users::username.eq(&user.username),
            users::email.eq(&user.email),
            users::password_hash.eq(&user.password_hash),
            users::root_role.eq(user.root_role.id()),
            users::created_at.eq(at(user.created_at)),
            users::seen_at.eq(user.seen_at.map(stored)),
        );
        if new {
            let id: i32 = match user.id.filter(|id| *id > 0 && !taken.contains(id)) {
                Some(id) => diesel::insert_into(users::table)
                    .values((users::id.eq(id), values, users::login_attempts.eq(0)))
                    .returning(users::id)
                    .get_result(conn)?,
                None => diesel::insert_into(users::table)
                    .values((values, users::login_attempts.eq(0)))
                    .returning(users::id)
                    .get_result(conn)?,
            };
            taken.insert(id);
        } else if let Some(id) = user.id {
            diesel::update(users::table.find(id)).set(values).execute(conn)?;
        }
    }

    // The history has happened already: webhooks hear only what happens next.
    for (event, _) in written(&source.events, plan, Kind::Event) {
        diesel::insert_into(events::table)
            .values((
                events::event_type.eq(&event.event_type),
                events::created_by.eq(&event.created_by),
                events::created_at.eq(stored(event.created_at)),
                events::project.eq(&event.project),
                events::environment.eq(&event.environment),
                events::feature_name.eq(&event.feature_name),
                events::data.eq(&event.data),
                events::pre_data.eq(&event.pre_data),
                events::created_by_user_id.eq(event.created_by_user_id),
                events::tags.eq(&event.tags),
                events::announced.eq(true),
            ))
            .execute(conn)?;
    }

    if conn.backend() == Backend::Postgres {
        // Identity columns continue after the kept ids.
        for table in ["segments", "users", "addons"] {
            diesel::sql_query(format!(
                "SELECT setval(pg_get_serial_sequence('{table}', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM {table}"
            ))
            .execute(conn)?;
        }
    }

    let counts: serde_json::Map<String, serde_json::Value> = Kind::ALL
        .into_iter()
        .map(|kind| {
            let created = plan.count(kind, Action::Create);
            let updated = plan.count(kind, Action::Update);
            (
                kind.plural().to_owned(),
                serde_json::json!({ "created": created, "updated": updated }),
            )
        })
        .collect();
    audit::record(
        conn,
        &NewEvent {
            data: Some(to_json("data", &serde_json::json!({ "migrated": counts }))?),
            ..NewEvent::new(EventType::FeaturesImported, &Actor::system(), now)
        },
    )
}

/// Writes one flag whole: its row, its state and strategies per environment, its tags and its
/// lifecycle. A flag the store holds loses its old state first.
fn write_flag(
    conn: &mut DbConnection,
    flag: &Flag,
    new: bool,
    segment_ids: &HashMap<String, i32>,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    let created_at = stored(flag.created_at.unwrap_or(now));
    let values = (
        features::project_id.eq(&flag.project),
        features::feature_type.eq(&flag.flag_type),
        features::description.eq(&flag.description),
        features::impression_data.eq(flag.impression_data),
        features::stale.eq(flag.stale),
        features::archived_at.eq(flag.archived_at.map(stored)),
        features::created_at.eq(created_at),
        features::created_by_user_id.eq(flag.created_by_user_id),
    );
    if new {
        diesel::insert_into(features::table)
            .values((features::name.eq(&flag.name), values))
            .execute(conn)?;
    } else {
        diesel::update(features::table.find(&flag.name))
            .set(values)
            .execute(conn)?;
        let old: Vec<String> = feature_strategies::table
            .filter(feature_strategies::feature_name.eq(&flag.name))
            .select(feature_strategies::id)
            .load(conn)?;
        diesel::delete(
            feature_strategy_segments::table.filter(feature_strategy_segments::strategy_id.eq_any(&old)),
        )
        .execute(conn)?;
        diesel::delete(feature_strategies::table.filter(feature_strategies::feature_name.eq(&flag.name)))
            .execute(conn)?;
        diesel::delete(feature_environments::table.filter(feature_environments::feature_name.eq(&flag.name)))
            .execute(conn)?;
        diesel::delete(feature_tags::table.filter(feature_tags::feature_name.eq(&flag.name)))
            .execute(conn)?;
    }
    for state in &flag.environments {
        diesel::insert_into(feature_environments::table)
            .values((
                feature_environments::feature_name.eq(&flag.name),
                feature_environments::environment_name.eq(&state.environment),
                feature_environments::enabled.eq(state.enabled),
                feature_environments::variants.eq(to_json("variants", &state.variants)?),
            ))
            .execute(conn)?;
        for (order, strategy) in (0_i32..).zip(&state.strategies) {
            diesel::insert_into(feature_strategies::table)
                .values((
                    feature_strategies::id.eq(&strategy.id),
                    feature_strategies::feature_name.eq(&flag.name),
                    feature_strategies::environment_name.eq(&state.environment),
                    feature_strategies::strategy_name.eq(&strategy.name),
                    feature_strategies::title.eq(&strategy.title),
                    feature_strategies::disabled.eq(strategy.disabled),
                    feature_strategies::sort_order.eq(order),
                    feature_strategies::parameters.eq(to_json("parameters", &strategy.parameters)?),
                    feature_strategies::constraints.eq(to_json("constraints", &strategy.constraints)?),
                    feature_strategies::variants.eq(to_json("variants", &strategy.variants)?),
                    feature_strategies::created_at.eq(created_at),
                ))
                .execute(conn)?;
            for name in &strategy.segments {
                let id = segment_ids.get(name).ok_or_else(|| StoreError::Rejected {
                    message: format!(
                        "flag {}: a strategy in {} uses segment {name}, which the source does not list",
                        flag.name, state.environment
                    ),
                })?;
                diesel::insert_into(feature_strategy_segments::table)
                    .values((
                        feature_strategy_segments::strategy_id.eq(&strategy.id),
                        feature_strategy_segments::segment_id.eq(id),
                    ))
                    .execute(conn)?;
            }
        }
    }
    for tag in &flag.tags {
        diesel::insert_into(feature_tags::table)
            .values((
                feature_tags::feature_name.eq(&flag.name),
                feature_tags::tag_type.eq(&tag.tag_type),
                feature_tags::tag_value.eq(&tag.value),
                feature_tags::created_by_user_id.eq(None::<i32>),
                feature_tags::created_at.eq(created_at),
            ))
            .execute(conn)?;
    }
    if new {
        lifecycle::enter(conn, &flag.name, "initial", created_at)?;
        if let Some(archived_at) = flag.archived_at {
            lifecycle::enter(conn, &flag.name, "archived", stored(archived_at))?;
        }
    }
    Ok(())
}
