//! Which nodes have a route to the destination, kept current event by event.
//!
//! A node has a route when a path of links, each from its higher end to its lower end,
//! leads from it to the destination: exactly when it is the destination or some lower
//! neighbour has a route. Heights are totally ordered, so the orientation is acyclic and
//! that recursion has one solution. Searching the destination's component after every
//! height change (as the route monitor did) cost a whole component per event during
//! reversals; here each node keeps how many of its lower neighbours have a route, and
//! an event re-evaluates only the nodes whose links or lower neighbours it changed, in
//! ascending height order, so each is settled once its lower neighbours are, and a flip
//! adjusts the counts of the higher neighbours and queues them. A node whose height
//! changed is recounted, and each neighbour is adjusted for that one link: recounting
//! the neighbours too read every neighbour's neighbours, the largest cost of a
//! 1,600-node route run (`perf`).

use super::groups::StampSet;
use super::views::ViewCounts;
use crate::NodeId;
use crate::topology::components::ComponentTracker;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The nodes with a route to one destination, under the heights of a [`ViewCounts`].
#[derive(Clone, Debug)]
pub struct Routed<H> {
    dest: NodeId,
    routed: Vec<bool>,
    /// Per node: lower neighbours that have a route.
    lower_routed: Vec<u32>,
    count: usize,
    /// Scratch: nodes queued for re-evaluation, lowest first.
    queue: BinaryHeap<Reverse<(H, NodeId)>>,
    queued: StampSet,
    /// Scratch: nodes recounted in full in the current update.
    recount: StampSet,
    /// Scratch: raised nodes whose neighbours were adjusted in the current update.
    adjusted: StampSet,
}

impl<H: Ord + Clone> Routed<H> {
    /// The routed nodes of `graph` under `heights`, from scratch.
    pub fn new(graph: &ComponentTracker, dest: NodeId, heights: &ViewCounts<H>) -> Self {
        let n = graph.node_count();
        let mut routed = Self {
            dest,
            routed: vec![false; n],
            lower_routed: vec![0; n],
            count: 0,
            queue: BinaryHeap::new(),
            queued: StampSet::default(),
            recount: StampSet::default(),
            adjusted: StampSet::default(),
        };
        routed.update(graph, heights, 0..n as NodeId, &[]);
        routed
    }

