//! Context fields: list and create.

pub mod types;

use flag_store::models::{ContextFieldRow, LegalValue};
use flag_store::queries;

use crate::catalogue::context_fields::types::{
    ContextFieldOut, ContextStrategiesOut, CreateContextField, LegalValueIn, UpdateContextField,
};
use crate::catalogue::segments::types::{NameIn, StrategyUseOut};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::runtime::domain::ResourceName;
use crate::runtime::error::Detail;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may list the context fields.
pub const LIST: Access = Access::Read;

/// Every context field.
pub async fn list(ctx: &Runtime) -> Result<Vec<ContextFieldOut>, AdminError> {
    let rows = db::run(&ctx.store, queries::context_fields::list_with_usage).await?;
    Ok(rows
        .into_iter()
        .map(ContextFieldOut::try_from)
        .collect::<Result<_, _>>()?)
}

/// Who may list a project's context fields.
pub const OF_PROJECT: Access = Access::Read;

/// The context fields a project's strategies may use: every field, since fields are not scoped
/// to projects here.
pub async fn of_project(ctx: &Runtime, project: String) -> Result<Vec<ContextFieldOut>, AdminError> {
    db::run(&ctx.store, move |conn| queries::projects::get(conn, &project)).await?;
    list(ctx).await
}

/// Who may create a context field.
pub const CREATE: Access = Access::Root(Permission::CreateContextField);

/// Creates a context field; its sort order is 0 unless the request says otherwise, as in Unleash.
/// The answer is the field as a read of it answers (legal values included), which Terraform
/// compares with what it wrote.
pub async fn create(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateContextField,
) -> Result<ContextFieldOut, AdminError> {
    check_legal_values(&request.legal_values)?;
    let row = ContextFieldRow::new(
        request.name.into_string(),
        request.description,
        request.stickiness,
        request.sort_order.unwrap_or(0),
        &request.legal_values,
        ctx.now(),
    )?;
    let row = caller
        .write(ctx, move |conn, actor, _| {
            queries::context_fields::create(conn, &row, actor)
        })
        .await?;
    Ok(ContextFieldOut::try_from(row)?)
}

/// Who may read a context field.
pub const GET: Access = Access::Read;

/// One context field.
pub async fn get(ctx: &Runtime, name: String) -> Result<ContextFieldOut, AdminError> {
    let row = db::run(&ctx.store, move |conn| queries::context_fields::get(conn, &name)).await?;
    Ok(ContextFieldOut::try_from(row)?)
}

/// Who may change a context field.
pub const UPDATE: Access = Access::Root(Permission::UpdateContextField);

/// Replaces a field's stickiness and legal values (none when absent), and its description and
/// order when given.
pub async fn update(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    request: UpdateContextField,
) -> Result<(), AdminError> {
    check_legal_values(&request.legal_values)?;
    caller
        .write(ctx, move |conn, actor, now| {
            let before = queries::context_fields::get(conn, &name)?;
            let row = ContextFieldRow::new(
                name,
                request.description.or(before.description),
                request.stickiness,
                request.sort_order.unwrap_or(before.sort_order),
                &request.legal_values,
                before.created_at,
            )?;
            queries::context_fields::update(conn, &row, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may add a legal value to a context field.
pub const ADD_LEGAL_VALUE: Access = Access::Root(Permission::UpdateContextField);

/// Adds a legal value to a field, or replaces the description of one it has.
pub async fn add_legal_value(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    request: LegalValueIn,
) -> Result<(), AdminError> {
    let value = LegalValue {
        value: request.value,
        description: request.description,
    };
    check_legal_values(std::slice::from_ref(&value))?;
    change_legal_values(ctx, caller, name, move |values| {
        match values.iter_mut().find(|existing| existing.value == value.value) {
            Some(existing) => *existing = value,
            None => values.push(value),
        }
    })
    .await
}

/// Who may remove a legal value from a context field.
pub const REMOVE_LEGAL_VALUE: Access = Access::Root(Permission::UpdateContextField);

/// Removes a legal value from a field; removing one it lacks is not an error.
pub async fn remove_legal_value(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    value: String,
) -> Result<(), AdminError> {
    change_legal_values(ctx, caller, name, move |values| {
        values.retain(|existing| existing.value != value);
    })
    .await
}

async fn change_legal_values(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    change: impl FnOnce(&mut Vec<LegalValue>) + Send + 'static,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            let before = queries::context_fields::get(conn, &name)?;
            let mut values = before.legal_values()?;
            change(&mut values);
            let row = ContextFieldRow::new(
                name,
                before.description,
                before.stickiness,
                before.sort_order,
                &values,
                before.created_at,
            )?;
            queries::context_fields::update(conn, &row, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may delete a context field.
pub const DELETE: Access = Access::Root(Permission::DeleteContextField);

/// Deletes a field that no strategy of a live flag constrains on.
pub async fn delete(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::context_fields::delete(conn, &name, actor, now)
        })
        .await
}

/// Who may check a new context field's name.
pub const VALIDATE_NAME: Access = Access::Root(Permission::CreateContextField);

/// Checks that a field could have this name: URL-friendly and not taken.
pub async fn validate_name(ctx: &Runtime, request: NameIn) -> Result<(), AdminError> {
    let name =
        ResourceName::try_from(request.name.as_str()).map_err(|error| AdminError::invalid("/name", error))?;
    let taken = db::run(&ctx.store, move |conn| {
        Ok(queries::context_fields::get(conn, name.as_str()).is_ok())
    })
    .await?;
    if taken {
        return Err(AdminError::NameExists(
            "A context field with that name already exist".into(),
        ));
    }
    Ok(())
}

/// Who may list the strategies that use a context field.
pub const STRATEGIES: Access = Access::Read;

/// The strategies of live flags with a constraint on a field.
pub async fn strategies(ctx: &Runtime, name: String) -> Result<ContextStrategiesOut, AdminError> {
    let uses = db::run(&ctx.store, move |conn| {
        queries::context_fields::strategies_using(conn, &name)
    })
    .await?;
    Ok(ContextStrategiesOut {
        strategies: uses.into_iter().map(StrategyUseOut::from).collect(),
    })
}

/// Legal values are 1 to 100 characters and each appears once.
fn check_legal_values(values: &[LegalValue]) -> Result<(), AdminError> {
    let mut details = Vec::new();
    for (index, value) in values.iter().enumerate() {
        let length = value.value.chars().count();
        if !(1..=100).contains(&length) {
            details.push(Detail::at(
                format!("/legalValues/{index}/value"),
                "a legal value must be 1 to 100 characters long",
            ));
        }
        if values[..index].iter().any(|earlier| earlier.value == value.value) {
            details.push(Detail::at(
                format!("/legalValues/{index}/value"),
                format!("{:?} is listed twice", value.value),
            ));
        }
    }
    AdminError::check(details)
}

/// Who may check a constraint.
pub const VALIDATE_CONSTRAINT: Access = Access::Read;

/// Checks one constraint as a strategy's would be checked: its operator and values, and the
/// legal values of its context field, if it lists any.
pub async fn validate_constraint(ctx: &Runtime, constraint: flag_eval::Constraint) -> Result<(), AdminError> {
    flag_eval::validate_constraints(std::slice::from_ref(&constraint))
        .map_err(|(_, error)| AdminError::invalid("/", error.to_string()))?;
    db::run(&ctx.store, move |conn| {
        queries::context_fields::check_legal_values(conn, std::slice::from_ref(&constraint))
    })
    .await
}
