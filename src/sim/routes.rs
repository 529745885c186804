//! Shortest paths for routed messages: hop distances to each destination, repaired after
//! topology changes rather than searched afresh.
//!
//! A routed hop needs the first hop of a shortest path from where the message is to its
//! destination (ties to the lowest neighbour id). Recomputing a breadth-first search per
//! hop, or after every topology change, made the cost of a hop grow with the network
//! (Raymond at 800 nodes spent half its time in the search). Here each
//! destination has a table of hop distances and a radius: every node within the radius
//! has its exact distance, every other node [`UNREACHED`]. A search goes only as far as
//! the hop at hand needs, and extends the table from its outermost layer when a later
//! hop starts farther out.
//!
//! Link changes are logged and a table replays those it has not seen when it is next
//! used, as one batch against the current graph, keeping its radius:
//!
//! 1. *Lost support.* A node keeps its distance `d` if it still has a neighbour at
//!    `d − 1` that keeps its own. Candidates are the farther endpoints of links that went
//!    down, then the nodes one hop farther than a node that lost support; they are
//!    decided nearest first, so a node's nearer neighbours are decided before it. Every
//!    node that keeps its distance has a path of that length in the current graph.
//! 2. *Repair.* A node that lost support takes one more than its best neighbour that
//!    kept it; a link that came up, is still up and joins distances two or more apart
//!    lowers its farther end; every lowered value spreads outwards, nearest first (a
//!    breadth-first search from several starting distances). Values beyond the radius
//!    are left [`UNREACHED`].
//!
//! The cost is that of the nodes whose distance changed and their neighbours. The result
//! within the radius equals a fresh search's: every value is the length of a real path,
//! and along a shortest path to a node within the radius each node ends at most one
//! above its predecessor (the predecessor either kept an old exact distance over an old
//! link, or was lowered and spread, or the link came up and was relaxed in step 2).
//!
//! A search, fresh or extending a radius, runs a layer at a time on the links' bit rows
//! (`super::link_matrix`) on networks of up to `MAX_MATRIX_NODES` nodes, and on
//! adjacency lists above that; both leave the same table.
//!
//! A table further behind than the log reaches is searched afresh. The log is short (a
//! quarter of the node count): replaying a change costs a few memory reads per table,
//! and on random-waypoint networks of 200–1,600 nodes a short log and more fresh (partial)
//! searches measured faster than a long one (`linkrev bench scale`; the book's performance page).
//! `tests` check every table entry against fresh searches after random change sequences.

use super::link_matrix::{LinkMatrix, MAX_MATRIX_NODES};
use crate::NodeId;
use crate::graph::UNREACHED;
use crate::topology::components::ComponentTracker;
use crate::topology::events::LinkChange;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Memory for distance tables, in bytes, unless [`MIN_TABLES`] tables take more: beyond
/// it, a new destination's table replaces the one with the oldest `seen` (the one used
/// least recently, as far as the change count tells; ties to the lowest id). A table the
/// log has moved past is searched afresh anyway, so only the tables used within one
/// log's span of changes are worth keeping; keeping every destination's (10 MB at 1,600
/// nodes) only spread the working set. Measured at 1,600 nodes, where the budget allows
/// 40 tables and so [`MIN_TABLES`] decides: Raymond's run took 0.115-0.121 s against
/// 0.126-0.130 s with every table kept (`bench scale`, taking turns).
const TABLE_BUDGET_BYTES: usize = 256 << 10;

/// Tables kept whatever the budget: at 1,600 nodes one log's span of changes (0.4
/// simulated seconds) sees about as many routed hops as this, to a handful of
/// destinations.
const MIN_TABLES: usize = 64;

/// One destination's hop distances, for the graph as of change number `seen`.
struct Table {
    dist: Vec<u32>,
    /// Number of the first logged change this table has not been repaired for.
    seen: u64,
    /// Every node within this distance has its exact value and every other node
    /// [`UNREACHED`] ([`UNREACHED`]: the table is exact for every node).
    exact_within: u32,
}

/// A link that came up or went down.
#[derive(Clone, Copy)]
struct Logged {
    change: LinkChange,
    a: NodeId,
    b: NodeId,
}