    /// Nodes with a route, the destination included.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Brings the routes up to date after an event, under the heights `heights` holds
    /// now. `relinked` must hold every node whose links changed, and `raised` every node
    /// whose height changed, with its height before the event (both possibly repeated):
    /// any other node's lower neighbours can have changed only by a raised one.
    pub fn update(
        &mut self,
        graph: &ComponentTracker,
        heights: &ViewCounts<H>,
        relinked: impl IntoIterator<Item = NodeId>,
        raised: &[(NodeId, H)],
    ) {
        let n = graph.node_count();
        self.queued.reset(n);
        self.recount.reset(n);
        for v in relinked.into_iter().chain(raised.iter().map(|(v, _)| *v)) {
            self.recount.insert(v);
        }
        // A raised node with a route counts for a neighbour of unchanged height and
        // links exactly when it is lower: that changed if it crossed the neighbour.
        self.adjusted.reset(n);
        for (v, before) in raised {
            if !self.routed[*v as usize] || !self.adjusted.insert(*v) {
                continue;
            }
            let now = heights.height(*v);
            for &j in graph.neighbours(*v) {
                if self.recount.contains(j) {
                    continue;
                }
                let hj = heights.height(j);
                let c = &mut self.lower_routed[j as usize];
                match (before < hj, now < hj) {
                    (false, true) => *c += 1,
                    (true, false) => *c -= 1,
                    _ => continue,
                }
                if self.queued.insert(j) {
                    self.queue.push(Reverse((hj.clone(), j)));
                }
            }
        }
        for &v in &self.recount.items {
            let own = heights.height(v);
            self.lower_routed[v as usize] = graph
                .neighbours(v)
                .iter()
                .filter(|&&w| self.routed[w as usize] && heights.height(w) < own)
                .count() as u32;
            if self.queued.insert(v) {
                self.queue.push(Reverse((own.clone(), v)));
            }
        }
        while let Some(Reverse((own, v))) = self.queue.pop() {
            let now = v == self.dest || self.lower_routed[v as usize] > 0;
            if now == self.routed[v as usize] {
                continue;
            }
            self.routed[v as usize] = now;
            if now {
                self.count += 1;
            } else {
                self.count -= 1;
            }
            for &j in graph.neighbours(v) {
                if heights.height(j) <= &own {
                    continue;
                }
                let c = &mut self.lower_routed[j as usize];
                if now {
                    *c += 1;
                } else {
                    *c -= 1;
                }
                if self.queued.insert(j) {
                    self.queue.push(Reverse((heights.height(j).clone(), j)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::HeightView;
    use proptest::prelude::*;

    /// A node with a height and no views (routes depend on heights alone).
    struct Blind((u32, NodeId));

    impl HeightView for Blind {
        type Height = (u32, NodeId);
        fn height(&self) -> (u32, NodeId) {
            self.0
        }
        fn neighbour_height(&self, _: NodeId) -> Option<(u32, NodeId)> {
            None
        }
        fn views(&self) -> impl Iterator<Item = (NodeId, &(u32, NodeId))> + '_ {
            std::iter::empty()
        }
    }

    /// Nodes with a route by the definition: a search from `dest` up each link to its
    /// higher end.
    fn search(graph: &ComponentTracker, dest: NodeId, height: &[(u32, NodeId)]) -> usize {
        let mut reached = vec![false; graph.node_count()];
        let mut stack = vec![dest];
        reached[dest as usize] = true;
        let mut count = 0;
        while let Some(u) = stack.pop() {
            count += 1;
            for &w in graph.neighbours(u) {
                if !reached[w as usize] && height[w as usize] > height[u as usize] {
                    reached[w as usize] = true;
                    stack.push(w);
                }
            }
        }
        count
    }

    proptest! {
        /// After any sequence of events, each a few link flips and height changes
        /// applied together (a link may flip twice, a node change height twice), the
        /// count matches the definition.
        #[test]
        fn the_count_matches_a_search(
            n in 2usize..9,
            start in prop::collection::vec(0u32..6, 9),
            events in prop::collection::vec(
                prop::collection::vec((0u32..9, 0u32..9, 0u32..6, any::<bool>()), 1..4),
                1..40,
            ),
        ) {
            let mut graph = ComponentTracker::new(n);
            graph.log_moves();
            let mut nodes: Vec<Blind> =
                (0..n as NodeId).map(|v| Blind((start[v as usize], v))).collect();
            let mut views = ViewCounts::of_nodes(&graph, &nodes);
            let mut routed = Routed::new(&graph, 0, &views);
            prop_assert_eq!(routed.count(), 1);
            for steps in events {
                let mut relinked = Vec::new();
                let mut raised = Vec::new();
                for (x, y, h, flip) in steps {
                    let (a, b) = (x % n as u32, y % n as u32);
                    if flip {
                        if a == b {
                            continue;
                        }
                        if graph.neighbours(a).contains(&b) {
                            graph.remove_edge(a, b);
                        } else {
                            graph.add_edge(a, b);
                        }
                        relinked.extend([a, b]);
                    } else {
                        nodes[a as usize].0.0 = h;
                        raised.push((a, *views.height(a)));
                    }
                }
                let changed: Vec<NodeId> =
                    relinked.iter().copied().chain(raised.iter().map(|(v, _)| *v)).collect();
                views.record_event(&graph, changed.iter(), &nodes);
                graph.clear_moves();
                routed.update(&graph, &views, relinked.iter().copied(), &raised);
                let height: Vec<_> = nodes.iter().map(|node| node.0).collect();
                prop_assert_eq!(routed.count(), search(&graph, 0, &height));
                for v in 0..n as NodeId {
                    let lower_routed = graph
                        .neighbours(v)
                        .iter()
                        .filter(|&&w| routed.routed[w as usize] && height[w as usize] < height[v as usize])
                        .count() as u32;
                    prop_assert_eq!(routed.lower_routed[v as usize], lower_routed, "node {}", v);
                }
            }
        }
    }
}
