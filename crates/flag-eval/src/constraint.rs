//! Constraints: compiled once into typed matchers, evaluated without parsing or allocating (but
//! for a context value holding a capital sigma under `caseInsensitive`, lower-cased whole).

use std::cmp::Ordering;
use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use hashbrown::HashTable;
use ipnet::IpNet;
use regex::Regex;
use semver::Version;

use crate::context::{Context, parse_time};
use crate::error::ValidationError;
use crate::model::Constraint;
use crate::text::{Key, KeySet, KeyedText, head_word, tail_word};

/// Largest compiled size accepted for a `REGEX` pattern.
pub const DEFAULT_REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Lists longer than this are matched through a hash set instead of a scan.
const SET_THRESHOLD: usize = 8;

/// Every constraint operator Unleash defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// The value is one of `values`.
    In,
    /// The value is none of `values`, or missing.
    NotIn,
    /// The value starts with one of `values`.
    StrStartsWith,
    /// The value ends with one of `values`.
    StrEndsWith,
    /// The value contains one of `values`.
    StrContains,
    /// Numerically equal to `value`.
    NumEq,
    /// Numerically greater than `value`.
    NumGt,
    /// Numerically greater than or equal to `value`.
    NumGte,
    /// Numerically less than `value`.
    NumLt,
    /// Numerically less than or equal to `value`.
    NumLte,
    /// `currentTime` is after `value`.
    DateAfter,
    /// `currentTime` is before `value`.
    DateBefore,
    /// Semantic-version equality.
    SemverEq,
    /// Semantic version greater than `value`.
    SemverGt,
    /// Semantic version greater than or equal to `value`.
    SemverGte,
    /// Semantic version less than `value`.
    SemverLt,
    /// Semantic version less than or equal to `value`.
    SemverLte,
    /// The pattern in `value` matches somewhere in the value.
    Regex,
    /// The value is an IP address inside one of the networks in `values`.
    InCidr,
}

impl Operator {
    /// Parses an Unleash operator name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|operator| operator.name() == name)
    }

    /// The operator's name, as Unleash writes it.
    pub fn name(self) -> &'static str {
        match self {
            Self::In => "IN",
            Self::NotIn => "NOT_IN",
            Self::StrStartsWith => "STR_STARTS_WITH",
            Self::StrEndsWith => "STR_ENDS_WITH",
            Self::StrContains => "STR_CONTAINS",
            Self::NumEq => "NUM_EQ",
            Self::NumGt => "NUM_GT",
            Self::NumGte => "NUM_GTE",
            Self::NumLt => "NUM_LT",
            Self::NumLte => "NUM_LTE",
            Self::DateAfter => "DATE_AFTER",
            Self::DateBefore => "DATE_BEFORE",
            Self::SemverEq => "SEMVER_EQ",
            Self::SemverGt => "SEMVER_GT",
            Self::SemverGte => "SEMVER_GTE",
            Self::SemverLt => "SEMVER_LT",
            Self::SemverLte => "SEMVER_LTE",
            Self::Regex => "REGEX",
            Self::InCidr => "IN_CIDR",
        }
    }

    /// Whether the operator reads a list of `values` rather than one `value`.
    pub fn takes_list(self) -> bool {
        matches!(
            self,
            Self::In
                | Self::NotIn
                | Self::StrStartsWith
                | Self::StrEndsWith
                | Self::StrContains
                | Self::InCidr
        )
    }

    /// All operators, for tests and documentation.
    pub const ALL: [Self; 19] = [
        Self::In,
        Self::NotIn,
        Self::StrStartsWith,
        Self::StrEndsWith,
        Self::StrContains,
        Self::NumEq,
        Self::NumGt,
        Self::NumGte,
        Self::NumLt,
        Self::NumLte,
        Self::DateAfter,
        Self::DateBefore,
        Self::SemverEq,
        Self::SemverGt,
        Self::SemverGte,
        Self::SemverLt,
        Self::SemverLte,
        Self::Regex,
        Self::InCidr,
    ];
}

/// A context field, resolved from its Unleash name once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Field {
    UserId,
    SessionId,
    Environment,
    AppName,
    CurrentTime,
    RemoteAddress,
    Property(KeyedText),
}

impl Field {
    pub(crate) fn parse(name: &str) -> Self {
        match name {
            "userId" => Self::UserId,
            "sessionId" => Self::SessionId,
            "environment" => Self::Environment,
            "appName" => Self::AppName,
            "currentTime" => Self::CurrentTime,
            "remoteAddress" => Self::RemoteAddress,
            other => Self::Property(KeyedText::new(other)),
        }
    }

