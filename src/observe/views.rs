//! Per node: how many neighbours it holds a stale view of, and how many are lower than
//! it, kept current as heights, views and links change. The legality checks of the
//! families whose nodes keep heights (leader election, routes) ask exactly these two
//! questions of every node; keeping the answers lets a monitor judge a component from
//! counts, and re-examine only the nodes an event changed and their neighbours.
//!
//! Those questions matter only when a component is quiescent (a busy component is not
//! judged), so a node an event changed is not recounted at once: it is marked
//! *pending*, kept in a bucket of its component's label, and recounted when a monitor
//! judges that component quiet ([`ViewCounts::settle_component`]). A node that hears
//! many Updates while its component is busy is then recounted once instead of after
//! every one; recounting reads the heights of all its neighbours, scattered over the
//! network, which was most of a 1,600-node leader-election run's cache misses
//! (`perf`).

use super::groups::Buckets;
use crate::NodeId;
use crate::protocol::HeightView;
use crate::topology::components::ComponentTracker;

/// The counts, with the heights they were taken against.
#[derive(Clone, Debug)]
pub struct ViewCounts<H> {
    stale: Vec<u32>,
    lower: Vec<u32>,
    /// Every node's height as of the last event (stored at once, pending or not).
    heights: Vec<H>,
    /// Nodes whose counts are out of date until their component is settled.
    pending: Vec<bool>,
    /// The pending nodes by component label; the others in the bucket
    /// [`Self::settled_key`].
    unsettled: Buckets,
    /// Scratch: the neighbours of the node being recounted.
    is_neighbour: Vec<bool>,
    /// The nodes whose counts the last event changed, possibly repeated: neighbours of
    /// a node whose height changed, adjusted for that one link. A monitor re-derives its
    /// per-node flags for exactly these.
    pub affected: Vec<NodeId>,
    /// The nodes the last [`Self::settle_component`] recounted: a monitor re-derives
    /// their flags.
    pub settled: Vec<NodeId>,
}

impl<H> Default for ViewCounts<H> {
    fn default() -> Self {
        Self {
            stale: Vec::new(),
            lower: Vec::new(),
            heights: Vec::new(),
            pending: Vec::new(),
            unsettled: Buckets::default(),
            is_neighbour: Vec::new(),
            affected: Vec::new(),
            settled: Vec::new(),
        }
    }
}

impl<H: Ord + Clone> ViewCounts<H> {
    /// Every node's counts from scratch, from the heights and views `nodes` hold.
    pub fn of_nodes<P: HeightView<Height = H>>(graph: &ComponentTracker, nodes: &[P]) -> Self {
        let n = graph.node_count();
        let mut counts = Self {
            stale: vec![0; n],
            lower: vec![0; n],
            heights: nodes.iter().map(P::height).collect(),
            pending: vec![false; n],
            unsettled: Buckets::all_in(n, n + 1, n as u32),
            is_neighbour: vec![false; n],
            affected: Vec::new(),
            settled: Vec::new(),
        };
        for v in 0..n as NodeId {
            counts.recount_node(graph, v, &nodes[v as usize]);
        }
        counts
    }

    /// The bucket of `unsettled` holding the nodes whose counts are up to date: one past
    /// the labels.
    fn settled_key(&self) -> u32 {
        self.pending.len() as u32
    }

    /// Neighbours `v` has a stale view of (not to be asked while `v` is pending).
    pub fn stale(&self, v: NodeId) -> u32 {
        debug_assert!(!self.is_pending(v), "node {v} is pending");
        self.stale[v as usize]
    }

    /// Whether `v`'s counts wait for its component to be settled.
    pub fn is_pending(&self, v: NodeId) -> bool {
        self.pending[v as usize]
    }

    /// The pending nodes of the component labelled `label`, in no particular order.
    pub fn pending_in(&self, label: u32) -> &[NodeId] {
        self.unsettled.members(label)
    }

    /// Recounts the pending nodes of the component labelled `label` from the links,
    /// views and heights now, and lists them in `settled`.
    pub fn settle_component<P: HeightView<Height = H>>(
        &mut self,
        graph: &ComponentTracker,
        label: u32,
        nodes: &[P],
    ) {
        self.settled.clear();
        let done = self.settled_key();
        while let Some(&v) = self.unsettled.members(label).last() {
            self.unsettled.relocate(v, label, done);
            self.pending[v as usize] = false;
            self.recount_node(graph, v, &nodes[v as usize]);
            self.settled.push(v);
        }
    }

