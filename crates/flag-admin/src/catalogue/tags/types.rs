//! Tag types, tags and the tags on flags.

use flag_store::models::{TagRef, TagTypeRow};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::runtime::domain::{Color, TagTypeName, TagValue};

/// A tag type.
#[derive(Debug, Serialize, ToSchema)]
pub struct TagTypeOut {
    /// Its name.
    pub name: String,
    /// Free text.
    pub description: Option<String>,
    /// An icon name.
    pub icon: Option<String>,
    /// `#rrggbb`.
    pub color: Option<String>,
}

impl From<TagTypeRow> for TagTypeOut {
    fn from(row: TagTypeRow) -> Self {
        Self {
            name: row.name,
            description: row.description,
            icon: row.icon,
            color: row.color,
        }
    }
}

/// `GET /api/admin/tag-types`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagTypesOut {
    /// Always 1.
    pub version: u32,
    /// The tag types, oldest first.
    pub tag_types: Vec<TagTypeOut>,
}

/// `GET /api/admin/tag-types/{name}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagTypeWithVersion {
    /// Always 1.
    pub version: u32,
    /// The tag type.
    pub tag_type: TagTypeOut,
}

/// Body of `POST /api/admin/tag-types` and of its validation.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTagType {
    /// Its name.
    pub name: TagTypeName,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// An icon name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// `#rrggbb`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<Color>,
}

/// The answer of `POST /api/admin/tag-types/validate`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidTagType {
    /// Always `true`: an invalid one is a 400 or a 409.
    pub valid: bool,
    /// The tag type as given.
    pub tag_type: CreateTagType,
}

/// Body of `PUT /api/admin/tag-types/{name}`: the fields to change.
#[derive(Debug, Deserialize, ToSchema)]
pub struct UpdateTagType {
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// An icon name.
    #[serde(default)]
    pub icon: Option<String>,
    /// `#rrggbb`.
    #[serde(default)]
    pub color: Option<Color>,
}

/// A tag: `{type, value}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TagOut {
    /// The tag type.
    #[serde(rename = "type")]
    pub tag_type: String,
    /// The value.
    pub value: String,
}

impl From<TagRef> for TagOut {
    fn from(tag: TagRef) -> Self {
        Self {
            tag_type: tag.tag_type,
            value: tag.value,
        }
    }
}

/// A list of tags.
#[derive(Debug, Serialize, ToSchema)]
pub struct TagsOut {
    /// Always 1.
    pub version: u32,
    /// The tags.
    pub tags: Vec<TagOut>,
}

/// One tag.
#[derive(Debug, Serialize, ToSchema)]
pub struct TagWithVersion {
    /// Always 1.
    pub version: u32,
    /// The tag.
    pub tag: TagOut,
}

/// A tag to create or put on a flag: `{value, type, color?}`; the colour belongs to the tag
/// type and is ignored.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TagIn {
    /// The value.
    pub value: TagValue,
    /// The tag type.
    #[serde(rename = "type")]
    pub tag_type: TagTypeName,
    /// Ignored: tags take their tag type's colour.
    #[serde(default)]
    pub color: Option<Option<Color>>,
}

impl TagIn {
    /// The tag, without the colour.
    pub fn tag(&self) -> TagRef {
        TagRef {
            value: self.value.as_str().to_owned(),
            tag_type: self.tag_type.as_str().to_owned(),
        }
    }
}

/// A tag on a flag, with its tag type's colour.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureTagOut {
    /// The tag type.
    #[serde(rename = "type")]
    pub tag_type: String,
    /// The value.
    pub value: String,
    /// The tag type's colour.
    pub color: Option<String>,
}

/// A flag's tags.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeatureTagsOut {
    /// Always 1.
    pub version: u32,
    /// The tags.
    pub tags: Vec<FeatureTagOut>,
}

/// Body of `PUT /api/admin/features/{featureName}/tags`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateFeatureTags {
    /// Tags to add; missing tags are created.
    pub added_tags: Vec<TagIn>,
    /// Tags to remove.
    pub removed_tags: Vec<TagIn>,
}

/// Body of `PUT /api/admin/projects/{projectId}/tags`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkTags {
    /// The flags, all of the project.
    pub features: Vec<String>,
    /// The changes.
    pub tags: UpdateFeatureTags,
}
