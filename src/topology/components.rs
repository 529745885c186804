//! Connected components of a changing graph.
//!
//! Statistics need the number of components after every link event. Recomputing from
//! scratch per event costs O(n + m) each time; instead a link-up merges two labels
//! (relabelling the smaller component) and a link-down searches from one endpoint to
//! see whether the other is still reachable, relabelling only the part that split off.

use crate::mobility::NodeId;

/// Undirected graph with component labels kept current under edge insertions and removals.
#[derive(Clone, Debug)]
pub struct ComponentTracker {
    adjacency: Vec<Vec<NodeId>>,
    label: Vec<u32>,
    size_of_label: Vec<usize>,
    components: usize,
    stack: Vec<NodeId>,
    seen: Vec<u32>,
    epoch: u32,
}

impl ComponentTracker {
    /// `n` isolated nodes.
    pub fn new(n: usize) -> Self {
        Self {
            adjacency: vec![Vec::new(); n],
            label: (0..n as u32).collect(),
            size_of_label: vec![1; n],
            components: n,
            stack: Vec::new(),
            seen: vec![0; n],
            epoch: 0,
        }
    }

    /// Number of connected components now (an isolated node is one).
    pub fn component_count(&self) -> usize {
        self.components
    }

    /// A label shared by exactly the nodes of one component (labels are reused over time).
    pub fn label(&self, node: NodeId) -> u32 {
        self.label[node as usize]
    }

    /// Number of nodes in `node`'s component (itself included).
    pub fn component_size(&self, node: NodeId) -> usize {
        self.size_of_label[self.label[node as usize] as usize]
    }

    /// Number of nodes, fixed at creation.
    pub fn node_count(&self) -> usize {
        self.label.len()
    }

    /// Whether `a` and `b` are in the same component.
    pub fn connected(&self, a: NodeId, b: NodeId) -> bool {
        self.label[a as usize] == self.label[b as usize]
    }

    /// The nodes linked to `node` now, in no particular order.
    pub fn neighbours(&self, node: NodeId) -> &[NodeId] {
        &self.adjacency[node as usize]
    }

    /// Adds edge `a–b` (must not be present).
    pub fn add_edge(&mut self, a: NodeId, b: NodeId) {
        let (la, lb) = (self.label[a as usize], self.label[b as usize]);
        if la == lb {
            self.adjacency[a as usize].push(b);
            self.adjacency[b as usize].push(a);
            return;
        }
        // Relabel the smaller side, before the edge joins it to the larger.
        let (keep, from, start) =
            if self.size_of_label[la as usize] >= self.size_of_label[lb as usize] {
                (la, lb, b)
            } else {
                (lb, la, a)
            };
        let moved = self.relabel_from(start, keep);
        self.adjacency[a as usize].push(b);
        self.adjacency[b as usize].push(a);
        self.size_of_label[keep as usize] += moved;
        self.size_of_label[from as usize] = 0;
        self.components -= 1;
    }

    /// Removes edge `a–b` (must be present).
    pub fn remove_edge(&mut self, a: NodeId, b: NodeId) {
        remove_one(&mut self.adjacency[a as usize], b);
        remove_one(&mut self.adjacency[b as usize], a);
        // In dense graphs the two ends nearly always still share a neighbour: check that
        // in O(deg a + deg b) before searching the component.
        if self.share_a_neighbour(a, b) || self.reaches(a, b) {
            return;
        }
        // `b`'s side split off: give it a fresh label (the one of a currently empty slot,
        // `b` itself if free, otherwise any free one).
        let old = self.label[b as usize];
        let fresh = self.free_label();
        let moved = self.relabel_from(b, fresh);
        self.size_of_label[fresh as usize] = moved;
        self.size_of_label[old as usize] -= moved;
        self.components += 1;
    }

    fn free_label(&self) -> u32 {
        self.size_of_label
            .iter()
            .position(|&s| s == 0)
            .expect("a split implies a free label") as u32
    }

    fn share_a_neighbour(&mut self, a: NodeId, b: NodeId) -> bool {
        self.epoch += 1;
        for &w in &self.adjacency[b as usize] {
            self.seen[w as usize] = self.epoch;
        }
        let epoch = self.epoch;
        self.adjacency[a as usize]
            .iter()
            .any(|&w| self.seen[w as usize] == epoch)
    }

    /// Depth-first search from `from`; whether `to` is reached.
    fn reaches(&mut self, from: NodeId, to: NodeId) -> bool {
        self.epoch += 1;
        self.stack.clear();
        self.stack.push(from);
        self.seen[from as usize] = self.epoch;
        while let Some(v) = self.stack.pop() {
            if v == to {
                return true;
            }
            for &w in &self.adjacency[v as usize] {
                if self.seen[w as usize] != self.epoch {
                    self.seen[w as usize] = self.epoch;
                    self.stack.push(w);
                }
            }
        }
        false
    }

    /// Gives every node reachable from `start` the label `label`; returns how many.
    fn relabel_from(&mut self, start: NodeId, label: u32) -> usize {
        self.epoch += 1;
        self.stack.clear();
        self.stack.push(start);
        self.seen[start as usize] = self.epoch;
        let mut count = 0;
        while let Some(v) = self.stack.pop() {
            self.label[v as usize] = label;
            count += 1;
            for &w in &self.adjacency[v as usize] {
                if self.seen[w as usize] != self.epoch {
                    self.seen[w as usize] = self.epoch;
                    self.stack.push(w);
                }
            }
        }
        count
    }
}

fn remove_one(list: &mut Vec<NodeId>, value: NodeId) {
    if let Some(pos) = list.iter().position(|&v| v == value) {
        list.swap_remove(pos);
    }
}

/// Number of connected components of an undirected graph, by union–find (reference for
/// tests of [`ComponentTracker`], and handy for one-off checks).
pub fn count_components(n: usize, edges: impl IntoIterator<Item = (NodeId, NodeId)>) -> usize {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut count = n;
    for (a, b) in edges {
        let (ra, rb) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
        if ra != rb {
            parent[ra] = rb;
            count -= 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Random edge flips on up to 12 nodes: the tracker agrees with union–find.
        #[test]
        fn tracker_matches_union_find(n in 1usize..12, flips in prop::collection::vec((0u32..12, 0u32..12), 0..200)) {
            let mut tracker = ComponentTracker::new(n);
            let mut edges = std::collections::BTreeSet::new();
            for (a, b) in flips {
                let (a, b) = (a % n as u32, b % n as u32);
                if a == b { continue; }
                let key = (a.min(b), a.max(b));
                if edges.remove(&key) { tracker.remove_edge(a, b); } else { edges.insert(key); tracker.add_edge(a, b); }
                prop_assert_eq!(tracker.component_count(), count_components(n, edges.iter().copied()));
                for x in 0..n as u32 {
                    let size = (0..n as u32).filter(|&y| tracker.connected(x, y)).count();
                    prop_assert_eq!(tracker.component_size(x), size);
                    for y in 0..n as u32 {
                        let same_via_bfs = {
                            let mut seen = vec![false; n];
                            let mut stack = vec![x];
                            seen[x as usize] = true;
                            while let Some(v) = stack.pop() {
                                for &w in tracker.neighbours(v) {
                                    if !seen[w as usize] { seen[w as usize] = true; stack.push(w); }
                                }
                            }
                            seen[y as usize]
                        };
                        prop_assert_eq!(tracker.connected(x, y), same_via_bfs);
                    }
                }
            }
        }
    }
}