    /// `v`'s height as of the last event.
    pub fn height(&self, v: NodeId) -> &H {
        &self.heights[v as usize]
    }

    /// Neighbours lower than `v` (0: `v` is a sink; not to be asked while `v` is
    /// pending).
    pub fn lower(&self, v: NodeId) -> u32 {
        debug_assert!(!self.is_pending(v), "node {v} is pending");
        self.lower[v as usize]
    }

    /// `v`'s counts from its links, its views and the stored heights. The views are read
    /// in one pass over what `node` holds (a neighbour-by-neighbour lookup was most of a
    /// large leader-election run's time): a neighbour's view is fresh if `node` holds one
    /// equal to the neighbour's height; views of nodes that are not neighbours (a link
    /// down not yet noticed) do not count.
    fn recount_node<P: HeightView<Height = H>>(
        &mut self,
        graph: &ComponentTracker,
        v: NodeId,
        node: &P,
    ) {
        let neighbours = graph.neighbours(v);
        let own = &self.heights[v as usize];
        let mut lower = 0;
        for &j in neighbours {
            self.is_neighbour[j as usize] = true;
            lower += u32::from(self.heights[j as usize] < *own);
        }
        let mut fresh = 0;
        for (j, seen) in node.views() {
            fresh += u32::from(
                self.is_neighbour.get(j as usize) == Some(&true)
                    && *seen == self.heights[j as usize],
            );
        }
        for &j in neighbours {
            self.is_neighbour[j as usize] = false;
        }
        let stale = neighbours.len() as u32 - fresh;
        (self.stale[v as usize], self.lower[v as usize]) = (stale, lower);
    }

