//! The evaluation context: who is asking, and the outside world the engine may not read itself.
//!
//! The engine never reads a clock or a random source. The current time arrives as
//! [`Context::current_time`] and randomness (for `random` stickiness and `gradualRolloutRandom`)
//! through [`Context::random`], so every evaluation is reproducible.

use std::cell::Cell;

use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};

use crate::properties::Properties;

/// The context a flag is evaluated for.
///
/// Deserialises from Unleash's context JSON (`userId`, `sessionId`, `properties`, ...) as
/// Unleash's SDKs read it ([`crate::context_from_json`]): numbers and booleans given for string
/// fields are read as strings and `null` as absent, and every other top-level field is a
/// property (`{"userId": "u", "tenant": "acme"}` has the property `tenant`), which wins over one
/// of the same name in `properties`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// The user's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The session's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The environment the application says it runs in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The application's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_name: Option<String>,
    /// The instant `DATE_AFTER` and `DATE_BEFORE` compare against. The engine has no clock: while
    /// it is unset, date constraints are false; callers that mean "now" fill it in with
    /// [`CurrentTime::or_at`], which leaves an unreadable time unreadable.
    #[serde(skip_serializing_if = "CurrentTime::is_unset")]
    pub current_time: CurrentTime,
    /// The client's IP address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_address: Option<String>,
    /// Any other fields.
    #[serde(skip_serializing_if = "Properties::is_empty")]
    pub properties: Properties,
    /// Where `random` stickiness and `gradualRolloutRandom` draw from.
    #[serde(skip)]
    pub random: Randomness,
}

impl Context {
    /// A context for the given user.
    pub fn for_user(user_id: &str) -> Self {
        Self {
            user_id: Some(user_id.to_owned()),
            ..Self::default()
        }
    }

    /// Sets a custom property, replacing any earlier value.
    pub fn with_property(mut self, name: &str, value: &str) -> Self {
        self.properties.insert(name.to_owned(), value.to_owned());
        self
    }

    /// Sets the instant date constraints compare against.
    pub fn at(mut self, now: DateTime<Utc>) -> Self {
        self.current_time = CurrentTime::At(now);
        self
    }

    /// Seeds the random source, so that random rollouts differ between requests.
    pub fn with_random_seed(self, seed: u64) -> Self {
        self.random.reseed(seed);
        self
    }

    /// The value of a context field by its Unleash name, as constraints and stickiness read it.
    /// `currentTime` is not a string field and always reads as absent here.
    pub fn field(&self, name: &str) -> Option<&str> {
        match name {
            "userId" => self.user_id.as_deref(),
            "sessionId" => self.session_id.as_deref(),
            "environment" => self.environment.as_deref(),
            "appName" => self.app_name.as_deref(),
            "remoteAddress" => self.remote_address.as_deref(),
            "currentTime" => None,
            other => self.properties.get(other),
        }
    }
}

/// A context's `currentTime`: unset, an instant, or a value that is not a date.
///
/// The SDKs tell the last two apart: a context without a time is evaluated now, while a time that
/// does not parse makes every date constraint false before inversion (so an inverted one is true),
/// in Yggdrasil and in the Node SDK alike. An empty string counts as unset, as in the Node SDK and
/// the playground.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CurrentTime {
    /// No time given.
    #[default]
    Unset,
    /// The instant date constraints compare against.
    At(DateTime<Utc>),
    /// A time was given but is not a date.
    Unreadable,
}

impl CurrentTime {
    /// Reads a context's `currentTime` text as the SDKs do.
    pub fn parse(text: &str) -> Self {
        if text.is_empty() {
            return Self::Unset;
        }
        parse_time(text).map_or(Self::Unreadable, Self::At)
    }

    /// `now` when unset; an instant or an unreadable time stays as it is.
    #[must_use]
    pub fn or_at(self, now: DateTime<Utc>) -> Self {
        match self {
            Self::Unset => Self::At(now),
            other => other,
        }
    }

    /// The instant, when there is one.
    pub fn instant(self) -> Option<DateTime<Utc>> {
        match self {
            Self::At(instant) => Some(instant),
            Self::Unset | Self::Unreadable => None,
        }
    }

    /// Whether no time was given.
    pub fn is_unset(&self) -> bool {
        matches!(self, Self::Unset)
    }
}

impl From<DateTime<Utc>> for CurrentTime {
    fn from(instant: DateTime<Utc>) -> Self {
        Self::At(instant)
    }
}

/// Written as the instant, or `null` for an unreadable time.
impl Serialize for CurrentTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::At(instant) => instant.serialize(serializer),
            Self::Unset | Self::Unreadable => serializer.serialize_none(),
        }
    }
}

/// Read leniently, as the SDKs read it: `null` is unset, numbers and booleans are text that is
/// not a date, and a string that does not parse is unreadable rather than an error.
impl<'de> Deserialize<'de> for CurrentTime {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(scalar(serde_json::Value::deserialize(deserializer)?)
            .map_or(Self::Unset, |text| Self::parse(&text)))
    }
}

/// A small deterministic random source (SplitMix64) carried by the context.
///
/// It sits in a [`Cell`] so that evaluation can draw from it through a shared reference.
#[derive(Debug, Clone)]
pub struct Randomness(Cell<u64>);

impl Default for Randomness {
    fn default() -> Self {
        Self(Cell::new(Self::UNSEEDED))
    }
}

