//! Shortest paths for routed messages: hop distances to each destination, kept across
//! topology changes for as long as the changes leave them exact.
//!
//! A routed hop needs the first hop of a shortest path from where the message is to its
//! destination (ties to the lowest neighbour id). Recomputing a breadth-first search per
//! hop, or after every topology change, made the cost of a hop grow with the network
//! (issue 14: Raymond at 800 nodes spent half its time in the search). Here each
//! destination has a distance table and a radius within which the table is exact: every
//! node whose distance, in the table or in truth, is at most the radius has its true
//! distance. A topology change only ever shrinks the radius, to `near`, the nearer
//! endpoint's distance, and often leaves it alone:
//!
//! - a link `a`–`b` that comes up changes no distance when `|dist(a) − dist(b)| ≤ 1`;
//!   otherwise only distances beyond `near` can shrink (a path over the new link is at
//!   least `near + 1` long), which also covers a link joining another component;
//! - a link that goes down changes no distance when `dist(a) = dist(b)`, or the farther
//!   endpoint still has a neighbour at `near` (every path that used the link can go
//!   through that neighbour at the same length); otherwise only distances beyond `near`
//!   can grow;
//! - a change with both endpoints beyond the radius changes nothing within it.
//!
//! A hop from `from` needs the table exact at `from` and one hop nearer, which holds
//! when `dist(from)` is within the radius, and a message moving towards its destination
//! only gets nearer. The checks are lazy: a change is logged (with the endpoints'
//! neighbours right after it, which a break's check needs) and each table replays the
//! changes it has not seen when it is next used. A table that is no longer exact at
//! `from` is searched on from the outermost layer still exact, and one further behind
//! than the log reaches is searched afresh; a search stops once `from`'s layer is
//! complete. The answers are
//! exactly those of a fresh search on the current graph; only the cost differs (`tests`
//! check that against fresh searches).

use crate::NodeId;
use crate::graph::UNREACHED;
use crate::topology::components::ComponentTracker;
use crate::topology::events::LinkChange;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Memory for distance tables, in bytes: beyond it the least recently checked table is
/// dropped (only very large networks with many destinations reach it).
const TABLE_BUDGET_BYTES: usize = 64 << 20;

/// One destination's hop distances as of change number `seen`.
struct Table {
    dist: Vec<u32>,
    /// Number of the first logged change this table has not been checked against.
    seen: u64,
    /// The table is exact for every node whose distance, in the table or in truth, is
    /// at most this ([`UNREACHED`]: for every node).
    exact_within: u32,
}

/// A change as logged: the link and, for a break, both endpoints' neighbours right after
/// it (as a range of [`ChangeLog::neighbour_pool`]).
struct Logged {
    change: LinkChange,
    a: NodeId,
    b: NodeId,
    /// Absolute index of `a`'s neighbours in the pool; `b`'s follow them.
    neighbours_at: u64,
    a_degree: u32,
    b_degree: u32,
}

/// The topology changes some table may not have been checked against yet.
struct ChangeLog {
    /// `entries[0]` is change number `start`.
    entries: VecDeque<Logged>,
    start: u64,
    /// The logged breaks' neighbour lists; `neighbour_pool[0]` has absolute index
    /// `pool_start`.
    neighbour_pool: VecDeque<NodeId>,
    pool_start: u64,
    /// How many changes are kept: a table further behind is searched afresh, which
    /// costs about as much as checking that many changes.
    limit: usize,
}

impl ChangeLog {
    /// Number of the next change to be logged.
    fn next(&self) -> u64 {
        self.start + self.entries.len() as u64
    }

    /// Forgets every change so far (no table needs them).
    fn skip_all(&mut self) {
        self.start = self.next();
        self.entries.clear();
        self.pool_start += self.neighbour_pool.len() as u64;
        self.neighbour_pool.clear();
    }

    fn push(&mut self, change: LinkChange, a: NodeId, b: NodeId, graph: &ComponentTracker) {
        let neighbours_at = self.pool_start + self.neighbour_pool.len() as u64;
        let (mut a_degree, mut b_degree) = (0, 0);
        if change == LinkChange::Down {
            self.neighbour_pool.extend(graph.neighbours(a));
            self.neighbour_pool.extend(graph.neighbours(b));
            a_degree = graph.neighbours(a).len() as u32;
            b_degree = graph.neighbours(b).len() as u32;
        }
        self.entries.push_back(Logged {
            change,
            a,
            b,
            neighbours_at,
            a_degree,
            b_degree,
        });
        while self.entries.len() > self.limit {
            let old = self
                .entries
                .pop_front()
                .expect("the log is longer than its limit");
            self.start += 1;
            let used = (old.a_degree + old.b_degree) as usize;
            self.neighbour_pool.drain(..used);
            self.pool_start += used as u64;
        }
    }