    /// The field's string value; `currentTime` has none.
    #[inline(always)]
    pub(crate) fn get<'c>(&self, context: &'c Context) -> Option<&'c str> {
        match self {
            Self::Property(name) => context.properties.get_keyed(name).map(|(value, _)| value),
            builtin => builtin.get_builtin(context),
        }
    }

    /// The field's string value with its key: kept with a custom property, made for the others.
    #[inline(always)]
    pub(crate) fn get_keyed<'c>(&self, context: &'c Context) -> Option<(&'c str, Key)> {
        match self {
            Self::Property(name) => context.properties.get_keyed(name),
            builtin => builtin
                .get_builtin(context)
                .map(|value| (value, Key::of(value.as_bytes()))),
        }
    }

    /// A field of the context itself. Its place is chosen first and read once, so that the
    /// choice compiles to a table of offsets.
    #[inline(always)]
    fn get_builtin<'c>(&self, context: &'c Context) -> Option<&'c str> {
        let field = match self {
            Self::UserId => &context.user_id,
            Self::SessionId => &context.session_id,
            Self::Environment => &context.environment,
            Self::AppName => &context.app_name,
            Self::RemoteAddress => &context.remote_address,
            Self::CurrentTime | Self::Property(_) => return None,
        };
        field.as_deref()
    }
}

/// A set of strings, compared by prepared keys ([`Key`]): a scan for short lists (of keys alone
/// when every text is at most 16 bytes, which its key decides), a hash table for long ones.
///
/// The lists are shared, not copied, when a constraint is cloned: a segment's constraints are
/// copied into every strategy that uses it.
#[derive(Clone)]
pub(crate) enum StrSet {
    Keys(Arc<[Key]>),
    KeySet(Arc<KeySet>),
    Scan(Arc<[KeyedText]>),
    Hash(Arc<HashTable<KeyedText>>),
}

impl std::fmt::Debug for StrSet {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Keys(keys) => formatter.debug_set().entries(keys.iter()).finish(),
            Self::KeySet(set) => set.fmt(formatter),
            Self::Scan(values) => formatter
                .debug_set()
                .entries(values.iter().map(KeyedText::as_str))
                .finish(),
            Self::Hash(values) => formatter
                .debug_set()
                .entries(values.iter().map(KeyedText::as_str))
                .finish(),
        }
    }
}

impl StrSet {
    pub(crate) fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let values: Vec<&str> = values.into_iter().collect();
        let long_list = values.len() > SET_THRESHOLD;
        if values.iter().all(|value| value.len() <= 16) {
            let keys: Vec<Key> = values.iter().map(|value| Key::of(value.as_bytes())).collect();
            return if long_list {
                Self::KeySet(Arc::new(KeySet::new(&keys)))
            } else {
                Self::Keys(keys.into())
            };
        }
        if !long_list {
            return Self::Scan(values.iter().map(|value| KeyedText::new(value)).collect());
        }
        let mut table: HashTable<KeyedText> = HashTable::with_capacity(values.len());
        for value in values {
            let value = KeyedText::new(value);
            let hash = value.hash();
            if table.find(hash, |existing| *existing == value).is_none() {
                table.insert_unique(hash, value, KeyedText::hash);
            }
        }
        Self::Hash(Arc::new(table))
    }

    #[inline(always)]
    pub(crate) fn contains(&self, value: &str) -> bool {
        self.contains_keyed(value, Key::of(value.as_bytes()))
    }

    /// [`StrSet::contains`] for a value whose key is `key`.
    #[inline(always)]
    pub(crate) fn contains_keyed(&self, value: &str, key: Key) -> bool {
        match self {
            Self::Keys(keys) => keys.contains(&key),
            Self::KeySet(set) => set.contains(key),
            Self::Scan(values) => {
                for candidate in values.iter() {
                    if candidate.matches(key, value) {
                        return true;
                    }
                }
                false
            }
            Self::Hash(table) => Self::hashed(table, value, key),
        }
    }

    #[inline(never)]
    fn hashed(table: &HashTable<KeyedText>, value: &str, key: Key) -> bool {
        table
            .find(key.hash(value), |candidate| candidate.matches(key, value))
            .is_some()
    }
}

/// Lower-cases `text` as `caseInsensitive` means in the SDKs: JavaScript's `toLowerCase` and
/// Rust's `str::to_lowercase` agree, every character lower-cased on its own except a capital sigma
/// that ends a word, which becomes `ς`.
pub fn fold_case(text: &str) -> String {
    text.to_lowercase()
}

/// Whether folding `text` character by character gives [`fold_case`]'s answer: only a capital
/// sigma depends on its neighbours. Text holding one is folded whole, which allocates.
fn folds_per_char(text: &str) -> bool {
    !text.contains('Σ')
}

fn folded_chars(text: &str) -> impl DoubleEndedIterator<Item = char> + Clone + '_ {
    text.chars().flat_map(char::to_lowercase)
}

