//! Short texts compared without `memcmp`. Flag names, property names and constraint values are
//! mostly under 17 bytes, where calling `memcmp` costs more than the comparison itself.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

/// The hash texts longer than 24 bytes are looked up by (flag names, and lists holding long
/// values); shorter ones are hashed from their [`Key`] and [`middle_word`].
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

/// The first eight bytes of `bytes` as a little-endian word, zeros past the end of a shorter text:
/// a text's first `n` bytes are the word's low `n`.
#[inline(always)]
pub(crate) fn head_word(bytes: &[u8]) -> u64 {
    if bytes.len() >= 8 {
        return word(bytes, 0);
    }
    let mut padded = [0; 8];
    for (to, from) in padded.iter_mut().zip(bytes) {
        *to = *from;
    }
    u64::from_le_bytes(padded)
}

/// The last eight bytes of `bytes` as a little-endian word, zeros before the start of a shorter
/// text: a text's last `n` bytes are the word's high `n`.
#[inline(always)]
pub(crate) fn tail_word(bytes: &[u8]) -> u64 {
    if bytes.len() >= 8 {
        return word(bytes, bytes.len() - 8);
    }
    let mut padded = [0; 8];
    for (to, from) in padded.iter_mut().rev().zip(bytes.iter().rev()) {
        *to = *from;
    }
    u64::from_le_bytes(padded)
}

/// The eight bytes from the ninth of `bytes` (0 for a text shorter than 16 bytes): with its key,
/// they hold a text of 17 to 24 bytes whole.
#[inline(always)]
pub(crate) fn middle_word(bytes: &[u8]) -> u64 {
    word(bytes, 8)
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
        match self.len {
            0..=16 => self.hash_short(0),
            17..=24 => self.hash_short(middle_word(text.as_bytes())),
            _ => hash_str(text),
        }
    }

    /// [`Key::hash`] of a text of at most 24 bytes, whose [`middle_word`] is `middle` (0 up to
    /// 16 bytes).
    #[inline(always)]
    pub(crate) fn hash_short(self, middle: u64) -> u64 {
        // The key's words and the middle one hold every byte: no loop over them.
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

    /// Whether texts with equal keys and equal [`middle_word`]s are equal: true for texts of at
    /// most 24 bytes.
    #[inline(always)]
    pub(crate) fn is_short(self) -> bool {
        self.len <= 24
    }
}

/// A set of texts of at most 16 bytes, each of which its [`Key`] decides, held as those keys in an
/// open-addressed table at most half full: a look-up hashes the key and compares keys, with no
/// call and no byte of the texts read.
#[derive(Debug, Clone)]
pub(crate) struct KeySet {
    slots: Box<[Key]>,
    mask: usize,
}

impl KeySet {
    /// Marks a free slot: no text is this long.
    const VACANT: Key = Key {
        len: usize::MAX,
        head: 0,
        tail: 0,
    };

    /// The set of `keys`, which must all be exact ([`Key::is_exact`]).
    pub(crate) fn new(keys: &[Key]) -> Self {
        debug_assert!(keys.iter().all(|key| key.is_exact()));
        let size = (keys.len() * 2).next_power_of_two().max(4);
        let mut set = Self {
            slots: vec![Self::VACANT; size].into_boxed_slice(),
            mask: size - 1,
        };
        for key in keys {
            let mut slot = set.first_slot(*key);
            while let Some(occupant) = set
                .slots
                .get(slot)
                .copied()
                .filter(|occupant| *occupant != Self::VACANT)
            {
                if occupant == *key {
                    break;
                }
                slot = (slot + 1) & set.mask;
            }
            if let Some(free) = set.slots.get_mut(slot) {
                *free = *key;
            }
        }
        set
    }

    #[inline(always)]
    fn first_slot(&self, key: Key) -> usize {
        // The high bits of the folded multiply are the best mixed.
        (key.hash_short(0) >> 32) as usize & self.mask
    }

    /// Whether the text whose key is `key` is in the set.
    #[inline(always)]
    pub(crate) fn contains(&self, key: Key) -> bool {
        let mut slot = self.first_slot(key);
        // The table is at most half full, so a free slot ends every probe.
        while let Some(occupant) = self.slots.get(slot) {
            if *occupant == key {
                return true;
            }
            if occupant.len == usize::MAX {
                return false;
            }
            slot = (slot + 1) & self.mask;
        }
        false
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
    fn key_sets_hold_exactly_their_keys() {
        // Sets of every size up to 40 (tables of 4 to 128 slots), probed with every member and
        // with texts one bit or one byte away from them.
        let text = |i: usize| format!("user-{i}");
        for size in 0..40 {
            let keys: Vec<Key> = (0..size).map(|i| Key::of(text(i).as_bytes())).collect();
            let set = KeySet::new(&keys);
            for i in 0..size + 10 {
                assert_eq!(
                    set.contains(Key::of(text(i).as_bytes())),
                    i < size,
                    "{} in {size}",
                    text(i)
                );
                assert!(!set.contains(Key::of(format!("{}x", text(i)).as_bytes())));
            }
            assert!(!set.contains(Key::of(b"")));
        }
        let twice = KeySet::new(&[Key::of(b"a"), Key::of(b"a"), Key::of(b"b")]);
        assert!(twice.contains(Key::of(b"a")) && twice.contains(Key::of(b"b")));
    }

    #[test]
    fn head_and_tail_words_pad_short_texts() {
        assert_eq!(head_word(b"ab"), u64::from_le_bytes(*b"ab\0\0\0\0\0\0"));
        assert_eq!(tail_word(b"ab"), u64::from_le_bytes(*b"\0\0\0\0\0\0ab"));
        assert_eq!(head_word(b"abcdefghij"), u64::from_le_bytes(*b"abcdefgh"));
        assert_eq!(tail_word(b"abcdefghij"), u64::from_le_bytes(*b"cdefghij"));
        assert_eq!(head_word(b""), 0);
        assert_eq!(tail_word(b""), 0);
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
