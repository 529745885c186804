//! Independent random streams derived from one seed.
//!
//! Each source of randomness (mobility, delays, requests, CS durations) gets its own
//! stream, so that changing how often one is consulted never shifts another: every
//! algorithm of one replication sees the same trajectories and the same request process
//! (common random numbers), although their message patterns, and hence delay draws,
//! differ.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// What a stream is for; the discriminant separates the streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Random-waypoint trajectories.
    Mobility = 1,
    /// Per-hop message delays.
    Delay = 2,
    /// Gaps between a node's CS requests (one stream per node).
    RequestGaps = 3,
    /// Critical-section durations (one stream per node).
    CsDurations = 4,
}

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective mix, so distinct inputs
/// give distinct, well-spread seeds.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of one purpose's streams for a run seed.
pub fn derive(seed: u64, purpose: Purpose) -> u64 {
    mix(mix(seed) ^ (purpose as u64).wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// The generator for `purpose`, stream `index` (a node, for per-node streams).
pub fn stream(seed: u64, purpose: Purpose, index: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(derive(seed, purpose));
    rng.set_stream(index);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_differ_by_purpose_and_index_and_repeat_by_seed() {
        let draw = |seed, p, i| stream(seed, p, i).random::<u64>();
        assert_eq!(draw(1, Purpose::Delay, 0), draw(1, Purpose::Delay, 0));
        assert_ne!(draw(1, Purpose::Delay, 0), draw(1, Purpose::RequestGaps, 0));
        assert_ne!(
            draw(1, Purpose::RequestGaps, 0),
            draw(1, Purpose::RequestGaps, 1)
        );
        assert_ne!(draw(1, Purpose::Delay, 0), draw(2, Purpose::Delay, 0));
    }
}
