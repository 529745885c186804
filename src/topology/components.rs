//! Connected components of a changing graph.
//!
//! Statistics need the number of components after every link event. Recomputing from
//! scratch per event costs O(n + m) each time; instead a link-up merges two labels
//! (relabelling the smaller component) and a link-down searches from both endpoints at
//! once, so that when the component splits only the smaller part is searched in full
//! and relabelled. Monitors that keep per-component sums follow the relabellings
//! through the move log ([`ComponentTracker::log_moves`]), so their cost per change is
//! that of the nodes that changed component, not of the network.

use crate::mobility::NodeId;

/// A node that changed label: `from` and `to` are labels ([`ComponentTracker::label`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The node that changed component.
    pub node: NodeId,
    /// Its label before.
    pub from: u32,
    /// Its label after.
    pub to: u32,
}

/// Undirected graph with component labels kept current under edge insertions and removals.
#[derive(Clone, Debug)]
pub struct ComponentTracker {
    adjacency: Vec<Vec<NodeId>>,
    label: Vec<u32>,
    size_of_label: Vec<usize>,
    /// Labels of no component now (freed by merges), reused by splits.
    free: Vec<u32>,
    components: usize,
    stack: Vec<NodeId>,
    other_stack: Vec<NodeId>,
    visited: Vec<NodeId>,
    other_visited: Vec<NodeId>,
    seen: Vec<u32>,
    epoch: u32,
    /// Relabellings since the log was last cleared, in order; `None`: not logged.
    moves: Option<Vec<Move>>,
}

impl ComponentTracker {
    /// `n` isolated nodes.
    pub fn new(n: usize) -> Self {
        Self {
            adjacency: vec![Vec::new(); n],
            label: (0..n as u32).collect(),
            size_of_label: vec![1; n],
            free: Vec::new(),
            components: n,
            stack: Vec::new(),
            other_stack: Vec::new(),
            visited: Vec::new(),
            other_visited: Vec::new(),
            seen: vec![0; n],
            epoch: 0,
            moves: None,
        }
    }

    /// From now on, records every relabelling in the move log (empty now) until
    /// [`Self::clear_moves`]; the simulator clears it before each event, so that
    /// observers read an event's moves after it.
    pub fn log_moves(&mut self) {
        self.moves = Some(Vec::new());
    }

    /// The relabellings since the log was last cleared (none if not logging).
    pub fn moves(&self) -> &[Move] {
        self.moves.as_deref().unwrap_or(&[])
    }

    /// Empties the move log.
    pub fn clear_moves(&mut self) {
        if let Some(log) = &mut self.moves {
            log.clear();
        }
    }

    /// Number of connected components now (an isolated node is one).
    pub fn component_count(&self) -> usize {
        self.components
    }

    /// A label shared by exactly the nodes of one component (labels are reused over
    /// time, and are always below [`Self::node_count`]).
    pub fn label(&self, node: NodeId) -> u32 {
        self.label[node as usize]
    }

    /// Number of nodes in `node`'s component (itself included).
    pub fn component_size(&self, node: NodeId) -> usize {
        self.size_of_label[self.label[node as usize] as usize]
    }

    /// Number of nodes carrying `label` (0 for a label of no component).
    pub fn label_size(&self, label: u32) -> usize {
        self.size_of_label[label as usize]
    }

    /// Number of nodes, fixed at creation.
    pub fn node_count(&self) -> usize {
        self.label.len()
    }

    /// Whether `a` and `b` are in the same component.
    pub fn connected(&self, a: NodeId, b: NodeId) -> bool {
        self.label[a as usize] == self.label[b as usize]
    }

