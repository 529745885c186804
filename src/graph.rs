//! Breadth-first search on adjacency lists: the one search behind the protocols' legal
//! initial states (a BFS forest of the t = 0 graph) and the simulator's shortest-path
//! routing. Pure graph code: no positions, no time.

use crate::NodeId;
use std::collections::VecDeque;

/// Marks a node the search has not reached in a distance buffer.
pub const UNREACHED: u32 = u32::MAX;

/// Breadth-first search from `source`, over `neighbours(v)` in the order given.
///
/// `depth` must hold [`UNREACHED`] for every node not yet reached (a forest search
/// shares one buffer across its trees); the source's depth is set to 0 and every node
/// reached gets its hop distance. `reached(v, parent)` is called once per node as it is
/// discovered. The search stops early after dequeuing `stop`, whose distance is then
/// final (every node at a smaller distance has been reached, not necessarily every node
/// at the same one).
///
/// # Panics
/// If a list names a node outside `depth` (adjacency lists come from the simulator, so
/// that is a bug, not bad input).
pub fn breadth_first<'g>(
    neighbours: impl Fn(NodeId) -> &'g [NodeId],
    source: NodeId,
    stop: Option<NodeId>,
    depth: &mut [u32],
    reached: impl FnMut(NodeId, NodeId),
) {
    breadth_first_from(neighbours, &[source], stop, depth, reached);
}

/// [`breadth_first`] from several sources at once: each gets depth 0, and every other
/// node its hop distance to the nearest (ties to the source listed first).
pub fn breadth_first_from<'g>(
    neighbours: impl Fn(NodeId) -> &'g [NodeId],
    sources: &[NodeId],
    stop: Option<NodeId>,
    depth: &mut [u32],
    mut reached: impl FnMut(NodeId, NodeId),
) {
    let n = depth.len();
    let mut frontier = VecDeque::new();
    for &source in sources {
        if depth[source as usize] == UNREACHED {
            depth[source as usize] = 0;
            frontier.push_back(source);
        }
    }
    while let Some(u) = frontier.pop_front() {
        if Some(u) == stop {
            return;
        }
        let next = depth[u as usize] + 1;
        for &v in neighbours(u) {
            let slot = depth
                .get_mut(v as usize)
                .unwrap_or_else(|| panic!("node {u} lists neighbour {v}, but there are {n} nodes"));
            if *slot == UNREACHED {
                *slot = next;
                reached(v, u);
                frontier.push_back(v);
            }
        }
    }
}

/// A breadth-first spanning forest: one tree per connected component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BfsForest {
    /// The root of each node's tree.
    pub root: Vec<NodeId>,
    /// Each node's parent; `None` for roots.
    pub parent: Vec<Option<NodeId>>,
    /// Hop distance to the root.
    pub depth: Vec<u32>,
}

/// The BFS forest of a graph given by sorted, symmetric adjacency lists. Trees are
/// grown from `first_root`, then from each node not yet reached in increasing id order
/// (so every other root is the smallest id of its component), visiting neighbours in
/// increasing id order, so the forest is a function of the graph, not of the lists'
/// order. A node's parent is its neighbour one hop closer to the root that the search
/// dequeues first (not necessarily the smallest id of that level). Self-loops are
/// ignored.
pub fn bfs_forest(neighbours: &[Vec<NodeId>], first_root: NodeId) -> BfsForest {
    bfs_forest_from(neighbours, &[first_root])
}