/// The links that changed, which some table may not have been repaired for yet.
struct ChangeLog {
    /// `links[0]` is change number `start`.
    links: VecDeque<Logged>,
    start: u64,
    /// How many changes are kept: a table further behind is searched afresh, which
    /// costs about as much as replaying that many changes.
    limit: usize,
}

impl ChangeLog {
    /// Number of the next change to be logged.
    fn next(&self) -> u64 {
        self.start + self.links.len() as u64
    }

    /// Forgets every change so far (no table needs them).
    fn skip_all(&mut self) {
        self.start = self.next();
        self.links.clear();
    }

    fn push(&mut self, change: LinkChange, a: NodeId, b: NodeId) {
        self.links.push_back(Logged { change, a, b });
        if self.links.len() > self.limit {
            self.links.pop_front();
            self.start += 1;
        }
    }
}

/// Working memory of a repair, kept between repairs for its allocations.
#[derive(Default)]
struct Scratch {
    /// `decided[v] == round`: `v` was decided in this round's step 1.
    decided: Vec<u32>,
    round: u32,
    /// Whether a node lost support (set only for the nodes in `lost`).
    lost_support: Vec<bool>,
    lost: Vec<NodeId>,
    /// Step 1's candidates and step 2's frontier, nearest first.
    nearest_first: BucketQueue,
    /// The breadth-first searches' queue (fresh, or extending a table's radius): each
    /// node enters once, so a list read from the front needs no ring buffer. A search on
    /// bit rows keeps only the current layer here.
    queue: Vec<NodeId>,
    /// A search on bit rows: the next layer, and the nodes reached and the neighbours of
    /// the current layer as bit sets.
    next_layer: Vec<NodeId>,
    reached: Vec<u64>,
    around: Vec<u64>,
}

impl Scratch {
    /// Brings `dist`, exact within `radius` for the graph before `links` changed, to the
    /// current `graph`, exact within the same radius (module docs).
    fn repair<'l>(
        &mut self,
        dist: &mut [u32],
        radius: u32,
        links: impl Iterator<Item = &'l Logged> + Clone,
        graph: &ComponentTracker,
    ) {
        let n = dist.len();
        if self.decided.len() != n {
            self.decided = vec![0; n];
            self.lost_support = vec![false; n];
            self.round = 0;
        }
        self.round = self.round.wrapping_add(1);
        if self.round == 0 {
            self.decided.fill(0);
            self.round = 1;
        }
        // Step 1: who lost support.
        let heap = &mut self.nearest_first;
        heap.clear();
        for &Logged { change, a, b } in links.clone() {
            let (da, db) = (dist[a as usize], dist[b as usize]);
            // Only a link that went down can have taken support away (if it is up
            // again, the candidate finds it).
            if change == LinkChange::Down && da.abs_diff(db) == 1 && da.max(db) <= radius {
                heap.push(da.max(db), if da < db { b } else { a });
            }
        }
        while let Some((d, v)) = heap.pop() {
            if self.decided[v as usize] == self.round {
                continue;
            }
            self.decided[v as usize] = self.round;
            let supported = graph
                .neighbours(v)
                .iter()
                .any(|&u| dist[u as usize] == d - 1 && !self.lost_support[u as usize]);
            if !supported {
                self.lost_support[v as usize] = true;
                self.lost.push(v);
                for &w in graph.neighbours(v) {
                    if d < radius && dist[w as usize] == d + 1 {
                        heap.push(d + 1, w);
                    }
                }
            }
        }
        // Step 2: new values for those, then lowering along logged links, then spread.
        for &v in &self.lost {
            let best = graph
                .neighbours(v)
                .iter()
                .filter(|&&u| !self.lost_support[u as usize])
                .map(|&u| dist[u as usize])
                .min()
                .unwrap_or(UNREACHED);
            let value = if best < radius { best + 1 } else { UNREACHED };
            dist[v as usize] = value;
            if value != UNREACHED {
                heap.push(value, v);
            }
        }
        for &v in &self.lost {
            self.lost_support[v as usize] = false;
        }
        self.lost.clear();
        for &Logged { change, a, b } in links {
            let (da, db) = (dist[a as usize], dist[b as usize]);
            let (near, far) = if da < db { (da, b) } else { (db, a) };
            // A link that came up and is up now (it may have gone down again later).
            if change == LinkChange::Up
                && da.abs_diff(db) >= 2
                && near < radius
                && graph.neighbours(a).contains(&b)
            {
                dist[far as usize] = near + 1;
                heap.push(near + 1, far);
            }
        }
        while let Some((d, v)) = heap.pop() {
            if dist[v as usize] != d || d >= radius {
                continue;
            }
            for &w in graph.neighbours(v) {
                if dist[w as usize] > d + 1 {
                    dist[w as usize] = d + 1;
                    heap.push(d + 1, w);
                }
            }
        }
    }
}