#[inline(never)]
fn folded_starts_with(text: &str, folded_prefix: &str) -> bool {
    if !folds_per_char(text) {
        return fold_case(text).starts_with(folded_prefix);
    }
    let mut chars = folded_chars(text);
    folded_prefix
        .chars()
        .all(|expected| chars.next() == Some(expected))
}

#[inline(never)]
fn folded_ends_with(text: &str, folded_suffix: &str) -> bool {
    if !folds_per_char(text) {
        return fold_case(text).ends_with(folded_suffix);
    }
    let mut chars = text.chars().rev().flat_map(|c| c.to_lowercase().rev());
    folded_suffix
        .chars()
        .rev()
        .all(|expected| chars.next() == Some(expected))
}

#[inline(never)]
fn folded_contains(text: &str, folded_needle: &str) -> bool {
    if folded_needle.is_empty() {
        return true;
    }
    if !folds_per_char(text) {
        return fold_case(text).contains(folded_needle);
    }
    let mut rest = folded_chars(text);
    loop {
        let mut candidate = rest.clone();
        if folded_needle
            .chars()
            .all(|expected| candidate.next() == Some(expected))
        {
            return true;
        }
        if rest.next().is_none() {
            return false;
        }
    }
}

/// Whether every constraint holds for `context`. Out of line, so that a strategy without
/// constraints does not pay for the setup of this loop, into which [`CompiledConstraint::evaluate`]
/// is inlined.
#[inline(never)]
pub(crate) fn all_hold(constraints: &[CompiledConstraint], context: &Context) -> bool {
    for constraint in constraints {
        if !constraint.evaluate(context) {
            return false;
        }
    }
    true
}

/// A prefix or a suffix. One of 1 to 8 bytes is also kept as those bytes in their place in a
/// value's [`head_word`] (a prefix) or [`tail_word`] (a suffix), so that testing it is one
/// masked comparison.
#[derive(Debug, Clone)]
struct Affix {
    text: KeyedText,
    len: usize,
    word: u64,
    /// Selects the affix's bytes in the word; 0 for an affix that is empty or longer than 8 bytes,
    /// which compares its text.
    mask: u64,
}

impl Affix {
    fn prefix(text: &str) -> Self {
        Self::new(text, |len| u64::MAX >> (64 - 8 * len), head_word)
    }

    fn suffix(text: &str) -> Self {
        Self::new(text, |len| u64::MAX << (64 - 8 * len), tail_word)
    }

    /// `text`, with the mask `mask_of` gives a length of 1 to 8 bytes, and its bytes in their
    /// place in `word_of` the text.
    fn new(text: &str, mask_of: fn(usize) -> u64, word_of: fn(&[u8]) -> u64) -> Self {
        let len = text.len();
        let mask = if (1..=8).contains(&len) { mask_of(len) } else { 0 };
        Self {
            text: KeyedText::new(text),
            len,
            word: word_of(text.as_bytes()) & mask,
            mask,
        }
    }

    /// Whether this affix stands at `value`'s edge: `word` is the value's [`head_word`] for a
    /// prefix, its [`tail_word`] for a suffix, and `edge` the bytes of a given length there.
    #[inline(always)]
    fn is_at(&self, value: &[u8], word: u64, edge: fn(&[u8], usize) -> Option<&[u8]>) -> bool {
        self.len <= value.len()
            && if self.mask == 0 {
                edge(value, self.len).is_some_and(|part| self.text.matches_bytes(part))
            } else {
                word & self.mask == self.word
            }
    }
}

/// The first `len` bytes of `value`.
fn start_of(value: &[u8], len: usize) -> Option<&[u8]> {
    value.get(..len)
}

/// The last `len` bytes of `value`.
fn end_of(value: &[u8], len: usize) -> Option<&[u8]> {
    value.get(value.len().checked_sub(len)?..)
}

/// How a compiled constraint tests a value.
#[derive(Debug, Clone)]
enum Matcher {
    /// `IN`, and `NOT_IN`, which is its negation for every value, a missing one included: it is
    /// compiled as `IN` with `inverted` flipped.
    In(StrSet),
    StartsWith(Arc<[Affix]>),
    EndsWith(Arc<[Affix]>),
    Contains(Arc<[Box<str>]>),
    Number(Operator, f64),
    Date(Operator, DateTime<Utc>),
    Semver(Operator, Version),
    /// Shared, so that copies of a segment's constraint share one pattern and its caches.
    Regex(Arc<Regex>),
    Cidr(Arc<[IpNet]>),
    /// A definition that could not be compiled: false whatever `inverted` says.
    Never,
}

