//! Stickiness hashing: MurmurHash3 (x86, 32 bit) over the UTF-8 bytes of `"{group}:{id}"`.
//!
//! This is what Yggdrasil and the SDKs built on it compute. Unleash's Node server hashes the low
//! byte of each UTF-16 unit instead, so the two differ for non-ASCII ids; we follow the SDKs.
//!
//! A strategy or variant list always hashes within the same group, so the state after
//! `"{group}:"` is computed once, when the flag is compiled ([`GroupHash`]); an evaluation hashes
//! only the id's bytes, with no key assembled anywhere. A property test checks the result against
//! the `murmur3` crate.

/// Seed for strategy rollout buckets.
pub const STRATEGY_SEED: u32 = 0;
/// Seed for variant selection.
pub const VARIANT_SEED: u32 = 86_028_157;

/// The raw 32-bit hash of `"{group}:{id}"`, computed without a heap string.
pub fn murmur(group: &str, id: &str, seed: u32) -> u32 {
    GroupHash::new(group, seed).hash(id)
}

/// The bucket `1..=modulus` of `id` within `group`; `modulus` must be at least 1.
pub fn bucket(group: &str, id: &str, seed: u32, modulus: u32) -> u32 {
    GroupHash::new(group, seed).bucket(id, modulus)
}

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline(always)]
fn scramble(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline(always)]
fn round(hash: u32, block: u32) -> u32 {
    (hash ^ scramble(block))
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

/// MurmurHash3 (x86, 32 bit) part-way through `"{group}:"`: the state after its whole four-byte
/// blocks, and the bytes left over, waiting for the id's first bytes to complete a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GroupHash {
    hash: u32,
    /// Up to three bytes, little-endian, that do not yet fill a block.
    pending: u32,
    pending_len: u32,
    /// Bytes hashed so far; the reference mixes the length in modulo 2^32.
    len: u32,
}

impl GroupHash {
    /// The state after `"{group}:"` with `seed`.
    pub(crate) fn new(group: &str, seed: u32) -> Self {
        let mut state = Self {
            hash: seed,
            pending: 0,
            pending_len: 0,
            len: 0,
        };
        for &byte in group.as_bytes().iter().chain(b":") {
            state.pending |= u32::from(byte) << (8 * state.pending_len);
            state.pending_len += 1;
            state.len = state.len.wrapping_add(1);
            if state.pending_len == 4 {
                state.hash = round(state.hash, state.pending);
                state.pending = 0;
                state.pending_len = 0;
            }
        }
        state
    }

    /// The hash of `"{group}:{id}"`.
    #[inline]
    pub(crate) fn hash(self, id: &str) -> u32 {
        let mut hash = self.hash;
        let mut pending = self.pending;
        let mut pending_len = self.pending_len;
        let mut bytes = id.as_bytes();
        // The id's first bytes complete the group's last block.
        while pending_len != 0 && pending_len < 4 {
            let Some((&byte, rest)) = bytes.split_first() else {
                break;
            };
            pending |= u32::from(byte) << (8 * pending_len);
            pending_len += 1;
            bytes = rest;
        }
        if pending_len == 4 {
            hash = round(hash, pending);
            pending = 0;
            pending_len = 0;
        }
        let mut blocks = bytes.chunks_exact(4);
        for block in &mut blocks {
            hash = round(hash, u32::from_le_bytes([block[0], block[1], block[2], block[3]]));
        }
        // Either the id ended inside the group's last block, or it leaves a tail of its own.
        for (&byte, shift) in blocks.remainder().iter().zip(pending_len..) {
            pending |= u32::from(byte) << (8 * shift);
        }
        if pending_len != 0 || !blocks.remainder().is_empty() {
            hash ^= scramble(pending);
        }
        // The length is mixed in modulo 2^32, as the reference does.
        hash ^= self.len.wrapping_add(id.len() as u32);
        hash ^= hash >> 16;
        hash = hash.wrapping_mul(0x85eb_ca6b);
        hash ^= hash >> 13;
        hash = hash.wrapping_mul(0xc2b2_ae35);
        hash ^ (hash >> 16)
    }

    /// The bucket `1..=modulus` of `id`; `modulus` must be at least 1.
    #[inline]
    pub(crate) fn bucket(self, id: &str, modulus: u32) -> u32 {
        self.hash(id) % modulus.max(1) + 1
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Vectors shared with Yggdrasil and the Unleash SDKs (ASCII) and pinned to UTF-8 hashing.
    #[test]
    fn matches_reference_vectors() {
        assert_eq!(murmur("default", "123", STRATEGY_SEED), 309_085_281);
        assert_eq!(murmur("g", "ü", STRATEGY_SEED), 1_937_167_525);
        assert_eq!(bucket("g", "ü", STRATEGY_SEED, 100), 26);
        let long_id = "x".repeat(500);
        let mut reader = format!("g:{long_id}").into_bytes();
        let expected = murmur3::murmur3_32(&mut reader.as_slice(), VARIANT_SEED).unwrap_or(1);
        reader.clear();
        assert_eq!(murmur("g", &long_id, VARIANT_SEED), expected);
    }

    #[test]
    fn every_split_of_the_last_group_block_hashes_alike() {
        // Group lengths 0..=4 leave 1, 2, 3, 0 and 1 bytes pending; ids of 0..=9 bytes end inside
        // that block, on its edge, or past it.
        for group in ["", "a", "ab", "abc", "abcd"] {
            for id_len in 0..10 {
                let id = &"0123456789"[..id_len];
                let key = format!("{group}:{id}");
                let expected = murmur3::murmur3_32(&mut key.as_bytes(), 7).unwrap_or(0);
                assert_eq!(murmur(group, id, 7), expected, "{group:?} {id:?}");
            }
        }
    }

    proptest! {
        #[test]
        fn slice_hash_equals_the_murmur3_crate(group in ".{0,40}", id in ".{0,80}", seed: u32) {
            let key = format!("{group}:{id}");
            let expected = murmur3::murmur3_32(&mut key.as_bytes(), seed).unwrap_or(0);
            prop_assert_eq!(murmur(&group, &id, seed), expected);
        }
    }
}