/// Nodes by distance, popped nearest first; a node pushed twice is popped twice.
#[derive(Default)]
struct BucketQueue {
    /// `buckets[d]`: the nodes pushed at distance `d` and not yet popped.
    buckets: Vec<Vec<NodeId>>,
    /// No bucket below this one holds a node.
    nearest: usize,
    len: usize,
}

impl BucketQueue {
    fn clear(&mut self) {
        for bucket in &mut self.buckets {
            bucket.clear();
        }
        self.nearest = 0;
        self.len = 0;
    }

    fn push(&mut self, d: u32, v: NodeId) {
        let d = d as usize;
        if d >= self.buckets.len() {
            self.buckets.resize_with(d + 1, Vec::new);
        }
        self.buckets[d].push(v);
        if self.len == 0 || d < self.nearest {
            self.nearest = d;
        }
        self.len += 1;
    }

    fn pop(&mut self) -> Option<(u32, NodeId)> {
        if self.len == 0 {
            return None;
        }
        loop {
            if let Some(v) = self.buckets[self.nearest].pop() {
                self.len -= 1;
                return Some((self.nearest as u32, v));
            }
            self.nearest += 1;
        }
    }
}

/// Hop distances to the destinations routed messages go to (module docs).
pub struct ShortestPaths {
    tables: FxHashMap<NodeId, Table>,
    log: ChangeLog,
    max_tables: usize,
    scratch: Scratch,
    /// The links as bit rows, for the searches of a network of at most
    /// [`MAX_MATRIX_NODES`] nodes: built at the first search, then kept up to date.
    matrix: Option<LinkMatrix>,
    /// Whether to search on bit rows (tests turn it off to check the other search).
    use_matrix: bool,
}

impl ShortestPaths {
    /// No tables yet, for a network of `node_count` nodes.
    pub fn new(node_count: usize) -> Self {
        Self {
            tables: FxHashMap::default(),
            log: ChangeLog {
                links: VecDeque::new(),
                start: 0,
                limit: (node_count / 4).max(16),
            },
            max_tables: (TABLE_BUDGET_BYTES / (4 * node_count.max(1))).max(MIN_TABLES),
            scratch: Scratch::default(),
            matrix: None,
            use_matrix: node_count <= MAX_MATRIX_NODES,
        }
    }

    /// Records that link `a`–`b` came up or went down (it is already applied to the
    /// graph the next query passes).
    pub fn changed(&mut self, change: LinkChange, a: NodeId, b: NodeId) {
        if let Some(matrix) = &mut self.matrix {
            matrix.set(a, b, change == LinkChange::Up);
        }
        if self.tables.is_empty() {
            self.log.skip_all();
        } else {
            self.log.push(change, a, b);
        }
    }