/// A constraint ready to evaluate.
#[derive(Debug, Clone)]
pub(crate) struct CompiledConstraint {
    field: Field,
    matcher: Matcher,
    case_insensitive: bool,
    inverted: bool,
}

impl CompiledConstraint {
    /// A constraint that never holds: what a missing segment contributes to its strategy.
    pub(crate) fn never() -> Self {
        Self {
            field: Field::UserId,
            matcher: Matcher::Never,
            case_insensitive: false,
            inverted: false,
        }
    }

    /// Compiles a constraint; a problem yields a constraint that is always false, and the error.
    pub(crate) fn compile(
        constraint: &Constraint,
        regex_size_limit: usize,
    ) -> (Self, Option<ValidationError>) {
        let (matcher, negated, error) = match compile_matcher(constraint, regex_size_limit) {
            Ok((operator, matcher)) => (matcher, operator == Operator::NotIn, None),
            Err(error) => (Matcher::Never, false, Some(error)),
        };
        let compiled = Self {
            field: Field::parse(&constraint.context_name),
            matcher,
            case_insensitive: constraint.is_case_insensitive(),
            inverted: constraint.is_inverted() != negated,
        };
        (compiled, error)
    }

    /// Evaluates the constraint for `context`. `IN`, `NOT_IN` and dates, the most common, are
    /// tested here, small enough to inline into the strategy's loop; the other operators are
    /// tested out of line, so their code does not weigh on these.
    #[inline(always)]
    pub(crate) fn evaluate(&self, context: &Context) -> bool {
        // Always case-sensitive: `caseInsensitive` applies to the `STR_*` operators only, as in
        // Yggdrasil, the Node SDK and Unleash's UI.
        if let Matcher::In(set) = &self.matcher {
            let found = self
                .field
                .get_keyed(context)
                .is_some_and(|(value, key)| set.contains_keyed(value, key));
            return found != self.inverted;
        }
        let matched = match &self.matcher {
            Matcher::Never => return false,
            Matcher::Date(operator, date) => match context.current_time.instant() {
                Some(now) => match operator {
                    Operator::DateAfter => now > *date,
                    _ => now < *date,
                },
                None => false,
            },
            matcher => match self.field.get(context) {
                Some(value) => self.test(matcher, value),
                None => false,
            },
        };
        matched != self.inverted
    }

    #[inline(never)]
    fn test(&self, matcher: &Matcher, value: &str) -> bool {
        let fold = self.case_insensitive;
        match matcher {
            Matcher::StartsWith(prefixes) if fold => prefixes
                .iter()
                .any(|prefix| folded_starts_with(value, prefix.text.as_str())),
            Matcher::StartsWith(prefixes) => {
                let head = head_word(value.as_bytes());
                prefixes
                    .iter()
                    .any(|prefix| prefix.is_at(value.as_bytes(), head, start_of))
            }
            Matcher::EndsWith(suffixes) if fold => suffixes
                .iter()
                .any(|suffix| folded_ends_with(value, suffix.text.as_str())),
            Matcher::EndsWith(suffixes) => {
                let tail = tail_word(value.as_bytes());
                suffixes
                    .iter()
                    .any(|suffix| suffix.is_at(value.as_bytes(), tail, end_of))
            }
            Matcher::Contains(needles) => needles.iter().any(|needle| {
                if fold {
                    folded_contains(value, needle)
                } else {
                    value.contains(&**needle)
                }
            }),
            Matcher::Number(operator, expected) => match js_number(value) {
                Some(actual) => compare(actual.partial_cmp(expected), *operator),
                None => false,
            },
            Matcher::Semver(operator, expected) => {
                let ordering = match plain_version(value) {
                    Some(parts) => parts.cmp(&[expected.major, expected.minor, expected.patch]).then(
                        if expected.pre.is_empty() {
                            Ordering::Equal
                        } else {
                            // A release ranks above its own pre-releases.
                            Ordering::Greater
                        },
                    ),
                    None => match full_version_order(value, expected) {
                        Some(ordering) => ordering,
                        None => return false,
                    },
                };
                compare(Some(ordering), *operator)
            }
            Matcher::Regex(regex) => regex_matches(regex, value),
            Matcher::Cidr(networks) => in_networks(networks, value),
            // Tested in `evaluate`.
            Matcher::In(_) | Matcher::Date(..) | Matcher::Never => false,
        }
    }
}

// The heavier tests live out of line, so that `test` keeps a small frame for the common ones.

#[inline(never)]
fn full_version_order(value: &str, expected: &Version) -> Option<Ordering> {
    Version::parse(value.trim())
        .ok()
        .map(|actual| actual.cmp_precedence(expected))
}

#[inline(never)]
fn regex_matches(regex: &Regex, value: &str) -> bool {
    regex.is_match(value)
}

