//! Stickiness hashing: MurmurHash3 (x86, 32 bit) over the UTF-8 bytes of `"{group}:{id}"`.
//!
//! This is what Yggdrasil and the SDKs built on it compute. Unleash's Node server hashes the low
//! byte of each UTF-16 unit instead, so the two differ for non-ASCII ids; we follow the SDKs.

use std::io::Read;

/// Seed for strategy rollout buckets.
pub const STRATEGY_SEED: u32 = 0;
/// Seed for variant selection.
pub const VARIANT_SEED: u32 = 86_028_157;

/// The raw 32-bit hash of `"{group}:{id}"`, computed without building the string.
pub fn murmur(group: &str, id: &str, seed: u32) -> u32 {
    let mut bytes = group.as_bytes().chain(&b":"[..]).chain(id.as_bytes());
    // Reading from byte slices cannot fail.
    murmur3::murmur3_32(&mut bytes, seed).unwrap_or(0)
}

/// The bucket `1..=modulus` of `id` within `group`; `modulus` must be at least 1.
pub fn bucket(group: &str, id: &str, seed: u32, modulus: u32) -> u32 {
    murmur(group, id, seed) % modulus.max(1) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors shared with Yggdrasil and the Unleash SDKs (ASCII) and pinned to UTF-8 hashing.
    #[test]
    fn matches_reference_vectors() {
        assert_eq!(murmur("default", "123", STRATEGY_SEED), 309_085_281);
        assert_eq!(murmur("g", "ü", STRATEGY_SEED), 1_937_167_525);
        assert_eq!(bucket("g", "ü", STRATEGY_SEED, 100), 26);
    }
}
