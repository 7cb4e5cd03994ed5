//! Context fields, the names constraints test, with their allowed values.

use chrono::NaiveDateTime;
use diesel::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::StoreError;
use crate::queries::from_json;
use crate::schema::context_fields;

/// One allowed value of a context field, as Unleash writes it: `{value, description?}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegalValue {
    /// The value.
    pub value: String,
    /// What it means; left out of the JSON when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A context field definition.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = context_fields, check_for_backend(crate::connection::MultiBackend))]
pub struct ContextFieldRow {
    /// Field name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// Whether it can be used as stickiness.
    pub stickiness: bool,
    /// Display order.
    pub sort_order: i32,
    /// Allowed values, JSON.
    pub legal_values: String,
    /// Creation time, UTC.
    pub created_at: NaiveDateTime,
}

impl ContextFieldRow {
    /// A context field with its allowed values, created `at`; the store writes the values as
    /// JSON and keeps the time to the microsecond.
    pub fn new(
        name: String,
        description: Option<String>,
        stickiness: bool,
        sort_order: i32,
        legal_values: &[LegalValue],
        at: NaiveDateTime,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            name,
            description,
            stickiness,
            sort_order,
            legal_values: crate::queries::to_json("context_fields.legal_values", legal_values)?,
            created_at: crate::time::stored(at),
        })
    }

    /// The allowed values, decoded from `legal_values`.
    pub fn legal_values(&self) -> Result<Vec<LegalValue>, StoreError> {
        from_json("context field", &self.name, "legal_values", &self.legal_values)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::queries;
    use crate::testing::{TestResult, TestStore, tenant_field};

    #[test]
    fn typed_values_serialise_to_the_json_that_is_stored() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let field = tenant_field(r#"[{"value":"a"},{"value":"b","description":"the b tenant"}]"#);
        queries::context_fields::create(&mut conn, &field, &crate::models::Actor::system())?;
        for row in queries::context_fields::list(&mut conn)? {
            let stored: Value = serde_json::from_str(&row.legal_values)?;
            assert_eq!(serde_json::to_value(row.legal_values()?)?, stored, "{}", row.name);
        }
        Ok(())
    }

    #[test]
    fn writes_that_would_not_read_back_are_rejected() -> TestResult {
        let db = TestStore::new()?;
        let mut conn = db.store.connection()?;
        let field = tenant_field(r#"["a", "b"]"#);
        let error = queries::context_fields::create(&mut conn, &field, &crate::models::Actor::system()).err();
        assert!(
            matches!(&error, Some(StoreError::Rejected { message })
                if message.starts_with("context field tenant has invalid legal_values: ")),
            "{error:?}"
        );
        // Nothing was written.
        assert!(
            !queries::context_fields::list(&mut conn)?
                .iter()
                .any(|row| row.name == "tenant")
        );
        Ok(())
    }
}