#[inline(never)]
fn in_networks(networks: &[IpNet], value: &str) -> bool {
    value
        .trim()
        .parse::<IpAddr>()
        .is_ok_and(|address| networks.iter().any(|network| network.contains(&address)))
}

/// Reads a version written `MAJOR.MINOR.PATCH` and nothing else, as most are, without building a
/// [`Version`]: `None` for anything else (whitespace, a pre-release, build metadata, a leading
/// zero, a part too long to be sure of), which the full parser then reads or refuses.
fn plain_version(text: &str) -> Option<[u64; 3]> {
    let mut parts = [0_u64; 3];
    let mut part = 0;
    let mut digits = 0;
    for &byte in text.as_bytes() {
        if byte == b'.' {
            if digits == 0 || part == 2 {
                return None;
            }
            part += 1;
            digits = 0;
            continue;
        }
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 || (digits > 0 && parts[part] == 0) || digits == 18 {
            return None;
        }
        parts[part] = parts[part] * 10 + u64::from(digit);
        digits += 1;
    }
    (part == 2 && digits > 0).then_some(parts)
}

/// Reads a plain decimal integer of up to 15 digits, the usual number in a context, without the
/// general parser. Every such integer is exact as an `f64`, so the result is `Number`'s.
fn small_integer(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    if bytes.is_empty() || bytes.len() > 15 {
        return None;
    }
    bytes.iter().try_fold(0.0, |number: f64, &byte| {
        let digit = byte.wrapping_sub(b'0');
        (digit <= 9).then(|| number * 10.0 + f64::from(digit))
    })
}