    /// Hop distances to `dest` in `graph` (the graph all logged changes led to), far
    /// enough for `from`: `from` has its distance, or is one hop beyond the radius
    /// ([`within_reach`]), or has no path.
    fn distances(&mut self, from: NodeId, dest: NodeId, graph: &ComponentTracker) -> &Table {
        if self.tables.len() >= self.max_tables && !self.tables.contains_key(&dest) {
            let stalest = self.tables.iter().map(|(&d, t)| (t.seen, d)).min();
            if let Some((_, d)) = stalest {
                self.tables.remove(&d);
            }
        }
        let table = self.tables.entry(dest).or_insert_with(|| Table {
            dist: Vec::new(),
            seen: 0,
            exact_within: 0,
        });
        let n = graph.node_count();
        if self.use_matrix && self.matrix.as_ref().is_none_or(|m| m.node_count() != n) {
            self.matrix = Some(LinkMatrix::of(graph));
        }
        let matrix = self.matrix.as_ref();
        let log = &self.log;
        if table.dist.len() != n || table.seen < log.start {
            let scratch = &mut self.scratch;
            table.dist.clear();
            table.dist.resize(n, UNREACHED);
            table.dist[dest as usize] = 0;
            scratch.queue.clear();
            scratch.queue.push(dest);
            table.exact_within = match matrix {
                Some(matrix) => {
                    scratch.reached.clear();
                    scratch.reached.resize(matrix.words_per_row(), 0);
                    scratch.reached[dest as usize / 64] |= 1 << (dest % 64);
                    search_rows(matrix, graph, from, &mut table.dist, scratch)
                }
                None => search(graph, from, &mut table.dist, &mut scratch.queue),
            };
        } else {
            if table.seen < log.next() {
                let unseen = log.links.range((table.seen - log.start) as usize..);
                self.scratch
                    .repair(&mut table.dist, table.exact_within, unseen, graph);
            }
            if !within_reach(&table.dist, table.exact_within, from, graph) {
                // Search on from the outermost layer, which is exact and complete.
                let radius = table.exact_within;
                let scratch = &mut self.scratch;
                scratch.queue.clear();
                scratch
                    .queue
                    .extend((0..n as NodeId).filter(|&v| table.dist[v as usize] == radius));
                table.exact_within = match matrix {
                    Some(matrix) => {
                        scratch.reached.clear();
                        scratch.reached.resize(matrix.words_per_row(), 0);
                        for (v, &d) in table.dist.iter().enumerate() {
                            scratch.reached[v / 64] |= u64::from(d != UNREACHED) << (v % 64);
                        }
                        search_rows(matrix, graph, from, &mut table.dist, scratch)
                    }
                    None => search(graph, from, &mut table.dist, &mut scratch.queue),
                };
            }
        }
        table.seen = log.next();
        table
    }

    /// First hop of a shortest path from `from` to `dest` (ties to the lowest neighbour
    /// id); `None` if `from` is `dest` or there is no path.
    pub fn next_hop(
        &mut self,
        from: NodeId,
        dest: NodeId,
        graph: &ComponentTracker,
    ) -> Option<NodeId> {
        let table = self.distances(from, dest, graph);
        hop_towards(table, from, graph)
    }

    /// A shortest path `from` … `dest`, each hop as [`Self::next_hop`]; `None` if there
    /// is none.
    pub fn path(
        &mut self,
        from: NodeId,
        dest: NodeId,
        graph: &ComponentTracker,
    ) -> Option<Vec<NodeId>> {
        let table = self.distances(from, dest, graph);
        if from != dest && hop_towards(table, from, graph).is_none() {
            return None;
        }
        let mut path = vec![from];
        let mut node = from;
        while let Some(hop) = hop_towards(table, node, graph) {
            path.push(hop);
            node = hop;
        }
        Some(path)
    }
}

/// Whether `dist`, exact within `radius`, tells the first hop from `from`: `from` has
/// its distance, or it has none and a neighbour at the radius (it is one hop beyond), or
/// the table covers the whole component (`radius` [`UNREACHED`]) and `from` is outside.
fn within_reach(dist: &[u32], radius: u32, from: NodeId, graph: &ComponentTracker) -> bool {
    dist[from as usize] <= radius
        || radius == UNREACHED
        || graph
            .neighbours(from)
            .iter()
            .any(|&w| dist[w as usize] == radius)
}

/// Breadth-first search from the nodes in `queue`, the outermost layer of what `dist`
/// holds exactly (every node nearer than them has its distance, every farther node is
/// [`UNREACHED`]), far enough for `from` ([`within_reach`]), and returns the radius
/// within which `dist` is then exact ([`UNREACHED`] when it covered the whole component,
/// so that the nodes outside it are exact too).
///
/// It stops as soon as a layer is complete and `from` is in it or next to it: the layer
/// beyond, the largest so far on a large network, is not expanded (the search was Raymond's
/// largest cost at 1,600 nodes).
fn search(
    graph: &ComponentTracker,
    from: NodeId,
    dist: &mut [u32],
    queue: &mut Vec<NodeId>,
) -> u32 {
    let mut layer = None;
    let mut head = 0;
    while let Some(&u) = queue.get(head) {
        let du = dist[u as usize];
        // The first node of layer `du`: every node at distance `du` was found while the
        // nodes at `du − 1` were expanded.
        if layer != Some(du) {
            if within_reach(dist, du, from, graph) {
                return du;
            }
            layer = Some(du);
        }
        head += 1;
        for &w in graph.neighbours(u) {
            let slot = &mut dist[w as usize];
            if *slot == UNREACHED {
                *slot = du + 1;
                queue.push(w);
            }
        }
    }
    UNREACHED
}

