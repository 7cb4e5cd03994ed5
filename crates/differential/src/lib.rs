//! flag-eval against Yggdrasil (`unleash-yggdrasil`, Unleash's Rust engine) on generated flag
//! sets and contexts.
//!
//! [`generate`] turns raw bytes into a [`Case`]: a client-features document and contexts that
//! exercise every operator, `caseInsensitive`, `inverted`, unparseable and empty values, unicode,
//! segments, dependencies, strategy variants, overrides and stickiness fields. [`check`] compiles
//! the document in both engines and requires `is_enabled` and `variant` to agree for every flag
//! and context. The same bytes give the same case, so the proptest (`tests/agree.rs`) and the
//! cargo-fuzz target `differential` share one generator and one verdict.
//!
//! The generator steers around the places where Yggdrasil 0.21 is known to be wrong, each listed
//! in `docs/ARCHITECTURE.md` ("Where we differ from Yggdrasil") and pinned by a flag-eval test:
//! unknown operators and missing segments (Yggdrasil turns the whole flag off), dates with other
//! than three fraction digits, all-zero variant weights (Yggdrasil panics), backslashes in values
//! (its rule grammar misreads them), empty lists for `STR_*` and `IN_CIDR` (its grammar rejects
//! them), date operators on fields other than `currentTime` (the SDKs always read the time),
//! invalid constraint definitions (flag-eval turns off only that constraint), whitespace around
//! numbers, versions and addresses, `inf` and `NaN` (the Node SDK reads JavaScript's numbers,
//! Yggdrasil Rust's), constraint numbers and dates outside the rule grammar's forms (`.5`, a
//! lower-case `t`), an empty `currentTime`, dependencies whose `variants` Yggdrasil reads
//! differently, and an empty `userId` (the Node SDK skips it for stickiness, Yggdrasil hashes it).
//! Randomness is kept out of the comparison: every context has a non-empty `userId` and a
//! `tenant`, and no rollout or variant is sticky on a field a context may lack unless a missing
//! field makes the answer certain.

use std::fmt;

use arbitrary::{Result, Unstructured};
use chrono::{DateTime, Utc};
use flag_eval::{ClientFeatures, Engine, context_from_json};
use serde_json::{Map, Value, json};

/// One generated document and the contexts to evaluate it for.
#[derive(Debug, Clone)]
pub struct Case {
    /// A client-features document (`{version, features, segments}`).
    pub document: Value,
    /// Context objects, as SDKs send them.
    pub contexts: Vec<Value>,
}

/// Where the two engines answered differently.
#[derive(Debug)]
pub struct Disagreement {
    /// The flag.
    pub flag: String,
    /// The context it was evaluated for.
    pub context: Value,
    /// What was asked: `is_enabled` or `variant`.
    pub question: &'static str,
    /// flag-eval's answer.
    pub ours: Value,
    /// Yggdrasil's answer.
    pub theirs: Value,
    /// The whole document.
    pub document: Value,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{} of {:?}: flag-eval {}, Yggdrasil {}\ncontext: {}\ndocument: {}",
            self.question, self.flag, self.ours, self.theirs, self.context, self.document
        )
    }
}

impl std::error::Error for Disagreement {}

/// Why a case could not be checked: the generator made a document one engine cannot read.
#[derive(Debug)]
pub struct Unreadable(pub String);

impl fmt::Display for Unreadable {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for Unreadable {}

/// The outcome of [`check`] on a case the engines disagree on or cannot read.
#[derive(Debug)]
pub enum Failure {
    /// The answers differ.
    Disagreement(Box<Disagreement>),
    /// A generated document or context did not deserialise: a generator bug.
    Unreadable(Unreadable),
}

impl fmt::Display for Failure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disagreement(disagreement) => disagreement.fmt(formatter),
            Self::Unreadable(problem) => problem.fmt(formatter),
        }
    }
}

impl std::error::Error for Failure {}