/// Reads a number as JavaScript's `Number`, and so the Node SDK, reads the texts SDKs meet:
/// surrounding whitespace is ignored and `Infinity` may carry a sign, while Rust's own spellings
/// (`inf`, `NaN`) and the empty text are not numbers.
fn js_number(text: &str) -> Option<f64> {
    if let Some(number) = small_integer(text) {
        return Some(number);
    }
    let text = text.trim();
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    if unsigned == "Infinity" {
        return Some(if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if unsigned
        .bytes()
        .any(|byte| byte.is_ascii_alphabetic() && !matches!(byte, b'e' | b'E'))
    {
        return None;
    }
    text.parse::<f64>().ok().filter(|number| !number.is_nan())
}

fn compare(ordering: Option<Ordering>, operator: Operator) -> bool {
    let Some(ordering) = ordering else {
        return false;
    };
    match operator {
        Operator::NumEq | Operator::SemverEq => ordering == Ordering::Equal,
        Operator::NumGt | Operator::SemverGt => ordering == Ordering::Greater,
        Operator::NumGte | Operator::SemverGte => ordering != Ordering::Less,
        Operator::NumLt | Operator::SemverLt => ordering == Ordering::Less,
        Operator::NumLte | Operator::SemverLte => ordering != Ordering::Greater,
        _ => false,
    }
}

fn single_value(constraint: &Constraint) -> Result<&str, ValidationError> {
    constraint
        .value
        .as_deref()
        .or_else(|| constraint.values.first().map(String::as_str))
        .ok_or_else(|| ValidationError::MissingValue {
            operator: constraint.operator.clone(),
        })
}

/// Parses a network the way `IN_CIDR` and `remoteAddress` accept one: a CIDR or a bare address.
pub(crate) fn parse_network(text: &str) -> Option<IpNet> {
    let text = text.trim();
    text.parse::<IpNet>()
        .ok()
        .or_else(|| text.parse::<IpAddr>().ok().map(IpNet::from))
}

/// The constraint's operator and its matcher (`NOT_IN`'s is `IN`'s: the caller inverts it).
fn compile_matcher(
    constraint: &Constraint,
    regex_size_limit: usize,
) -> Result<(Operator, Matcher), ValidationError> {
    let operator = Operator::parse(&constraint.operator).ok_or_else(|| ValidationError::UnknownOperator {
        operator: constraint.operator.clone(),
    })?;
    let fold = constraint.is_case_insensitive();
    let strings = || -> Box<[Box<str>]> {
        constraint
            .values
            .iter()
            .map(|value| {
                if fold {
                    fold_case(value).into()
                } else {
                    value.as_str().into()
                }
            })
            .collect()
    };
    let affixes =
        |affix: fn(&str) -> Affix| -> Arc<[Affix]> { strings().iter().map(|text| affix(text)).collect() };
    let set = || StrSet::new(constraint.values.iter().map(String::as_str));
    let matcher = match operator {
        Operator::In | Operator::NotIn => Matcher::In(set()),
        Operator::StrStartsWith => Matcher::StartsWith(affixes(Affix::prefix)),
        Operator::StrEndsWith => Matcher::EndsWith(affixes(Affix::suffix)),
        Operator::StrContains => Matcher::Contains(strings().into()),
        Operator::NumEq | Operator::NumGt | Operator::NumGte | Operator::NumLt | Operator::NumLte => {
            let value = single_value(constraint)?;
            match js_number(value) {
                Some(number) => Matcher::Number(operator, number),
                None => {
                    return Err(ValidationError::InvalidNumber {
                        value: value.to_owned(),
                    });
                }
            }
        }
        Operator::DateAfter | Operator::DateBefore => {
            let value = single_value(constraint)?;
            let date = parse_time(value).ok_or_else(|| ValidationError::InvalidDate {
                value: value.to_owned(),
            })?;
            Matcher::Date(operator, date)
        }
        Operator::SemverEq
        | Operator::SemverGt
        | Operator::SemverGte
        | Operator::SemverLt
        | Operator::SemverLte => {
            let value = single_value(constraint)?;
            let version = Version::parse(value.trim()).map_err(|_| ValidationError::InvalidSemver {
                value: value.to_owned(),
            })?;
            Matcher::Semver(operator, version)
        }
        Operator::Regex => {
            let pattern = single_value(constraint)?;
            let regex = regex::RegexBuilder::new(pattern)
                .case_insensitive(fold)
                .size_limit(regex_size_limit)
                .dfa_size_limit(regex_size_limit)
                .build()
                .map_err(|error| ValidationError::InvalidRegex {
                    value: pattern.to_owned(),
                    reason: error.to_string(),
                })?;
            Matcher::Regex(Arc::new(regex))
        }
        Operator::InCidr => {
            // Entries that are not networks are skipped, as the SDKs do; the others still match.
            let networks: Arc<[IpNet]> = constraint
                .values
                .iter()
                .filter_map(|value| parse_network(value))
                .collect();
            if networks.is_empty() && !constraint.values.is_empty() {
                return Err(ValidationError::InvalidNetwork {
                    value: constraint.values.join(","),
                });
            }
            Matcher::Cidr(networks)
        }
    };
    Ok((operator, matcher))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constraint(context_name: &str, operator: &str, values: &[&str], value: Option<&str>) -> Constraint {
        Constraint {
            context_name: context_name.into(),
            operator: operator.into(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
            value: value.map(str::to_owned),
            case_insensitive: None,
            inverted: None,
        }
    }

    fn eval(constraint: &Constraint, context: &Context) -> bool {
        CompiledConstraint::compile(constraint, DEFAULT_REGEX_SIZE_LIMIT)
            .0
            .evaluate(context)
    }

    #[test]
    fn folded_helpers_agree_with_fold_case() {
        for (text, needle) in [
            ("HeLLo", "ll"),
            ("İstanbul", "i̇s"),
            ("ΣΑΣ", "σας"),
            ("ΣΑΣ", "ας"),
            ("ΣΑΣ ΣΑ", "ς σ"),
            ("abc", ""),
        ] {
            let folded = fold_case(text);
            assert_eq!(
                folded_starts_with(text, needle),
                folded.starts_with(needle),
                "{text}"
            );
            assert_eq!(folded_ends_with(text, needle), folded.ends_with(needle), "{text}");
            assert_eq!(folded_contains(text, needle), folded.contains(needle), "{text}");
        }
    }

    #[test]
    fn in_and_not_in_ignore_case_insensitive() {
        // Short lists are scanned, long ones hashed: both stay case-sensitive.
        for length in [1, 20] {
            let values: Vec<String> = (0..length).map(|i| format!("NO-{i}")).collect();
            let refs: Vec<&str> = values.iter().map(String::as_str).collect();
            let mut listed = constraint("answer", "IN", &refs, None);
            listed.case_insensitive = Some(true);
            let mut unlisted = constraint("answer", "NOT_IN", &refs, None);
            unlisted.case_insensitive = Some(true);
            let lower = Context::default().with_property("answer", "no-0");
            let exact = Context::default().with_property("answer", "NO-0");
            assert!(!eval(&listed, &lower), "IN, {length} values");
            assert!(eval(&listed, &exact), "IN, {length} values");
            assert!(eval(&unlisted, &lower), "NOT_IN, {length} values");
            assert!(!eval(&unlisted, &exact), "NOT_IN, {length} values");
        }
    }

    #[test]
    fn numbers_are_read_as_javascript_reads_them() {
        for (text, expected) in [
            ("4", Some(4.0)),
            (" 4 ", Some(4.0)),
            (".5", Some(0.5)),
            ("1e2", Some(100.0)),
            ("-Infinity", Some(f64::NEG_INFINITY)),
            ("Infinity", Some(f64::INFINITY)),
            ("inf", None),
            ("infinity", None),
            ("NaN", None),
            ("", None),
            ("4px", None),
        ] {
            assert_eq!(js_number(text), expected, "{text:?}");
        }
        let rule = constraint("age", "NUM_GT", &[], Some("1000"));
        assert!(eval(&rule, &Context::default().with_property("age", "Infinity")));
        assert!(!eval(&rule, &Context::default().with_property("age", "inf")));
    }

    #[test]
    fn plain_versions_compare_as_the_full_parser_does() {
        let texts = [
            "1.2.3",
            "1.10.0",
            "0.0.0",
            "01.2.3",
            "1.02.3",
            "1.2",
            "1.2.3.4",
            "1..3",
            ".1.2",
            "1.2.3-rc.1",
            "1.2.3+build",
            " 1.2.3 ",
            "18446744073709551615.0.0",
            "18446744073709551616.0.0",
            "999999999999999999.1.1",
            "",
        ];
        for expected in ["1.2.3", "1.10.0", "1.2.3-rc.1", "1.2.3+build", "0.0.0"] {
            for operator in ["SEMVER_EQ", "SEMVER_GT", "SEMVER_LT"] {
                let rule = constraint("version", operator, &[], Some(expected));
                let (compiled, _) = CompiledConstraint::compile(&rule, DEFAULT_REGEX_SIZE_LIMIT);
                let Matcher::Semver(_, version) = &compiled.matcher else {
                    panic!("{expected} is a version");
                };
                for text in texts {
                    let full = Version::parse(text.trim()).is_ok_and(|actual| {
                        compare(Some(actual.cmp_precedence(version)), compiled_operator(operator))
                    });
                    let context = Context::default().with_property("version", text);
                    assert_eq!(
                        compiled.evaluate(&context),
                        full,
                        "{text:?} {operator} {expected}"
                    );
                }
            }
        }
        assert_eq!(plain_version("1.10.0"), Some([1, 10, 0]));
        assert_eq!(plain_version("01.2.3"), None);
    }

    fn compiled_operator(name: &str) -> Operator {
        Operator::parse(name).unwrap_or(Operator::In)
    }

    #[test]
    fn small_integers_read_as_numbers_do() {
        for text in [
            "0",
            "42",
            "042",
            "123456789012345",
            "1234567890123456",
            "",
            "4a",
            "-4",
        ] {
            assert_eq!(
                small_integer(text).or_else(|| js_number(text)),
                text.trim().parse::<f64>().ok(),
                "{text:?}"
            );
        }
        assert_eq!(small_integer("1234567890123456"), None);
    }

    #[test]
    fn long_lists_and_affixes_compare_whole_values() {
        // Values past 16 bytes are told apart by their middle bytes too, in hashed lists and in
        // prefixes and suffixes alike.
        let long = |i: usize| format!("customer-{i:02}-of-the-enterprise-plan");
        let values: Vec<String> = (0..20).map(long).collect();
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        let listed = constraint("id", "IN", &refs, None);
        for i in 0..25 {
            let context = Context::default().with_property("id", &long(i));
            assert_eq!(eval(&listed, &context), i < 20, "{}", long(i));
        }
        let prefix = constraint("id", "STR_STARTS_WITH", &["customer-07-of-the-enterprise"], None);
        let suffix = constraint("id", "STR_ENDS_WITH", &["07-of-the-enterprise-plan"], None);
        for (i, expected) in [(7, true), (8, false), (17, false)] {
            let context = Context::default().with_property("id", &long(i));
            assert_eq!(eval(&prefix, &context), expected, "prefix {i}");
            assert_eq!(eval(&suffix, &context), expected, "suffix {i}");
        }
        let short = Context::default().with_property("id", "customer");
        assert!(!eval(&prefix, &short) && !eval(&suffix, &short));
    }

    #[test]
    fn affixes_of_every_length_agree_with_the_standard_library() {
        // Affixes of 1 to 8 bytes compare one masked word; others their text. Every pair of
        // samples, in both roles, at lengths on both sides of the word and with multi-byte text.
        let samples = [
            "",
            "a",
            "ab",
            "dev@",
            "dev@example.com",
            "abcdefg",
            "abcdefgh",
            "abcdefghi",
            "habcdefg",
            "é",
            "aé",
            "éa",
            "ops@é.example",
            "0123456789abcdef0",
            "@example.com",
            "example.com",
        ];
        for affix in samples {
            let prefix = constraint("v", "STR_STARTS_WITH", &[affix], None);
            let suffix = constraint("v", "STR_ENDS_WITH", &[affix], None);
            for value in samples {
                let context = Context::default().with_property("v", value);
                assert_eq!(
                    eval(&prefix, &context),
                    value.starts_with(affix),
                    "{value:?} starts with {affix:?}"
                );
                assert_eq!(
                    eval(&suffix, &context),
                    value.ends_with(affix),
                    "{value:?} ends with {affix:?}"
                );
            }
        }
    }

    #[test]
    fn lists_of_every_shape_agree_with_a_plain_search() {
        // Up to 8 short values are scanned by key; more are hashed by key; a list holding a value
        // past 16 bytes keeps its texts, scanned or hashed.
        let value = |i: usize| match i % 4 {
            0 => format!("u{i}"),
            1 => format!("user-{i}"),
            2 => format!("user-number-{i:04}"),
            _ => format!("user-{i}-of-the-enterprise"),
        };
        for size in [1, 2, 8, 9, 20, 64] {
            for long in [false, true] {
                let listed: Vec<String> = (0..size)
                    .map(|i| {
                        if long || i % 4 != 3 {
                            value(i)
                        } else {
                            format!("x{i}")
                        }
                    })
                    .collect();
                let refs: Vec<&str> = listed.iter().map(String::as_str).collect();
                let inside = constraint("v", "IN", &refs, None);
                let outside = constraint("v", "NOT_IN", &refs, None);
                for probe in (0..size + 8).map(value).chain([String::new(), "x3".to_owned()]) {
                    let context = Context::default().with_property("v", &probe);
                    let expected = listed.contains(&probe);
                    assert_eq!(
                        eval(&inside, &context),
                        expected,
                        "{probe:?} in {size} (long {long})"
                    );
                    assert_eq!(eval(&outside, &context), !expected, "{probe:?} not in {size}");
                }
            }
        }
    }

    #[test]
    fn in_reads_property_values_changed_in_place_moved_and_removed() {
        // `IN` compares the key a property's value keeps; every way of changing a value must
        // change that key, in small maps (slots) and in large ones (index).
        let listed = constraint("plan", "IN", &["pro", "enterprise"], None);
        let moved = constraint("k0", "IN", &["v0"], None);
        for size in [3, 20] {
            let mut context = Context::default();
            for i in 0..size {
                context.properties.insert(format!("k{i}"), format!("v{i}"));
            }
            context.properties.insert("plan".into(), "free".into());
            assert!(!eval(&listed, &context), "size {size}");
            context.properties.set("plan", "pro");
            assert!(eval(&listed, &context), "set, size {size}");
            context.properties.insert("plan".into(), "basic".into());
            assert!(!eval(&listed, &context), "insert over, size {size}");
            context.properties.set("plan", "enterprise");
            assert!(eval(&listed, &context), "set again, size {size}");
            // Removing the first entry moves the last one ("plan") into its place.
            assert!(eval(&moved, &context));
            context.properties.remove("k0");
            assert!(!eval(&moved, &context), "removed, size {size}");
            assert!(eval(&listed, &context), "moved, size {size}");
            context.properties.remove("plan");
            assert!(!eval(&listed, &context), "removed, size {size}");
        }
    }

    #[test]
    fn not_in_is_true_for_a_missing_field() {
        let rule = constraint("plan", "NOT_IN", &["pro"], None);
        assert!(eval(&rule, &Context::default()));
        assert!(!eval(&rule, &Context::default().with_property("plan", "pro")));
    }

    #[test]
    fn broken_definitions_stay_false_when_inverted() {
        for rule in [
            constraint("userId", "NOT_AN_OPERATOR", &["a"], None),
            constraint("age", "NUM_GT", &[], Some("many")),
            constraint("version", "SEMVER_GT", &[], Some("v1.2.3")),
            constraint("userId", "REGEX", &[], Some("(unclosed")),
        ] {
            let mut inverted = rule.clone();
            inverted.inverted = Some(true);
            let (_, error) = CompiledConstraint::compile(&rule, DEFAULT_REGEX_SIZE_LIMIT);
            assert!(error.is_some(), "{rule:?}");
            assert!(!eval(
                &inverted,
                &Context::for_user("a").with_property("age", "3")
            ));
        }
    }

    #[test]
    fn dates_accept_any_number_of_fraction_digits() -> Result<(), String> {
        let now = parse_time("2024-06-01T12:00:00Z").ok_or("now")?;
        for value in [
            "2024-06-01T11:59:59Z",
            "2024-06-01T11:59:59.5Z",
            "2024-06-01T11:59:59.123456789Z",
        ] {
            let rule = constraint("currentTime", "DATE_AFTER", &[], Some(value));
            assert!(eval(&rule, &Context::default().at(now)), "{value}");
        }
        Ok(())
    }

    #[test]
    fn regex_size_limit_is_enforced() {
        let rule = constraint("userId", "REGEX", &[], Some("(a{1000}){1000}"));
        let (_, error) = CompiledConstraint::compile(&rule, 1 << 16);
        assert!(matches!(error, Some(ValidationError::InvalidRegex { .. })));
    }
}