/// [`search`] on bit rows, layer by layer: `scratch.queue` holds the outermost layer of
/// what `dist` holds exactly and `scratch.reached` every node `dist` holds. Returns what
/// [`search`] returns and leaves `dist` as [`search`] does.
fn search_rows(
    matrix: &LinkMatrix,
    graph: &ComponentTracker,
    from: NodeId,
    dist: &mut [u32],
    scratch: &mut Scratch,
) -> u32 {
    let Scratch {
        queue: layer,
        next_layer,
        reached,
        around,
        ..
    } = scratch;
    let Some(&first) = layer.first() else {
        return UNREACHED;
    };
    let mut d = dist[first as usize];
    loop {
        // `layer` is every node at distance `d`.
        if within_reach(dist, d, from, graph) {
            return d;
        }
        around.clear();
        around.resize(matrix.words_per_row(), 0);
        for &u in layer.iter() {
            for (word, &row) in around.iter_mut().zip(matrix.row(u)) {
                *word |= row;
            }
        }
        // The neighbours not reached before are the next layer.
        next_layer.clear();
        for (i, (&word, seen)) in around.iter().zip(reached.iter_mut()).enumerate() {
            let mut new = word & !*seen;
            *seen |= new;
            while new != 0 {
                let v = (i * 64) as NodeId + new.trailing_zeros();
                dist[v as usize] = d + 1;
                next_layer.push(v);
                new &= new - 1;
            }
        }
        if next_layer.is_empty() {
            return UNREACHED;
        }
        std::mem::swap(layer, next_layer);
        d += 1;
    }
}

