//! An edge's store answers what its upstream answered: a document written with `mirror::apply`
//! reads back through `client_features` as it was written, and a change costs only the flags it
//! changed.

use flag_eval::{ClientFeatures, Dependency, Feature, Segment};
use flag_store::models::Actor;
use flag_store::queries::evaluation::{ProjectScope, client_features};
use flag_store::queries::{events, mirror};
use mirror::Fingerprints;

use crate::common;

type Outcome = Result<(), Box<dyn std::error::Error>>;

/// An upstream's document, as Unleash writes it: two projects, a segment, strategy and flag
/// variants, a dependency, a custom strategy type and a flag depending on one the scope lacks.
fn upstream() -> Result<ClientFeatures, serde_json::Error> {
    serde_json::from_value(serde_json::json!({
        "version": 2,
        "features": [
            {"name": "checkout", "type": "release", "project": "default", "enabled": true, "stale": false,
             "impressionData": true, "description": "new checkout",
             "strategies": [
                {"name": "flexibleRollout", "parameters": {"rollout": "50", "stickiness": "userId", "groupId": "checkout"},
                 "constraints": [{"contextName": "plan", "operator": "IN", "values": ["pro"], "inverted": false, "caseInsensitive": false}],
                 "segments": [7],
                 "variants": [{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "userId"}]},
                {"name": "my-custom", "parameters": {"region": "eu"}, "constraints": []}
             ],
             "variants": [{"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default",
                           "payload": {"type": "string", "value": "x"}},
                          {"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default"}]},
            {"name": "child", "type": "experiment", "project": "default", "enabled": true, "stale": true,
             "impressionData": false,
             "strategies": [{"name": "default", "parameters": {}, "constraints": []}],
             "variants": [],
             "dependencies": [{"feature": "checkout", "enabled": true, "variants": ["a"]}]},
            {"name": "orphan", "type": "release", "project": "default", "enabled": true, "stale": false,
             "impressionData": false,
             "strategies": [{"name": "default", "parameters": {}, "constraints": []}],
             "variants": [],
             "dependencies": [{"feature": "unseen-parent", "enabled": false}]},
            {"name": "mobile", "type": "operational", "project": "apps", "enabled": false, "stale": false,
             "impressionData": false, "strategies": [], "variants": []}
        ],
        "segments": [
            {"id": 7, "name": "beta", "constraints": [{"contextName": "userId", "operator": "IN", "values": ["1", "2"],
                                                        "inverted": false, "caseInsensitive": false}]}
        ]
    }))
}

/// What a document says to an SDK: its flags by project and name, and its segments' ids and
/// constraints (the edge keeps its own strategy ids, orders and segment names).
fn sdk_view(document: &ClientFeatures) -> (Vec<Feature>, Vec<(i64, String)>) {
    let mut features = document.features.clone();
    features.sort_by(|left, right| (&left.project, &left.name).cmp(&(&right.project, &right.name)));
    for feature in &mut features {
        for strategy in &mut feature.strategies {
            strategy.id = None;
            strategy.sort_order = None;
            strategy.title = None;
            strategy.disabled = None;
        }
        for dependency in &mut feature.dependencies {
            if dependency.enabled == Some(false) {
                dependency.variants = None;
            }
        }
    }
    let mut segments: Vec<(i64, String)> = document
        .segments
        .iter()
        .map(|segment| {
            (
                segment.id,
                serde_json::to_string(&segment.constraints).unwrap_or_default(),
            )
        })
        .collect();
    segments.sort();
    (features, segments)
}

fn scope(environment: &str, projects: Option<&[&str]>) -> mirror::Scope {
    mirror::Scope {
        environment: environment.into(),
        projects: projects.map(|projects| projects.iter().map(|project| (*project).to_owned()).collect()),
    }
}

#[test]
fn a_written_document_reads_back_as_the_upstream_wrote_it() -> Outcome {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let document = upstream()?;
    let (done, fingerprints) = mirror::apply(
        &mut conn,
        &scope("edge-env", None),
        &document,
        &Fingerprints::default(),
        &Actor::system(),
        common::now(),
    )?;
    assert_eq!(done.written, 4);
    assert_eq!(done.segments, 1);
    assert_eq!(fingerprints.len(), 4);
    let read = client_features(&mut conn, &ProjectScope::All, "edge-env")?;
    assert_eq!(sdk_view(&read), sdk_view(&document));
    // The dependency on a parent the document lacks stays, as the upstream's SDKs see it.
    let orphan = read
        .features
        .iter()
        .find(|feature| feature.name == "orphan")
        .ok_or("orphan is missing")?;
    assert_eq!(
        orphan.dependencies,
        vec![Dependency {
            feature: "unseen-parent".into(),
            enabled: Some(false),
            variants: None,
        }]
    );
    // A project scope reads only its projects.
    let apps = client_features(&mut conn, &ProjectScope::Only(vec!["apps".into()]), "edge-env")?;
    assert_eq!(
        apps.features
            .iter()
            .map(|feature| feature.name.as_str())
            .collect::<Vec<_>>(),
        ["mobile"]
    );
    Ok(())
}

