//! The values the API's rules are about, each parsed and checked once, where a request enters.
//!
//! A handler that holds a [`ResourceName`], a [`RootRole`] or a [`Timestamp`] never checks it
//! again, and each type's OpenAPI schema states the same rule its parser enforces.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

/// A URL-friendly name: 1 to 100 characters of `a-z`, `A-Z`, `0-9`, `~`, `_`, `.` and `-`, and not
/// `.` or `..`. Projects, environments, features, context fields and strategy types are named
/// with it; surrounding white space is trimmed first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct ResourceName(String);

impl ResourceName {
    /// The longest name.
    pub const MAX_LEN: usize = 100;
    const PATTERN: &'static str = "^[a-zA-Z0-9~_.-]{1,100}$";

    /// The name as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as an owned string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl TryFrom<&str> for ResourceName {
    type Error = String;

    fn try_from(text: &str) -> Result<Self, Self::Error> {
        let name = text.trim();
        let valid = !name.is_empty()
            && name.len() <= Self::MAX_LEN
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
            && name != "."
            && name != "..";
        if valid {
            Ok(Self(name.to_owned()))
        } else {
            Err(format!(
                "{text:?} is not a URL-friendly name of 1 to {} characters (a-z, A-Z, 0-9, ~, _, ., -)",
                Self::MAX_LEN
            ))
        }
    }
}

impl<'de> Deserialize<'de> for ResourceName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::try_from(text.as_str()).map_err(de::Error::custom)
    }
}

impl fmt::Display for ResourceName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl PartialSchema for ResourceName {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(Self::PATTERN))
            .min_length(Some(1))
            .max_length(Some(Self::MAX_LEN))
            .description(Some("A URL-friendly name"))
            .into()
    }
}

impl ToSchema for ResourceName {}

/// Declares a text newtype checked once, where it is read: `$check` answers why a text is not
/// one, and the schema gives its pattern and lengths.
macro_rules! checked_text {
    ($(#[$doc:meta])* $name:ident, $pattern:expr, $min:expr, $max:expr, $what:expr, $check:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl TryFrom<&str> for $name {
            type Error = String;

            fn try_from(text: &str) -> Result<Self, Self::Error> {
                let check: fn(&str) -> Option<String> = $check;
                match check(text) {
                    Some(text) => Ok(Self(text)),
                    None => Err(format!("{text:?} is not {}", $what)),
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                Self::try_from(text.as_str()).map_err(de::Error::custom)
            }
        }

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern($pattern)
                    .min_length(Some($min))
                    .max_length($max)
                    .description(Some($what))
                    .into()
            }
        }

        impl ToSchema for $name {}
    };
}

checked_text!(
    /// A tag type's name: URL-friendly, 2 to 50 characters.
    TagTypeName,
    Some("^[a-zA-Z0-9~_.-]{2,50}$"),
    2,
    Some(50),
    "a URL-friendly name of 2 to 50 characters",
    |text| {
        let name = text.trim();
        (2..=50).contains(&name.len()).then(|| name.to_owned()).filter(|name| {
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
        })
    }
);

checked_text!(
    /// A tag's value: 2 to 50 characters once surrounding white space is trimmed.
    TagValue,
    Some(r"^\s*\S.{0,48}\S\s*$"),
    2,
    None,
    "a tag value of 2 to 50 characters on one line, around which white space is trimmed",
    |text| {
        let value = text.trim();
        ((2..=50).contains(&value.chars().count())
            && !value.contains(['\n', '\r', '\u{2028}', '\u{2029}']))
        .then(|| value.to_owned())
    }
);

checked_text!(
    /// A colour: `#` and six hexadecimal digits.
    Color,
    Some("^#[0-9A-Fa-f]{6}$"),
    7,
    Some(7),
    "a colour: # and six hexadecimal digits",
    |text| {
        (text.len() == 7 && text.starts_with('#') && text[1..].chars().all(|c| c.is_ascii_hexdigit()))
            .then(|| text.to_owned())
    }
);