/// [`bfs_forest`] whose first trees grow from all of `first_roots` at once (a
/// multi-source search: each node joins the tree of its nearest first root, ties to the
/// root listed first), then from each node not yet reached in increasing id order.
pub fn bfs_forest_from(neighbours: &[Vec<NodeId>], first_roots: &[NodeId]) -> BfsForest {
    let n = neighbours.len();
    let sorted: Vec<Vec<NodeId>> = neighbours
        .iter()
        .enumerate()
        .map(|(i, list)| {
            let mut list: Vec<NodeId> = list.iter().copied().filter(|&j| j as usize != i).collect();
            list.sort_unstable();
            list.dedup();
            list
        })
        .collect();
    let mut forest = BfsForest {
        root: (0..n as NodeId).collect(),
        parent: vec![None; n],
        depth: vec![UNREACHED; n],
    };
    let firsts = std::iter::once(first_roots.to_vec());
    let others = (0..n as NodeId).map(|r| vec![r]);
    for roots in firsts.chain(others).filter(|_| n > 0) {
        let roots: Vec<NodeId> = roots
            .into_iter()
            .filter(|&r| forest.depth[r as usize] == UNREACHED)
            .collect();
        if roots.is_empty() {
            continue;
        }
        let (parent, root_of) = (&mut forest.parent, &mut forest.root);
        breadth_first_from(
            |v| &sorted[v as usize],
            &roots,
            None,
            &mut forest.depth,
            |v, p| {
                parent[v as usize] = Some(p);
                root_of[v as usize] = root_of[p as usize];
            },
        );
    }
    forest
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the distance from `s` by relaxing every edge until nothing changes.
    fn relaxed(neighbours: &[Vec<NodeId>], s: usize) -> Vec<u32> {
        let mut d = vec![UNREACHED; neighbours.len()];
        d[s] = 0;
        loop {
            let mut changed = false;
            for (u, list) in neighbours.iter().enumerate() {
                for &v in list {
                    if d[u] != UNREACHED && d[u] + 1 < d[v as usize] {
                        d[v as usize] = d[u] + 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                return d;
            }
        }
    }

    fn graph(n: usize, edges: &[(NodeId, NodeId)]) -> Vec<Vec<NodeId>> {
        let mut g = vec![Vec::new(); n];
        for &(a, b) in edges {
            g[a as usize].push(b);
            g[b as usize].push(a);
        }
        g
    }

    #[test]
    fn forest_depths_are_shortest_distances_and_parents_one_hop_closer() {
        // Two components: {0..4} with a cycle, {5, 6}; node 7 alone.
        let g = graph(8, &[(0, 1), (1, 2), (2, 3), (3, 0), (2, 4), (3, 4), (5, 6)]);
        for first in [0, 2, 6] {
            let f = bfs_forest(&g, first);
            let first_tree = relaxed(&g, first as usize);
            for v in 0..8 {
                let root = f.root[v] as usize;
                assert_eq!(f.depth[v], relaxed(&g, root)[v], "node {v}");
                if first_tree[v] != UNREACHED {
                    assert_eq!(f.root[v], first);
                }
                match f.parent[v] {
                    None => assert_eq!(f.root[v] as usize, v),
                    Some(p) => {
                        let closer = g[v]
                            .iter()
                            .filter(|&&w| f.depth[w as usize] + 1 == f.depth[v]);
                        assert_eq!(Some(p), closer.copied().min(), "node {v}");
                    }
                }
            }
        }
        let f = bfs_forest(&g, 0);
        assert_eq!(f.root, [0, 0, 0, 0, 0, 5, 5, 7]);
        assert_eq!(f.parent[4], Some(3)); // 0-3-4, not 0-1-2-4
        // Level 2 is dequeued as 5 (found from 1), then 3 (found from 2): 4 hangs under
        // 5, the first dequeued, though 3 is the smaller id.
        let g = graph(6, &[(0, 1), (0, 2), (1, 5), (2, 3), (5, 4), (3, 4)]);
        assert_eq!(bfs_forest(&g, 0).parent[4], Some(5));
        // The lists' order does not matter.
        let mut reversed = g.clone();
        reversed.iter_mut().for_each(|l| l.reverse());
        assert_eq!(bfs_forest(&reversed, 0), bfs_forest(&g, 0));
    }

    #[test]
    fn an_early_stop_leaves_the_stop_nodes_distance_final() {
        let g = graph(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (0, 5), (5, 4)]);
        let mut depth = vec![UNREACHED; 6];
        breadth_first(|v| &g[v as usize], 0, Some(4), &mut depth, |_, _| {});
        assert_eq!(depth[4], 2);
        assert_eq!(depth[0], 0);
    }

    #[test]
    fn a_forest_from_several_roots_measures_the_distance_to_the_nearest() {
        // A path 0-1-2-3-4-5 with a chord 1-4, and {6, 7} apart.
        let g = graph(8, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (1, 4), (6, 7)]);
        for roots in [vec![0, 5], vec![2], vec![3, 0, 7]] {
            let f = bfs_forest_from(&g, &roots);
            for v in 0..8 {
                let nearest = roots
                    .iter()
                    .map(|&r| relaxed(&g, r as usize)[v])
                    .min()
                    .unwrap();
                if nearest != UNREACHED {
                    assert_eq!(f.depth[v], nearest, "node {v}, roots {roots:?}");
                    assert!(roots.contains(&f.root[v]));
                    assert_eq!(relaxed(&g, f.root[v] as usize)[v], nearest);
                } else {
                    assert_eq!(f.root[v], 6, "the other component grows from its lowest id");
                }
            }
        }
        assert_eq!(bfs_forest_from(&g, &[0]), bfs_forest(&g, 0));
    }
}
