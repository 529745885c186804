//! Stamp ranking: states that differ only by an order-keeping renaming of their time
//! stamps are explored once.
//!
//! Leader election stamps each reference level a failure defines with the event time
//! (`τ`); the checker's event time is the number of actions taken so far, so two orders
//! of the same deliveries leave different stamps, and a search keeps both states
//! although nothing tells them apart: the rules only compare stamps, and every stamp an
//! event makes exceeds every stamp present, whatever their values
//! ([`Protocol::STAMP_INVARIANT`]). The same argument already lets the checker leave the
//! clock out of a state's identity ([`super::state::CheckState::clock`]). So each
//! state's stamps (its nodes' and its messages') are replaced by their ranks, 1 for the
//! oldest: an order-keeping renaming, which keeps every comparison a future makes, and
//! the same for every state in one class, so the quotient is exact. Ranks stay below
//! every stamp a later event makes (the event time is at least the number of stamps
//! ever made), as the argument needs.

use super::state::CheckState;
use crate::protocol::{Message, Protocol};

/// Whether stamp ranking applies to `P`.
pub fn applies<P: Protocol>() -> bool {
    P::STAMP_INVARIANT
}

/// Calls `visit` on every stamp in `state`: its nodes' and its messages'.
fn for_each_stamp<P: Protocol>(state: &mut CheckState<P>, visit: &mut dyn FnMut(&mut i64)) {
    for node in &mut state.nodes {
        node.for_each_stamp(visit);
    }
    state.queues.for_each_mut(|_, _, m| m.for_each_stamp(visit));
    for (_, _, m) in &mut state.routed {
        m.for_each_stamp(visit);
    }
}

/// Replaces every stamp in `state` by its rank among the state's distinct stamps.
pub fn rank<P: Protocol>(state: &mut CheckState<P>) {
    let mut stamps: Vec<i64> = Vec::new();
    for_each_stamp(state, &mut |s| stamps.push(*s));
    stamps.sort_unstable();
    stamps.dedup();
    if stamps.iter().enumerate().all(|(i, &s)| s == i as i64 + 1) {
        return;
    }
    for_each_stamp(state, &mut |s| {
        let rank = stamps.binary_search(s).expect("every stamp was collected");
        *s = rank as i64 + 1;
    });
}
