//! The small graphs the checker starts from: named families (`path:4`, `ring:4`,
//! `star:4`, `complete:4`, `grid:2x2`) or a file of edges, and every connected graph on
//! a few nodes up to isomorphism (for the table in the book's algorithms page).

use crate::NodeId;
use std::collections::BTreeSet;
use std::path::Path;

/// An undirected graph on nodes `0..nodes`, edges as `(a, b)` with `a < b`, sorted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SmallGraph {
    /// Its name as given (`ring:4`) or made (`graph6-like` edge list for enumerated ones).
    pub name: String,
    /// Number of nodes.
    pub nodes: usize,
    /// Edges, `a < b`, sorted.
    pub edges: Vec<(NodeId, NodeId)>,
}

/// The most nodes a checked graph may have: the state space grows far faster than the
/// graph, and exhaustive checking is for small configurations.
pub const MAX_CHECK_NODES: usize = 8;

impl SmallGraph {
    fn new(name: String, nodes: usize, edges: impl IntoIterator<Item = (NodeId, NodeId)>) -> Self {
        let set: BTreeSet<(NodeId, NodeId)> = edges
            .into_iter()
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        SmallGraph {
            name,
            nodes,
            edges: set.into_iter().collect(),
        }
    }

    /// Parses `family:n` (`path`, `ring`, `star`, `complete`), `grid:RxC`, or the path of
    /// a file with one `a b` edge per line (`#` comments; nodes `0..n` where `n` is one
    /// more than the largest id).
    pub fn parse(spec: &str) -> Result<SmallGraph, String> {
        // A file wins: `runs:3.edges` is a file name, not the family `runs`.
        if Path::new(spec).is_file() {
            return Self::read(Path::new(spec));
        }
        if let Some((family, size)) = spec.split_once(':') {
            let count = |text: &str| -> Result<usize, String> {
                let n: usize = text
                    .parse()
                    .map_err(|_| format!("`{text}` is not a node count in `{spec}`"))?;
                if !(2..=MAX_CHECK_NODES).contains(&n) {
                    return Err(format!(
                        "`{spec}`: {n} nodes; the checker takes 2 to {MAX_CHECK_NODES}"
                    ));
                }
                Ok(n)
            };
            let name = spec.to_string();
            let graph = match family {
                "path" => {
                    let n = count(size)?;
                    SmallGraph::new(name, n, (1..n).map(|i| (i as NodeId - 1, i as NodeId)))
                }
                "ring" => {
                    let n = count(size)?;
                    if n < 3 {
                        return Err(format!("`{spec}`: a ring needs at least 3 nodes"));
                    }
                    SmallGraph::new(
                        name,
                        n,
                        (0..n).map(|i| (i as NodeId, ((i + 1) % n) as NodeId)),
                    )
                }
                "star" => {
                    let n = count(size)?;
                    SmallGraph::new(name, n, (1..n).map(|i| (0, i as NodeId)))
                }
                "complete" => {
                    let n = count(size)?;
                    SmallGraph::new(name, n, pairs(n))
                }
                "grid" => {
                    let (r, c) = size
                        .split_once('x')
                        .ok_or_else(|| format!("`{spec}`: expected grid:RxC, e.g. grid:2x2"))?;
                    let (r, c): (usize, usize) = match (r.parse(), c.parse()) {
                        (Ok(r), Ok(c)) if r >= 1 && c >= 1 => (r, c),
                        _ => return Err(format!("`{spec}`: expected grid:RxC, e.g. grid:2x2")),
                    };
                    // Checked: `grid:2x9223372036854775810` must not wrap to 4 nodes.
                    let n = r.saturating_mul(c);
                    if n > MAX_CHECK_NODES {
                        return Err(format!(
                            "`{spec}`: {r} × {c} nodes; the checker takes 2 to {MAX_CHECK_NODES}"
                        ));
                    }
                    count(&n.to_string())?;
                    let id = |i: usize, j: usize| (i * c + j) as NodeId;
                    let mut edges = Vec::new();
                    for i in 0..r {
                        for j in 0..c {
                            if j + 1 < c {
                                edges.push((id(i, j), id(i, j + 1)));
                            }
                            if i + 1 < r {
                                edges.push((id(i, j), id(i + 1, j)));
                            }
                        }
                    }
                    SmallGraph::new(name, n, edges)
                }
                other => {
                    return Err(format!(
                        "unknown graph family `{other}`: path:N, ring:N, star:N, complete:N, \
                         grid:RxC, or a file of edges"
                    ));
                }
            };
            return Ok(graph);
        }
        Self::read(Path::new(spec))
    }

