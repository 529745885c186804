//! Compact sets for the checker's states: a set of nodes as one bit per node, a set of
//! links as one bit per pair, and the messages in flight as one vector.
//!
//! A search holds hundreds of thousands of states at once (its frontier), and a
//! `BTreeSet` of a few small ids costs an allocation of a few hundred bytes; these cost
//! 8 and 16 bytes, inline, and compare and hash as one integer. They iterate in
//! ascending order, as the `BTreeSet`s they replace did, so a search visits its states in
//! the same order and finds the same shortest executions.

use super::graph::MAX_CHECK_NODES;
use crate::NodeId;

/// Bits per row of [`LinkSet`]: pair `(a, b)` is bit `a * LINK_STRIDE + b`, so ascending
/// bits are pairs in lexicographic order. Holds graphs of up to 11 nodes.
const LINK_STRIDE: u32 = 11;

/// The most nodes a [`LinkSet`] holds, and so the most nodes of a state of the model
/// checker: a scenario file, whose steps the checker's model validates, may have no
/// more (a larger id would share a bit with another link).
pub const MAX_STATE_NODES: usize = LINK_STRIDE as usize;

const _: () = assert!(MAX_CHECK_NODES <= LINK_STRIDE as usize);
const _: () = assert!(LINK_STRIDE * LINK_STRIDE <= u128::BITS);

/// A set of node ids below 64.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeSet(u64);

impl NodeSet {
    fn bit(node: NodeId) -> u64 {
        // Always checked: a node beyond the set would alias another's bit silently.
        assert!(node < u64::BITS, "node {node} in a NodeSet");
        1 << node
    }

    /// Adds `node`; whether it was new.
    pub fn insert(&mut self, node: NodeId) -> bool {
        let new = !self.contains(node);
        self.0 |= Self::bit(node);
        new
    }

    /// Removes `node`; whether it was there.
    pub fn remove(&mut self, node: NodeId) -> bool {
        let had = self.contains(node);
        self.0 &= !Self::bit(node);
        had
    }

    /// Whether `node` is in the set.
    pub fn contains(&self, node: NodeId) -> bool {
        self.0 & Self::bit(node) != 0
    }

    /// How many nodes it holds.
    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// The nodes, ascending.
    pub fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let node = rest.trailing_zeros();
                rest &= rest - 1;
                node
            })
        })
    }
}

impl FromIterator<NodeId> for NodeSet {
    fn from_iter<I: IntoIterator<Item = NodeId>>(nodes: I) -> Self {
        let mut set = NodeSet::default();
        for node in nodes {
            set.insert(node);
        }
        set
    }
}

impl std::fmt::Debug for NodeSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// A set of links `(a, b)`, `a < b`, of a graph of at most 11 nodes.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkSet(u128);

impl LinkSet {
    fn bit((a, b): (NodeId, NodeId)) -> u128 {
        // Always checked: a larger id would share a bit with another link silently.
        assert!(a < b && b < LINK_STRIDE, "link ({a}, {b}) in a LinkSet");
        1 << (a * LINK_STRIDE + b)
    }

    /// Adds `link`; whether it was new.
    pub fn insert(&mut self, link: (NodeId, NodeId)) -> bool {
        let new = !self.contains(link);
        self.0 |= Self::bit(link);
        new
    }

    /// Removes `link`; whether it was there.
    pub fn remove(&mut self, link: (NodeId, NodeId)) -> bool {
        let had = self.contains(link);
        self.0 &= !Self::bit(link);
        had
    }

    /// Whether `link` is in the set.
    pub fn contains(&self, link: (NodeId, NodeId)) -> bool {
        self.0 & Self::bit(link) != 0
    }

    /// How many links it holds.
    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// The links, in lexicographic order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeId)> + '_ {
        let mut rest = self.0;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                (bit / LINK_STRIDE, bit % LINK_STRIDE)
            })
        })
    }
}

impl FromIterator<(NodeId, NodeId)> for LinkSet {
    fn from_iter<I: IntoIterator<Item = (NodeId, NodeId)>>(links: I) -> Self {
        let mut set = LinkSet::default();
        for link in links {
            set.insert(link);
        }
        set
    }
}

impl std::fmt::Debug for LinkSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// The messages in flight on directed links, FIFO per link: one vector of `(from, to,
/// message)` sorted by link, each link's messages in the order sent. One allocation for
/// all of them, where a map of queues took one per link and one per map node; equal
/// contents are equal vectors, so equality and hashing mean what the map's did.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InFlight<M>(Vec<(NodeId, NodeId, M)>);

impl<M> Default for InFlight<M> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<M> InFlight<M> {
    /// Sends `msg` over `from → to`, behind the messages already on it.
    pub fn push(&mut self, from: NodeId, to: NodeId, msg: M) {
        let at = self.0.partition_point(|&(f, t, _)| (f, t) <= (from, to));
        self.0.insert(at, (from, to, msg));
    }

    /// Takes the oldest message on `from → to`, if any.
    pub fn pop(&mut self, from: NodeId, to: NodeId) -> Option<M> {
        let at = self.0.partition_point(|&(f, t, _)| (f, t) < (from, to));
        match self.0.get(at) {
            Some(&(f, t, _)) if (f, t) == (from, to) => Some(self.0.remove(at).2),
            _ => None,
        }
    }