/// A user's root role and an API token's type are columns the store reads typed, so their
/// types live in flag-store; they are named here as they always were.
pub use flag_store::models::{RootRole, TokenType};

/// The OpenAPI schema of [`RootRole`]. The type lives in flag-store, which does not depend on
/// utoipa, so a field of that type names this one with `#[schema(value_type = RootRoleSchema)]`;
/// the document calls it `RootRole`.
#[derive(Debug)]
pub struct RootRoleSchema;

impl PartialSchema for RootRoleSchema {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::Integer)
                    .minimum(Some(1))
                    .maximum(Some(3)),
            )
            .item(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(
                "1 (Admin), 2 (Editor) or 3 (Viewer), as a number, a numeric string or the role's name in any letter case",
            ))
            .into()
    }
}

impl ToSchema for RootRoleSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("RootRole")
    }
}

/// A root role as a request gives one: built in (1 Admin, 2 Editor, 3 Viewer, or the name), or
/// a custom root role by its id, whose existence and kind the store checks when it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnyRootRole {
    /// Admin, Editor or Viewer.
    BuiltIn(RootRole),
    /// A custom root role's id (above 5, the built-in roles').
    Custom(i32),
}

impl AnyRootRole {
    /// The built-in root role it gives (Viewer under a custom one, whose permissions add to
    /// it), and the custom role.
    pub fn parts(self) -> (RootRole, Option<i32>) {
        match self {
            Self::BuiltIn(role) => (role, None),
            Self::Custom(id) => (RootRole::Viewer, Some(id)),
        }
    }

    /// The role with id `id`, read as a body's `rootRole` number is.
    pub fn from_id(id: i64) -> Result<Self, String> {
        match i32::try_from(id) {
            Ok(id) if id > 5 => Ok(Self::Custom(id)),
            _ => RootRole::deserialize(
                serde::de::IntoDeserializer::<serde::de::value::Error>::into_deserializer(id),
            )
            .map(Self::BuiltIn)
            .map_err(|error| format!("{error}, or a custom root role's id")),
        }
    }
}

impl<'de> Deserialize<'de> for AnyRootRole {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Number(number) => number
                .as_i64()
                .ok_or_else(|| de::Error::custom(format!("{number} is not a role's id")))
                .and_then(|id| Self::from_id(id).map_err(de::Error::custom)),
            serde_json::Value::String(text) => match text.trim().parse::<i64>() {
                Ok(id) => Self::from_id(id).map_err(de::Error::custom),
                Err(_) => RootRole::deserialize(serde_json::Value::String(text))
                    .map(Self::BuiltIn)
                    .map_err(de::Error::custom),
            },
            other => Err(de::Error::custom(format!(
                "{other} is not a root role: give 1 (Admin), 2 (Editor), 3 (Viewer), a custom root role's id, or a name"
            ))),
        }
    }
}

impl PartialSchema for AnyRootRole {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)))
            .item(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(
                "1 (Admin), 2 (Editor), 3 (Viewer) or a custom root role's id, as a number or a numeric string, or a built-in role's name in any letter case",
            ))
            .into()
    }
}

impl ToSchema for AnyRootRole {}

/// The OpenAPI schema of [`TokenType`]: its names, lower-case. The type lives in flag-store, which
/// does not depend on utoipa, so a field of that type names this one with
/// `#[schema(value_type = TokenTypeSchema)]`; the document calls it `TokenType`.
#[derive(Debug)]
pub struct TokenTypeSchema;

impl PartialSchema for TokenTypeSchema {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some("What an API token may be used for."))
            .enum_values(Some(TokenType::ALL.map(TokenType::as_str)))
            .into()
    }
}

impl ToSchema for TokenTypeSchema {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TokenType")
    }
}