/// Compiles `case` in both engines and compares every flag for every context. Returns how many
/// answers were compared.
pub fn check(case: &Case) -> Result<usize, Failure> {
    let unreadable = |what: &str, error: serde_json::Error| {
        Failure::Unreadable(Unreadable(format!("{what}: {error}\n{}", case.document)))
    };
    let ours: ClientFeatures = serde_json::from_value(case.document.clone())
        .map_err(|error| unreadable("flag-eval document", error))?;
    let theirs: unleash_yggdrasil::ClientFeatures = serde_json::from_value(case.document.clone())
        .map_err(|error| unreadable("Yggdrasil document", error))?;
    let (engine, _warnings) = Engine::compile(&ours);
    let reference = unleash_yggdrasil::EngineState::initial_state(Utc::now());
    reference.take_state(unleash_yggdrasil::UpdateMessage::FullResponse(theirs));
    // Yggdrasil reads the wall clock for a context without a time; flag-eval is given the same
    // instant. Generated dates lie years away from it, so the instants need not match exactly.
    let now: DateTime<Utc> = Utc::now();

    let mut compared = 0;
    for context in &case.contexts {
        let Value::Object(fields) = context else {
            return Err(Failure::Unreadable(Unreadable(format!(
                "context is not an object: {context}"
            ))));
        };
        let their_context: unleash_yggdrasil::Context = serde_json::from_value(context.clone())
            .map_err(|error| unreadable("Yggdrasil context", error))?;
        for feature in &ours.features {
            let flag = feature.name.as_str();
            let fresh = || {
                let mut ours = context_from_json(fields);
                ours.current_time = ours.current_time.or_at(now);
                ours
            };
            let disagree = |question, ours: Value, theirs: Value| {
                Failure::Disagreement(Box::new(Disagreement {
                    flag: flag.to_owned(),
                    context: context.clone(),
                    question,
                    ours,
                    theirs,
                    document: case.document.clone(),
                }))
            };
            let enabled = engine.is_enabled(flag, &fresh());
            let their_enabled = reference.is_enabled(flag, &their_context, &None);
            if enabled != their_enabled {
                return Err(disagree("is_enabled", json!(enabled), json!(their_enabled)));
            }
            let variant = engine.variant(flag, &fresh());
            let variant = json!({
                "name": variant.name,
                "enabled": variant.enabled,
                "feature_enabled": variant.feature_enabled,
                "payload": variant.payload.map(|payload| json!({"type": payload.payload_type, "value": payload.value})),
            });
            let their_variant = reference.get_variant(flag, &their_context, &None);
            let their_variant = json!({
                "name": their_variant.name,
                "enabled": their_variant.enabled,
                "feature_enabled": their_variant.feature_enabled,
                "payload": their_variant.payload.map(|payload| json!({"type": payload.payload_type, "value": payload.value})),
            });
            if variant != their_variant {
                return Err(disagree("variant", variant, their_variant));
            }
            compared += 2;
        }
    }
    Ok(compared)
}

/// Strings for constraint values and context fields: letter case, unicode that lower-cases in
/// more than one way, quotes, commas, numbers, versions, addresses and blanks.
const STRINGS: &[&str] = &[
    "a",
    "A",
    "abc",
    "ABC",
    "aBc",
    "NO",
    "no",
    "Straße",
    "STRASSE",
    "ΣΑΣ",
    "σας",
    "σασ",
    "ΑΣ Β",
    "İstanbul",
    "i̇stanbul",
    "日本",
    "😀",
    "",
    " ",
    "a,b",
    "x\"y",
    "1",
    "1.0",
    "2.5",
    "-3",
    "10",
    "1e2",
    "1.2.3",
    "2.0.0-beta.1",
    "10.0.0.1",
    "192.168.1.7",
    "::1",
    "2001:db8::1",
    "not a date",
];

/// Numbers as constraint values: what both the rule grammar and JavaScript read alike.
const NUMBERS: &[&str] = &["0", "1", "2.5", "-3", "10", "1e2", "0.5", "100"];

/// Context values for numeric constraints, parseable or not, without padding.
const NUMBER_INPUTS: &[&str] = &[
    "0",
    "1",
    "1.0",
    "2.5",
    "-3",
    "10",
    "100",
    "1e2",
    "0.50",
    "abc",
    "",
    "1,5",
    "½",
    "Infinity",
    "-Infinity",
];

/// Dates as constraint values: zero or three fraction digits, `Z` or an offset.
const DATES: &[&str] = &[
    "2001-01-01T00:00:00Z",
    "2010-06-15T12:30:00.000Z",
    "2015-03-01T08:00:00.250+02:00",
    "2045-01-01T00:00:00Z",
    "2060-12-31T23:59:59.999-05:00",
];

