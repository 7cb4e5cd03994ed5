//! Stickiness hashing: MurmurHash3 (x86, 32 bit) over the UTF-8 bytes of `"{group}:{id}"`.
//!
//! This is what Yggdrasil and the SDKs built on it compute. Unleash's Node server hashes the low
//! byte of each UTF-16 unit instead, so the two differ for non-ASCII ids; we follow the SDKs.
//!
//! Keys up to [`STACK_KEY`] bytes are assembled on the stack and hashed as one slice by
//! [`murmur3_32`] below. The `murmur3` crate only hashes through `std::io::Read`, four bytes per
//! call, which costs about 50 ns per key here, more than the rest of an evaluation; it still
//! hashes longer keys, and a property test checks that the two always agree.

use std::io::Read;

/// Seed for strategy rollout buckets.
pub const STRATEGY_SEED: u32 = 0;
/// Seed for variant selection.
pub const VARIANT_SEED: u32 = 86_028_157;

/// Keys up to this length are hashed from the stack; longer ones stream through the crate.
const STACK_KEY: usize = 128;

/// The raw 32-bit hash of `"{group}:{id}"`, computed without a heap string.
pub fn murmur(group: &str, id: &str, seed: u32) -> u32 {
    let len = group.len() + 1 + id.len();
    if len <= STACK_KEY {
        let mut key = [0u8; STACK_KEY];
        key[..group.len()].copy_from_slice(group.as_bytes());
        key[group.len()] = b':';
        key[group.len() + 1..len].copy_from_slice(id.as_bytes());
        murmur3_32(&key[..len], seed)
    } else {
        let mut bytes = group.as_bytes().chain(&b":"[..]).chain(id.as_bytes());
        // Reading from byte slices cannot fail.
        murmur3::murmur3_32(&mut bytes, seed).unwrap_or(0)
    }
}

/// The bucket `1..=modulus` of `id` within `group`; `modulus` must be at least 1.
pub fn bucket(group: &str, id: &str, seed: u32, modulus: u32) -> u32 {
    murmur(group, id, seed) % modulus.max(1) + 1
}

/// MurmurHash3, x86 32-bit variant, of one slice.
fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let scramble = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);

    let mut hash = seed;
    let mut blocks = data.chunks_exact(4);
    for block in &mut blocks {
        let k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        hash = (hash ^ scramble(k))
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |k, byte| (k << 8) | u32::from(*byte));
        hash ^= scramble(k);
    }
    // The length is mixed in modulo 2^32, as the reference does.
    hash ^= data.len() as u32;
    hash ^= hash >> 16;
    hash = hash.wrapping_mul(0x85eb_ca6b);
    hash ^= hash >> 13;
    hash = hash.wrapping_mul(0xc2b2_ae35);
    hash ^ (hash >> 16)
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

    proptest! {
        #[test]
        fn slice_hash_equals_the_murmur3_crate(group in ".{0,40}", id in ".{0,80}", seed: u32) {
            let key = format!("{group}:{id}");
            let expected = murmur3::murmur3_32(&mut key.as_bytes(), seed).unwrap_or(0);
            prop_assert_eq!(murmur(&group, &id, seed), expected);
        }
    }
}