    /// The nodes linked to `node` now, in no particular order, but in a predictable
    /// one, so that a caller can keep data about each link in lists parallel to these:
    /// [`Self::add_edge`] appends to both endpoints' lists, and [`Self::remove_edge`]
    /// moves the last entry of each list into the removed one's place and says where.
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
        self.visit_from(start);
        self.relabel_visited(keep);
        self.adjacency[a as usize].push(b);
        self.adjacency[b as usize].push(a);
        self.free.push(from);
        self.components -= 1;
    }

    /// Removes edge `a–b` (must be present). Returns where `b` was in `a`'s list and `a`
    /// in `b`'s ([`Self::neighbours`]: each list's last entry moved there); `None` if the
    /// edge was not there, a caller's bug after which the labels may be wrong.
    pub fn remove_edge(&mut self, a: NodeId, b: NodeId) -> Option<(usize, usize)> {
        let at_a = remove_one(&mut self.adjacency[a as usize], b);
        let at_b = remove_one(&mut self.adjacency[b as usize], a);
        let slots = at_a.zip(at_b);
        // In dense graphs the two ends nearly always still share a neighbour: check that
        // in O(deg a + deg b) before searching the component.
        if self.share_a_neighbour(a, b) || !self.split_side(a, b) {
            return slots;
        }
        // The side in `visited` split off: give it a label of no component now.
        let fresh = self.free.pop().expect("a split implies a free label");
        self.relabel_visited(fresh);
        self.components += 1;
        slots
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

    /// Searches from `a` and from `b` in turn, one node at a time, until the searches
    /// meet (still connected: `false`) or one runs out (`true`), leaving that side's
    /// nodes, the smaller part or one of equal size, in `visited`.
    fn split_side(&mut self, a: NodeId, b: NodeId) -> bool {
        self.epoch += 2;
        let (mark_a, mark_b) = (self.epoch - 1, self.epoch);
        self.stack.clear();
        self.other_stack.clear();
        self.visited.clear();
        self.other_visited.clear();
        self.stack.push(a);
        self.visited.push(a);
        self.seen[a as usize] = mark_a;
        self.other_stack.push(b);
        self.other_visited.push(b);
        self.seen[b as usize] = mark_b;
        loop {
            // One step of each search; a search with nothing left is a whole side.
            for (side, mark, other) in [(0, mark_a, mark_b), (1, mark_b, mark_a)] {
                let (stack, visited) = if side == 0 {
                    (&mut self.stack, &mut self.visited)
                } else {
                    (&mut self.other_stack, &mut self.other_visited)
                };
                let Some(v) = stack.pop() else {
                    if side == 1 {
                        std::mem::swap(&mut self.visited, &mut self.other_visited);
                    }
                    return true;
                };
                for &w in &self.adjacency[v as usize] {
                    let s = self.seen[w as usize];
                    if s == other {
                        return false;
                    }
                    if s != mark {
                        self.seen[w as usize] = mark;
                        stack.push(w);
                        visited.push(w);
                    }
                }
            }
        }
    }

    /// Puts every node reachable from `start` in `visited`.
    fn visit_from(&mut self, start: NodeId) {
        self.epoch += 1;
        self.stack.clear();
        self.visited.clear();
        self.stack.push(start);
        self.visited.push(start);
        self.seen[start as usize] = self.epoch;
        while let Some(v) = self.stack.pop() {
            for &w in &self.adjacency[v as usize] {
                if self.seen[w as usize] != self.epoch {
                    self.seen[w as usize] = self.epoch;
                    self.stack.push(w);
                    self.visited.push(w);
                }
            }
        }
    }

    /// Gives the nodes in `visited` (all of one label) the label `to`.
    fn relabel_visited(&mut self, to: u32) {
        let from = self.label[self.visited[0] as usize];
        for &v in &self.visited {
            self.label[v as usize] = to;
            if let Some(log) = &mut self.moves {
                log.push(Move { node: v, from, to });
            }
        }
        let moved = self.visited.len();
        self.size_of_label[from as usize] -= moved;
        self.size_of_label[to as usize] += moved;
    }
}

/// Removes `value` from `list` by moving the last entry into its place; where it was.
fn remove_one(list: &mut Vec<NodeId>, value: NodeId) -> Option<usize> {
    let pos = list.iter().position(|&v| v == value)?;
    list.swap_remove(pos);
    Some(pos)
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
            tracker.log_moves();
            // Labels as an observer following the move log sees them.
            let mut followed: Vec<u32> = (0..n as u32).collect();
            let mut edges = std::collections::BTreeSet::new();
            for (a, b) in flips {
                let (a, b) = (a % n as u32, b % n as u32);
                if a == b { continue; }
                let key = (a.min(b), a.max(b));
                if edges.remove(&key) { tracker.remove_edge(a, b); } else { edges.insert(key); tracker.add_edge(a, b); }
                prop_assert_eq!(tracker.component_count(), count_components(n, edges.iter().copied()));
                for m in tracker.moves() {
                    prop_assert_eq!(followed[m.node as usize], m.from);
                    followed[m.node as usize] = m.to;
                }
                tracker.clear_moves();
                for x in 0..n as u32 {
                    prop_assert_eq!(followed[x as usize], tracker.label(x));
                    prop_assert!((tracker.label(x) as usize) < n);
                    let label_size = followed.iter().filter(|&&l| l == tracker.label(x)).count();
                    prop_assert_eq!(tracker.label_size(tracker.label(x)), label_size);
                }
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

    /// A split relabels the smaller part, whichever endpoint it holds, so that a node
    /// changes label O(log n) times over any sequence of merges and splits.
    #[test]
    fn a_split_moves_the_smaller_part() {
        for (cut_a, cut_b, smaller) in [(7, 8, vec![8, 9]), (1, 2, vec![0, 1])] {
            let mut tracker = ComponentTracker::new(10);
            for v in 0..9 {
                tracker.add_edge(v, v + 1);
            }
            tracker.log_moves();
            tracker.remove_edge(cut_a, cut_b);
            let mut moved: Vec<NodeId> = tracker.moves().iter().map(|m| m.node).collect();
            moved.sort_unstable();
            assert_eq!(moved, smaller);
            assert_eq!(tracker.component_count(), 2);
        }
    }
}
