//! Strategy types and the strategies of a feature in an environment.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

use flag_eval::{Constraint, Variant};

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::{feature_strategies, strategy_types};

/// One parameter a strategy type declares, as Unleash writes it:
/// `{name, type, description?, required?}`.
///
/// `description` and `required` stay optional, because custom types registered without them are
/// stored and listed without them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StrategyParameter {
    /// Parameter name, the key in a strategy's `parameters`.
    pub name: String,
    /// `string`, `percentage`, `list`, `number` or `boolean`.
    #[serde(rename = "type")]
    pub parameter_type: String,
    /// Help text; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a strategy must set it; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A registered strategy type.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = strategy_types, check_for_backend(crate::connection::MultiBackend))]
pub struct StrategyTypeRow {
    /// Name used by strategies.
    pub name: String,
    /// Display title.
    pub title: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Parameter definitions, JSON.
    pub parameters: String,
    /// Whether it ships with the server.
    pub built_in: bool,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
    /// Whether it is deprecated: still evaluated, no longer offered for new strategies.
    pub deprecated: bool,
    /// The name people read, as Unleash seeds it for its built-in types; none for custom ones.
    pub display_name: Option<String>,
    /// Where it is listed: types are listed by this, then by name.
    pub sort_order: i32,
}

impl StrategyTypeRow {
    /// Where custom types are listed: after the built-in ones, as Unleash's column default puts them.
    pub const CUSTOM_SORT_ORDER: i32 = 9999;

    /// A custom strategy type declaring `parameters`, created `at`; the store writes the
    /// parameters as JSON and keeps the time to the microsecond.
    pub fn custom(
        name: String,
        title: Option<String>,
        description: Option<String>,
        parameters: &[StrategyParameter],
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            title,
            description,
            parameters: crate::queries::to_json("strategy_types.parameters", parameters)?,
            built_in: false,
            created_at: crate::time::stored(at),
            deprecated: false,
            display_name: None,
            sort_order: Self::CUSTOM_SORT_ORDER,
        })
    }

    /// The parameter definitions, decoded from `parameters`.
    pub fn parameters(&self) -> Result<Vec<StrategyParameter>, StoreError> {
        from_json("strategy type", &self.name, "parameters", &self.parameters)
    }
}

/// A strategy of a feature in an environment.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = feature_strategies, check_for_backend(crate::connection::MultiBackend))]
pub struct StrategyRow {
    /// Strategy id (a UUID).
    pub id: String,
    /// The feature.
    pub feature_name: String,
    /// The environment.
    pub environment_name: String,
    /// The strategy type.
    pub strategy_name: String,
    /// Display title.
    pub title: Option<String>,
    /// Disabled strategies are kept but not sent to SDKs.
    pub disabled: bool,
    /// Evaluation order.
    pub sort_order: i32,
    /// Parameters, a JSON object of strings.
    pub parameters: String,
    /// Constraints, JSON.
    pub constraints: String,
    /// Strategy variants, JSON.
    pub variants: String,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl StrategyRow {
    /// The parameters, decoded from `parameters`.
    pub fn parameters(&self) -> Result<flag_eval::Parameters, StoreError> {
        from_json("strategy", &self.id, "parameters", &self.parameters)
    }

    /// The constraints, decoded from `constraints`.
    pub fn constraints(&self) -> Result<Vec<Constraint>, StoreError> {
        from_json("strategy", &self.id, "constraints", &self.constraints)
    }

    /// The strategy variants, decoded from `variants`.
    pub fn variants(&self) -> Result<Vec<Variant>, StoreError> {
        from_json("strategy", &self.id, "variants", &self.variants)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::queries::strategies;
    use crate::testing::{TestResult, TestStore, now};

    #[test]
    fn typed_values_serialise_to_the_json_that_is_stored() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let custom = StrategyTypeRow {
            name: "byTenant".into(),
            title: None,
            description: None,
            parameters: r#"[{"name":"tenants","type":"list"}]"#.into(),
            built_in: false,
            created_at: now(),
            deprecated: false,
            display_name: None,
            sort_order: StrategyTypeRow::CUSTOM_SORT_ORDER,
        };
        strategies::register_type(&mut conn, &custom, &crate::models::Actor::system())?;
        for row in strategies::list_types(&mut conn)? {
            let stored: Value = serde_json::from_str(&row.parameters)?;
            assert_eq!(serde_json::to_value(row.parameters()?)?, stored, "{}", row.name);
        }
        Ok(())
    }

    #[test]
    fn writes_that_would_not_read_back_are_rejected() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let custom = StrategyTypeRow {
            name: "byTenant".into(),
            title: None,
            description: None,
            parameters: r#"[{"name":"tenants"}]"#.into(),
            built_in: false,
            created_at: now(),
            deprecated: false,
            display_name: None,
            sort_order: StrategyTypeRow::CUSTOM_SORT_ORDER,
        };
        let error = strategies::register_type(&mut conn, &custom, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Rejected { message })
                if message.starts_with("strategy type byTenant has invalid parameters: ")),
            "{error:?}"
        );
        // Nothing was written.
        assert!(
            !strategies::list_types(&mut conn)?
                .iter()
                .any(|row| row.name == "byTenant")
        );
        Ok(())
    }
}
