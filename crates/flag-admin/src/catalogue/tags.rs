//! Tag types, tags, and the tags on flags.

pub mod types;

use flag_store::models::{TagRef, TagTypeRow};
use flag_store::queries;
use flag_store::queries::tags::TagTypeChanges;

use crate::catalogue::tags::types::{
    BulkTags, CreateTagType, FeatureTagOut, FeatureTagsOut, TagIn, TagOut, TagTypeOut, TagTypeWithVersion,
    TagTypesOut, TagWithVersion, TagsOut, UpdateFeatureTags, UpdateTagType, ValidTagType,
};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Who may list the tag types.
pub const TYPES: Access = Access::Read;

/// Every tag type.
pub async fn types(ctx: &Runtime) -> Result<TagTypesOut, AdminError> {
    let rows = db::run(&ctx.store, queries::tags::types).await?;
    Ok(TagTypesOut {
        version: 1,
        tag_types: rows.into_iter().map(TagTypeOut::from).collect(),
    })
}

/// Who may read a tag type.
pub const GET_TYPE: Access = Access::Read;

/// One tag type.
pub async fn get_type(ctx: &Runtime, name: String) -> Result<TagTypeWithVersion, AdminError> {
    let row = db::run(&ctx.store, move |conn| queries::tags::get_type(conn, &name)).await?;
    Ok(TagTypeWithVersion {
        version: 1,
        tag_type: TagTypeOut::from(row),
    })
}

/// The colour of a tag type created without one.
pub const DEFAULT_COLOR: &str = "#FFFFFF";

/// Who may create a tag type.
pub const CREATE_TYPE: Access = Access::Write(Permission::CreateTagType);

/// Creates a tag type.
pub async fn create_type(
    ctx: &Runtime,
    caller: &Caller,
    request: CreateTagType,
) -> Result<CreateTagType, AdminError> {
    let row = TagTypeRow {
        name: request.name.as_str().to_owned(),
        description: request.description.clone(),
        icon: request.icon.clone(),
        // White when none is given, as Unleash's tag types default.
        color: Some(
            request
                .color
                .as_ref()
                .map_or(DEFAULT_COLOR, |color| color.as_str())
                .to_owned(),
        ),
        created_at: ctx.now(),
    };
    let data = serde_json::to_value(&request)
        .map_err(|error| AdminError::Internal(format!("cannot write a tag type as JSON: {error}")))?;
    caller
        .write(ctx, move |conn, actor, _| {
            queries::tags::create_type(conn, &row, &data, actor)
        })
        .await?;
    Ok(request)
}

/// Who may check a new tag type.
pub const VALIDATE_TYPE: Access = Access::Read;

/// Checks that a tag type could be created.
pub async fn validate_type(ctx: &Runtime, request: CreateTagType) -> Result<ValidTagType, AdminError> {
    let name = request.name.as_str().to_owned();
    let taken = db::run(&ctx.store, move |conn| queries::tags::type_exists(conn, &name)).await?;
    if taken {
        return Err(AdminError::NameExists(format!(
            "There already exists a tag-type with the name {}",
            request.name.as_str()
        )));
    }
    Ok(ValidTagType {
        valid: true,
        tag_type: request,
    })
}

/// Who may change a tag type.
pub const UPDATE_TYPE: Access = Access::Write(Permission::UpdateTagType);

/// Changes a tag type's description, icon or colour.
pub async fn update_type(
    ctx: &Runtime,
    caller: &Caller,
    name: String,
    request: UpdateTagType,
) -> Result<(), AdminError> {
    let changes = TagTypeChanges {
        description: request.description,
        icon: request.icon,
        color: request.color.map(crate::runtime::domain::Color::into_string),
    };
    caller
        .write(ctx, move |conn, actor, now| {
            queries::tags::update_type(conn, &name, &changes, actor, now)
        })
        .await?;
    Ok(())
}

/// Who may delete a tag type.
pub const DELETE_TYPE: Access = Access::Write(Permission::DeleteTagType);

/// Deletes a tag type, with its tags.
pub async fn delete_type(ctx: &Runtime, caller: &Caller, name: String) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::tags::delete_type(conn, &name, actor, now)
        })
        .await
}

/// Who may list the tags.
pub const LIST: Access = Access::Read;

/// Every tag, or those of one type.
pub async fn list(ctx: &Runtime, tag_type: Option<String>) -> Result<TagsOut, AdminError> {
    let tags = db::run(&ctx.store, move |conn| {
        queries::tags::list(conn, tag_type.as_deref())
    })
    .await?;
    Ok(TagsOut {
        version: 1,
        tags: tags.into_iter().map(TagOut::from).collect(),
    })
}

/// Who may read a tag.
pub const GET: Access = Access::Read;

