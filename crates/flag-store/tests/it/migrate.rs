//! A whole installation moved into a store (`queries::migrate`), on the backend under test: it
//! reads back as it was given, ids and times included; moving it again writes nothing and leaves
//! the revision; a store holding data is refused without `merge`, and `merge` updates only what
//! differs; a move that fails partway writes nothing.

use std::collections::BTreeMap;

use chrono::NaiveDateTime;
use flag_store::StoreError;
use flag_store::models::{LegalValue, RootRole, TokenType};
use flag_store::queries::events;
use flag_store::queries::migrate::{
    self, Action, ContextField, Dependency, Environment, Event, Flag, FlagEnvironment, Installation, Kind,
    Project, Segment, Strategy, Tag, TagType, Token, User,
};

use crate::common::{TestDb, now};

type Outcome = Result<(), Box<dyn std::error::Error>>;

fn at(text: &str) -> Result<NaiveDateTime, chrono::ParseError> {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
}

/// An installation with one of everything, every time given, as a source that says them all.
fn installation() -> Result<Installation, Box<dyn std::error::Error>> {
    let constraint = serde_json::from_value(serde_json::json!(
        {"contextName": "tenant", "operator": "IN", "values": ["acme"], "caseInsensitive": true}))?;
    let variant = serde_json::from_value(serde_json::json!(
        {"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
         "payload": {"type": "string", "value": "b"}}))?;
    let created = at("2025-01-02 03:04:05.678")?;
    let strategy = Strategy {
        id: "0f9b6c1e-1111-4222-8333-944455556666".into(),
        name: "flexibleRollout".into(),
        title: Some("Half".into()),
        disabled: false,
        parameters: BTreeMap::from([
            ("rollout".to_owned(), "50".to_owned()),
            ("stickiness".to_owned(), "default".to_owned()),
            ("groupId".to_owned(), "checkout".to_owned()),
        ]),
        constraints: vec![constraint],
        variants: vec![variant],
        segments: vec!["beta".into()],
    };
    let tag = Tag {
        tag_type: "team".into(),
        value: "web".into(),
    };
    let flag = |name: &str, archived_at: Option<NaiveDateTime>| Flag {
        name: name.into(),
        project: "payments".into(),
        flag_type: "experiment".into(),
        description: Some(format!("{name}, moved")),
        stale: true,
        impression_data: true,
        created_at: Some(created),
        created_by_user_id: Some(7),
        archived_at,
        tags: vec![tag.clone()],
        dependency: None,
        environments: vec![FlagEnvironment {
            environment: "production".into(),
            enabled: true,
            variants: Vec::new(),
            strategies: vec![Strategy {
                id: format!("{name}-strategy"),
                ..strategy.clone()
            }],
        }],
    };
    let mut child = flag("checkout-banner", None);
    child.dependency = Some(Dependency {
        parent: "checkout".into(),
        enabled: true,
        variants: vec!["blue".into()],
    });
    let event = |data: &str| Event {
        created_at: created,
        event_type: "feature-created".into(),
        created_by: "dana@example.com".into(),
        created_by_user_id: Some(7),
        project: Some("payments".into()),
        environment: None,
        feature_name: Some("checkout".into()),
        data: Some(data.into()),
        pre_data: None,
        tags: Some("[]".into()),
    };
    Ok(Installation {
        environments: vec![
            Environment {
                name: "development".into(),
                environment_type: "development".into(),
                sort_order: 2,
                enabled: true,
            },
            Environment {
                name: "production".into(),
                environment_type: "production".into(),
                sort_order: 3,
                enabled: true,
            },
        ],
        projects: vec![Project {
            id: "payments".into(),
            name: "Payments".into(),
            description: Some("Money".into()),
            created_at: Some(created),
            environments: vec!["production".into()],
        }],
        context_fields: vec![ContextField {
            name: "tenant".into(),
            description: Some("The customer".into()),
            stickiness: true,
            sort_order: 5,
            legal_values: vec![LegalValue {
                value: "acme".into(),
                description: Some("Acme".into()),
            }],
            created_at: Some(created),
        }],
        strategy_types: Vec::new(),
        tag_types: vec![TagType {
            name: "team".into(),
            description: Some("Owning team".into()),
            icon: None,
            color: Some("#ff0000".into()),
        }],
        tags: vec![tag.clone()],
        segments: vec![Segment {
            id: Some(40),
            name: "beta".into(),
            description: None,
            project: None,
            constraints: Vec::new(),
            created_by: Some("dana@example.com".into()),
            created_at: Some(created),
        }],
        flags: vec![
            flag("checkout", None),
            child,
            flag("old-thing", Some(at("2025-06-01 00:00:00")?)),
        ],
        addons: Vec::new(),
        tokens: vec![Token {
            name: "shop".into(),
            secret_hash: "a".repeat(64),
            token_type: TokenType::Backend,
            environment: "production".into(),
            projects: vec!["payments".into()],
            expires_at: None,
            created_at: Some(created),
        }],
        users: vec![User {
            id: Some(7),
            name: Some("Dana".into()),
            username: None,
            email: Some("dana@example.com".into()),
            root_role: RootRole::Editor,
            password_hash: Some("$2b$10$abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ01234".into()),
            created_at: Some(created),
            seen_at: None,
        }],
        // Two events of one instant, as one transaction writes them.
        events: vec![
            event("{\"name\":\"checkout\"}"),
            event("{\"name\":\"checkout\",\"again\":true}"),
        ],
    })
}