#[test]
fn a_change_writes_only_what_changed_and_the_same_document_nothing() -> Outcome {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let everything = scope("production", None);
    let first = upstream()?;
    let (_, of_first) = mirror::apply(
        &mut conn,
        &everything,
        &first,
        &Fingerprints::default(),
        &Actor::system(),
        common::now(),
    )?;
    let revision = events::latest_id(&mut conn)?;

    let (same, _) = mirror::apply(
        &mut conn,
        &everything,
        &first,
        &of_first,
        &Actor::system(),
        common::now(),
    )?;
    assert!(!same.changed(), "{same:?}");
    assert_eq!(
        events::latest_id(&mut conn)?,
        revision,
        "no change, no new revision"
    );

    let mut second = first.clone();
    second.features.retain(|feature| feature.name != "mobile");
    if let Some(checkout) = second
        .features
        .iter_mut()
        .find(|feature| feature.name == "checkout")
    {
        checkout.enabled = false;
    }
    second.segments = vec![Segment {
        id: 7,
        name: "beta".into(),
        constraints: Vec::new(),
    }];
    let (changed, of_second) = mirror::apply(
        &mut conn,
        &everything,
        &second,
        &of_first,
        &Actor::system(),
        common::now(),
    )?;
    assert_eq!((changed.written, changed.removed, changed.segments), (1, 1, 1));
    assert!(events::latest_id(&mut conn)? > revision);
    let read = client_features(&mut conn, &ProjectScope::All, "production")?;
    assert_eq!(sdk_view(&read), sdk_view(&second));

    let (back, _) = mirror::apply(
        &mut conn,
        &everything,
        &first,
        &of_second,
        &Actor::system(),
        common::now(),
    )?;
    assert_eq!(
        back.written, 2,
        "mobile revived and checkout switched back: {back:?}"
    );
    let read = client_features(&mut conn, &ProjectScope::All, "production")?;
    assert_eq!(sdk_view(&read), sdk_view(&first));
    Ok(())
}

#[test]
fn a_project_scope_removes_only_its_own_projects_flags() -> Outcome {
    let db = common::TestDb::new()?;
    let mut conn = db.store.connection()?;
    let document = upstream()?;
    mirror::apply(
        &mut conn,
        &scope("production", None),
        &document,
        &Fingerprints::default(),
        &Actor::system(),
        common::now(),
    )?;
    // A token of project `apps` sees only `mobile`: the flags of `default` stay.
    let mut apps_only = document.clone();
    apps_only
        .features
        .retain(|feature| feature.project.as_deref() == Some("apps"));
    let (done, of_apps) = mirror::apply(
        &mut conn,
        &scope("production", Some(&["apps"])),
        &apps_only,
        &Fingerprints::default(),
        &Actor::system(),
        common::now(),
    )?;
    assert_eq!(done.removed, 0);
    let read = client_features(&mut conn, &ProjectScope::All, "production")?;
    assert_eq!(read.features.len(), 4);

    // Another scope removes `mobile`; the `apps` scope, whose last document held it unchanged,
    // brings it back live: the store, not the scope's memory, says what is live.
    let mut without_mobile = document.clone();
    without_mobile.features.retain(|feature| feature.name != "mobile");
    let (removed, _) = mirror::apply(
        &mut conn,
        &scope("development", None),
        &without_mobile,
        &Fingerprints::default(),
        &Actor::system(),
        common::now(),
    )?;
    assert_eq!(removed.removed, 1);
    let (again, _) = mirror::apply(
        &mut conn,
        &scope("production", Some(&["apps"])),
        &apps_only,
        &of_apps,
        &Actor::system(),
        common::now(),
    )?;
    assert_eq!(again.written, 1);
    let apps = client_features(&mut conn, &ProjectScope::Only(vec!["apps".into()]), "production")?;
    assert_eq!(apps.features.len(), 1);
    Ok(())
}