/// The lowest-id neighbour of `at` one hop nearer to the table's destination (`None` at
/// the destination, or with no path). `at` must be within reach ([`within_reach`]).
fn hop_towards(table: &Table, at: NodeId, graph: &ComponentTracker) -> Option<NodeId> {
    let dist = &table.dist;
    let nearer = match dist[at as usize] {
        0 => return None,
        UNREACHED if table.exact_within == UNREACHED => return None,
        // One hop beyond the radius.
        UNREACHED => table.exact_within,
        d => d - 1,
    };
    graph
        .neighbours(at)
        .iter()
        .copied()
        .filter(|&w| dist[w as usize] == nearer)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::graph::breadth_first;

    /// Fresh breadth-first distances to `dest`.
    fn fresh(graph: &ComponentTracker, dest: NodeId) -> Vec<u32> {
        let mut dist = vec![UNREACHED; graph.node_count()];
        breadth_first(|v| graph.neighbours(v), dest, None, &mut dist, |_, _| {});
        dist
    }

    /// Applies `steps` (toggle link `x`–`y`, then maybe ask for `dest`) to two route
    /// caches, one searching on adjacency lists and one on bit rows, each with a log of
    /// `log_limit` changes (so tables also fall behind it) and, if given, room for
    /// `max_tables` tables (a few, so that tables are also dropped). After each step asked
    /// for, both leave the same table and radius for the destination, and every table
    /// entry, next hop and path of both is what a fresh search of the current graph gives.
    fn check_against_fresh(
        n: usize,
        initial: &[(u32, u32)],
        steps: &[(u32, u32, u32, bool)],
        log_limit: usize,
        max_tables: Option<usize>,
    ) -> Result<(), TestCaseError> {
        let mut graph = ComponentTracker::new(n);
        let toggle = |graph: &mut ComponentTracker, x: u32, y: u32| {
            let (a, b) = (x % n as u32, y % n as u32);
            if a == b {
                return None;
            }
            Some(if graph.neighbours(a).contains(&b) {
                graph.remove_edge(a, b);
                (LinkChange::Down, a, b)
            } else {
                graph.add_edge(a, b);
                (LinkChange::Up, a, b)
            })
        };
        for &(x, y) in initial {
            toggle(&mut graph, x, y);
        }
        let mut both = [ShortestPaths::new(n), ShortestPaths::new(n)];
        both[0].use_matrix = false;
        for paths in &mut both {
            paths.log.limit = log_limit;
            paths.max_tables = max_tables.unwrap_or(paths.max_tables);
        }
        for &(x, y, dest, ask) in steps {
            if let Some((change, a, b)) = toggle(&mut graph, x, y) {
                for paths in &mut both {
                    paths.changed(change, a, b);
                }
            }
            if !ask {
                continue;
            }
            let dest = dest % n as u32;
            let want = fresh(&graph, dest);
            // Compared before the hops below extend the tables (often to the whole
            // component, which would hide a search that stopped at another layer).
            for paths in &mut both {
                paths.distances(0, dest, &graph);
            }
            let [lists, rows] = &both;
            prop_assert_eq!(&lists.tables[&dest].dist, &rows.tables[&dest].dist);
            prop_assert_eq!(
                lists.tables[&dest].exact_within,
                rows.tables[&dest].exact_within
            );
            for paths in &mut both {
                let table = paths.distances(0, dest, &graph).dist.clone();
                let radius = paths.tables[&dest].exact_within;
                for (v, (&got, &truth)) in table.iter().zip(&want).enumerate() {
                    prop_assert!(
                        got == if truth <= radius { truth } else { UNREACHED },
                        "node {} has {} for {} within {}",
                        v,
                        got,
                        truth,
                        radius
                    );
                }
                for from in 0..n as NodeId {
                    let hop = paths.next_hop(from, dest, &graph);
                    let expected = (from != dest && want[from as usize] != UNREACHED)
                        .then(|| {
                            graph
                                .neighbours(from)
                                .iter()
                                .copied()
                                .filter(|&w| want[w as usize] + 1 == want[from as usize])
                                .min()
                        })
                        .flatten();
                    prop_assert_eq!(hop, expected);
                    let path = paths.path(from, dest, &graph);
                    prop_assert_eq!(
                        path.as_ref().map(Vec::len),
                        (want[from as usize] != UNREACHED)
                            .then(|| want[from as usize] as usize + 1)
                    );
                }
            }
            let [lists, rows] = &both;
            prop_assert_eq!(&lists.tables[&dest].dist, &rows.tables[&dest].dist);
            prop_assert_eq!(
                lists.tables[&dest].exact_within,
                rows.tables[&dest].exact_within
            );
        }
        Ok(())
    }

    proptest! {
        /// Small graphs, where a long walk of changes reaches every shape.
        #[test]
        fn tables_match_fresh_searches(
            n in 2usize..12,
            steps in prop::collection::vec((0u32..12, 0u32..12, 0u32..12, any::<bool>()), 1..200),
        ) {
            check_against_fresh(n, &[], &steps, 5, None)?;
        }

        /// Graphs of more than 64 nodes, so that a bit row spans several words.
        #[test]
        fn tables_match_fresh_searches_on_larger_graphs(
            n in 65usize..200,
            initial in prop::collection::vec((any::<u32>(), any::<u32>()), 100..600),
            steps in prop::collection::vec(
                (any::<u32>(), any::<u32>(), any::<u32>(), prop::bool::weighted(0.1)),
                1..150,
            ),
        ) {
            check_against_fresh(n, &initial, &steps, 20, Some(3))?;
        }
    }

    #[test]
    fn a_path_follows_next_hops_to_the_destination() {
        // 0 – 1 – 2 – 3 and a shortcut 0 – 2.
        let mut graph = ComponentTracker::new(5);
        for (a, b) in [(0, 1), (1, 2), (2, 3), (0, 2)] {
            graph.add_edge(a, b);
        }
        let mut paths = ShortestPaths::new(5);
        assert_eq!(paths.path(0, 3, &graph), Some(vec![0, 2, 3]));
        assert_eq!(paths.path(3, 3, &graph), Some(vec![3]));
        assert_eq!(paths.path(4, 3, &graph), None);
        graph.remove_edge(0, 2);
        paths.changed(LinkChange::Down, 0, 2);
        assert_eq!(paths.path(0, 3, &graph), Some(vec![0, 1, 2, 3]));
    }
}
