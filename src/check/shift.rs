//! Height renormalization: states that differ only by a shift of their heights are
//! explored once.
//!
//! Link reversal in a component that cannot reach its token (RL, k-RL) or its
//! destination (Gafni–Bertsekas) raises heights for ever: the component's sink rises
//! above a neighbour, which becomes the sink, and so on. Every state on that path is new,
//! so the state space is infinite and a search can only be cut, never close. But the
//! rules of these algorithms only compare heights and derive a new height from old ones
//! by constant steps (`1 + min h1`, `h2 − 1`); they commute with adding one vector to
//! the two numeric parts of every height ([`Protocol::SHIFT_INVARIANT`]). Two states
//! that differ by such a shift therefore have the same futures up to the shift, and
//! every property the checker judges (who is in the CS, how many tokens exist, whether a
//! component is legal or destination oriented) reads only the order of heights and
//! whether views equal heights, which a shift keeps. So the search may replace every
//! state by its *renormalized* form, and the endless reversal becomes a cycle.
//!
//! What may be shifted together, and why:
//!
//! - **The whole state, always.** Shifting every height in the state (every node's own
//!   and its views, every message's) by one vector keeps every comparison the future
//!   can make, between any two nodes.
//! - **Each component on its own, once no topology change remains** (or none can come:
//!   [`super::dead_changes`] drops the budget of a state that can never be quiet again
//!   when changes wait for quiet). Nodes of different components never compare
//!   heights again: a node's views are of its current neighbours (both endpoints are
//!   told of a change at once), and no link can form. The one way a height crosses
//!   between components is a message sent before a link broke and delivered after (the
//!   `drain` semantics): its receiver reads it, so it is shifted with the receiver's
//!   component. Each component is shifted by its own vector.
//!
//! The renormalized form: in each group (the whole state, or each component), the
//! least first part and the least second part over every height the group holds (its
//! nodes' [`Protocol::height_floor`], and [`Message::height_parts`] of the messages its
//! nodes will receive) are made 0. States that differ by a shift per group have the same
//! form, so the quotient is exact. The argument needs each protocol's commuting, which
//! `tests/check.rs` checks step by step on random executions.

use super::state::CheckState;
use crate::NodeId;
use crate::protocol::{Message, Protocol};

/// Whether renormalization applies to `P` (its rules commute with shifts).
pub fn applies<P: Protocol>() -> bool {
    P::SHIFT_INVARIANT
}

/// The componentwise least of `a` and `b`.
fn least(a: Option<[i64; 2]>, b: Option<[i64; 2]>) -> Option<[i64; 2]> {
    match (a, b) {
        (Some(a), Some(b)) => Some([a[0].min(b[0]), a[1].min(b[1])]),
        (a, None) => a,
        (None, b) => b,
    }
}

/// The groups whose heights may be shifted apart (module docs): each node's group
/// index, per component once no change remains, one group before.
pub fn groups<P: Protocol>(state: &CheckState<P>) -> Vec<usize> {
    let n = state.nodes.len();
    if state.changes_left == 0 {
        let graph = state.graph();
        (0..n).map(|v| graph.label(v as NodeId) as usize).collect()
    } else {
        vec![0; n]
    }
}

/// Adds `by[g]` to every height group `g` holds: its nodes' and the messages they will
/// receive (a group whose entry is `None` is left as it is).
pub fn shift_groups<P: Protocol>(
    state: &mut CheckState<P>,
    group: &[usize],
    by: &[Option<[i64; 2]>],
) {
    for (v, node) in state.nodes.iter_mut().enumerate() {
        if let Some(by) = by[group[v]] {
            node.shift_heights(by);
        }
    }
    state.queues.for_each_mut(|_, to, msg| {
        if let Some(by) = by[group[to as usize]] {
            msg.shift_heights(by);
        }
    });
    for (_, to, msg) in &mut state.routed {
        if let Some(by) = by[group[*to as usize]] {
            msg.shift_heights(by);
        }
    }
}

/// `state` in its renormalized form (module docs): per component once no change
/// remains, as a whole before.
pub fn renormalize<P: Protocol>(state: &mut CheckState<P>) {
    let group = groups(state);
    let count = group.iter().max().map_or(0, |g| g + 1);
    let mut floor: Vec<Option<[i64; 2]>> = vec![None; count];
    for (v, node) in state.nodes.iter().enumerate() {
        floor[group[v]] = least(floor[group[v]], node.height_floor());
    }
    for (_, to, msg) in state.queues.iter() {
        let g = group[to as usize];
        floor[g] = least(floor[g], msg.height_parts());
    }
    for (_, to, msg) in &state.routed {
        let g = group[*to as usize];
        floor[g] = least(floor[g], msg.height_parts());
    }
    let by: Vec<Option<[i64; 2]>> = floor
        .iter()
        .map(|f| f.filter(|f| *f != [0, 0]).map(|f| [-f[0], -f[1]]))
        .collect();
    if by.iter().any(Option::is_some) {
        shift_groups(state, &group, &by);
    }
}
