//! Run seeds: a fixed hash of a run's seed text, mixed with the master seed, so a run
//! gets the same seed in every process, release, thread count and shard.

use crate::sim::seeds;

/// 64-bit FNV-1a over the bytes of `text`: a fixed, documented hash (unlike std's
/// randomly keyed hasher), so a key's seed is the same in every process and release.
pub fn fnv1a64(text: &str) -> u64 {
    fnv1a64_more(FNV_OFFSET, text.as_bytes())
}

/// FNV-1a's starting value (its "offset basis").
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues an FNV-1a hash `h` over `bytes`, so a file can be hashed a piece at a
/// time: `fnv1a64_more(fnv1a64_more(FNV_OFFSET, a), b)` is the hash of `a` then `b`.
pub fn fnv1a64_more(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The run seed for a seed text: the master seed and the text's hash, mixed.
pub fn run_seed(master_seed: u64, seed_text: &str) -> u64 {
    seeds::mix(seeds::mix(master_seed) ^ fnv1a64(seed_text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        // From the FNV reference (Fowler, Noll, Vo): the offset basis and "a".
        assert_eq!(fnv1a64(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64("foobar"), 0x8594_4171_f739_67e8);
    }
}