/// A feature flag's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureType {
    /// A release toggle (the default).
    #[default]
    Release,
    /// An experiment.
    Experiment,
    /// An operational toggle.
    Operational,
    /// A kill switch.
    KillSwitch,
    /// A permission toggle.
    Permission,
    /// A flag being retired.
    Sunset,
}

impl FeatureType {
    /// Every type, in Unleash's order.
    pub const ALL: [Self; 6] = [
        Self::Release,
        Self::Experiment,
        Self::Operational,
        Self::KillSwitch,
        Self::Permission,
        Self::Sunset,
    ];

    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Experiment => "experiment",
            Self::Operational => "operational",
            Self::KillSwitch => "kill-switch",
            Self::Permission => "permission",
            Self::Sunset => "sunset",
        }
    }
}

/// What a caller needs to be allowed to do something; named in 403 answers as Unleash names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// Administration: tokens, users, invite links, projects, environments, context fields,
    /// strategy types.
    Admin,
    /// Creating a feature.
    CreateFeature,
    /// Changing a feature: its fields, tags, staleness, reviving it.
    UpdateFeature,
    /// Archiving a feature, or deleting an archived one.
    DeleteFeature,
    /// Creating a tag type.
    CreateTagType,
    /// Changing a tag type.
    UpdateTagType,
    /// Deleting a tag type.
    DeleteTagType,
    /// Changing a segment.
    UpdateSegment,
    /// Deleting a segment.
    DeleteSegment,
    /// Switching a feature on or off in an environment.
    UpdateFeatureEnvironment,
    /// Adding a strategy.
    CreateFeatureStrategy,
    /// Changing a strategy.
    UpdateFeatureStrategy,
    /// Removing a strategy.
    DeleteFeatureStrategy,
    /// Adding or removing a dependency.
    UpdateFeatureDependency,
    /// Creating a segment.
    CreateSegment,
    /// Writing an environment's variants.
    UpdateFeatureEnvironmentVariants,
    /// Reading an environment's variants.
    ReadFeatureEnvironmentVariants,
    /// Asking the playground about an environment.
    Playground,
    /// Changing a project's name and description.
    UpdateProject,
    /// Changing a project's settings: mode, naming pattern, links.
    ProjectSettingsWrite,
    /// Changing who holds which role in a project.
    ProjectUserAccessWrite,
    /// Deleting a project.
    DeleteProject,
    /// Creating a context field.
    CreateContextField,
    /// Changing a context field and its legal values.
    UpdateContextField,
    /// Deleting a context field.
    DeleteContextField,
    /// Registering a strategy type.
    CreateStrategy,
    /// Changing or deprecating a strategy type.
    UpdateStrategy,
    /// Deleting a strategy type.
    DeleteStrategy,
    /// Creating an integration.
    CreateAddon,
    /// Changing an integration, or sending it a sample.
    UpdateAddon,
    /// Deleting an integration.
    DeleteAddon,
    /// Creating a client or backend API token.
    CreateClientApiToken,
    /// Changing when a client or backend API token expires.
    UpdateClientApiToken,
    /// Deleting a client or backend API token.
    DeleteClientApiToken,
    /// Creating a frontend API token.
    CreateFrontendApiToken,
    /// Changing when a frontend API token expires.
    UpdateFrontendApiToken,
    /// Deleting a frontend API token.
    DeleteFrontendApiToken,
    /// Creating a project.
    CreateProject,
    /// Approving or rejecting change requests in an environment.
    ApproveChangeRequest,
    /// Applying or scheduling approved change requests in an environment.
    ApplyChangeRequest,
}

