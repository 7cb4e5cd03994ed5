//! A Rust service embedding flag-eval: load a client-features file, evaluate and explain.
//!
//! cargo run -p examples --bin embed -- examples/data/flags.json checkout.new 42 plan=pro
use std::collections::BTreeMap;

use anyhow::{Context as _, bail};
use flag_eval::{ClientFeatures, CompileOptions, Context, Engine};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, flag, user, properties @ ..] = args.as_slice() else {
        bail!("usage: embed FLAGS.json FLAG USER_ID [NAME=VALUE...]");
    };

    // Compile once at start-up (and again whenever the file or the server's answer changes).
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let document: ClientFeatures = serde_json::from_str(&text).context("parsing the flags")?;
    let options = CompileOptions {
        hostname: std::env::var("HOSTNAME").ok(),
        ..CompileOptions::default()
    };
    let (engine, warnings) = Engine::compile_with(&document, options);
    for warning in &warnings {
        eprintln!("warning: {warning}");
    }

    // The engine reads no clock and no random source: the request brings both.
    let mut context = Context::for_user(user)
        .at(chrono::Utc::now())
        .with_random_seed(rand_seed());
    for pair in properties {
        let (name, value) = pair.split_once('=').context("properties are NAME=VALUE")?;
        context = context.with_property(name, value);
    }

    println!("{flag} enabled: {}", engine.is_enabled(flag, &context));
    println!(
        "variant: {}",
        serde_json::to_string(&engine.variant(flag, &context))?
    );

    // Why: every strategy with its constraints and segments.
    let explanation = engine
        .explain(flag, &context)
        .with_context(|| format!("no flag {flag}"))?;
    for strategy in &explanation.strategies {
        let failed: BTreeMap<&str, &str> = strategy
            .constraints
            .iter()
            .filter(|c| !c.result)
            .map(|c| (c.constraint.context_name.as_str(), c.constraint.operator.as_str()))
            .collect();
        println!(
            "  {} -> {:?}; failed constraints: {failed:?}",
            strategy.name, strategy.result.enabled
        );
    }
    Ok(())
}

/// A per-request seed from the OS hash-map key source, so random rollouts differ between runs.
fn rand_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}
