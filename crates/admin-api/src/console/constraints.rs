//! The constraint rows strategies and segments share: one row per stored constraint and two
//! empty ones (a save offers two more), each with its field, operator, values, `inverted` and
//! `caseInsensitive`. Fields with legal values offer them; each operator says what its values
//! must read as. Without JavaScript every row is a plain form row; `console.js` only adds a row
//! on "Add a constraint" and fits the values' hint to the operator chosen.

use flag_admin::catalogue::context_fields::types::ContextFieldOut;
use flag_eval::{Constraint, Operator};
use maud::{Markup, html};

/// Empty rows offered below the stored constraints.
const EMPTY_ROWS: usize = 2;

/// What an operator's values must read as, for the hint beside them.
fn hint(operator: Operator) -> &'static str {
    let name = operator.name();
    if name.starts_with("DATE_") {
        "one date and time, RFC 3339: 2026-12-01T09:00:00Z"
    } else if name.starts_with("NUM_") {
        "one number"
    } else if name.starts_with("SEMVER_") {
        "one semantic version: 1.2.3 or 2.0.0-beta.1"
    } else if name == "REGEX" {
        "one regular expression"
    } else if name == "IN_CIDR" {
        "networks, comma-separated: 10.0.0.0/8, 192.168.1.0/24"
    } else if operator.takes_list() {
        "values, comma-separated"
    } else {
        "one value"
    }
}

/// The values of a constraint as its row shows them.
fn values_text(constraint: &Constraint) -> String {
    match &constraint.value {
        Some(value) if constraint.values.is_empty() => value.clone(),
        _ => constraint.values.join(","),
    }
}

/// The rows for `constraints`, their inputs' ids starting with `id`.
pub fn editor(id: &str, constraints: &[Constraint], fields: &[ContextFieldOut]) -> Markup {
    let rows = constraints.len() + EMPTY_ROWS;
    html! {
        fieldset.constraints data-rows=(rows) {
            legend { "Constraints: all must hold" }
            p.muted { "Leave a row's field empty to remove it. " (EMPTY_ROWS) " empty rows are offered on each save." }
            datalist id=(format!("{id}-fields")) {
                @for field in fields { option value=(field.name) { (field.description.as_deref().unwrap_or("")) } }
            }
            @for field in fields.iter().filter(|field| !field.legal_values.is_empty()) {
                datalist id=(format!("{id}-legal-{}", field.name)) {
                    @for legal in &field.legal_values { option value=(legal.value) { (legal.description.as_deref().unwrap_or("")) } }
                }
            }
            @for row in 0..rows {
                (constraint_row(id, row, constraints.get(row), fields))
            }
            p.js-only { button.secondary type="button" data-add-constraint=(id) { "Add a constraint" } }
        }
    }
}

fn constraint_row(
    id: &str,
    row: usize,
    constraint: Option<&Constraint>,
    fields: &[ContextFieldOut],
) -> Markup {
    let input = |part: &str| format!("{id}-c{row}-{part}");
    let name = |part: &str| format!("c{row}_{part}");
    let operator = constraint
        .and_then(|constraint| Operator::parse(&constraint.operator))
        .unwrap_or(Operator::ALL[0]);
    let legal = constraint.and_then(|constraint| {
        fields
            .iter()
            .find(|field| field.name == constraint.context_name && !field.legal_values.is_empty())
    });
    html! {
        div.constraint-row role="group" aria-label=(format!("Constraint {}", row + 1)) {
            div.row {
                div {
                    label for=(input("context")) { "Context field" }
                    input id=(input("context")) name=(name("context")) type="text" list=(format!("{id}-fields"))
                        autocomplete="off"
                        value=(constraint.map_or("", |constraint| constraint.context_name.as_str()));
                }
                div {
                    label for=(input("operator")) { "Operator" }
                    select id=(input("operator")) name=(name("operator")) {
                        @for choice in Operator::ALL {
                            option value=(choice.name()) data-hint=(hint(choice))
                                selected[constraint.is_some() && choice == operator] { (choice.name()) }
                        }
                    }
                }
                div.wide {
                    label for=(input("values")) { "Values" }
                    input id=(input("values")) name=(name("values")) type="text"
                        list=[legal.map(|field| format!("{id}-legal-{}", field.name))]
                        aria-describedby=(input("hint"))
                        value=(constraint.map_or_else(String::new, values_text));
                    small.muted id=(input("hint")) {
                        (hint(operator))
                        @if let Some(field) = legal {
                            ". Legal values: " (field.legal_values.iter().map(|legal| legal.value.as_str()).collect::<Vec<_>>().join(", "))
                        }
                    }
                }
            }
            div.row {
                label {
                    input name=(name("inverted")) type="checkbox" value="true"
                        checked[constraint.is_some_and(|constraint| constraint.inverted == Some(true))];
                    " Negate (holds when the rule does not)"
                }
                label {
                    input name=(name("caseInsensitive")) type="checkbox" value="true"
                        checked[constraint.is_some_and(|constraint| constraint.case_insensitive == Some(true))];
                    " Ignore letter case"
                }
            }
        }
    }
}

/// The constraints a form's rows describe, in order: a row whose field is empty is left out.
pub fn parse(fields: &[(String, String)]) -> Vec<Constraint> {
    let get = |name: &str| {
        fields
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.trim().to_owned())
    };
    let mut constraints = Vec::new();
    for row in 0.. {
        let Some(context) = get(&format!("c{row}_context")) else {
            break;
        };
        if context.is_empty() {
            continue;
        }
        let operator = get(&format!("c{row}_operator")).unwrap_or_default();
        let values = get(&format!("c{row}_values")).unwrap_or_default();
        let flag = |part: &str| get(&format!("c{row}_{part}")).as_deref() == Some("true");
        let mut constraint = Constraint {
            context_name: context,
            inverted: Some(flag("inverted")),
            case_insensitive: Some(flag("caseInsensitive")),
            ..Constraint::default()
        };
        if Operator::parse(&operator).is_some_and(|operator| !operator.takes_list()) {
            constraint.value = Some(values);
        } else {
            constraint.values = super::comma_list(&values);
        }
        constraint.operator = operator;
        constraints.push(constraint);
    }
    constraints
}

/// A constraint in words: `region is one of eu, us`, `not (plan contains pro)`.
pub fn text(constraint: &Constraint) -> String {
    let values = match &constraint.value {
        Some(value) if constraint.values.is_empty() => value.clone(),
        _ => constraint.values.join(", "),
    };
    let operator = match constraint.operator.as_str() {
        "IN" => "is one of",
        "NOT_IN" => "is not one of",
        "STR_CONTAINS" => "contains",
        "STR_STARTS_WITH" => "starts with",
        "STR_ENDS_WITH" => "ends with",
        "NUM_EQ" => "=",
        "NUM_GT" => ">",
        "NUM_GTE" => "≥",
        "NUM_LT" => "<",
        "NUM_LTE" => "≤",
        "DATE_AFTER" => "is after",
        "DATE_BEFORE" => "is before",
        "SEMVER_EQ" => "is version",
        "SEMVER_GT" => "is a version above",
        "SEMVER_LT" => "is a version below",
        "REGEX" => "matches",
        other => other,
    };
    let case = if constraint.case_insensitive == Some(true) {
        " (any case)"
    } else {
        ""
    };
    let text = format!("{} {operator} {values}{case}", constraint.context_name);
    if constraint.inverted == Some(true) {
        format!("not ({text})")
    } else {
        text
    }
}
