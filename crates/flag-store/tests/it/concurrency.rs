//! Concurrent writers: no lost write, no mixed write, no gap in the audit chain, and exactly one
//! user per email however many signups race.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use std::thread;

use flag_eval::Variant;
use flag_store::models::EventType;
use flag_store::models::{NewUser, RootRole, SignupTokenRow};
use flag_store::queries::variants::set_variants_batch;
use flag_store::{StoreError, queries};

use crate::common;

const THREADS: usize = 8;
const WRITES: usize = 50;

fn payload(thread: usize, write: usize) -> Vec<Variant> {
    vec![
        Variant {
            name: format!("t{thread}-w{write}-a"),
            weight: 500,
            ..Variant::default()
        },
        Variant {
            name: format!("t{thread}-w{write}-b"),
            weight: 500,
            ..Variant::default()
        },
    ]
}

/// The Viewer root role, as the admin API gives invited users.
const VIEWER: i32 = 3;

#[test]
fn concurrent_variants_batches_never_lose_or_mix_writes() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    common::feature(&mut *db.store.connection()?, "contended")?;
    let environments = vec!["development".to_owned(), "production".to_owned()];
    let barrier = Arc::new(Barrier::new(THREADS));

    let handles: Vec<_> = (0..THREADS)
        .map(|thread| {
            let store = db.store.clone();
            let environments = environments.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || -> Result<(), StoreError> {
                barrier.wait();
                for write in 0..WRITES {
                    let mut conn = store.connection()?;
                    set_variants_batch(
                        &mut conn,
                        "default",
                        "contended",
                        &environments,
                        &payload(thread, write),
                        &flag_store::models::Actor {
                            name: format!("thread-{thread}"),
                            user_id: 1,
                        },
                        common::now(),
                    )?;
                }
                Ok(())
            })
        })
        .collect();
    for handle in handles {
        handle.join().map_err(|_| "writer panicked")??;
    }

    let mut conn = db.store.connection()?;
    let written: BTreeSet<Vec<String>> = (0..THREADS)
        .flat_map(|thread| (0..WRITES).map(move |write| payload(thread, write)))
        .map(|variants| variants.into_iter().map(|variant| variant.name).collect())
        .collect();
    let development = queries::variants::get(&mut conn, "default", "contended", "development")?;
    let production = queries::variants::get(&mut conn, "default", "contended", "production")?;
    let names = |variants: &[Variant]| {
        variants
            .iter()
            .map(|variant| variant.name.clone())
            .collect::<Vec<_>>()
    };
    assert!(
        written.contains(&names(&development)),
        "mixed final state {development:?}"
    );
    assert_eq!(development, production, "environments diverged");

    for environment in &environments {
        let events = queries::events::for_feature(&mut conn, "contended", environment)?;
        let updates: Vec<_> = events
            .iter()
            .filter(|event| event.event_type == EventType::FeatureEnvironmentVariantsUpdated.as_str())
            .collect();
        assert_eq!(
            updates.len(),
            THREADS * WRITES,
            "one event per accepted write in {environment}"
        );
        assert_eq!(updates[0].pre_data.as_deref(), Some(r#"{"variants":[]}"#));
        for pair in updates.windows(2) {
            assert_eq!(
                pair[1].pre_data, pair[0].data,
                "gap in the audit chain of {environment}"
            );
        }
        let last: serde_json::Value = serde_json::from_str(
            updates[updates.len() - 1]
                .data
                .as_deref()
                .unwrap_or(r#"{"variants":[]}"#),
        )?;
        let last: Vec<Variant> = serde_json::from_value(last["variants"].clone())?;
        assert_eq!(last, development);
    }
    Ok(())
}

#[test]
fn racing_signups_with_one_email_create_exactly_one_user() -> Result<(), Box<dyn std::error::Error>> {
    const RACERS: usize = 20;
    let db = common::TestDb::with_pool_size(RACERS as u32)?;
    let now = common::now();
    queries::signup_tokens::create(
        &mut *db.store.connection()?,
        &SignupTokenRow {
            secret: "0123456789abcdef0123456789abcdef".into(),
            name: "race".into(),
            url: None,
            role_id: VIEWER,
            enabled: true,
            expires_at: now + chrono::Duration::days(1),
            created_at: now,
            created_by: Some("test".into()),
        },
        &flag_store::models::Actor::system(),
    )?;
    let barrier = Arc::new(Barrier::new(RACERS));
    let handles: Vec<_> = (0..RACERS)
        .map(|racer| {
            let store = db.store.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || -> Result<Result<i32, StoreError>, StoreError> {
                // Every letter-case variant of one address.
                let email: String = "racer@example.com"
                    .chars()
                    .enumerate()
                    .map(|(index, c)| {
                        if (racer >> (index % 5)) & 1 == 1 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect();
                let user = NewUser {
                    name: Some(format!("Racer {racer}")),
                    username: None,
                    email: Some(email),
                    password_hash: Some("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA".into()),
                    root_role: RootRole::Admin,
                    created_at: common::now(),
                };
                // Check out after the barrier: a thread that failed before it would strand the rest.
                barrier.wait();
                let mut conn = store.connection()?;
                Ok(queries::signup_tokens::sign_up(
                    &mut conn,
                    "0123456789abcdef0123456789abcdef",
                    &user,
                    common::now(),
                )
                .map(|row| row.id))
            })
        })
        .collect();

    let (mut created, mut conflicts) = (0, 0);
    for handle in handles {
        match handle.join().map_err(|_| "signup panicked")?? {
            Ok(_) => created += 1,
            Err(StoreError::Conflict { entity: "user", key }) => {
                assert_eq!(key, "email");
                conflicts += 1;
            }
            Err(other) => return Err(format!("unexpected error {other}").into()),
        }
    }
    assert_eq!((created, conflicts), (1, RACERS - 1));
    let mut conn = db.store.connection()?;
    let users = queries::users::list(&mut conn)?;
    assert_eq!(users.len(), 1);
    assert_eq!(users[0].email.as_deref(), Some("racer@example.com"));
    // The role comes from the token, whatever the caller asked for.
    assert_eq!(users[0].root_role, RootRole::Viewer);
    let token = queries::signup_tokens::get(&mut conn, "0123456789abcdef0123456789abcdef")?;
    assert_eq!(token.users.len(), 1);
    Ok(())
}

#[test]
fn duplicate_usernames_conflict_too() -> Result<(), Box<dyn std::error::Error>> {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let user = |email: &str| NewUser {
        name: None,
        username: Some("sam".into()),
        email: Some(email.into()),
        password_hash: None,
        root_role: RootRole::Viewer,
        created_at: common::now(),
    };
    queries::users::create(
        &mut conn,
        &user("a@example.com"),
        &flag_store::models::Actor::system(),
    )?;
    let error = queries::users::create(
        &mut conn,
        &user("b@example.com"),
        &flag_store::models::Actor::system(),
    )
    .err();
    assert!(
        matches!(&error, Some(StoreError::Conflict { entity: "user", key }) if key == "username"),
        "{error:?}"
    );
    Ok(())
}

/// Replicas starting at the same moment on one new database (on PostgreSQL, one new schema) all
/// open it: the schema is created once, under the migration lock, and committed before the next
/// replica looks for it; the migrations run once.
#[test]
fn replicas_opening_one_new_database_at_once_all_succeed() -> Result<(), Box<dyn std::error::Error>> {
    for _ in 0..5 {
        let scratch = flag_store::scratch::Scratch::new()?;
        let barrier = Arc::new(Barrier::new(THREADS));
        let openers: Vec<_> = (0..THREADS)
            .map(|_| {
                let config = scratch.config.clone();
                let barrier = Arc::clone(&barrier);
                thread::spawn(move || {
                    barrier.wait();
                    flag_store::Store::open(&config).map(|_| ())
                })
            })
            .collect();
        for opener in openers {
            opener.join().map_err(|_| "an opening thread panicked")??;
        }
        let store = scratch.open()?;
        let mut conn = store.connection()?;
        assert_eq!(queries::environments::list(&mut conn)?.len(), 2, "seeded once");
    }
    Ok(())
}