/// Context times: readable ones far from today, and ones that are not dates.
const TIMES: &[&str] = &[
    "2000-01-01T00:00:00Z",
    "2012-01-01T00:00:00.5Z",
    "2015-03-01T06:00:00.250Z",
    "2050-07-01T10:00:00+01:00",
    "2050-07-01T10:00:00+0100",
    "2070-01-01T00:00:00.123456Z",
    "not a date",
    "2024-13-45T00:00:00Z",
    "yesterday",
];

const VERSIONS: &[&str] = &[
    "1.2.3",
    "2.0.0-beta.1",
    "2.0.0",
    "0.0.1",
    "10.0.0",
    "1.2.3-rc.1+build.5",
];

const VERSION_INPUTS: &[&str] = &[
    "1.2.3",
    "1.2.4",
    "2.0.0-beta.1",
    "2.0.0-beta.2",
    "2.0.0",
    "0.0.1",
    "10.0.0",
    "1.2",
    "v1.2.3",
    "",
    "x",
];

const PATTERNS: &[&str] = &[
    "^a",
    "B$",
    "[0-9]+",
    "^$",
    ".*",
    "σ",
    "ab|cd",
    "^Straße$",
    "(?i)no",
    r"^\d+\.\d+",
];

const NETWORKS: &[&str] = &[
    "10.0.0.0/8",
    "192.168.1.0/24",
    "2001:db8::/32",
    "10.0.0.1",
    "::1/128",
    "bogus",
];

const ADDRESSES: &[&str] = &[
    "10.0.0.1",
    "10.200.3.4",
    "192.168.1.7",
    "192.168.2.7",
    "::1",
    "2001:db8::1",
    "bogus",
    "",
];

/// Generates a case from `bytes`; the same bytes always give the same case.
pub fn generate(bytes: &mut Unstructured<'_>) -> Result<Case> {
    let segment_count = bytes.int_in_range(0..=3)?;
    let mut segments = Vec::new();
    for id in 1..=segment_count {
        let constraints = list(bytes, 0..=3, constraint)?;
        segments.push(json!({"id": id, "name": format!("s{id}"), "constraints": constraints}));
    }
    let flag_count = bytes.int_in_range(1..=5)?;
    let mut features = Vec::new();
    for index in 0..flag_count {
        features.push(feature(bytes, index, flag_count, segment_count)?);
    }
    steer_dependencies(&mut features);
    let contexts = list(bytes, 1..=4, context)?;
    Ok(Case {
        document: json!({"version": 2, "features": features, "segments": segments}),
        contexts,
    })
}

/// Keeps a dependency's `variants` only where Yggdrasil reads them as the Node SDK does: on a
/// dependency that wants its parent enabled, naming a parent that has variants. Yggdrasil checks
/// them on `enabled: false` dependencies too, and counts a parent without variants as matching.
fn steer_dependencies(features: &mut [Value]) {
    let with_variants: Vec<String> = features
        .iter()
        .filter(|feature| {
            feature["variants"]
                .as_array()
                .is_some_and(|variants| !variants.is_empty())
        })
        .filter_map(|feature| feature["name"].as_str().map(str::to_owned))
        .collect();
    for feature in features {
        let Some(dependencies) = feature.get_mut("dependencies").and_then(Value::as_array_mut) else {
            continue;
        };
        for dependency in dependencies {
            let parent_has_variants = dependency["feature"]
                .as_str()
                .is_some_and(|parent| with_variants.iter().any(|name| name == parent));
            let wants_enabled = dependency.get("enabled") != Some(&json!(false));
            let named = dependency["variants"]
                .as_array()
                .is_some_and(|variants| !variants.is_empty());
            if named
                && !(wants_enabled && parent_has_variants)
                && let Some(fields) = dependency.as_object_mut()
            {
                fields.remove("variants");
            }
        }
    }
}