impl Permission {
    /// The name Unleash gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "ADMIN",
            Self::CreateFeature => "CREATE_FEATURE",
            Self::UpdateFeature => "UPDATE_FEATURE",
            Self::DeleteFeature => "DELETE_FEATURE",
            Self::CreateTagType => "CREATE_TAG_TYPE",
            Self::UpdateTagType => "UPDATE_TAG_TYPE",
            Self::DeleteTagType => "DELETE_TAG_TYPE",
            Self::UpdateSegment => "UPDATE_SEGMENT",
            Self::DeleteSegment => "DELETE_SEGMENT",
            Self::UpdateFeatureEnvironment => "UPDATE_FEATURE_ENVIRONMENT",
            Self::CreateFeatureStrategy => "CREATE_FEATURE_STRATEGY",
            Self::UpdateFeatureStrategy => "UPDATE_FEATURE_STRATEGY",
            Self::DeleteFeatureStrategy => "DELETE_FEATURE_STRATEGY",
            Self::UpdateFeatureDependency => "UPDATE_FEATURE_DEPENDENCY",
            Self::CreateSegment => "CREATE_SEGMENT",
            Self::UpdateFeatureEnvironmentVariants => "UPDATE_FEATURE_ENVIRONMENT_VARIANTS",
            Self::ReadFeatureEnvironmentVariants => "READ_FEATURE_ENVIRONMENT_VARIANTS",
            Self::Playground => "PLAYGROUND",
            Self::UpdateProject => "UPDATE_PROJECT",
            Self::ProjectSettingsWrite => "PROJECT_SETTINGS_WRITE",
            Self::ProjectUserAccessWrite => "PROJECT_USER_ACCESS_WRITE",
            Self::DeleteProject => "DELETE_PROJECT",
            Self::CreateContextField => "CREATE_CONTEXT_FIELD",
            Self::UpdateContextField => "UPDATE_CONTEXT_FIELD",
            Self::DeleteContextField => "DELETE_CONTEXT_FIELD",
            Self::CreateStrategy => "CREATE_STRATEGY",
            Self::UpdateStrategy => "UPDATE_STRATEGY",
            Self::DeleteStrategy => "DELETE_STRATEGY",
            Self::CreateAddon => "CREATE_ADDON",
            Self::UpdateAddon => "UPDATE_ADDON",
            Self::DeleteAddon => "DELETE_ADDON",
            Self::CreateClientApiToken => "CREATE_CLIENT_API_TOKEN",
            Self::UpdateClientApiToken => "UPDATE_CLIENT_API_TOKEN",
            Self::DeleteClientApiToken => "DELETE_CLIENT_API_TOKEN",
            Self::CreateFrontendApiToken => "CREATE_FRONTEND_API_TOKEN",
            Self::UpdateFrontendApiToken => "UPDATE_FRONTEND_API_TOKEN",
            Self::DeleteFrontendApiToken => "DELETE_FRONTEND_API_TOKEN",
            Self::CreateProject => "CREATE_PROJECT",
            Self::ApproveChangeRequest => "APPROVE_CHANGE_REQUEST",
            Self::ApplyChangeRequest => "APPLY_CHANGE_REQUEST",
        }
    }

    /// Whether it administers a project rather than writing its flags: held everywhere by the
    /// Admin role and admin tokens only, and in a project by its owners.
    pub fn administers_project(self) -> bool {
        matches!(
            self,
            Self::UpdateProject
                | Self::ProjectSettingsWrite
                | Self::ProjectUserAccessWrite
                | Self::DeleteProject
                | Self::ApproveChangeRequest
                | Self::ApplyChangeRequest
        )
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// An instant in a request body, accepted only when JavaScript reads it as the same instant (RFC
/// 3339 with a time zone, a four-digit year, no leap second; see
/// [`flag_eval::parse_time_strict`]), because Unleash's SDKs and UI are JavaScript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    /// `text` read as a body's time is (a form's field, say), with the same refusal.
    pub fn read(text: &str) -> Result<Self, String> {
        flag_eval::parse_time_strict(text).map(Self).ok_or_else(|| {
            format!(
                "{text:?} is not an RFC 3339 date-time with a time zone, a four-digit year and no leap second"
            )
        })
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::read(&String::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

impl PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::new(Type::String))
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::DateTime,
            )))
            .pattern(Some("^[0-9]{4}-"))
            .description(Some(
                "RFC 3339 with a time zone, a four-digit year and no leap second",
            ))
            .into()
    }
}

