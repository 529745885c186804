//! Metric collectors and safety monitors: they watch a run through the simulator's
//! [`crate::sim::Observer`] hooks and the protocols' view traits, and produce records.
//!
//! - [`le`]: leader election: per-topology-change convergence records, leaderless
//!   node-time, leader changes, and the legality monitor.
//! - [`me`]: mutual exclusion: the at-most-k-in-CS and token-conservation monitors,
//!   and messages in components without a token.
//! - [`route`]: destination-oriented DAGs: per-topology-change convergence and
//!   reversal records, route availability, and the orientation monitor.
//! - [`routed`]: which nodes have a route to the destination, kept incrementally.
//! - [`safety`]: how a violation is counted and its first occurrence kept as a
//!   reproducer (never a panic: a broken invariant is a result to report).

pub mod groups;
pub mod le;
pub mod me;
pub mod route;
pub mod routed;
pub mod safety;
pub mod views;

use crate::NodeId;
use crate::topology::components::ComponentTracker;

/// Whether a record of the change `x`–`y` shares a component with the change `a`–`b`
/// just applied (the graph is the one after it): the later change censors it.
pub(crate) fn touches(
    graph: &ComponentTracker,
    (a, b): (NodeId, NodeId),
    x: NodeId,
    y: NodeId,
) -> bool {
    [x, y]
        .iter()
        .any(|&v| graph.connected(v, a) || graph.connected(v, b))
}

/// The nodes of every component, grouped by the tracker's labels, each group in
/// increasing id order, groups in the order of their smallest id.
pub(crate) fn components(graph: &ComponentTracker) -> Vec<Vec<NodeId>> {
    let n = graph.node_count();
    let mut slot = vec![usize::MAX; n];
    let mut groups: Vec<Vec<NodeId>> = Vec::new();
    for v in 0..n as NodeId {
        let label = graph.label(v) as usize;
        if slot[label] == usize::MAX {
            slot[label] = groups.len();
            groups.push(Vec::new());
        }
        groups[slot[label]].push(v);
    }
    groups
}