    /// Reads a file of edges, one `a b` per line.
    pub fn read(path: &Path) -> Result<SmallGraph, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the edge list: {e}", path.display()))?;
        let mut edges = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let content = line.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let ids: Vec<&str> = content.split_whitespace().collect();
            let parsed: Vec<NodeId> = ids.iter().filter_map(|t| t.parse().ok()).collect();
            match parsed[..] {
                [a, b] if ids.len() == 2 && a != b => edges.push((a, b)),
                _ => {
                    return Err(format!(
                        "{}:{}: expected an edge `a b` of two different node ids, found \
                         `{content}`",
                        path.display(),
                        i + 1
                    ));
                }
            }
        }
        let nodes = edges
            .iter()
            .map(|&(a, b)| a.max(b) as usize + 1)
            .max()
            .unwrap_or(0);
        if !(2..=MAX_CHECK_NODES).contains(&nodes) {
            return Err(format!(
                "{}: {nodes} nodes; the checker takes 2 to {MAX_CHECK_NODES}",
                path.display()
            ));
        }
        Ok(SmallGraph::new(path.display().to_string(), nodes, edges))
    }

    /// Neighbour lists, each sorted.
    pub fn neighbours(&self) -> Vec<Vec<NodeId>> {
        let mut lists = vec![Vec::new(); self.nodes];
        for &(a, b) in &self.edges {
            lists[a as usize].push(b);
            lists[b as usize].push(a);
        }
        for list in &mut lists {
            list.sort_unstable();
        }
        lists
    }

    /// Whether every node is reachable from node 0.
    pub fn is_connected(&self) -> bool {
        let neighbours = self.neighbours();
        let mut seen = vec![false; self.nodes];
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(m) = stack.pop() {
            for &j in &neighbours[m] {
                if !std::mem::replace(&mut seen[j as usize], true) {
                    stack.push(j as usize);
                }
            }
        }
        seen.iter().all(|&s| s)
    }
}

/// Every pair `(a, b)`, `a < b`, of `n` nodes: the links a topology change may flip.
pub fn pairs(n: usize) -> Vec<(NodeId, NodeId)> {
    (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a as NodeId, b as NodeId)))
        .collect()
}

/// Every connected graph on `n` nodes, one per isomorphism class (the canonical form is
/// the smallest edge bitmask over all relabellings; fine for the few nodes checked).
pub fn connected_graphs(n: usize) -> Vec<SmallGraph> {
    enumerate(n, permutations(n))
}

/// Every connected graph on `n` nodes with node 0 distinguished, one per class of
/// relabellings that keep node 0: the node that starts as leader, token holder or
/// destination (every algorithm's default) matters, so a graph is checked once per
/// place node 0 can take in it.
pub fn rooted_connected_graphs(n: usize) -> Vec<SmallGraph> {
    let perms = permutations(n).into_iter().filter(|p| p[0] == 0).collect();
    enumerate(n, perms)
}

/// Every connected graph on `n` labelled nodes: graphs that differ by a renaming are
/// different here. Algorithms that break ties by node id (every link-reversal one) can
/// behave differently on two labellings of one graph, so checking them on every graph
/// means checking every labelling.
pub fn labelled_connected_graphs(n: usize) -> Vec<SmallGraph> {
    enumerate(n, vec![(0..n as NodeId).collect()])
}

