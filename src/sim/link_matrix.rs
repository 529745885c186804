//! The links of a small network as one row of bits per node, for the routing's
//! breadth-first searches ([`super::routes`]).
//!
//! A search on adjacency lists reads every neighbour of every node it expands and the
//! distance of each (at 1,600 nodes about 30 reads per expanded node, most
//! finding a node already reached, and the largest cost of a routed run). With bit rows a
//! whole layer is expanded by OR-ing the rows of its nodes and masking the nodes already
//! reached: `n / 64` word operations per node whatever its degree, and no branch per
//! neighbour. As rows grow with the network, the matrix is only worth it, in time and
//! memory (`n² / 8` bytes), up to [`MAX_MATRIX_NODES`].

use crate::NodeId;
use crate::topology::components::ComponentTracker;

/// Largest network the routing keeps a matrix for: 2 MiB of rows of 64 words. Measured
/// with `linkrev bench scale --algo me-raymond` (two runs each, taking turns): rows beat
/// adjacency lists at 3,200 nodes (0.29 and 0.33 s a run against 0.32 and 0.47 s) and
/// were about even at 6,400 (0.73 and 0.78 s against 0.64 and 0.79 s).
pub const MAX_MATRIX_NODES: usize = 4096;

/// Bit `w` of row `v` is set when link `v`–`w` is up.
pub struct LinkMatrix {
    words_per_row: usize,
    bits: Vec<u64>,
}

impl LinkMatrix {
    /// The links of `graph` now.
    pub fn of(graph: &ComponentTracker) -> Self {
        let n = graph.node_count();
        let mut matrix = Self {
            words_per_row: n.div_ceil(64),
            bits: vec![0; n * n.div_ceil(64)],
        };
        for v in 0..n as NodeId {
            for &w in graph.neighbours(v) {
                matrix.bits[v as usize * matrix.words_per_row + w as usize / 64] |= 1 << (w % 64);
            }
        }
        matrix
    }

    /// Nodes of the network it was built for.
    pub fn node_count(&self) -> usize {
        self.bits.len().checked_div(self.words_per_row).unwrap_or(0)
    }

    /// Words per row (a layer's bit set has as many).
    pub fn words_per_row(&self) -> usize {
        self.words_per_row
    }

    /// Records that link `a`–`b` came up (`up`) or went down. A link is a bit, not a
    /// count: it must not come up while up or go down while down (the link timelines
    /// merge overlapping intervals, and scenarios reject a link raised twice).
    pub fn set(&mut self, a: NodeId, b: NodeId, up: bool) {
        for (v, w) in [(a, b), (b, a)] {
            let word = &mut self.bits[v as usize * self.words_per_row + w as usize / 64];
            let bit = 1u64 << (w % 64);
            debug_assert_eq!(
                *word & bit != 0,
                !up,
                "link {a}–{b} changed to its own state"
            );
            if up {
                *word |= bit;
            } else {
                *word &= !bit;
            }
        }
    }

    /// The neighbours of `v`, as bits.
    pub fn row(&self, v: NodeId) -> &[u64] {
        let start = v as usize * self.words_per_row;
        &self.bits[start..start + self.words_per_row]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The nodes whose bits are set in `set`, in increasing order.
    fn members(set: &[u64]) -> impl Iterator<Item = NodeId> + '_ {
        set.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let bit = rest.trailing_zeros();
                    rest &= rest - 1;
                    (i * 64) as NodeId + bit
                })
            })
        })
    }

    proptest! {
        /// After any sequence of link changes, each row names exactly the node's
        /// neighbours in the graph, whether the matrix was built before or after.
        #[test]
        fn rows_are_the_neighbour_lists(
            n in 1usize..140,
            steps in prop::collection::vec((0u32..140, 0u32..140), 0..300),
        ) {
            let mut graph = ComponentTracker::new(n);
            let mut early = LinkMatrix::of(&graph);
            for (x, y) in steps {
                let (a, b) = (x % n as u32, y % n as u32);
                if a == b {
                    continue;
                }
                let up = !graph.neighbours(a).contains(&b);
                if up {
                    graph.add_edge(a, b);
                } else {
                    graph.remove_edge(a, b);
                }
                early.set(a, b, up);
            }
            let late = LinkMatrix::of(&graph);
            for v in 0..n as NodeId {
                let mut want = graph.neighbours(v).to_vec();
                want.sort_unstable();
                prop_assert_eq!(members(early.row(v)).collect::<Vec<_>>(), want.clone());
                prop_assert_eq!(members(late.row(v)).collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn members_lists_bits_across_words() {
        let set = [1 | 1 << 63, 0, 1 << 5];
        assert_eq!(members(&set).collect::<Vec<_>>(), vec![0, 63, 133]);
    }
}