    /// Whether no message is in flight.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The links with messages on them, ascending, each with how many.
    pub fn links(&self) -> impl Iterator<Item = ((NodeId, NodeId), usize)> + '_ {
        self.0
            .chunk_by(|a, b| (a.0, a.1) == (b.0, b.1))
            .map(|run| ((run[0].0, run[0].1), run.len()))
    }

    /// Every message with its link, links ascending, each link's in the order sent.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeId, &M)> + '_ {
        self.0.iter().map(|(f, t, m)| (*f, *t, m))
    }

    /// Keeps only the messages `keep` accepts (the order stays sorted).
    pub fn retain(&mut self, mut keep: impl FnMut(NodeId, NodeId, &M) -> bool) {
        self.0.retain(|(f, t, m)| keep(*f, *t, m));
    }

    /// Changes every message in place (not its link, so the order stays sorted).
    pub fn for_each_mut(&mut self, mut change: impl FnMut(NodeId, NodeId, &mut M)) {
        for (f, t, m) in &mut self.0 {
            change(*f, *t, m);
        }
    }

    /// The messages renamed link by link (`rename` gives each message's new link and
    /// content), or `None` as soon as one cannot be. Each link's order is kept.
    pub fn map<N>(
        &self,
        mut rename: impl FnMut(NodeId, NodeId, &M) -> Option<(NodeId, NodeId, N)>,
    ) -> Option<InFlight<N>> {
        let mut out = self
            .0
            .iter()
            .map(|(f, t, m)| rename(*f, *t, m))
            .collect::<Option<Vec<_>>>()?;
        // Stable: the messages of one link stay in the order sent.
        out.sort_by_key(|&(f, t, _)| (f, t));
        Some(InFlight(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// The same operations on a `BTreeSet` give the same answers, contents, order and
        /// Debug text.
        #[test]
        fn node_sets_behave_as_btree_sets(ops in proptest::collection::vec((any::<bool>(), 0u32..64), 0..60)) {
            let (mut set, mut reference) = (NodeSet::default(), BTreeSet::new());
            for (add, node) in ops {
                if add {
                    prop_assert_eq!(set.insert(node), reference.insert(node));
                } else {
                    prop_assert_eq!(set.remove(node), reference.remove(&node));
                }
                prop_assert_eq!(set.len(), reference.len());
                prop_assert_eq!(set.iter().collect::<Vec<_>>(), reference.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(format!("{set:?}"), format!("{reference:?}"));
            }
        }

        /// The vector behaves as a map of FIFO queues: the same pops, links and order.
        #[test]
        fn messages_in_flight_behave_as_a_map_of_queues(ops in proptest::collection::vec((any::<bool>(), 0u32..4, 0u32..4), 0..80)) {
            use std::collections::{BTreeMap, VecDeque};
            let mut flight = InFlight::default();
            let mut reference: BTreeMap<(u32, u32), VecDeque<usize>> = BTreeMap::new();
            for (i, (send, from, to)) in ops.into_iter().enumerate() {
                if send {
                    flight.push(from, to, i);
                    reference.entry((from, to)).or_default().push_back(i);
                } else {
                    let want = reference.get_mut(&(from, to)).and_then(VecDeque::pop_front);
                    reference.retain(|_, q| !q.is_empty());
                    prop_assert_eq!(flight.pop(from, to), want);
                }
                let links: Vec<_> = reference.iter().map(|(&k, q)| (k, q.len())).collect();
                prop_assert_eq!(flight.links().collect::<Vec<_>>(), links);
                let all: Vec<_> = reference.iter().flat_map(|(&(f, t), q)| q.iter().map(move |&m| (f, t, m))).collect();
                prop_assert_eq!(flight.iter().map(|(f, t, &m)| (f, t, m)).collect::<Vec<_>>(), all);
            }
        }

        #[test]
        fn link_sets_behave_as_btree_sets(ops in proptest::collection::vec((any::<bool>(), 0u32..11, 0u32..11), 0..60)) {
            let (mut set, mut reference) = (LinkSet::default(), BTreeSet::new());
            for (add, a, b) in ops {
                if a == b {
                    continue;
                }
                let link = (a.min(b), a.max(b));
                if add {
                    prop_assert_eq!(set.insert(link), reference.insert(link));
                } else {
                    prop_assert_eq!(set.remove(link), reference.remove(&link));
                }
                prop_assert_eq!(set.iter().collect::<Vec<_>>(), reference.iter().copied().collect::<Vec<_>>());
                prop_assert_eq!(set.contains(link), reference.contains(&link));
                prop_assert_eq!(format!("{set:?}"), format!("{reference:?}"));
            }
        }
    }

    /// Every link a LinkSet accepts has a bit of its own (all pairs of them, checked).
    #[test]
    fn link_bits_never_alias() {
        let n = MAX_STATE_NODES as NodeId;
        let links: Vec<_> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .collect();
        for &one in &links {
            let set: LinkSet = [one].into_iter().collect();
            assert_eq!(set.iter().collect::<Vec<_>>(), vec![one]);
            for &other in links.iter().filter(|&&l| l != one) {
                assert!(!set.contains(other), "{one:?} and {other:?} share a bit");
            }
        }
    }

    /// A link beyond the set's nodes is refused loudly: in a release build it used to
    /// share a bit with another link (11–12 with 0–5 at 13 nodes).
    #[test]
    #[should_panic(expected = "in a LinkSet")]
    fn a_link_beyond_the_set_is_refused_not_aliased() {
        LinkSet::default().insert((11, 12));
    }
}
