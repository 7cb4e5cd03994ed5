//! Context field definitions.

use crate::connection::DbConnection;
use diesel::prelude::*;
use flag_eval::{Constraint, Operator};

use crate::error::StoreError;
use crate::models::{Actor, ContextFieldRow, EventType, NewEvent};
use crate::queries::{events, refuse_unreadable};
use crate::schema::context_fields;

/// All fields, by sort order then name.
pub fn list(conn: &mut DbConnection) -> Result<Vec<ContextFieldRow>, StoreError> {
    Ok(context_fields::table
        .order((context_fields::sort_order.asc(), context_fields::name.asc()))
        .select(ContextFieldRow::as_select())
        .load(conn)?)
}

/// Creates a field; a taken name is a conflict, and legal values that
/// [`ContextFieldRow::legal_values`] cannot read are [`StoreError::Rejected`].
pub fn create(
    conn: &mut DbConnection,
    row: &ContextFieldRow,
    actor: &Actor,
) -> Result<ContextFieldRow, StoreError> {
    row.legal_values().map_err(refuse_unreadable)?;
    events::insert_with_event!(
        conn,
        context_fields::table,
        row,
        NewEvent::new(EventType::ContextFieldCreated, actor, row.created_at)
            .with_data(&serde_json::json!({"name": row.name}))?
    )
}

/// Checks each constraint against its context field's legal values, as Unleash does for strategy
/// and segment constraints: when the field lists any, every value of a list operator, and the
/// value of a number, date or version operator, must be one of them. A constraint on a field
/// without legal values, or on an unknown field, passes. A value outside them is
/// [`StoreError::Rejected`], naming the constraint, the value and the field.
pub fn check_legal_values(conn: &mut DbConnection, constraints: &[Constraint]) -> Result<(), StoreError> {
    for (index, constraint) in constraints.iter().enumerate() {
        let field = context_fields::table
            .find(&constraint.context_name)
            .select(ContextFieldRow::as_select())
            .first(conn)
            .optional()?;
        let Some(field) = field else {
            continue;
        };
        let legal = field.legal_values()?;
        if legal.is_empty() {
            continue;
        }
        let single = Operator::parse(&constraint.operator).is_some_and(|operator| {
            matches!(
                operator,
                Operator::NumEq
                    | Operator::NumGt
                    | Operator::NumGte
                    | Operator::NumLt
                    | Operator::NumLte
                    | Operator::DateAfter
                    | Operator::DateBefore
                    | Operator::SemverEq
                    | Operator::SemverGt
                    | Operator::SemverGte
                    | Operator::SemverLt
                    | Operator::SemverLte
            )
        });
        let mut candidates: Box<dyn Iterator<Item = &String>> = if single {
            Box::new(constraint.value.iter())
        } else {
            Box::new(constraint.values.iter())
        };
        if let Some(outside) = candidates.find(|value| !legal.iter().any(|allowed| &allowed.value == *value))
        {
            return Err(StoreError::Rejected {
                message: format!(
                    "constraints/{index}: {outside:?} is not a legal value of the context field {}",
                    field.name
                ),
            });
        }
    }
    Ok(())
}