    /// The radius within which `dist` is still exact after `entry`, given that it was
    /// exact within `radius` before it (module docs).
    fn radius_after(&self, dist: &[u32], radius: u32, entry: &Logged) -> u32 {
        let (da, db) = (dist[entry.a as usize], dist[entry.b as usize]);
        let near = da.min(db);
        if near >= radius {
            // Both endpoints lie beyond the radius: nothing within it can change.
            return radius;
        }
        let unchanged = match entry.change {
            // `near` is exact; the other endpoint is when its value is within the
            // radius.
            LinkChange::Up => da.max(db) <= radius && da.abs_diff(db) <= 1,
            // Before the break the endpoints were adjacent, so the farther one was at
            // most one hop farther: within the radius, hence exact.
            LinkChange::Down if da == db => true,
            LinkChange::Down => {
                let start = (entry.neighbours_at - self.pool_start) as usize;
                let (from, len) = if da > db {
                    (start, entry.a_degree as usize)
                } else {
                    (start + entry.a_degree as usize, entry.b_degree as usize)
                };
                self.neighbour_pool
                    .range(from..from + len)
                    .any(|&w| dist[w as usize] == near)
            }
        };
        if unchanged { radius } else { near }
    }

    /// Checks `table` against the changes it has not seen; `false` if some of them
    /// are no longer logged.
    fn catch_up(&self, table: &mut Table) -> bool {
        if table.seen < self.start {
            return false;
        }
        for entry in self.entries.range((table.seen - self.start) as usize..) {
            table.exact_within = self.radius_after(&table.dist, table.exact_within, entry);
        }
        table.seen = self.next();
        true
    }
}

/// Hop distances to the destinations routed messages go to (module docs).
pub struct ShortestPaths {
    tables: FxHashMap<NodeId, Table>,
    log: ChangeLog,
    max_tables: usize,
    /// The breadth-first search's queue, kept to reuse its allocation.
    queue: VecDeque<NodeId>,
}

impl ShortestPaths {
    /// No tables yet, for a network of `node_count` nodes.
    pub fn new(node_count: usize) -> Self {
        Self {
            tables: FxHashMap::default(),
            log: ChangeLog {
                entries: VecDeque::new(),
                start: 0,
                neighbour_pool: VecDeque::new(),
                pool_start: 0,
                limit: (8 * node_count).max(256),
            },
            max_tables: (TABLE_BUDGET_BYTES / (4 * node_count.max(1))).max(16),
            queue: VecDeque::new(),
        }
    }

    /// Records `change` of link `a`–`b`, just applied to `graph`.
    pub fn changed(&mut self, change: LinkChange, a: NodeId, b: NodeId, graph: &ComponentTracker) {
        if self.tables.is_empty() {
            self.log.skip_all();
        } else {
            self.log.push(change, a, b, graph);
        }
    }

    /// Hop distances to `dest` in `graph` (the graph all logged changes led to), exact
    /// at least for `from` and the nodes one hop nearer than it.
    fn distances(&mut self, from: NodeId, dest: NodeId, graph: &ComponentTracker) -> &[u32] {
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
        if table.dist.len() != n || !self.log.catch_up(table) {
            table.dist.clear();
            table.dist.resize(n, UNREACHED);
            table.dist[dest as usize] = 0;
            table.seen = self.log.next();
            self.queue.clear();
            self.queue.push_back(dest);
            table.exact_within = search(graph, from, &mut table.dist, &mut self.queue);
        } else if table.dist[from as usize] > table.exact_within {
            // Keep what is still exact and search on from its outermost layer.
            let radius = table.exact_within;
            self.queue.clear();
            for (v, d) in table.dist.iter_mut().enumerate() {
                if *d > radius {
                    *d = UNREACHED;
                } else if *d == radius {
                    self.queue.push_back(v as NodeId);
                }
            }
            table.exact_within = search(graph, from, &mut table.dist, &mut self.queue);
        }
        &table.dist
    }