    /// Records an event in which the nodes of `changed` (possibly repeated) ran
    /// handlers or had links change: the set `T`. Called once after every event, when
    /// the graph's move log ([`ComponentTracker::moves`], which must be on) holds the
    /// event's relabellings: pending nodes that changed component follow them. Nodes of
    /// `T` become pending (their heights are stored now, their counts later). A
    /// neighbour `j` outside `T` has the same links and views as before, and only its
    /// link to a node of `T` can count differently, so unless it is pending itself it
    /// is adjusted for that link alone, from the height stored before the event and the
    /// height now, and listed in `affected`.
    pub fn record_event<'a, P: HeightView<Height = H>>(
        &mut self,
        graph: &ComponentTracker,
        changed: impl Iterator<Item = &'a NodeId> + Clone,
        nodes: &[P],
    ) {
        self.affected.clear();
        for m in graph.moves() {
            if self.pending[m.node as usize] {
                self.unsettled.relocate(m.node, m.from, m.to);
            }
        }
        let done = self.settled_key();
        for &v in changed.clone() {
            if !std::mem::replace(&mut self.pending[v as usize], true) {
                self.unsettled.relocate(v, done, graph.label(v));
            }
        }
        for &v in changed {
            let now = nodes[v as usize].height();
            if self.heights[v as usize] == now {
                continue;
            }
            let before = std::mem::replace(&mut self.heights[v as usize], now);
            let now = &self.heights[v as usize];
            for &j in graph.neighbours(v) {
                if self.pending[j as usize] {
                    continue;
                }
                let seen = nodes[j as usize].neighbour_height(v);
                let own = &self.heights[j as usize];
                let stale_then = seen.as_ref() != Some(&before);
                let stale_now = seen.as_ref() != Some(now);
                let s = &mut self.stale[j as usize];
                *s = *s + u32::from(stale_now) - u32::from(stale_then);
                let l = &mut self.lower[j as usize];
                *l = *l + u32::from(now < own) - u32::from(before < *own);
                self.affected.push(j);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A node whose height and views a test sets directly. Views may be stale, missing,
    /// or of nodes that are not neighbours.
    #[derive(Clone, Debug)]
    struct Node {
        height: u8,
        views: Vec<(NodeId, u8)>,
    }

    impl HeightView for Node {
        type Height = u8;
        fn height(&self) -> u8 {
            self.height
        }
        fn neighbour_height(&self, j: NodeId) -> Option<u8> {
            self.views.iter().find(|(k, _)| *k == j).map(|&(_, h)| h)
        }
        fn views(&self) -> impl Iterator<Item = (NodeId, &u8)> + '_ {
            self.views.iter().map(|(j, h)| (*j, h))
        }
    }

    /// The counts by their definitions.
    fn by_definition(graph: &ComponentTracker, nodes: &[Node], v: NodeId) -> (u32, u32) {
        let own = nodes[v as usize].height;
        let neighbours = graph.neighbours(v);
        let stale = neighbours
            .iter()
            .filter(|&&j| nodes[v as usize].neighbour_height(j) != Some(nodes[j as usize].height))
            .count();
        let lower = neighbours
            .iter()
            .filter(|&&j| nodes[j as usize].height < own)
            .count();
        (stale as u32, lower as u32)
    }

    proptest! {
        /// After any sequence of events, each a few link flips (a link may flip twice),
        /// height changes and view changes applied together, with the nodes they
        /// changed: every node not pending has the counts of the definitions, and is
        /// listed in `affected` if they changed; every pending node is in the bucket of
        /// its component; settling a component (some after each event) leaves none of
        /// its nodes pending, lists them in `settled`, and gives them the counts of the
        /// definitions.
        #[test]
        fn the_counts_match_the_definitions(
            n in 2usize..8,
            start in prop::collection::vec(0u8..4, 8),
            events in prop::collection::vec(
                (prop::collection::vec((0u32..8, 0u32..8, 0u8..4, 0u8..3), 1..5), any::<u8>()),
                1..40,
            ),
        ) {
            let mut graph = ComponentTracker::new(n);
            graph.log_moves();
            let mut nodes: Vec<Node> = (0..n)
                .map(|v| Node { height: start[v], views: Vec::new() })
                .collect();
            let mut counts = ViewCounts::of_nodes(&graph, &nodes);
            let counts_of = |counts: &ViewCounts<u8>, v: NodeId| (counts.stale[v as usize], counts.lower[v as usize]);
            for (steps, settle) in events {
                let mut changed = Vec::new();
                for (x, y, h, kind) in steps {
                    let (a, b) = (x % n as u32, y % n as u32);
                    match kind {
                        0 if a != b => {
                            if graph.neighbours(a).contains(&b) {
                                graph.remove_edge(a, b);
                            } else {
                                graph.add_edge(a, b);
                            }
                            changed.extend([a, b]);
                        }
                        1 => {
                            nodes[a as usize].height = h;
                            changed.push(a);
                        }
                        _ => {
                            // `a` learns (or forgets, for h = 0) a view of `b`, right
                            // or not, perhaps of a node it has no link to.
                            let views = &mut nodes[a as usize].views;
                            views.retain(|(k, _)| *k != b);
                            if h > 0 {
                                views.push((b, h - 1));
                            }
                            changed.extend([a, a]);
                        }
                    }
                }
                let before: Vec<_> = (0..n as NodeId).map(|v| counts_of(&counts, v)).collect();
                counts.record_event(&graph, changed.iter(), &nodes);
                graph.clear_moves();
                for v in 0..n as NodeId {
                    prop_assert_eq!(*counts.height(v), nodes[v as usize].height);
                    if counts.is_pending(v) {
                        prop_assert!(counts.pending_in(graph.label(v)).contains(&v), "node {} not in its bucket", v);
                        continue;
                    }
                    prop_assert_eq!(
                        counts_of(&counts, v),
                        by_definition(&graph, &nodes, v),
                        "node {}", v
                    );
                    if counts_of(&counts, v) != before[v as usize] {
                        prop_assert!(counts.affected.contains(&v), "node {} not listed", v);
                    }
                }
                for label in (0..n as u32).filter(|l| settle & (1 << l) != 0) {
                    let mut pending = counts.pending_in(label).to_vec();
                    counts.settle_component(&graph, label, &nodes);
                    let mut settled = counts.settled.clone();
                    pending.sort_unstable();
                    settled.sort_unstable();
                    prop_assert_eq!(settled, pending);
                    for v in (0..n as NodeId).filter(|&v| graph.label(v) == label) {
                        prop_assert!(!counts.is_pending(v));
                        prop_assert_eq!(
                            (counts.stale(v), counts.lower(v)),
                            by_definition(&graph, &nodes, v),
                            "settled node {}", v
                        );
                    }
                }
            }
        }
    }
}