impl ToSchema for Timestamp {}

/// The oldest version of each official SDK that Unleash does not call outdated, by the name SDKs
/// report (`unleash-client-node`, and the names after the SDKs were renamed).
const SUPPORTED_SDKS: [(&str, &str); 16] = [
    ("unleash-client-node", "5.3.2"),
    ("unleash-client-nextjs", "1.6.2"),
    ("unleash-client-java", "9.2.0"),
    ("unleash-client-go", "4.1.0"),
    ("unleash-client-python", "5.11.0"),
    ("unleash-client-ruby", "5.0.0"),
    ("unleash-client-dotnet", "4.1.3"),
    ("unleash-client-php", "2.3.0"),
    ("unleash-node-sdk", "6.6.0"),
    ("unleash-nextjs-sdk", "1.6.2"),
    ("unleash-java-sdk", "11.0.2"),
    ("unleash-go-sdk", "5.0.3"),
    ("unleash-python-sdk", "6.3.0"),
    ("unleash-ruby-sdk", "6.3.1"),
    ("unleash-dotnet-sdk", "5.3.0"),
    ("unleash-php-sdk", "2.9.1"),
];

/// Whether an SDK that reported itself as `name:version` is older than Unleash supports; an
/// SDK it does not know, or a version that is not semantic, is not outdated.
pub fn outdated_sdk(sdk_version: &str) -> bool {
    let Some((name, version)) = sdk_version.split_once(':') else {
        return false;
    };
    let Some((_, oldest)) = SUPPORTED_SDKS.iter().find(|(known, _)| *known == name) else {
        return false;
    };
    match (semver::Version::parse(version), semver::Version::parse(oldest)) {
        (Ok(version), Ok(oldest)) => version < oldest,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn resource_names_have_one_rule() {
        for good in ["default", "a", "my-project_1.x~", &"n".repeat(100), "  padded  "] {
            assert!(ResourceName::try_from(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            " ",
            ".",
            "..",
            "with space",
            "slash/es",
            "ümlaut",
            &"n".repeat(101),
        ] {
            assert!(ResourceName::try_from(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ResourceName::try_from(" x ").map(ResourceName::into_string),
            Ok("x".into())
        );
    }

    #[test]
    fn feature_types_parse_once() -> Result<(), serde_json::Error> {
        assert_eq!(
            serde_json::from_value::<FeatureType>(json!("kill-switch"))?,
            FeatureType::KillSwitch
        );
        assert!(serde_json::from_value::<FeatureType>(json!("Release")).is_err());
        Ok(())
    }

    #[test]
    fn stand_in_schemas_describe_the_store_types_under_their_names() -> Result<(), serde_json::Error> {
        assert_eq!(RootRoleSchema::name(), "RootRole");
        assert_eq!(TokenTypeSchema::name(), "TokenType");
        assert_eq!(
            serde_json::to_value(TokenTypeSchema::schema())?["enum"],
            json!(["admin", "client", "backend", "frontend"])
        );
        Ok(())
    }

    #[test]
    fn sdks_older_than_unleash_supports_are_outdated() {
        assert!(super::outdated_sdk("unleash-client-node:5.3.1"));
        assert!(!super::outdated_sdk("unleash-client-node:5.3.2"));
        assert!(super::outdated_sdk("unleash-python-sdk:6.2.9"));
        assert!(
            !super::outdated_sdk("unleash-client-rust:0.1.0"),
            "unknown SDKs are not outdated"
        );
        assert!(
            !super::outdated_sdk("unleash-client-node:five"),
            "nor versions that are not semantic"
        );
        assert!(!super::outdated_sdk("no-version"));
    }
}