fn list<T>(
    bytes: &mut Unstructured<'_>,
    range: std::ops::RangeInclusive<usize>,
    mut item: impl FnMut(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let count = bytes.int_in_range(range)?;
    (0..count).map(|_| item(bytes)).collect()
}

fn pick(bytes: &mut Unstructured<'_>, choices: &[&str]) -> Result<String> {
    Ok((*bytes.choose(choices)?).to_owned())
}

fn feature(
    bytes: &mut Unstructured<'_>,
    index: usize,
    flag_count: usize,
    segment_count: i64,
) -> Result<Value> {
    let name = format!("f{index}");
    let strategies = list(bytes, 0..=3, |bytes| strategy(bytes, segment_count))?;
    let mut flag = json!({
        "name": name,
        "enabled": bytes.ratio(4, 5)?,
        "strategies": strategies,
        "variants": variants(bytes, true)?,
    });
    if bytes.ratio(1, 3)? {
        let dependencies = list(bytes, 1..=2, |bytes| {
            let parent = bytes.int_in_range(0..=flag_count)?;
            // `flag_count` itself names a flag that does not exist.
            let mut dependency = json!({"feature": format!("f{parent}")});
            match bytes.int_in_range(0..=2)? {
                0 => {}
                choice => dependency["enabled"] = json!(choice == 1),
            }
            if bytes.ratio(1, 3)? {
                dependency["variants"] = json!(list(bytes, 0..=2, |bytes| pick(bytes, &["red", "blue"]))?);
            }
            Ok(dependency)
        })?;
        flag["dependencies"] = json!(dependencies);
    }
    Ok(flag)
}

/// Variants: at least one with a positive weight, sticky on a field every context has.
fn variants(bytes: &mut Unstructured<'_>, overrides: bool) -> Result<Value> {
    let count = bytes.int_in_range(0..=3)?;
    let stickiness = pick(bytes, &["default", "userId", "tenant"])?;
    let mut variants = Vec::new();
    for (index, name) in ["red", "blue", "green"].iter().take(count).enumerate() {
        let weight = if index == 0 {
            bytes.int_in_range(1..=1000)?
        } else {
            bytes.int_in_range(0..=1000)?
        };
        let mut variant =
            json!({"name": name, "weight": weight, "weightType": "variable", "stickiness": stickiness});
        if bytes.ratio(1, 2)? {
            let (kind, value) = *bytes.choose(&[
                ("string", "hello"),
                ("json", "{\"a\":1}"),
                ("number", "42"),
                ("csv", "a,b"),
            ])?;
            variant["payload"] = json!({"type": kind, "value": value});
        }
        if overrides && bytes.ratio(1, 4)? {
            let field = pick(bytes, &["userId", "tenant", "plan", "appName"])?;
            let values = list(bytes, 1..=2, |bytes| pick(bytes, STRINGS))?;
            variant["overrides"] = json!([{"contextName": field, "values": values}]);
        }
        variants.push(variant);
    }
    Ok(json!(variants))
}

fn strategy(bytes: &mut Unstructured<'_>, segment_count: i64) -> Result<Value> {
    let rollout = bytes.int_in_range(0..=100u8)?.to_string();
    let group = pick(bytes, &["g", "other", ""])?;
    let (name, parameters) = match bytes.int_in_range(0..=6)? {
        0 => ("default", json!({})),
        1 => {
            let stickiness = pick(bytes, &["default", "userId", "sessionId", "tenant", "plan"])?;
            (
                "flexibleRollout",
                json!({"rollout": rollout, "stickiness": stickiness, "groupId": group}),
            )
        }
        2 => {
            let ids = list(bytes, 1..=3, |bytes| pick(bytes, STRINGS))?;
            let separator = pick(bytes, &[",", ", "])?;
            ("userWithId", json!({"userIds": ids.join(&separator)}))
        }
        3 => (
            "gradualRolloutUserId",
            json!({"percentage": rollout, "groupId": group}),
        ),
        4 => (
            "gradualRolloutSessionId",
            json!({"percentage": rollout, "groupId": group}),
        ),
        5 => {
            let ips = list(bytes, 1..=2, |bytes| pick(bytes, &NETWORKS[..5]))?;
            ("remoteAddress", json!({"IPs": ips.join(", ")}))
        }
        _ => ("myCustomStrategy", json!({"anything": "1"})),
    };
    let mut strategy = json!({
        "name": name,
        "parameters": parameters,
        "constraints": list(bytes, 0..=3, constraint)?,
    });
    if segment_count > 0 && bytes.ratio(1, 3)? {
        let segments = list(bytes, 1..=2, |bytes| bytes.int_in_range(1..=segment_count))?;
        strategy["segments"] = json!(segments);
    }
    if bytes.ratio(1, 4)? {
        strategy["variants"] = variants(bytes, false)?;
    }
    Ok(strategy)
}

fn constraint(bytes: &mut Unstructured<'_>) -> Result<Value> {
    let operator = bytes.choose(&flag_eval::Operator::ALL)?.name();
    let field = |bytes: &mut Unstructured<'_>| -> Result<String> {
        pick(
            bytes,
            &[
                "userId",
                "sessionId",
                "environment",
                "appName",
                "remoteAddress",
                "tenant",
                "plan",
                "age",
                "version",
                "région",
            ],
        )
    };
    let mut constraint = match operator {
        "IN" | "NOT_IN" => {
            json!({"contextName": field(bytes)?, "values": list(bytes, 0..=4, |bytes| pick(bytes, STRINGS))?})
        }
        "STR_STARTS_WITH" | "STR_ENDS_WITH" | "STR_CONTAINS" => {
            let values = list(bytes, 1..=3, |bytes| {
                pick(bytes, &["a", "ab", "A", "σ", "ς", "Σ", "ss", "ß", "", "1", "."])
            })?;
            json!({"contextName": field(bytes)?, "values": values})
        }
        "NUM_EQ" | "NUM_GT" | "NUM_GTE" | "NUM_LT" | "NUM_LTE" => {
            json!({"contextName": pick(bytes, &["age", "userId", "plan"])?, "value": pick(bytes, NUMBERS)?})
        }
        "DATE_AFTER" | "DATE_BEFORE" => json!({"contextName": "currentTime", "value": pick(bytes, DATES)?}),
        "REGEX" => json!({"contextName": field(bytes)?, "value": pick(bytes, PATTERNS)?}),
        "IN_CIDR" => {
            let mut networks = list(bytes, 1..=3, |bytes| pick(bytes, NETWORKS))?;
            if networks.iter().all(|network| network == "bogus") {
                networks.push("10.0.0.0/8".to_owned());
            }
            json!({"contextName": pick(bytes, &["remoteAddress", "plan"])?, "values": networks})
        }
        _ => json!({"contextName": pick(bytes, &["version", "appName"])?, "value": pick(bytes, VERSIONS)?}),
    };
    constraint["operator"] = json!(operator);
    if bytes.ratio(1, 2)? {
        constraint["caseInsensitive"] = json!(bytes.arbitrary::<bool>()?);
    }
    if bytes.ratio(1, 2)? {
        constraint["inverted"] = json!(bytes.arbitrary::<bool>()?);
    }
    Ok(constraint)
}

