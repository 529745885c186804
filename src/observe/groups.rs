//! Building blocks for monitors whose cost per event must follow what the event
//! touched, not the size of the network: nodes bucketed by a key (a component label, a
//! leader) with O(1) moves between buckets, and a reusable set of small integers.

use crate::NodeId;
use crate::topology::components::ComponentTracker;

/// Nodes in buckets keyed by small integers (keys below the number of nodes), each
/// bucket in no particular order; a node is in exactly one bucket.
#[derive(Clone, Debug, Default)]
pub struct Buckets {
    members: Vec<Vec<NodeId>>,
    /// Each node's index in its bucket.
    position: Vec<u32>,
}

impl Buckets {
    /// Node `v` in bucket `key_of(v)`, for `v` in `0..n` (keys below `n`).
    pub fn new(n: usize, key_of: impl Fn(NodeId) -> u32) -> Self {
        let mut members = vec![Vec::new(); n];
        let mut position = vec![0; n];
        for v in 0..n as NodeId {
            let bucket: &mut Vec<NodeId> = &mut members[key_of(v) as usize];
            position[v as usize] = bucket.len() as u32;
            bucket.push(v);
        }
        Self { members, position }
    }

    /// Nodes `0..n`, all in bucket `key`, with buckets for the keys below `keys` (a
    /// bucket for "none of them" beside `n` keyed ones).
    pub fn all_in(n: usize, keys: usize, key: u32) -> Self {
        Self {
            members: (0..keys as u32)
                .map(|k| {
                    if k == key {
                        (0..n as NodeId).collect()
                    } else {
                        Vec::new()
                    }
                })
                .collect(),
            position: (0..n as u32).collect(),
        }
    }

    /// Every node in the bucket of its component label.
    pub fn components(graph: &ComponentTracker) -> Self {
        Self::new(graph.node_count(), |v| graph.label(v))
    }

    /// The nodes in bucket `key`.
    pub fn members(&self, key: u32) -> &[NodeId] {
        &self.members[key as usize]
    }

    /// Moves `node` from bucket `from` (where it must be) to bucket `to`.
    pub fn relocate(&mut self, node: NodeId, from: u32, to: u32) {
        if from == to {
            return;
        }
        let at = self.position[node as usize] as usize;
        let bucket = &mut self.members[from as usize];
        debug_assert_eq!(bucket[at], node);
        bucket.swap_remove(at);
        if let Some(&shifted) = bucket.get(at) {
            self.position[shifted as usize] = at as u32;
        }
        let bucket = &mut self.members[to as usize];
        self.position[node as usize] = bucket.len() as u32;
        bucket.push(node);
    }
}

/// A set of integers below a bound, emptied in O(1) (by a new stamp), listing its
/// elements in insertion order.
#[derive(Clone, Debug, Default)]
pub struct StampSet {
    stamp: Vec<u32>,
    now: u32,
    /// The elements, in insertion order.
    pub items: Vec<u32>,
}

impl StampSet {
    /// Empties the set and makes room for elements below `bound`.
    pub fn reset(&mut self, bound: usize) {
        if self.stamp.len() < bound {
            self.stamp.resize(bound, 0);
        }
        self.now = self.now.wrapping_add(1);
        if self.now == 0 {
            self.stamp.fill(0);
            self.now = 1;
        }
        self.items.clear();
    }

    /// Whether `x` is in the set.
    pub fn contains(&self, x: u32) -> bool {
        self.stamp[x as usize] == self.now
    }

    /// Adds `x`; whether it was new.
    pub fn insert(&mut self, x: u32) -> bool {
        let s = &mut self.stamp[x as usize];
        if *s == self.now {
            return false;
        }
        *s = self.now;
        self.items.push(x);
        true
    }
}

/// `K` boolean flags per node, and per label the number of nodes with each flag set,
/// kept consistent as flags change and nodes change label: a monitor judges a
/// component from its counts instead of visiting its nodes.
#[derive(Clone, Debug)]
pub struct LabelTally<const K: usize> {
    flags: Vec<[bool; K]>,
    counts: Vec<[u32; K]>,
}

impl<const K: usize> LabelTally<K> {
    /// `n` nodes (labels below `n`), every flag clear.
    pub fn new(n: usize) -> Self {
        Self {
            flags: vec![[false; K]; n],
            counts: vec![[0; K]; n],
        }
    }

    /// Flag `k` of node `v`.
    pub fn get(&self, v: NodeId, k: usize) -> bool {
        self.flags[v as usize][k]
    }

    /// Sets flag `k` of node `v`, which carries `label`.
    pub fn set(&mut self, v: NodeId, label: u32, k: usize, value: bool) {
        let flag = &mut self.flags[v as usize][k];
        if *flag != value {
            *flag = value;
            let count = &mut self.counts[label as usize][k];
            if value {
                *count += 1;
            } else {
                *count -= 1;
            }
        }
    }

    /// How many nodes carrying `label` have flag `k` set.
    pub fn count(&self, label: u32, k: usize) -> u32 {
        self.counts[label as usize][k]
    }

    /// Node `v` changed label from `from` to `to`: its flags count there now.
    pub fn carry(&mut self, v: NodeId, from: u32, to: u32) {
        for k in 0..K {
            if self.flags[v as usize][k] {
                self.counts[from as usize][k] -= 1;
                self.counts[to as usize][k] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Random moves between buckets: every bucket holds exactly the nodes a plain
        /// key-per-node array says.
        #[test]
        fn buckets_match_a_key_array(n in 1usize..20, moves in prop::collection::vec((0u32..20, 0u32..20), 0..100)) {
            let mut key: Vec<u32> = (0..n as u32).map(|v| v % 3).collect();
            let mut buckets = Buckets::new(n, |v| key[v as usize]);
            for (v, to) in moves {
                let (v, to) = (v % n as u32, to % n as u32);
                buckets.relocate(v, key[v as usize], to);
                key[v as usize] = to;
                for k in 0..n as u32 {
                    let mut got = buckets.members(k).to_vec();
                    got.sort_unstable();
                    let want: Vec<u32> = (0..n as u32).filter(|&v| key[v as usize] == k).collect();
                    prop_assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn tally_counts_follow_flags_and_moves() {
        let mut tally = LabelTally::<2>::new(4);
        tally.set(0, 0, 1, true);
        tally.set(1, 0, 1, true);
        tally.set(1, 0, 1, true);
        assert_eq!(tally.count(0, 1), 2);
        tally.carry(1, 0, 3);
        assert_eq!((tally.count(0, 1), tally.count(3, 1)), (1, 1));
        tally.set(1, 3, 1, false);
        assert_eq!(tally.count(3, 1), 0);
        assert_eq!(tally.count(0, 0), 0);
        assert!(tally.get(0, 1) && !tally.get(1, 1));
    }

    #[test]
    fn stamp_set_forgets_on_reset() {
        let mut set = StampSet::default();
        set.reset(5);
        assert!(set.insert(3));
        assert!(!set.insert(3));
        assert!(set.insert(1));
        assert_eq!(set.items, vec![3, 1]);
        set.reset(5);
        assert!(set.items.is_empty());
        assert!(set.insert(3));
    }
}