/// One tag.
pub async fn get(ctx: &Runtime, tag_type: String, value: String) -> Result<TagWithVersion, AdminError> {
    let tag = TagRef { value, tag_type };
    let probe = tag.clone();
    let exists = db::run(&ctx.store, move |conn| queries::tags::exists(conn, &probe)).await?;
    if !exists {
        return Err(AdminError::NotFound(format!(
            "No tag with type: [{}] and value [{}]",
            tag.tag_type, tag.value
        )));
    }
    Ok(TagWithVersion {
        version: 1,
        tag: TagOut::from(tag),
    })
}

/// Who may create a tag.
pub const CREATE: Access = Access::Write(Permission::UpdateFeature);

/// Creates a tag of an existing tag type.
pub async fn create(ctx: &Runtime, caller: &Caller, request: TagIn) -> Result<TagWithVersion, AdminError> {
    let tag = request.tag();
    let stored = tag.clone();
    caller
        .write(ctx, move |conn, actor, now| {
            queries::tags::create(conn, &stored, true, actor, now)
        })
        .await?;
    Ok(TagWithVersion {
        version: 1,
        tag: TagOut::from(tag),
    })
}

/// Who may delete a tag.
pub const DELETE: Access = Access::Write(Permission::UpdateFeature);

/// Deletes a tag, which leaves every flag.
pub async fn delete(
    ctx: &Runtime,
    caller: &Caller,
    tag_type: String,
    value: String,
) -> Result<(), AdminError> {
    let tag = TagRef { value, tag_type };
    caller
        .write(ctx, move |conn, actor, now| {
            queries::tags::delete(conn, &tag, actor, now)
        })
        .await
}

/// Who may list a flag's tags.
pub const OF_FEATURE: Access = Access::Read;

/// A flag's tags, each with its tag type's colour.
pub async fn of_feature(ctx: &Runtime, feature: String) -> Result<FeatureTagsOut, AdminError> {
    let (tags, types) = db::run(&ctx.store, move |conn| {
        if queries::features::find(conn, &feature)?.is_none() {
            return Err(flag_store::StoreError::NotFound {
                entity: "feature",
                key: feature,
            });
        }
        Ok((
            queries::tags::of_feature(conn, &feature)?,
            queries::tags::types(conn)?,
        ))
    })
    .await?;
    Ok(FeatureTagsOut {
        version: 1,
        tags: tags
            .into_iter()
            .map(|tag| FeatureTagOut {
                color: types
                    .iter()
                    .find(|row| row.name == tag.tag_type)
                    .and_then(|row| row.color.clone()),
                tag_type: tag.tag_type,
                value: tag.value,
            })
            .collect(),
    })
}

/// Who may tag a flag.
pub const ADD_TO_FEATURE: Access = Access::Write(Permission::UpdateFeature);

/// Puts a tag on a flag, creating the tag if needed.
pub async fn add_to_feature(
    ctx: &Runtime,
    caller: &Caller,
    feature: String,
    request: TagIn,
) -> Result<TagOut, AdminError> {
    let tag = request.tag();
    change(ctx, caller, feature, vec![tag.clone()], Vec::new()).await?;
    Ok(TagOut::from(tag))
}

/// Who may add and remove a flag's tags.
pub const UPDATE_FEATURE: Access = Access::Write(Permission::UpdateFeature);

/// Adds and removes tags of a flag, and answers its tags after.
pub async fn update_feature(
    ctx: &Runtime,
    caller: &Caller,
    feature: String,
    request: UpdateFeatureTags,
) -> Result<FeatureTagsOut, AdminError> {
    let added = request.added_tags.iter().map(TagIn::tag).collect();
    let removed = request.removed_tags.iter().map(TagIn::tag).collect();
    change(ctx, caller, feature.clone(), added, removed).await?;
    of_feature(ctx, feature).await
}

/// Who may remove a tag from a flag.
pub const REMOVE_FROM_FEATURE: Access = Access::Write(Permission::UpdateFeature);

/// Takes a tag off a flag.
pub async fn remove_from_feature(
    ctx: &Runtime,
    caller: &Caller,
    (feature, tag_type, value): (String, String, String),
) -> Result<(), AdminError> {
    change(ctx, caller, feature, Vec::new(), vec![TagRef { value, tag_type }]).await
}

async fn change(
    ctx: &Runtime,
    caller: &Caller,
    feature: String,
    added: Vec<TagRef>,
    removed: Vec<TagRef>,
) -> Result<(), AdminError> {
    caller
        .write(ctx, move |conn, actor, now| {
            queries::tags::change(conn, &feature, &added, &removed, actor, now)
        })
        .await
}

/// Who may add and remove the tags of several flags.
pub const UPDATE_MANY: Access = Access::Write(Permission::UpdateFeature);

/// Adds and removes tags of several flags of `project`.
pub async fn update_many(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    request: BulkTags,
) -> Result<(), AdminError> {
    let added: Vec<TagRef> = request.tags.added_tags.iter().map(TagIn::tag).collect();
    let removed: Vec<TagRef> = request.tags.removed_tags.iter().map(TagIn::tag).collect();
    caller
        .write(ctx, move |conn, actor, now| {
            queries::tags::change_many(conn, &project, &request.features, &added, &removed, actor, now)
        })
        .await
}
