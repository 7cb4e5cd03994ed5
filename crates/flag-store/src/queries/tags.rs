//! Tag types, tags, and the tags on features.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use crate::connection::DbConnection;
use crate::error::StoreError;
use crate::models::{Actor, EventType, NewEvent, TagRef, TagTypeRow};
use crate::queries::{events, features, to_json};
use crate::schema::{feature_tags, tag_types, tags};

/// Every tag type, oldest first.
pub fn types(conn: &mut DbConnection) -> Result<Vec<TagTypeRow>, StoreError> {
    Ok(tag_types::table
        .order((tag_types::created_at.asc(), tag_types::name.asc()))
        .select(TagTypeRow::as_select())
        .load(conn)?)
}

/// One tag type.
pub fn get_type(conn: &mut DbConnection, name: &str) -> Result<TagTypeRow, StoreError> {
    tag_types::table
        .find(name)
        .select(TagTypeRow::as_select())
        .first(conn)
        .map_err(StoreError::or_not_found("tag type", name))
}

/// Whether a tag type has this name.
pub fn type_exists(conn: &mut DbConnection, name: &str) -> Result<bool, StoreError> {
    let count: i64 = tag_types::table.find(name).count().get_result(conn)?;
    Ok(count > 0)
}

/// Creates a tag type; `data` is what the event records.
pub fn create_type(
    conn: &mut DbConnection,
    row: &TagTypeRow,
    data: &serde_json::Value,
    actor: &Actor,
) -> Result<TagTypeRow, StoreError> {
    crate::queries::write(conn, |conn| {
        if type_exists(conn, &row.name)? {
            return Err(StoreError::Conflict {
                entity: "tag type",
                key: "name".into(),
            });
        }
        diesel::insert_into(tag_types::table).values(row).execute(conn)?;
        events::record(
            conn,
            &NewEvent::new(EventType::TagTypeCreated, actor, row.created_at).with_data(data)?,
        )?;
        Ok(row.clone())
    })
}

/// The fields of a tag type an update sets; `None` leaves one as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagTypeChanges {
    /// Free text.
    pub description: Option<String>,
    /// An icon name.
    pub icon: Option<String>,
    /// `#rrggbb`.
    pub color: Option<String>,
}

/// Updates a tag type.
pub fn update_type(
    conn: &mut DbConnection,
    name: &str,
    changes: &TagTypeChanges,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<TagTypeRow, StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get_type(conn, name)?;
        let after = TagTypeRow {
            description: changes.description.clone().or(before.description.clone()),
            icon: changes.icon.clone().or(before.icon.clone()),
            color: changes.color.clone().or(before.color.clone()),
            ..before.clone()
        };
        diesel::update(tag_types::table.find(name))
            .set((
                tag_types::description.eq(&after.description),
                tag_types::icon.eq(&after.icon),
                tag_types::color.eq(&after.color),
            ))
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(to_json("pre_data", &type_json(&before))?),
                ..NewEvent::new(EventType::TagTypeUpdated, actor, now).with_data(&type_json(&after))?
            },
        )?;
        Ok(after)
    })
}

/// Deletes a tag type with its tags, which leave every feature.
pub fn delete_type(
    conn: &mut DbConnection,
    name: &str,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let before = get_type(conn, name)?;
        diesel::delete(feature_tags::table.filter(feature_tags::tag_type.eq(name))).execute(conn)?;
        diesel::delete(tags::table.filter(tags::tag_type.eq(name))).execute(conn)?;
        diesel::delete(tag_types::table.find(name)).execute(conn)?;
        events::record(
            conn,
            &NewEvent {
                pre_data: Some(to_json("pre_data", &type_json(&before))?),
                ..NewEvent::new(EventType::TagTypeDeleted, actor, now)
            },
        )
    })
}

/// A tag type as Unleash writes it: `{name, description, icon, color}`.
pub fn type_json(row: &TagTypeRow) -> serde_json::Value {
    serde_json::json!({
        "name": row.name,
        "description": row.description,
        "icon": row.icon,
        "color": row.color,
    })
}

/// Every tag, or those of one type, by type and value.
pub fn list(conn: &mut DbConnection, tag_type: Option<&str>) -> Result<Vec<TagRef>, StoreError> {
    let mut query = tags::table.into_boxed();
    if let Some(tag_type) = tag_type {
        query = query.filter(tags::tag_type.eq(tag_type.to_owned()));
    }
    Ok(query
        .order((tags::created_at.asc(), tags::tag_type.asc(), tags::value.asc()))
        .select((tags::value, tags::tag_type))
        .load::<(String, String)>(conn)?
        .into_iter()
        .map(|(value, tag_type)| TagRef { value, tag_type })
        .collect())
}

/// Whether the tag exists.
pub fn exists(conn: &mut DbConnection, tag: &TagRef) -> Result<bool, StoreError> {
    let count: i64 = tags::table
        .find((&tag.tag_type, &tag.value))
        .count()
        .get_result(conn)?;
    Ok(count > 0)
}

/// Creates a tag of an existing type, recording `tag-created`; with `unique`, an existing tag
/// is a conflict, otherwise it is left as it is.
pub fn create(
    conn: &mut DbConnection,
    tag: &TagRef,
    unique: bool,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        if !type_exists(conn, &tag.tag_type)? {
            return Err(StoreError::Rejected {
                message: format!("Tag type '{}' does not exist", tag.tag_type),
            });
        }
        if exists(conn, tag)? {
            return if unique {
                Err(StoreError::Conflict {
                    entity: "tag",
                    key: "type and value".into(),
                })
            } else {
                Ok(())
            };
        }
        diesel::insert_into(tags::table)
            .values((
                tags::tag_type.eq(&tag.tag_type),
                tags::value.eq(&tag.value),
                tags::created_at.eq(now),
            ))
            .execute(conn)?;
        events::record(
            conn,
            &NewEvent::new(EventType::TagCreated, actor, now)
                .with_data(&serde_json::json!({"type": tag.tag_type, "value": tag.value}))?,
        )
    })
}

