//! Tag types, tags, and the tags on flags.

use actix_web::web;
use flag_admin::catalogue::tags;
use flag_admin::catalogue::tags::types::{
    BulkTags, CreateTagType, FeatureTagsOut, TagIn, TagOut, TagTypeWithVersion, TagTypesOut, TagWithVersion,
    TagsOut, UpdateFeatureTags, UpdateTagType, ValidTagType,
};

use crate::auth::Admitted;
use crate::error::{ApiError, ErrorBody};
use crate::extract::ObjectBody;
use crate::respond::{Created, Done};
use crate::state::AppState;

/// Every tag type.
#[utoipa::path(
    get,
    path = "/api/admin/tag-types",
    tag = "Tags",
    operation_id = "getTagTypes",
    responses((status = 200, description = "The tag types", body = TagTypesOut)),
)]
pub async fn list_types(
    state: web::Data<AppState>,
    _caller: Admitted,
) -> Result<web::Json<TagTypesOut>, ApiError> {
    Ok(web::Json(tags::types(&state.app).await?))
}

/// Creates a tag type.
#[utoipa::path(
    post,
    path = "/api/admin/tag-types",
    tag = "Tags",
    operation_id = "createTagType",
    request_body = CreateTagType,
    responses(
        (status = 201, description = "The tag type", body = CreateTagType),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn create_type(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<CreateTagType>,
) -> Result<Created<CreateTagType>, ApiError> {
    let created = tags::create_type(&state.app, &caller, request).await?;
    Ok(Created::at(
        format!("tag-types/{}", created.name.as_str()),
        created,
    ))
}

/// Checks that a tag type could be created.
#[utoipa::path(
    post,
    path = "/api/admin/tag-types/validate",
    tag = "Tags",
    operation_id = "validateTagType",
    request_body = CreateTagType,
    responses(
        (status = 200, description = "It could", body = ValidTagType),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 409, description = "The name is taken", body = ErrorBody),
    ),
)]
pub async fn validate_type(
    state: web::Data<AppState>,
    _caller: Admitted,
    ObjectBody(request): ObjectBody<CreateTagType>,
) -> Result<web::Json<ValidTagType>, ApiError> {
    Ok(web::Json(tags::validate_type(&state.app, request).await?))
}

/// One tag type.
#[utoipa::path(
    get,
    path = "/api/admin/tag-types/{name}",
    tag = "Tags",
    operation_id = "getTagType",
    params(("name" = String, Path, description = "The tag type")),
    responses(
        (status = 200, description = "The tag type", body = TagTypeWithVersion),
        (status = 404, description = "No such tag type", body = ErrorBody),
    ),
)]
pub async fn get_type(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<TagTypeWithVersion>, ApiError> {
    Ok(web::Json(tags::get_type(&state.app, path.into_inner()).await?))
}

/// Changes a tag type's description, icon or colour; fields left out stay as they are.
#[utoipa::path(
    put,
    path = "/api/admin/tag-types/{name}",
    tag = "Tags",
    operation_id = "updateTagType",
    params(("name" = String, Path, description = "The tag type")),
    request_body = UpdateTagType,
    responses(
        (status = 200, description = "Changed; no body"),
        (status = 400, description = "The body breaks the schema", body = ErrorBody),
        (status = 404, description = "No such tag type", body = ErrorBody),
    ),
)]
pub async fn update_type(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateTagType>,
) -> Result<Done, ApiError> {
    tags::update_type(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}

/// Deletes a tag type with its tags, which leave every flag.
#[utoipa::path(
    delete,
    path = "/api/admin/tag-types/{name}",
    tag = "Tags",
    operation_id = "deleteTagType",
    params(("name" = String, Path, description = "The tag type")),
    responses(
        (status = 200, description = "Deleted; no body"),
        (status = 404, description = "No such tag type", body = ErrorBody),
    ),
)]
pub async fn delete_type(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
) -> Result<Done, ApiError> {
    tags::delete_type(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Every tag.
#[utoipa::path(
    get,
    path = "/api/admin/tags",
    tag = "Tags",
    operation_id = "getTags",
    responses((status = 200, description = "The tags", body = TagsOut)),
)]
pub async fn list(state: web::Data<AppState>, _caller: Admitted) -> Result<web::Json<TagsOut>, ApiError> {
    Ok(web::Json(tags::list(&state.app, None).await?))
}

/// Creates a tag of an existing tag type.
#[utoipa::path(
    post,
    path = "/api/admin/tags",
    tag = "Tags",
    operation_id = "createTag",
    request_body = TagIn,
    responses(
        (status = 201, description = "The tag", body = TagWithVersion),
        (status = 400, description = "The body breaks the schema, or no such tag type", body = ErrorBody),
        (status = 409, description = "The tag exists", body = ErrorBody),
    ),
)]
pub async fn create(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    ObjectBody(request): ObjectBody<TagIn>,
) -> Result<Created<TagWithVersion>, ApiError> {
    let created = tags::create(&state.app, &caller, request).await?;
    let location = format!("tags/{}/{}", created.tag.tag_type, created.tag.value);
    Ok(Created::at(location, created))
}