impl Randomness {
    /// The state of a source that was never seeded: [`Randomness::default`]'s.
    pub const UNSEEDED: u64 = 0x853c_49e6_748f_ea9b;

    /// Replaces the state with `seed`.
    pub fn reseed(&self, seed: u64) {
        self.0.set(seed);
    }

    /// The current state, to restore with [`Randomness::reseed`].
    pub fn state(&self) -> u64 {
        self.0.get()
    }

    /// The next 64 random bits.
    pub fn next_u64(&self) -> u64 {
        let state = self.0.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.0.set(state);
        let mut mixed = state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^ (mixed >> 31)
    }

    /// A number in `1..=bound`; `bound` must be at least 1.
    pub fn one_to(&self, bound: u32) -> u32 {
        let bound = u64::from(bound.max(1));
        // `bound` fits in u32, so the remainder does too.
        u32::try_from(self.next_u64() % bound).unwrap_or(0) + 1
    }
}

/// Parses a timestamp the way Unleash clients send one: RFC 3339 with any number of fractional
/// digits, an offset written without a colon (`+0200`), or a date-time without offset taken as
/// UTC.
pub fn parse_time(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(time) = DateTime::<FixedOffset>::parse_from_rfc3339(text) {
        return Some(time.with_timezone(&Utc));
    }
    if let Ok(time) = DateTime::<FixedOffset>::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f%z") {
        return Some(time.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .map(|naive| naive.and_utc())
}

/// Parses a timestamp only when a JavaScript `Date`, and so Unleash and its SDKs, reads it as the
/// same instant: RFC 3339 with a time zone, a four-digit year, and no leap second (`23:59:60`).
/// chrono reads `+10000-01-01T00:00:00Z` and leap seconds, JavaScript does not.
pub fn parse_time_strict(text: &str) -> Option<DateTime<Utc>> {
    let four_digit_year =
        text.len() > 4 && text.as_bytes()[..4].iter().all(u8::is_ascii_digit) && text.as_bytes()[4] == b'-';
    if !four_digit_year {
        return None;
    }
    let time = DateTime::<FixedOffset>::parse_from_rfc3339(text).ok()?;
    // chrono keeps a leap second as a nanosecond count past one second.
    (time.timestamp_subsec_nanos() < 1_000_000_000).then(|| time.with_timezone(&Utc))
}

pub(crate) fn scalar(value: serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Null => None,
        serde_json::Value::String(text) => Some(text),
        serde_json::Value::Bool(flag) => Some(flag.to_string()),
        serde_json::Value::Number(number) => Some(number.to_string()),
        // Objects and arrays are not context values; SDKs ignore them.
        serde_json::Value::Array(_) | serde_json::Value::Object(_) => None,
    }
}

impl<'de> Deserialize<'de> for Context {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let fields = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        Ok(crate::combinations::context_from_json(&fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_times_are_those_javascript_reads() {
        for good in [
            "2024-06-01T12:00:00Z",
            "2024-06-01T12:00:00.123456+02:00",
            "9999-12-31T23:59:59.999Z",
            "0001-01-01T00:00:00Z",
        ] {
            assert!(parse_time_strict(good).is_some(), "{good}");
        }
        for bad in [
            "+10000-01-01T00:00:00Z",
            "2016-12-31T23:59:60Z",
            "2024-06-01T12:00:00",
            "2024-06-01",
            "24-06-01T12:00:00Z",
            "",
            "not a date",
        ] {
            assert!(parse_time_strict(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn reads_unleash_context_json() -> Result<(), serde_json::Error> {
        let context: Context = serde_json::from_str(
            r#"{"userId":123,"properties":{"nested":null,"plan":"pro","n":7},
                "currentTime":"2024-01-01T10:00:00.1234Z"}"#,
        )?;
        assert_eq!(context.user_id.as_deref(), Some("123"));
        assert_eq!(context.field("plan"), Some("pro"));
        assert_eq!(context.field("n"), Some("7"));
        assert_eq!(context.field("nested"), None);
        assert!(context.current_time.instant().is_some());
        Ok(())
    }

    #[test]
    fn top_level_custom_fields_are_properties_and_win_over_properties() -> Result<(), serde_json::Error> {
        let context: Context = serde_json::from_str(
            r#"{"userId":"u","tenant":"acme","plan":"pro","properties":{"plan":"free","region":"eu"}}"#,
        )?;
        assert_eq!(context.field("tenant"), Some("acme"));
        assert_eq!(context.field("plan"), Some("pro"));
        assert_eq!(context.field("region"), Some("eu"));
        assert!(serde_json::from_str::<Context>("[1]").is_err());
        Ok(())
    }

    #[test]
    fn randomness_is_reproducible_and_in_range() {
        let first = Randomness::default();
        let second = Randomness::default();
        for _ in 0..1000 {
            let value = first.one_to(100);
            assert_eq!(value, second.one_to(100));
            assert!((1..=100).contains(&value));
        }
    }

    #[test]
    fn parses_times_with_any_fraction() {
        for text in [
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00.1Z",
            "2024-01-01T00:00:00.123456+02:00",
            "2024-01-01T00:00:00",
        ] {
            assert!(parse_time(text).is_some(), "{text}");
        }
        assert_eq!(
            parse_time("2024-01-01T02:00:00+0200"),
            parse_time("2024-01-01T00:00:00Z")
        );
        assert!(parse_time("yesterday").is_none());
    }
}