/// Deletes a tag, which leaves every feature; deleting a missing tag is not an error.
pub fn delete(
    conn: &mut DbConnection,
    tag: &TagRef,
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        diesel::delete(
            feature_tags::table
                .filter(feature_tags::tag_type.eq(&tag.tag_type))
                .filter(feature_tags::tag_value.eq(&tag.value)),
        )
        .execute(conn)?;
        diesel::delete(tags::table.find((&tag.tag_type, &tag.value))).execute(conn)?;
        events::record(
            conn,
            &NewEvent::new(EventType::TagDeleted, actor, now)
                .with_data(&serde_json::json!({"type": tag.tag_type, "value": tag.value}))?,
        )
    })
}

/// A feature's tags, by type and value.
pub fn of_feature(conn: &mut DbConnection, feature: &str) -> Result<Vec<TagRef>, StoreError> {
    Ok(feature_tags::table
        .filter(feature_tags::feature_name.eq(feature))
        .order((feature_tags::tag_type.asc(), feature_tags::tag_value.asc()))
        .select((feature_tags::tag_value, feature_tags::tag_type))
        .load::<(String, String)>(conn)?
        .into_iter()
        .map(|(value, tag_type)| TagRef { value, tag_type })
        .collect())
}

/// Every feature's tags, as `(feature, tag)`, by feature.
pub fn of_all_features(conn: &mut DbConnection) -> Result<Vec<(String, TagRef)>, StoreError> {
    Ok(feature_tags::table
        .order((
            feature_tags::feature_name.asc(),
            feature_tags::tag_type.asc(),
            feature_tags::tag_value.asc(),
        ))
        .select((
            feature_tags::feature_name,
            feature_tags::tag_value,
            feature_tags::tag_type,
        ))
        .load::<(String, String, String)>(conn)?
        .into_iter()
        .map(|(feature, value, tag_type)| (feature, TagRef { value, tag_type }))
        .collect())
}

/// The names of the features that have any of `tags`.
pub fn features_with_any(conn: &mut DbConnection, tags: &[TagRef]) -> Result<Vec<String>, StoreError> {
    let mut names = Vec::new();
    for tag in tags {
        names.extend(
            feature_tags::table
                .filter(feature_tags::tag_type.eq(&tag.tag_type))
                .filter(feature_tags::tag_value.eq(&tag.value))
                .select(feature_tags::feature_name)
                .load::<String>(conn)?,
        );
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Changes a feature's tags: adds `added` (creating missing tags) and removes `removed`,
/// recording `feature-tagged` for each added tag and `feature-untagged` for each removed one, as
/// Unleash does even when the feature already had, or lacked, the tag.
pub fn change(
    conn: &mut DbConnection,
    feature: &str,
    added: &[TagRef],
    removed: &[TagRef],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let row = features::find(conn, feature)?.ok_or_else(|| StoreError::NotFound {
            entity: "feature",
            key: feature.to_owned(),
        })?;
        for tag in added {
            create(conn, tag, false, actor, now)?;
            let present: i64 = feature_tags::table
                .find((feature, &tag.tag_type, &tag.value))
                .count()
                .get_result(conn)?;
            if present == 0 {
                diesel::insert_into(feature_tags::table)
                    .values((
                        feature_tags::feature_name.eq(feature),
                        feature_tags::tag_type.eq(&tag.tag_type),
                        feature_tags::tag_value.eq(&tag.value),
                        feature_tags::created_by_user_id.eq(Some(actor.user_id)),
                        feature_tags::created_at.eq(now),
                    ))
                    .execute(conn)?;
            }
            events::record(
                conn,
                &NewEvent {
                    project: Some(row.project_id.clone()),
                    feature_name: Some(feature.to_owned()),
                    ..NewEvent::new(EventType::FeatureTagged, actor, now)
                        .with_data(&serde_json::json!({"type": tag.tag_type, "value": tag.value}))?
                },
            )?;
        }
        for tag in removed {
            let before = of_feature(conn, feature)?;
            diesel::delete(feature_tags::table.find((feature, &tag.tag_type, &tag.value))).execute(conn)?;
            events::record(
                conn,
                &NewEvent {
                    project: Some(row.project_id.clone()),
                    feature_name: Some(feature.to_owned()),
                    pre_data: Some(to_json(
                        "pre_data",
                        &serde_json::json!({"type": tag.tag_type, "value": tag.value}),
                    )?),
                    ..NewEvent::new(EventType::FeatureUntagged, actor, now)
                }
                .with_tags(&before)?,
            )?;
        }
        Ok(())
    })
}

/// Changes the tags of several features of `project` at once; unknown features are skipped.
pub fn change_many(
    conn: &mut DbConnection,
    project: &str,
    feature_names: &[String],
    added: &[TagRef],
    removed: &[TagRef],
    actor: &Actor,
    now: NaiveDateTime,
) -> Result<(), StoreError> {
    crate::queries::write(conn, |conn| {
        let rows = features::named(conn, feature_names)?;
        if rows.iter().any(|row| row.project_id != project) {
            return Err(StoreError::Rejected {
                message: "Tried to change tags of feature not belonging to project".into(),
            });
        }
        for row in &rows {
            change(conn, &row.name, added, removed, actor, now)?;
        }
        Ok(())
    })
}