/// The tags of one tag type.
#[utoipa::path(
    get,
    path = "/api/admin/tags/{type}",
    tag = "Tags",
    operation_id = "getTagsByType",
    params(("type" = String, Path, description = "The tag type")),
    responses((status = 200, description = "The tags; none for an unknown type", body = TagsOut)),
)]
pub async fn list_of_type(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<TagsOut>, ApiError> {
    Ok(web::Json(tags::list(&state.app, Some(path.into_inner())).await?))
}

/// One tag.
#[utoipa::path(
    get,
    path = "/api/admin/tags/{type}/{value}",
    tag = "Tags",
    operation_id = "getTag",
    params(
        ("type" = String, Path, description = "The tag type"),
        ("value" = String, Path, description = "The value"),
    ),
    responses(
        (status = 200, description = "The tag", body = TagWithVersion),
        (status = 404, description = "No such tag", body = ErrorBody),
    ),
)]
pub async fn get(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<(String, String)>,
) -> Result<web::Json<TagWithVersion>, ApiError> {
    let (tag_type, value) = path.into_inner();
    Ok(web::Json(tags::get(&state.app, tag_type, value).await?))
}

/// Deletes a tag, which leaves every flag; deleting a missing tag is not an error.
#[utoipa::path(
    delete,
    path = "/api/admin/tags/{type}/{value}",
    tag = "Tags",
    operation_id = "deleteTag",
    params(
        ("type" = String, Path, description = "The tag type"),
        ("value" = String, Path, description = "The value"),
    ),
    responses((status = 200, description = "Deleted; no body")),
)]
pub async fn delete(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String)>,
) -> Result<Done, ApiError> {
    let (tag_type, value) = path.into_inner();
    tags::delete(&state.app, &caller, tag_type, value).await?;
    Ok(Done)
}

/// A flag's tags.
#[utoipa::path(
    get,
    path = "/api/admin/features/{featureName}/tags",
    tag = "Tags",
    operation_id = "listTags",
    params(("featureName" = String, Path, description = "The flag")),
    responses(
        (status = 200, description = "The tags, each with its tag type's colour", body = FeatureTagsOut),
        (status = 404, description = "No such flag", body = ErrorBody),
    ),
)]
pub async fn of_feature(
    state: web::Data<AppState>,
    _caller: Admitted,
    path: web::Path<String>,
) -> Result<web::Json<FeatureTagsOut>, ApiError> {
    Ok(web::Json(tags::of_feature(&state.app, path.into_inner()).await?))
}

/// Puts a tag on a flag, creating the tag if needed.
#[utoipa::path(
    post,
    path = "/api/admin/features/{featureName}/tags",
    tag = "Tags",
    operation_id = "addTag",
    params(("featureName" = String, Path, description = "The flag")),
    request_body = TagIn,
    responses(
        (status = 201, description = "The tag", body = TagOut),
        (status = 400, description = "The body breaks the schema, or no such tag type", body = ErrorBody),
        (status = 404, description = "No such flag", body = ErrorBody),
    ),
)]
pub async fn add_to_feature(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<TagIn>,
) -> Result<Created<TagOut>, ApiError> {
    let feature = path.into_inner();
    let tag = tags::add_to_feature(&state.app, &caller, feature.clone(), request).await?;
    Ok(Created::at(format!("{feature}/tags"), tag))
}

/// Adds and removes tags of a flag.
#[utoipa::path(
    put,
    path = "/api/admin/features/{featureName}/tags",
    tag = "Tags",
    operation_id = "updateTags",
    params(("featureName" = String, Path, description = "The flag")),
    request_body = UpdateFeatureTags,
    responses(
        (status = 200, description = "The flag's tags after", body = FeatureTagsOut),
        (status = 400, description = "The body breaks the schema, or no such tag type", body = ErrorBody),
        (status = 404, description = "No such flag", body = ErrorBody),
    ),
)]
pub async fn update_feature(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<UpdateFeatureTags>,
) -> Result<web::Json<FeatureTagsOut>, ApiError> {
    Ok(web::Json(
        tags::update_feature(&state.app, &caller, path.into_inner(), request).await?,
    ))
}

/// Takes a tag off a flag.
#[utoipa::path(
    delete,
    path = "/api/admin/features/{featureName}/tags/{type}/{value}",
    tag = "Tags",
    operation_id = "removeTag",
    params(
        ("featureName" = String, Path, description = "The flag"),
        ("type" = String, Path, description = "The tag type"),
        ("value" = String, Path, description = "The value"),
    ),
    responses(
        (status = 200, description = "Removed; no body"),
        (status = 404, description = "No such flag", body = ErrorBody),
    ),
)]
pub async fn remove_from_feature(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<(String, String, String)>,
) -> Result<Done, ApiError> {
    tags::remove_from_feature(&state.app, &caller, path.into_inner()).await?;
    Ok(Done)
}

/// Adds and removes tags of several flags of a project.
#[utoipa::path(
    put,
    path = "/api/admin/projects/{projectId}/tags",
    tag = "Tags",
    operation_id = "addTagToFeatures",
    params(("projectId" = String, Path, description = "The project")),
    request_body = BulkTags,
    responses(
        (status = 200, description = "Changed; no body"),
        (status = 400, description = "The body breaks the schema, a flag of another project, or no such tag type", body = ErrorBody),
    ),
)]
pub async fn update_many(
    state: web::Data<AppState>,
    Admitted(caller): Admitted,
    path: web::Path<String>,
    ObjectBody(request): ObjectBody<BulkTags>,
) -> Result<Done, ApiError> {
    tags::update_many(&state.app, &caller, path.into_inner(), request).await?;
    Ok(Done)
}