    /// First hop of a shortest path from `from` to `dest` (ties to the lowest neighbour
    /// id); `None` if `from` is `dest` or there is no path.
    pub fn next_hop(
        &mut self,
        from: NodeId,
        dest: NodeId,
        graph: &ComponentTracker,
    ) -> Option<NodeId> {
        let dist = self.distances(from, dest, graph);
        hop_towards(dist, from, graph)
    }

    /// A shortest path `from` … `dest`, each hop as [`Self::next_hop`]; `None` if there
    /// is none.
    pub fn path(
        &mut self,
        from: NodeId,
        dest: NodeId,
        graph: &ComponentTracker,
    ) -> Option<Vec<NodeId>> {
        let dist = self.distances(from, dest, graph);
        if dist[from as usize] == UNREACHED {
            return None;
        }
        let mut path = vec![from];
        let mut node = from;
        while let Some(hop) = hop_towards(dist, node, graph) {
            path.push(hop);
            node = hop;
        }
        Some(path)
    }
}

/// Breadth-first search from the nodes in `queue`, the outermost layer of what `dist`
/// holds exactly (every node nearer than them has its distance, every farther node is
/// [`UNREACHED`]), far enough for `from`: it stops once every node as near as `from`
/// has its distance, and returns the radius within which `dist` is then exact
/// ([`UNREACHED`] when it covered the whole component, so that the nodes outside it are
/// exact too).
fn search(
    graph: &ComponentTracker,
    from: NodeId,
    dist: &mut [u32],
    queue: &mut VecDeque<NodeId>,
) -> u32 {
    while let Some(u) = queue.pop_front() {
        let du = dist[u as usize];
        // Every node at distance `du` was found while the nodes at `du − 1` were
        // expanded, so once `from` is found and its distance reached, all are known.
        if du >= dist[from as usize] {
            return du;
        }
        for &w in graph.neighbours(u) {
            let slot = &mut dist[w as usize];
            if *slot == UNREACHED {
                *slot = du + 1;
                queue.push_back(w);
            }
        }
    }
    UNREACHED
}

/// The lowest-id neighbour of `at` one hop nearer than `at` in `dist`.
fn hop_towards(dist: &[u32], at: NodeId, graph: &ComponentTracker) -> Option<NodeId> {
    let nearer = dist[at as usize].checked_sub(1)?;
    if nearer == UNREACHED - 1 {
        return None;
    }
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

    proptest! {
        /// After any sequence of link changes, with tables used at random moments and a
        /// short log (so tables also fall behind it), every next hop and path is what a
        /// fresh search of the current graph gives.
        #[test]
        fn tables_match_fresh_searches(
            n in 2usize..9,
            steps in prop::collection::vec((0u32..9, 0u32..9, 0u32..9, any::<bool>()), 1..120),
        ) {
            let mut graph = ComponentTracker::new(n);
            let mut paths = ShortestPaths::new(n);
            paths.log.limit = 5;
            for (x, y, dest, ask) in steps {
                let (a, b, dest) = (x % n as u32, y % n as u32, dest % n as u32);
                if a != b {
                    let change = if graph.neighbours(a).contains(&b) {
                        graph.remove_edge(a, b);
                        LinkChange::Down
                    } else {
                        graph.add_edge(a, b);
                        LinkChange::Up
                    };
                    paths.changed(change, a, b, &graph);
                }
                if ask {
                    let want = fresh(&graph, dest);
                    for from in 0..n as NodeId {
                        let hop = paths.next_hop(from, dest, &graph);
                        let expected = (from != dest && want[from as usize] != UNREACHED)
                            .then(|| {
                                graph.neighbours(from).iter().copied()
                                    .filter(|&w| want[w as usize] + 1 == want[from as usize])
                                    .min()
                            })
                            .flatten();
                        prop_assert_eq!(hop, expected);
                        let path = paths.path(from, dest, &graph);
                        prop_assert_eq!(path.as_ref().map(Vec::len),
                            (want[from as usize] != UNREACHED).then(|| want[from as usize] as usize + 1));
                    }
                }
            }
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
        paths.changed(LinkChange::Down, 0, 2, &graph);
        assert_eq!(paths.path(0, 3, &graph), Some(vec![0, 1, 2, 3]));
    }
}
