//! Connects to a server, waits until the flags are in, and prints every flag's answer for each
//! context of INPUT as one JSON document (see `flag_client::report::evaluate`):
//!
//! ```text
//! cargo run --release -p flag-client --example evaluate -- --url URL --token TOKEN INPUT.json
//! ```
//!
//! URL is the API root (`http://localhost:4242/api`); `--mode polling|streaming|delta|auto`
//! chooses how the flags are fetched (`polling` by default: one fetch is all this needs).

use std::time::Duration;

use flag_client::{Client, Mode};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut url = None;
    let mut token = None;
    let mut input = None;
    let mut mode = Mode::Polling;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--url" => url = args.next(),
            "--token" => token = args.next(),
            "--mode" => {
                mode = match args.next().as_deref() {
                    Some("polling") => Mode::Polling,
                    Some("streaming") => Mode::Streaming,
                    Some("delta") => Mode::Delta,
                    Some("auto") => Mode::Auto,
                    other => {
                        return Err(format!(
                            "--mode must be polling, streaming, delta or auto, not {other:?}"
                        )
                        .into());
                    }
                }
            }
            _ if input.is_none() && !arg.starts_with("--") => input = Some(arg),
            _ => return Err(format!("unexpected argument {arg:?}").into()),
        }
    }
    let usage = "usage: evaluate --url URL --token TOKEN [--mode MODE] INPUT.json";
    let (Some(url), Some(token), Some(input)) = (url, token, input) else {
        return Err(usage.into());
    };
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(&input)?)?;
    let backup = std::env::temp_dir().join(format!("flag-client-evaluate-{}.json", std::process::id()));
    let client = Client::builder(url, token)
        .app_name("flag-client-evaluate")
        .mode(mode)
        .metrics_interval(None)
        .backup_path(&backup)
        .build()?;
    client.wait_until_ready(Duration::from_secs(30))?;
    let report = flag_client::report::evaluate(&client, &input)?;
    drop(client);
    let _ = std::fs::remove_file(&backup);
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}