#[test]
fn an_installation_reads_back_as_given_and_a_second_move_writes_nothing() -> Outcome {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    let source = installation()?;

    let planned = migrate::plan(&mut conn, &source)?;
    assert!(!planned.target_held_data);
    let done = migrate::apply(&mut conn, &source, false, now())?;
    assert_eq!(done, planned);
    assert_eq!(done.count(Kind::Flag, Action::Create), 3);
    assert_eq!(done.count(Kind::Event, Action::Create), 2);

    let stored = migrate::read(&mut conn)?;
    assert_eq!(stored.flags, source.flags);
    assert_eq!(stored.segments, source.segments, "the segment keeps its id, 40");
    assert_eq!(stored.tokens, source.tokens);
    assert_eq!(
        stored.users, source.users,
        "the user keeps id 7 and the hash from Unleash"
    );
    assert_eq!(
        stored.context_fields, source.context_fields,
        "the fields the store was made with go"
    );
    assert!(stored.projects.contains(&source.projects[0]));
    assert_eq!(&stored.events[..2], &source.events[..]);
    assert_eq!(stored.events[2].event_type, "features-imported");

    let revision = events::latest_id(&mut conn)?;
    let again = migrate::apply(&mut conn, &source, true, now())?;
    assert!(!again.writes(), "{:?}", again.entries);
    assert!(
        again
            .entries
            .iter()
            .all(|entry| entry.action == Action::Identical)
    );
    assert_eq!(events::latest_id(&mut conn)?, revision, "nothing was written");
    Ok(())
}

#[test]
fn a_store_holding_data_needs_merge_which_updates_only_what_differs() -> Outcome {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    let mut source = installation()?;
    migrate::apply(&mut conn, &source, false, now())?;

    source.flags[0].description = Some("changed in the source".into());
    source.flags[0].environments[0].enabled = false;
    let mut added = source.flags[2].clone();
    added.name = "brand-new".into();
    added.environments[0].strategies[0].id = "brand-new-strategy".into();
    source.flags.push(added);

    let refused = migrate::apply(&mut conn, &source, false, now());
    assert!(
        matches!(&refused, Err(StoreError::Rejected { message }) if message.contains("--merge")),
        "{refused:?}"
    );
    assert_eq!(
        migrate::read(&mut conn)?.flags.len(),
        3,
        "a refused move writes nothing"
    );

    let merged = migrate::apply(&mut conn, &source, true, now())?;
    let flags: Vec<(&str, Action)> = merged
        .entries
        .iter()
        .filter(|entry| entry.kind == Kind::Flag)
        .map(|entry| (entry.key.as_str(), entry.action))
        .collect();
    assert_eq!(
        flags,
        [
            ("checkout", Action::Update),
            ("checkout-banner", Action::Identical),
            ("old-thing", Action::Identical),
            ("brand-new", Action::Create),
        ]
    );
    // The store lists flags by name.
    source.flags.sort_by(|left, right| left.name.cmp(&right.name));
    assert_eq!(migrate::read(&mut conn)?.flags, source.flags);
    Ok(())
}

#[test]
fn a_move_that_fails_partway_writes_nothing() -> Outcome {
    let db = TestDb::new()?;
    let mut conn = db.store.connection()?;
    let mut source = installation()?;
    // The last flag names a segment the source does not list: everything before it (projects,
    // segments, the other flags) must go too.
    source.flags[2].environments[0].strategies[0].segments = vec!["nowhere".into()];
    let failed = migrate::apply(&mut conn, &source, false, now());
    assert!(
        matches!(&failed, Err(StoreError::Rejected { message }) if message.contains("nowhere")),
        "{failed:?}"
    );
    let stored = migrate::read(&mut conn)?;
    assert!(stored.flags.is_empty() && stored.segments.is_empty() && stored.users.is_empty());
    assert!(stored.projects.iter().all(|project| project.id != "payments"));
    Ok(())
}
