//! Dead messages: a message that its receiver can only ignore is dropped from the state.
//!
//! Under the `drain` link-break semantics a message already in flight when its link
//! fails is still delivered, and every registered link-reversal protocol ignores a
//! message of most kinds from a node that is no longer its neighbour (its handler returns
//! before reading or sending anything: [`Message::ignored_from_non_neighbour`]; RL's
//! token is the exception, it is always accepted). Once no topology change remains, a
//! link that is down stays down, both ends were told at the failure, and the receiver
//! never again counts the sender as a neighbour; so every such message on it is *dead*:
//! delivering it changes nothing but the queue. Yet each one, with the height it carries,
//! makes the states it sits in distinct, and under `overlap` changes they pile up.
//!
//! Dropping them is exact up to stuttering: an execution of the state with the message
//! is one of the state without it, with one extra step that changes no node (delivering
//! it) inserted somewhere, and conversely; messages behind it on the same link only wait
//! for that step, which can be taken at once. Every property the checker judges reads the
//! nodes, the CS and the tokens (a dead message is never a token), and quiescence, which
//! the dropped message would only have delayed by that one step: a state judged quiescent
//! here is the state the other execution reaches right after delivering it. Fairness is
//! kept: the dropped delivery was owed, and it is taken at once.
//!
//! Applies with renormalization on, once no change remains; with changes one at a time a
//! link only fails when nothing is in flight, so there are never dead messages there.

use super::state::CheckState;
use crate::protocol::{Message, Protocol};

/// Drops every message in flight over a link that is down for good (no change remains)
/// whose kind its receiver ignores from a non-neighbour.
pub fn drop_dead_messages<P: Protocol>(state: &mut CheckState<P>) {
    if state.changes_left > 0 {
        return;
    }
    let links = state.links;
    state.queues.retain(|from, to, msg| {
        links.contains((from.min(to), from.max(to))) || !msg.ignored_from_non_neighbour()
    });
}