fn context(bytes: &mut Unstructured<'_>) -> Result<Value> {
    let mut fields = Map::new();
    // A user id and a tenant in every context keep default and `tenant` stickiness off the random
    // source, which the two engines draw from differently.
    let user = pick(bytes, &STRINGS[..17])?;
    fields.insert("userId".into(), json!(user));
    let mut properties = Map::new();
    properties.insert("tenant".into(), json!(pick(bytes, STRINGS)?));
    for (name, choices) in [
        ("sessionId", STRINGS),
        (
            "environment",
            &["production", "development", "PRODUCTION", ""][..],
        ),
        ("appName", &["web", "WEB", "1.2.3", "2.0.0", "ios"][..]),
        ("remoteAddress", ADDRESSES),
    ] {
        if bytes.ratio(1, 2)? {
            fields.insert(name.into(), json!(pick(bytes, choices)?));
        }
    }
    if bytes.ratio(2, 3)? {
        fields.insert("currentTime".into(), json!(pick(bytes, TIMES)?));
    }
    for (name, choices) in [
        ("plan", STRINGS),
        ("age", NUMBER_INPUTS),
        ("version", VERSION_INPUTS),
        ("région", STRINGS),
    ] {
        if bytes.ratio(1, 2)? {
            properties.insert(name.into(), json!(pick(bytes, choices)?));
        }
    }
    fields.insert("properties".into(), Value::Object(properties));
    Ok(Value::Object(fields))
}
