//! Variant rows, shared by a flag's variants editor and a strategy's variants: a name, a
//! variable or fixed weight, a payload, and overrides, per row; rows whose name is empty are
//! left out on save.

use std::collections::BTreeMap;

use flag_eval::model::Override;
use flag_eval::{Payload, Variant};
use maud::{Markup, html};

/// The rows for `stored` and `extra` empty ones, their fields named `{prefix}{row}_…` and their
/// inputs' ids `{prefix}{row}-…`.
pub fn rows(prefix: &str, stored: &[Variant], extra: usize) -> Markup {
    html! {
        @for row in 0..stored.len() + extra {
            @let variant = stored.get(row);
            @let id = |part: &str| format!("{prefix}{row}-{part}");
            @let name = |part: &str| format!("{prefix}{row}_{part}");
            fieldset {
                legend { "Variant " (row + 1) }
                div.row {
                    div {
                        label for=(id("name")) { "Name" }
                        input id=(id("name")) name=(name("name")) type="text"
                            value=(variant.map_or("", |variant| variant.name.as_str()));
                    }
                    div {
                        label for=(id("type")) { "Weight" }
                        select id=(id("type")) name=(name("weightType")) {
                            option value="variable" selected[variant.is_none_or(|variant| variant.weight_type.as_deref() != Some("fix"))] { "variable" }
                            option value="fix" selected[variant.is_some_and(|variant| variant.weight_type.as_deref() == Some("fix"))] { "fixed" }
                        }
                    }
                    div {
                        label for=(id("percent")) { "Fixed %" }
                        input id=(id("percent")) name=(name("percent")) type="number" min="0" max="100" step="0.1"
                            value=(variant.filter(|variant| variant.weight_type.as_deref() == Some("fix"))
                                .map(|variant| format!("{:.1}", variant.weight as f64 / 10.0)).unwrap_or_default());
                    }
                }
                div.row {
                    div {
                        label for=(id("payload-type")) { "Payload type" }
                        select id=(id("payload-type")) name=(name("payloadType")) {
                            @for kind in ["", "string", "json", "csv", "number"] {
                                option value=(kind) selected[variant.and_then(|variant| variant.payload.as_ref()).map_or("", |payload| payload.payload_type.as_str()) == kind] {
                                    (if kind.is_empty() { "none" } else { kind })
                                }
                            }
                        }
                    }
                    div.wide {
                        label for=(id("payload")) { "Payload" }
                        input id=(id("payload")) name=(name("payload")) type="text"
                            value=(variant.and_then(|variant| variant.payload.as_ref()).map_or("", |payload| payload.value.as_str()));
                    }
                }
                input type="hidden" name=(name("stickiness"))
                    value=(variant.and_then(|variant| variant.stickiness.as_deref()).unwrap_or("default"));
                label for=(id("overrides")) { "Overrides: field=value,value; field=value" }
                input id=(id("overrides")) name=(name("overrides")) type="text"
                    value=(variant.map_or_else(String::new, |variant| variant.overrides.iter()
                        .map(|rule| format!("{}={}", rule.context_name, rule.values.join(",")))
                        .collect::<Vec<_>>().join("; ")));
            }
        }
    }
}

/// The variants the rows named `{prefix}{row}_…` describe, in order.
pub fn parse(fields: &[(String, String)], prefix: &str) -> Vec<Variant> {
    let mut by_name: BTreeMap<&str, &str> = BTreeMap::new();
    for (key, value) in fields {
        by_name.insert(key, value);
    }
    let get = |key: String| by_name.get(key.as_str()).map_or("", |value| value.trim());
    let mut variants = Vec::new();
    for row in 0.. {
        if !by_name.contains_key(format!("{prefix}{row}_name").as_str()) {
            break;
        }
        let name = get(format!("{prefix}{row}_name"));
        if name.is_empty() {
            continue;
        }
        let fixed = get(format!("{prefix}{row}_weightType")) == "fix";
        let stickiness = match get(format!("{prefix}{row}_stickiness")) {
            "" => "default",
            stickiness => stickiness,
        };
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a percentage of at most 100, in tenths"
        )]
        let weight = if fixed {
            let percent: f64 = get(format!("{prefix}{row}_percent")).parse().unwrap_or(-1.0);
            (percent * 10.0).round() as i64
        } else {
            0
        };
        let payload_type = get(format!("{prefix}{row}_payloadType"));
        let payload = (!payload_type.is_empty()).then(|| Payload {
            payload_type: payload_type.to_owned(),
            value: get(format!("{prefix}{row}_payload")).to_owned(),
        });
        let overrides = get(format!("{prefix}{row}_overrides"))
            .split(';')
            .filter_map(|rule| rule.split_once('='))
            .map(|(field, values)| Override {
                context_name: field.trim().to_owned(),
                values: super::comma_list(values),
            })
            .collect();
        variants.push(Variant {
            name: name.to_owned(),
            weight,
            weight_type: Some(if fixed { "fix" } else { "variable" }.to_owned()),
            stickiness: Some(stickiness.to_owned()),
            payload,
            overrides,
        });
    }
    variants
}