fn enumerate(n: usize, perms: Vec<Vec<NodeId>>) -> Vec<SmallGraph> {
    assert!((2..=6).contains(&n), "enumeration is for 2 to 6 nodes");
    let all = pairs(n);
    let mut seen = BTreeSet::new();
    let mut graphs = Vec::new();
    for mask in 0u32..(1 << all.len()) {
        let edges: Vec<(NodeId, NodeId)> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| mask >> i & 1 == 1)
            .map(|(_, &e)| e)
            .collect();
        let canonical = perms
            .iter()
            .map(|p| {
                edges.iter().fold(0u32, |acc, &(a, b)| {
                    let (x, y) = (p[a as usize], p[b as usize]);
                    let (x, y) = (x.min(y), x.max(y));
                    acc | 1 << all.iter().position(|&e| e == (x, y)).expect("a pair")
                })
            })
            .min()
            .expect("at least one permutation");
        if !seen.insert(canonical) {
            continue;
        }
        let graph = SmallGraph::new(format!("{n}:{}", edge_text(&edges)), n, edges);
        if graph.is_connected() {
            graphs.push(graph);
        }
    }
    graphs
}

/// `01-12-23`: a compact edge list for names.
fn edge_text(edges: &[(NodeId, NodeId)]) -> String {
    edges
        .iter()
        .map(|(a, b)| format!("{a}{b}"))
        .collect::<Vec<_>>()
        .join("-")
}

fn permutations(n: usize) -> Vec<Vec<NodeId>> {
    let mut out = Vec::new();
    let mut current: Vec<NodeId> = (0..n as NodeId).collect();
    heap_permute(n, &mut current, &mut out);
    out
}

fn heap_permute(k: usize, items: &mut Vec<NodeId>, out: &mut Vec<Vec<NodeId>>) {
    if k <= 1 {
        out.push(items.clone());
        return;
    }
    for i in 0..k {
        heap_permute(k - 1, items, out);
        let j = if k.is_multiple_of(2) { i } else { 0 };
        items.swap(j, k - 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_the_expected_edges() {
        assert_eq!(
            SmallGraph::parse("path:4").unwrap().edges,
            [(0, 1), (1, 2), (2, 3)]
        );
        assert_eq!(
            SmallGraph::parse("ring:4").unwrap().edges,
            [(0, 1), (0, 3), (1, 2), (2, 3)]
        );
        assert_eq!(
            SmallGraph::parse("star:4").unwrap().edges,
            [(0, 1), (0, 2), (0, 3)]
        );
        assert_eq!(SmallGraph::parse("complete:4").unwrap().edges.len(), 6);
        assert_eq!(
            SmallGraph::parse("grid:2x2").unwrap().edges,
            [(0, 1), (0, 2), (1, 3), (2, 3)]
        );
        assert!(SmallGraph::parse("ring:2").is_err());
        assert!(SmallGraph::parse("blob:4").is_err());
        assert!(SmallGraph::parse("path:99").is_err());
        // 2 × (2^63 + 2) wraps to 4 in unchecked arithmetic.
        let huge = SmallGraph::parse("grid:2x9223372036854775810").unwrap_err();
        assert!(huge.contains("the checker takes 2 to 8"), "{huge}");
        assert!(SmallGraph::parse("grid:3x3").is_err());
    }

    #[test]
    fn a_file_whose_name_has_a_colon_is_read_as_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs:3.edges");
        std::fs::write(&path, "0 1\n1 2\n").unwrap();
        let graph = SmallGraph::parse(path.to_str().unwrap()).unwrap();
        assert_eq!((graph.nodes, graph.edges), (3, vec![(0, 1), (1, 2)]));
    }

    #[test]
    fn connected_graphs_match_the_known_counts() {
        // OEIS A001349: connected graphs on n unlabelled nodes: 1, 2, 6, 21.
        for (n, count) in [(2, 1), (3, 2), (4, 6), (5, 21)] {
            assert_eq!(connected_graphs(n).len(), count, "n = {n}");
        }
        // OEIS A126100: connected rooted graphs on n nodes: 1, 3, 11, 58.
        for (n, count) in [(2, 1), (3, 3), (4, 11), (5, 58)] {
            assert_eq!(rooted_connected_graphs(n).len(), count, "n = {n}");
        }
        // OEIS A001187: connected labelled graphs on n nodes: 1, 4, 38, 728.
        for (n, count) in [(2, 1), (3, 4), (4, 38), (5, 728)] {
            assert_eq!(labelled_connected_graphs(n).len(), count, "n = {n}");
        }
    }
}
