//! Short texts compared without `memcmp`. Flag names, property names and constraint values are
//! mostly under 17 bytes, where calling `memcmp` costs more than the comparison itself.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

/// The hash long value lists, and flag names longer than 16 bytes, are looked up by; shorter
/// names are hashed from their [`Key`].
#[inline]
pub(crate) fn hash_str(value: &str) -> u64 {
    FxBuildHasher.hash_one(value)
}

/// The `N` bytes at `at` (zeros past the end, which callers never reach).
#[inline(always)]
fn bytes_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..at + N)
        .and_then(|slice| slice.try_into().ok())
        .unwrap_or([0; N])
}

#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes_at(bytes, at))
}

#[inline(always)]
fn half(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes_at(bytes, at))
}

/// Byte equality that compares slices of up to 64 bytes inline.
#[inline]
pub(crate) fn bytes_eq(left: &[u8], right: &[u8]) -> bool {
    let len = left.len();
    if len != right.len() {
        return false;
    }
    match len {
        0..=16 => Key::of(left) == Key::of(right),
        // Whole words, then the last eight bytes, overlapping.
        17..=64 => {
            let mut at = 0;
            while at + 8 < len {
                if word(left, at) != word(right, at) {
                    return false;
                }
                at += 8;
            }
            word(left, len - 8) == word(right, len - 8)
        }
        _ => left == right,
    }
}

/// A text prepared for comparison: its length and two words loaded from its start and its end,
/// overlapping when it is shorter than 16 bytes. Texts of at most 16 bytes are equal exactly
/// when their keys are; longer texts with equal keys still compare their bytes.
#[derive(Debug, Clone, Copy, Eq)]
pub(crate) struct Key {
    len: usize,
    head: u64,
    tail: u64,
}

/// Compared without branches: three differences folded into one test.
impl PartialEq for Key {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        ((self.len as u64 ^ other.len as u64) | (self.head ^ other.head) | (self.tail ^ other.tail)) == 0
    }
}

impl Key {
    /// The key of `bytes`.
    #[inline(always)]
    pub(crate) fn of(bytes: &[u8]) -> Self {
        let len = bytes.len();
        let byte = |at: usize| u64::from(bytes.get(at).copied().unwrap_or_default());
        let (head, tail) = match len {
            0 => (0, 0),
            // The first, middle and last bytes are every byte of a text this short.
            1..=3 => (byte(0) | byte(len / 2) << 8 | byte(len - 1) << 16, 0),
            4..=7 => (u64::from(half(bytes, 0)), u64::from(half(bytes, len - 4))),
            _ => (word(bytes, 0), word(bytes, len - 8)),
        };
        Self { len, head, tail }
    }

    /// A hash of the text this key was made from, `text`: from the key itself up to 16 bytes,
    /// which the key holds whole, so the bytes are not read twice; from the key and one more word
    /// up to 24; of all the bytes beyond.
    #[inline(always)]
    pub(crate) fn hash(self, text: &str) -> u64 {
        // Up to 24 bytes, the key's words and the one at 8 hold every byte: no loop over them.
        let middle = match self.len {
            0..=16 => 0,
            17..=24 => word(text.as_bytes(), 8),
            _ => return hash_str(text),
        };
        // A folded multiply, as rustc-hash mixes words: good high bits for the table's tags.
        let product = u128::from(self.head ^ middle.rotate_left(29) ^ 0x243f_6a88_85a3_08d3)
            * u128::from(self.tail ^ 0x1319_8a2e_0370_7344 ^ self.len as u64);
        (product as u64) ^ ((product >> 64) as u64)
    }

    /// A small hash of this key, for placing it in small open-addressed tables.
    #[inline(always)]
    pub(crate) fn mixed(self) -> u32 {
        let mixed =
            (self.len as u64 ^ self.head ^ self.tail.rotate_left(23)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> 32) as u32
    }

    /// Whether texts with equal keys are equal: true for texts of at most 16 bytes.
    #[inline(always)]
    pub(crate) fn is_exact(self) -> bool {
        self.len <= 16
    }
}

/// A text kept with its [`Key`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyedText {
    key: Key,
    /// [`Key::mixed`], computed once.
    mixed: u32,
    text: Box<str>,
}

impl KeyedText {
    pub(crate) fn new(text: &str) -> Self {
        let key = Key::of(text.as_bytes());
        Self {
            key,
            mixed: key.mixed(),
            text: text.into(),
        }
    }

    pub(crate) fn key(&self) -> Key {
        self.key
    }

    pub(crate) fn mixed(&self) -> u32 {
        self.mixed
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The hash [`Key::hash`] gives this text.
    pub(crate) fn hash(&self) -> u64 {
        self.key.hash(&self.text)
    }

    /// Whether this text equals `other`, whose key is not prepared.
    #[inline(always)]
    pub(crate) fn matches_bytes(&self, other: &[u8]) -> bool {
        if self.key.is_exact() {
            self.key == Key::of(other)
        } else {
            bytes_eq(self.text.as_bytes(), other)
        }
    }

    /// Whether this text equals `other`, whose key is `other_key`.
    #[inline(always)]
    pub(crate) fn matches(&self, other_key: Key, other: &str) -> bool {
        self.key == other_key && (self.key.is_exact() || bytes_eq(self.text.as_bytes(), other.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: [&str; 16] = [
        "",
        "a",
        "ab",
        "abc",
        "abcd",
        "abcdefg",
        "abcdefgh",
        "abcdefghijklmnop",
        "abcdefghijklmnopq",
        "abcdefghijklmnopqrstuvwx",
        "abcdefghijklmnopqrstuvwxy",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm",
        "b",
        "ba",
        "bac",
    ];

    /// Every sample against every sample, and against each sample with one bit flipped.
    fn pairs() -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut pairs = Vec::new();
        for left in SAMPLES {
            for right in SAMPLES {
                pairs.push((left.as_bytes().to_vec(), right.as_bytes().to_vec()));
                for index in 0..right.len() {
                    let mut changed = right.as_bytes().to_vec();
                    changed[index] ^= 1;
                    pairs.push((left.as_bytes().to_vec(), changed));
                }
            }
        }
        pairs
    }

    #[test]
    fn bytes_eq_agrees_with_slice_equality() {
        for (left, right) in pairs() {
            assert_eq!(bytes_eq(&left, &right), left == right, "{left:?} {right:?}");
        }
    }

    #[test]
    fn keys_decide_equality_of_short_texts_and_filter_long_ones() {
        for (left, right) in pairs() {
            let (Ok(left), Ok(right)) = (std::str::from_utf8(&left), std::str::from_utf8(&right)) else {
                continue;
            };
            let keyed = KeyedText::new(left);
            assert_eq!(keyed.as_str(), left);
            assert_eq!(
                keyed.matches(Key::of(right.as_bytes()), right),
                left == right,
                "{left:?} {right:?}"
            );
            if left.len() <= 16 && right.len() <= 16 {
                assert_eq!(keyed.key() == Key::of(right.as_bytes()), left == right);
            }
        }
    }
}
